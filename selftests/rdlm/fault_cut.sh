#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A home that stops answering without any link going down: the hub drops
# every frame between node 2 (the home) and node 3, on every lk-*
# lockspace at once.
#  - node 1 holds a name homed on node 2 in EX; node 3 waits for it with a
#    120 s timeout, and in a second process with no timeout;
#  - the hub cuts 2|3: kill -9 of the waiter without a timeout ends the
#    process within $KILL_S s; the waiter with a timeout fails (the lock is
#    still held) well before its own 120 s, once the silence is detected;
#  - after the heal node 3 reconnects, node 1 releases, and nodes 2 and 3
#    are granted the name (on the bakery within two leases: the tickets of
#    the failed waiters are skipped by a lease reset).
# Times are printed; only bounds far above what the code should need are
# asserted (the detection bound is in Documentation/fabric.rst).
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test fault-cut
HELPER=$PWD/fault_helper
LSS=${RDLM_CUT_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
HOME_NODE=2
WAITER=3
WAIT_MS=120000
# After the heal: the bakery skips the tickets its failed waiters left at
# the home only once their lease has run out (a lease reset, up to two
# leases of long_leases' 60 s); the other engines are much faster.
AFTER_MS=200000
FAIL_S=90	# a waiter still blocked this long after the cut was not failed
KILL_S=10	# a killed waiter still alive this long was not killable
# A request whose home is no longer reachable fails with -ENOTCONN
# (Documentation/lock-manager.rst, "Failures"; rdlm_lm_home_down()), and
# fault_helper wait prints the errno as a number (Linux's ENOTCONN).
ENOTCONN=107
TMP=$(mktemp -d)

# cut_cleanup: heal the hub whatever happened, then the usual clean-up
cut_cleanup()
{
	local rc=$?

	[ "$ME" = 1 ] && hub_heal
	kill $(jobs -p) 2>/dev/null
	(exit $rc)
	fabric_cleanup
}
trap cut_cleanup EXIT

# gone_within PID SECS: PID has exited (or is a zombie) within SECS
gone_within()
{
	local i

	for ((i = 0; i <= $2 * 10; i++)); do
		grep -q '^[^ ]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null && return 0
		[ -d "/proc/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
long_leases $LSS
for ls in $LSS; do
	st "wait $ls 90"
done
barrier cut-ready 300

if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		name=$(name_homed_on "$ls" $HOME_NODE cut) ||
			fail "$ls: no name homed on node$HOME_NODE"
		echo "$name" >"$RDLM_OUT/cut.$ls.name"
		"$HELPER" hold "$ls" "$name" "$TMP/held.$ls" &
		wait_file "$TMP/held.$ls"
	done
	echo "node1 holds a name homed on node$HOME_NODE in every lockspace"
fi
barrier cut-held 600

if [ "$ME" = $WAITER ]; then
	declare -A timed killed
	for ls in $LSS; do
		name=$(cat "$RDLM_OUT/cut.$ls.name")
		"$HELPER" wait "$ls" "$name" $WAIT_MS >"$TMP/wait.$ls" &
		timed[$ls]=$!
		"$HELPER" wait "$ls" "$name" 0 >/dev/null &
		killed[$ls]=$!
	done
	# both wait, in every lockspace: their locks are listed waiting on
	# the name's word homed on node 2, its engine request out there
	# (rdlm_ls_dump_locks(): "hold 1/" is RDLM_SLOT_ACQUIRING). That is
	# this node's side; the home's is not in debugfs for every engine.
	for ls in $LSS; do
		for ((i = 0; i < 600; i++)); do
			[ "$(grep -c "^lock [0-9]* waiting .* home $HOME_NODE slot [0-9]* hold 1/" \
				"$DBG/ls/$ls")" -ge 2 ] && break
			sleep 0.1
		done
		[ $i -lt 600 ] || fail "$ls: the two waiters do not wait after 60 s: $(grep "^lock " "$DBG/ls/$ls")"
	done
	for ls in $LSS; do
		gone_within ${timed[$ls]} 0 && fail "$ls: waiter returned before the cut: $(cat "$TMP/wait.$ls")"
	done
fi
barrier cut-waiting 300

if [ "$ME" = 1 ]; then
	hub_cut $HOME_NODE $WAITER
	date +%s.%N >"$RDLM_OUT/cut.time"
fi
wait_file "$RDLM_OUT/cut.time"

if [ "$ME" = $WAITER ]; then
	sleep 1
	for ls in $LSS; do
		t0=$(date +%s%N)
		kill -9 ${killed[$ls]}
		gone_within ${killed[$ls]} $KILL_S ||
			fail "$ls: a waiter on a silent home outlived kill -9 by $KILL_S s"
		echo "$ls: kill -9 of a waiter on a silent home: gone after $((($(date +%s%N) - t0) / 1000000)) ms"
	done
	for ls in $LSS; do
		pid=${timed[$ls]}
		gone_within "$pid" $FAIL_S ||
			fail "$ls: waiter still blocked $FAIL_S s after its home went silent"
		wait "$pid" && fail "$ls: granted while node1 holds the lock: $(cat "$TMP/wait.$ls")"
		# failed as the detection fails it: not its own timeout, nor
		# any other error
		out=$(cat "$TMP/wait.$ls")
		[[ $out == "status $ENOTCONN ms "* ]] ||
			fail "$ls: waiter on a silent home: '$out', expected status $ENOTCONN (ENOTCONN)"
		echo "$ls: waiter on a silent home: $out (cut at +0)"
	done
fi
barrier cut-failed 600

[ "$ME" = 1 ] && hub_heal
for ls in $LSS; do
	echo "wait $ls 120" >$ST 2>/dev/null || fail "$ls: not reconnected 120 s after the heal"
done
barrier cut-healed 300

if [ "$ME" = 1 ]; then
	kill $(jobs -p)
	wait
fi
barrier cut-released 300
if [ "$ME" != 1 ]; then
	declare -A after
	for ls in $LSS; do
		name=$(cat "$RDLM_OUT/cut.$ls.name")
		"$HELPER" wait "$ls" "$name" $AFTER_MS >"$TMP/after.$ls" &
		after[$ls]=$!
	done
	for ls in $LSS; do
		wait ${after[$ls]} ||
			fail "$ls: $(cat "$RDLM_OUT/cut.$ls.name") after the heal: $(cat "$TMP/after.$ls")"
	done
fi
barrier cut-done 600
trap fabric_cleanup EXIT
"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "silent home: waiters failed, killed waiters gone, everything works after the heal"
