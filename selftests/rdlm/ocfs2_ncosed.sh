#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ocfs2.sh on a queue engine: OCFS2 over rdlm with the N-CoSED engine
# (shared and exclusive distributed queues of RDMA atomics; PR to EX
# converted in place, Documentation/queue-engines.rst), the same workload,
# cross-node checks and fsck (Documentation/ocfs2.rst); not the POSIX
# locks, which do not go through the engine.
OCFS2_ENGINE=ncosed OCFS2_PLOCK=0 exec ./ocfs2.sh "$@"
