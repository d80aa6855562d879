#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cluster membership from corosync (rdlm_controld(8)), on 3 nodes, for
# every lockspace named lk-* in tools/cluster/cluster.conf:
#  - with corosync and rdlm_controld running everywhere, every node reports
#    members 1 2 3, quorate, and the same slot table, one slot each;
#  - nodes 3, 2 and 1 enable memb-slots in turn: each takes the lowest
#    free slot, the others keep theirs (1:3 2:2 3:1 on every node);
#  - node 1 enables a lockspace while its rdlm_controld is stopped
#    (SIGSTOP): nothing is granted there before the daemon's first line;
#    one configured managed 0 grants at once and the daemon leaves it be;
#  - the lockspaces below opt in to grace-only recovery (fencing 0): no
#    fence agent switches node 3 off in this test; they run without
#    leases (lease_us 0), so only recovery hands a held lock on;
#  - node 3 disables fab-cpu: its rdlm_controld leaves the group and nodes
#    1 and 2 report 1 2 for it; enabled again, 1 2 3, and node 3's epoch
#    of fab-cpu went on increasing;
#  - node 2's rdlm_controld is stopped while node 3 disables and enables
#    every lk-* lockspace (A->B->A while node 2 lags): nothing is granted
#    until node 2 has applied node 3's departure and return; the holds of
#    names homed on node 3 (nodes 1 and 2) are reclaimed, not lost;
#  - node 3 holds a name homed on node 1 in EX, node 1 waits for it; the
#    hub cuts node 3 off: nodes 1 and 2 report members 1 2, quorate (2 of
#    3 votes), node 3 reports itself alone, not quorate: its lockspaces
#    stop and its hold is reported lost; node 1 is granted the name once
#    the recovery grace has passed, and the two holders are never inside
#    at once (fault_helper's critical sections, RDLM_CS_DIR);
#  - the heal: node 3's rdlm_controld restarts its lockspaces, they join
#    again, every node reports 1 2 3 and locks the name; every node has
#    the slot table of the start (nodes 1 and 2 kept their slots, node
#    3's fresh lockspace took the free one);
#  - node 3 holds the names again, node 1 waits; node 3 is cut off and
#    its rdlm_controld killed (SIGKILL): node 3's lockspaces stop and
#    report the holds lost at once, nodes 1 and 2 report 1 2 and node 1 is
#    granted the names, never while node 3 is inside; healed and started
#    again, rdlm_controld restarts node 3's lockspaces, every node reports
#    1 2 3 and locks the names;
#  - node 3 holds the names again and its VM is paused past the token and
#    the grace: node 1 is granted them; resumed, node 3 reports its holds
#    lost (the time it took is the grace mode's window), restarts its
#    lockspaces and every node locks the names again;
#  - node 1: a second rdlm_controld refuses to start, one without -f
#    daemonizes and leaves on SIGTERM; node 2: corosync stops under
#    rdlm_controld, which exits 1.
# The membership is read from the kernel's configfs file "membership". The
# time from each fault to the report is printed (corosync's failure
# detection); only a generous bound (MEMBERSHIP_WAIT_S, 60 s) is asserted.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
command -v corosync >/dev/null || { echo "SKIP: corosync is not installed"; exit $ksft_skip; }
[ -x "$REPO/userspace/rdlm_controld" ] ||
	fail "$REPO/userspace/rdlm_controld missing: make -C userspace"
fabric_test membership
LSS=${RDLM_MEMB_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
[ -n "$LSS" ] || { echo "SKIP: no lk-* lockspace in cluster.conf"; exit $ksft_skip; }
HELPER=$PWD/fault_helper
TMP=$(mktemp -d)
export RDLM_CS_DIR=$RDLM_OUT	# fault_helper's mutual exclusion check

memb_cleanup()
{
	local rc=$?

	[ "$ME" = 1 ] && [ "$rc" != 0 ] && hub_heal
	# a paused node would wait for the run's end
	[ "$ME" = 1 ] && [ "$rc" != 0 ] && [ -e "$TMP/paused" ] &&
		pause_node 3 cont
	kill $(jobs -p) 2>/dev/null
	# a daemon stopped by the lag step would not hear its SIGTERM
	[ -e $MEMB_CONTROLD_PID ] &&
		kill -CONT "$(cat $MEMB_CONTROLD_PID)" 2>/dev/null
	membership_stop
	(exit $rc)
	fabric_cleanup
}
trap memb_cleanup EXIT

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# wait_notice NAME: wait (60 s at most) for node 1's notice NAME in
# $RDLM_OUT; the time this node saw it is then in T0
wait_notice()
{
	local i

	for ((i = 0; i < 600; i++)); do
		if [ -e "$RDLM_OUT/memb.$1" ]; then
			T0=$(now_ms)
			return 0
		fi
		sleep 0.1
	done
	fail "no notice $1 from node1 in 60 s"
}

# logged_ms LS QUORATE NODEID...: ms from T0 to rdlm_controld's first report
# of this membership of LS after T0, by its log's time stamps (this node's
# clock, like T0's)
logged_ms()
{
	local ls=$1

	shift
	awk -v t0="$T0" -v pat="rdlm_controld: $ls: membership [0-9]+ $* ring" \
	    '$0 ~ pat && $1 * 1000 >= t0 { printf "%d\n", $1 * 1000 - t0; exit }' \
	    "$(membership_log)"
}

# all_report WHAT QUORATE NODEID...: every lockspace reports this
# membership; prints when rdlm_controld reported it for the first and the
# last lockspace, counted from T0
all_report()
{
	local what=$1 ls ms first= last=

	shift
	for ls in $LSS; do
		membership_wait "$ls" "$@"
		echo "$ls: membership $MEMBERSHIP"
	done
	for ls in $LSS; do
		ms=$(logged_ms "$ls" "$@")
		[ -n "$ms" ] || continue	# written before T0 (the start)
		[ -z "$first" ] || [ "$ms" -lt "$first" ] && first=$ms
		[ -z "$last" ] || [ "$ms" -gt "$last" ] && last=$ms
	done
	echo "node$ME: $what: '$*' reported after ${first:-?} ms (every lockspace after ${last:-?} ms)"
}

# settled LS: within 120 s, LS runs with members 1 2 3 and every table is
# known; a restart meanwhile starts the wait again on the new lockspace
settled()
{
	local i

	for ((i = 0; i < 120; i++)); do
		membership_wait "$1" 1 1 2 3
		grep -q "^state running" "$CFS/lockspaces/$1/membership" &&
			echo "wait $1 1" >$ST 2>/dev/null && return 0
	done
	fail "$1: not running with every table known after 120 s: $(cat "$CFS/lockspaces/$1/membership")"
}

# slots_agree TAG: every lockspace's slot table ("slots N:S..." once
# its re-homing is done, within 30 s) is the same on every node, gives
# nodes 1 2 3 one slot each, and (but at TAG start) is the table of the
# start: members keep their slots, a fresh lockspace takes the free one
slots_agree()
{
	local ls i line mine

	for ls in $LSS; do
		for ((i = 0; i < 300; i++)); do
			line=$(cat "$CFS/lockspaces/$ls/membership")
			[[ $line == *"rehoming done"* ]] &&
				line=$(grep "^slots " <<<"$line") || line=
			[[ $line =~ ^slots\ 1:[1-3]\ 2:[1-3]\ 3:[1-3]$ ]] && break
			sleep 0.1
		done
		echo "$line" >"$RDLM_OUT/memb.slots.$1.$ls.$ME"
	done
	barrier "memb-slots-$1" 120
	for ls in $LSS; do
		mine=$(cat "$RDLM_OUT/memb.slots.$1.$ls.$ME")
		[[ $mine =~ ^slots\ 1:[1-3]\ 2:[1-3]\ 3:[1-3]$ ]] ||
			fail "$ls: after $1: no slot table for 1 2 3: '$mine'"
		[ "$(echo "$mine" | grep -o ':[1-3]' | sort -u | wc -l)" = 3 ] ||
			fail "$ls: after $1: two nodes share a slot: '$mine'"
		for i in 1 2 3; do
			[ "$(cat "$RDLM_OUT/memb.slots.$1.$ls.$i")" = "$mine" ] ||
				fail "$ls: after $1: node $i has '$(cat "$RDLM_OUT/memb.slots.$1.$ls.$i")', node $ME '$mine'"
		done
		[ "$1" = start ] ||
			[ "$(cat "$RDLM_OUT/memb.slots.start.$ls.$ME")" = "$mine" ] ||
			fail "$ls: after $1: '$mine', at the start '$(cat "$RDLM_OUT/memb.slots.start.$ls.$ME")': a member's slot changed"
	done
	echo "node$ME: after $1: every lockspace has the same slot table on every node: $mine (the last)"
}

# rejoined WHAT TAG: every node reports 1 2 3 (within 120 s) and every
# lockspace settles, then every node locks every name again
rejoined()
{
	local ls

	MEMBERSHIP_WAIT_S=120 all_report "$1" 1 1 2 3
	for ls in $LSS; do
		settled "$ls"
	done
	[ "$2" = heal ] && slots_agree heal
	barrier "memb-back-$2" 300
	for ls in $LSS; do
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/memb.$ls.name")" 60000 \
			>"$TMP/again" || fail "$ls: after $1: $(cat "$TMP/again")"
	done
	barrier "memb-locked-$2" 300
}

# hold_names FILE [ENV...]: node 3 holds every lockspace's name in EX
# (fault_helper hold with the environment ENV, FILE.LS created when held,
# FILE.LS.lost when the hold is lost); their pids in $holders
hold_names()
{
	local file=$1 ls

	shift
	holders=
	for ls in $LSS; do
		rm -f "$file.$ls" "$file.$ls.lost"
		env "$@" "$HELPER" hold "$ls" "$(cat "$RDLM_OUT/memb.$ls.name")" \
			"$file.$ls" &
		holders+=" $!"
		wait_file "$file.$ls"
	done
}

# lost_names WHY: node 3's holds of hold_names "$TMP/held" are reported
# lost and its lockspaces stopped (WHY: after what, for the messages); then
# the holders let go, so that the lockspaces can restart
lost_names()
{
	local ls

	for ls in $LSS; do
		wait_file "$TMP/held.$ls.lost"
		echo "$ls: hold reported lost $(($(now_ms) - T0)) ms after $1"
		grep -q "^state stopped" "$CFS/lockspaces/$ls/membership" ||
			fail "$ls: not stopped after $1: $(cat "$CFS/lockspaces/$ls/membership")"
	done
	kill $holders
	wait $holders
}

# wait_names OUT [ENV...]: node 1 asks for every lockspace's name (120 s at
# most), output in OUT.LS; the pids in ${waiter[LS]}
declare -A waiter
wait_names()
{
	local out=$1 ls

	shift
	for ls in $LSS; do
		env "$@" "$HELPER" wait "$ls" "$(cat "$RDLM_OUT/memb.$ls.name")" \
			120000 >"$out.$ls" &
		waiter[$ls]=$!
	done
}

# granted_names OUT WHAT: node 1's waiters of wait_names OUT were granted
# (WHAT: after what, for the messages)
granted_names()
{
	local ls

	for ls in $LSS; do
		wait ${waiter[$ls]} ||
			fail "$ls: node3's lock not recovered: $(cat "$1.$ls")"
		echo "$ls: node3's lock granted to node1 $(($(now_ms) - T0)) ms after $2 ($(cat "$1.$ls"))"
	done
}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
# Without leases: only recovery hands a lock on, never a lease that ran
# out. Grace-only recovery, opted in: these faults leave node 3 running,
# to see it learn its departure; no fence device switches it off (the
# others, left fencing, wait for node 3's new incarnations). Fencing is
# tested by recover_kill.sh.
for ls in $LSS; do
	ls_set "$ls" fencing=0 lease_us=0
done
export RDLM_FENCE=0
barrier memb-configured 300

T0=$(now_ms)
membership_start
echo "node$ME: corosync quorate with $NODES nodes after $(($(now_ms) - T0)) ms"
if [ "$ME" = 1 ]; then
	for k in token consensus join merge; do
		echo "corosync runtime totem.$k: $(corosync-cmapctl -g runtime.config.totem.$k 2>/dev/null | sed 's/.* = //')"
	done
fi
all_report "corosync start" 1 1 2 3
for ls in $LSS; do
	settled "$ls"
done
slots_agree start
barrier memb-full 120

# A lockspace enabled while rdlm_controld runs grants nothing before its
# first line: node 1 stops its daemon (SIGSTOP), enables memb-first, and a
# lock there times out; once the daemon runs again and writes the line,
# the lock is granted. Without leases: the bakery's default (10 ms) can
# end under TCG before the grant's LVB arrives (-ENOLCK).
if [ "$ME" = 1 ]; then
	pid=$(cat $MEMB_CONTROLD_PID)
	kill -STOP "$pid" || fail "SIGSTOP rdlm_controld"
	"$REPO/userspace/rdlmctl" join memb-first members=1 lease_us=0 ||
		fail "create memb-first"
	"$REPO/userspace/rdlmctl" join memb-static members=1 managed=0 \
		lease_us=0 ||
		fail "create memb-static"
	if "$HELPER" wait memb-first first 3000 >"$TMP/first"; then
		kill -CONT "$pid"
		fail "memb-first: granted before its first membership: $(cat "$TMP/first")"
	fi
	if ! "$HELPER" wait memb-static first 3000 >"$TMP/static"; then
		kill -CONT "$pid"
		fail "memb-static (managed 0): not granted: $(cat "$TMP/static")"
	fi
	kill -CONT "$pid" || fail "SIGCONT rdlm_controld"
	echo "memb-first: no grant before the first line ($(cat "$TMP/first")); memb-static, managed 0: granted"
	"$HELPER" wait memb-first first 60000 >"$TMP/first" ||
		fail "memb-first: not granted after its first membership: $(cat "$TMP/first")"
	echo "memb-first: granted once rdlm_controld wrote '$(head -n 1 "$CFS/lockspaces/memb-first/membership")' ($(cat "$TMP/first"))"
	# the daemon has scanned since: it left memb-static alone
	grep -q "^state static" "$CFS/lockspaces/memb-static/membership" ||
		fail "memb-static (managed 0): managed by rdlm_controld: $(cat "$CFS/lockspaces/memb-static/membership")"
	"$REPO/userspace/rdlmctl" leave memb-first || fail "remove memb-first"
	"$REPO/userspace/rdlmctl" leave memb-static || fail "remove memb-static"
fi
barrier memb-first 120

# Slots are kept, not ranked: memb-slots is enabled on node 3, then node
# 2, then node 1; each joiner takes the lowest free slot and the members
# keep theirs, so the table is 1:3 2:2 3:1 on every node (ranking the
# members by node id would give 1:1 2:2 3:3).
# slots_is LS TABLE: within 30 s, LS's agreed slot table is TABLE
slots_is()
{
	local i line

	for ((i = 0; i < 300; i++)); do
		line=$(cat "$CFS/lockspaces/$1/membership" 2>/dev/null)
		[[ $line == *"rehoming done"* ]] &&
			[ "$(grep "^slots " <<<"$line")" = "slots $2" ] && return 0
		sleep 0.1
	done
	fail "$1: slots '$(grep "^slots " <<<"$line")', expected '$2'"
}
for n in 3 2 1; do
	if [ "$ME" = $n ]; then
		"$REPO/userspace/rdlmctl" join memb-slots members=1,2,3 ||
			fail "create memb-slots"
	fi
	case $n in
	3) [ "$ME" = 3 ] && slots_is memb-slots "3:1" ;;
	2) [ "$ME" = 1 ] || slots_is memb-slots "2:2 3:1" ;;
	1) slots_is memb-slots "1:3 2:2 3:1" ;;
	esac
	barrier "memb-slots-join$n" 120
done
echo "node$ME: memb-slots joined by node 3, 2, 1 in turn: slots 1:3 2:2 3:1"
"$REPO/userspace/rdlmctl" leave memb-slots || fail "remove memb-slots"
barrier memb-slots-left 120

# leave and join again: fab-cpu, a lockspace without a lock manager
ls=fab-cpu
membership_wait $ls 1 1 2 3
epoch=${MEMBERSHIP%% *}
# every node has seen node 3 in before it leaves (a node that looks later
# would wait for ever for a membership that was over)
barrier memb-fab-full 120
if [ "$ME" = 3 ]; then
	echo 0 >$CFS/lockspaces/$ls/enable || fail "$ls: disable"
	for ((i = 0; i < 100; i++)); do
		grep -q "rdlm_controld: $ls: left group" "$(membership_log)" && break
		sleep 0.1
	done
	((i < 100)) || fail "$ls: rdlm_controld did not leave its group in 10 s"
else
	membership_wait $ls 1 1 2
	echo "$ls: node3 left: membership $MEMBERSHIP"
fi
barrier memb-left 120
[ "$ME" = 3 ] && { echo 1 >$CFS/lockspaces/$ls/enable || fail "$ls: enable"; }
# the epoch goes on increasing on node3 too
membership_wait -a "$epoch" $ls 1 1 2 3
echo "$ls: node3 is back: membership $MEMBERSHIP"
barrier memb-rejoined 120

# A home leaves and comes back while a member lags (A->B->A): node 2's
# rdlm_controld is stopped (SIGSTOP) while node 3 disables and enables
# every lk-* lockspace, so node 2's kernel sees neither node 3 leave nor
# come back, keeps its new incarnation out and still has the map of before
# (1 2 3, the map node 3 comes back in). Node 2 holds a name homed on node
# 3 (x), node 1 another (y); node 1 waits for x, node 2 for y. Until node
# 2 has applied the departure and the return, the others' re-homing must
# not end, so nobody is granted: 10 s after node 1 saw node 3 come back,
# both waits still wait. Then node 2's daemon runs again, the holds are
# reclaimed at node 3's new lockspace (none is lost), the holders let go
# and the waiters are granted. The critical sections never overlap.
for ls in $LSS; do
	st "wait $ls 90"
done
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		name_homed_on "$ls" 3 lagx >"$RDLM_OUT/lag.$ls.x" &&
			name_homed_on "$ls" 3 lagy >"$RDLM_OUT/lag.$ls.y" ||
			fail "$ls: no name homed on node3"
	done
fi
barrier memb-lag-names 300
declare -A lag_epoch lag_wait
lag_holders=
if [ "$ME" != 3 ]; then
	[ "$ME" = 2 ] && mine=x theirs=y || mine=y theirs=x
	for ls in $LSS; do
		membership_wait $ls 1 1 2 3
		lag_epoch[$ls]=${MEMBERSHIP%% *}
		"$HELPER" hold "$ls" "$(cat "$RDLM_OUT/lag.$ls.$mine")" \
			"$TMP/lag.$ls" &
		lag_holders+=" $!"
		wait_file "$TMP/lag.$ls"
	done
fi
barrier memb-lag-held 300
if [ "$ME" != 3 ]; then
	for ls in $LSS; do
		"$HELPER" wait "$ls" "$(cat "$RDLM_OUT/lag.$ls.$theirs")" \
			120000 >"$TMP/lagw.$ls" &
		lag_wait[$ls]=$!
	done
	sleep 3		# queued behind the holders
fi
[ "$ME" = 2 ] && { kill -STOP "$(cat $MEMB_CONTROLD_PID)" || fail "SIGSTOP rdlm_controld"; }
barrier memb-lag-stopped 120
if [ "$ME" = 3 ]; then
	for ls in $LSS; do
		n=$(grep -c "rdlm_controld: $ls: left group" "$(membership_log)")
		echo 0 >$CFS/lockspaces/$ls/enable || fail "$ls: disable"
		for ((i = 0; i < 100; i++)); do
			(($(grep -c "rdlm_controld: $ls: left group" "$(membership_log)") > n)) &&
				break
			sleep 0.1
		done
		((i < 100)) || fail "$ls: rdlm_controld did not leave its group in 10 s"
		echo 1 >$CFS/lockspaces/$ls/enable || fail "$ls: enable"
	done
fi
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		membership_wait -a "${lag_epoch[$ls]}" $ls 1 1 2 3
		echo "$ls: node3 left and came back while node2 lagged: membership $MEMBERSHIP"
	done
	sleep 10
	for ls in $LSS; do
		kill -0 ${lag_wait[$ls]} 2>/dev/null ||
			fail "$ls: granted while node2, which had not seen node3 leave, held it: $(cat "$TMP/lagw.$ls")"
	done
	echo "node1: nothing granted 10 s after node3's return while node2 lagged"
fi
barrier memb-lag-checked 120
if [ "$ME" = 2 ]; then
	kill -CONT "$(cat $MEMB_CONTROLD_PID)" || fail "SIGCONT rdlm_controld"
	for ls in $LSS; do
		membership_wait -a "${lag_epoch[$ls]}" $ls 1 1 2 3
	done
	echo "node2: its rdlm_controld ran again: membership $MEMBERSHIP"
fi
barrier memb-lag-resumed 120
if [ "$ME" != 3 ]; then
	for ls in $LSS; do
		[ ! -e "$TMP/lag.$ls.lost" ] ||
			fail "$ls: node$ME's hold of a name homed on node3 was lost"
	done
	kill $lag_holders
	wait $lag_holders
	for ls in $LSS; do
		wait ${lag_wait[$ls]} ||
			fail "$ls: not granted once node2 caught up: $(cat "$TMP/lagw.$ls")"
		echo "$ls: granted once the holder let go ($(cat "$TMP/lagw.$ls"))"
	done
fi
barrier memb-lag-done 300

# a partition: node 3 alone holds a name node 1 waits for
for ls in $LSS; do
	st "wait $ls 90"
done
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		name_homed_on "$ls" 1 part >"$RDLM_OUT/memb.$ls.name" ||
			fail "$ls: no name homed on node1"
	done
fi
barrier memb-names 300
[ "$ME" = 3 ] && hold_names "$TMP/held"
barrier memb-held 300
if [ "$ME" = 1 ]; then
	wait_names "$TMP/wait"
	sleep 5		# queued behind node 3
	hub_cut 1 3
	hub_cut 2 3
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.cut"
else
	wait_notice cut
fi
if [ "$ME" = 3 ]; then
	all_report "cut 3|12" 0 3
	lost_names "the cut (quorum lost)"
else
	all_report "cut 3|12" 1 1 2
fi
[ "$ME" = 1 ] && granted_names "$TMP/wait" "the cut"
barrier memb-after-cut 300

if [ "$ME" = 1 ]; then
	hub_heal
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.healed"
else
	wait_notice healed
fi
rejoined "heal" heal

# rdlm_controld killed on node 3 while it holds the names node 1 waits for,
# with node 3 cut off, so that nothing but its own kernel can tell it:
# its managed lockspaces stop at once (the file the daemon held on
# /dev/rdlm closed), so their holds are lost before nodes 1 and 2, which
# see it leave, recover from it after the grace; healed and started again,
# rdlm_controld restarts them and they rejoin.
[ "$ME" = 3 ] && hold_names "$TMP/held"
barrier memb-held2 300
[ "$ME" = 1 ] && wait_names "$TMP/wait2"
barrier memb-waiting 300
if [ "$ME" = 1 ]; then
	hub_cut 1 3
	hub_cut 2 3
	: >"$RDLM_OUT/memb.cut2"
fi
if [ "$ME" = 3 ]; then
	wait_notice cut2
	pid=$(cat $MEMB_CONTROLD_PID)
	kill -KILL "$pid"
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.controld-killed"
	wait "$pid" 2>/dev/null
	rm -f $MEMB_CONTROLD_PID
	lost_names "rdlm_controld's SIGKILL"
else
	wait_notice controld-killed
	all_report "node3 cut off, its rdlm_controld killed" 1 1 2
fi
if [ "$ME" = 1 ]; then
	granted_names "$TMP/wait2" "node3's rdlm_controld was killed"
	hub_heal
fi
barrier memb-regranted 300
if [ "$ME" = 3 ]; then
	controld_start
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.controld-back"
else
	wait_notice controld-back
fi
# it restarts the stopped lockspaces (new incarnations) and joins again
rejoined "node3's rdlm_controld started again" controld

# node 3's VM paused (QEMU stop) while it holds the names node 1 waits for,
# past corosync's token and the grace: nodes 1 and 2 see it depart and
# node 1 is granted the names after the grace, as grace-only recovery
# does. Resumed (cont), node 3 was fenced as the incarnation that departed:
# it hears so at its first contact with a peer (or from its own quorum
# loss) and reports every hold lost. Until then its holders still believe
# they hold: that window is printed, it is the risk grace mode takes
# (membership.rst); the critical-section check stays off for these names.
[ "$ME" = 3 ] && hold_names "$RDLM_OUT/memb.paused" -u RDLM_CS_DIR
barrier memb-held3 300
[ "$ME" = 1 ] && wait_names "$TMP/wait3" -u RDLM_CS_DIR
barrier memb-waiting3 300
NODES=2		# node 3 takes no barrier while it is paused
if [ "$ME" = 1 ]; then
	: >"$TMP/paused"
	pause_node 3 stop
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.paused"
fi
if [ "$ME" != 3 ]; then
	[ "$ME" = 1 ] || wait_notice paused
	all_report "node3 paused" 1 1 2
fi
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		wait ${waiter[$ls]} ||
			fail "$ls: not granted while node3 was paused: $(cat "$TMP/wait3.$ls")"
		echo "$ls: granted to node1 $(($(now_ms) - T0)) ms after node3 was paused ($(cat "$TMP/wait3.$ls"))"
		[ -e "$RDLM_OUT/memb.paused.$ls.lost" ] &&
			fail "$ls: node3 reported its hold lost while paused"
	done
	pause_node 3 cont
	T0=$(now_ms)
	rm -f "$TMP/paused"
	for ls in $LSS; do
		wait_file "$RDLM_OUT/memb.paused.$ls.lost" 60 \
			"$ls: node3's hold, lost once it heard it was fenced,"
		echo "$ls: resumed node3 reported its hold lost $(($(now_ms) - T0)) ms after it ran again (the grace mode's window)"
	done
	: >"$RDLM_OUT/memb.resumed"
fi
if [ "$ME" = 3 ]; then
	wait_notice resumed
	kill $holders
	wait $holders
fi
NODES=3
barrier memb-resumed 300
# fenced as the incarnation that departed, node 3 restarted its lockspaces
# (more than once when its corosync reports the lost quorum late)
rejoined "node3 resumed" pause

if [ "$ME" = 1 ]; then
	expect_fail "another rdlm_controld" "$REPO/userspace/rdlm_controld" -f
	stop_pidfile $MEMB_CONTROLD_PID
	"$REPO/userspace/rdlm_controld" || fail "rdlm_controld without -f"
	wait_file $MEMB_CONTROLD_PID
	pid=$(cat $MEMB_CONTROLD_PID)
	sleep 2		# in its groups
	[ "$(ps -o ppid= -p "$pid")" -eq 1 ] || fail "rdlm_controld did not daemonize"
else
	# corosync goes away under rdlm_controld
	pid=$(cat $MEMB_CONTROLD_PID)
	stop_pidfile $MEMB_COROSYNC_PID
	# gone, or a zombie (bash reaps its children when they exit)
	for ((i = 0; i < 300; i++)); do
		[ -d "/proc/$pid" ] || break
		grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
		sleep 0.1
	done
	((i < 300)) || fail "rdlm_controld still runs 30 s after corosync stopped"
	wait "$pid"
	rc=$?
	[ "$rc" = 1 ] || fail "rdlm_controld exited $rc without corosync, expected 1"
	grep -q "lost the connection to corosync" "$(membership_log)" ||
		fail "rdlm_controld did not say it lost corosync"
	echo "node2: rdlm_controld exited 1 when corosync stopped"
fi

trap fabric_cleanup EXIT
membership_stop
pgrep -x corosync >/dev/null && fail "corosync still runs"
pgrep -x rdlm_controld >/dev/null && fail "rdlm_controld still runs"
"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "membership: reported on start, leave, join, partition and heal; locks recovered"
