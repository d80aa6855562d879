#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every node configures the cluster from tools/cluster/cluster.conf, every
# pair connects (loopback included), and the fabric self-test checks every
# returned value of FA, CAS, READ, WRITE_WITH_IMM and SEND against every
# member, in NIC-atomic and CPU-atomic mode: N nodes x 1000 concurrent FAs
# on one word end at exactly N x 1000 on every home.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 1
rdlm_loaded && rdlm_unload
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"

for ls in fab-nic fab-cpu; do
	st "wait $ls 90"
	barrier "$ls-ready"
	st "fa $ls 0 1000"
	barrier "$ls-fa"
	st "read $ls 0 $((NODES * 1000))"
	st "cas $ls 8"
	st "imm $ls 100"
	st "send $ls 100"
	st "rx $ls 100 60"
	echo "$ls: fa, read, cas, imm, send ok"
done
grep -q "state live" $DBG/peers || fail "no live connection: $(cat $DBG/peers)"
barrier done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
