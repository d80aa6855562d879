#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# OCFS2 over rdlm against OCFS2 over its classic o2cb stack (o2dlm over
# TCP, disk heartbeat), in one boot of the test cluster, on the same shared
# disk (/dev/vda), nodes 1 and 2 (others leave). A benchmark, not a test:
# nothing is asserted on time; it fails only when a stack does not work.
# For each stack in OCFS2_BENCH_STACKS (default "o2cb rdlm"), in turn:
#  - rdlm: mkfs.ocfs2 with the user stack label (pcmk), the file system's
#    rdlm lockspace on both nodes (central engine, 64-byte LVBs, no
#    lease), mount -i, as ocfs2.sh does (Documentation/ocfs2.rst);
#  - o2cb: the o2cb cluster registered in configfs with the o2cb tool
#    from a cluster.conf in /tmp (no init script, no /etc/ocfs2: the
#    guests' root is read-only), mkfs.ocfs2 --cluster-stack=o2cb, mount
#    through mount.ocfs2, which starts the local disk heartbeat; umount
#    stops it (the kernel runs ocfs2_hb_ctl);
#  then the same measurements (ocfs2_bench_helper):
#  - a metadata ping-pong in one directory: node 1 creates a file, node 2
#    stats the name until it appears and creates the next one, node 1
#    stats until that one appears, and so on, OCFS2_BENCH_ROUNDS (400)
#    files after OCFS2_BENCH_WARMUP (20) untimed ones: per operation
#    p50 and p99 of the create, of the stat that found the other node's
#    file, and of the round trip (own create to the other's answer seen);
#  - the concurrent workload of ocfs2.sh (both nodes at once: write,
#    append, rename, delete every third, list; OCFS2_BENCH_FILES (50)
#    files in a shared and in an own directory), OCFS2_BENCH_REPEAT (3)
#    times in new directories: its wall time (the slower node's), median
#    of the runs; then each node reads back what the other wrote;
#  - mount and umount timed (the slower node), the packets both nodes
#    sent on eth0 counted per ping-pong round and per workload run;
#  - umount, stack down.
# Node 1 prints the table (stack, op, p50, p99, n, wall time, packets)
# and the command, and leaves it in $RDLM_OUT/ocfs2_bench.table; after a
# failure, what was measured until then. About 150 s on 2 cores.
#
#   flock /tmp/rdlm-vm.lock tools/cluster/run -q -n 2 -t 1200 -- \
#       bash -c 'cd build/selftests/rdlm && ./ocfs2_bench.sh'
#
# Under TCG every verb and every TCP round trip takes hundreds of
# microseconds with heavy jitter: compare the stacks within one run only.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
O2_KO=${O2_KO:-$PWD/ocfs2_stack_rdlm.ko}
HELPER=$PWD/ocfs2_bench_helper
DISK=${OCFS2_DISK:-/dev/vda}
# o2cb first: a failure of the rdlm run (Documentation/ocfs2.rst) cannot
# cost the baseline's numbers
STACKS=${OCFS2_BENCH_STACKS:-o2cb rdlm}
ROUNDS=${OCFS2_BENCH_ROUNDS:-400}
WARMUP=${OCFS2_BENCH_WARMUP:-20}
FILES=${OCFS2_BENCH_FILES:-50}
REPEAT=${OCFS2_BENCH_REPEAT:-3}
RDLM_CLUSTER=rdlmocfs2
O2CB_CLUSTER=rdlmo2cb
O2CB_PORT=7777
RDLMCTL=$REPO/userspace/rdlmctl
# the rdlm lockspace as ocfs2.sh makes it (the reasons are in ocfs2_lib.sh)
LS_ATTRS=(engine=central atomic_mode=nic lvb_len=64 lease_us=0
	nr_reqs=16384 mailbox_slots=256)
MNT=/run/ocfs2-bench
HB_CTL=/proc/sys/fs/ocfs2/nm/hb_ctl_path
O2CB_CFS=/sys/kernel/config/cluster/$O2CB_CLUSTER
O2CB_CONF=/tmp/ocfs2-bench.cluster.conf
RES=$RDLM_OUT/ocfs2b

if ! command -v mkfs.ocfs2 >/dev/null || ! command -v o2cb >/dev/null; then
	echo "SKIP: ocfs2-tools are not installed (tools/setup)"
	exit $ksft_skip
fi
[ -f "$O2_KO" ] || { echo "SKIP: $O2_KO not built"; exit $ksft_skip; }
[ -x "$HELPER" ] || { echo "SKIP: $HELPER not built"; exit $ksft_skip; }
# no udev in the guests: the disk's node may come a moment after the module
modprobe virtio_blk 2>/dev/null
timeout 5 bash -c "until [ -b $DISK ]; do sleep 0.1; done" ||
	{ echo "SKIP: no shared disk $DISK"; exit $ksft_skip; }
modprobe ocfs2 || { echo "SKIP: no ocfs2 module"; exit $ksft_skip; }
# ocfs2_stack_rdlm registers as "user": fs/dlm's plugin must not be there
! grep -q "^ocfs2_stack_user " /proc/modules || rmmod ocfs2_stack_user ||
	{ echo "SKIP: ocfs2_stack_user is loaded and busy"; exit $ksft_skip; }
if [ "$ME" -gt 2 ]; then
	echo "node$ME: not one of the 2 benchmark nodes"
	exit 0
fi
NODES=2
CONF=$(mktemp /tmp/ocfs2-bench.XXXXXX.conf)
grep "^node " "$REPO/tools/cluster/cluster.conf" | head -n 2 >"$CONF"
fabric_test ocfs2_bench "$CONF"

bench_cleanup()
{
	local rc=$?

	if [ "$rc" != 0 ]; then
		echo w >/proc/sysrq-trigger
		sleep 1
		dmesg | sed -n "/${KMSG_MARK:-^}/,\$p" | tail -n 120
		if [ "$ME" = 1 ]; then
			echo "node1: what was measured before the failure:"
			report | tee "$RDLM_OUT/ocfs2_bench.table"
		fi
		# not mountpoint(1): its stat would hang on a blocked OCFS2
		if grep -q " $MNT " /proc/mounts; then
			# as in ocfs2.sh: an unmount after lock errors can
			# end in OCFS2's BUG; the guest is powered off mounted
			echo "node$ME: OCFS2 left mounted after the failure"
			touch "$RDLM_OUT/abort.ocfs2_bench.$ME"
			exit "$rc"
		fi
	fi
	(exit $rc)
	fabric_cleanup
}
trap bench_cleanup EXIT

# within SECS WHAT CMD...: run CMD, fail when it has not ended after SECS
# (OCFS2 waits in D state: no signal would end it, so no timeout(1))
within()
{
	local secs=$1 what=$2 pid end

	shift 2
	"$@" &
	pid=$!
	end=$((SECONDS + secs))
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS <= end)) || fail "$what: not done after $secs s"
		sleep 0.2
	done
	wait "$pid" || fail "$what"
}

# mkfs_disk STACK CLUSTER: node 1 formats the shared disk (over an earlier
# file system mkfs.ocfs2 asks, -F or not)
mkfs_disk()
{
	[ "$ME" = 1 ] || return 0
	yes | mkfs.ocfs2 -F -q -b 4K -C 4K -N 2 -L "bench-$1" \
		--cluster-stack="$1" --cluster-name="$2" "$DISK" ||
		fail "mkfs.ocfs2 --cluster-stack=$1"
	sync
}

rdlm_up()
{
	local ls

	rdlm_loaded && rdlm_reset
	rdlm_load
	"$CONFIGURE" -f "$CONF" up || fail "configure"
	insmod "$O2_KO" || fail "insmod $O2_KO"
	echo pcmk >/sys/fs/ocfs2/cluster_stack || fail "cluster_stack pcmk"
	# no o2cb heartbeat group to leave at umount
	echo /bin/true >$HB_CTL
	barrier ob-rdlm-ready 300
	mkfs_disk pcmk $RDLM_CLUSTER
	[ "$ME" = 1 ] && tunefs.ocfs2 -Q '%U\n' "$DISK" | tr -d -- '-\n' |
		tr a-f A-F >"$RES.uuid"
	barrier ob-rdlm-mkfs 300
	ls=$(cat "$RES.uuid")
	[[ "$ls" =~ ^[0-9A-F]{32}$ ]] || fail "file system UUID '$ls'"
	FABRIC_LS=$ls
	"$RDLMCTL" join "$ls" members=1,2 "${LS_ATTRS[@]}" || fail "rdlmctl join $ls"
	st "wait $ls 90"
	barrier ob-rdlm-ls 120
}

rdlm_mount()
{
	mount -i -t ocfs2 -o cluster_stack=pcmk,noatime "$DISK" $MNT
}

rdlm_down()
{
	rmmod ocfs2_stack_rdlm || fail "rmmod ocfs2_stack_rdlm"
	"$CONFIGURE" -f "$CONF" down || fail "configure down"
	rdlm_unload
	FABRIC_LS=
}

o2cb_up()
{
	local name id addr

	modprobe -a ocfs2_stack_o2cb ocfs2_dlmfs || fail "modprobe ocfs2_stack_o2cb"
	echo o2cb >/sys/fs/ocfs2/cluster_stack || fail "cluster_stack o2cb"
	# at umount the kernel runs it to stop this node's disk heartbeat
	echo /sbin/ocfs2_hb_ctl >$HB_CTL
	rm -f $O2CB_CONF
	o2cb --config-file=$O2CB_CONF add-cluster $O2CB_CLUSTER ||
		fail "o2cb add-cluster"
	# the nodes of the test cluster; o2cb marks local the one named
	# after this host (node<id>)
	while read -r _ name id addr _; do
		o2cb --config-file=$O2CB_CONF add-node $O2CB_CLUSTER "$name" \
			--ip "$addr" --port $O2CB_PORT --number "$id" ||
			fail "o2cb add-node $name"
	done <"$CONF"
	o2cb --config-file=$O2CB_CONF register-cluster $O2CB_CLUSTER ||
		fail "o2cb register-cluster: $(cat $O2CB_CONF)"
	[ "$(cat "$O2CB_CFS/node/node$ME/local" 2>&1)" = 1 ] ||
		fail "o2cb: node$ME is not the local node: $(grep -r . "$O2CB_CFS/node" 2>&1)"
	echo "node$ME: o2cb cluster $O2CB_CLUSTER registered: heartbeat $(cat "$O2CB_CFS/heartbeat/mode"), dead threshold $(cat "$O2CB_CFS/heartbeat/dead_threshold"), idle $(cat "$O2CB_CFS/idle_timeout_ms") ms, keepalive $(cat "$O2CB_CFS/keepalive_delay_ms") ms"
	barrier ob-o2cb-ready 300
	mkfs_disk o2cb $O2CB_CLUSTER
	barrier ob-o2cb-mkfs 300
}

# mount.ocfs2 starts the disk heartbeat, then the kernel waits until it is
# connected to every node heartbeating on the disk (60 s at most)
o2cb_mount()
{
	mount -t ocfs2 -o noatime "$DISK" $MNT
}

# teardown WHAT: a stack's teardown went wrong (said with the table)
teardown()
{
	echo "node$ME: $*" | tee -a "$RES.teardown.$ME"
}

o2cb_down()
{
	local i region

	# the heartbeat region ends with the umount (ocfs2_hb_ctl -K)
	for ((i = 0; i < 100; i++)); do
		region=$(find "$O2CB_CFS/heartbeat" -mindepth 1 -maxdepth 1 -type d)
		[ -z "$region" ] && break
		sleep 0.1
	done
	# the measurements are done: what goes wrong from here on is said, in
	# the table too, and the run goes on
	if [ -n "$region" ]; then
		teardown "heartbeat region ${region##*/} still there 10 s after umount: ocfs2_hb_ctl -K"
		ocfs2_hb_ctl -K -u "${region##*/}" ocfs2 || rmdir "$region" ||
			teardown "could not stop the heartbeat"
	fi
	barrier ob-o2cb-hb-stopped 300
	o2cb --config-file=$O2CB_CONF unregister-cluster $O2CB_CLUSTER ||
		teardown "o2cb unregister-cluster failed"
}

pingpong()
{
	"$HELPER" pingpong $MNT/pp "$ME" "$ROUNDS" "$WARMUP" >"$RES.$1.pp.$ME"
}

workload()
{
	local out

	out=$("$HELPER" workload "$MNT/w$2" "$ME" "$FILES") || return 1
	echo "$2 ${out#W }" >>"$RES.$1.w.$ME"
}

# timed STACK WHAT SECS CMD...: within, this node's time in $RES.STACK.WHAT
timed()
{
	local t0=$EPOCHREALTIME

	within "$3" "$1: $2" "${@:4}"
	awk -v t0="$t0" -v t1="$EPOCHREALTIME" \
		'BEGIN { printf "1 %.0f\n", (t1 - t0) * 1000 }' >"$RES.$1.$2.$ME"
}

# counted STACK WHAT RUN CMD...: CMD, and the packets this node sent on
# eth0 meanwhile (a unit both stacks share: RoCE's UDP for rdlm, o2net's
# TCP for o2cb, acknowledgements included) as "RUN N" in $RES.STACK.pkts-WHAT
counted()
{
	local f=/sys/class/net/eth0/statistics/tx_packets p0

	p0=$(cat $f)
	"${@:4}"
	echo "$3 $(($(cat $f) - p0))" >>"$RES.$1.pkts-$2.$ME"
}

# bench STACK: mount, the measurements, umount
bench()
{
	local s=$1 k n

	barrier "ob-$s-mount" 300
	timed "$s" mount 300 "${s}_mount"
	barrier "ob-$s-mounted" 300
	echo "node$ME: $s: mounted: $(grep " $MNT " /proc/mounts)"
	if [ "$ME" = 1 ]; then
		mkdir $MNT/pp || fail "mkdir $MNT/pp"
		for ((k = 1; k <= REPEAT; k++)); do
			mkdir "$MNT/w$k" || fail "mkdir $MNT/w$k"
		done
	fi
	: >"$RES.$s.w.$ME"
	barrier "ob-$s-pp" 300
	counted "$s" pp 1 within 900 "$s: ping-pong" pingpong "$s"
	echo "node$ME: $s: ping-pong done"
	for ((k = 1; k <= REPEAT; k++)); do
		barrier "ob-$s-w$k" 900
		counted "$s" w $k within 300 "$s: workload $k" workload "$s" $k
	done
	barrier "ob-$s-w-done" 600
	echo "node$ME: $s: workload times (run ms): $(xargs <"$RES.$s.w.$ME")"
	for ((k = 1; k <= REPEAT; k++)); do
		for n in 1 2; do
			"$HELPER" check "$MNT/w$k" $n "$FILES" ||
				fail "$s: node$n's files of run $k, read on node$ME"
		done
	done
	echo "node$ME: $s: both nodes' files read back alike"
	barrier "ob-$s-checked" 600
	timed "$s" umount 300 umount $MNT
	barrier "ob-$s-umounted" 300
}

# stats OP: "p50 p99 n" of the samples of OP (microseconds, nearest rank)
stats()
{
	awk -v op="$1" '$1 == "S" && $2 == op { print $3 }' "${@:2}" 2>/dev/null | sort -n |
		awk '{ v[NR] = $1 }
		function rank(p) { r = int(NR * p + 0.9999); return v[r < 1 ? 1 : r] }
		END { if (NR) printf "%.0f %.0f %d\n", rank(0.50), rank(0.99), NR
		      else print "- - 0" }'
}

# wall STACK WHAT: "median runs list" of WHAT's wall times (ms, the slower
# node's), the list in the order of the runs
wall()
{
	local times

	times=$(cat "$RES.$1.$2."[12] 2>/dev/null | awk '$2 > m[$1] { m[$1] = $2 }
		END { for (k in m) print k, m[k] }' | sort -n | awk '{ print $2 }')
	[ -n "$times" ] || { echo "- 0 -"; return; }
	echo "$(sort -n <<<"$times" | awk '{ v[NR] = $1 }
		END { print NR ? v[int((NR + 1) / 2)] : "-", NR }') $(paste -sd, <<<"$times")"
}

# shown_command: the run's command ($RDLM_OUT/command, printf %q words)
# as one would type it
shown_command()
{
	local -a cmd
	local w q="'"

	eval "cmd=($(cat "$RDLM_OUT/command" 2>/dev/null))"
	for w in "${cmd[@]}"; do
		if [[ "$w" =~ ^[-A-Za-z0-9_./=,:]+$ ]]; then
			printf ' %s' "$w"
		else
			printf " '%s'" "${w//$q/$q\\$q$q}"
		fi
	done
}

# packets STACK WHAT PER: packets both nodes sent during WHAT, per PER
# (rounds, runs)
packets()
{
	cat "$RES.$1.pkts-$2."[12] 2>/dev/null |
		awk -v per="$3" '{ s += $2 } END { print NR ? int(s / per + 0.5) : "-" }'
}

row()
{
	printf '%-6s %-21s %9s %9s %5s %9s %8s\n' "$@"
}

report()
{
	local s op p50 p99 n med runs list pk
	local -A label=([create]="create" [stat]="stat until it appears"
			[rtt]="round trip")

	row stack op p50_us p99_us n wall_ms packets
	for s in $STACKS; do
		for op in create stat rtt; do
			read -r p50 p99 n < <(stats $op "$RES.$s.pp."[12])
			pk=-
			[ $op = rtt ] && pk=$(packets "$s" pp $((ROUNDS + WARMUP)))
			row "$s" "${label[$op]}" "$p50" "$p99" "$n" - "$pk"
		done
		read -r med runs list < <(wall "$s" w)
		row "$s" "concurrent workload" - - "$runs" "$med" \
			"$(packets "$s" w "$REPEAT")"
		echo "       ($s workload runs, ms: $list)"
		for op in mount umount; do
			read -r med runs list < <(wall "$s" $op)
			row "$s" "$op" - - - "$med" -
		done
	done
	echo "ping-pong: $ROUNDS rounds after $WARMUP (both nodes' samples); workload: $FILES files x 2 directories per node, $REPEAT runs, median of the slower node's time"
	echo "packets: sent on eth0 by both nodes, per ping-pong round (warm-up included) and per workload run"
	echo "command: tools/cluster/run -n 2 --$(shown_command)"
	cat "$RES.teardown."[12] 2>/dev/null | sed 's/^/teardown: /'
	echo "guest kernel $(uname -r), $(nproc) CPU per node, TCG"
}

rm -f "$RES".*."$ME"
kmsg_mark
mkdir -p $MNT
for s in $STACKS; do
	case $s in
	rdlm|o2cb) ;;
	*) fail "OCFS2_BENCH_STACKS: '$s' is neither rdlm nor o2cb" ;;
	esac
	echo "node$ME: $s: setting up"
	"${s}_up"
	bench "$s"
	"${s}_down"
	echo "node$ME: $s: done"
done
trap fabric_cleanup EXIT
rm -f "$CONF"
kmsg_check
barrier ob-done 300
if [ "$ME" = 1 ]; then
	report | tee "$RDLM_OUT/ocfs2_bench.table"
fi
