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

#endif /* RDLM_ENGINE_ENV_H */
