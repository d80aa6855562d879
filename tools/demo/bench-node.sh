#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/bench-lock, run on each node of a 2-node cluster: perftest's
# atomic, read and send round trips from node2 to node1, then, one node at a
# time (the other idle), uncontended lock+unlock of one name by one thread
# in EX through the kernel API (rdlm_torture.ko) and through /dev/rdlm
# (rdlm-bench) on every lk-* lockspace. The name's home is one of the two
# nodes, so one node measures a remote home and the other its own.
# Results: $RDLM_OUT/bench.NODE.
#
# BENCH_OPS (default 300) lock+unlock pairs per measurement; BENCH_LS the
# lockspaces (default: every lk-* lockspace of cluster.conf).
set -u
. selftests/rdlm/lib.sh
. selftests/rdlm/fabric_lib.sh
TROUBLE=$RDLM_REPO/tools/cluster/kernel-trouble.patterns
RDLM_KO=$RDLM_REPO/rdlm.ko
TORTURE_KO=$RDLM_REPO/rdlm_torture.ko
BENCH=$RDLM_REPO/userspace/rdlm-bench
TD=/sys/kernel/debug/rdlm_torture
OPS=${BENCH_OPS:-300}
res=$RDLM_OUT/bench.$ME

lockspaces=${BENCH_LS:-$(sed -n 's/^lockspace \(lk-[^[:space:]]*\).*/\1/p' \
	"$RDLM_REPO/tools/cluster/cluster.conf")}
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
: >"$res"

gid=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* |
	head -n 1 | xargs basename)
perf=(-d rxe0 -x "$gid" -F -n 1000)
tests=("ib_atomic_lat -A FETCH_AND_ADD" "ib_atomic_lat -A CMP_AND_SWAP"
       "ib_read_lat" "ib_send_lat")
for t in "${!tests[@]}"; do
	if [ "$ME" = 1 ]; then
		timeout 120 ${tests[t]} "${perf[@]}" -p $((18600 + t)) >/dev/null 2>&1
	else
		for try in $(seq 1 30); do	# until node1's server listens
			out=$(timeout 60 ${tests[t]} "${perf[@]}" -p $((18600 + t)) \
				10.77.0.1 2>&1) && break
			sleep 1
		done
		echo "$out" | awk -v t="${tests[t]}" '$1 ~ /^[0-9]+$/ && NF >= 9 {
			printf "perftest %s|%s %s %s\n", t, $5, $6, $8 }' >>"$res"
	fi
	barrier "perf-$t"
done

for ls in $lockspaces; do
	st "wait $ls 90"
	barrier "$ls-ready"
	for turn in 1 2; do
		if [ "$turn" = "$ME" ]; then
			insmod "$TORTURE_KO" lockspace="$ls" prefix="u-$ls-" nlocks=1 \
				nthreads=1 nops="$OPS" shared_pct=0 convert_pct=0 \
				noqueue_pct=0 async_pct=0 cancel_pct=0 hold_us=0 gate=1 ||
				fail "$ls: insmod rdlm_torture"
			# the shell sleeps in "run" while the thread measures
			timeout 120 bash -c "echo 1 >$TD/run"
			grep -q '^state done' $TD/stats ||
				fail "$ls: requests never completed: $(tr '\n' ' ' <$TD/stats)"
			awk -v ls="$ls" '{ s[$1] = $2 } END {
				printf "kernel %s|%.1f %.1f %.1f %d %d\n", ls, s["lat_mean_ns"] / 1000,
					s["lat_p50_ns"] / 1000, s["lat_p99_ns"] / 1000, s["ops"],
					s["errors"] }' $TD/stats >>"$res"
			rmmod rdlm_torture
			timeout -s INT 120 "$BENCH" -L "$ls" -n "$OPS" -P 1 -k 1 -x 100 -p "u-$ls-" |
				awk -v ls="$ls" '{ for (i = 1; i < NF; i++) s[$i] = $(i + 1) }
				END { printf "dev %s|%s %s %s %d 0\n", ls, s["mean_us"],
					s["p50_us"], s["p99_us"], s["ops"] }' >>"$res"
		fi
		barrier "$ls-turn$turn" 300
	done
done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
