#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cluster membership from corosync (rdlm_controld(8)), on 3 nodes, for
# every lockspace named lk-* in tools/cluster/cluster.conf:
#  - with corosync and rdlm_controld running everywhere, every node reports
#    members 1 2 3, quorate;
#  - node 3 disables fab-cpu: its rdlm_controld leaves the group and nodes
#    1 and 2 report 1 2 for it; enabled again, 1 2 3, and node 3's epoch
#    of fab-cpu went on increasing;
#  - node 1 kills node 3: nodes 1 and 2 report members 1 2, quorate (2 of
#    3 votes);
#  - the hub cuts 1|2: each of them alone has 1 of 3 votes and reports
#    itself alone, not quorate;
#  - the heal: members 1 2, quorate again;
#  - node 1: a second rdlm_controld refuses to start, one without -f
#    daemonizes and leaves on SIGTERM; node 2: corosync stops under
#    rdlm_controld, which exits 1.
# The membership is read from the kernel's configfs file "membership" where
# it exists, else from rdlm_controld's log. The time from each fault to the
# report is printed (the kill's is corosync's failure detection); only a
# generous bound (MEMBERSHIP_WAIT_S, 60 s) is asserted.
#
# node3 does not survive this test: it must stay the last of the suite.
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

memb_cleanup()
{
	local rc=$?

	[ "$ME" = 1 ] && [ "$rc" != 0 ] && hub_heal
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

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
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
barrier memb-full 120

# leave and join again: fab-cpu, a lockspace without a lock manager
ls=fab-cpu
membership_wait $ls 1 1 2 3
epoch=${MEMBERSHIP%% *}
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

if [ "$ME" = 3 ]; then
	sleep 300
	fail "node1 did not kill node3 within 300 s"
fi
NODES=2		# for the barriers: node3 is about to go
if [ "$ME" = 1 ]; then
	T0=$(now_ms)
	kill_node 3
	echo "node1: node3 killed, confirmed after $(($(now_ms) - T0)) ms"
	: >"$RDLM_OUT/memb.killed"
else
	wait_notice killed
fi
all_report "kill of node3" 1 1 2
barrier memb-after-kill 120

# one node of three votes each: neither side is quorate
if [ "$ME" = 1 ]; then
	hub_cut 1 2
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.cut"
else
	wait_notice cut
fi
all_report "cut 1|2" 0 "$ME"
barrier memb-after-cut 120

if [ "$ME" = 1 ]; then
	hub_heal
	T0=$(now_ms)
	: >"$RDLM_OUT/memb.healed"
else
	wait_notice healed
fi
all_report "heal" 1 1 2
barrier memb-done 120

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
echo "membership: reported on start, node death, partition and heal"
