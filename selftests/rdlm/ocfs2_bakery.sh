#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ocfs2.sh on the bakery: OCFS2 over rdlm with DSLR's tickets (FA, READ
# polling) without leases: a dead member's tickets are skipped by a census
# of the live ones, PR to EX converted in place (Documentation/engines.rst),
# the same workload, cross-node checks and fsck (Documentation/ocfs2.rst);
# not the POSIX locks, which do not go through the engine. Node 1 unpacks
# only Documentation/filesystems/ext4 (26 files; central's run unpacks the
# 126 of filesystems): node 1's writing alone took 97 s here against 31 s
# on central (3 VMs under TCG), and the suite has a budget.
OCFS2_ENGINE=bakery OCFS2_PLOCK=0 OCFS2_SRC_PART=${OCFS2_SRC_PART:-filesystems/ext4} exec ./ocfs2.sh "$@"
