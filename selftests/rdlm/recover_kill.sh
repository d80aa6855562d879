#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A node hangs: corosync tells every survivor, rdlm_controld fences it
# (switches its VM off), and only then rdlm recovers its locks. Three
# nodes run corosync and rdlm_controld (lib.sh membership_start), whose
# fence device is the test cluster's power switch (fence_rdlm_vm), slowed
# down by RDLM_FENCE_DELAY; in every lk-* lockspace, without leases (the
# lockspaces' default fencing 1), for two names A and B homed on node 1:
#  - node 3 holds A in EX, node 2 waits for A;
#  - node 1 holds B in EX, node 3 waits for B, then node 2 (behind it);
#  - node 3's VM is paused (a hung machine: its memory, its holds and its
#    critical sections as they were); the survivors' rdlm_controld must
#    switch it off before anyone is granted what it holds;
#  - node 1 keeps B through the recovery (the queue engines write a
#    survivor's hold back into the word, central and the bakery keep it
#    anyway) and lets it go once node 2 has A;
#  - node 2 must be granted A (its holder died, so A's LVB is invalid),
#    and B once node 1 lets it go (the dead waiter ahead of it is skipped;
#    B's LVB stays valid); afterwards
#    nodes 1 and 2 lock both names again;
#  - node 1 holds D, homed on node 3, and node 2 waits for it there when
#    node 3 dies: once the survivors moved node 3's names to new homes
#    among themselves ("homes 1 2", "rehoming done"), node 1 still holds
#    D (not reported lost), node 2's request, which waited through the
#    death of D's home, is granted after node 1 lets go, and E, a free
#    name homed on node 3, is granted too;
#  - node 3 boots again (a reset machine), joins corosync and every
#    lockspace, and locks A, B and a name homed on itself; so do nodes 1
#    and 2;
#  - a program on node 2 that joined lk-dqnl for membership events reads
#    prep, slot 3 with node 3's slot and done with 2 members and node 2's
#    slot after the fencing, done with 3 and node 2's slot after the
#    rejoin (node 2 keeps its slot throughout).
# Without leases, only recovery hands a lock on: without it every engine
# waits for the hung node for ever. The time from the pause to the switch
# off and to each grant is printed (detection by corosync, the fence
# agent and its delay, the recovery itself); only a generous bound is
# asserted. Mutual exclusion is checked apart from the lock manager: every
# holder enters a critical section in the nodes' shared memory
# (fault_helper, RDLM_CS_DIR, cs_check.h); a section whose owner's VM the
# harness has switched off since counts as left. Granted while node 3 is still paused
# (before its fencing: a grace, say, shorter than the agent's delay), a
# waiter finds it inside and the test fails.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test recover-kill
HELPER=$PWD/fault_helper
LSS=${RDLM_RECOVER_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
FABRIC_LS=$LSS
VICTIM=3
GRANT_MS=90000		# above detection + fencing + recovery
# the switch is slower than the grace (5 s) a lockspace without fencing
# would wait
export RDLM_FENCE_DELAY=10
TMP=$(mktemp -d)
export RDLM_CS_DIR=$RDLM_OUT

kill_cleanup()
{
	local rc=$?

	[ -e "$TMP/paused" ] && pause_node $VICTIM cont
	kill $(jobs -p) 2>/dev/null
	membership_stop
	(exit $rc)
	fabric_cleanup
}
trap kill_cleanup EXIT

# rk_up: load, configure and join the membership
rk_up()
{
	rdlm_loaded && rdlm_reset
	kmsg_mark
	rdlm_load
	"$CONFIGURE" up || fail "configure"
	for ls in $LSS; do
		ls_set "$ls" lease_us=0
	done
	membership_start
	for ls in $LSS; do
		MEMBERSHIP_WAIT_S=120 membership_wait "$ls" 1 1 2 3
	done
	# the others let a rejoining node have their tables only now
	for ls in $LSS; do
		st "wait $ls 90"
	done
}

# rk_locks: every node takes A, B and a name homed on node 3, in turn
rk_locks()
{
	local ls x

	if [ "$ME" = 1 ]; then
		for ls in $LSS; do
			name_homed_on "$ls" $VICTIM rkc >"$RDLM_OUT/rk.$ls.c"
		done
	fi
	barrier rk-c 600
	for ls in $LSS; do
		for x in a b c; do
			"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.$x")" 60000 \
				>"$TMP/again" ||
				fail "$ls: $x after the rejoin: $(cat "$TMP/again")"
		done
	done
	barrier rk-rejoin-locked 600
	trap fabric_cleanup EXIT
	[ -n "${EVPID:-}" ] && kill $EVPID && wait $EVPID
	membership_stop
	"$CONFIGURE" down || fail "configure down"
	rdlm_unload
	kmsg_check
}

if [ "${RDLM_BOOT:-1}" -gt 1 ]; then
	rk_up
	echo "node$ME rebooted and rejoined every lockspace"
	barrier rk-rejoined 600
	rk_locks
	echo "node$ME locks again after its reboot"
	exit 0
fi

rk_up
EVLS=lk-dqnl
EVPID=
if [ "$ME" = 2 ]; then
	"$HELPER" events $EVLS "$TMP/events" &
	EVPID=$!
fi
barrier rk-ready 300
# node 2's and the victim's slots in EVLS's agreed table, for the events
if [ "$ME" = 2 ]; then
	for ((i = 0; i < 300; i++)); do
		tbl=$(cat "$CFS/lockspaces/$EVLS/membership")
		[[ $tbl == *"rehoming done"* ]] &&
			[[ $(grep "^slots " <<<"$tbl") =~ ^slots\ 1:[1-3]\ 2:([1-3])\ 3:([1-3])$ ]] &&
			break
		sleep 0.1
	done
	((i < 300)) || fail "$EVLS: no slot table for 1 2 3: $tbl"
	MYSLOT=${BASH_REMATCH[1]} VSLOT=${BASH_REMATCH[2]}
	echo "$EVLS: $(grep "^slots " <<<"$tbl")"
fi

if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		name_homed_on "$ls" 1 rka >"$RDLM_OUT/rk.$ls.a"
		name_homed_on "$ls" 1 rkb >"$RDLM_OUT/rk.$ls.b"
		# in the shared directory: node 2 must know if it was lost
		"$HELPER" hold "$ls" "$(cat "$RDLM_OUT/rk.$ls.b")" \
			"$RDLM_OUT/rk.$ls.bheld" &
		echo $! >"$TMP/holder.$ls"
		wait_file "$RDLM_OUT/rk.$ls.bheld"
		# D, held here from just before the kill, and E, free, are
		# homed on the victim
		name_homed_on "$ls" $VICTIM rkd >"$RDLM_OUT/rk.$ls.d"
		name_homed_on "$ls" $VICTIM rke >"$RDLM_OUT/rk.$ls.e"
	done
fi
barrier rk-names 600
if [ "$ME" = $VICTIM ]; then
	for ls in $LSS; do
		"$HELPER" hold "$ls" "$(cat "$RDLM_OUT/rk.$ls.a")" \
			"$TMP/held.$ls" &
		wait_file "$TMP/held.$ls"
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.b")" 0 \
			>/dev/null &
	done
	sleep 5		# queued for B ahead of node 2
fi
barrier rk-victim 600
if [ "$ME" = 2 ]; then
	declare -A wa wb
	for ls in $LSS; do
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.a")" $GRANT_MS \
			>"$TMP/a.$ls" &
		wa[$ls]=$!
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.b")" $GRANT_MS \
			>"$TMP/b.$ls" &
		wb[$ls]=$!
	done
	sleep 5		# queued behind node 3
fi
barrier rk-queued 600

if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		"$HELPER" hold "$ls" "$(cat "$RDLM_OUT/rk.$ls.d")" \
			"$RDLM_OUT/rk.$ls.dheld" &
		echo $! >"$TMP/dholder.$ls"
		wait_file "$RDLM_OUT/rk.$ls.dheld"
	done
fi
barrier rk-dheld 600
if [ "$ME" = 2 ]; then
	# D waits at its home when the home dies: it must go on waiting
	# (not fail for the lost link) and be granted at the new home
	declare -A wd
	for ls in $LSS; do
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.d")" 150000 \
			>"$TMP/d.$ls" &
		wd[$ls]=$!
	done
	sleep 3		# queued behind node 1 at D's home, the victim
fi
barrier rk-dwaits 600
NODES=2		# the barriers from here on count the survivors
if [ "$ME" = 1 ]; then
	pause_node $VICTIM stop
	: >"$TMP/paused"
	# whole or not at all: the others read it as soon as it exists
	date +%s%N >"$RDLM_OUT/rk.killed.tmp" &&
		mv "$RDLM_OUT/rk.killed.tmp" "$RDLM_OUT/rk.killed"
	echo "node$VICTIM paused"
fi
if [ "$ME" = $VICTIM ]; then
	# switched off meanwhile, or resumed after a survivor failed
	for ((i = 0; i < 600; i++)); do
		ls "$RDLM_OUT"/abort.recover-kill.* >/dev/null 2>&1 &&
			fail "a survivor failed"
		sleep 1
	done
fi
wait_file "$RDLM_OUT/rk.killed"
t0=$(cat "$RDLM_OUT/rk.killed")

if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		MEMBERSHIP_WAIT_S=120 membership_wait "$ls" 1 1 2
		echo "$ls: node$VICTIM left the membership after $((($(date +%s%N) - t0) / 1000000)) ms"
	done
	# only the fence agent switches it off
	for ((i = 0; i < 1200; i++)); do
		[ "$(cat "$RDLM_OUT/node$VICTIM.rc" 2>/dev/null)" = killed ] &&
			break
		sleep 0.1
	done
	[ "$(cat "$RDLM_OUT/node$VICTIM.rc" 2>/dev/null)" = killed ] ||
		fail "node$VICTIM not fenced 120 s after its pause"
	rm -f "$TMP/paused"
	echo "node$VICTIM switched off by the fence agent $((($(date +%s%N) - t0) / 1000000)) ms after its pause"
	# B, held here with node 3 queued behind: kept through the recovery
	# of its word (node 2 has A: the words were recovered), then let go
	wait_file "$RDLM_OUT/rk.agranted"
	sleep 3
	for ls in $LSS; do
		kill "$(cat "$TMP/holder.$ls")" 2>/dev/null
		wait "$(cat "$TMP/holder.$ls")" 2>/dev/null
		[ ! -e "$RDLM_OUT/rk.$ls.bheld.lost" ] ||
			fail "$ls: B, held by a survivor, lost when the node queued behind it died"
	done
fi
if [ "$ME" = 2 ]; then
	for ls in $LSS; do
		wait ${wa[$ls]} ||
			fail "$ls: A not granted after its holder died: $(cat "$TMP/a.$ls")"
		grep -q "lvb invalid" "$TMP/a.$ls" ||
			fail "$ls: A's LVB valid after its EX holder died: $(cat "$TMP/a.$ls")"
		echo "$ls: A granted $((($(date +%s%N) - t0) / 1000000)) ms after the pause ($(cat "$TMP/a.$ls"))"
	done
	: >"$RDLM_OUT/rk.agranted"
	for ls in $LSS; do
		wait ${wb[$ls]} ||
			fail "$ls: B not granted past a dead waiter: $(cat "$TMP/b.$ls")"
		grep -q "lvb valid" "$TMP/b.$ls" ||
			fail "$ls: B's LVB invalid, its holder released it: $(cat "$TMP/b.$ls")"
		echo "$ls: B granted $((($(date +%s%N) - t0) / 1000000)) ms after the pause ($(cat "$TMP/b.$ls"))"
	done
fi
barrier rk-granted 600

# D and E had their home on the victim: they moved to a survivor, where
# node 1 still holds D (reclaimed, not lost) and node 2 is granted it only
# after node 1 lets go
for ls in $LSS; do
	for ((i = 0; i < 1200; i++)); do
		grep -q "^rehoming done" "$CFS/lockspaces/$ls/membership" && break
		sleep 0.1
	done
	grep -q "^rehoming done" "$CFS/lockspaces/$ls/membership" ||
		fail "$ls: names not re-homed: $(cat "$CFS/lockspaces/$ls/membership")"
	grep -q "^homes 1 2\$" "$CFS/lockspaces/$ls/membership" ||
		fail "$ls: homes not the survivors: $(cat "$CFS/lockspaces/$ls/membership")"
done
barrier rk-rehomed 600
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		[ ! -e "$RDLM_OUT/rk.$ls.dheld.lost" ] ||
			fail "$ls: D, held by a survivor, lost when its home died"
	done
fi
barrier rk-dchecked 600
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		kill "$(cat "$TMP/dholder.$ls")"
	done
fi
if [ "$ME" = 2 ]; then
	for ls in $LSS; do
		wait ${wd[$ls]} ||
			fail "$ls: D not granted at its new home: $(cat "$TMP/d.$ls")"
		echo "$ls: D granted at its new home ($(cat "$TMP/d.$ls"))"
	done
fi
barrier rk-dgranted 600

# events_after REGEX...: within 30 s, the last lines of the events file
# match these, in this order
events_after()
{
	local i k ok lines

	for ((i = 0; i < 300; i++)); do
		mapfile -t lines < <(tail -n $# "$TMP/events")
		ok=$((${#lines[@]} == $#))
		for ((k = 0; ok && k < $#; k++)); do
			[[ ${lines[k]} =~ ^${@:k+1:1}$ ]] || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 0.1
	done
	fail "$EVLS: membership events $(tr '\n' ',' <"$TMP/events") do not end with: $*"
}
if [ "$ME" = 2 ]; then
	events_after prep "slot $VICTIM $VSLOT" "done [0-9]+ 2 $MYSLOT"
	echo "$EVLS: membership events: $(tr '\n' ' ' <"$TMP/events")"
fi

# the names work for the survivors, one node after the other
for ls in $LSS; do
	for x in a b d e; do
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/rk.$ls.$x")" 60000 \
			>"$TMP/again" ||
			fail "$ls: $x after the recovery: $(cat "$TMP/again")"
	done
	grep -q "^recoveries [1-9]" "$CFS/lockspaces/$ls/membership" ||
		fail "$ls: no recovery counted: $(cat "$CFS/lockspaces/$ls/membership")"
done
barrier rk-done 600
echo "a dead holder's and a dead waiter's locks recovered on every engine"

[ "$ME" = 1 ] && boot_node $VICTIM "cd $PWD && ./recover_kill.sh"
for ls in $LSS; do
	MEMBERSHIP_WAIT_S=300 membership_wait "$ls" 1 1 2 3
done
NODES=3
barrier rk-rejoined 600
[ "$ME" = 2 ] && events_after "done [0-9]+ 3 $MYSLOT"
rk_locks
echo "node$VICTIM rejoined, everyone locks on every engine"
