#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection loss and device removal under load: node2 takes eth0 down and
# up, node3 deletes and re-adds rxe0, while node1 keeps posting FAs. Every
# node reconnects (backoff), the tables are exchanged again and the fabric
# self-test passes again with exact values; the kernel log stays clean.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
rdlm_loaded && rdlm_unload
kmsg_mark
rdlm_load
echo 500 >/sys/module/rdlm/parameters/heartbeat_ms
"$CONFIGURE" up || fail "configure"
st "wait fab-nic 90"
barrier fo-ready

case $ME in
1)	# load while the others break things; failures are expected here
	for i in $(seq 1 20); do
		echo "fa fab-nic 5 50" >$ST 2>/dev/null
	done ;;
2)	ip link set eth0 down; sleep 4; ip link set eth0 up ;;
3)	rdma link delete rxe0 || fail "rdma link delete"
	sleep 2
	rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add" ;;
esac
barrier fo-broken
for ls in fab-nic fab-cpu; do
	st "wait $ls 90"
done
barrier fo-recovered
st "fa fab-nic 1 300"
st "fa fab-cpu 1 300"
barrier fo-fa
st "read fab-nic 1 $((NODES * 300))"
st "read fab-cpu 1 $((NODES * 300))"
if [ "$ME" = 1 ]; then
	grep -E "^node [23] out .*reconnects [1-9]" $DBG/peers >/dev/null ||
		fail "no reconnect seen: $(grep '^node' $DBG/peers)"
fi
barrier fo-done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
