#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The torture module (rdlm_torture.ko, the in-tree user of the exported
# kernel API) runs on every node at once, on every lk-* lockspace of
# tools/cluster/cluster.conf (each engine, both atomic modes): threads take
# random names in PR, EX and by conversion, synchronously and through the
# callbacks, with NOQUEUE and cancel. Every node must report operations, no
# error, no mutual exclusion violation among its holders and no LVB counter
# that went back; then every name's LVB counter must equal exactly the
# number of EX increments all nodes made on it. Each node starts its
# threads through debugfs "run", which must return only once they are done.
# Every PR and EX hold (and range cell) is also checked against the other
# nodes' holders in the memory every node shares (cs_phys, the cells of
# cs_check.h), without the lock manager's help.
#
# Then range locks (range_cells=64) on every rg-* lockspace: runs of cells
# in PR and EX, with NOQUEUE and cancel, no LVB; the same checks but the
# counters.
#
# Last, the same on a lockspace the module creates itself on every node
# (rdlm_new_lockspace() from lk-central as the template, gated until all
# nodes have it): it is not in configfs, /dev/rdlm can join it, and a
# lock a program still holds there when the module goes makes its release
# -EBUSY, then forced (the program's lock is reported lost).
#
# TORTURE_SECS (default 4) sets how long each lockspace is tortured,
# TORTURE_LS the lockspaces (default: every lk-*), TORTURE_RANGE_LS the
# range lockspaces (default: every rg-*, none if TORTURE_LS is set),
# TORTURE_ARGS more module
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
# with TORTURE_LS given, only those unless TORTURE_RANGE_LS says more
range_lockspaces=${TORTURE_RANGE_LS-$([ -n "${TORTURE_LS:-}" ] ||
	sed -n 's/^lockspace \(rg-[^[:space:]]*\).*/\1/p' \
	"$REPO/tools/cluster/cluster.conf")}

# on failure, unload the torture module first so that rdlm can go too
trap 'rc=$?; rmmod rdlm_torture 2>/dev/null; (exit $rc); fabric_cleanup' EXIT

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
# exact LVB counters and no errors: no lease may run out (see lib.sh)
long_leases $lockspaces

# the cross-node check's memory: BAR 2 of the test cluster's ivshmem
# device (tools/cluster/guest-init's RDLM_CS_DEV)
[ -n "$RDLM_CS_DEV" ] || fail "no shared memory device (tools/cluster/run's ivshmem)"
read -r start end _ < <(sed -n 3p "$RDLM_CS_DEV/resource")
CS_ARGS="cs_phys=$start cs_size=$((end - start + 1)) cs_node=$ME cs_boot=${RDLM_BOOT:-1}"

# stat FILE KEY: the value of KEY in a "key value" stats file
stat() { sed -n "s/^$2 //p" "$1"; }

# round LS [INSMOD ARGS]: torture LS on every node, check, unload (names,
# barriers and results tagged ROUND_TAG, default LS)
round()
{
	local ls=$1 tag=${ROUND_TAG:-$1} res n sum f

	shift
	insmod "$TORTURE_KO" lockspace="$ls" prefix="t-$tag-" nlocks=$NAMES \
		nthreads=2 duration_s="$SECS" gate=1 $CS_ARGS "$@" ${TORTURE_ARGS:-} ||
		fail "$tag: insmod rdlm_torture: $(dmesg | grep rdlm_torture | tail -n 2)"
	if [ -n "${GATED:-}" ]; then
		$GATED
	fi
	# "run" opens the gate and returns once the threads are done: they
	# must be done when it returns, or when it is given up
	timeout $((SECS + 60)) bash -c "echo 1 >$TD/run"
	res=$RDLM_OUT/torture.$tag.$ME
	cat $TD/stats >"$res"
	if ! grep -q '^state done' "$res"; then
		# what the lock manager and the stuck threads were doing
		cat /sys/kernel/debug/rdlm/ls/"$ls"
		for p in $(pgrep rdlm_torture); do
			echo "thread $p:"
			cat /proc/"$p"/stack
		done
		fail "$tag: threads not done: $(cat "$res")"
	fi
	[ "$(stat "$res" ops)" -gt 0 ] || fail "$tag: no operation completed"
	[ "$(stat "$res" grants_ex)" -gt 0 ] || fail "$tag: no EX grant"
	[ "$(stat "$res" grants_pr)" -gt 0 ] || fail "$tag: no PR grant"
	for k in errors stuck mutex_violations lvb_violations lvb_invalid; do
		[ "$(stat "$res" $k)" = 0 ] || fail "$tag: $k $(stat "$res" $k)"
	done
	echo "$tag: node$ME $(stat "$res" ops) ops, $(stat "$res" incs) EX increments, clean"
	# how the grants' LVBs came, for the log (lock-manager.rst)
	grep -o 'lvb_peeks [0-9]* lvb_reads [0-9]* lvb_read_misses [0-9]*' \
		/sys/kernel/debug/rdlm/ls/"$ls" || true
	barrier "$tag-done"

	# range locks carry no value block
	if [ "$ME" = 1 ] && [ -z "${RANGES:-}" ]; then
		read -r -a counters <<<"$(cat $TD/counters)"
		[ "${counters[0]}" = counters ] && [ ${#counters[@]} = $((NAMES + 1)) ] ||
			fail "$tag: counters: ${counters[*]}"
		for ((n = 0; n < NAMES; n++)); do
			sum=0
			for f in "$RDLM_OUT"/torture."$tag".*; do
				read -r -a incs <<<"$(stat "$f" incs_by_name)"
				sum=$((sum + incs[n]))
			done
			[ "${counters[n + 1]}" = "$sum" ] ||
				fail "$tag: t-$tag-$n: LVB counter ${counters[n + 1]}, $sum increments made"
		done
		echo "$tag: LVB counters ${counters[*]:1} equal the increments of $NODES nodes"
	fi
	barrier "$tag-checked"
	[ -z "${BEFORE_RMMOD:-}" ] || $BEFORE_RMMOD
	rmmod rdlm_torture || fail "$tag: rmmod rdlm_torture"
}

for ls in $lockspaces; do
	st "wait $ls 90"
	barrier "$ls-ready"
	round "$ls"
done

# the synchronous calls spinning for their answers (poll_us, 0 to 10000
# us): the same checks on the first lockspace, other names
POLL=/sys/module/rdlm/parameters/poll_us
! echo 10001 >$POLL 2>/dev/null || fail "poll_us took 10001"
echo 5000 >$POLL && [ "$(cat $POLL)" = 5000 ] || fail "poll_us 5000"
read -r ls _ <<<"$lockspaces"
barrier "$ls-poll-ready"
ROUND_TAG=$ls-poll round "$ls"
echo 0 >$POLL || fail "poll_us 0"

# range locks through the kernel API
for ls in $range_lockspaces; do
	st "wait $ls 90"
	barrier "$ls-ready"
	RANGES=1 round "$ls" range_cells=64 lvb=0 convert_pct=0
done

# the module's own lockspace: every node has it before any thread starts
KLS=kls-torture
kls_up()
{
	[ ! -e "$CFS/lockspaces/$KLS" ] || fail "$KLS is in configfs"
	grep -q "^$KLS " $DBG/lockspaces || fail "$KLS is not in debugfs"
	st "wait $KLS 90"
	barrier "$KLS-up"
}
# node 1: a program holds a lock there when the module goes
kls_busy()
{
	if [ "$ME" = 1 ]; then
		rm -f "$TMP_HELD"
		./lock_helper lvb_hold $KLS kls-held "$TMP_HELD" &
		KHOLDER=$!
		wait_file "$TMP_HELD"
	fi
	barrier "$KLS-held"	# its home may be any node
}
TMP_HELD=$RDLM_OUT/kls-held.$ME
GATED=kls_up BEFORE_RMMOD=kls_busy round $KLS template=lk-central
if [ "$ME" = 1 ]; then
	dmesg | grep -q "rdlm_torture: $KLS: busy, released by force" ||
		fail "$KLS: the release was not refused while a lock was held"
	kill -9 "$KHOLDER"
	{ wait "$KHOLDER"; } 2>/dev/null
	echo "$KLS: release refused (-EBUSY) while a program held a lock, then forced"
fi
! grep -q "^$KLS " $DBG/lockspaces || fail "$KLS still up after rmmod"
barrier done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
