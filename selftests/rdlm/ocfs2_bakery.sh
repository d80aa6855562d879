#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ocfs2.sh on the bakery: OCFS2 over rdlm with DSLR's tickets (FA, READ
# polling) without leases: a dead member's tickets are skipped by a census
# of the live ones, PR to EX converted in place (Documentation/engines.rst),
# the same workload, cross-node checks and fsck (Documentation/ocfs2.rst);
# not the POSIX locks, which do not go through the engine.
OCFS2_ENGINE=bakery OCFS2_PLOCK=0 exec ./ocfs2.sh "$@"
