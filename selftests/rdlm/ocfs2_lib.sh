#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# OCFS2 over rdlm in the test cluster, for ocfs2.sh and ocfs2_kill.sh
# (Documentation/ocfs2.rst): the stack up, mkfs, the lockspace, the mount,
# the workload and its checks, the dumps at a failure. Source it after
# lib.sh and fabric_lib.sh.
O2_KO=${O2_KO:-$PWD/ocfs2_stack_rdlm.ko}
DISK=${OCFS2_DISK:-/dev/vda}
CLUSTER=${OCFS2_CLUSTER:-rdlmocfs2}
ENGINE=${OCFS2_ENGINE:-central}
RDLMCTL=$REPO/userspace/rdlmctl
# the lockspace's attributes: OCFS2's LVBs are 64 bytes; it holds its locks
# for as long as it caches what they cover (the journal's for the whole
# mount), so no lease, and engine requests for every word held (central
# hashes names to 31-bit words, so two names hardly ever share one: no
# table to size)
LS_ATTRS="engine=$ENGINE atomic_mode=nic lvb_len=64 lease_us=0"
LS_ATTRS+=" nr_reqs=16384 mailbox_slots=256"
# a table engine (OCFS2_ENGINE=ncosed or bakery): the largest table, so
# that names hardly share a word, and the most engine requests the mailbox
# allows (N-CoSED; the bakery writes no mailbox)
[ "$ENGINE" = central ] ||
	LS_ATTRS+=" table_size=1048576 mailbox_slots=65536"
# more by hand, for measurements (e.g. OCFS2_LS_ATTRS="omega_ns=100000")
LS_ATTRS+=${OCFS2_LS_ATTRS:+" $OCFS2_LS_ATTRS"}
LS=
# this run's files in the cluster's shared output directory: ocfs2.sh on
# another engine runs in the same boot, and must not see central's
O2_OUT=$RDLM_OUT/ocfs2$([ "$ENGINE" = central ] || echo "-$ENGINE")
STACK=pcmk
MNT=/run/rdlm-ocfs2
FILES=${OCFS2_FILES:-20}
SRC=/usr/src/linux-source-6.1.tar.xz
# the source node 1 unpacks: Documentation/filesystems (126 files in the
# archive's first 40 MB); OCFS2_SRC_PART a smaller part of it
SRC_PART=linux-source-6.1/Documentation/${OCFS2_SRC_PART:-filesystems}

# ocfs2_require: skip without OCFS2, its tools, the plugin or the disk
ocfs2_require()
{
	local i

	command -v mkfs.ocfs2 >/dev/null && command -v fsck.ocfs2 >/dev/null ||
		{ echo "SKIP: ocfs2-tools are not installed (tools/setup)"; exit $ksft_skip; }
	[ -f "$O2_KO" ] || { echo "SKIP: $O2_KO not built"; exit $ksft_skip; }
	[ -f "$SRC" ] || { echo "SKIP: $SRC missing (tools/setup)"; exit $ksft_skip; }
	modprobe virtio_blk 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		[ -b "$DISK" ] && break
		sleep 0.1
	done
	[ -b "$DISK" ] || { echo "SKIP: no shared disk $DISK"; exit $ksft_skip; }
	modprobe ocfs2 ||
		{ echo "SKIP: cannot load ocfs2 (CONFIG_OCFS2_FS)"; exit $ksft_skip; }
	if grep -q "^ocfs2_stack_user " /proc/modules; then
		rmmod ocfs2_stack_user ||
			{ echo "SKIP: ocfs2_stack_user is loaded and busy"; exit $ksft_skip; }
	fi
}

# ocfs2_dump: this node's OCFS2 and rdlm lock states and blocked tasks
ocfs2_dump()
{
	local f

	for f in /sys/kernel/debug/ocfs2/*/locking_state; do
		[ -e "$f" ] || continue
		echo "node$ME: $f (busy or blocked lock resources):"
		# name level flags action unlock_action ro ex requested blocking
		awk '/^0x/ { print $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$f" | head -n 200
		cp "$f" "$O2_OUT-locking.$ME"
	done
	# the whole lock table goes to the host (hundreds of cached locks);
	# the log gets the locks that wait or convert
	cp "$DBG/ls/$LS" "$O2_OUT-ls.$ME" 2>/dev/null
	grep -v "^lock .* granted " "$DBG/ls/$LS" 2>/dev/null | head -n 100
	echo w >/proc/sysrq-trigger
	sleep 1
	dmesg | sed -n '/sysrq: Show Blocked State/,$p' | tail -n 150
	for f in /proc/[0-9]*; do
		grep -q "^State:.*D (disk sleep)" $f/status 2>/dev/null || continue
		echo "node$ME: blocked ${f#/proc/} $(tr '\0' ' ' <$f/cmdline)"
		cat $f/stack 2>/dev/null
	done
}

# bounded PID SECS WHAT: wait for the background job PID; a job still
# running after SECS fails the test (OCFS2 waits in D state, unkillable)
bounded()
{
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null && fail "$3: not done in $2 s"
	wait "$1" || fail "$3"
}

# ocfs2_cleanup: the EXIT trap; after a failure the dumps, and OCFS2 stays
# mounted
ocfs2_cleanup()
{
	local rc=$?

	[ "$rc" != 0 ] && ocfs2_dump
	if [ "$rc" != 0 ] && mountpoint -q $MNT; then
		# unmounting after DLM errors can end in OCFS2's "Busy inodes
		# after unmount" BUG and a guest that never powers off; taking
		# the lockspace away would report OCFS2's locks lost: leave both
		# (the guest is powered off without unmounting)
		echo "node$ME: OCFS2 left mounted after the failure"
		touch "$RDLM_OUT/abort.$FABRIC_TEST.$ME"
		cat $DBG/peers $DBG/lockspaces 2>/dev/null
		exit "$rc"
	fi
	mountpoint -q $MNT && umount $MNT
	grep -q "^ocfs2_stack_rdlm " /proc/modules && rmmod ocfs2_stack_rdlm
	(exit $rc)
	fabric_cleanup
}

# ocfs2_stack_up CONF: rdlm with the nodes of CONF, the plugin, the label
ocfs2_stack_up()
{
	rdlm_loaded && rdlm_reset
	kmsg_mark
	rdlm_load
	"$CONFIGURE" -f "$1" up || fail "configure"
	insmod "$O2_KO" || fail "insmod $O2_KO"
	echo $STACK >/sys/fs/ocfs2/cluster_stack || fail "cluster_stack $STACK"
	# umount asks ocfs2_hb_ctl to leave the o2cb heartbeat group: not ours
	echo /bin/true >/proc/sys/fs/ocfs2/nm/hb_ctl_path
}

# ocfs2_mkfs: node 1 formats the disk for NODES nodes; sets LS, the UUID
ocfs2_mkfs()
{
	if [ "$ME" = 1 ]; then
		# over an earlier run's file system mkfs.ocfs2 asks, -F or not
		yes | mkfs.ocfs2 -F -q -b 4K -C 4K -N "$NODES" -L rdlm-ocfs2 \
			--cluster-stack=$STACK --cluster-name="$CLUSTER" "$DISK" ||
			fail "mkfs.ocfs2"
		sync
		# OCFS2 names its lockspace after the UUID: 32 upper-case hex
		tunefs.ocfs2 -Q '%U\n' "$DISK" | tr -d -- '-\n' | tr a-f A-F \
			>"$O2_OUT.uuid" || fail "tunefs.ocfs2 -Q %U"
	fi
	barrier ocfs2-mkfs 300
	LS=$(cat "$O2_OUT.uuid")
	[[ "$LS" =~ ^[0-9A-F]{32}$ ]] || fail "file system UUID '$LS'"
	FABRIC_LS=$LS
}

# ocfs2_join: the administrator's lockspace for this file system (the
# plugin would otherwise create it at mount from the template lockspace
# $CLUSTER)
ocfs2_join()
{
	"$RDLMCTL" join "$LS" members="$(seq -s, 1 "$NODES")" $LS_ATTRS ||
		fail "rdlmctl join $LS"
	st "wait $LS 90"
}

# ocfs2_mount: -i: mount.ocfs2 would look for a userspace cluster daemon;
# the kernel needs only the stack label, which must match the disk's.
# noatime: an atime update takes the inode's lock from PR up to EX; the
# read-back checks stay reads
ocfs2_mount()
{
	mkdir -p $MNT
	mount -i -t ocfs2 -o cluster_stack=$STACK,noatime "$DISK" $MNT &
	bounded $! 120 "mount"
	echo "node$ME: mounted: $(grep " $MNT " /proc/mounts)"
}

# ocfs2_fsck: node 1 checks the unmounted file system: clean
ocfs2_fsck()
{
	[ "$ME" = 1 ] || return 0
	fsck.ocfs2 -fn "$DISK" >/tmp/ocfs2-fsck.log 2>&1 ||
		{ cat /tmp/ocfs2-fsck.log; fail "fsck.ocfs2 -fn"; }
	grep "All passes succeeded" /tmp/ocfs2-fsck.log ||
		fail "fsck.ocfs2: $(tail -n 5 /tmp/ocfs2-fsck.log)"
}

# ocfs2_finish CONF: every node unmounts, node 1 checks the file system;
# the stack goes down (corosync too, if it runs); the kernel log is clean
ocfs2_finish()
{
	umount $MNT || fail "umount"
	barrier ocfs2-umounted 300
	ocfs2_fsck
	rmmod ocfs2_stack_rdlm || fail "rmmod ocfs2_stack_rdlm"
	barrier ocfs2-done 300
	trap fabric_cleanup EXIT
	membership_stop
	"$CONFIGURE" -f "$1" down || fail "configure down"
	rdlm_unload
	rm -f "$1"
	ocfs2_kmsg_check
}

# ocfs2_kmsg_check: no WARN, oops or hung task, and no OCFS2 error
ocfs2_kmsg_check()
{
	kmsg_check
	dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -E "ocfs2.*ERROR|\(.*\):.*ERROR:" &&
		fail "OCFS2 reported errors"
	return 0
}

# expected content of file I of node N
content()
{
	printf 'node%s file %s\n' "$1" "$2"
	seq "$2" $(($2 * 40))
	printf 'appended by node%s\n' "$1"
}

# workload DIR...: create, append to, rename and delete files in each DIR
workload()
{
	local dir i

	for dir in "$@"; do
		mkdir -p "$dir" || return 1
		for ((i = 1; i <= FILES; i++)); do
			{ printf 'node%s file %s\n' "$ME" $i; seq $i $((i * 40)); } \
				>"$dir/n$ME.new$i" || return 1
			printf 'appended by node%s\n' "$ME" >>"$dir/n$ME.new$i" ||
				return 1
			mv "$dir/n$ME.new$i" "$dir/n$ME.f$i" || return 1
			if ((i % 3 == 0)); then
				rm "$dir/n$ME.f$i" || return 1
			fi
		done
		# another node may delete or rename a file between ls's
		# readdir and its stat: that name is gone, nothing else may be
		ls -l "$dir" >/dev/null 2>/tmp/ocfs2-ls.err ||
			! grep -qv ": No such file or directory$" /tmp/ocfs2-ls.err ||
			{ cat /tmp/ocfs2-ls.err; return 1; }
	done
}

# check N DIR...: what node N's workload left in each DIR, read here
check()
{
	local n=$1 dir i f

	shift
	for dir in "$@"; do
		for ((i = 1; i <= FILES; i++)); do
			f=$dir/n$n.f$i
			if ((i % 3 == 0)); then
				[ -e "$f" ] && fail "$f was deleted by node$n, node$ME sees it"
				continue
			fi
			[ "$(stat -c %s "$f")" = "$(content "$n" $i | wc -c)" ] ||
				fail "$f: size $(stat -c %s "$f" 2>&1)"
			content "$n" $i | cmp -s - "$f" || fail "$f: content differs"
		done
		[ -e "$dir/n$n.new1" ] && fail "$dir/n$n.new1 renamed by node$n, node$ME sees it"
	done
	return 0
}

ms()
{
	echo $((($(date +%s%N) - $1) / 1000000))
}
