# SPDX-License-Identifier: GPL-2.0
# Helpers of the multi-node fabric selftests (sourced after lib.sh).

REPO=${RDLM_REPO:-$(cd ../../.. && pwd)}
CONFIGURE=$REPO/tools/rdlm-configure
ST=$DBG/selftest
NODES=${RDLM_NODES:-1}
ME=${RDLM_NODE_ID:-1}

need_cluster()
{
	[ -n "${RDLM_NODE_ID:-}" ] && [ -n "${RDLM_OUT:-}" ] ||
		{ echo "SKIP: not in the test cluster"; exit $ksft_skip; }
	[ "$NODES" -ge "${1:-1}" ] ||
		{ echo "SKIP: needs $1 nodes"; exit $ksft_skip; }
}

# fabric_test NAME [CONF]: on any failure from here on, print this node's
# fabric state, tell the other nodes (their barriers fail at once instead of
# timing out), unconfigure (from CONF if given) and unload rdlm, so the next
# test starts clean. NAME must be unique in the suite. The engine state of
# the lockspaces in FABRIC_LS, if set, is printed too.
fabric_test()
{
	FABRIC_TEST=$1
	FABRIC_CONF=${2:-}
	trap fabric_cleanup EXIT
}

fabric_cleanup()
{
	local rc=$? ls

	[ "$rc" = 0 ] && return 0
	touch "$RDLM_OUT/abort.$FABRIC_TEST.$ME"
	echo "node$ME state at the failure:"
	cat $DBG/peers $DBG/lockspaces $ST 2>/dev/null
	for ls in ${FABRIC_LS:-}; do
		grep -v "^lock " "$DBG/ls/$ls" 2>/dev/null
	done
	dmesg | sed -n "/${KMSG_MARK:-^}/,\$p" | grep "rdlm" | tail -n 20
	"$CONFIGURE" ${FABRIC_CONF:+-f "$FABRIC_CONF"} down >/dev/null 2>&1
	rdlm_loaded && rmmod rdlm 2>/dev/null
	exit "$rc"
}

# barrier NAME [SECS]: wait until every node reached NAME (files in the
# cluster's shared output directory); fail at once if a node failed. NAME
# is the test's own (fabric_test): a later test of the same boot that says
# the same NAME does not find the earlier test's files there.
barrier()
{
	local name=${FABRIC_TEST:-none}.$1 secs=${2:-120} i
	local -a here gone

	touch "$RDLM_OUT/barrier.$name.$ME"
	# globs and "read -t", no fork: the other node may be measuring, and
	# under TCG a fork and exec here delays what this node serves it
	for ((i = 0; i < secs * 10; i++)); do
		here=("$RDLM_OUT/barrier.$name".*)
		[ "${#here[@]}" -ge "$NODES" ] && return 0
		gone=("$RDLM_OUT/abort.${FABRIC_TEST:-none}".*)
		[ -e "${gone[0]}" ] &&
			fail "barrier $name: another node failed (${gone[*]##*/})"
		idle 0.1
	done
	fail "barrier $name: ${#here[@]} of $NODES nodes after $secs s"
}

# st CMD: run one fabric self-test command
st()
{
	echo "$*" >$ST 2>/dev/null ||
		fail "selftest '$*': $(cat $ST); $(dmesg | grep selftest | tail -n 3)"
}

# home_of LS NAME: the node id of NAME's home, from the lock dump while
# held through fault_helper ($HELPER), with a file in $TMP
home_of()
{
	local hex home

	hex=$(printf %s "$2" | od -An -tx1 | tr -d ' \n')
	"$HELPER" hold "$1" "$2" "$TMP/held" &
	wait_file "$TMP/held"
	home=$(sed -n "s/^lock .* home \([0-9]*\) .* name $hex\$/\1/p" "$DBG/ls/$1")
	kill $!
	wait $! 2>/dev/null
	rm -f "$TMP/held"
	[ -n "$home" ] && echo "$home"
}

# name_homed_on LS NODE PREFIX: a name of LS (PREFIX-N) whose home is NODE
name_homed_on()
{
	local n h

	for ((n = 0; n < 64; n++)); do
		h=$(home_of "$1" "$3-$n") || fail "$1: no home for $3-$n"
		[ "$h" = "$2" ] && { echo "$3-$n"; return 0; }
	done
	fail "$1: no name homed on node$2"
}
