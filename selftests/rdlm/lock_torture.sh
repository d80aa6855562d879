#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The torture module (rdlm_torture.ko, the in-tree user of the exported
# kernel API) runs on every node at once, on every lk-* lockspace of
# tools/cluster/cluster.conf (each engine, both atomic modes): threads take
# random names in PR, EX and by conversion, synchronously and through the
# callbacks, with NOQUEUE and cancel. Every node must report operations, no
# error, no mutual exclusion violation among its holders and no LVB counter
# that went back; then every name's LVB counter must equal exactly the
# number of EX increments all nodes made on it.
#
# TORTURE_SECS (default 4) sets how long each lockspace is tortured,
# TORTURE_LS the lockspaces (default: every lk-*), TORTURE_ARGS more module
# parameters (e.g. "convert_pct=0 cancel_pct=0" to narrow a failure down).
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 1
fabric_test lock_torture
TORTURE_KO=${TORTURE_KO:-$PWD/rdlm_torture.ko}
TD=/sys/kernel/debug/rdlm_torture
SECS=${TORTURE_SECS:-4}
NAMES=4

[ -f "$TORTURE_KO" ] || fail "no $TORTURE_KO"
lockspaces=${TORTURE_LS:-$(sed -n 's/^lockspace \(lk-[^[:space:]]*\).*/\1/p' \
	"$REPO/tools/cluster/cluster.conf")}
[ -n "$lockspaces" ] || fail "no lk-* lockspace in cluster.conf"

# on failure, unload the torture module first so that rdlm can go too
trap 'rc=$?; rmmod rdlm_torture 2>/dev/null; (exit $rc); fabric_cleanup' EXIT

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
# exact LVB counters and no errors: no lease may run out (see lib.sh)
long_leases $lockspaces

# stat FILE KEY: the value of KEY in a "key value" stats file
stat() { sed -n "s/^$2 //p" "$1"; }

for ls in $lockspaces; do
	st "wait $ls 90"
	barrier "$ls-ready"
	insmod "$TORTURE_KO" lockspace="$ls" prefix="t-$ls-" nlocks=$NAMES \
		nthreads=2 duration_s="$SECS" ${TORTURE_ARGS:-} ||
		fail "$ls: insmod rdlm_torture: $(dmesg | grep rdlm_torture | tail -n 2)"
	for ((i = 0; i < (SECS + 60) * 10; i++)); do
		grep -q '^state done' $TD/stats && break
		sleep 0.1
	done
	res=$RDLM_OUT/torture.$ls.$ME
	cat $TD/stats >"$res"
	if ! grep -q '^state done' "$res"; then
		# what the lock manager and the stuck threads were doing
		cat /sys/kernel/debug/rdlm/ls/"$ls"
		for p in $(pgrep rdlm_torture); do
			echo "thread $p:"
			cat /proc/"$p"/stack
		done
		fail "$ls: threads not done: $(cat "$res")"
	fi
	[ "$(stat "$res" ops)" -gt 0 ] || fail "$ls: no operation completed"
	[ "$(stat "$res" grants_ex)" -gt 0 ] || fail "$ls: no EX grant"
	[ "$(stat "$res" grants_pr)" -gt 0 ] || fail "$ls: no PR grant"
	for k in errors stuck mutex_violations lvb_violations lvb_invalid; do
		[ "$(stat "$res" $k)" = 0 ] || fail "$ls: $k $(stat "$res" $k)"
	done
	echo "$ls: node$ME $(stat "$res" ops) ops, $(stat "$res" incs) EX increments, clean"
	barrier "$ls-done"

	if [ "$ME" = 1 ]; then
		read -r -a counters <<<"$(cat $TD/counters)"
		[ "${counters[0]}" = counters ] && [ ${#counters[@]} = $((NAMES + 1)) ] ||
			fail "$ls: counters: ${counters[*]}"
		for ((n = 0; n < NAMES; n++)); do
			sum=0
			for f in "$RDLM_OUT"/torture."$ls".*; do
				read -r -a incs <<<"$(stat "$f" incs_by_name)"
				sum=$((sum + incs[n]))
			done
			[ "${counters[n + 1]}" = "$sum" ] ||
				fail "$ls: t-$ls-$n: LVB counter ${counters[n + 1]}, $sum increments made"
		done
		echo "$ls: LVB counters ${counters[*]:1} equal the increments of $NODES nodes"
	fi
	barrier "$ls-checked"
	rmmod rdlm_torture || fail "$ls: rmmod rdlm_torture"
done
barrier done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
