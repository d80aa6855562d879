#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lifecycle under load: lockspaces disabled and the module unloaded while
# lock traffic is in flight, $ROUNDS times each.
#  - first, without load and with leases longer than the test: node 1
#    holds a name homed on node 2 in every lk-* lockspace, node 2 disables
#    and enables them: node 1 reports each hold lost, since node 2's new
#    incarnation recovered from the old one at the first contact (before
#    incarnations node 1 kept the hold and node 2 could grant it again);
#  - every node runs an EX + LVB counter loop (fault_helper count) in every
#    lk-* lockspace the whole time; errors are expected while a peer churns,
#    but nodes 1 and 3 must have increments acknowledged in every
#    lockspace (none wedged);
#  - node 2 disables and re-enables each lockspace in turn under its own
#    load, $ROUNDS times;
#  - node 2 then stops its own load and, $ROUNDS times, takes everything
#    down and unloads rdlm while nodes 1 and 3 keep posting verbs and
#    messages to it, then loads and configures it again;
#  - afterwards every node takes every name again in every lockspace,
#    rdlm unloads cleanly, and no kernel log on any
#    node shows a connection reset by a remote access error or a protocol
#    error, nor a warning, oops, KASAN or lockdep report (run it in the
#    debug kernel: tools/run-tests -d).
# RDLM_CHURN_ROUNDS (20) tunes it.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test fault-churn
HELPER=$PWD/fault_helper
ROUNDS=${RDLM_CHURN_ROUNDS:-20}
LSS=${RDLM_CHURN_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
CHURNER=2
TMP=$(mktemp -d)
FABRIC_LS=$LSS		# their engine state on failure

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
for ls in $LSS; do
	st "wait $ls 90"
done
barrier churn-ready 300

# a home re-created under a holder elsewhere (no lease to end the hold)
long_leases $LSS
for ls in $LSS; do
	st "wait $ls 90"
done
barrier churn-long 300
if [ "$ME" = 1 ]; then
	holders=
	for ls in $LSS; do
		name=$(name_homed_on "$ls" 2 re) ||
			fail "$ls: no name homed on node2"
		"$HELPER" hold "$ls" "$name" "$TMP/held.$ls" &
		holders+=" $!"
		wait_file "$TMP/held.$ls"
	done
fi
barrier churn-held 300
if [ "$ME" = 2 ]; then
	for ls in $LSS; do
		echo 0 >$CFS/lockspaces/$ls/enable || fail "$ls: disable"
		echo 1 >$CFS/lockspaces/$ls/enable || fail "$ls: enable"
	done
fi
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		wait_file "$TMP/held.$ls.lost" 60 \
			"$ls: the hold on node2's old table, lost once node2 re-created it,"
	done
	echo "every hold on a re-created home's old table reported lost"
	kill $holders
	wait $holders
fi
barrier churn-recreated 300
for ls in $LSS; do
	ls_set "$ls" lease_us=2000000
done
for ls in $LSS; do
	st "wait $ls 90"
done
barrier churn-ready2 300

# load SECS: the counter loop in every lockspace, in the background
load()
{
	local ls

	for ls in $LSS; do
		"$HELPER" count "$ls" churn- 4 "$1" 2000 >"$TMP/$ls.count" 2>&1 &
	done
}

if [ "$ME" = $CHURNER ]; then
	load 100000
	for ((r = 1; r <= ROUNDS; r++)); do
		for ls in $LSS; do
			echo 0 >$CFS/lockspaces/$ls/enable ||
				fail "round $r: disable $ls"
			echo 1 >$CFS/lockspaces/$ls/enable ||
				fail "round $r: enable $ls"
		done
	done
	echo "$ROUNDS rounds of disable/enable under load"
	kill $(jobs -p)
	wait
	for ((r = 1; r <= ROUNDS; r++)); do
		"$CONFIGURE" down >/dev/null || fail "round $r: configure down"
		rmmod rdlm || fail "round $r: rmmod"
		insmod "$RDLM_KO" || fail "round $r: insmod"
		"$CONFIGURE" up >/dev/null || fail "round $r: configure up"
		sleep $((r % 3))
	done
	echo "$ROUNDS rounds of unload/load with peers under load"
	touch "$RDLM_OUT/churn.done"
else
	load 100000
	timeout 1000 bash -c "while [ ! -e $RDLM_OUT/churn.done ]; do sleep 1; done" ||
		fail "node$CHURNER never finished churning"
	# SIGTERM ends the loops with their summaries: every lockspace must
	# have gone on granting here while node 2 churned
	kill $(jobs -p)
	wait
	for ls in $LSS; do
		ok=$(awk '$1 == "name" { n += $4 } END { print n + 0 }' "$TMP/$ls.count")
		[ "$ok" -gt 0 ] ||
			fail "$ls: no increment acknowledged on node$ME during the churn: $(tail -n 1 "$TMP/$ls.count")"
		echo "$ls: node$ME: $ok increments during the churn ($(tail -n 1 "$TMP/$ls.count"))"
	done
fi
for ls in $LSS; do
	echo "wait $ls 120" >$ST 2>/dev/null || fail "$ls: not ready 120 s after the churn"
done
barrier churn-settled 300
# Every lockspace is asked again: a lockspace re-enabled under load comes
# back as a new incarnation, and its peers recover from the old one
# (member_down(): the queue engines repair the queues that still pointed
# at its requests) before they take anything of the new one.
checked=
for ls in $LSS; do
	"$HELPER" read "$ls" churn- 4 120000 >"$TMP/$ls.read" ||
		fail "$ls: lock after the churn: $(cat "$TMP/$ls.read")"
	checked+=" $ls"
done
[ -n "$checked" ] || fail "no lockspace to check"
echo "every name taken again after the churn in:$checked"
barrier churn-checked 300
# A lockspace or node going away must not make a peer's verb meet a table
# already freed (remote access error) nor send what a peer does not expect
# (a protocol error: "bad message"); both reset a whole connection.
resets=$(dmesg | sed -n "/$KMSG_MARK/,\$p" |
	grep -E "remote access error|bad message" | head -n 5)
[ -z "$resets" ] || fail "connection resets during the churn: $resets"
"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "disable/enable and unload/load under load, $ROUNDS rounds each: clean"
