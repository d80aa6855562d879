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
. ./ocfs2_lib.sh
ocfs2_require

# OCFS2_NODES take part (default: every node of the cluster); the others
# leave
OCFS2_NODES=${OCFS2_NODES:-$NODES}
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

trap ocfs2_cleanup EXIT

ocfs2_stack_up "$CONF"
barrier ocfs2-ready 300

ocfs2_mkfs
ocfs2_join
barrier ocfs2-ls 120

ocfs2_mount
barrier ocfs2-mounted 300
# 0. read only: every node lists the new file system alike
ls -la --time-style=+ $MNT >/tmp/ocfs2.ls0 || fail "ls $MNT"
sed 's/  */ /g' /tmp/ocfs2.ls0 >"$RDLM_OUT/ocfs2.ls0.$ME"
df $MNT >/dev/null || fail "df $MNT"
barrier ocfs2-listed 300
diff -u "$RDLM_OUT/ocfs2.ls0.1" "$RDLM_OUT/ocfs2.ls0.$ME" ||
	fail "ls of the new file system: node1 and node$ME differ"
echo "node$ME: the new file system lists alike on node1 and here"

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

# 1. node 1 alone writes (the others have the file system mounted)
T0=$(date +%s%N)
if [ "$ME" = 1 ]; then
	(
		workload $MNT/shared $MNT/own1 || fail "node1 alone: workload"
		unpack || fail "node1 alone: unpack"
		check 1 $MNT/shared $MNT/own1
	) &
	bounded $! 600 "node1 alone"
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

ocfs2_finish "$CONF"
echo "ocfs2: mounted on $NODES nodes over rdlm ($ENGINE), workload checked, fsck clean"
