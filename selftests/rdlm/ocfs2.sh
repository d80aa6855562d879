#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# OCFS2 over rdlm (ocfs2_stack_rdlm.ko, Documentation/ocfs2.rst), on the
# test cluster's shared disk (/dev/vda, serial rdlm-shared), 2 or 3 nodes:
#  - node 1 formats the disk with mkfs.ocfs2 (cluster stack "pcmk", the
#    label ocfs2-tools accepts; stackglue hands every label but "o2cb" to
#    the plugin registered as "user", ours);
#  - every node creates the lockspace named after the file system's UUID
#    (engine OCFS2_ENGINE, default central; 64-byte LVBs, no lease) and
#    mounts the file system;
#  - node 1 alone creates, appends to, renames and deletes files in a
#    shared directory and in its own, and unpacks a piece of
#    linux-source-6.1 (Documentation/filesystems) into the file system;
#    the other nodes read all of it back (content, size, checksums);
#  - every node at once runs the same workload in a second shared
#    directory and its own; every node reads back what the others wrote,
#    the shared directory lists alike on every node;
#  - fcntl() locks across the nodes (OCFS2_PLOCK=0 skips them: the other
#    engines' runs, since they do not go through the engine);
#  - every node unmounts; node 1 runs fsck.ocfs2 -fn: clean.
# The wall time of the concurrent workload is printed.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
. ./ocfs2_lib.sh
ocfs2_require

# OCFS2_NODES take part (default: every node of the cluster); the others
# leave
OCFS2_NODES=${OCFS2_NODES:-$NODES}
if [ "$OCFS2_NODES" -lt "$NODES" ]; then
	[ "$OCFS2_NODES" -ge 2 ] || fail "OCFS2_NODES=$OCFS2_NODES: 2 at least"
	if [ "$ME" -gt "$OCFS2_NODES" ]; then
		echo "node$ME: not one of the $OCFS2_NODES OCFS2 nodes"
		exit 0
	fi
	NODES=$OCFS2_NODES
fi
CONF=$(mktemp /tmp/ocfs2-rdlm.XXXXXX.conf)
grep "^node " "$REPO/tools/cluster/cluster.conf" | head -n "$NODES" >"$CONF"
fabric_test "${O2_OUT##*/}" "$CONF"

trap ocfs2_cleanup EXIT

ocfs2_stack_up "$CONF"
barrier ocfs2-ready 300

ocfs2_mkfs
ocfs2_join
barrier ocfs2-ls 120

ocfs2_mount
barrier ocfs2-mounted 300
# 0. read only: every node lists the new file system alike
ls -la --time-style=+ $MNT >/tmp/ocfs2.ls0 || fail "ls $MNT"
sed 's/  */ /g' /tmp/ocfs2.ls0 >"$O2_OUT.ls0.$ME"
df $MNT >/dev/null || fail "df $MNT"
barrier ocfs2-listed 300
diff -u "$O2_OUT.ls0.1" "$O2_OUT.ls0.$ME" ||
	fail "ls of the new file system: node1 and node$ME differ"
echo "node$ME: the new file system lists alike on node1 and here"

unpack()
{
	local tmp=/tmp/ocfs2-src

	rm -rf $tmp
	mkdir -p $tmp
	# the part comes early in the archive: stop decompressing after it
	# (tar then says the archive ended early; what it extracted is whole)
	xz -dc "$SRC" | head -c 40000000 |
		tar -x -C $tmp "$SRC_PART" 2>$tmp.err
	[ -d "$tmp/$SRC_PART" ] || { cat $tmp.err; return 1; }
	(cd $tmp && find "$SRC_PART" -type f -print0 | sort -z |
		xargs -0 sha256sum) >"$O2_OUT.sums" || return 1
	tar -C $tmp -cf - "$SRC_PART" | tar -x -C $MNT || return 1
	echo "node1: unpacked $(wc -l <"$O2_OUT.sums") files of $SRC_PART"
}

# 1. node 1 alone writes (the others have the file system mounted)
T0=$(date +%s%N)
if [ "$ME" = 1 ]; then
	(
		workload $MNT/shared $MNT/own1 || fail "node1 alone: workload"
		# step 3's shared directory: three mkdir -p of one name at
		# once race, and OCFS2 logs the loser's -EEXIST as an ERROR
		mkdir $MNT/conc || fail "node1 alone: mkdir $MNT/conc"
		unpack || fail "node1 alone: unpack"
		check 1 $MNT/shared $MNT/own1
	) &
	bounded $! 600 "node1 alone"
	echo "node1: alone: workload, unpack and read-back done in $(ms "$T0") ms"
fi
barrier ocfs2-single 900

# 2. the others read what node 1 wrote
T0=$(date +%s%N)
if [ "$ME" != 1 ]; then
	check 1 $MNT/shared $MNT/own1
	(cd $MNT && sha256sum --quiet -c "$O2_OUT.sums") ||
		fail "node1's source tree differs here"
	echo "node$ME: node1's files and $(wc -l <"$O2_OUT.sums") source files read back alike in $(ms "$T0") ms"
fi
barrier ocfs2-read 900

# 3. every node at once, in a shared directory and its own; a hang fails
# the test (with the lock dumps) instead of waiting for the run's limit
T0=$(date +%s%N)
workload $MNT/conc $MNT/cown$ME &
bounded $! 300 "concurrent workload"
echo "node$ME: concurrent workload done in $(ms "$T0") ms"
barrier ocfs2-workload 600

# 4. what every node wrote, read back here
T1=$(date +%s%N)
for ((n = 1; n <= NODES; n++)); do
	check $n $MNT/conc $MNT/cown$n
done
ls -la --time-style=+ $MNT/conc >/tmp/ocfs2.ls || fail "ls $MNT/conc"
sed 's/  */ /g' /tmp/ocfs2.ls >"$O2_OUT.ls.$ME"
barrier ocfs2-checked 600
for ((n = 2; n <= NODES; n++)); do
	diff -u "$O2_OUT.ls.1" "$O2_OUT.ls.$n" ||
		fail "ls of the shared directory: node1 and node$n differ"
done
echo "node$ME: cross-node checks done in $(ms "$T1") ms"
echo "node$ME: $(cat /sys/kernel/debug/rdlm/lockspaces 2>/dev/null | grep "$LS" | head -n 1)"

# 5. fcntl() locks across the nodes: OCFS2's ->lock() asks the plugin's
# plock, that is rdlm_posix_lock() (Documentation/range-locks.rst). They go
# to their file's home whatever the engine (kernel/plock.c): the other
# engines' runs skip them (OCFS2_PLOCK=0).
plock_checks()
{
	PL=$MNT/plock
	PH=./plock_helper
	F=$O2_OUT-plock
	rm -f $F.*
	barrier plock-start 120
	if [ "$ME" = 1 ]; then
		dd if=/dev/zero of=$PL bs=4096 count=16 status=none || fail "dd $PL"
		# holds w 0-99 and r 200-299; later unlocks 40-59 and reads 0-9
		$PH $PL set:w:0:100 set:r:200:100 ready:$F.held wait:$F.probed \
			set:u:40:20 set:r:0:10 ready:$F.split wait:$F.probed2 \
			hold >$F.out1 &
		H1=$!
		wait_file $F.held 60 "node1's locks"
	fi
	barrier plock-held 120
	if [ "$ME" = 2 ]; then
		P1=$(helper_pid $F.out1)
		$PH $PL get:w:50:10 set:w:50:10 set:r:50:10 set:r:250:10 \
			set:w:250:10 set:w:100:100 get:w:300:0 >$F.out2 ||
			fail "plock_helper"
		want_lines $F.out2 "get:w:50:10: w 0 100 pid -$P1" "set:w:50:10: EAGAIN" \
			"set:r:50:10: EAGAIN" "set:r:250:10: ok" \
			"set:w:250:10: EAGAIN" "set:w:100:100: ok" \
			"get:w:300:0: unlocked"
		echo "node2: node1's write lock refused here and reported with its pid; shared read locks shared; an upgrade over node1's read lock refused"
		: >$F.probed
		wait_file $F.split 60 "node1's unlock of 40-59"
		# node1 now holds r 0-9, w 10-39, w 60-99, r 200-299
		$PH $PL get:w:45:10 set:w:45:10 set:w:30:5 get:w:0:5 get:r:0:5 \
			get:w:12:1 get:w:60:1 >$F.out2b || fail "plock_helper"
		want_lines $F.out2b "get:w:45:10: unlocked" "set:w:45:10: ok" \
			"set:w:30:5: EAGAIN" "get:w:0:5: r 0 10 pid -$P1" \
			"get:r:0:5: unlocked" "get:w:12:1: w 10 30 pid -$P1" \
			"get:w:60:1: w 60 40 pid -$P1"
		echo "node2: node1's unlock of a middle piece let it in there only; its downgrade shows as a read lock"
		# waits for node1's read lock on 0-9; node1's holder is killed
		$PH $PL setw:w:0:1 >$F.out2c &
		W2=$!
	fi
	# once the file's home (whichever node it is) has node 2's F_SETLKW
	# queued (rdlm_plock_dump(): "plock_wait FILE w 0-0 node 2 pid P")
	[ "$ME" = 2 ] || wait_file $F.probed 120 "node2's probes"
	for ((i = 0; i < 600; i++)); do
		[ -e $F.probed2 ] && break
		grep -q "^plock_wait [0-9]* w 0-0 node 2 pid " "$DBG/ls/$LS" &&
			{ echo "$ME" >$F.probed2; break; }
		sleep 0.1
	done
	[ -e $F.probed2 ] || fail "node2's F_SETLKW not queued at its home in 60 s"
	if [ "$ME" = 2 ]; then
		bounded $W2 120 "F_SETLKW after the holder's death"
		want_lines $F.out2c "setw:w:0:1: ok"
		echo "node2: a F_SETLKW queued at node$(cat $F.probed2) behind a killed process's lock was granted"
	fi
	if [ "$ME" = 1 ]; then
		kill -9 $H1
		wait $H1 2>/dev/null
	fi
	barrier plock-split 300

	# deadlock: node1 holds 0, node2 holds 1, each then waits for the other's:
	# exactly one of them is refused (-EDEADLK), the other is granted once it
	# has gone
	if [ "$ME" = 1 ] || [ "$ME" = 2 ]; then
		mine=$((ME - 1)) theirs=$((2 - ME))
		$PH $PL set:w:$mine:1 ready:$F.dl$ME wait:$F.dl$((3 - ME)) \
			setw:w:$theirs:1 >$F.dlout$ME &
		bounded $! 120 "the deadlock's F_SETLKW"
	fi
	barrier plock-deadlock 300
	if [ "$ME" = 1 ]; then
		cat $F.dlout1 $F.dlout2
		n=$(cat $F.dlout1 $F.dlout2 | grep -c ": EDEADLK$")
		[ "$n" = 1 ] || fail "fcntl locks: $n of 2 F_SETLKW refused as a deadlock"
		[ "$(cat $F.dlout1 $F.dlout2 | grep -c "^setw:.*: ok$")" = 1 ] ||
			fail "fcntl locks: the other F_SETLKW not granted"
		echo "node1: a deadlock of two nodes' F_SETLKW refused one of them"
	fi

	# an interrupted F_SETLKW leaves what its process held
	if [ "$ME" = 1 ]; then
		$PH $PL set:w:0:10 ready:$F.i1 hold >$F.iout1 &
		H1=$!
		wait_file $F.i1 60 "node1's lock"
	fi
	barrier plock-int 120
	if [ "$ME" = 2 ]; then
		$PH $PL set:r:500:10 alarm:2 setw:w:5:1 ready:$F.i2 hold >$F.iout2 &
		H2=$!
		wait_file $F.i2 60 "node2's interrupted F_SETLKW"
		want_lines $F.iout2 "set:r:500:10: ok" "setw:w:5:1: EINTR"
		P2=$(helper_pid $F.iout2)
		$PH $PL get:w:500:1 >$F.iout2b || fail "plock_helper"
		# the same node, another process: the pid is positive
		want_lines $F.iout2b "get:w:500:1: r 500 10 pid $P2"
		: >$F.i3
		kill $H2
		wait $H2
		echo "node2: an interrupted F_SETLKW (EINTR) kept the process's read lock"
	fi
	if [ "$ME" = 1 ]; then
		wait_file $F.i3 120 "node2's check"
		# node2's cancelled waiter is not granted when node1's lock goes
		kill $H1
		wait $H1
		$PH $PL get:w:500:1 set:w:5:1 >$F.iout1b || fail "plock_helper"
		want_lines $F.iout1b "get:w:500:1: unlocked" "set:w:5:1: ok"
		echo "node1: the interrupted F_SETLKW left nothing at the home"
	fi
	barrier plock-intdone 300

	# every node, two processes each, random runs of 16 cells of the file: no
	# two conflicting holders inside at once, by the tokens in the cells
	# (O_DIRECT: not through the page cache, whose coherence rests on the
	# cluster locks) and by the nodes' shared memory (cs_check.h); then
	# the control, one process per node without locks: both checks must
	# find violations, and with one process per node they are between
	# nodes
	secs=${PLOCK_SECS:-8}
	pids=
	for i in 1 2; do
		RDLM_CS_DIR=$RDLM_OUT $PH stress $PL $secs 16 4 >$F.st$ME.$i 2>&1 &
		pids+=" $!"
	done
	for p in $pids; do
		bounded $p $((secs + 120)) \
			"fcntl locks: stress found violations or errors ($F.st$ME.*)"
	done
	cat $F.st$ME.*
	echo "node$ME: fcntl lock stress: $(awk '{ n += $2 } END { print n }' $F.st$ME.*) locks, no violation"
	barrier plock-stress 300
	# it fails when it finds violations: that is counted below
	{ RDLM_CS_DIR=$RDLM_OUT $PH stress $PL $secs 16 4 nolock >$F.nl$ME 2>&1; true; } &
	bounded $! $((secs + 120)) "the control without locks"
	barrier plock-control 300
	if [ "$ME" = 1 ]; then
		read -r e v c < <(cat $F.nl[0-9]* | awk '$1 == "ops" {
			e += $8; v += $10; c += $12 } END { print e + 0, v + 0, c + 0 }')
		[ "$e" = 0 ] && [ "$v" -gt 0 ] && [ "$c" -gt 0 ] ||
			fail "fcntl locks: the control across nodes found $v token and $c shared-memory violations, $e errors: $(cat $F.nl[0-9]*)"
		echo "node1: the control without locks, one process per node, found $v token and $c shared-memory violations"
	fi
}
[ "${OCFS2_PLOCK:-1}" = 0 ] || plock_checks

ocfs2_finish "$CONF"
echo "ocfs2: mounted on $NODES nodes over rdlm ($ENGINE), workload checked, fsck clean"
