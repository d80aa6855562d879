#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# OCFS2 over rdlm (ocfs2_stack_rdlm.ko, Documentation/ocfs2.rst), on the
# test cluster's shared disk (/dev/vda, serial rdlm-shared), 2 or 3 nodes:
#  - node 1 formats the disk with mkfs.ocfs2 (cluster stack "pcmk", the
#    label ocfs2-tools accepts; stackglue hands every label but "o2cb" to
#    the plugin registered as "user", ours);
#  - every node creates the lockspace named after the file system's UUID
#    (engine OCFS2_ENGINE, default central; 64-byte LVBs, no lease) and
#    mounts the file system;
#  - node 1 alone creates, appends to, renames and deletes files in a
#    shared directory and in its own, and unpacks a piece of
#    linux-source-6.1 (Documentation/filesystems) into the file system;
#    the other nodes read all of it back (content, size, checksums);
#  - every node at once runs the same workload in a second shared
#    directory and its own; every node reads back what the others wrote,
#    the shared directory lists alike on every node;
#  - every node unmounts; node 1 runs fsck.ocfs2 -fn: clean.
# The wall time of the concurrent workload is printed.
. ./lib.sh
. ./fabric_lib.sh
require_root
need_cluster 2
O2_KO=${O2_KO:-$PWD/ocfs2_stack_rdlm.ko}
DISK=${OCFS2_DISK:-/dev/vda}
CLUSTER=${OCFS2_CLUSTER:-rdlmocfs2}
ENGINE=${OCFS2_ENGINE:-central}
RDLMCTL=$REPO/userspace/rdlmctl
# the lockspace's attributes: OCFS2's LVBs are 64 bytes; it holds its locks
# for as long as it caches what they cover (the journal's for the whole
# mount), so no lease (central; the bakery cannot do without); a table far
# larger than the names in use, and engine requests for every word held
LS_ATTRS="engine=$ENGINE atomic_mode=nic lvb_len=64 lease_us=0"
LS_ATTRS+=" table_size=65536 nr_reqs=16384 mailbox_slots=256"
LS=
STACK=pcmk
MNT=/run/rdlm-ocfs2
FILES=${OCFS2_FILES:-20}
SRC=/usr/src/linux-source-6.1.tar.xz
SRC_PART=linux-source-6.1/Documentation/filesystems

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

# OCFS2_NODES take part (default 2: on 3 nodes the concurrent workload
# still hangs, Documentation/ocfs2.rst "Status"); the others leave
OCFS2_NODES=${OCFS2_NODES:-2}
if [ "$OCFS2_NODES" -lt "$NODES" ]; then
	[ "$OCFS2_NODES" -ge 2 ] || fail "OCFS2_NODES=$OCFS2_NODES: 2 at least"
	if [ "$ME" -gt "$OCFS2_NODES" ]; then
		echo "node$ME: not one of the $OCFS2_NODES OCFS2 nodes"
		exit 0
	fi
	NODES=$OCFS2_NODES
fi
CONF=$(mktemp /tmp/ocfs2-rdlm.XXXXXX.conf)
grep "^node " "$REPO/tools/cluster/cluster.conf" | head -n "$NODES" >"$CONF"
fabric_test ocfs2 "$CONF"

# ocfs2_dump: this node's OCFS2 lock states and blocked tasks, at a failure
ocfs2_dump()
{
	local f

	for f in /sys/kernel/debug/ocfs2/*/locking_state; do
		[ -e "$f" ] || continue
		echo "node$ME: $f (busy or blocked lock resources):"
		# name level flags action unlock_action ro ex requested blocking
		awk '/^0x/ { print $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$f" | head -n 200
	done
	grep "" "$DBG/ls/$LS" 2>/dev/null | head -n 100
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
		touch "$RDLM_OUT/abort.ocfs2.$ME"
		cat $DBG/peers $DBG/lockspaces 2>/dev/null
		exit "$rc"
	fi
	mountpoint -q $MNT && umount $MNT
	grep -q "^ocfs2_stack_rdlm " /proc/modules && rmmod ocfs2_stack_rdlm
	(exit $rc)
	fabric_cleanup
}
trap ocfs2_cleanup EXIT

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
"$CONFIGURE" -f "$CONF" up || fail "configure"
insmod "$O2_KO" || fail "insmod $O2_KO"
echo $STACK >/sys/fs/ocfs2/cluster_stack || fail "cluster_stack $STACK"
# umount asks ocfs2_hb_ctl to leave the o2cb heartbeat group: not ours
echo /bin/true >/proc/sys/fs/ocfs2/nm/hb_ctl_path
barrier ocfs2-ready 300

if [ "$ME" = 1 ]; then
	# over an earlier run's file system mkfs.ocfs2 asks, -F or not
	yes | mkfs.ocfs2 -F -q -b 4K -C 4K -N "$NODES" -L rdlm-ocfs2 \
		--cluster-stack=$STACK --cluster-name="$CLUSTER" "$DISK" ||
		fail "mkfs.ocfs2"
	sync
	# OCFS2 names its lockspace after the UUID: 32 upper-case hex digits
	tunefs.ocfs2 -Q '%U\n' "$DISK" | tr -d -- '-\n' | tr a-f A-F \
		>"$RDLM_OUT/ocfs2.uuid" || fail "tunefs.ocfs2 -Q %U"
fi
barrier ocfs2-mkfs 300
LS=$(cat "$RDLM_OUT/ocfs2.uuid")
[[ "$LS" =~ ^[0-9A-F]{32}$ ]] || fail "file system UUID '$LS'"
FABRIC_LS=$LS
# the administrator's lockspace for this file system (the plugin would
# otherwise create it at mount from the template lockspace $CLUSTER)
"$RDLMCTL" join "$LS" members="$(seq -s, 1 "$NODES")" $LS_ATTRS ||
	fail "rdlmctl join $LS"
st "wait $LS 90"
barrier ocfs2-ls 120

mkdir -p $MNT
# -i: mount.ocfs2 would look for a userspace cluster daemon; the kernel
# needs only the stack label, which must match the disk's. noatime: an
# atime update takes the inode's lock from PR up to EX; the read-back
# checks stay reads
mount -i -t ocfs2 -o cluster_stack=$STACK,noatime "$DISK" $MNT &
bounded $! 120 "mount"
echo "node$ME: mounted: $(grep " $MNT " /proc/mounts)"
barrier ocfs2-mounted 300
# 0. read only: every node lists the new file system alike
ls -la --time-style=+ $MNT >/tmp/ocfs2.ls0 || fail "ls $MNT"
sed 's/  */ /g' /tmp/ocfs2.ls0 >"$RDLM_OUT/ocfs2.ls0.$ME"
df $MNT >/dev/null || fail "df $MNT"
barrier ocfs2-listed 300
diff -u "$RDLM_OUT/ocfs2.ls0.1" "$RDLM_OUT/ocfs2.ls0.$ME" ||
	fail "ls of the new file system: node1 and node$ME differ"
echo "node$ME: the new file system lists alike on node1 and here"

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

unpack()
{
	local tmp=/tmp/ocfs2-src

	rm -rf $tmp
	mkdir -p $tmp
	# the part comes early in the archive: stop decompressing after it
	# (tar then says the archive ended early; what it extracted is whole)
	xz -dc "$SRC" | head -c 40000000 |
		tar -x -C $tmp "$SRC_PART" 2>$tmp.err
	[ -d "$tmp/$SRC_PART" ] || { cat $tmp.err; return 1; }
	(cd $tmp && find "$SRC_PART" -type f -print0 | sort -z |
		xargs -0 sha256sum) >"$RDLM_OUT/ocfs2.sums" || return 1
	tar -C $tmp -cf - "$SRC_PART" | tar -x -C $MNT || return 1
	echo "node1: unpacked $(wc -l <"$RDLM_OUT/ocfs2.sums") files of $SRC_PART"
}

ms()
{
	echo $((($(date +%s%N) - $1) / 1000000))
}

# 1. node 1 alone writes (the others have the file system mounted)
T0=$(date +%s%N)
if [ "$ME" = 1 ]; then
	workload $MNT/shared $MNT/own1 || fail "node1 alone: workload"
	unpack || fail "node1 alone: unpack"
	check 1 $MNT/shared $MNT/own1
	echo "node1: alone: workload, unpack and read-back done in $(ms "$T0") ms"
fi
barrier ocfs2-single 900

# 2. the others read what node 1 wrote
T0=$(date +%s%N)
if [ "$ME" != 1 ]; then
	check 1 $MNT/shared $MNT/own1
	(cd $MNT && sha256sum --quiet -c "$RDLM_OUT/ocfs2.sums") ||
		fail "node1's source tree differs here"
	echo "node$ME: node1's files and $(wc -l <"$RDLM_OUT/ocfs2.sums") source files read back alike in $(ms "$T0") ms"
fi
barrier ocfs2-read 900

# 3. every node at once, in a shared directory and its own; a hang fails
# the test (with the lock dumps) instead of waiting for the run's limit
T0=$(date +%s%N)
workload $MNT/conc $MNT/cown$ME &
bounded $! 300 "concurrent workload"
echo "node$ME: concurrent workload done in $(ms "$T0") ms"
barrier ocfs2-workload 600

# 4. what every node wrote, read back here
T1=$(date +%s%N)
for ((n = 1; n <= NODES; n++)); do
	check $n $MNT/conc $MNT/cown$n
done
ls -la --time-style=+ $MNT/conc >/tmp/ocfs2.ls || fail "ls $MNT/conc"
sed 's/  */ /g' /tmp/ocfs2.ls >"$RDLM_OUT/ocfs2.ls.$ME"
barrier ocfs2-checked 600
for ((n = 2; n <= NODES; n++)); do
	diff -u "$RDLM_OUT/ocfs2.ls.1" "$RDLM_OUT/ocfs2.ls.$n" ||
		fail "ls of the shared directory: node1 and node$n differ"
done
echo "node$ME: cross-node checks done in $(ms "$T1") ms"
echo "node$ME: $(cat /sys/kernel/debug/rdlm/lockspaces 2>/dev/null | grep "$LS" | head -n 1)"

umount $MNT || fail "umount"
barrier ocfs2-umounted 300
if [ "$ME" = 1 ]; then
	fsck.ocfs2 -fn "$DISK" >/tmp/ocfs2-fsck.log 2>&1 ||
		{ cat /tmp/ocfs2-fsck.log; fail "fsck.ocfs2 -fn"; }
	grep "All passes succeeded" /tmp/ocfs2-fsck.log || fail "fsck.ocfs2: $(tail -n 5 /tmp/ocfs2-fsck.log)"
fi
rmmod ocfs2_stack_rdlm || fail "rmmod ocfs2_stack_rdlm"
barrier ocfs2-done 300
trap fabric_cleanup EXIT
"$CONFIGURE" -f "$CONF" down || fail "configure down"
rdlm_unload
rm -f "$CONF"
kmsg_check
dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -E "ocfs2.*ERROR|\(.*\):.*ERROR:" &&
	fail "OCFS2 reported errors"
echo "ocfs2: mounted on $NODES nodes over rdlm ($ENGINE), workload checked, fsck clean"
