#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Demo, run on every test cluster node: load rdlm, report what it sees,
# configure the cluster's lockspaces (one per engine and atomic mode, the
# lk-* lines of tools/cluster/cluster.conf) and run on each, from every node
# at once, a short mixed workload through /dev/rdlm (userspace/rdlm-bench)
# and then through the kernel API (rdlm_torture.ko). Each node leaves its
# results in $RDLM_OUT/demo.LOCKSPACE.NODE; node1 checks that every LVB
# counter equals the increments all nodes made (demo.LOCKSPACE.check);
# tools/run-demo prints the table. Finally the raw verb round trips the lock
# protocols are built from (node1 serves, every other node measures against
# it with perftest).
#
# DEMO_SECS (default 4) is the length of each workload, DEMO_LS the
# lockspaces (default: every lk-* lockspace).
set -u
. selftests/rdlm/lib.sh
. selftests/rdlm/fabric_lib.sh
TROUBLE=$RDLM_REPO/tools/cluster/kernel-trouble.patterns
RDLM_KO=$RDLM_REPO/rdlm.ko
TORTURE_KO=$RDLM_REPO/rdlm_torture.ko
RDLMCTL=$RDLM_REPO/userspace/rdlmctl
BENCH=$RDLM_REPO/userspace/rdlm-bench
TD=/sys/kernel/debug/rdlm_torture
SECS=${DEMO_SECS:-4}
NAMES=4

# verbs LOCKSPACE: verbs this node posted in the lockspace so far
verbs()
{
	"$RDLMCTL" status "$1" 2>/dev/null | awk '$1 == "verbs:" {
		for (i = 3; i <= NF; i += 2) s += $i; print s + 0 }'
}

kmsg_mark
rdlm_load
echo "== $RDLM_NODE_NAME ($RDLM_NODE_IP): rdlm loaded"
printf '   %-22s %s\n' "RDMA devices (rdlm):" "$(cat $DBG/devices | xargs)"
printf '   %-22s %s\n' "/dev/rdlm:" "$(stat -c '%A %U:%G' /dev/rdlm)"
printf '   %-22s %s\n' "atomic capability:" \
	"$(ibv_devinfo -v -d rxe0 | sed -n 's/^[[:space:]]*atomic_cap:[[:space:]]*//p')"

"$CONFIGURE" up || fail "configure"
printf '   %-22s %s\n' "lockspaces:" "$(ls $CFS/lockspaces | xargs)"
lockspaces=${DEMO_LS:-$(sed -n 's/^lockspace \(lk-[^[:space:]]*\).*/\1/p' \
	"$RDLM_REPO/tools/cluster/cluster.conf")}
# exact counters: no lease may run out under TCG (see long_leases)
long_leases $lockspaces

for ls in $lockspaces; do
	out=$RDLM_OUT/demo.$ls.$ME
	st "wait $ls 90"
	barrier "$ls-ready"

	# /dev/rdlm: 2 processes, 25% EX, LVB counters per name
	v0=$(verbs "$ls")
	b=$(timeout -s INT $((SECS + 60)) "$BENCH" -L "$ls" -t "$SECS" -P 2 \
		-k $NAMES -x 25 -p "b-$ls-") ||
		echo "   $ls: rdlm-bench failed: $b"
	echo "bench $b verbs_all $(($(verbs "$ls") - v0))" >"$out"
	barrier "$ls-bench"

	# kernel API: rdlm_torture, 2 threads, 50% PR, conversions, NOQUEUE...
	v0=$(verbs "$ls")
	if [ -n "${stuck:-}" ]; then
		echo "   $ls: kernel API skipped (rdlm_torture stuck on $stuck)"
	elif insmod "$TORTURE_KO" lockspace="$ls" prefix="d-$ls-" \
		nlocks=$NAMES nthreads=2 duration_s="$SECS"; then
		for ((i = 0; i < (SECS + 60) * 10; i++)); do
			grep -q '^state done' $TD/stats && break
			sleep 0.1
		done
		echo "torture $(tr '\n' ' ' <$TD/stats) verbs_all $(($(verbs "$ls") - v0))" >>"$out"
		if ! grep -q '^state done' $TD/stats; then
			# its threads wait in rdlm: neither module can be unloaded
			echo "   $ls: torture threads stuck in rdlm; no more kernel API runs"
			stuck=$ls
		fi
	else
		echo "   $ls: insmod rdlm_torture failed"
	fi
	barrier "$ls-torture"

	if [ "$ME" = 1 ]; then
		# every name's LVB counter must equal the increments of all nodes
		bc=$(timeout -s INT 60 "$BENCH" -L "$ls" -r $NAMES -p "b-$ls-")
		# reading the counters takes locks: not where requests hang
		tc=
		grep -q "state done" "$RDLM_OUT"/demo."$ls".[0-9]* &&
			! grep -q "state running" "$RDLM_OUT"/demo."$ls".[0-9]* &&
			tc=$(timeout 60 cat $TD/counters 2>/dev/null)
		cat "$RDLM_OUT"/demo."$ls".[0-9]* | awk -v bc="$bc" -v tc="$tc" '
			function check(kind, counters, incs,   c, n, i, bad) {
				n = split(counters, c, " ")
				for (i = 2; i <= n; i++)
					if (c[i] != incs[i - 1]) bad++
				return (n < 2 || bad) ? "MISMATCH" : "exact"
			}
			$1 == "bench" {
				for (i = 2; i < NF; i++) if ($i == "incs") {
					n = split($(i + 1), x, ",")
					for (j = 1; j <= n; j++) b[j] += x[j]
				}
			}
			$1 == "torture" {
				for (i = 2; i < NF; i++) if ($i == "incs_by_name") {
					for (j = i + 1; $j ~ /^[0-9]+$/; j++) t[j - i] += $j
				}
			}
			END {
				printf "bench %s %s\n", check("bench", bc, b), bc
				printf "torture %s %s\n", check("torture", tc, t), tc
			}' >"$RDLM_OUT/demo.$ls.check"
	fi
	barrier "$ls-checked"
	[ -z "${stuck:-}" ] && rmmod rdlm_torture 2>/dev/null
	echo "   $ls: done"
done

barrier demo-done

gid=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* |
	head -n 1 | xargs basename)
perf=(-d rxe0 -x "$gid" -F -n 200)
tests=("ib_atomic_lat -A FETCH_AND_ADD" "ib_atomic_lat -A CMP_AND_SWAP"
       "ib_read_lat" "ib_send_lat")
if [ "$RDLM_NODE_ID" = 1 ]; then
	# one server per client and test, each on its own port
	for c in $(seq 2 "$RDLM_NODES"); do
		for t in "${!tests[@]}"; do
			timeout 120 ${tests[t]} "${perf[@]}" -p $((18500 + c * 10 + t)) \
				>/dev/null 2>&1
		done &
	done
	wait
else
	echo "   raw verb round trips to node1 (perftest, 200 iterations, usec):"
	printf '   %-30s %8s %8s %8s\n' verb typical p99 "p99.9"
	for t in "${!tests[@]}"; do
		for try in $(seq 1 30); do	# until node1's server listens
			out=$(timeout 60 ${tests[t]} "${perf[@]}" \
				-p $((18500 + RDLM_NODE_ID * 10 + t)) 10.77.0.1 2>&1) && break
			sleep 1
		done
		echo "$out" | awk -v t="${tests[t]}" '$1 ~ /^[0-9]+$/ && NF >= 9 {
			printf "   %-30s %8s %8s %8s\n", t, $5, $8, $9 }'
	done
fi
if [ -n "${stuck:-}" ]; then
	echo "== $RDLM_NODE_NAME: $stuck: lock requests never completed, rdlm left loaded"
	exit 1
fi
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
echo "== $RDLM_NODE_NAME: rdlm unloaded, kernel log clean"
