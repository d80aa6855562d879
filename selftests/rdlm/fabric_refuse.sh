#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A node that is not in the others' configuration is refused: nodes 1 and 2
# run lockspace "pair" between themselves; node3 claims membership and gets
# rejected by both, while its loopback connection works.
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
rm -f "$conf"
rdlm_unload
kmsg_check
