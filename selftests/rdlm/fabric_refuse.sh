#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A node that is not in the others' configuration is refused: nodes 1 and 2
# run lockspace "pair" between themselves; node3 claims membership and gets
# rejected by both, while its loopback connection works.
# Then a lockspace whose configuration differs between members: "agree"
# with lvb_len 64 on node 2 and engine central on node 3 (32 and bakery
# elsewhere): no two of them take part with each other, and both ends of
# each pair say which field differs.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
conf=$(mktemp)
fabric_test refuse "$conf"
if [ "$ME" = 3 ]; then
	members=1,2,3
else
	members=1,2
fi
printf '%s\n' "node node1 1 10.77.0.1" "node node2 2 10.77.0.2" \
	"node node3 3 10.77.0.3" \
	"lockspace pair members=$members table_size=64" >"$conf"
"$CONFIGURE" -f "$conf" up || fail "configure"
barrier rf-up
if [ "$ME" = 3 ]; then
	for ((i = 0; i < 300; i++)); do
		r1=$(grep -c "^node 1 out .*rejects [1-9]" $DBG/peers)
		r2=$(grep -c "^node 2 out .*rejects [1-9]" $DBG/peers)
		[ "$r1" = 1 ] && [ "$r2" = 1 ] && break
		sleep 0.1
	done
	[ "$r1" = 1 ] && [ "$r2" = 1 ] || fail "not refused: $(grep '^node' $DBG/peers)"
	grep -q "pair .* 3:ready" $DBG/lockspaces || fail "loopback not ready"
	grep -q " 1:wait 2:wait" $DBG/lockspaces || fail "a refusing node is ready"
else
	st "wait pair 60"
	for ((i = 0; i < 300; i++)); do
		grep -q "^rejected [1-9]" $DBG/peers && break
		sleep 0.1
	done
	grep -q "^rejected [1-9]" $DBG/peers || fail "node3 not refused here"
fi
barrier rf-done
"$CONFIGURE" -f "$conf" down || fail "unconfigure"

lvb=32 engine=bakery
[ "$ME" = 2 ] && lvb=64
[ "$ME" = 3 ] && engine=central
printf '%s\n' "node node1 1 10.77.0.1" "node node2 2 10.77.0.2" \
	"node node3 3 10.77.0.3" \
	"lockspace agree members=1,2,3 table_size=64 engine=$engine lvb_len=$lvb" \
	>"$conf"
"$CONFIGURE" -f "$conf" up || fail "configure agree"
declare -A want=(
	[1]="node 2 has lvb_len 64, this node 32|node 3 has engine central, this node bakery"
	[2]="node 1 has lvb_len 32, this node 64|node 3 has lvb_len 32, this node 64"
	[3]="node 1 has engine bakery, this node central|node 2 has lvb_len 64, this node 32"
)
IFS='|' read -r w1 w2 <<<"${want[$ME]}"
for ((i = 0; i < 300; i++)); do
	dmesg | grep -q "lockspace agree: $w1: not taking part" &&
		dmesg | grep -q "lockspace agree: $w2: not taking part" && break
	sleep 0.1
done
((i < 300)) || fail "agree: not refused with the field named: $(dmesg | grep 'lockspace agree' | tail -n 5)"
for n in 1 2 3; do
	[ "$n" = "$ME" ] && continue
	grep -q "^agree .* $n:ready" $DBG/lockspaces &&
		fail "agree: node $n differs but is ready: $(grep '^agree' $DBG/lockspaces)"
done
echo "node$ME: agree: refused: $w1; $w2"
barrier rf-agree
"$CONFIGURE" -f "$conf" down || fail "unconfigure agree"
rm -f "$conf"
rdlm_unload
kmsg_check
