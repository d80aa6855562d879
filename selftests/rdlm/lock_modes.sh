#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fs/dlm's six modes on every lk-* lockspace, exhaustively: for each mode
# held and each mode requested, a NOQUEUE request is granted or refused as
# the compatibility matrix says, from the holder's node (another process)
# and from another node. Then the request flags on node 1: ALTPR, NOORDER,
# EXPEDITE, HEADQUE, and the up-conversion rules (CONVDEADLK, NODLCKWT).
# On an engine that converts a word in place (central, ncosed, the bakery
# without leases: lk-bakery here), fs/dlm's up-conversion across nodes: PR
# to EX waits for the other node's PR, a second one is refused (-EDEADLK)
# or waits (NODLCKWT) and is cancelled (on ncosed and the bakery the first,
# queued, is not told).
# Last, blocking callbacks reach the holders: node 1 holds a name in PR,
# then EX, and keeps it until it is told that someone waits; node 2 asks
# for EX after node 1's grant and must get it (a holder granted before
# the waiter came hears of it: the bakery's waiters announce themselves,
# N-CoSED's home tells its shared holders).
#
# The expected answers are written out here, not computed from the
# module's table. Where rdlm is stricter than fs/dlm it says so: a lock
# word has two engine modes, so across nodes CR and PR take it shared and
# CW, PW and EX exclusive (CR-CW, CR-PW and CW-CW wait), and on this node a
# CR hold of a shared word does not cover CW or PW (except where the
# engine makes a word exclusive in place: central, ncosed, lk-bakery). The
# exclusive-only engines (dqnl, dqnl-sf) take every word exclusive: exact
# fs/dlm on one node, nothing shared across nodes.
#
# MODES_LS (default: every lk-* lockspace) sets the lockspaces.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
fabric_test lock_modes
LSS=${MODES_LS:-$(awk '$1 == "lockspace" && $2 ~ /^lk-/ { print $2 }' \
	"$REPO/tools/cluster/cluster.conf")}
TMP=$(mktemp -d) || fail "mktemp"
ORDER="NL CR PR CW PW EX"	# the requests of a row: grants first

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
# a hold must outlive a row of requests: no 2 s leases; lk-bakery goes
# without (it converts in place then), lk-bakery-cpu keeps a long one
long_leases $LSS
case " $LSS " in
*" lk-bakery "*) ls_set lk-bakery lease_us=0 ;;
esac

# row WANTS: "NL=G CR=G ..." from the six answers in ORDER
row()
{
	local out= m w

	set -- $1
	for m in $ORDER; do
		out+="${out:+ }$m=$1"
		shift
	done
	echo "$out"
}

# check LS WHERE NAME HELD WANTS: NAME is held in HELD (node 1); the NOQUEUE
# requests of this node must be answered WANTS (six G or -, in ORDER)
check()
{
	local want got

	want=$(row "$5")
	got=$(./mode_helper try "$1" "$3" $want) || fail "$1: try: $got"
	[ "$got" = "$want" ] ||
		fail "$1 ($2): held $4: got '$got', want '$want'"
}

# hold LS NAME MODE: hold NAME in MODE in the background until unhold
hold()
{
	rm -f "$TMP/held"
	./mode_helper hold "$1" "$2" "$3" "$TMP/held" &
	HOLDER=$!
	wait_file "$TMP/held"
}

unhold()
{
	kill "$HOLDER"
	{ wait "$HOLDER"; } 2>/dev/null
}

for ls in $LSS; do
	st "wait $ls 90"
	engine=$(cat "$CFS/lockspaces/$ls/engine")
	case $engine in
	dqnl*)
		shared=0
		# one node: exactly fs/dlm's matrix
		local_wants=("G G G G G G" "G G G G G -" "G G - G - -"
			     "G G G - - -" "G G - - - -" "G - - - - -")
		# across nodes: every word exclusive
		remote_wants=("G G G G G G" "G - - - - -" "G - - - - -"
			      "G - - - - -" "G - - - - -" "G - - - - -")
		;;
	*)
		shared=1
		# CR's shared word does not cover CW or PW
		local_wants=("G G G G G G" "G G G - - -" "G G - G - -"
			     "G G G - - -" "G G - - - -" "G - - - - -")
		if [ "$engine" = central ] || [ "$engine" = ncosed ] ||
		   { [ "$engine" = bakery ] &&
		     [ "$(cat "$CFS/lockspaces/$ls/lease_us")" = 0 ]; }; then
			# the word is made exclusive in place: fs/dlm's matrix
			shared=2
			local_wants=("G G G G G G" "G G G G G -" "G G - G - -"
				     "G G G - - -" "G G - - - -" "G - - - - -")
		fi
		# CR and PR share words, CW, PW and EX do not
		remote_wants=("G G G G G G" "G G G - - -" "G - - - - -"
			      "G G G - - -" "G - - - - -" "G - - - - -")
		;;
	esac
	barrier "$ls-ready"
	i=0
	for held in NL CR CW PR PW EX; do
		name=modes-$ls-$held
		[ "$ME" = 1 ] && hold "$ls" "$name" "$held"
		[ "$ME" = 1 ] && check "$ls" "node 1" "$name" "$held" \
			"${local_wants[$i]}"
		barrier "$ls-$held-held"
		[ "$ME" = 2 ] && check "$ls" "node 2" "$name" "$held" \
			"${remote_wants[$i]}"
		barrier "$ls-$held-tried"
		[ "$ME" = 1 ] && unhold
		i=$((i + 1))
	done
	echo "$ls ($engine): the six modes, held and requested, on node 1 and node 2: as expected"
	if [ "$ME" = 1 ]; then
		./mode_helper flags "$ls" "flags-$ls" $shared ||
			fail "$ls: request flags"
		echo "$ls: ALTPR, NOORDER, EXPEDITE, HEADQUE, $([ $shared = 1 ] &&
			echo CONVDEADLK || echo NODLCKWT): as expected"
	fi
	if [ $shared = 2 ]; then
		uc=$TMP/upconv-$ls
		mkdir "$uc"
		if [ "$ME" -le 2 ]; then
			./mode_helper upconv "$ls" "upconv-$ls" \
				"$([ "$ME" = 1 ] && echo a || echo b)" "$uc" \
				$([ "$engine" != central ] && echo queue) \
				>"$uc.out" 2>&1 &
			UPCONV=$!
			wait_file "$uc/held"
		fi
		barrier "$ls-upconv-held"
		if [ "$ME" = 1 ]; then
			touch "$uc/go"
			wait_file "$uc/waiting"
		fi
		barrier "$ls-upconv-waiting"
		[ "$ME" = 2 ] && touch "$uc/go"
		if [ "$ME" -le 2 ]; then
			wait "$UPCONV" ||
				fail "$ls: up-conversion across nodes: $(cat "$uc.out")"
			echo "$ls: PR to EX across nodes, deadlock, NODLCKWT, cancel: as expected"
		fi
		barrier "$ls-upconv-done"
	fi
	for held in PR EX; do
		name=told-$ls-$held
		if [ "$ME" = 1 ]; then
			rm -f "$TMP/held"
			./mode_helper told "$ls" "$name" $held "$TMP/held" \
				>"$TMP/told" &
			TOLD=$!
			wait_file "$TMP/held"
		fi
		barrier "$ls-told-$held-held"
		if [ "$ME" = 2 ]; then
			got=$(./lock_helper wait "$ls" "$name" 150000)
			case $got in
			"status 0 "*) ;;
			*) fail "$ls: EX behind $held held on node 1: $got" ;;
			esac
		fi
		if [ "$ME" = 1 ]; then
			wait "$TOLD" || fail "$ls: $held holder: $(cat "$TMP/told")"
			echo "$ls: $held holder on node 1: $(cat "$TMP/told")"
		fi
		barrier "$ls-told-$held-done"
	done
	barrier "$ls-done"
done

nothing_left "lock_modes" ""
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
