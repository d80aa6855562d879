#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Range locks through /dev/rdlm (rdlmctl lock -r, range_helper) on every
# lockspace named rg-* in tools/cluster/cluster.conf (rangeseg, rangecomb),
# on 3 nodes:
#  - verbs: an uncontended EX lock of units 0-1023 (4 of rangeseg's 256-unit
#    segments) and its unlock post exactly 8 FAs (a ticket and a release per
#    segment) on rangeseg, and no FA but SENDs on rangecomb;
#  - node 1 holds PR 0-99 of a name: node 2's PR 50-150 is granted at once,
#    its EX 90-95 is refused (trylock) and times out (2 s), its EX
#    1024-1100 and node 3's EX 2048-2100 (disjoint, other segments) are
#    granted at once;
#  - node 2's EX 0-99 waits; node 1's holder is killed (SIGKILL): node 2
#    is granted;
#  - a word lock on a range lockspace is refused (-EOPNOTSUPP), so is a
#    range lock in CW;
#  - on every lockspace of RANGE_STRESS_LS (default: every rg-*), every
#    node runs 2 processes for RANGE_SECS (default 8) s locking random
#    runs of 64 cells of one name in PR and EX, checked against a per-cell
#    owner block on the cluster's shared disk, written over first, and in
#    the nodes' shared memory (range_helper stress, cs_check.h): no
#    violation, no error, PR and EX grants in
#    every process; the same checker run on two unrelated names over the
#    same cells, one on node 1 and one on node 2, must find violations (or
#    it could not find any across nodes).
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test range_lock
RDLMCTL=$REPO/userspace/rdlmctl
HELPER=$PWD/range_helper
SECS=${RANGE_SECS:-8}
DISK=${RANGE_DISK:-/dev/vda}
LSS=${RDLM_RANGE_LS:-$(awk '$1 == "lockspace" && $2 ~ /^rg-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
[ -n "$LSS" ] || { echo "SKIP: no rg-* lockspace in cluster.conf"; exit $ksft_skip; }
STRESS_LS=$(tr ' ' '\n' <<<"${RANGE_STRESS_LS-$LSS}")
modprobe virtio_blk 2>/dev/null
for ((i = 0; i < 50; i++)); do
	[ -b "$DISK" ] && break
	sleep 0.1
done
[ -b "$DISK" ] || { echo "SKIP: no shared disk $DISK"; exit $ksft_skip; }
TMP=$(mktemp -d) || fail "mktemp"
trap 'rc=$?; kill $(jobs -p) 2>/dev/null; wait; (exit $rc); fabric_cleanup' EXIT

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"

# fas_sends LS: "FAS SENDS" this node posted in LS so far
fas_sends()
{
	awk '/^verbs / { print $3, $11 }' "$DBG/ls/$1"
}

# settle LS: SETTLED becomes fas_sends LS once no verb of LS is
# outstanding. An unlock returns once the engine is DONE with its request
# (range.c), so every verb of a lock and unlock that returned was posted,
# and counted at its post, by then. The count is also taken with nothing
# in flight on the fabric lockspace (debugfs lockspaces "inflight 0") and
# no post between two reads around that: a verb still to come would have
# to come from something other than that lock, and nothing else runs here.
settle()
{
	local a b n i

	for ((i = 0; i < 200; i++)); do
		a=$(fas_sends "$1")
		n=$(sed -n "s/^$1 lsid .* inflight \([0-9]*\) .*/\1/p" $DBG/lockspaces)
		b=$(fas_sends "$1")
		[ "$n" = 0 ] && [ "$a" = "$b" ] && { SETTLED=$b; return 0; }
		sleep 0.05
	done
	fail "$1: verbs still in flight or posted after 10 s: $(grep "^$1 " $DBG/lockspaces)"
}

# rlock LS NAME RANGE [rdlmctl lock options]: lock RANGE of NAME, run
# nothing, unlock; exit status 75 when refused or timed out
rlock()
{
	local ls=$1 name=$2 range=$3

	shift 3
	"$RDLMCTL" lock -L "$ls" -E 75 -r "$range" "$@" "$name" -- true
}

# refused LS NAME RANGE [rdlmctl lock options]: the lock must be refused
# (-n) or time out (-w)
refused()
{
	local out rc

	out=$(rlock "$@" 2>&1)
	rc=$?
	[ $rc = 75 ] || fail "$1: lock $3 $4 $5: exit $rc, expected 75: $out"
}

off=$((1 << 30))
for ls in $LSS; do
	FABRIC_LS=$ls
	st "wait $ls 90"
	barrier "range-$ls-ready"
	name=range-$ls

	if [ "$ME" = 1 ]; then
		rlock "$ls" "verbs-$ls" 0-1023 -w 30 || fail "$ls: first lock"
		settle "$ls"
		read -r f0 s0 <<<"$SETTLED"
		rlock "$ls" "verbs-$ls" 0-1023 -w 30 || fail "$ls: lock 0-1023"
		settle "$ls"
		read -r f1 s1 <<<"$SETTLED"
		echo "$ls: lock+unlock of units 0-1023: $((f1 - f0)) FA, $((s1 - s0)) SEND"
		case $ls in
		*seg*) [ $((f1 - f0)) = 8 ] ||
			fail "$ls: $((f1 - f0)) FAs, expected 8 (4 segments)" ;;
		*) [ $((f1 - f0)) = 0 ] && [ $((s1 - s0)) -ge 2 ] ||
			fail "$ls: $((f1 - f0)) FAs and $((s1 - s0)) SENDs" ;;
		esac
		expect_fail "not supported" "$RDLMCTL" lock -L "$ls" -n \
			"$name" -- true
		expect_fail "Invalid argument" rlock "$ls" "$name" 0-9 -m CW -n
		"$HELPER" hold "$ls" "$name" PR 0 99 "$TMP/held" &
		holder=$!
		wait_file "$TMP/held"
	fi
	barrier "range-$ls-held"

	if [ "$ME" = 2 ]; then
		rlock "$ls" "$name" 50-150 -s -n ||
			fail "$ls: PR 50-150 refused next to PR 0-99"
		refused "$ls" "$name" 90-95 -n
		refused "$ls" "$name" 90-95 -w 2
		rlock "$ls" "$name" 1024-1100 -n ||
			fail "$ls: EX 1024-1100 refused next to PR 0-99"
		echo "$ls: PR overlap granted, EX overlap refused and timed out, EX apart granted"
	elif [ "$ME" = 3 ]; then
		rlock "$ls" "$name" 2048-2100 -n ||
			fail "$ls: EX 2048-2100 refused next to PR 0-99"
	fi
	barrier "range-$ls-tried"

	# a holder killed: its range goes with its descriptor
	if [ "$ME" = 2 ]; then
		rlock "$ls" "$name" 0-99 -w 60 &
		waiter=$!
		# listed waiting here, its engine request made (range locks:
		# "lock ID waiting ... range START-END req IDX")
		for ((i = 0; i < 300; i++)); do
			grep -q "^lock [0-9]* waiting .* range 0-99 req [0-9]" \
				"$DBG/ls/$ls" && break
			kill -0 $waiter 2>/dev/null || break
			sleep 0.1
		done
		kill -0 $waiter 2>/dev/null || fail "$ls: EX 0-99 did not wait"
		grep -q "^lock [0-9]* waiting .* range 0-99 req [0-9]" "$DBG/ls/$ls" ||
			fail "$ls: EX 0-99 not listed waiting after 30 s: $(grep "^lock " "$DBG/ls/$ls")"
		: >"$RDLM_OUT/range.$ls.waiting"
		wait $waiter || fail "$ls: EX 0-99 not granted after the holder died"
		echo "$ls: EX 0-99 granted once the PR holder was killed"
	elif [ "$ME" = 1 ]; then
		wait_file "$RDLM_OUT/range.$ls.waiting"
		kill -9 $holder
		wait $holder 2>/dev/null
	fi
	barrier "range-$ls-killed"

	grep -qx -- "$ls" <<<"$STRESS_LS" || { barrier "range-$ls-done"; continue; }
	# the cells' blocks allocated and zero on the host before anyone
	# writes pieces of them (range_helper.c)
	if [ "$ME" = 1 ]; then
		for o in "$off" $((off + (64 << 20))); do
			dd if=/dev/zero of="$DISK" bs=1M count=1 oflag=direct \
				seek=$((o >> 20)) status=none || fail "dd $DISK"
		done
	fi
	barrier "range-$ls-zeroed"
	# the checker's own check, once: two names over the same cells, one
	# on node 1 and one on node 2, do not exclude each other, and it must
	# see that across the nodes
	if [ "$ME" -le 2 ] && [ "$ls" = "$(head -n 1 <<<"$STRESS_LS")" ]; then
		"$HELPER" stress "$ls" "control-$ME" 5 64 64 32 "$DISK" \
			$((off + (64 << 20))) >"$RDLM_OUT/range-control.$ME" 2>&1
	fi
	barrier "range-$ls-controlled"
	if [ "$ME" = 1 ] && [ "$ls" = "$(head -n 1 <<<"$STRESS_LS")" ]; then
		grep -q "violations [1-9]" "$RDLM_OUT"/range-control.* ||
			fail "the checker saw no violation of two unrelated names on two nodes: $(cat "$RDLM_OUT"/range-control.*)"
		echo "checker: $(grep -h "^ops" "$RDLM_OUT"/range-control.*) (two unrelated names on nodes 1 and 2: violations expected)"
	fi

	pids=()
	for i in 1 2; do
		RDLM_CS_DIR=$RDLM_OUT "$HELPER" stress "$ls" "stress-$ls" \
			"$SECS" 64 64 16 "$DISK" "$off" >"$TMP/stress.$i" 2>&1 &
		pids+=($!)
	done
	for i in 1 2; do
		wait "${pids[$((i - 1))]}" ||
			fail "$ls: stress $i: $(cat "$TMP/stress.$i")"
		read -r _ ops _ pr _ ex _ <<<"$(tail -n 1 "$TMP/stress.$i")"
		echo "$ls: node$ME stress $i: $(tail -n 1 "$TMP/stress.$i")"
		[ "${pr:-0}" -gt 0 ] && [ "${ex:-0}" -gt 0 ] ||
			fail "$ls: stress $i granted no PR or no EX: $(cat "$TMP/stress.$i")"
	done
	off=$((off + (1 << 20)))
	barrier "range-$ls-done"
done

"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "ok: range locks on $(wc -w <<<"$LSS") lockspaces"
