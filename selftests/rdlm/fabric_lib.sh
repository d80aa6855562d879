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

# barrier NAME [SECS]: wait until every node reached NAME (files in the
# cluster's shared output directory)
barrier()
{
	local name=$1 secs=${2:-120} i n

	touch "$RDLM_OUT/barrier.$name.$ME"
	for ((i = 0; i < secs * 10; i++)); do
		n=$(ls "$RDLM_OUT" | grep -c "^barrier\.$name\.")
		[ "$n" -ge "$NODES" ] && return 0
		sleep 0.1
	done
	fail "barrier $name: $n of $NODES nodes after $secs s"
}

# st CMD: run one fabric self-test command
st()
{
	echo "$*" >$ST 2>/dev/null ||
		fail "selftest '$*': $(cat $ST); $(dmesg | grep selftest | tail -n 3)"
}
