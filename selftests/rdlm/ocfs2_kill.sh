#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# OCFS2 over rdlm survives a node's death (Documentation/ocfs2.rst), on 3
# nodes with corosync and rdlm_controld deciding the membership:
#  - every node mounts the shared disk; node 3 runs the workload in the
#    shared directory and its own and syncs, then goes on writing in new
#    directories; node 1 kills node 3's VM in the middle of that;
#  - the survivors see node 3 leave the lockspace's membership, one of
#    them replays its journal (OCFS2's recovery handler, called through
#    the plugin) and both go on: they read back what node 3 synced, run
#    the workload at once in a shared directory and their own, read back
#    each other's files and list the shared directories alike;
#  - both unmount; node 1 runs fsck.ocfs2 -fn: clean.
# And fcntl() locks: before the kill node 3 holds a write lock on each of 8
# files and node 2 waits for each (F_SETLKW); after it, node 2 is granted
# those whose home (rdlm_posix_lock(): a combiner per file) is a survivor,
# and told ENOLCK for those node 3 kept.
# Times from the kill to the membership change, to the journal replayed
# and to the survivors' workload done are printed, not asserted (the
# bounds only catch a hang).
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
. ./ocfs2_lib.sh
ocfs2_require
VICTIM=3
NODES=3
CONF=$(mktemp /tmp/ocfs2-rdlm.XXXXXX.conf)
grep "^node " "$REPO/tools/cluster/cluster.conf" | head -n "$NODES" >"$CONF"
fabric_test ocfs2-kill "$CONF"

kill_cleanup()
{
	local rc=$?

	kill $(jobs -p) 2>/dev/null
	(exit $rc)
	ocfs2_cleanup
}
trap kill_cleanup EXIT

ocfs2_stack_up "$CONF"
membership_start
barrier ocfs2-ready 300
ocfs2_mkfs
ocfs2_join
MEMBERSHIP_WAIT_S=120 membership_wait "$LS" 1 1 2 3
barrier ocfs2-ls 120
ocfs2_mount
barrier ocfs2-mounted 300

# 1. node 3 holds fcntl locks that node 2 waits for
PH=./plock_helper
PLK=8
if [ "$ME" = $VICTIM ]; then
	for ((i = 1; i <= PLK; i++)); do
		$PH $MNT/plk.$i set:w:0:100 ready:$RDLM_OUT/plk.held.$i hold \
			>/dev/null &
	done
	for ((i = 0; i < 600; i++)); do
		[ "$(ls $RDLM_OUT | grep -c "^plk\.held\.")" = $PLK ] && break
		sleep 0.1
	done
	[ "$i" -lt 600 ] || fail "node$ME: fcntl locks not taken in 60 s"
fi
barrier plock-held 120
if [ "$ME" = 2 ]; then
	PLW=
	for ((i = 1; i <= PLK; i++)); do
		stat -c %i $MNT/plk.$i >$RDLM_OUT/plk.ino.$i || fail "stat"
		$PH $MNT/plk.$i setw:w:0:1 >$RDLM_OUT/plk.out.$i &
		PLW+=" $!"
	done
fi
barrier plock-waiting 120
# which files each survivor is the home of: it keeps node 3's locks on them
[ "$ME" != $VICTIM ] && grep "^plock " "$DBG/ls/$LS" >$RDLM_OUT/plk.home.$ME
barrier plock-homes 120

# 2. node 3 writes and syncs, then writes on until it is killed
if [ "$ME" = $VICTIM ]; then
	workload $MNT/shared $MNT/own$ME &
	bounded $! 600 "node$ME: workload"
	sync
	touch "$RDLM_OUT/ok.synced"
	for ((round = 1; ; round++)); do
		workload $MNT/shared/r$round $MNT/own$ME/r$round || break
	done
	sleep 600	# killed meanwhile
	fail "node$ME: still alive"
fi
if [ "$ME" = 1 ]; then
	for ((i = 0; i < 6000; i++)); do
		[ -e "$RDLM_OUT/ok.synced" ] && break
		sleep 0.1
	done
	[ -e "$RDLM_OUT/ok.synced" ] || fail "node$VICTIM did not sync in 600 s"
	sleep 5		# in the middle of its next round
	kill_node $VICTIM
	# whole or not at all: the other survivor reads it as soon as it exists
	date +%s%N >"$RDLM_OUT/ok.killed.tmp" &&
		mv "$RDLM_OUT/ok.killed.tmp" "$RDLM_OUT/ok.killed"
	echo "node$VICTIM killed while writing"
fi
for ((i = 0; i < 6000; i++)); do
	[ -e "$RDLM_OUT/ok.killed" ] && break
	sleep 0.1
done
[ -e "$RDLM_OUT/ok.killed" ] || fail "node$VICTIM not killed in 600 s"
T0=$(cat "$RDLM_OUT/ok.killed")
NODES=2		# the barriers from here on

# 3. the survivors: the membership, the replay, the files node 3 synced
MEMBERSHIP_WAIT_S=120 membership_wait "$LS" 1 1 2
echo "node$ME: node$VICTIM left the membership $(ms "$T0") ms after the kill"
for ((i = 0; i < 1800; i++)); do
	if dmesg | grep -q "ocfs2: End replay journal (node $VICTIM,"; then
		touch "$RDLM_OUT/ok.replayed.$ME"
		echo "node$ME: replayed node$VICTIM's journal $(ms "$T0") ms after the kill"
	fi
	ls "$RDLM_OUT" | grep -q "^ok\.replayed\." && break
	sleep 0.1
done
ls "$RDLM_OUT" | grep -q "^ok\.replayed\." ||
	fail "node$VICTIM's journal not replayed in 180 s"
T1=$(date +%s%N)
check $VICTIM $MNT/shared $MNT/own$VICTIM &
bounded $! 300 "node$VICTIM's synced files"
echo "node$ME: node$VICTIM's synced files read back $(ms "$T0") ms after the kill"
barrier ocfs2-recovered 600

# 4. node 2's F_SETLKW: granted where a survivor kept node 3's lock, ENOLCK
# where node 3 was the home
if [ "$ME" = 2 ]; then
	for p in $PLW; do
		bounded $p 120 "F_SETLKW for node$VICTIM's fcntl lock"
	done
	granted=0
	for ((i = 1; i <= PLK; i++)); do
		ino=$(cat $RDLM_OUT/plk.ino.$i)
		if cat $RDLM_OUT/plk.home.[12] | grep -q "^plock $ino w 0-99 node $VICTIM "; then
			grep -qx "setw:w:0:1: ok" $RDLM_OUT/plk.out.$i ||
				fail "file $i (home a survivor): $(tail -n 1 $RDLM_OUT/plk.out.$i)"
			granted=$((granted + 1))
		else
			grep -qx "setw:w:0:1: ENOLCK" $RDLM_OUT/plk.out.$i ||
				fail "file $i (home node$VICTIM): $(tail -n 1 $RDLM_OUT/plk.out.$i)"
		fi
	done
	[ $granted -gt 0 ] || fail "no file of $PLK homed on a survivor"
	echo "node$ME: node$VICTIM's fcntl locks: $granted of $PLK granted to the waiters here (homes that survived), the rest ENOLCK (kept by node$VICTIM)"
	# step 5's shared directory: two mkdir -p of one name at once
	# race, and OCFS2 logs the loser's -EEXIST as an ERROR
	mkdir $MNT/after || fail "mkdir $MNT/after"
fi
barrier plock-recovered 300

# 5. both survivors at once, then each reads the other's files
workload $MNT/after $MNT/aown$ME &
bounded $! 300 "survivors' workload"
echo "node$ME: workload after the kill done in $(ms "$T1") ms"
barrier ocfs2-workload 600
for n in 1 2; do
	check $n $MNT/after $MNT/aown$n
done
for d in after shared; do
	ls -la --time-style=+ $MNT/$d >/tmp/ocfs2.ls || fail "ls $MNT/$d"
	sed 's/  */ /g' /tmp/ocfs2.ls >"$RDLM_OUT/ocfs2.ls.$d.$ME"
done
barrier ocfs2-checked 600
for d in after shared; do
	diff -u "$RDLM_OUT/ocfs2.ls.$d.1" "$RDLM_OUT/ocfs2.ls.$d.2" ||
		fail "ls of $d: node1 and node2 differ"
done

ocfs2_finish "$CONF"
echo "ocfs2-kill: node$VICTIM killed while writing, its journal replayed, the survivors went on, fsck clean"
