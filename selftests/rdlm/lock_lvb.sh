#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The lock value block at the home, and its invalid flag: on the lockspaces
# whose words come free when a holder vanishes (the bakery's and central's
# leases), node 1 writes a value under EX and node 2 reads it back valid;
# a holder process killed without writing leaves it valid (its lock was
# released); a holder whose node leaves the lockspace while it holds EX
# leaves it invalid for the next reader (RDLM_SBF_VALNOTVALID), as fs/dlm
# does for a departed PW/EX holder. It is the departure that ends it, not
# a lease: central runs with 60 s leases, the bakery without (with leases
# it waits for them), and the next reader must be granted within 30 s (the
# home recovers from a node at its WITHDRAW; before it did, the reader
# timed out on both). The name is chosen so that
# node 1 is not its home. Each lockspace's lvb_len bytes (32, 64, 48 in
# cluster.conf) travel whole, and nothing past them: read at the home
# (node 2) and on node 1, which in NIC-atomic mode on an engine that grants
# on its first verb (bakery, dqnl, ncosed) reads them from the home's LVB
# record by RDMA READ, not by message (debugfs lvb_reads).
#
# LVB_LS (default lk-bakery lk-central lk-bakery-cpu) sets the lockspaces.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
fabric_test lock_lvb
LSS=${LVB_LS:-lk-bakery lk-central lk-bakery-cpu}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
for ls in $LSS; do
	case $(cat "$CFS/lockspaces/$ls/engine") in
	bakery) ls_set "$ls" lease_us=0 ;;
	*) long_leases "$ls" ;;
	esac
done

# hold_ex LS NAME: hold NAME in EX with the LVB in the background
hold_ex()
{
	rm -f "$RDLM_OUT/lvb-held"
	./lock_helper lvb_hold "$1" "$2" "$RDLM_OUT/lvb-held" &
	HOLDER=$!
	wait_file "$RDLM_OUT/lvb-held"	# granted
}

drop_ex()
{
	kill -9 "$HOLDER"
	{ wait "$HOLDER"; } 2>/dev/null
}

# lvb_reads LS: LVBs this node read from a home's record (debugfs)
lvb_reads()
{
	awk '{ for (i = 1; i < NF; i++)
		if ($i == "lvb_reads") print $(i + 1) }' "$DBG/ls/$1"
}

# expect_lvb LS NAME WANT: a PR grant on NAME reads WANT ("value V valid")
expect_lvb()
{
	local got

	got=$(./lock_helper lvb_get "$1" "$2") || fail "$1: lvb_get $2: $got"
	[ "$got" = "$3" ] || fail "$1: $2 read '$got', expected '$3'"
	echo "$1: node $ME read $2: $got"
}

for ls in $LSS; do
	st "wait $ls 90"
	barrier "$ls-ready"
	if [ "$ME" = 1 ]; then
		# a name whose home is another node (this one is going away)
		name=
		for i in 0 1 2 3 4 5 6 7 8 9; do
			hold_ex "$ls" "lvb-$ls-$i"
			home=$(sed -n 's/^lock .* granted .* home \([0-9]*\) .*/\1/p' \
				"$DBG/ls/$ls")
			drop_ex
			[ -n "$home" ] && [ "$home" != 1 ] &&
				{ name=lvb-$ls-$i; break; }
		done
		[ -n "$name" ] || fail "$ls: no name with a home other than node 1"
		./lock_helper lvb_set "$ls" "$name" 41 || fail "$ls: lvb_set"
		echo "$name" >"$RDLM_OUT/lvb-name.$ls"
	fi
	barrier "$ls-set"
	name=$(cat "$RDLM_OUT/lvb-name.$ls")
	[ "$ME" = 2 ] && expect_lvb "$ls" "$name" "value 41 valid"
	barrier "$ls-read"

	# all of the lockspace's lvb_len bytes travel, and nothing past them
	len=$(cat "$CFS/lockspaces/$ls/lvb_len")
	[ "$ME" = 1 ] && { ./lock_helper lvb_fill "$ls" "$name" 0x41 ||
			   fail "$ls: lvb_fill"; }
	barrier "$ls-filled"
	want=
	for ((i = 0; i < 64; i++)); do
		[ $i -lt "$len" ] && want+=$(printf %02x $((0x41 + i))) ||
			want+=00
	done
	# node 2, then node 1, never the home (by READ where the lockspace can)
	for reader in 2 1; do
		if [ "$ME" = "$reader" ]; then
			r0=$(lvb_reads "$ls")
			got=$(./lock_helper lvb_dump "$ls" "$name") ||
				fail "$ls: lvb_dump: $got"
			[ "$got" = "$want" ] ||
				fail "$ls: node $ME read the $len-byte LVB as $got, want $want"
			r1=$(lvb_reads "$ls")
			if [ "$ME" = 2 ]; then
				how="(node 2 may be its home)"
			elif reads_records "$ls"; then
				[ "$r1" -gt "$r0" ] ||
					fail "$ls: node 1 did not read the LVB from the home's record (lvb_reads $r0 -> $r1)"
				how="from the home's record by RDMA READ"
			else
				[ "$r1" = "$r0" ] ||
					fail "$ls: node 1 read a record (lvb_reads $r0 -> $r1), the lockspace has none"
				how="by message"
			fi
			echo "$ls: node $ME read node 1's $len-byte LVB whole, $how"
		fi
		barrier "$ls-dumped-$reader"
	done
	if [ "$ME" = 2 ]; then
		./lock_helper lvb_set "$ls" "$name" 41 || fail "$ls: lvb_set"
	fi
	barrier "$ls-refilled"

	# a holder process killed: its lock is released, the LVB stays valid
	if [ "$ME" = 1 ]; then
		hold_ex "$ls" "$name"
		drop_ex
	fi
	barrier "$ls-killed"
	[ "$ME" = 2 ] && expect_lvb "$ls" "$name" "value 41 valid"
	barrier "$ls-read-killed"

	# the holder's node leaves while it holds EX: the LVB is invalid
	if [ "$ME" = 1 ]; then
		hold_ex "$ls" "$name"
		echo 0 >"$CFS/lockspaces/$ls/enable" || fail "$ls: disable"
		drop_ex
	fi
	barrier "$ls-left"
	[ "$ME" = 2 ] && LVB_TIMEOUT_MS=30000 expect_lvb "$ls" "$name" \
		"value 41 invalid"
	barrier "$ls-read-left"
	if [ "$ME" = 1 ]; then
		echo 1 >"$CFS/lockspaces/$ls/enable" || fail "$ls: enable"
	fi
done

barrier lvb-done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
