#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ocfs2.sh on a queue engine: OCFS2 over rdlm with the N-CoSED engine
# (shared and exclusive distributed queues of RDMA atomics; PR to EX
# converted in place, Documentation/queue-engines.rst), the same workload,
# cross-node checks and fsck (Documentation/ocfs2.rst); not the POSIX
# locks, which do not go through the engine. Node 1 unpacks only
# Documentation/filesystems/ext4 (26 files; central's run unpacks the 126
# of filesystems), as on the bakery (ocfs2_bakery.sh): the suite has a
# budget.
OCFS2_ENGINE=ncosed OCFS2_PLOCK=0 OCFS2_SRC_PART=${OCFS2_SRC_PART:-filesystems/ext4} exec ./ocfs2.sh "$@"
