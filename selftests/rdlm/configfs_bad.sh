#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every node and lockspace attribute refuses junk, out-of-range and
# oversized values without changing; an enabled lockspace answers -EBUSY to
# changes of what it depends on; enable refuses an incomplete cluster.
. ./lib.sh
require_root
rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
ip=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
ip=${ip:-127.0.0.1}
big=$(head -c 5000 /dev/zero | tr '\0' 1)

refuse() {	# refuse FILE VALUE...
	local f=$1 before v
	shift
	before=$(cat "$f")
	for v in "$@"; do
		echo "$v" >"$f" 2>/dev/null && fail "$f accepted '$v'"
	done
	echo "$big" >"$f" 2>/dev/null && fail "$f accepted an oversized value"
	[ "$(cat "$f")" = "$before" ] || fail "$f changed by refused writes"
}

N=$CFS/nodes/me
mkdir $N
refuse $N/nodeid 0 1025 -1 abc "" 4294967296 "7 7" 0x
refuse $N/address 1.2.3 300.1.1.1 "10.0.0.1 x" abc ""
refuse $N/port 0 65536 -5 abc ""
refuse $N/local 2 -1 yes ""
echo 5 >$N/nodeid && echo "$ip" >$N/address && echo 1 >$N/local || fail "valid node"
mkdir $CFS/nodes/other
expect_fail "Invalid argument" bash -c "echo 5 >$CFS/nodes/other/nodeid"
expect_fail "Invalid argument" bash -c "echo 1 >$CFS/nodes/other/local"
rmdir $CFS/nodes/other

L=$CFS/lockspaces/ls
mkdir $L
refuse $L/members 0 1025 "1,1" "1,x" "" ","
refuse $L/members "$(seq -s, 1 65)"
refuse $L/engine foo "" "bakery2"
refuse $L/atomic_mode foo "" 1
refuse $L/table_size 0 1048577 -1 abc
refuse $L/mailbox_slots 0 65537
for a in lease_us omega_ns backoff_r_us backoff_l_us kmax nr_reqs; do
	refuse $L/$a -1 abc 99999999999
	[ $a = lease_us ] || refuse $L/$a 0
done
refuse $L/update_locks 2 -1
refuse $L/lvb_len 0 15 65 -1 abc
refuse $L/lvb_read 2 -1 abc
refuse $L/fencing 2 -1 abc
refuse $L/managed 2 -1 abc
refuse $L/enable 2 -1 abc

echo 7 >$L/members || fail "members"
expect_fail "Invalid argument" bash -c "echo 1 >$L/enable"	# 7 unknown
echo 5 >$L/members && echo 64 >$L/table_size || fail "valid lockspace"
echo 24 >$L/lvb_len || fail "lvb_len 24 is in range"
expect_fail "Invalid argument" bash -c "echo 1 >$L/enable"	# not 16 x n
echo 64 >$L/lvb_len || fail "lvb_len 64"
# no leases: the bakery (the default) can do without (a census of the
# live members), a range engine cannot (it enables with a lease)
echo rangeseg >$L/engine || fail "engine rangeseg"
echo 0 >$L/lease_us || fail "lease_us 0"
expect_fail "Invalid argument" bash -c "echo 1 >$L/enable"
echo 10000 >$L/lease_us || fail "lease_us 10000"
echo 1 >$L/enable || fail "enable rangeseg with a lease"
echo 0 >$L/enable || fail "disable"
echo bakery >$L/engine || fail "engine bakery"
echo 0 >$L/lease_us || fail "lease_us 0"
echo 1 >$L/enable || fail "enable the bakery without a lease"
echo 0 >$L/enable || fail "disable"
echo 10000 >$L/lease_us || fail "lease_us 10000"
echo 1 >$L/enable || fail "enable"
expect_fail "busy" bash -c "echo 32 >$L/lvb_len"
expect_fail "busy" bash -c "echo 128 >$L/table_size"
expect_fail "busy" bash -c "echo cpu >$L/atomic_mode"
expect_fail "busy" bash -c "echo 6 >$N/nodeid"
expect_fail "busy" bash -c "echo 1.1.1.1 >$N/address"
echo 0 >$L/enable || fail "disable"
echo 128 >$L/table_size || fail "change after disable"
rmdir $L $N
rdlm_unload
kmsg_check
