# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the rdlm selftests (sourced, not run).

ksft_skip=4
RDLM_KO=${RDLM_KO:-$PWD/rdlm.ko}
TROUBLE=${TROUBLE:-$PWD/kernel-trouble.patterns}
CFS=/sys/kernel/config/rdlm
DBG=/sys/kernel/debug/rdlm

fail()
{
	echo "FAIL: $*"
	exit 1
}

require_root()
{
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit $ksft_skip; }
}

rdlm_loaded()
{
	[ -d /sys/module/rdlm ]
}

rdlm_load()
{
	modprobe -a configfs ib_core || fail "cannot load configfs and ib_core"
	insmod "$RDLM_KO" || fail "insmod $RDLM_KO"
}

rdlm_unload()
{
	rmmod rdlm || fail "rmmod rdlm"
}

# Unload what an earlier test left behind, configured or not (a failed test
# may leave lockspaces and nodes in configfs, which pin the module): each
# test starts from nothing, whatever the one before it did.
rdlm_reset()
{
	local d

	for d in "$CFS"/lockspaces/*/; do
		[ -d "$d" ] || continue
		echo 0 >"$d/enable" 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	for d in "$CFS"/nodes/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	grep -q "^rdlm_torture " /proc/modules && rmmod rdlm_torture
	rdlm_unload
}

# Mark the kernel log, so that kmsg_check looks only at what came after.
kmsg_mark()
{
	KMSG_MARK="rdlm-selftest-mark-$$-$(date +%s%N)"
	echo "$KMSG_MARK" >/dev/kmsg
}

kmsg_check()
{
	local trouble

	trouble=$(dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -E -f "$TROUBLE")
	[ -z "$trouble" ] || fail "kernel log: $trouble"
}

# expect_fail ERRTEXT CMD...: CMD must fail and say ERRTEXT
expect_fail()
{
	local want=$1 out

	shift
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected '$want'"
	fi
	case $out in
	*"$want"*) ;;
	*) fail "'$*' said '$out', expected '$want'" ;;
	esac
}

# wait_file FILE: wait (60 s at most) for FILE to exist, else fail
wait_file()
{
	local i

	for ((i = 0; i < 600; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "$1 did not appear in 60 s"
}

# long_leases LS...: give the lockspaces a 60 s lease. Under TCG a holder
# can wait for another node longer than the lk-* lockspaces' 2 s lease,
# after which the bakery and central report it lost, let waiters in and
# mark the LVBs it was writing invalid: tests that check exact outcomes
# take leases out of the picture this way.
long_leases()
{
	local ls

	for ls in "$@"; do
		echo 0 >$CFS/lockspaces/$ls/enable &&
			echo 60000000 >$CFS/lockspaces/$ls/lease_us &&
			echo 1 >$CFS/lockspaces/$ls/enable || fail "$ls: lease"
	done
}

# local_node ID: configure this node alone as node ID (configfs nodes/self)
local_node()
{
	mkdir $CFS/nodes/self &&
		echo "$1" >$CFS/nodes/self/nodeid &&
		echo "${RDLM_NODE_IP:-127.0.0.1}" >$CFS/nodes/self/address &&
		echo 1 >$CFS/nodes/self/local || fail "configure this node"
}

# Faults, through the test cluster's hooks (tools/cluster/run's header): the
# control files are in $RDLM_OUT, shared by the host and every node, so any
# node can cut any pair or kill any node.
cluster_hooks()
{
	[ -n "${RDLM_OUT:-}" ] && [ -d "$RDLM_OUT" ] ||
		fail "fault hooks need the test cluster (RDLM_OUT is not set)"
}

# Wait (10 s at most) until the hub applies the rules file as it is now.
hub_wait()
{
	local i

	for ((i = 0; i < 100; i++)); do
		cmp -s "$RDLM_OUT/hub.rules" "$RDLM_OUT/hub.rules.active" && return 0
		sleep 0.1
	done
	fail "the hub did not apply $RDLM_OUT/hub.rules in 10 s"
}

# hub_cut A B: the hub stops forwarding frames between nodeA and nodeB, both
# ways, without a word to either (their links stay up). In force on return.
hub_cut()
{
	cluster_hooks
	echo "cut $1 $2" >>"$RDLM_OUT/hub.rules" || fail "hub_cut $1 $2"
	hub_wait
}

# hub_heal_pair A B: forward between nodeA and nodeB again (either order).
hub_heal_pair()
{
	local tmp

	cluster_hooks
	tmp=$RDLM_OUT/hub.rules.${RDLM_NODE_ID:-x}.$$
	# a new file renamed over the old: the hub never sees a half-written one
	awk -v a="$1" -v b="$2" \
	    '!($1 == "cut" && (($2 == a && $3 == b) || ($2 == b && $3 == a)))' \
	    "$RDLM_OUT/hub.rules" >"$tmp" && mv "$tmp" "$RDLM_OUT/hub.rules" ||
		fail "hub_heal_pair $1 $2"
	hub_wait
}

# hub_heal: drop every rule, everyone is connected again.
hub_heal()
{
	cluster_hooks
	: >"$RDLM_OUT/hub.rules" || fail "hub_heal"
	hub_wait
}

# kill_node N: power node N off hard (its QEMU gets SIGKILL: no shutdown,
# no goodbye on the wire). Returns once node N is gone, fails after 30 s.
# The run then counts node N as "killed", not as failed.
kill_node()
{
	local i rc

	cluster_hooks
	: >"$RDLM_OUT/kill.node$1" || fail "kill_node $1"
	for ((i = 0; i < 300; i++)); do
		rc=$(cat "$RDLM_OUT/node$1.rc" 2>/dev/null || true)
		[ "$rc" = killed ] && return 0
		[ -n "$rc" ] && fail "kill_node $1: node$1 had already ended ($rc)"
		sleep 0.1
	done
	fail "kill_node $1: node$1 still runs after 30 s"
}

# boot_node N COMMAND: boot node N again after kill_node, as a machine that
# was reset; it runs COMMAND (bash, from the top of the repository, with
# RDLM_BOOT set to its boot count, 2 the first time) instead of the run's
# command.
# Returns once the request is taken, fails after 30 s.
boot_node()
{
	local i

	cluster_hooks
	printf '%s\n' "$2" >"$RDLM_OUT/boot.node$1.tmp" &&
		mv "$RDLM_OUT/boot.node$1.tmp" "$RDLM_OUT/boot.node$1" ||
		fail "boot_node $1"
	for ((i = 0; i < 300; i++)); do
		[ -e "$RDLM_OUT/boot.node$1" ] || return 0
		sleep 0.1
	done
	fail "boot_node $1: request not taken in 30 s"
}

# link_flap SECONDS: take this node's eth0 (and so rxe0's port) down for
# SECONDS, then up again.
link_flap()
{
	ip link set eth0 down || fail "link_flap: eth0 down"
	sleep "$1"
	ip link set eth0 up || fail "link_flap: eth0 up"
}
