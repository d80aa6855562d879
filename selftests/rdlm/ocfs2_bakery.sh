#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ocfs2.sh on the bakery: OCFS2 over rdlm with DSLR's tickets (FA, READ
# polling) without leases: a dead member's tickets are skipped by a census
# of the live ones, PR to EX converted in place (Documentation/engines.rst),
# the same workload, cross-node checks, POSIX locks and fsck
# (Documentation/ocfs2.rst).
OCFS2_ENGINE=bakery exec ./ocfs2.sh "$@"
