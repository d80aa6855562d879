# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the rdlm selftests (sourced, not run).

ksft_skip=4
RDLM_KO=${RDLM_KO:-$PWD/rdlm.ko}
TROUBLE=${TROUBLE:-$PWD/kernel-trouble.patterns}
CFS=/sys/kernel/config/rdlm
DBG=/sys/kernel/debug/rdlm
# the critical-section check (cs_check.h) keeps each test's names apart
export RDLM_CS_SCOPE=${0##*/}

fail()
{
	echo "FAIL: $*"
	exit 1
}

# idle SECS: sleep without a fork ("read -t" on a FIFO nobody writes to),
# for loops that wait while another node or thread measures
idle()
{
	local f

	if [ -z "${IDLE_FD:-}" ]; then
		f=$(mktemp -u) && mkfifo "$f" || { sleep "$1"; return 0; }
		exec {IDLE_FD}<>"$f" || { rm -f "$f"; sleep "$1"; return 0; }
		rm -f "$f"
	fi
	# a timeout is a status above 128; anything else did not sleep
	read -rt "$1" -u "$IDLE_FD" || [ $? -gt 128 ] || sleep "$1"
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

	# an earlier test's rdlm_controld would join the groups again
	[ -e $MEMB_CONTROLD_PID ] || [ -e $MEMB_COROSYNC_PID ] && membership_stop
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

# lock_waiting LS NAME [SECS]: within SECS (10), this node lists a lock of
# NAME in LS as waiting (debugfs): requested, not granted
lock_waiting()
{
	local hex i

	hex=$(printf %s "$2" | od -An -tx1 | tr -d ' \n')
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		grep -q "^lock [0-9]* waiting .* name $hex$" "$DBG/ls/$1" &&
			return 0
		sleep 0.1
	done
	return 1
}

# wait_file FILE [SECS [WHAT]]: wait (60 s by default) for FILE to exist,
# else fail (saying WHAT did not come)
wait_file()
{
	local i secs=${2:-60}

	for ((i = 0; i < secs * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "${3:-$1} did not appear in $secs s"
}

# want_lines FILE LINE...: FILE has every LINE, whole, else fail
want_lines()
{
	local f=$1 l

	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$f" ||
			{ cat "$f"; fail "no \"$l\" in $(basename "$f")"; }
	done
}

# helper_pid FILE: the pid a helper printed first ("pid N") into FILE
helper_pid()
{
	sed -n 's/^pid //p' "$1"
}

# nothing_left WHAT [LS]: no open file, lock or event of the device, and
# no lock in lockspace LS (default $LS, "" for none). What a closed or
# killed file leaves ends in the background (close() waits 0.5 s): 30 s
# allowed for slow kernels and loaded hosts, the time printed past 1 s.
nothing_left()
{
	local i ls=${2-$LS}

	for ((i = 0; i < 300; i++)); do
		if [ "$(cat $DBG/dev)" = "$(printf 'files 0\nlocks 0\nevents 0')" ] &&
		   { [ -z "$ls" ] || grep -q " locks 0$" $DBG/ls/$ls; }; then
			[ $i -lt 10 ] || echo "$1: all gone after $((i / 10)) s"
			return 0
		fi
		sleep 0.1
	done
	[ -z "$ls" ] || cat $DBG/ls/$ls
	fail "left behind 30 s after $1: $(cat $DBG/dev)"
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
		ls_set "$ls" lease_us=60000000
	done
}

# ls_set LS KEY=VALUE...: write configfs attributes of LS, disabled around
# the writes (an enabled lockspace refuses most changes); it restarts
ls_set()
{
	local ls=$1 kv

	shift
	echo 0 >"$CFS/lockspaces/$ls/enable" || fail "$ls: disable"
	for kv in "$@"; do
		echo "${kv#*=}" >"$CFS/lockspaces/$ls/${kv%%=*}" ||
			fail "$ls: $kv"
	done
	echo 1 >"$CFS/lockspaces/$ls/enable" || fail "$ls: enable"
}

# reads_records LS: does this node read LVBs of LS by RDMA READ of the
# home's record (NIC-atomic mode, lvb_read on, an engine that peeks)?
reads_records()
{
	[ "$(cat "$CFS/lockspaces/$1/atomic_mode")" = nic ] &&
		[ "$(cat "$CFS/lockspaces/$1/lvb_read")" = 1 ] &&
		case $(cat "$CFS/lockspaces/$1/engine") in
		bakery | dqnl | ncosed) true ;;
		*) false ;;
		esac
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

# pause_node N stop|cont: node N's QEMU stops running its CPUs (a VM
# paused, a machine hung: its memory, clocks and connections as they were),
# or runs them again (QEMU's stop and cont on its monitor). Returns once the
# monitor ran it, fails after 30 s.
pause_node()
{
	hook_request "pause.node$1" "$2" "pause_node $1 $2"
}

# boot_node N COMMAND: boot node N again after kill_node, as a machine that
# was reset; it runs COMMAND (bash, from the top of the repository, with
# RDLM_BOOT set to its boot count, 2 the first time) instead of the run's
# command.
# Returns once the request is taken, fails after 30 s.
boot_node()
{
	hook_request "boot.node$1" "$2" "boot_node $1"
}

# hook_request FILE TEXT WHAT: hand tools/cluster/run the request FILE in
# $RDLM_OUT, whole (written aside, then moved: the harness reads it as soon
# as it exists), and wait until it took it (removed the file); fails after
# 30 s, naming WHAT
hook_request()
{
	local i

	cluster_hooks
	printf '%s\n' "$2" >"$RDLM_OUT/$1.tmp" &&
		mv "$RDLM_OUT/$1.tmp" "$RDLM_OUT/$1" || fail "$3"
	for ((i = 0; i < 300; i++)); do
		[ -e "$RDLM_OUT/$1" ] || return 0
		sleep 0.1
	done
	fail "$3: request not taken in 30 s"
}

# link_carrier down|up: pull this node's cable or plug it back (the test
# cluster's QEMU drops or restores its NIC's carrier); returns once eth0
# sees it, and with it rxe0's port
link_carrier()
{
	local want=1 i

	[ "$1" = down ] && want=0
	cluster_hooks
	echo "$1" >"$RDLM_OUT/link.node$RDLM_NODE_ID.tmp" &&
		mv "$RDLM_OUT/link.node$RDLM_NODE_ID.tmp" \
			"$RDLM_OUT/link.node$RDLM_NODE_ID" ||
		fail "link_carrier $1"
	for ((i = 0; i < 300; i++)); do
		[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = $want ] &&
			return 0
		sleep 0.1
	done
	fail "link_carrier $1: eth0's carrier did not follow in 30 s"
}

# link_flap SECONDS: this node's link goes down for SECONDS, then up again,
# as when a cable is pulled: frames sent either way meanwhile are lost; eth0
# stays configured.
link_flap()
{
	link_carrier down
	sleep "$1"
	link_carrier up
}

# Cluster membership from corosync: membership_start runs corosync and
# rdlm_controld(8) on this node of the test cluster, membership_stop stops
# them. corosync's configuration comes from tools/cluster/corosync-conf (the
# nodes of cluster.conf up to RDLM_NODES); its log is
# $RDLM_OUT/node<id>.corosync.log, rdlm_controld's
# $RDLM_OUT/node<id>.controld.log. The guests' root file system is the
# host's, read only: corosync gets tmpfs on /etc/corosync (for its
# configuration) and /var/lib/corosync.
MEMB_CONTROLD_PID=/run/rdlm_controld.pid
MEMB_COROSYNC_PID=/run/corosync.pid

membership_log()
{
	echo "$RDLM_OUT/node${RDLM_NODE_ID:-1}.controld.log"
}

# membership_start: corosync on this node, wait (60 s at most) until it
# counts all RDLM_NODES nodes and is quorate, then rdlm_controld. Every
# node of the run must call it.
membership_start()
{
	local repo=${RDLM_REPO:-$(cd ../../.. && pwd)} id=${RDLM_NODE_ID:-1}
	local i d st nodes quorate

	cluster_hooks
	for d in /etc/corosync /var/lib/corosync; do
		mountpoint -q $d || mount -t tmpfs -o mode=0755 tmpfs $d ||
			fail "tmpfs on $d"
	done
	"$repo/tools/cluster/corosync-conf" -N "${RDLM_NODES:-1}" \
		-l "$RDLM_OUT/node$id.corosync.log" >/etc/corosync/corosync.conf ||
		fail "corosync.conf"
	# not on the test's stdout: the kselftest runner would wait for it
	corosync -f </dev/null >>"$RDLM_OUT/node$id.corosync.log" 2>&1 &
	for ((i = 0; i < 120; i++)); do
		st=$(corosync-quorumtool -s 2>/dev/null)
		nodes=$(sed -n 's/^Nodes: *//p' <<<"$st")
		quorate=$(sed -n 's/^Quorate: *//p' <<<"$st")
		[ "$nodes" = "${RDLM_NODES:-1}" ] && [ "$quorate" = Yes ] && break
		kill -0 $! 2>/dev/null || fail "corosync exited: $(tail -n 5 "$RDLM_OUT/node$id.corosync.log")"
		sleep 0.5
	done
	[ "$nodes" = "${RDLM_NODES:-1}" ] && [ "$quorate" = Yes ] ||
		fail "corosync: ${nodes:-no} nodes, quorate ${quorate:-?} after 60 s"
	controld_start
}

# controld_start: rdlm_controld on this node (corosync runs), in the
# background; returns once it has started. Its fence device is the test
# cluster's power switch (tools/cluster/fence_rdlm_vm), which switches a
# node's VM off; with RDLM_FENCE_DELAY=S it waits S seconds first, with
# RDLM_FENCE=0 there is none (departed nodes wait for a fence_ack).
controld_start()
{
	local repo=${RDLM_REPO:-$(cd ../../.. && pwd)} i logged
	local conf=/tmp/rdlm_controld.conf

	: >$conf || fail "$conf"
	if [ "${RDLM_FENCE:-1}" = 1 ]; then
		echo "device vm $repo/tools/cluster/fence_rdlm_vm out=$RDLM_OUT delay=${RDLM_FENCE_DELAY:-0}"
		for i in $(seq 1 "${RDLM_NODES:-1}"); do
			echo "connect vm node=$i port=$i"
		done
	fi >>$conf
	# the log may hold an earlier start: look at what comes now
	logged=$(cat "$(membership_log)" 2>/dev/null | wc -l)
	"$repo/userspace/rdlm_controld" -f -D -c $conf </dev/null >>"$(membership_log)" 2>&1 &
	for ((i = 0; i < 100; i++)); do
		tail -n +$((logged + 1)) "$(membership_log)" |
			grep -q "rdlm_controld: started" && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.1
	done
	fail "rdlm_controld did not start: $(tail -n 5 "$(membership_log)")"
}

# stop_pidfile FILE: SIGTERM to the process of a pid file, SIGKILL if it
# is still there after 30 s
stop_pidfile()
{
	local pid i

	pid=$(cat "$1" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
	for ((i = 0; i < 300; i++)); do
		[ -d "/proc/$pid" ] || break
		grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
		sleep 0.1
	done
	if ((i == 300)); then
		echo "membership_stop: $1: pid $pid ignored SIGTERM, killed"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	rm -f "$1"
}

# membership_stop: rdlm_controld (it leaves its groups), then corosync
membership_stop()
{
	stop_pidfile $MEMB_CONTROLD_PID
	stop_pidfile $MEMB_COROSYNC_PID
	umount /etc/corosync /var/lib/corosync 2>/dev/null
	return 0
}

# membership_now LS: this node's current membership of LS, "EPOCH QUORATE
# NODEID...": the kernel's membership file if it reads back that way, else
# the last one rdlm_controld logged (kernels without membership support)
membership_now()
{
	local line

	line=$(head -n 1 "$CFS/lockspaces/$1/membership" 2>/dev/null)
	if [[ $line =~ ^[0-9]+\ [01](\ [0-9]+)+$ ]]; then
		echo "$line"
		return
	fi
	sed -n "s/^.* rdlm_controld: $1: membership \([0-9][0-9 ]*[0-9]\) ring .*/\1/p" \
		"$(membership_log)" | tail -n 1
}

# membership_wait [-a EPOCH] LS QUORATE NODEID...: wait (MEMBERSHIP_WAIT_S,
# 60 s at most) until LS's membership on this node is QUORATE with exactly
# these nodes (and, with -a, an epoch above EPOCH); sets MEMBERSHIP to it
membership_wait()
{
	local after=0 ls want i

	[ "$1" = -a ] && { after=$2; shift 2; }
	ls=$1
	shift
	want="$*"
	for ((i = 0; i < ${MEMBERSHIP_WAIT_S:-60} * 10; i++)); do
		MEMBERSHIP=$(membership_now "$ls")
		[ "${MEMBERSHIP#* }" = "$want" ] &&
			[ "${MEMBERSHIP%% *}" -gt "$after" ] && return 0
		sleep 0.1
	done
	fail "$ls: membership '${MEMBERSHIP:-none}', expected '<epoch> $want' after ${MEMBERSHIP_WAIT_S:-60} s"
}
