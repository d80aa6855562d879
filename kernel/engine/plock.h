/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm POSIX lock table: the fcntl() byte-range locks of one file, as its
 * home keeps them for every owner on every node (kernel/plock.c).
 *
 * I/O-free like the engines, and built into the simulator, which checks
 * it against a per-byte model (tools/sim/test_plock.c).
 */
#ifndef RDLM_PLOCK_H
#define RDLM_PLOCK_H

#include "engine_env.h"

/* Lock types, as on the wire. */
enum rdlm_pl_type {
	RDLM_PL_RD = 0,		/* F_RDLCK */
	RDLM_PL_WR = 1,		/* F_WRLCK */
	RDLM_PL_UN = 2,		/* F_UNLCK */
};

/**
 * struct rdlm_pl_owner - who holds a POSIX lock
 * @owner: the owner on its node (fl_owner: a process's files, an open file
 *	for OFD locks); owners of two nodes never match
 * @node: engine index of its node
 * @pid: what F_GETLK reports (the last process that set it)
 */
struct rdlm_pl_owner {
	u64 owner;
	u32 node;
	u32 pid;
};

/**
 * struct rdlm_pl_range - one range an owner holds
 * @next: next range of the file (any owner, no order)
 * @start: first byte
 * @end: last byte, inclusive
 * @who: its owner
 * @type: RDLM_PL_RD or RDLM_PL_WR
 *
 * An owner's ranges never overlap, and two of the same type never touch:
 * they are merged, as the VFS merges a process's own locks.
 */
struct rdlm_pl_range {
	struct rdlm_pl_range *next;
	u64 start;
	u64 end;
	struct rdlm_pl_owner who;
	u8 type;
};

/**
 * struct rdlm_pl_file - the POSIX locks of one file
 * @head: its ranges
 * @nr: how many
 */
struct rdlm_pl_file {
	struct rdlm_pl_range *head;
	u32 nr;
};

const struct rdlm_pl_range *rdlm_pl_conflict(const struct rdlm_pl_file *f,
					     const struct rdlm_pl_owner *who,
					     u64 start, u64 end, u8 type);
int rdlm_pl_set(struct rdlm_pl_file *f, const struct rdlm_pl_owner *who,
		u64 start, u64 end, u8 type);
u32 rdlm_pl_drop_node(struct rdlm_pl_file *f, u32 node);
void rdlm_pl_clear(struct rdlm_pl_file *f);

#endif /* RDLM_PLOCK_H */
