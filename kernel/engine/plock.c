// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm POSIX lock table (plock.h): F_SETLK's split, merge, upgrade and
 * downgrade of an owner's ranges, and F_GETLK's conflict, on one file.
 *
 * A plain list: a file has few locks in practice, and the home that keeps
 * it bounds their number (kernel/plock.c). Conflicts are checked by the
 * caller before it sets a range, as posix_lock_inode() does, so that
 * setting never fails but for memory, and then changes nothing.
 */
#include "plock.h"

static bool rdlm_pl_same(const struct rdlm_pl_range *x,
			 const struct rdlm_pl_owner *who)
{
	return x->who.node == who->node && x->who.owner == who->owner;
}

static bool rdlm_pl_overlap(const struct rdlm_pl_range *x, u64 start, u64 end)
{
	return x->start <= end && start <= x->end;
}

/**
 * rdlm_pl_conflict() - what keeps an owner from locking a range
 * @f: the file
 * @who: the owner asking
 * @start: first byte
 * @end: last byte, inclusive
 * @type: RDLM_PL_RD or RDLM_PL_WR (RDLM_PL_UN conflicts with nothing)
 *
 * Return: the conflicting range of another owner that starts first, or
 * NULL.
 */
const struct rdlm_pl_range *rdlm_pl_conflict(const struct rdlm_pl_file *f,
					     const struct rdlm_pl_owner *who,
					     u64 start, u64 end, u8 type)
{
	const struct rdlm_pl_range *x, *first = NULL;

	if (type == RDLM_PL_UN)
		return NULL;
	for (x = f->head; x; x = x->next) {
		if (rdlm_pl_same(x, who) || !rdlm_pl_overlap(x, start, end))
			continue;
		if (x->type != RDLM_PL_WR && type != RDLM_PL_WR)
			continue;
		if (!first || x->start < first->start)
			first = x;
	}
	return first;
}

/**
 * rdlm_pl_set() - set an owner's lock on a range, as F_SETLK does
 * @f: the file
 * @who: the owner
 * @start: first byte
 * @end: last byte, inclusive, @start <= @end
 * @type: RDLM_PL_RD, RDLM_PL_WR, or RDLM_PL_UN to unlock
 *
 * The owner's locks on [@start, @end] are replaced by one of @type (none
 * for RDLM_PL_UN): a range it held across the edges is split, what it held
 * of the same type next to the new one is merged into it. Conflicts with
 * other owners are the caller's to check first (rdlm_pl_conflict()).
 *
 * Return: 0, or -ENOMEM (nothing changed).
 */
int rdlm_pl_set(struct rdlm_pl_file *f, const struct rdlm_pl_owner *who,
		u64 start, u64 end, u8 type)
{
	struct rdlm_pl_range *spare[2], **pp, *x;
	int used = 0;

	/* at most one range is split, and one is added */
	spare[0] = rdlm_zalloc_atomic(sizeof(*x));
	spare[1] = rdlm_zalloc_atomic(sizeof(*x));
	if (!spare[0] || !spare[1]) {
		rdlm_free(spare[0]);
		rdlm_free(spare[1]);
		return -ENOMEM;
	}
	/* cut [start, end] out of the owner's ranges */
	for (pp = &f->head; (x = *pp); ) {
		if (!rdlm_pl_same(x, who) || !rdlm_pl_overlap(x, start, end)) {
			pp = &x->next;
		} else if (x->start < start && x->end > end) {
			struct rdlm_pl_range *right = spare[used++];

			*right = *x;
			right->start = end + 1;
			x->end = start - 1;
			x->next = right;
			f->nr++;
			pp = &right->next;
		} else if (x->start < start) {
			x->end = start - 1;
			pp = &x->next;
		} else if (x->end > end) {
			x->start = end + 1;
			pp = &x->next;
		} else {
			*pp = x->next;
			rdlm_free(x);
			f->nr--;
		}
	}
	if (type == RDLM_PL_UN)
		goto out;
	/* merge the owner's neighbours of the same type (none overlaps now) */
	for (pp = &f->head; (x = *pp); ) {
		if (rdlm_pl_same(x, who) && x->type == type &&
		    ((x->end != U64_MAX && x->end + 1 == start) ||
		     (end != U64_MAX && x->start == end + 1))) {
			start = min_t(u64, start, x->start);
			end = max_t(u64, end, x->end);
			*pp = x->next;
			rdlm_free(x);
			f->nr--;
		} else {
			pp = &x->next;
		}
	}
	x = spare[used++];
	x->start = start;
	x->end = end;
	x->who = *who;
	x->type = type;
	x->next = f->head;
	f->head = x;
	f->nr++;
out:
	while (used < 2)
		rdlm_free(spare[used++]);
	return 0;
}

/**
 * rdlm_pl_drop_node() - forget every lock of a node's owners
 * @f: the file
 * @node: engine index of the node (departed)
 *
 * Return: how many ranges went.
 */
u32 rdlm_pl_drop_node(struct rdlm_pl_file *f, u32 node)
{
	struct rdlm_pl_range **pp, *x;
	u32 n = 0;

	for (pp = &f->head; (x = *pp); ) {
		if (x->who.node != node) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		rdlm_free(x);
		f->nr--;
		n++;
	}
	return n;
}

/**
 * rdlm_pl_clear() - forget every lock of a file
 * @f: the file
 */
void rdlm_pl_clear(struct rdlm_pl_file *f)
{
	struct rdlm_pl_range *x;

	while ((x = f->head)) {
		f->head = x->next;
		rdlm_free(x);
	}
	f->nr = 0;
}
