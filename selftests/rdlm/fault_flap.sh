#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A link flap during a lock workload, on every lk-* lockspace at once.
#
# Every node runs an EX + LVB counter loop (fault_helper count, 5 s lock
# timeout) in every lockspace while node 2's link goes down for 10 s, then,
# with fresh names, for 30 s: one flap shorter than the lockspaces' 20 s
# lease, one longer (the holds behind it run out). Afterwards:
#  - no name was granted to two holders at once: each grant enters the
#    name's critical section in memory every node shares (fault_helper,
#    RDLM_CS_DIR, cs_check.h), a check without the lock manager's help;
#  - every lock call returned within its timeout (plus scheduling slack),
#    and no unlock blocked longer than the detection bound allows;
#  - every node reconnects: the lockspaces are ready again on every node,
#    and every node takes every name again;
#  - nothing acknowledged was lost: per name, the LVB counter is at least
#    the increments whose unlock succeeded on all nodes together and at
#    most that plus the unlocks that failed after writing; a name whose
#    LVB went invalid must have seen a failed unlock or lock (a writer
#    whose node lost the home while it was granted or writing). Exactly,
#    for every name whose value reads valid: a grant that says invalid
#    starts a new epoch of its counter, every write is logged
#    (RDLM_COUNT_LOG), and in the value's epoch no acknowledged write is
#    above the value or made twice (a lost write: the next grant read the
#    one before and said it was valid); at least one name per lockspace
#    must be checked so.
# Times (link-up to ready, per node) are printed, never asserted.
#
# RDLM_FLAPS ("10 30") and RDLM_FLAP_LS (the lk-* lockspaces of
# tools/cluster/cluster.conf) tune it.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 3
fabric_test fault-flap
HELPER=$PWD/fault_helper
FLAPS=${RDLM_FLAPS:-10 30}
LSS=${RDLM_FLAP_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
NAMES=4
TIMEOUT_MS=5000
LATE_MS=$((TIMEOUT_MS + 15000))	# a lock call past this did not honour its timeout
UNLOCK_MS=30000			# an unlock past this waited on a dead link
LEASE_US=20000000		# holders wait seconds for other nodes under TCG
READ_MS=100000			# two leases, and slack
TMP=$(mktemp -d)
FLAPPER=2
FABRIC_LS=$LSS		# their engine state on failure

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
for ls in $LSS; do
	ls_set "$ls" lease_us=$LEASE_US
done
for ls in $LSS; do
	st "wait $ls 90"
done
barrier flap-ready 300

# ready_all SECS: every lockspace ready on this node (all members connected)
ready_all()
{
	local ls

	for ls in $LSS; do
		echo "wait $ls $1" >$ST 2>/dev/null || return 1
	done
}

for flap in $FLAPS; do
	prefix=flap$flap-
	secs=$((flap + 40))
	pids=()
	for ls in $LSS; do
		RDLM_CS_DIR=$RDLM_OUT \
			RDLM_COUNT_LOG=$RDLM_OUT/flap.$flap.$ls.node$ME.log \
			"$HELPER" count "$ls" "$prefix" $NAMES $secs $TIMEOUT_MS \
			>"$TMP/$ls.$flap" 2>&1 &
		pids+=($!)
	done
	if [ "$ME" = $FLAPPER ]; then
		sleep 10
		link_flap "$flap"
		# renamed into place: a poller never reads it half written
		date +%s.%N >"$RDLM_OUT/flap.$flap.up.tmp" &&
			mv "$RDLM_OUT/flap.$flap.up.tmp" "$RDLM_OUT/flap.$flap.up"
	fi
	# how long after link-up this node has every lockspace ready again
	(
		while [ ! -e "$RDLM_OUT/flap.$flap.up" ]; do sleep 0.1; done
		until ready_all 1; do :; done
		awk -v up="$(cat "$RDLM_OUT/flap.$flap.up")" -v now="$(date +%s.%N)" \
			'BEGIN { printf "%.1f\n", now - up }' >"$TMP/ready.$flap"
	) &
	poller=$!
	for p in "${pids[@]}"; do
		wait "$p" || fail "fault_helper count failed: $(cat "$TMP"/*."$flap")"
	done
	ready_all 120 || fail "flap $flap s: not reconnected 120 s after the workload"
	wait $poller
	echo "flap $flap s: node$ME ready $(cat "$TMP/ready.$flap") s after link-up"
	echo "peers: $(grep '^node' $DBG/peers | awk '{ print $2 $3 ":" $5 "/" $7 }' | tr '\n' ' ')"

	for ls in $LSS; do
		f=$TMP/$ls.$flap
		tail -n 1 "$f" | sed "s/^/$ls: /"
		read -r _ calls _ lockerr _ maxl _ maxu _ errs < <(tail -n 1 "$f")
		[ "$maxl" -le $LATE_MS ] ||
			fail "$ls: a lock call took $maxl ms (timeout $TIMEOUT_MS ms)"
		[ "$maxu" -le $UNLOCK_MS ] ||
			fail "$ls: an unlock took $maxu ms"
		cp "$f" "$RDLM_OUT/flap.$flap.$ls.node$ME"
	done
	barrier flap-$flap-counted 600

	# the flapped node works again, and so does everybody with its names
	# (on the bakery within two leases: tickets of requests the flap
	# failed are skipped by a lease reset)
	declare -A readers
	for ls in $LSS; do
		"$HELPER" read "$ls" "$prefix" $NAMES $READ_MS >"$TMP/$ls.$flap.read" &
		readers[$ls]=$!
	done
	for ls in $LSS; do
		wait ${readers[$ls]} ||
			fail "$ls: lock after the flap: $(cat "$TMP/$ls.$flap.read")"
	done
	if [ "$ME" = 1 ]; then
		for ls in $LSS; do
			exact=0
			for ((n = 0; n < NAMES; n++)); do
				read -r ok werr inval lerr < <(cat "$RDLM_OUT"/flap.$flap.$ls.node* |
					awk -v n=$n '$1 == "name" && $2 == n {
						ok += $4; werr += $6; inv += $8; le += $10 }
					END { print ok + 0, werr + 0, inv + 0, le + 0 }')
				read -r _ _ _ value valid _ epoch < <(grep "^name $n " "$TMP/$ls.$flap.read")
				echo "$ls $prefix$n: value $value $valid (epoch $epoch), acknowledged $ok, failed unlocks $werr, invalid grants $inval, failed locks $lerr"
				if [ "$valid" = valid ]; then
					# the value's epoch (since the last grant that
					# said invalid): no acknowledged write of it
					# above the value, none made twice (a write
					# lost, the next one read the one before)
					read -r over dup < <(cat "$RDLM_OUT"/flap.$flap.$ls.node*.log |
						awk -v n=$n -v e="$epoch" -v v="$value" '
						$1 == "ack" && $2 == n && $3 "" == e "" {
							if ($4 > v) over++
							if (seen[$4]++) dup++ }
						END { print over + 0, dup + 0 }')
					[ "$over" = 0 ] && [ "$dup" = 0 ] ||
						fail "$ls $prefix$n: epoch $epoch: $over acknowledged writes above the value $value, $dup written twice"
					exact=$((exact + 1))
				fi
				if [ "$valid" = valid ] && [ "$inval" = 0 ]; then
					[ "$value" -ge "$ok" ] && [ "$value" -le $((ok + werr)) ] ||
						fail "$ls $prefix$n: counter $value, $ok acknowledged, $werr uncertain"
				else
					# a writer's node that lost the home during its
					# grant or its write: its lock or unlock failed
					[ $((werr + lerr)) -gt 0 ] ||
						fail "$ls $prefix$n: LVB invalid though no lock or unlock of it failed"
				fi
			done
			[ "$exact" -gt 0 ] ||
				fail "$ls: no name's value valid after the flap: nothing checked exactly"
			echo "$ls: $exact of $NAMES names checked exactly"
		done
	fi
	barrier flap-$flap-checked 600
done
"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "link flaps of $FLAPS s: calls bounded, reconnected, no acknowledged write lost"
