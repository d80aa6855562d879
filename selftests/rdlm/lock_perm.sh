#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Who may join a lockspace through /dev/rdlm: its uid, gid and mode in
# configfs decide, as for a file (the owner's, the group's or everybody's
# bits), and CAP_SYS_ADMIN always may. An ordinary user is refused with
# EPERM until the lockspace lets it in by owner, group or mode.
. ./lib.sh
require_root
REPO=${RDLM_REPO:-$(cd ../../.. && pwd)}
RDLMCTL=$REPO/userspace/rdlmctl
ME=${RDLM_NODE_ID:-1}
LS=perm-test
U=4242 G=4343

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
local_node "$ME"
"$RDLMCTL" join $LS members="$ME" lease_us=2000000 || fail "create $LS"
echo "wait $LS 60" >$DBG/selftest || fail "$LS not ready"
# the user may open the device (group $G), the lockspace decides the rest
chgrp $G /dev/rdlm || fail "chgrp /dev/rdlm"

as_user() { setpriv --reuid=$U --regid=$G --clear-groups "$@"; }
as_other() { setpriv --reuid=$((U + 1)) --regid=$G --clear-groups "$@"; }
lock_as() { "$@" "$RDLMCTL" lock -L $LS res -- true; }
# set_perm ATTR=VALUE...: change the lockspace's permissions (disabled)
set_perm()
{
	local kv

	echo 0 >$CFS/lockspaces/$LS/enable || fail "disable $LS"
	for kv in "$@"; do
		echo "${kv#*=}" >"$CFS/lockspaces/$LS/${kv%%=*}" ||
			fail "set $kv"
	done
	echo 1 >$CFS/lockspaces/$LS/enable || fail "enable $LS"
	echo "wait $LS 60" >$DBG/selftest || fail "$LS not ready"
}

lock_as env || fail "root cannot lock"
set_perm uid=0 gid=0 mode=0600
expect_fail "Operation not permitted" lock_as as_user
set_perm uid=$U
lock_as as_user || fail "the owner cannot lock"
expect_fail "Operation not permitted" lock_as as_other
set_perm mode=0060
expect_fail "Operation not permitted" lock_as as_user
set_perm gid=$G
lock_as as_other || fail "the group cannot lock"
set_perm gid=0 mode=0606
lock_as as_other || fail "everybody cannot lock with mode 0606"
set_perm mode=0600
expect_fail "Operation not permitted" lock_as as_other
# root without CAP_SYS_ADMIN is an ordinary user here, not the owner
expect_fail "Operation not permitted" lock_as \
	setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin

chgrp 0 /dev/rdlm
"$RDLMCTL" leave $LS || fail "remove $LS"
rmdir $CFS/nodes/self || fail "remove this node"
nothing_left "every program" ""
rdlm_unload
kmsg_check
