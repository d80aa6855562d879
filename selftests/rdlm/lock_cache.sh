#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hold caching (configfs cache_us) on every lk-* lockspace, nodes 1 and 2
# (the others only keep step):
#  - a name node 1 locked and unlocked is locked again with no verb, 12
#    times (past the takeover bound local_grants_max, 8: nobody else
#    asked): the lockspace's verb counters do not move, its cache hits do,
#    and a PR lock is served from the kept EX hold too;
#  - node 2's EX request gets the word from node 1's kept hold well before
#    the hold would end by itself (node 1 counts it revoked), and node 1
#    gets it back from node 2 the same way;
#  - a trylock of node 2 on a word node 1 keeps fails at most for a while:
#    node 1 gives the word back, and a later trylock is granted;
#  - with 4 engine requests per node, node 1 locks 8 names one after the
#    other: the kept holds give their requests back to the new names;
#  - with cache_us 0 (the default) nothing is kept: the second lock posts
#    verbs again;
#  - last, kept holds on every lockspace at once, every node: EX locks of
#    two names for 8 s (fault_helper count), each grant inside the name's
#    critical section in the nodes' shared memory (RDLM_CS_DIR), a
#    check without the lock manager's help that a kept hold is given
#    back before anyone else is granted the name; then the counters they
#    wrote back are exact (the acknowledged increments of every node).
# The kept holds last 30 s here (cache_us, under half the 60 s lease); the
# requests that take a word from a kept hold may wait 10 s: a hold that is
# not given back when asked fails them.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
fabric_test lock_cache
RDLMCTL=$REPO/userspace/rdlmctl
LSS=${RDLM_CACHE_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
TMP=$(mktemp -d) || fail "mktemp"

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"

# cache LS US [NR_REQS]: lease 60 s, cache_us US, NR_REQS engine requests
# (default 1024) (the lockspace restarts)
cache()
{
	ls_set "$1" lease_us=60000000 cache_us="$2" nr_reqs="${3:-1024}"
}

# counters LS: "VERBS KEPT HITS REVOKED" of this node in LS
counters()
{
	awk '/^verbs / { v = $3 + $5 + $7 + $9 + $11 }
	     /^cache / { k = $3; h = $5; r = $7 }
	     END { print v, k, h, r }' "$DBG/ls/$1"
}

# quiet LS: nothing of an earlier lock still to come in LS: no verb in
# flight on this node (debugfs lockspaces), and the verb counters the same
# in two reads
quiet()
{
	local i v w

	for ((i = 0; i < 100; i++)); do
		v=$(counters "$1")
		awk -v ls="$1" '$1 == ls { for (i = 2; i < NF; i++)
			if ($i == "inflight") exit $(i + 1) != 0 }' \
			$DBG/lockspaces && [ "$v" = "$w" ] && return 0
		w=$v
		sleep 0.1
	done
	fail "$1: verbs still in flight after 10 s"
}

# lock LS NAME [rdlmctl lock options]: lock NAME, run nothing, unlock
lock()
{
	local ls=$1 name=$2

	shift 2
	"$RDLMCTL" lock -L "$ls" "$@" "$name" -- true
}

for ls in $LSS; do
	FABRIC_LS=$ls
	cache "$ls" 30000000
	st "wait $ls 90"
	barrier "cache-$ls-ready"
	name=cache-$ls

	if [ "$ME" = 1 ]; then
		lock "$ls" "$name" -w 60 || fail "$ls: first lock"
		quiet "$ls"
		read -r v0 k0 h0 r0 <<<"$(counters "$ls")"
		# more than local_grants_max (8): nobody else asked for it
		for ((i = 0; i < 11; i++)); do
			lock "$ls" "$name" -w 60 || fail "$ls: lock $((i + 2))"
		done
		lock "$ls" "$name" -w 60 -s || fail "$ls: PR lock"
		read -r v1 k1 h1 r1 <<<"$(counters "$ls")"
		[ "$v1" = "$v0" ] ||
			fail "$ls: a kept hold posted $((v1 - v0)) verbs"
		[ "$((h1 - h0))" = 12 ] ||
			fail "$ls: cache hits $h0 -> $h1, expected 12 more"
		[ "$k1" -ge 1 ] || fail "$ls: no hold kept"
		echo "$ls: 12 locks from the kept hold, no verb"
	fi
	barrier "cache-$ls-kept"

	# node 2 takes the word from node 1's kept hold, and back
	if [ "$ME" = 2 ]; then
		lock "$ls" "$name" -w 10 ||
			fail "$ls: node 1 did not give its kept hold back"
	fi
	barrier "cache-$ls-taken"
	if [ "$ME" = 1 ]; then
		read -r v2 k2 h2 r2 <<<"$(counters "$ls")"
		[ "$r2" -gt "$r1" ] ||
			fail "$ls: node 2 got the word, node 1 counts no revoke"
		lock "$ls" "$name" -w 10 ||
			fail "$ls: node 2 did not give its kept hold back"
	fi
	barrier "cache-$ls-back"

	# a trylock meets node 1's kept hold: it gives the word back
	if [ "$ME" = 2 ]; then
		for ((i = 0; i < 50; i++)); do
			lock "$ls" "$name" -n -E 75 2>/dev/null && break
			[ $? = 75 ] || fail "$ls: trylock failed"
			sleep 0.2
		done
		[ $i -lt 50 ] ||
			fail "$ls: trylocks refused for 10 s: the kept hold stayed"
		echo "$ls: trylock granted after $i refusals"
	fi
	barrier "cache-$ls-tried"

	# more names than engine requests: kept holds make room
	cache "$ls" 30000000 4
	st "wait $ls 90"
	barrier "cache-$ls-few"
	if [ "$ME" = 1 ]; then
		for i in 1 2 3 4 5 6 7 8; do
			lock "$ls" "few-$i" -w 10 ||
				fail "$ls: name $i of 8 with 4 engine requests"
		done
	fi
	barrier "cache-$ls-few-done"

	# without caching, every lock takes the word again
	cache "$ls" 0
	st "wait $ls 90"
	barrier "cache-$ls-uncached"
	if [ "$ME" = 1 ]; then
		lock "$ls" "$name" -w 60 || fail "$ls: uncached lock"
		quiet "$ls"
		read -r v0 k0 h0 r0 <<<"$(counters "$ls")"
		lock "$ls" "$name" -w 60 || fail "$ls: uncached lock"
		read -r v1 k1 h1 r1 <<<"$(counters "$ls")"
		[ "$v1" -gt "$v0" ] && [ "$k1" = 0 ] && [ "$h1" = 0 ] ||
			fail "$ls: cache_us 0: verbs $v0 -> $v1, kept $k1, hits $h1"
	fi
	barrier "cache-$ls-done"
done

# kept holds under contention, every lockspace and node at once
export RDLM_CS_DIR=$RDLM_OUT
for ls in $LSS; do
	cache "$ls" 30000000
done
for ls in $LSS; do
	st "wait $ls 90"
done
barrier cache-cs-ready
declare -A hits0
for ls in $LSS; do
	read -r _ _ hits0[$ls] _ <<<"$(counters "$ls")"
done
pids=()
for ls in $LSS; do
	"$PWD/fault_helper" count "$ls" cache-cs- 2 8 20000 >"$TMP/cs.$ls" 2>&1 &
	pids+=($!)
done
i=0
for ls in $LSS; do
	wait "${pids[i]}" ||
		fail "$ls: kept holds under contention: $(grep -v '^name' "$TMP/cs.$ls")"
	i=$((i + 1))
	# not vacuous: this node was granted and unlocked names there
	[ "$(awk '$1 == "name" { n += $4 } END { print n + 0 }' "$TMP/cs.$ls")" -gt 0 ] ||
		fail "$ls: kept holds under contention: nothing granted: $(tail -n 1 "$TMP/cs.$ls")"
done
echo "kept holds under contention: $(awk '$1 == "name" { n += $4 } END { print n }' "$TMP"/cs.*) grants on $(wc -w <<<"$LSS") lockspaces, none while another node held the name"
for ls in $LSS; do
	cp "$TMP/cs.$ls" "$RDLM_OUT/cache-cs.$ls.$ME"
	read -r _ _ h _ <<<"$(counters "$ls")"
	echo $((h - hits0[$ls])) >"$RDLM_OUT/cache-cs-hits.$ls.$ME"
done
barrier cache-cs-done
# and the counters the kept holds wrote back are exact: no fault, so every
# unlock wrote and none may be lost or made twice (a kept hold given back
# without its LVB, or one written back over a newer value)
if [ "$ME" = 1 ]; then
	for ls in $LSS; do
		# not vacuous: locks were served from kept holds
		h=$(cat "$RDLM_OUT/cache-cs-hits.$ls".* | awk '{ n += $1 } END { print n + 0 }')
		[ "$h" -gt 0 ] ||
			fail "$ls: kept holds under contention: no lock served from a kept hold"
		echo "$ls: kept holds under contention: $h locks served from kept holds"
		"$PWD/fault_helper" read "$ls" cache-cs- 2 60000 >"$TMP/csr.$ls" ||
			fail "$ls: read the counters: $(cat "$TMP/csr.$ls")"
		for n in 0 1; do
			read -r ok werr < <(awk -v n=$n '$1 == "name" && $2 == n {
				ok += $4; werr += $6 } END { print ok + 0, werr + 0 }' \
				"$RDLM_OUT/cache-cs.$ls".*)
			got=$(awk -v n=$n '$1 == "name" && $2 == n { print $4, $5 }' \
				"$TMP/csr.$ls")
			[ "$werr" = 0 ] && [ "$got" = "$ok valid" ] ||
				fail "$ls: name $n: counter '$got', $ok increments acknowledged, $werr failed unlocks"
		done
	done
	echo "kept holds under contention: every counter exact"
fi
barrier cache-cs-read

"$CONFIGURE" down || fail "configure down"
rdlm_unload
kmsg_check
echo "ok: hold caching on $(wc -w <<<"$LSS") lockspaces"
