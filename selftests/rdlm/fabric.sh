#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every node configures the cluster from tools/cluster/cluster.conf, every
# pair connects (loopback included), and the fabric self-test checks every
# returned value of FA, CAS, READ, WRITE_WITH_IMM and SEND against every
# member, in NIC-atomic and CPU-atomic mode: N nodes x 1000 concurrent FAs
# on one word end at exactly N x 1000 on every home. debugfs "peers" counts
# exactly those 1000 FAs per peer, each in the latency histogram once, and
# no completion error.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 1
fabric_test fabric

# verbs NODE KIND: "COUNT HISTOGRAM-SUM" of KIND on our connection to NODE
verbs()
{
	awk -v n="$1" -v k="$2" '
		/^node / { cur = ($2 == n && $3 == "out") }
		cur && $1 == k && $3 == "lat_us_log2" {
			s = 0; for (i = 4; i <= NF; i++) s += $i; print $2, s }' $DBG/peers
}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"

for ls in fab-nic fab-cpu; do
	st "wait $ls 90"
	st "claim $ls"		# messages to the self-test, not the lock manager
	barrier "$ls-ready"
	for n in $(seq 1 "$NODES"); do
		before[n]=$(verbs $n fa)
	done
	st "fa $ls 0 1000"
	for n in $(seq 1 "$NODES"); do
		read -r c0 h0 <<<"${before[n]}"
		read -r c1 h1 <<<"$(verbs $n fa)"
		[ $((c1 - c0)) = 1000 ] && [ $((h1 - h0)) = 1000 ] ||
			fail "$ls: debugfs counted $((c1 - c0)) FAs to node$n, $((h1 - h0)) in the histogram, not 1000"
	done
	barrier "$ls-fa"
	st "read $ls 0 $((NODES * 1000))"
	st "cas $ls 8"
	st "imm $ls 100"
	st "send $ls 100"
	st "rx $ls 100 60"
	echo "$ls: fa, read, cas, imm, send ok"
done
grep -q "state live" $DBG/peers || fail "no live connection: $(cat $DBG/peers)"
grep "^node " $DBG/peers | grep -v " errors 0 " &&
	fail "completion errors counted on a clean run"
barrier done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
