/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel environment of the rdlm protocol engines.
 *
 * Engines include only this header (through engine.h).  The userspace
 * simulator pre-includes tools/sim/include/engine_env.h, which defines the
 * same guard, so this file is then skipped and the engine sources compile
 * unchanged against the simulator's definitions.
 */
#ifndef RDLM_ENGINE_ENV_H
#define RDLM_ENGINE_ENV_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/build_bug.h>
#include <linux/interval_tree_generic.h>

/* macros rather than typedefs: the simulator defines its own */
#define rdlm_spinlock_t		spinlock_t
#define rdlm_spin_lock_init(l)		spin_lock_init(l)
/*
 * Engines run in process context or softirq (completions, soft hrtimers),
 * never in hard irq, and post verbs under this lock: the fabric's own
 * spin_unlock_bh() must not run with interrupts off, so no irqsave here.
 */
#define rdlm_spin_lock(l, flags)	do { (void)(flags); spin_lock_bh(l); } while (0)
#define rdlm_spin_unlock(l, flags)	do { (void)(flags); spin_unlock_bh(l); } while (0)

#define rdlm_stat_t		atomic64_t
#define rdlm_stat_inc(s)	atomic64_inc(s)
#define rdlm_stat_read(s)	((u64)atomic64_read(s))

#define rdlm_zalloc(size)	kvzalloc(size, GFP_KERNEL)
/* under a spinlock (kvfree() frees this too) */
#define rdlm_zalloc_atomic(size)	kzalloc(size, GFP_ATOMIC)
#define rdlm_free(ptr)		kvfree(ptr)

/*
 * An index of intervals [start, last] that finds those overlapping a
 * range (rangecomb's held and waiting ranges): the kernel's interval tree
 * here, a list in the simulator. Iteration order is unspecified.
 */
struct rdlm_itree_node {
	struct rb_node rb;
	u64 start;
	u64 last;
	u64 subtree_last;
};

struct rdlm_itree {
	struct rb_root_cached root;
};

#define RDLM_ITREE_START(n)	((n)->start)
#define RDLM_ITREE_LAST(n)	((n)->last)
INTERVAL_TREE_DEFINE(struct rdlm_itree_node, rb, u64, subtree_last,
		     RDLM_ITREE_START, RDLM_ITREE_LAST, static inline,
		     rdlm_itree_gen)

static inline void rdlm_itree_init(struct rdlm_itree *t)
{
	t->root = RB_ROOT_CACHED;
}

static inline void rdlm_itree_insert(struct rdlm_itree *t,
				     struct rdlm_itree_node *n)
{
	rdlm_itree_gen_insert(n, &t->root);
}

static inline void rdlm_itree_remove(struct rdlm_itree *t,
				     struct rdlm_itree_node *n)
{
	rdlm_itree_gen_remove(n, &t->root);
}

/* the first node overlapping [start, last], or NULL */
static inline struct rdlm_itree_node *
rdlm_itree_first(struct rdlm_itree *t, u64 start, u64 last)
{
	return rdlm_itree_gen_iter_first(&t->root, start, last);
}

/* the next node after @n overlapping [start, last], or NULL */
static inline struct rdlm_itree_node *
rdlm_itree_next(struct rdlm_itree_node *n, u64 start, u64 last)
{
	return rdlm_itree_gen_iter_next(n, start, last);
}

#endif /* RDLM_ENGINE_ENV_H */
