#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# /dev/rdlm: node and ioctl checks of chardev_test, with the module loaded.
. ./lib.sh
require_root
rdlm_loaded || rdlm_load
kmsg_mark
./chardev_test || fail "chardev_test"
rdlm_unload
kmsg_check
