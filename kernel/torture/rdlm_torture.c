// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm_torture: a torture test of rdlm's exported kernel API, in the spirit
 * of kernel/locking/locktorture.c, and the in-tree example of a module that
 * uses nothing but <linux/rdlm.h>.
 *
 * Loading the module starts @nthreads kernel threads on the lockspace
 * @lockspace (created with rdlm_new_lockspace() from the configfs lockspace
 * @template if that is set, released at unload; with @gate the threads wait
 * for a write to debugfs "go", or to "run", which returns once they are
 * done). Each repeats, for @duration_s seconds or
 * @nops times: pick one of @nlocks resource names (@prefix0, @prefix1, ...)
 * and a mode (PR with probability @shared_pct %, PW with @pw_pct %, CR with
 * @cr_pct %, CW with @cw_pct %, EX otherwise), lock it either
 * through the synchronous wrappers or through rdlm_lock()/rdlm_unlock() with
 * its own completion and blocking callbacks (@async_pct %), sometimes with
 * NOQUEUE (@noqueue_pct %), sometimes cancelling the request at once
 * (@cancel_pct % of the asynchronous ones), hold it for up to @hold_us
 * microseconds or until a blocking callback arrives, sometimes convert it
 * (PR to EX or EX to PR, @convert_pct %), and release it.
 *
 * Two checks run on every grant:
 *  - mutual exclusion among this node's holders: every name has counters of
 *    the local holders in each mode; a holder must see none in a mode that
 *    fs/dlm's compatibility matrix says its own mode excludes;
 *  - the lock value block: its first 8 bytes are a counter that every EX
 *    and PW holder increments (the next 8 bytes hold its complement, so a
 *    torn or foreign value is seen). A grant must see at least the value
 *    this node wrote last before the request was made.
 * The cluster-wide checks: once every node is done, the counter of each
 * name must equal the sum of the increments all nodes made (the test
 * script's: debugfs "stats" reports them, debugfs "counters" reads the
 * LVBs); and with @cs_phys, every PR and EX hold (and range cell) is
 * checked against the other nodes' holders in memory all nodes share (the
 * test cluster's ivshmem device), in the cells of selftests/rdlm/cs_check.c:
 * one word per node counting its EX and PR holders, written by that node
 * only, read by every holder as it claims and as it gives up its claim.
 *
 * With @range_cells, the lockspace is one of range locks (engine rangeseg
 * or rangecomb) and each operation locks a random run of 1-16 of the
 * @range_cells cells of a name (cell c: units [64c, 64c + 63]) with
 * rdlm_range_lock(), in PR or EX, sometimes NOQUEUE or cancelled, holds and
 * unlocks it; no LVB, no conversion. The check is per cell: an EX holder
 * must see no other local holder of its cells, a PR holder no EX one.
 *
 * With @plock_files, debugfs files plock0, plock1, ... take fcntl() locks
 * through rdlm_posix_lock(), as a cluster file system's ->lock() does (file
 * i is the same on every node), for tests of POSIX locks without one
 * (selftests/rdlm/plock.sh); @nthreads may then be 0.
 *
 * Results: /sys/kernel/debug/rdlm_torture/stats ("key value" lines, with
 * the latency of each operation's requests, its first @warmup per thread
 * left out), a pr_info line every @stat_interval seconds and a summary
 * when the threads are done. The module stays loaded until rmmod.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/rdlm.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <asm/unaligned.h>

static char *lockspace = "lk-bakery";
module_param(lockspace, charp, 0444);
MODULE_PARM_DESC(lockspace, "Lockspace to torture (configured and enabled)");

static bool gate;
module_param(gate, bool, 0444);
MODULE_PARM_DESC(gate, "Threads wait for a write to debugfs \"go\" or \"run\" (every node's lockspace up)");

static char *template;
module_param(template, charp, 0444);
MODULE_PARM_DESC(template, "Create the lockspace from this configfs one (rdlm_new_lockspace())");

static char *prefix = "torture-";
module_param(prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "Resource name prefix (names are <prefix><n>)");

static int nthreads = 2;
module_param(nthreads, int, 0444);
MODULE_PARM_DESC(nthreads, "Torture threads (1-64)");

static int nlocks = 4;
module_param(nlocks, int, 0444);
MODULE_PARM_DESC(nlocks, "Resource names to pick from (1-4096)");

static int duration_s = 10;
module_param(duration_s, int, 0444);
MODULE_PARM_DESC(duration_s, "Seconds each thread runs (when nops is 0)");

static int nops;
module_param(nops, int, 0444);
MODULE_PARM_DESC(nops, "Operations per thread (0: run for duration_s)");

static int shared_pct = 50;
module_param(shared_pct, int, 0444);
MODULE_PARM_DESC(shared_pct, "Percentage of PR requests");

static int pw_pct;
module_param(pw_pct, int, 0444);
MODULE_PARM_DESC(pw_pct, "Percentage of PW requests (the rest is EX)");

static int cr_pct;
module_param(cr_pct, int, 0444);
MODULE_PARM_DESC(cr_pct, "Percentage of CR requests");

static int cw_pct;
module_param(cw_pct, int, 0444);
MODULE_PARM_DESC(cw_pct, "Percentage of CW requests");

static int convert_pct = 10;
module_param(convert_pct, int, 0444);
MODULE_PARM_DESC(convert_pct, "Percentage of PR and EX locks converted once");

static int noqueue_pct = 10;
module_param(noqueue_pct, int, 0444);
MODULE_PARM_DESC(noqueue_pct, "Percentage of requests with RDLM_LKF_NOQUEUE");

static int async_pct = 30;
module_param(async_pct, int, 0444);
MODULE_PARM_DESC(async_pct, "Percentage of locks taken with rdlm_lock()");

static int cancel_pct = 5;
module_param(cancel_pct, int, 0444);
MODULE_PARM_DESC(cancel_pct, "Percentage of rdlm_lock() requests cancelled");

static int hold_us = 2000;
module_param(hold_us, int, 0444);
MODULE_PARM_DESC(hold_us, "Longest hold of a granted lock, in microseconds");

static int timeout_ms = 20000;
module_param(timeout_ms, int, 0444);
MODULE_PARM_DESC(timeout_ms, "Request timeout in milliseconds (0: none)");

static bool lvb = true;
module_param(lvb, bool, 0444);
MODULE_PARM_DESC(lvb, "Read the value block at every grant and write it at every PW/EX release, and check it (default on)");

static int range_cells;
module_param(range_cells, int, 0444);
MODULE_PARM_DESC(range_cells, "Range locks over this many cells of each name (0: whole-name locks)");

static int plock_files;
module_param(plock_files, int, 0444);
MODULE_PARM_DESC(plock_files, "Debugfs files plock0.. whose fcntl() locks go through rdlm_posix_lock() (0-64)");

static int stat_interval;
module_param(stat_interval, int, 0444);
MODULE_PARM_DESC(stat_interval, "Seconds between statistics lines (0: none)");

static int max_samples = 200000;
module_param(max_samples, int, 0444);
MODULE_PARM_DESC(max_samples, "Latency samples kept for the percentiles");

static int warmup;
module_param(warmup, int, 0444);
MODULE_PARM_DESC(warmup, "First operations of each thread left out of the latency samples");

static unsigned long cs_phys;
module_param(cs_phys, ulong, 0444);
MODULE_PARM_DESC(cs_phys, "Physical address of memory every node shares (the test cluster's ivshmem BAR): check holders across nodes (0: no)");

static unsigned long cs_size = 16 << 20;
module_param(cs_size, ulong, 0444);
MODULE_PARM_DESC(cs_size, "Bytes of it");

static int cs_node;
module_param(cs_node, int, 0444);
MODULE_PARM_DESC(cs_node, "This node's id in the test cluster (1-15), for cs_phys");

static int cs_boot = 1;
module_param(cs_boot, int, 0444);
MODULE_PARM_DESC(cs_boot, "Its boot count (RDLM_BOOT), for cs_phys");

/* What the threads count; the names are those of the stats file. */
enum torture_stat {
	TS_OPS,
	TS_GRANT_NL,	/* + mode: the RDLM_LOCK_* order */
	TS_GRANT_CR,
	TS_GRANT_CW,
	TS_GRANT_PR,
	TS_GRANT_PW,
	TS_GRANT_EX,
	TS_ASYNC,
	TS_UPCONVERT,
	TS_DOWNCONVERT,
	TS_EAGAIN,
	TS_TIMEDOUT,
	TS_CANCEL,
	TS_CANCELLED,
	TS_DEMOTED,
	TS_CONVDEADLK,
	TS_BASTS,
	TS_INCS,
	TS_ERRORS,
	TS_STUCK,
	TS_MUTEX_VIOLATIONS,
	TS_LVB_VIOLATIONS,
	TS_LVB_INVALID,
	TS_NR
};

static const char *const torture_stat_names[TS_NR] = {
	[TS_OPS] = "ops",
	[TS_GRANT_NL] = "grants_nl",
	[TS_GRANT_CR] = "grants_cr",
	[TS_GRANT_CW] = "grants_cw",
	[TS_GRANT_PR] = "grants_pr",
	[TS_GRANT_PW] = "grants_pw",
	[TS_GRANT_EX] = "grants_ex",
	[TS_ASYNC] = "async",
	[TS_UPCONVERT] = "upconverts",
	[TS_DOWNCONVERT] = "downconverts",
	[TS_EAGAIN] = "eagain",
	[TS_TIMEDOUT] = "timedout",
	[TS_CANCEL] = "cancel_requests",
	[TS_CANCELLED] = "cancelled",
	[TS_DEMOTED] = "demoted",
	[TS_CONVDEADLK] = "convdeadlk",
	[TS_BASTS] = "basts",
	[TS_INCS] = "incs",
	[TS_ERRORS] = "errors",
	[TS_STUCK] = "stuck",
	[TS_MUTEX_VIOLATIONS] = "mutex_violations",
	[TS_LVB_VIOLATIONS] = "lvb_violations",
	[TS_LVB_INVALID] = "lvb_invalid",
};

/**
 * struct torture_name - this node's view of one resource name
 * @held: local holders that claimed it, by RDLM_LOCK_* mode
 * @written: the LVB counter this node wrote last
 * @incs: increments of the LVB counter made by this node
 */
struct torture_name {
	atomic_t held[RDLM_LOCK_NR];
	atomic64_t written;
	atomic64_t incs;
};

/**
 * struct torture_thread - one torture thread
 * @task: the kthread
 * @id: index in torture_threads
 * @rnd: its random numbers
 * @lksb: status block of its one lock
 * @lvb: value block buffer of @lksb
 * @name: resource name of the current lock
 * @namelen: bytes of @name
 * @async: the current lock was taken with rdlm_lock() and @done
 * @done: completed by the asynchronous callback
 * @wq: woken by the blocking callback
 * @bast: a blocking callback arrived since the last grant
 * @done_ops: operations done, the first @warmup of them not sampled
 * @cs_cell: the cell of the name claimed across nodes (cs_phys), or NULL
 * @cs_ex: claimed there in EX (else PR)
 */
struct torture_thread {
	struct task_struct *task;
	unsigned int id;
	struct rnd_state rnd;
	struct rdlm_lksb lksb;
	char lvb[RDLM_LVB_MAX];
	char name[RDLM_NAME_MAX];
	unsigned int namelen;
	bool async;
	struct completion done;
	wait_queue_head_t wq;
	bool bast;
	long done_ops;
	u64 *cs_cell;
	bool cs_ex;
};

static struct rdlm_lockspace *torture_ls;
static DECLARE_COMPLETION(torture_go);
static DECLARE_COMPLETION(torture_all_done);
static struct torture_name *torture_names;
/* range_cells: local holders of each name's cells, [name][cell][PR, EX] */
static atomic_t *torture_cells;
static struct torture_thread *torture_threads;
static atomic_long_t torture_stats[TS_NR];
static atomic_t torture_threads_done;
static u32 *torture_samples;
static atomic_t torture_nr_samples;
static ktime_t torture_start;
static atomic64_t torture_end_ns;
static struct dentry *torture_dir;
static struct delayed_work torture_stat_work;

static void torture_count(enum torture_stat s)
{
	atomic_long_inc(&torture_stats[s]);
}

static bool torture_pct(struct torture_thread *t, int pct)
{
	return prandom_u32_state(&t->rnd) % 100 < pct;
}

static void torture_ast(void *arg)
{
	struct torture_thread *t = arg;

	complete(&t->done);
}

static void torture_bast(void *arg, int mode)
{
	struct torture_thread *t = arg;

	torture_count(TS_BASTS);
	WRITE_ONCE(t->bast, true);
	wake_up(&t->wq);
}

/*
 * Wait for the completion callback. rdlm bounds the wait with the request
 * timeout; a callback that never comes is a bug worth a loud message, and
 * the thread keeps waiting, as its status block still belongs to rdlm.
 */
static void torture_wait(struct torture_thread *t)
{
	unsigned long limit = msecs_to_jiffies(timeout_ms + 60000);
	bool stuck = false;

	while (!wait_for_completion_timeout(&t->done, limit)) {
		if (!stuck) {
			torture_count(TS_STUCK);
			pr_err("thread %u: no completion on %.*s after %u ms\n",
			       t->id, t->namelen, t->name,
			       jiffies_to_msecs(limit));
		}
		stuck = true;
	}
}

static int torture_cancel_wait(struct torture_thread *t, u32 flags);

/* Lock t->name in @mode, or convert the current lock with CONVERT. */
static int torture_request(struct torture_thread *t, int mode, u32 flags)
{
	int ret;

	if (!t->async)
		return rdlm_lock_wait(torture_ls, mode, &t->lksb, flags,
				      t->name, t->namelen, timeout_ms,
				      torture_bast, t);

	torture_count(TS_ASYNC);
	reinit_completion(&t->done);
	ret = rdlm_lock(torture_ls, mode, &t->lksb, flags, t->name,
			t->namelen, timeout_ms, torture_ast, t, torture_bast);
	if (ret)
		return ret;
	return torture_cancel_wait(t, flags);
}

/* A request was queued: maybe cancel it, then wait for its completion. */
static int torture_cancel_wait(struct torture_thread *t, u32 flags)
{
	int ret;

	if (t->async && cancel_pct && torture_pct(t, cancel_pct)) {
		torture_count(TS_CANCEL);
		if (prandom_u32_state(&t->rnd) & 1)
			usleep_range(10, 500);
		/*
		 * -EALREADY: granted or failed before the cancel came; a
		 * failed first request leaves no lock: -ENOENT.
		 */
		ret = rdlm_unlock(torture_ls, t->lksb.lkid, RDLM_LKF_CANCEL,
				  NULL, t);
		if (ret && ret != -EALREADY &&
		    (ret != -ENOENT || (flags & RDLM_LKF_CONVERT))) {
			torture_count(TS_ERRORS);
			pr_err("thread %u: cancel of %.*s: %d\n", t->id,
			       t->namelen, t->name, ret);
		}
	}
	torture_wait(t);
	return t->lksb.status;
}

/* Release the current lock; 0 when it is gone. */
static int torture_release(struct torture_thread *t, u32 flags)
{
	int ret;

	if (!t->async)
		return rdlm_unlock_wait(torture_ls, &t->lksb, flags);

	reinit_completion(&t->done);
	ret = rdlm_unlock(torture_ls, t->lksb.lkid, flags, &t->lksb, t);
	if (ret)
		return ret;
	torture_wait(t);
	return t->lksb.status == -RDLM_EUNLOCK ? 0 : t->lksb.status;
}

/* A request did not grant: count why. */
static void torture_failed(struct torture_thread *t, int mode, u32 flags,
			   int ret)
{
	if (ret == -EAGAIN && (flags & RDLM_LKF_NOQUEUE)) {
		torture_count(TS_EAGAIN);
	} else if (ret == -ETIMEDOUT && timeout_ms) {
		torture_count(TS_TIMEDOUT);
	} else if (ret == -RDLM_ECANCEL && t->async) {
		torture_count(TS_CANCELLED);
	} else if (ret == -EDEADLK && (flags & RDLM_LKF_CONVERT)) {
		/* two holders converting up, each waiting for the other */
		torture_count(TS_CONVDEADLK);
	} else {
		torture_count(TS_ERRORS);
		pr_err("thread %u: %s %.*s in mode %d: %d\n", t->id,
		       flags & RDLM_LKF_CONVERT ? "convert" : "lock",
		       t->namelen, t->name, mode, ret);
	}
}

/*
 * The cross-node check (cs_phys): the cells of selftests/rdlm/cs_check.c, a
 * tag and one word per node (its boot, EX and PR holders). Nodes are not
 * switched off while the threads run, so another node's word never holds
 * holders it no longer has.
 */
#define TORTURE_CS_WORDS	16	/* a cell: its tag, nodes 1..15 */
#define TORTURE_CS_PROBES	256
#define TORTURE_CS_ONE_EX	BIT_ULL(32)

static u64 *torture_cs_mem;

static u64 torture_cs_fnv(u64 h, const void *p, size_t len)
{
	const u8 *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL;
}

/* The cell of @name (of its range cell @c; -1: the name), NULL if none. */
static u64 *torture_cs_cell(const char *name, unsigned int len, int c)
{
	size_t cells = cs_size / (TORTURE_CS_WORDS * sizeof(u64)), i, n;
	u64 tag = 0xcbf29ce484222325ULL, *cell;

	if (!torture_cs_mem)
		return NULL;
	tag = torture_cs_fnv(tag, "rdlm_torture", 12);
	tag = torture_cs_fnv(tag, lockspace, strlen(lockspace));
	tag = torture_cs_fnv(tag, name, len);
	tag = torture_cs_fnv(tag, &c, sizeof(c)) ?: 1;
	for (i = tag % cells, n = 0; n < TORTURE_CS_PROBES; n++) {
		cell = torture_cs_mem + i * TORTURE_CS_WORDS;
		/* two nodes claiming at once: one tag stays */
		if (!READ_ONCE(*cell))
			cmpxchg64(cell, 0, tag);
		if (READ_ONCE(*cell) == tag)
			return cell;
		i = (i + 1) % cells;
	}
	torture_count(TS_ERRORS);
	pr_err_once("the shared memory of cs_phys is full\n");
	return NULL;
}

/* Add @delta to this node's word of @cell, one of an earlier boot reset. */
static void torture_cs_add(u64 *cell, u64 delta)
{
	u64 *own = cell + cs_node, w, fresh = (u64)cs_boot << 48;

	do {
		w = READ_ONCE(*own);
	} while (cmpxchg64(own, w, (w >> 48 == cs_boot ? w : fresh) + delta) !=
		 w);
}

/* Does another node hold @cell in a mode that excludes EX (@ex) or PR? */
static void torture_cs_check(struct torture_thread *t, u64 *cell, bool ex,
			     int c, const char *when)
{
	unsigned int n;
	u64 w;

	for (n = 1; n < TORTURE_CS_WORDS; n++) {
		if (n == cs_node)
			continue;
		w = READ_ONCE(cell[n]);
		if (!((w >> 32) & 0xffff) && !(ex && (u32)w))
			continue;
		torture_count(TS_MUTEX_VIOLATIONS);
		pr_err("thread %u: %.*s cell %d in %s %s while node %u holds it: ex %llu pr %u\n",
		       t->id, t->namelen, t->name, c, ex ? "EX" : "PR", when,
		       n, (w >> 32) & 0xffff, (u32)w);
	}
}

static void torture_cs_enter(struct torture_thread *t, u64 *cell, bool ex,
			     int c)
{
	torture_cs_add(cell, ex ? TORTURE_CS_ONE_EX : 1);
	torture_cs_check(t, cell, ex, c, "granted");
}

static void torture_cs_leave(struct torture_thread *t, u64 *cell, bool ex,
			     int c)
{
	torture_cs_check(t, cell, ex, c, "entered meanwhile");
	torture_cs_add(cell, ex ? -TORTURE_CS_ONE_EX : -1ULL);
}

/*
 * Claim the name for @mode among this node's holders and check that no
 * conflicting local holder exists. Each claim is a fully ordered atomic
 * followed by reads of the other counters, so of two overlapping
 * conflicting holders at least one sees the other.
 */
static void torture_claim(struct torture_thread *t, struct torture_name *tn,
			  int mode)
{
	/* fs/dlm's matrix, written out again: what each mode lets in */
	static const u8 compat[RDLM_LOCK_NR] = {
		[RDLM_LOCK_NL] = 0x3f, [RDLM_LOCK_CR] = 0x1f,
		[RDLM_LOCK_CW] = 0x07, [RDLM_LOCK_PR] = 0x0b,
		[RDLM_LOCK_PW] = 0x03, [RDLM_LOCK_EX] = 0x01,
	};
	int m, n[RDLM_LOCK_NR];
	bool bad = false;

	if (mode == RDLM_LOCK_NL)
		return;
	atomic_inc_return(&tn->held[mode]);
	for (m = RDLM_LOCK_CR; m < RDLM_LOCK_NR; m++) {
		n[m] = atomic_read(&tn->held[m]);
		if (n[m] > (int)(m == mode) && !(compat[mode] & BIT(m)))
			bad = true;
	}
	if (bad) {
		torture_count(TS_MUTEX_VIOLATIONS);
		pr_err("thread %u: mutual exclusion violated on %.*s in mode %d: cr %d cw %d pr %d pw %d ex %d\n",
		       t->id, t->namelen, t->name, mode, n[RDLM_LOCK_CR],
		       n[RDLM_LOCK_CW], n[RDLM_LOCK_PR], n[RDLM_LOCK_PW],
		       n[RDLM_LOCK_EX]);
	}
	/* across nodes: PR and EX, the modes the suite tortures */
	if (mode == RDLM_LOCK_PR || mode == RDLM_LOCK_EX)
		t->cs_cell = torture_cs_cell(t->name, t->namelen, -1);
	if (t->cs_cell) {
		t->cs_ex = mode == RDLM_LOCK_EX;
		torture_cs_enter(t, t->cs_cell, t->cs_ex, -1);
	}
}

static void torture_unclaim(struct torture_thread *t, struct torture_name *tn,
			    int mode)
{
	if (t->cs_cell)
		torture_cs_leave(t, t->cs_cell, t->cs_ex, -1);
	t->cs_cell = NULL;
	if (mode != RDLM_LOCK_NL)
		atomic_dec(&tn->held[mode]);
}

/*
 * A grant of @mode arrived with the value block in t->lvb: count it, claim
 * the name, check the value against @min (what this node had written before
 * the request) and, for PW and EX, put the incremented counter in t->lvb for
 * the release. Returns the counter the release will write.
 */
static u64 torture_granted(struct torture_thread *t, struct torture_name *tn,
			   int mode, u64 min)
{
	u64 val = get_unaligned((u64 *)t->lvb);
	u64 chk = get_unaligned((u64 *)(t->lvb + 8));

	torture_count(TS_GRANT_NL + mode);
	if (t->lksb.flags & RDLM_SBF_DEMOTED)
		torture_count(TS_DEMOTED);
	torture_claim(t, tn, mode);
	if (mode == RDLM_LOCK_NL || !lvb)
		return val;
	if (t->lksb.flags & RDLM_SBF_VALNOTVALID) {
		torture_count(TS_LVB_INVALID);
	} else if ((val || chk) && chk != ~val) {
		torture_count(TS_LVB_VIOLATIONS);
		pr_err("thread %u: %.*s: LVB %016llx %016llx is not a counter\n",
		       t->id, t->namelen, t->name, val, chk);
	} else if (val < min) {
		torture_count(TS_LVB_VIOLATIONS);
		pr_err("thread %u: %.*s: LVB counter %llu, this node wrote %llu before\n",
		       t->id, t->namelen, t->name, val, min);
	}
	if (mode == RDLM_LOCK_PW || mode == RDLM_LOCK_EX) {
		val++;
		memset(t->lvb, 0, sizeof(t->lvb));
		put_unaligned(val, (u64 *)t->lvb);
		put_unaligned(~val, (u64 *)(t->lvb + 8));
	}
	return val;
}

/* The release of a PW or EX lock wrote @val to the home. */
static void torture_written(struct torture_name *tn, u64 val)
{
	s64 old = atomic64_read(&tn->written);

	while ((u64)old < val && !atomic64_try_cmpxchg(&tn->written, &old, val))
		;
	atomic64_inc(&tn->incs);
	torture_count(TS_INCS);
}

/* Hold the lock for a random time, or until a blocking callback. */
static void torture_hold(struct torture_thread *t)
{
	u32 us;

	if (!hold_us)
		return;
	us = prandom_u32_state(&t->rnd) % (hold_us + 1);
	wait_event_interruptible_hrtimeout(t->wq, READ_ONCE(t->bast),
					   ns_to_ktime((u64)us * NSEC_PER_USEC));
}

/*
 * One operation's latency. The first @warmup of a thread's are left out,
 * as rdlm-bench leaves out its first pair: a name's first lock creates its
 * resource on the node and at the home.
 */
static void torture_sample(struct torture_thread *t, ktime_t busy)
{
	s64 ns = ktime_to_ns(busy);
	int i;

	if (t->done_ops++ < warmup)
		return;
	i = atomic_inc_return(&torture_nr_samples) - 1;
	if (i < max_samples)
		torture_samples[i] = min_t(s64, ns, U32_MAX);
}

static atomic_t *torture_cell(int n, int c, bool ex)
{
	return &torture_cells[((size_t)n * range_cells + c) * 2 + ex];
}

/*
 * Claim cells [@first, @last] of name @n among this node's holders, then
 * check them: fully ordered increments before the reads, so of two
 * overlapping conflicting holders at least one sees the other.
 */
static void torture_range_claim(struct torture_thread *t, int n, int first,
				int last, bool ex)
{
	bool bad = false;
	u64 *cell;
	int c;

	for (c = first; c <= last; c++) {
		atomic_inc_return(torture_cell(n, c, ex));
		cell = torture_cs_cell(t->name, t->namelen, c);
		if (cell)
			torture_cs_enter(t, cell, ex, c);
	}
	for (c = first; c <= last; c++)
		if (atomic_read(torture_cell(n, c, true)) > ex ||
		    (ex && atomic_read(torture_cell(n, c, false))))
			bad = true;
	if (bad) {
		torture_count(TS_MUTEX_VIOLATIONS);
		pr_err("thread %u: %.*s cells %d-%d %s: another local holder overlaps\n",
		       t->id, t->namelen, t->name, first, last,
		       ex ? "EX" : "PR");
	}
}

static void torture_range_unclaim(struct torture_thread *t, int n, int first,
				  int last, bool ex)
{
	u64 *cell;
	int c;

	for (c = first; c <= last; c++) {
		cell = torture_cs_cell(t->name, t->namelen, c);
		if (cell)
			torture_cs_leave(t, cell, ex, c);
		atomic_dec(torture_cell(n, c, ex));
	}
}

/* One operation on a range lockspace: lock a run of cells, hold, unlock. */
static void torture_range_op(struct torture_thread *t)
{
	int n = prandom_u32_state(&t->rnd) % nlocks;
	int first = prandom_u32_state(&t->rnd) % range_cells;
	int last = min_t(int, first + prandom_u32_state(&t->rnd) % 16,
			 range_cells - 1);
	bool ex = !torture_pct(t, shared_pct);
	int mode = ex ? RDLM_LOCK_EX : RDLM_LOCK_PR, ret;
	u32 flags = 0;
	ktime_t t0, busy;

	if (noqueue_pct && torture_pct(t, noqueue_pct))
		flags |= RDLM_LKF_NOQUEUE;
	/* the request is always rdlm_range_lock(); @async: cancels, release */
	t->async = async_pct && torture_pct(t, async_pct);
	t->namelen = scnprintf(t->name, sizeof(t->name), "%s%d", prefix, n);
	WRITE_ONCE(t->bast, false);
	t0 = ktime_get();
	reinit_completion(&t->done);
	ret = rdlm_range_lock(torture_ls, mode, &t->lksb, flags, t->name,
			      t->namelen, (u64)first * 64,
			      (u64)(last + 1) * 64 - 1, timeout_ms,
			      torture_ast, t, torture_bast);
	if (!ret)
		ret = torture_cancel_wait(t, flags);
	busy = ktime_sub(ktime_get(), t0);
	if (ret) {
		torture_failed(t, mode, flags, ret);
		return;
	}
	torture_count(TS_GRANT_NL + mode);
	torture_range_claim(t, n, first, last, ex);
	torture_hold(t);
	torture_range_unclaim(t, n, first, last, ex);
	ret = torture_release(t, 0);
	if (ret) {
		torture_count(TS_ERRORS);
		pr_err("thread %u: unlock of %.*s cells %d-%d: %d\n", t->id,
		       t->namelen, t->name, first, last, ret);
		return;
	}
	torture_count(TS_OPS);
	torture_sample(t, busy);
}

/* One operation: lock, maybe convert, release. */
static void torture_op(struct torture_thread *t)
{
	u32 r = prandom_u32_state(&t->rnd);
	int n = r % nlocks, mode, to, ret;
	struct torture_name *tn = &torture_names[n];
	u32 flags = lvb ? RDLM_LKF_VALBLK : 0;
	bool claimed, write;
	ktime_t t0, busy;
	u64 min, val;

	r = prandom_u32_state(&t->rnd) % 100;
	if (r < shared_pct)
		mode = RDLM_LOCK_PR;
	else if (r < shared_pct + pw_pct)
		mode = RDLM_LOCK_PW;
	else if (r < shared_pct + pw_pct + cr_pct)
		mode = RDLM_LOCK_CR;
	else if (r < shared_pct + pw_pct + cr_pct + cw_pct)
		mode = RDLM_LOCK_CW;
	else
		mode = RDLM_LOCK_EX;
	if (noqueue_pct && torture_pct(t, noqueue_pct))
		flags |= RDLM_LKF_NOQUEUE;
	t->async = async_pct && torture_pct(t, async_pct);
	t->namelen = scnprintf(t->name, sizeof(t->name), "%s%d", prefix, n);
	WRITE_ONCE(t->bast, false);

	min = atomic64_read(&tn->written);
	t0 = ktime_get();
	ret = torture_request(t, mode, flags);
	busy = ktime_sub(ktime_get(), t0);
	if (ret) {
		torture_failed(t, mode, flags, ret);
		return;
	}
	val = torture_granted(t, tn, mode, min);
	claimed = true;
	write = lvb && mode >= RDLM_LOCK_PW;
	torture_hold(t);

	if ((mode == RDLM_LOCK_PR || mode == RDLM_LOCK_EX) && convert_pct &&
	    torture_pct(t, convert_pct)) {
		/*
		 * Give up the claim first: an up-conversion may wait demoted
		 * to NL, and once a down-conversion is done others may enter
		 * before this thread knows it.
		 */
		torture_unclaim(t, tn, mode);
		claimed = false;
		to = mode == RDLM_LOCK_PR ? RDLM_LOCK_EX : RDLM_LOCK_PR;
		flags = RDLM_LKF_CONVERT | (lvb ? RDLM_LKF_VALBLK : 0);
		/* without NOQUEUE, waiting demoted beats -EDEADLK */
		if (to == RDLM_LOCK_EX && noqueue_pct &&
		    torture_pct(t, noqueue_pct))
			flags |= RDLM_LKF_NOQUEUE;
		else if (to == RDLM_LOCK_EX)
			flags |= RDLM_LKF_CONVDEADLK;
		torture_count(to == RDLM_LOCK_EX ? TS_UPCONVERT : TS_DOWNCONVERT);
		WRITE_ONCE(t->bast, false);
		min = atomic64_read(&tn->written);
		if (write)
			min = max(min, val);
		t0 = ktime_get();
		ret = torture_request(t, to, flags);
		busy = ktime_add(busy, ktime_sub(ktime_get(), t0));
		if (!ret) {
			if (write)
				torture_written(tn, val);
			val = torture_granted(t, tn, to, min);
			claimed = true;
			write = lvb && to >= RDLM_LOCK_PW;
			mode = to;
			torture_hold(t);
		} else {
			/* The lock keeps its old mode (PR maybe demoted). */
			torture_failed(t, to, flags, ret);
		}
	}

	if (claimed)
		torture_unclaim(t, tn, mode);
	t0 = ktime_get();
	ret = torture_release(t, write ? RDLM_LKF_VALBLK : 0);
	busy = ktime_add(busy, ktime_sub(ktime_get(), t0));
	if (ret) {
		torture_count(TS_ERRORS);
		pr_err("thread %u: unlock of %.*s: %d\n", t->id, t->namelen,
		       t->name, ret);
		return;
	}
	if (write)
		torture_written(tn, val);
	torture_count(TS_OPS);
	torture_sample(t, busy);
}

static void torture_summary(const char *when)
{
	pr_info("%s: %s: ops %ld grants pr %ld pw %ld ex %ld, eagain %ld, timedout %ld, cancelled %ld, incs %ld, errors %ld, mutex violations %ld, lvb violations %ld\n",
		lockspace, when, atomic_long_read(&torture_stats[TS_OPS]),
		atomic_long_read(&torture_stats[TS_GRANT_PR]),
		atomic_long_read(&torture_stats[TS_GRANT_PW]),
		atomic_long_read(&torture_stats[TS_GRANT_EX]),
		atomic_long_read(&torture_stats[TS_EAGAIN]),
		atomic_long_read(&torture_stats[TS_TIMEDOUT]),
		atomic_long_read(&torture_stats[TS_CANCELLED]),
		atomic_long_read(&torture_stats[TS_INCS]),
		atomic_long_read(&torture_stats[TS_ERRORS]),
		atomic_long_read(&torture_stats[TS_MUTEX_VIOLATIONS]),
		atomic_long_read(&torture_stats[TS_LVB_VIOLATIONS]));
}

static int torture_thread_fn(void *arg)
{
	struct torture_thread *t = arg;
	unsigned long end;
	int i;

	/* interruptible: not a hung task however long the gate stays shut */
	while (gate && wait_for_completion_interruptible(&torture_go))
		;
	end = jiffies + (unsigned long)duration_s * HZ;
	for (i = 0; !kthread_should_stop(); i++) {
		if (nops ? i >= nops : time_after(jiffies, end))
			break;
		if (range_cells)
			torture_range_op(t);
		else
			torture_op(t);
		cond_resched();
	}
	/* The last thread's time is the end: set before it is counted. */
	atomic64_set(&torture_end_ns, ktime_get_ns());
	if (atomic_inc_return(&torture_threads_done) == nthreads) {
		torture_summary("done");
		complete_all(&torture_all_done);
	}
	/* Wait for kthread_stop(), which needs the task to still exist. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void torture_stat_fn(struct work_struct *work)
{
	torture_summary("running");
	if (atomic_read(&torture_threads_done) < nthreads)
		schedule_delayed_work(&torture_stat_work, stat_interval * HZ);
}

static int torture_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Mean, median, 99th percentile and maximum of the latency samples. */
static void torture_show_latency(struct seq_file *m)
{
	int n = min(atomic_read(&torture_nr_samples), max_samples), i;
	u64 sum = 0;
	u32 *s;

	seq_printf(m, "samples %d\n", n);
	if (!n)
		return;
	s = vmalloc_array(n, sizeof(*s));
	if (!s)
		return;
	memcpy(s, torture_samples, n * sizeof(*s));
	sort(s, n, sizeof(*s), torture_cmp_u32, NULL);
	for (i = 0; i < n; i++)
		sum += s[i];
	seq_printf(m, "lat_mean_ns %llu\nlat_p50_ns %u\nlat_p99_ns %u\nlat_max_ns %u\n",
		   div_u64(sum, n), s[n / 2], s[(u64)n * 99 / 100], s[n - 1]);
	vfree(s);
}

static int torture_stats_show(struct seq_file *m, void *v)
{
	int done = atomic_read_acquire(&torture_threads_done), i;
	ktime_t end = done == nthreads ? ns_to_ktime(atomic64_read(&torture_end_ns)) :
		      ktime_get();

	seq_printf(m, "lockspace %s\nprefix %s\nnames %d\nthreads %d\n",
		   lockspace, prefix, nlocks, nthreads);
	seq_printf(m, "state %s\nthreads_done %d\nelapsed_ms %lld\n",
		   done == nthreads ? "done" : "running", done,
		   ktime_ms_delta(end, torture_start));
	for (i = 0; i < TS_NR; i++)
		seq_printf(m, "%s %ld\n", torture_stat_names[i],
			   atomic_long_read(&torture_stats[i]));
	torture_show_latency(m);
	seq_puts(m, "incs_by_name");
	for (i = 0; i < nlocks; i++)
		seq_printf(m, " %lld", atomic64_read(&torture_names[i].incs));
	seq_putc(m, '\n');
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(torture_stats);

/*
 * Reading "counters" takes each name in PR with the value block and prints
 * its counter ("invalid" when the block is marked invalid, "error:N" when the
 * lock fails): the test script's cluster-wide check, once all nodes are done.
 */
static int torture_counters_show(struct seq_file *m, void *v)
{
	struct rdlm_lksb lksb = {};
	char name[RDLM_NAME_MAX], lvb[RDLM_LVB_MAX];
	int i, len, ret;

	seq_puts(m, "counters");
	for (i = 0; i < nlocks; i++) {
		len = scnprintf(name, sizeof(name), "%s%d", prefix, i);
		memset(lvb, 0, sizeof(lvb));
		lksb.lvb = lvb;
		ret = rdlm_lock_wait(torture_ls, RDLM_LOCK_PR, &lksb,
				     RDLM_LKF_VALBLK, name, len, timeout_ms,
				     NULL, NULL);
		if (ret) {
			seq_printf(m, " error:%d", ret);
			continue;
		}
		if (lksb.flags & RDLM_SBF_VALNOTVALID)
			seq_puts(m, " invalid");
		else
			seq_printf(m, " %llu", get_unaligned((u64 *)lvb));
		ret = rdlm_unlock_wait(torture_ls, &lksb, 0);
		if (ret)
			pr_err("unlock of %.*s: %d\n", len, name, ret);
	}
	seq_putc(m, '\n');
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(torture_counters);

static ssize_t torture_go_write(struct file *file, const char __user *buf,
				size_t len, loff_t *ppos)
{
	complete_all(&torture_go);
	return len;
}

static const struct file_operations torture_go_fops = {
	.owner = THIS_MODULE,
	.write = torture_go_write,
};

/*
 * Open the gate and sleep until every thread is done: a benchmark's shell
 * that waits this way is not runnable next to the thread it measures, as
 * one polling "stats" would be, and the thread's time slices are its own.
 */
static ssize_t torture_run_write(struct file *file, const char __user *buf,
				 size_t len, loff_t *ppos)
{
	int ret;

	complete_all(&torture_go);
	/* no threads (plock_files only): nothing to wait for */
	if (!nthreads)
		return len;
	ret = wait_for_completion_interruptible(&torture_all_done);
	if (ret)
		return ret;	/* -ERESTARTSYS: the write may start again */
	return len;
}

static const struct file_operations torture_run_fops = {
	.owner = THIS_MODULE,
	.write = torture_run_write,
};

static bool torture_pct_ok(const char *what, int pct)
{
	if (pct >= 0 && pct <= 100)
		return true;
	pr_err("%s=%d is not a percentage\n", what, pct);
	return false;
}

static int torture_check_params(void)
{
	if (!lockspace || !*lockspace || !prefix ||
	    strlen(prefix) > RDLM_NAME_MAX - 5) {
		pr_err("lockspace must be set, prefix at most %d bytes\n",
		       RDLM_NAME_MAX - 5);
		return -EINVAL;
	}
	if (plock_files < 0 || plock_files > 64) {
		pr_err("plock_files must be 0-64\n");
		return -EINVAL;
	}
	if (nthreads < !plock_files || nthreads > 64 || nlocks < 1 ||
	    nlocks > 4096) {
		pr_err("nthreads must be 1-64 (0 with plock_files) and nlocks 1-4096\n");
		return -EINVAL;
	}
	if (nops < 0 || duration_s < 0 || (!nops && !duration_s)) {
		pr_err("give nops or duration_s, positive\n");
		return -EINVAL;
	}
	if (!torture_pct_ok("shared_pct", shared_pct) ||
	    !torture_pct_ok("pw_pct", pw_pct) ||
	    !torture_pct_ok("cr_pct", cr_pct) ||
	    !torture_pct_ok("cw_pct", cw_pct) ||
	    !torture_pct_ok("shared_pct + pw_pct + cr_pct + cw_pct",
			    shared_pct + pw_pct + cr_pct + cw_pct) ||
	    !torture_pct_ok("convert_pct", convert_pct) ||
	    !torture_pct_ok("noqueue_pct", noqueue_pct) ||
	    !torture_pct_ok("async_pct", async_pct) ||
	    !torture_pct_ok("cancel_pct", cancel_pct))
		return -EINVAL;
	if (range_cells < 0 || range_cells > 1024) {
		pr_err("range_cells must be 0-1024\n");
		return -EINVAL;
	}
	if (hold_us < 0 || hold_us > 1000000 || timeout_ms < 0 ||
	    timeout_ms > 3600000 || stat_interval < 0 ||
	    stat_interval > 3600 || max_samples < 1 ||
	    max_samples > 16000000 || warmup < 0) {
		pr_err("hold_us (0-1000000), timeout_ms (0-3600000), stat_interval (0-3600), max_samples (1-16000000) or warmup (0 or more) out of range\n");
		return -EINVAL;
	}
	if (cs_phys && (cs_node < 1 || cs_node >= TORTURE_CS_WORDS ||
			cs_boot < 1 || cs_boot > 0xffff || cs_size < SZ_4K ||
			cs_size > SZ_1G)) {
		pr_err("with cs_phys, cs_node must be 1-%d, cs_boot 1-65535 and cs_size 4 KiB-1 GiB\n",
		       TORTURE_CS_WORDS - 1);
		return -EINVAL;
	}
	return 0;
}

/* plock<i>'s file number, the same on every node: "rtpl" and i */
#define TORTURE_PLOCK_NUMBER(i)	(0x7274706cULL << 32 | (i))

/* fcntl() on debugfs plock<i>: what OCFS2's ->lock() does over rdlm */
static int torture_plock(struct file *file, int cmd, struct file_lock *fl)
{
	u64 number = TORTURE_PLOCK_NUMBER((uintptr_t)file->private_data);

	if (!(fl->fl_flags & FL_POSIX))
		return -ENOLCK;
	return rdlm_posix_fcntl(torture_ls, number, file, cmd, fl);
}

static const struct file_operations torture_plock_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.lock = torture_plock,
	.llseek = no_llseek,
};

static void torture_stop_threads(int started)
{
	int i;

	complete_all(&torture_go);	/* gated threads see the stop */
	for (i = 0; i < started; i++)
		kthread_stop(torture_threads[i].task);
}

static void torture_free(void)
{
	if (torture_cs_mem)
		memunmap(torture_cs_mem);
	vfree(torture_samples);
	kvfree(torture_cells);
	kfree(torture_threads);
	kfree(torture_names);
	if (!template) {
		rdlm_lockspace_put(torture_ls);
		return;
	}
	/* a lock left by another user of the lockspace: say so, then go */
	if (rdlm_release_lockspace(torture_ls, false) == -EBUSY) {
		pr_info("%s: busy, released by force\n", lockspace);
		rdlm_release_lockspace(torture_ls, true);
	}
}

static int __init torture_init(void)
{
	struct torture_thread *t;
	int ret, i;

	ret = torture_check_params();
	if (ret)
		return ret;
	if (template)
		ret = rdlm_new_lockspace(lockspace, template, 0, &torture_ls);
	else
		ret = rdlm_lockspace_find(lockspace, &torture_ls);
	if (ret) {
		pr_err("lockspace %s: %d\n", lockspace, ret);
		return ret;
	}
	ret = -ENOMEM;
	torture_names = kcalloc(nlocks, sizeof(*torture_names), GFP_KERNEL);
	torture_threads = kcalloc(nthreads, sizeof(*torture_threads),
				  GFP_KERNEL);
	torture_samples = vmalloc_array(max_samples, sizeof(*torture_samples));
	if (!torture_names || !torture_threads || !torture_samples)
		goto out_free;
	if (range_cells) {
		torture_cells = kvcalloc((size_t)nlocks * range_cells * 2,
					 sizeof(*torture_cells), GFP_KERNEL);
		if (!torture_cells)
			goto out_free;
	}
	if (cs_phys) {
		torture_cs_mem = memremap(cs_phys, cs_size, MEMREMAP_WB);
		if (!torture_cs_mem)
			goto out_free;
	}

	torture_start = ktime_get();
	for (i = 0; i < nthreads; i++) {
		t = &torture_threads[i];
		t->id = i;
		prandom_seed_state(&t->rnd, get_random_u64());
		t->lksb.lvb = t->lvb;
		init_completion(&t->done);
		init_waitqueue_head(&t->wq);
		t->task = kthread_run(torture_thread_fn, t, "rdlm_torture/%d", i);
		if (IS_ERR(t->task)) {
			ret = PTR_ERR(t->task);
			torture_stop_threads(i);
			goto out_free;
		}
	}

	torture_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, torture_dir, NULL,
			    &torture_stats_fops);
	debugfs_create_file("counters", 0400, torture_dir, NULL,
			    &torture_counters_fops);
	debugfs_create_file("go", 0200, torture_dir, NULL, &torture_go_fops);
	debugfs_create_file("run", 0200, torture_dir, NULL, &torture_run_fops);
	for (i = 0; i < plock_files; i++) {
		char name[16];

		snprintf(name, sizeof(name), "plock%d", i);
		/* unsafe: opened, it keeps its fops (->lock) and the module */
		debugfs_create_file_unsafe(name, 0600, torture_dir,
					   (void *)(uintptr_t)i,
					   &torture_plock_fops);
	}
	INIT_DELAYED_WORK(&torture_stat_work, torture_stat_fn);
	if (stat_interval)
		schedule_delayed_work(&torture_stat_work, stat_interval * HZ);
	pr_info("%s: %d threads on %d names %s0..%d, %s %d\n", lockspace,
		nthreads, nlocks, prefix, nlocks - 1,
		nops ? "ops" : "seconds", nops ? nops : duration_s);
	return 0;

out_free:
	torture_free();
	return ret;
}

static void __exit torture_exit(void)
{
	debugfs_remove_recursive(torture_dir);
	cancel_delayed_work_sync(&torture_stat_work);
	torture_stop_threads(nthreads);
	torture_summary("unloading");
	torture_free();
}

module_init(torture_init);
module_exit(torture_exit);

MODULE_AUTHOR("The rdlm developers");
MODULE_DESCRIPTION("Torture test of the rdlm kernel API");
MODULE_LICENSE("GPL");
