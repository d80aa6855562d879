#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A node dies: corosync tells every survivor, rdlm recovers its locks.
# Three nodes run corosync and rdlm_controld (lib.sh membership_start);
# in every lk-* lockspace, for two names A and B homed on node 1:
#  - node 3 holds A in EX, node 2 waits for A;
#  - node 1 holds B in EX, node 3 waits for B, then node 2 (behind it);
#  - node 3's QEMU is killed (no goodbye on the wire);
#  - node 2 must be granted A (its holder died, so A's LVB is invalid),
#    and B once node 1 lets it go (the dead waiter ahead of it is skipped;
#    B's LVB stays valid unless a lease broke node 1's hold); afterwards
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
#    prep, slot 3 and done with 2 members after the kill, done with 3
#    after the rejoin.
# Without recovery the queue engines wait for the dead node for ever, and
# central until the lease ends: its leases are made 60 s long here, so that
# only recovery can grant in time. The bakery keeps its 2 s lease, which is
# how it recovers (a lease reset). The time from the kill to each grant is
# printed (detection by corosync, the recovery grace, the recovery itself);
# only a bound far below 60 s is asserted. Mutual exclusion is checked
# apart from the lock manager: every holder enters a critical section in
# the shared output directory (fault_helper, RDLM_CS_DIR); the sections of
# the killed node are cleared by hand, as it died inside them.
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
GRANT_MS=55000		# above detection + grace + recovery, below a lease
TMP=$(mktemp -d)
export RDLM_CS_DIR=$RDLM_OUT

kill_cleanup()
{
	local rc=$?

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
	long_leases $(echo $LSS | tr ' ' '\n' | grep -v bakery)
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
	# (taken late, so that no lease runs out before the check)
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
	kill_node $VICTIM
	# it died inside its critical sections
	for f in "$RDLM_OUT"/cs.*/owner; do
		grep -q "^node $VICTIM " "$f" 2>/dev/null &&
			rm -r "$(dirname "$f")"
	done
	# whole or not at all: the others read it as soon as it exists
	date +%s%N >"$RDLM_OUT/rk.killed.tmp" &&
		mv "$RDLM_OUT/rk.killed.tmp" "$RDLM_OUT/rk.killed"
	echo "node$VICTIM killed"
fi
[ "$ME" = $VICTIM ] && sleep 600	# killed meanwhile
wait_file "$RDLM_OUT/rk.killed"
t0=$(cat "$RDLM_OUT/rk.killed")

if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		MEMBERSHIP_WAIT_S=120 membership_wait "$ls" 1 1 2
		echo "$ls: node$VICTIM left the membership after $((($(date +%s%N) - t0) / 1000000)) ms"
	done
	# B goes to the next waiter in the queue: the dead node 3
	for ls in $LSS; do
		kill "$(cat "$TMP/holder.$ls")"
	done
fi
if [ "$ME" = 2 ]; then
	for ls in $LSS; do
		wait ${wa[$ls]} ||
			fail "$ls: A not granted after its holder died: $(cat "$TMP/a.$ls")"
		grep -q "lvb invalid" "$TMP/a.$ls" ||
			fail "$ls: A's LVB valid after its EX holder died: $(cat "$TMP/a.$ls")"
		echo "$ls: A granted $((($(date +%s%N) - t0) / 1000000)) ms after the kill ($(cat "$TMP/a.$ls"))"
	done
	for ls in $LSS; do
		wait ${wb[$ls]} ||
			fail "$ls: B not granted past a dead waiter: $(cat "$TMP/b.$ls")"
		# unless a lease broke node 1's hold first (the bakery's
		# 2 s, or the others' 60 s on a slow kernel)
		[ -e "$RDLM_OUT/rk.$ls.bheld.lost" ] ||
			grep -q "lvb valid" "$TMP/b.$ls" ||
			fail "$ls: B's LVB invalid, its holder released it: $(cat "$TMP/b.$ls")"
		echo "$ls: B granted $((($(date +%s%N) - t0) / 1000000)) ms after the kill ($(cat "$TMP/b.$ls"))"
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
		# the bakery's holder ends its own hold with its 2 s lease
		case $ls in lk-bakery*) continue ;; esac
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
	events_after prep "slot $VICTIM" "done [0-9]+ 2"
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
[ "$ME" = 2 ] && events_after "done [0-9]+ 3"
rk_locks
echo "node$VICTIM rejoined, everyone locks on every engine"
