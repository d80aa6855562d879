#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cluster locks through /dev/rdlm, from every node, in every lockspace
# named lk-* in tools/cluster/cluster.conf (one per engine and atomic mode):
#  - the critical-section check sees two nodes inside one section without
#    a lock (its own check);
#  - mutual exclusion: $PROCS processes per node increment a counter kept in
#    the LVB under EX, $INCS times each; the final value is exact, and no
#    hold overlapped another in the cluster's shared memory (cs_check.h);
#  - PR holders of every node hold at once, and EX is refused to everybody
#    meanwhile; EX excludes PR on other nodes (trylock, timeout);
#  - a conversion waits for another node's PR holder; trylock and timeout of
#    conversions; cancel and signal interruption against another node;
#  - kill -9 of a holder releases its lock: a waiter on another node gets it;
#  - central: the messages of a lock whose home is this node are handed to
#    the receive path by the fabric, not sent through the loopback
#    connection (debugfs lockspaces, local_msgs).
#
# RDLM_LOCK_INCS (default 400: 3 nodes x 2 x 400 = 2,400 increments per
# lockspace, each hold checked in shared memory too; 600 took 196-230 s
# for the whole test, 850 216-281 s, 1700 460 s),
# RDLM_LOCK_PROCS (2),
# RDLM_LOCK_LS (the lockspaces to use) and RDLM_LOCK_STALL (seconds the
# counter may take on one node, 600) tune it.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
RDLMCTL=$REPO/userspace/rdlmctl
BENCH=$REPO/userspace/rdlm-bench
INCS=${RDLM_LOCK_INCS:-400}
PROCS=${RDLM_LOCK_PROCS:-2}
STALL=${RDLM_LOCK_STALL:-600}	# seconds the counter may take per node
LSS=${RDLM_LOCK_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
[ -n "$LSS" ] || { echo "SKIP: no lk-* lockspace in cluster.conf"; exit $ksft_skip; }
TMP=$(mktemp -d)

# A node that fails tells the others, so that they stop at their next
# barrier instead of waiting for it to time out.
fail()
{
	echo "FAIL: $*"
	touch "$RDLM_OUT/lock-failed.$ME"
	exit 1
}

sync_nodes()
{
	local i n

	touch "$RDLM_OUT/barrier.$1.$ME"
	for ((i = 0; i < 9000; i++)); do
		ls "$RDLM_OUT" | grep -q "^lock-failed\." &&
			{ echo "FAIL: another node failed"; exit 1; }
		n=$(ls "$RDLM_OUT" | grep -c "^barrier\.$1\.")
		[ "$n" -ge "$NODES" ] && return 0
		sleep 0.1
	done
	fail "barrier $1: $n of $NODES nodes after 900 s"
}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
# the holders below wait seconds for other nodes under TCG
long_leases $LSS

# The critical-section check's own check: nodes 1 and 2 in one name's
# section at once, without any lock, must be seen.
sync_nodes cs-control
if [ "$ME" -le 2 ]; then
	RDLM_CS_DIR=$RDLM_OUT "$PWD/fault_helper" control cs-control x 3 \
		>"$RDLM_OUT/cs-control.$ME" 2>/dev/null || fail "cs_check control"
fi
sync_nodes cs-controlled
if [ "$ME" = 1 ]; then
	v=$(awk '{ n += $2 } END { print n + 0 }' "$RDLM_OUT"/cs-control.*)
	[ "$v" -gt 0 ] ||
		fail "the critical-section check saw nothing of two nodes inside at once"
	echo "critical-section check: $v violations of two nodes without a lock (expected)"
fi

# hold LS NAME MODE: hold NAME in MODE in the background until release NAME
hold()
{
	rm -f "$TMP/held.$2" "$TMP/release.$2"
	"$RDLMCTL" lock -o -L "$1" -m "$3" "$2" -- bash -c \
		"touch $TMP/held.$2; while [ ! -e $TMP/release.$2 ]; do sleep 0.05; done" &
	HOLDER=$!
	wait_file "$TMP/held.$2"	# granted
}

release()
{
	touch "$TMP/release.$1"
	wait "$HOLDER" || fail "holder of $1 failed"
}

# self_name LS: a name whose home is this node (read while held), or nothing
self_name()
{
	local i

	for ((i = 0; i < 64; i++)); do
		[ "$("$BENCH" -L "$1" -m home -p "self-$ME-$i" 2>/dev/null)" = "$ME" ] &&
			{ echo "self-$ME-$i"; return; }
	done
}

# local_msgs LS: messages the fabric delivered to this node without a verb
local_msgs()
{
	awk -v ls="$1" '$1 == ls { for (i = 2; i < NF; i++)
		if ($i == "local_msgs") print $(i + 1) }' $DBG/lockspaces
}

for ls in $LSS; do
	st "wait $ls 90"
	sync_nodes "$ls-ready"

	# mutual exclusion: a counter in the LVB, incremented under EX
	# and each hold checked against the others (cs_check.h)
	RDLM_CS_DIR=$RDLM_OUT timeout "$STALL" "$BENCH" -L "$ls" -n "$INCS" \
		-P "$PROCS" -k 1 -x 100 \
		-p cnt- >"$TMP/bench" 2>&1 ||
		{ rc=$?; fail "$ls: rdlm-bench exited $rc (124: no progress in $STALL s): $(cat "$TMP/bench")"; }
	echo "$ls: node $ME: $(cat "$TMP/bench")"
	sync_nodes "$ls-counted"
	if [ "$ME" = 1 ]; then
		want=$((NODES * PROCS * INCS))
		got=$("$BENCH" -L "$ls" -r 1 -p cnt-) || fail "$ls: read counter"
		[ "$got" = "counters $want" ] ||
			fail "$ls: counter: $got, expected $want"
		echo "$ls: $want increments from $NODES nodes, counter exact"
	fi

	# DQNL's queues are exclusive only: PR is served as EX between nodes
	case $(cat "$CFS/lockspaces/$ls/engine") in
	dqnl | dqnl-sf) shared=false ;;
	*) shared=true ;;
	esac

	if $shared; then
		# PR holders of every node at once; EX is refused meanwhile
		hold "$ls" shared PR
		sync_nodes "$ls-pr-held"
		expect_fail "held elsewhere" \
			"$RDLMCTL" lock -n -L "$ls" shared -- true
		sync_nodes "$ls-pr-checked"
		release shared
	else
		# a PR holder on node 1 excludes PR on the others
		[ "$ME" = 1 ] && hold "$ls" shared PR
		sync_nodes "$ls-pr-held"
		[ "$ME" != 1 ] && expect_fail "held elsewhere" \
			"$RDLMCTL" lock -n -s -L "$ls" shared -- true
		sync_nodes "$ls-pr-checked"
		[ "$ME" = 1 ] && release shared
	fi
	sync_nodes "$ls-pr-released"

	# EX on node 1 excludes PR elsewhere, until it is released
	[ "$ME" = 1 ] && hold "$ls" excl EX
	sync_nodes "$ls-ex-held"
	if [ "$ME" != 1 ]; then
		expect_fail "held elsewhere" \
			"$RDLMCTL" lock -n -s -L "$ls" excl -- true
		expect_fail "timed out" \
			"$RDLMCTL" lock -w 0.3 -s -L "$ls" excl -- true
	fi
	sync_nodes "$ls-ex-checked"
	[ "$ME" = 1 ] && release excl
	sync_nodes "$ls-ex-released"
	"$RDLMCTL" lock -w 60 -s -L "$ls" excl -- true ||
		fail "$ls: PR after the EX holder left"

	# conversions on node 2 against node 1's PR holder (shared engines)
	$shared && [ "$ME" = 1 ] && hold "$ls" conv PR
	sync_nodes "$ls-conv-held"
	if $shared && [ "$ME" = 2 ]; then
		timeout 120 ./lock_helper convert "$ls" conv \
			"$RDLM_OUT/conv-waiting.$ls" ||
			fail "$ls: conversions"
	elif $shared && [ "$ME" = 1 ]; then
		wait_file "$RDLM_OUT/conv-waiting.$ls"
		release conv
	fi
	sync_nodes "$ls-conv-done"
	# signals and cancel on node 2 against node 1's EX holder
	[ "$ME" = 1 ] && hold "$ls" sig EX
	sync_nodes "$ls-sig-held"
	if [ "$ME" = 2 ]; then
		timeout 120 ./lock_helper eintr "$ls" sig ||
			fail "$ls: signal interruption"
		timeout 120 ./lock_helper cancel "$ls" sig || fail "$ls: cancel"
	fi
	sync_nodes "$ls-sig-done"
	[ "$ME" = 1 ] && release sig

	# kill -9 of a holder on node 1 lets the waiter on node 2 in
	if [ "$ME" = 1 ]; then
		rm -f "$RDLM_OUT/victim-kill.$ls"
		"$RDLMCTL" lock -o -L "$ls" victim -- \
			bash -c "touch $TMP/victim; exec sleep 600" &
		victim=$!
		wait_file "$TMP/victim"
	fi
	sync_nodes "$ls-victim-held"
	if [ "$ME" = 2 ]; then
		# granted before node 1 set out to kill the holder: "early"
		rm -f "$TMP/got" "$TMP/early"
		"$RDLMCTL" lock -w 120 -L "$ls" victim -- sh -c \
			"[ -e $RDLM_OUT/victim-kill.$ls ] && touch $TMP/got || touch $TMP/early" &
		waiter=$!
		lock_waiting "$ls" victim || fail "$ls: the waiter does not wait"
		touch "$RDLM_OUT/victim-waiting.$ls"
		wait "$waiter" || fail "$ls: the waiter did not get the lock"
		[ -e "$TMP/early" ] && fail "$ls: granted while held elsewhere"
		[ -e "$TMP/got" ] || fail "$ls: the waiter's command did not run"
		echo "$ls: kill -9 of the holder on node 1 let node 2 in"
	elif [ "$ME" = 1 ]; then
		wait_file "$RDLM_OUT/victim-waiting.$ls"
		: >"$RDLM_OUT/victim-kill.$ls"
		child=$(pgrep -P "$victim")
		kill -9 "$victim"
		{ wait "$victim"; } 2>/dev/null
		[ -n "$child" ] && kill -9 "$child"
	fi
	sync_nodes "$ls-victim-done"

	# central: request, grant and release of a name homed here: 3 messages
	# to this node each time, none of them through the loopback connection
	if [ "$(cat "$CFS/lockspaces/$ls/engine")" = central ]; then
		name=$(self_name "$ls")
		[ -n "$name" ] || fail "$ls: no name homed on node $ME in 64"
		m0=$(local_msgs "$ls")
		for i in 1 2 3 4 5; do
			"$RDLMCTL" lock -L "$ls" "$name" -- true ||
				fail "$ls: lock $name"
		done
		m1=$(local_msgs "$ls")
		[ $((m1 - m0)) -ge 15 ] ||
			fail "$ls: 5 lock+unlock of $name (home here) delivered $((m1 - m0)) messages here, want 15"
		echo "$ls: 5 lock+unlock homed here: $((m1 - m0)) messages delivered without a verb"
	fi
	echo "$ls: ok"
done

sync_nodes lock-done
"$CONFIGURE" down || fail "unconfigure"
grep -q "^locks 0$" $DBG/dev || fail "locks left: $(cat $DBG/dev)"
rdlm_unload
rm -rf "$TMP"
kmsg_check
