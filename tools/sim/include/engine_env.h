/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace (simulator) environment of the rdlm protocol engines.
 *
 * Pre-included with -include by the simulator build; defines the same guard
 * as kernel/engine/engine_env.h so that the kernel version is skipped.
 * The simulator is single threaded, so spinlocks are no-ops, and time and
 * randomness come from the engine call arguments and the engine's own
 * seeded generator.
 */
#ifndef RDLM_ENGINE_ENV_H
#define RDLM_ENGINE_ENV_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <assert.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#ifndef U32_MAX
#define U32_MAX		((u32)~0U)
#endif
#ifndef U64_MAX
#define U64_MAX		((u64)~0ULL)
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define div_u64(a, b)	((u64)(a) / (u32)(b))
#define BIT_ULL(n)	(1ULL << (n))
#define fallthrough	__attribute__((__fallthrough__))

typedef struct { int unused; } rdlm_spinlock_t;
#define rdlm_spin_lock_init(l)		((void)(l))
#define rdlm_spin_lock(l, flags)	((void)(l), (void)(flags))
#define rdlm_spin_unlock(l, flags)	((void)(l), (void)(flags))

typedef u64 rdlm_stat_t;
#define rdlm_stat_inc(s)	((*(s))++)
#define rdlm_stat_read(s)	(*(s))

#define rdlm_zalloc(size)	calloc(1, size)
#define rdlm_zalloc_atomic(size)	calloc(1, size)
#define rdlm_free(ptr)		free(ptr)

/*
 * The interval index (kernel: the kernel's interval tree): a list here.
 * Same interface and guarantees; iteration order is unspecified.
 */
struct rdlm_itree_node {
	struct rdlm_itree_node *next;
	u64 start;
	u64 last;
};

struct rdlm_itree {
	struct rdlm_itree_node *head;
};

static inline void rdlm_itree_init(struct rdlm_itree *t)
{
	t->head = NULL;
}

static inline void rdlm_itree_insert(struct rdlm_itree *t,
				     struct rdlm_itree_node *n)
{
	n->next = t->head;
	t->head = n;
}

static inline void rdlm_itree_remove(struct rdlm_itree *t,
				     struct rdlm_itree_node *n)
{
	struct rdlm_itree_node **pp;

	for (pp = &t->head; *pp; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			return;
		}
	assert(!"rdlm_itree_remove: not in the index");
}

static inline struct rdlm_itree_node *
rdlm_itree_from(struct rdlm_itree_node *n, u64 start, u64 last)
{
	for (; n; n = n->next)
		if (n->start <= last && start <= n->last)
			return n;
	return NULL;
}

static inline struct rdlm_itree_node *
rdlm_itree_first(struct rdlm_itree *t, u64 start, u64 last)
{
	return rdlm_itree_from(t->head, start, last);
}

static inline struct rdlm_itree_node *
rdlm_itree_next(struct rdlm_itree_node *n, u64 start, u64 last)
{
	return rdlm_itree_from(n->next, start, last);
}

#endif /* RDLM_ENGINE_ENV_H */
