#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Only CAP_SYS_ADMIN changes the cluster configuration: neither an ordinary
# user nor a root that dropped CAP_SYS_ADMIN can add a node or change one.
. ./lib.sh
require_root
rdlm_loaded || rdlm_load
kmsg_mark
mkdir $CFS/nodes/n1 && echo 3 >$CFS/nodes/n1/nodeid || fail "setup as root"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_capless_root() {
	setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$@"
}

expect_fail "Permission denied" as_nobody mkdir $CFS/nodes/x
expect_fail "Permission denied" as_nobody bash -c "echo 4 >$CFS/nodes/n1/nodeid"
expect_fail "Operation not permitted" as_capless_root mkdir $CFS/nodes/y
expect_fail "Operation not permitted" \
	as_capless_root bash -c "echo 5 >$CFS/nodes/n1/nodeid"
[ "$(cat $CFS/nodes/n1/nodeid)" = 3 ] || fail "node id changed"
[ -e $CFS/nodes/x ] || [ -e $CFS/nodes/y ] && fail "a node was created"
# reading stays open to everybody
[ "$(as_nobody cat $CFS/nodes/n1/nodeid)" = 3 ] || fail "nobody cannot read"

rmdir $CFS/nodes/n1
rdlm_unload
kmsg_check
