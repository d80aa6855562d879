#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# POSIX locks across nodes through the kernel API, without a cluster file
# system: the torture module's debugfs file plock0 takes fcntl() locks with
# rdlm_posix_lock(), as OCFS2's ->lock() does through the stack plugin
# (Documentation/range-locks.rst, "POSIX locks across nodes"). 3 nodes, a
# lockspace of lock words (PLOCK_LS, default lk-bakery: POSIX locks do not
# depend on the engine):
#  - node 1 holds a write lock on 0-99: node 2's F_GETLK reports it with
#    node 1's pid negated, node 3's F_SETLK is refused;
#  - a link flap: node 2 waits for it (F_SETLKW) and takes its link down
#    for PLOCK_FLAP seconds (default 10: long enough for the fabric to see
#    its peers down); meanwhile node 1 unlocks. Requests and answers lost
#    with the link go again once it is back: node 2 is granted, and node 3
#    then sees node 2's lock and nobody's else; the unanswered requests
#    listed in debugfs (plock_ask) are gone everywhere.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test plock
TORTURE_KO=${TORTURE_KO:-$PWD/rdlm_torture.ko}
PH=$PWD/plock_helper
LS=${PLOCK_LS:-lk-bakery}
FLAP=${PLOCK_FLAP:-10}
PF=/sys/kernel/debug/rdlm_torture/plock0
F=$RDLM_OUT/plk
FABRIC_LS=$LS

[ -f "$TORTURE_KO" ] || fail "no $TORTURE_KO"
trap 'rc=$?; kill $(jobs -p) 2>/dev/null; wait; rmmod rdlm_torture 2>/dev/null; (exit $rc); fabric_cleanup' EXIT

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
st "wait $LS 90"
insmod "$TORTURE_KO" lockspace=$LS nthreads=0 plock_files=1 ||
	fail "insmod rdlm_torture: $(dmesg | grep rdlm_torture | tail -n 2)"
rm -f $F.*
barrier plock-ready 300

# 1. across nodes, as on OCFS2
if [ "$ME" = 1 ]; then
	$PH $PF set:w:0:100 ready:$F.held wait:$F.flapping set:u:0:100 \
		ready:$F.unlocked hold >$F.out1 &
	H1=$!
	wait_file $F.held 60 "node1's lock"
fi
barrier plock-held 120
if [ "$ME" = 3 ]; then
	$PH $PF get:w:50:1 set:w:50:1 >$F.out3 || fail "plock_helper"
	want_lines $F.out3 "get:w:50:1: w 0 100 pid -$(helper_pid $F.out1)" \
		"set:w:50:1: EAGAIN"
	echo "node3: node1's lock reported with its pid, refused here"
fi
barrier plock-probed 120

# queued_here: this node is the file's home and has node 2's F_SETLKW
# queued there (rdlm_plock_dump(): "plock_wait FILE TYPE START-END node N
# pid P"); one read of the dump, without a fork
queued_here()
{
	local dump

	read -r -d '' dump <$DBG/ls/$LS
	[[ $'\n'$dump =~ $'\n'"plock_wait "[0-9]+" w 0-"[0-9]+" node 2 pid " ]]
}

# 2. a link flap while node 2 waits and node 1 unlocks
if [ "$ME" = 2 ]; then
	$PH $PF setw:w:0:1 ready:$F.granted hold >$F.out2 &
	H2=$!
fi
# it reaches the home and waits there: the home (whichever node it is)
# says so once its table has the request queued
for ((i = 0; i < 600; i++)); do
	[ -e $F.queued ] && break
	queued_here && { echo "$ME" >$F.queued; break; }
	sleep 0.1
done
[ -e $F.queued ] || fail "node2's F_SETLKW not queued at its home in 60 s"
echo "node$ME: node2's F_SETLKW queued at node$(cat $F.queued)"
if [ "$ME" = 2 ]; then
	# node 1 unlocks once the link is gone, not before: the unlock or
	# the grant then meets no link, and only asking again brings it
	link_carrier down
	: >$F.flapping
	sleep "$FLAP"
	link_carrier up
	: >$F.up
	wait_file $F.granted 120 "node2's F_SETLKW after the flap"
	want_lines $F.out2 "setw:w:0:1: ok"
	# the flap was a link failure, not a pause the transport hid
	dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -q "lockspace $LS: node [0-9]* down" ||
		fail "the flap did not take a peer of $LS down"
	echo "node2: granted after a ${FLAP} s link flap (peers of $LS seen down and up)"
fi
if [ "$ME" = 1 ]; then
	wait_file $F.unlocked 120 "node1's unlock"
	want_lines $F.out1 "set:u:0:100: ok"
fi
wait_file $F.up 120 "node2's link back"
barrier plock-flapped 300
if [ "$ME" = 3 ]; then
	$PH $PF get:w:0:0 >$F.out3b || fail "plock_helper"
	want_lines $F.out3b "get:w:0:0: w 0 1 pid -$(helper_pid $F.out2)"
	echo "node3: sees node2's lock, and only it"
fi
grep "^plock_ask " /sys/kernel/debug/rdlm/ls/$LS &&
	fail "requests still unanswered after the flap"
barrier plock-checked 120
[ -n "${H1:-}" ] && kill $H1
[ -n "${H2:-}" ] && kill $H2
wait
echo "plock: fcntl locks through the kernel API on $LS, across a ${FLAP} s link flap"
