#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The configfs subsystem appears and vanishes with the module; node
# directories take valid node ids and refuse junk without changing state.
. ./lib.sh
require_root
rdlm_loaded && rdlm_reset
kmsg_mark

[ -e $CFS ] && fail "$CFS exists without the module"
rdlm_load
[ -d $CFS/nodes ] || fail "no $CFS/nodes"
[ -d $CFS/lockspaces ] || fail "no $CFS/lockspaces"

mkdir $CFS/nodes/n1 || fail "mkdir nodes/n1"
[ "$(cat $CFS/nodes/n1/nodeid)" = 0 ] || fail "a new node's id is not 0"
echo 7 >$CFS/nodes/n1/nodeid || fail "write a valid node id"
[ "$(cat $CFS/nodes/n1/nodeid)" = 7 ] || fail "node id did not read back"

for junk in 0 1025 -1 abc "" 4294967296 "7 7"; do
	if echo "$junk" >$CFS/nodes/n1/nodeid 2>/dev/null; then
		fail "node id '$junk' accepted"
	fi
done
[ "$(cat $CFS/nodes/n1/nodeid)" = 7 ] || fail "refused writes changed the id"
head -c 5000 /dev/zero | tr '\0' 1 >$CFS/nodes/n1/nodeid 2>/dev/null &&
	fail "an oversized node id was accepted"

# a configured node pins the module
rmmod rdlm 2>/dev/null && fail "rmmod succeeded under a live configfs item"
rmdir $CFS/nodes/n1 || fail "rmdir nodes/n1"
rdlm_unload
[ -e $CFS ] && fail "$CFS left behind by unload"
kmsg_check
