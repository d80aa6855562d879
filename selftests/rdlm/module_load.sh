#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Load and unload rdlm three times: each load creates its device, configfs
# subsystem and debugfs directory, each unload removes all of them, and the
# kernel log stays clean.
. ./lib.sh
require_root
rdlm_loaded && rdlm_reset
kmsg_mark

for i in 1 2 3; do
	rdlm_load
	[ -c /dev/rdlm ] || fail "load $i: no /dev/rdlm"
	[ -d $CFS ] || fail "load $i: no $CFS"
	[ -d $DBG ] || fail "load $i: no $DBG"
	rdlm_unload
	rdlm_loaded && fail "unload $i: module still there"
	[ -e /dev/rdlm ] && fail "unload $i: /dev/rdlm left behind"
	[ -e $CFS ] && fail "unload $i: $CFS left behind"
	[ -e $DBG ] && fail "unload $i: $DBG left behind"
	echo "cycle $i ok"
done
kmsg_check
