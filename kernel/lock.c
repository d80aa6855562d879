// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: locks on named resources, the exported kernel API.
 *
 * A lock (struct rdlm_lkb) belongs to a resource name (struct rdlm_res),
 * which hashes to a lock word: (home, slot). This node asks the engine for
 * the word once (struct rdlm_slot) and grants local locks from that hold:
 * a waiting lock is granted when the hold covers its mode (EX covers all,
 * SH covers CR and PR) and it is compatible with the other local holders
 * of its name. Different names on one word never wait for each other here,
 * except for a stronger hold. After local_grants_max grants the hold is
 * given back once its holders are gone, so remote waiters get their turn
 * (a kept hold nobody asked for is exempt for cache_us).
 * With hold caching (configfs cache_us) a hold whose last lock went is
 * kept for the next one until another node waits for the word, or for
 * cache_us, or half the grant's lease, whichever ends first.
 *
 * The lock value block lives at the home and moves by messages: lvb.c
 * holds both halves of that protocol.
 *
 * Callbacks run from the lockspace's ordered work queue, never under
 * ls->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/jhash.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "lock_priv.h"

/* ---- modes ---------------------------------------------------------- */

/*
 * A word has two engine modes, so across nodes CR and PR take it shared
 * and CW, PW and EX exclusive: stricter than fs/dlm's matrix for CR-CW,
 * CR-PW and CW-CW, never looser. NL needs no hold.
 */
static u8 rdlm_engine_mode(int mode)
{
	return mode == RDLM_LOCK_CR || mode == RDLM_LOCK_PR ? RDLM_MODE_SH :
							       RDLM_MODE_EX;
}

/* Does a hold in engine mode @own cover lock mode @mode? */
static bool rdlm_covers(u8 own, int mode)
{
	return own == RDLM_MODE_EX || rdlm_engine_mode(mode) == RDLM_MODE_SH ||
	       mode == RDLM_LOCK_NL;
}

/* fs/dlm's compatibility matrix (fs/dlm/lock.c), by RDLM_LOCK_* */
static const u8 rdlm_compat_matrix[RDLM_LOCK_NR] = {
	[RDLM_LOCK_NL] = 0x3f,	/* everything */
	[RDLM_LOCK_CR] = 0x1f,	/* all but EX */
	[RDLM_LOCK_CW] = 0x07,	/* NL CR CW */
	[RDLM_LOCK_PR] = 0x0b,	/* NL CR PR */
	[RDLM_LOCK_PW] = 0x03,	/* NL CR */
	[RDLM_LOCK_EX] = 0x01,	/* NL */
};

/* May @req be granted next to a holder in @held? */
static bool rdlm_compat(int req, int held)
{
	return rdlm_compat_matrix[req] & BIT(held);
}

/* Does @mode let in everything @old lets in (a down-conversion)? */
static bool rdlm_weaker(int mode, int old)
{
	return (rdlm_compat_matrix[mode] & rdlm_compat_matrix[old]) ==
	       rdlm_compat_matrix[old];
}

/* ---- callbacks ------------------------------------------------------ */

/* The synchronous calls wait for the first completion with this ast. */
struct rdlm_waiter {
	struct completion done;
	struct rdlm_lksb *lksb;
	int status;
};

#define RDLM_POLL_US_MAX 10000

static unsigned int rdlm_poll_us;

static int rdlm_poll_us_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, RDLM_POLL_US_MAX);
}

static const struct kernel_param_ops rdlm_poll_us_ops = {
	.set = rdlm_poll_us_set,
	.get = param_get_uint,
};
module_param_cb(poll_us, &rdlm_poll_us_ops, &rdlm_poll_us, 0644);
MODULE_PARM_DESC(poll_us, "Microseconds a synchronous request spins for its answer before it sleeps, 0-10000 (0: it sleeps at once)");

/**
 * rdlm_spin_wait() - spin a while for what a synchronous caller waits for
 * @done: tells whether it came
 * @arg: its argument
 *
 * For up to poll_us: where a round trip is shorter than a sleep and a
 * wake-up, the answer comes first (as with polled block I/O). The spin
 * yields whenever the scheduler asks. The caller then waits as it would
 * have, and finds the answer there if it came.
 *
 * Context: process context, may schedule.
 */
void rdlm_spin_wait(bool (*done)(void *arg), void *arg)
{
	u32 us = READ_ONCE(rdlm_poll_us);
	u64 end;

	if (!us)
		return;
	end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;
	while (!done(arg) && !signal_pending(current) && ktime_get_ns() < end) {
		cond_resched();
		cpu_relax();
	}
}

static bool rdlm_waiter_done(void *arg)
{
	struct rdlm_waiter *w = arg;

	return completion_done(&w->done);
}

static void rdlm_wake(void *arg)
{
	struct rdlm_waiter *w = arg;

	w->status = w->lksb->status;
	complete(&w->done);
}

/*
 * Complete a synchronous caller's request from where it completes (the
 * verb's completion, a timer, the caller's own call): the status block is
 * filled under ls->lock and the caller woken, without the hop through the
 * callback work the other asts take. Only when no earlier callback of the
 * lock is still queued or being delivered, so that the caller sees them in
 * order and none runs after its call returned.
 */
static void rdlm_wake_now(struct rdlm_lkb *lkb, int status, u32 sbflags,
			  bool lvb)
{
	struct rdlm_lksb *lksb = lkb->lksb;

	if (lvb && lksb->lvb)
		memcpy(lksb->lvb, lkb->lvb_snap, lkb->ls->lvb_len);
	lksb->flags = sbflags;
	lksb->status = status;
	lkb->ls->st.asts_direct++;
	rdlm_wake(lkb->arg);
}

static void rdlm_queue_cb(struct rdlm_lkb *lkb, u8 flag)
{
	struct rdlm_lockspace *ls = lkb->ls;

	if (!lkb->cb_flags && !lkb->cb_caller) {
		list_add_tail(&lkb->cb_entry, &ls->cb_list);
		queue_work(ls->wq, &ls->cb_work);
	}
	lkb->cb_flags |= flag;
}

/**
 * rdlm_queue_ast() - queue the completion callback of a request
 * @lkb: the lock
 * @status: its status
 * @sbflags: RDLM_SBF_* for the status block
 * @lvb: copy the LVB read for the grant into the status block first
 *
 * The ast and status block are those the lock has now (a later conversion
 * may change them). A synchronous caller's waiter gets exactly one
 * completion. Context: ls->lock held.
 */
void rdlm_queue_ast(struct rdlm_lkb *lkb, int status, u32 sbflags,
		    bool lvb)
{
	typeof(lkb->asts[0]) *a;
	u8 i;

	if (lkb->nr_asts == RDLM_MAX_ASTS) {
		/* the caller ignored earlier asts: drop the oldest, no waiter's */
		for (i = 0; i < RDLM_MAX_ASTS - 1 &&
		     lkb->asts[i].ast == rdlm_wake; i++)
			;
		memmove(&lkb->asts[i], &lkb->asts[i + 1],
			(RDLM_MAX_ASTS - 1 - i) * sizeof(lkb->asts[0]));
		lkb->nr_asts--;
	}
	if (lkb->ast == rdlm_wake && !lkb->nr_asts && lkb->ls->cb_cur != lkb &&
	    !lkb->cb_caller) {
		/* a waiter on the stack: woken once, from here, then gone */
		rdlm_wake_now(lkb, status, sbflags, lvb);
		lkb->ast = NULL;
		lkb->arg = NULL;
		return;
	}
	a = &lkb->asts[lkb->nr_asts++];
	a->status = status;
	a->sbflags = sbflags;
	a->lvb = lvb;
	a->ast = lkb->ast;
	a->arg = lkb->arg;
	a->lksb = lkb->lksb;
	if (lkb->ast == rdlm_wake) {
		lkb->ast = NULL;
		lkb->arg = NULL;
	}
	lkb->ls->st.asts_queued++;
	rdlm_queue_cb(lkb, RDLM_CB_AST);
}

/* As fs/dlm's highbast: once per mode, again only for a stronger one. */
void rdlm_queue_bast(struct rdlm_lkb *lkb, int mode)
{
	if (!lkb->bast || lkb->grmode <= RDLM_LOCK_NL)
		return;
	if (lkb->lvb_wait) {
		/* its grant is not told yet: fs/dlm's order, the AST first */
		lkb->bast_due = max_t(u8, lkb->bast_due, mode + 1);
		return;
	}
	if (lkb->bast_mode >= mode)
		return;
	lkb->bast_mode = mode;
	lkb->cb_bast_mode = mode;
	lkb->cb_bast = lkb->bast;
	lkb->cb_bast_arg = lkb->bast_arg;
	lkb->ls->st.basts++;
	rdlm_queue_cb(lkb, RDLM_CB_BAST);
}

/**
 * rdlm_lkb_kill() - complete a lock's last request; the lock goes
 * @lkb: the lock, off every list
 * @status: status of its last completion
 * @sbflags: RDLM_SBF_* of it
 *
 * The lock is freed once its queued callbacks ran. Context: ls->lock held.
 */
void rdlm_lkb_kill(struct rdlm_lkb *lkb, int status, u32 sbflags)
{
	lkb->state = RDLM_LKB_DEAD;
	rdlm_queue_ast(lkb, status, sbflags, false);
	rdlm_queue_cb(lkb, RDLM_CB_FREE);
}

static void rdlm_res_put(struct rdlm_lockspace *ls, struct rdlm_res *res);

static void rdlm_lkb_free(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb)
{
	del_timer_sync(&lkb->timeout);
	spin_lock_bh(&ls->lock);
	hash_del(&lkb->hash);
	if (lkb->res) {
		lkb->res->nr_lkbs--;
		rdlm_res_put(ls, lkb->res);
	}
	rdlm_ls_unlock(ls);
	kfree(lkb);
	if (atomic_dec_and_test(&ls->nr_lkbs))
		wake_up(&ls->wait);
}

/* A lock's pending callbacks, taken off it to run outside ls->lock. */
struct rdlm_cbs {
	typeof_member(struct rdlm_lkb, asts) asts;
	void (*bast)(void *arg, int mode);
	void *bast_arg;
	int bmode;
	u8 flags;
	u8 nr;
};

static void rdlm_cbs_take(struct rdlm_lkb *lkb, struct rdlm_cbs *cbs)
{
	cbs->flags = lkb->cb_flags;
	lkb->cb_flags = 0;
	cbs->nr = lkb->nr_asts;
	lkb->nr_asts = 0;
	memcpy(cbs->asts, lkb->asts, sizeof(cbs->asts));
	cbs->bmode = lkb->cb_bast_mode;
	cbs->bast = lkb->cb_bast;
	cbs->bast_arg = lkb->cb_bast_arg;
}

/* Run what rdlm_cbs_take() took; true if @lkb is freed now. */
static bool rdlm_cbs_run(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			 const struct rdlm_cbs *cbs)
{
	u8 i;

	for (i = 0; i < cbs->nr; i++) {
		struct rdlm_lksb *lksb = cbs->asts[i].lksb;

		if (cbs->asts[i].lvb && lksb->lvb)
			memcpy(lksb->lvb, lkb->lvb_snap, ls->lvb_len);
		lksb->flags = cbs->asts[i].sbflags;
		lksb->status = cbs->asts[i].status;
		if (cbs->asts[i].ast)
			cbs->asts[i].ast(cbs->asts[i].arg);
	}
	/* after the final ast the caller may have freed bast_arg */
	if (cbs->flags & RDLM_CB_FREE) {
		rdlm_lkb_free(ls, lkb);
		return true;
	}
	if ((cbs->flags & RDLM_CB_BAST) && cbs->bast)
		cbs->bast(cbs->bast_arg, cbs->bmode);
	return false;
}

/**
 * rdlm_ls_cb_work() - run the lockspace's pending callbacks
 * @work: &rdlm_lockspace.cb_work
 */
void rdlm_ls_cb_work(struct work_struct *work)
{
	struct rdlm_lockspace *ls = container_of(work, struct rdlm_lockspace,
						 cb_work);
	struct rdlm_lkb *lkb;
	struct rdlm_cbs cbs;

	for (;;) {
		spin_lock_bh(&ls->lock);
		lkb = list_first_entry_or_null(&ls->cb_list, struct rdlm_lkb,
					       cb_entry);
		/* no direct wake-up overtakes what is delivered outside the lock */
		ls->cb_cur = lkb;
		if (!lkb) {
			rdlm_ls_unlock(ls);
			return;
		}
		list_del(&lkb->cb_entry);
		rdlm_cbs_take(lkb, &cbs);
		rdlm_ls_unlock(ls);
		rdlm_cbs_run(ls, lkb, &cbs);
	}
}

/*
 * May the caller of a request of @lkb run the callbacks that come before
 * the call returns? Only if none is queued for the work or running there,
 * which would then run after them. Context: ls->lock held.
 */
static bool rdlm_lkb_caller_cbs_begin(struct rdlm_lockspace *ls,
				      struct rdlm_lkb *lkb)
{
	if (lkb->cb_flags || lkb->cb_caller || ls->cb_cur == lkb)
		return false;
	lkb->cb_caller = true;
	return true;
}

/*
 * Run @lkb's callbacks that came during its caller's request, in the
 * caller's context, as the work would; later ones go to the work again.
 */
static void rdlm_lkb_caller_cbs(struct rdlm_lockspace *ls,
				struct rdlm_lkb *lkb)
{
	struct rdlm_cbs cbs;

	for (;;) {
		spin_lock_bh(&ls->lock);
		if (!lkb->cb_flags) {
			lkb->cb_caller = false;
			rdlm_ls_unlock(ls);
			return;
		}
		rdlm_cbs_take(lkb, &cbs);
		ls->st.asts_inline += cbs.nr;
		rdlm_ls_unlock(ls);
		if (rdlm_cbs_run(ls, lkb, &cbs))
			return;
	}
}

/* ---- slots and resources -------------------------------------------- */

static u32 rdlm_slot_hash(u32 home, u32 slot)
{
	return jhash_2words(home, slot, 0);
}

/**
 * rdlm_slot_find() - this node's state of a lock word, if it has any
 * @ls: lockspace (locked)
 * @home: engine index of the word's home
 * @slot: slot of the word in the home's table
 *
 * Return: the slot, or NULL.
 */
struct rdlm_slot *rdlm_slot_find(struct rdlm_lockspace *ls, u32 home,
				 u32 slot)
{
	struct rdlm_slot *s;

	hash_for_each_possible(ls->slots, s, hash, rdlm_slot_hash(home, slot))
		if (s->home == home && s->slot == slot)
			return s;
	return NULL;
}

static void rdlm_slot_maybe_free(struct rdlm_lockspace *ls,
				 struct rdlm_slot *s)
{
	if (s->state == RDLM_SLOT_IDLE && list_empty(&s->resources) &&
	    !s->lvb_puts && !s->pinned && !s->retiring) {
		hash_del(&s->hash);
		kfree(s);
	}
}

static void rdlm_res_put(struct rdlm_lockspace *ls, struct rdlm_res *res)
{
	struct rdlm_slot *s = res->slot;

	if (res->nr_lkbs)
		return;
	if (s->peek_res == res)
		rdlm_lvb_peek_drop(ls, s);
	hash_del(&res->hash);
	list_del(&res->slot_entry);
	kfree(res);
	rdlm_slot_maybe_free(ls, s);
}

/**
 * rdlm_slot_get() - this node's state of a lock word, made if it has none
 * @ls: lockspace (locked)
 * @home: engine index of the word's home
 * @slot: slot of the word in the home's table
 *
 * Return: the slot, or NULL without memory.
 */
struct rdlm_slot *rdlm_slot_get(struct rdlm_lockspace *ls, u32 home, u32 slot)
{
	struct rdlm_slot *s = rdlm_slot_find(ls, home, slot);

	if (s)
		return s;
	s = kzalloc(sizeof(*s), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!s)
		return NULL;
	s->home = home;
	s->slot = slot;
	INIT_LIST_HEAD(&s->resources);
	INIT_LIST_HEAD(&s->put_waiters);
	hash_add(ls->slots, &s->hash, rdlm_slot_hash(home, slot));
	return s;
}

/* The 64-bit key of a name: its LVB's key, and what its home hashes. */
u64 rdlm_name_key(const void *name, unsigned int namelen)
{
	return (u64)jhash(name, namelen, 1) << 32 | jhash(name, namelen, 2);
}

static struct rdlm_res *rdlm_res_get(struct rdlm_lockspace *ls,
				     const void *name, unsigned int namelen)
{
	u32 h = jhash(name, namelen, 0);
	u64 key = rdlm_name_key(name, namelen);
	u32 home = rdlm_home_of(ls, ls->rh_map, key);
	u32 slot = jhash(name, namelen, 0x51075107);
	struct rdlm_slot *s;
	struct rdlm_res *res;

	hash_for_each_possible(ls->res, res, hash, h)
		if (res->namelen == namelen && !memcmp(res->name, name, namelen))
			return res;

	/* words of a table are few: names share them, see rdlm_slot_pass() */
	if (ls->eng.ops->any_slot)
		slot &= RDLM_ANY_SLOT_MAX;
	else
		slot %= ls->nr_slots;

	s = rdlm_slot_get(ls, home, slot);
	if (!s)
		return NULL;
	res = kzalloc(sizeof(*res), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!res) {
		rdlm_slot_maybe_free(ls, s);
		return NULL;
	}
	res->slot = s;
	res->key = key;
	res->frozen = rdlm_rehome_frozen(ls, key);
	INIT_LIST_HEAD(&res->granted);
	INIT_LIST_HEAD(&res->waiting);
	res->namelen = namelen;
	memcpy(res->name, name, namelen);
	hash_add(ls->res, &res->hash, h);
	list_add_tail(&res->slot_entry, &s->resources);
	return res;
}

/**
 * rdlm_res_move() - a name's home moved: it uses another lock word now
 * @ls: lockspace (locked)
 * @res: the name
 * @to: this node's state of its word at the new home
 *
 * A hold of the old word stays until the thaw (&rdlm_slot.pinned): a node
 * that still hashes the name there must not be granted it meanwhile. An
 * LVB copy of a name without holders is not the new home's: forget it.
 * The caller passes both words.
 */
void rdlm_res_move(struct rdlm_lockspace *ls, struct rdlm_res *res,
		   struct rdlm_slot *to)
{
	struct rdlm_slot *from = res->slot;
	struct rdlm_lkb *lkb;
	bool holders = false;

	if (from->peek_res == res)
		rdlm_lvb_peek_drop(ls, from);
	list_for_each_entry(lkb, &res->granted, gr_entry)
		if (lkb->grmode > RDLM_LOCK_NL)
			holders = true;
	if (holders && from->state != RDLM_SLOT_IDLE)
		from->pinned = true;
	if (!holders)
		res->lvb_cached = false;
	res->rh_told = false;
	list_move_tail(&res->slot_entry, &to->resources);
	res->slot = to;
}

/**
 * rdlm_res_reclaimed() - does this node hold the word its moved name's
 *	granted locks need (or were they lost)?
 * @ls: lockspace (locked)
 * @res: the name
 *
 * Return: true when nothing of it waits for a hold at its home now.
 */
bool rdlm_res_reclaimed(struct rdlm_lockspace *ls, struct rdlm_res *res)
{
	struct rdlm_slot *s = res->slot;
	struct rdlm_lkb *lkb;

	list_for_each_entry(lkb, &res->granted, gr_entry) {
		if (lkb->grmode <= RDLM_LOCK_NL || lkb->lost)
			continue;
		/* not moved yet (rdlm_rh_move() said not now) */
		if (s->home != rdlm_home_of(ls, ls->rh_map, res->key) ||
		    s->state != RDLM_SLOT_OWNED || s->lost ||
		    !rdlm_covers(s->own_mode, lkb->grmode))
			return false;
	}
	return true;
}

/* ---- engine calls ---------------------------------------------------- */

static void rdlm_emit(struct rdlm_out *out, const struct rdlm_action *act);

/* The context of an engine call on @ls. */
struct rdlm_out rdlm_ls_out(struct rdlm_lockspace *ls)
{
	struct rdlm_out out = {
		.now = ktime_get_ns(),
		.emit = rdlm_emit,
		.priv = ls,
	};

	return out;
}

static void rdlm_slot_acquire(struct rdlm_lockspace *ls, struct rdlm_slot *s,
			      u8 mode, bool trying)
{
	struct rdlm_out out = rdlm_ls_out(ls);
	struct rdlm_req *req;
	int ret;

	req = rdlm_req_alloc(&ls->eng);
	if (!req) {
		ls->starved = true;	/* retried when one is given back */
		/* kept holds have theirs: let them go (rdlm_ls_unlock()) */
		ls->cache_shrink = ls->cache_ns;
		return;
	}
	if (ls->eng.ops->exclusive_only)
		mode = RDLM_MODE_EX;
	req->node = s->home;
	req->slot = s->slot;
	req->mode = mode;
	req->flags = trying ? RDLM_RF_NOQUEUE : 0;
	req->slots = 1;
	req->user = (u64)(uintptr_t)s;
	s->req = req;
	s->own_mode = mode;
	s->trying = trying;
	s->state = RDLM_SLOT_ACQUIRING;
	s->answers = 0;
	s->grant_first = false;
	ret = ls->eng.ops->lock(&ls->eng, req, &out);
	if (ret) {
		s->req = NULL;
		s->state = RDLM_SLOT_IDLE;
		rdlm_req_free(&ls->eng, req);
		return;
	}
	rdlm_lvb_peek(ls, s);
}

static void rdlm_slot_upgrade_cancel(struct rdlm_lockspace *ls,
				     struct rdlm_slot *s)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	if (!ls->eng.ops->convert(&ls->eng, s->req, RDLM_MODE_SH, 0, &out))
		s->upgrade_cancel = true;
}

static void rdlm_slot_upgrade_over(struct rdlm_slot *s)
{
	s->upgrading = false;
	s->upgrade_trying = false;
	s->upgrade_cancel = false;
}

static void rdlm_slot_release(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	s->state = RDLM_SLOT_RELEASING;
	rdlm_slot_upgrade_over(s);	/* the release ends it */
	ls->eng.ops->unlock(&ls->eng, s->req, &out);
}

/*
 * Make this node's shared hold of @s exclusive in place (engines with
 * ->convert): the hold stays, and fs/dlm's conversion rules apply among
 * the nodes' holds of the word. Without it, a lock needing more than the
 * hold gives waits for this node's holders to go.
 */
static void rdlm_slot_upgrade(struct rdlm_lockspace *ls, struct rdlm_slot *s,
			      bool trying, bool nodlckwt)
{
	struct rdlm_out out = rdlm_ls_out(ls);
	u8 flags = (trying ? RDLM_RF_NOQUEUE : 0) |
		   (nodlckwt ? RDLM_RF_NODLCKWT : 0);

	if (ls->eng.ops->convert(&ls->eng, s->req, RDLM_MODE_EX, flags,
				 &out)) {
		s->upgrade_refused = true;
		return;
	}
	s->upgrading = true;
	s->upgrade_trying = trying;
	s->upgrade_cancel = false;
}

/*
 * Make an exclusive hold shared in place: as fs/dlm's down-conversions,
 * other nodes' shared requests need not wait for this node's last lock.
 */
static void rdlm_slot_downgrade(struct rdlm_lockspace *ls,
				struct rdlm_slot *s)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	if (!rdlm_engine_converts(&ls->eng) || s->state != RDLM_SLOT_OWNED ||
	    s->own_mode != RDLM_MODE_EX || s->lost || s->upgrading)
		return;
	if (ls->eng.ops->convert(&ls->eng, s->req, RDLM_MODE_SH, 0, &out))
		return;
	s->own_mode = RDLM_MODE_SH;
	ls->st.downgrades++;
}

/*
 * Does the cluster still count @home in (is it out of reach, too)? Then
 * its names wait, as fs/dlm's wait for recovery: for the link to come
 * back (the engines repair their queues; a request that failed on the
 * link asks again) or for the membership to move them (rehome.c).
 * Without a cluster manager nobody would decide: requests fail with
 * -ENOTCONN at once.
 */
static bool rdlm_home_member(struct rdlm_lockspace *ls, u32 home)
{
	return ls->memb_epoch && !ls->memb_stopped &&
	       (ls->memb_in & BIT_ULL(home));
}

static bool rdlm_home_awaited(struct rdlm_lockspace *ls, u32 home)
{
	return rdlm_home_member(ls, home) &&
	       !rdlm_fabric_ls_ready(ls->fls, ls->members[home]);
}

static bool rdlm_slot_may_upgrade(struct rdlm_lockspace *ls,
				  struct rdlm_slot *s)
{
	return rdlm_engine_converts(&ls->eng) && s->state == RDLM_SLOT_OWNED &&
	       !rdlm_home_awaited(ls, s->home) &&
	       s->own_mode == RDLM_MODE_SH && !s->lost && !s->upgrading &&
	       !s->upgrade_refused;
}

/* Arm the cache timer for @until, unless it fires before. */
static void rdlm_cache_arm(struct rdlm_lockspace *ls, u64 until)
{
	ktime_t t = ns_to_ktime(until);

	if (!hrtimer_is_queued(&ls->cache_timer) ||
	    ktime_before(t, hrtimer_get_expires(&ls->cache_timer)))
		hrtimer_start(&ls->cache_timer, t, HRTIMER_MODE_ABS_SOFT);
}

/*
 * Hold caching: may this node keep its hold of @s, owned with no local
 * lock left, for locks to come? Not once another node waits for the word
 * (the engines' blocking notice), past cache_us or half the grant's lease
 * (a kept hold must never be lost to its lease), nor while the home is out
 * of reach, names move or the lockspace stops.
 */
static bool rdlm_slot_keep(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	u64 now;

	if (!ls->cache_ns || ls->cache_off ||
	    ls->rh_active || s->lost ||
	    s->pinned || s->upgrading || s->link_wait ||
	    (ls->memb_epoch && !rdlm_home_member(ls, s->home)) ||
	    rdlm_home_awaited(ls, s->home))
		return false;
	if (s->remote_waiting || s->tried) {
		if (s->cached)
			ls->st.cache_revoked++;
		return false;
	}
	now = ktime_get_ns();
	if (!s->cached) {
		u64 until = min(now + ls->cache_ns, s->keep_end);

		if (until <= now)
			return false;
		s->cached = true;
		s->cache_until = until;
		if (!s->kept_since)
			s->kept_since = now;
		ls->st.cache_kept++;
		rdlm_cache_arm(ls, until);
	}
	return now < s->cache_until;
}

/* The word's engine request is gone or set aside: no hold, no copy. */
static void rdlm_slot_idle(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_res *res;

	s->req = NULL;
	s->state = RDLM_SLOT_IDLE;
	s->lost = false;
	s->cached = false;
	s->tried = false;
	rdlm_slot_upgrade_over(s);
	s->upgrade_refused = false;
	rdlm_lvb_peek_drop(ls, s);
	list_for_each_entry(res, &s->resources, slot_entry)
		res->lvb_cached = false;
}

/*
 * A word this node is giving back is taken again at once when the engine
 * lets a node have two requests on one word: the new request follows the
 * release on the same connection (verbs to a node execute in order)
 * instead of waiting a round trip for its completion. The released
 * request lives on in the engine until it is DONE; nothing it does
 * touches the word's locks any more.
 */
static bool rdlm_slot_retire(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	if (s->state != RDLM_SLOT_RELEASING || s->retiring ||
	    !ls->eng.ops->many_per_word)
		return false;
	s->retiring = s->req;
	rdlm_slot_idle(ls, s);
	ls->st.retakes++;
	return true;
}

/* ---- completing requests --------------------------------------------- */

void rdlm_lkb_unwait(struct rdlm_lkb *lkb)
{
	list_del_init(&lkb->wt_entry);
	lkb->rqmode = -1;
	lkb->timeout_at = 0;
	if (timer_pending(&lkb->timeout))
		del_timer(&lkb->timeout);
}

/* The waiting request of @lkb failed with @status. */
static void rdlm_lkb_fail(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			  int status)
{
	u32 sbflags = lkb->demoted ? RDLM_SBF_DEMOTED : 0;

	rdlm_lkb_unwait(lkb);
	if (status == -RDLM_ECANCEL)
		ls->st.cancels++;
	else
		ls->st.fails++;
	if (lkb->state == RDLM_LKB_NEW) {
		rdlm_lkb_kill(lkb, status, sbflags);
		return;
	}
	lkb->state = RDLM_LKB_GRANTED;	/* a conversion keeps its mode */
	lkb->demoted = false;
	lkb->altmode = false;
	rdlm_queue_ast(lkb, status, sbflags, false);
}

/* the bast held back while the grant waited for its LVB, after its AST */
static void rdlm_lkb_bast_due(struct rdlm_lkb *lkb)
{
	int mode = lkb->bast_due - 1;

	if (!lkb->bast_due)
		return;
	lkb->bast_due = 0;
	rdlm_queue_bast(lkb, mode);
}

/**
 * rdlm_lkb_granted() - complete a grant (with its LVB, when it waited for it)
 * @ls: lockspace (locked)
 * @lkb: the granted lock
 * @lvb: the status block gets the name's LVB
 */
void rdlm_lkb_granted(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		      bool lvb)
{
	struct rdlm_res *res = lkb->res;
	u32 sbflags = lkb->demoted ? RDLM_SBF_DEMOTED : 0;

	if (lkb->altmode)
		sbflags |= RDLM_SBF_ALTMODE;
	lkb->altmode = false;
	if (lvb && res->lvb_invalid)
		sbflags |= RDLM_SBF_VALNOTVALID;
	if (lvb)
		memcpy(lkb->lvb_snap, res->lvb, RDLM_LVB_MAX);
	lkb->demoted = false;
	lkb->lvb_on_peek = false;
	if (lkb->lvb_wait) {
		lkb->lvb_wait = false;
		lkb->timeout_at = 0;
		if (timer_pending(&lkb->timeout))
			del_timer(&lkb->timeout);
	}
	ls->st.grants++;
	rdlm_queue_ast(lkb, 0, sbflags, lvb);
	rdlm_lkb_bast_due(lkb);
}

/**
 * rdlm_lkb_ungrant() - take back a grant that waits for its LVB
 * @ls: lockspace (locked)
 * @lkb: the lock, granted but waiting for the LVB from the home
 * @status: what its request completes with
 *
 * For a grant cancelled, timed out, or of a writer the home could not be
 * told of: the request completes with @status, a conversion in its old
 * mode.
 */
void rdlm_lkb_ungrant(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		      int status)
{
	struct rdlm_res *res = lkb->res;
	u32 sbflags = lkb->demoted ? RDLM_SBF_DEMOTED : 0;

	lkb->lvb_wait = false;
	lkb->lvb_on_peek = false;
	lkb->demoted = false;
	lkb->altmode = false;
	lkb->timeout_at = 0;
	if (timer_pending(&lkb->timeout))
		del_timer(&lkb->timeout);
	/* the home may know us as the LVB's writer: we write nothing */
	if (lkb->grmode >= RDLM_LOCK_PW && res->lvb_writer)
		rdlm_lvb_put(ls, res, false, NULL, false);
	if (status == -RDLM_ECANCEL)
		ls->st.cancels++;
	else
		ls->st.fails++;
	if (lkb->prev_grmode < 0) {
		list_del_init(&lkb->gr_entry);
		lkb->grmode = -1;
		rdlm_lkb_kill(lkb, status, sbflags);
		return;
	}
	lkb->grmode = lkb->prev_grmode;
	lkb->state = RDLM_LKB_GRANTED;
	rdlm_queue_ast(lkb, status, sbflags, false);
	rdlm_lkb_bast_due(lkb);
}

static void rdlm_lkb_grant(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb)
{
	struct rdlm_res *res = lkb->res;
	struct rdlm_slot *s = res->slot;
	int mode = lkb->rqmode;
	bool lvb = (lkb->flags & RDLM_LKF_VALBLK) && mode > RDLM_LOCK_NL;
	unsigned long timeout_at = lkb->timeout_at;
	bool writer;

	rdlm_lkb_unwait(lkb);
	if (lkb->grmode < 0)
		list_add_tail(&lkb->gr_entry, &res->granted);
	lkb->grmode = mode;
	lkb->state = RDLM_LKB_GRANTED;
	lkb->bast_mode = -1;
	if (mode > RDLM_LOCK_NL) {
		if (s->local_grants++)
			ls->st.local_grants++;
		if (s->cached)
			ls->st.cache_hits++;
	}
	/*
	 * A PW/EX holder of the LVB is known to the home until it writes the
	 * LVB back (or says it will not): if it goes away first, the LVB
	 * becomes invalid.
	 */
	writer = lvb && mode >= RDLM_LOCK_PW;
	if (lvb && !res->lvb_cached) {
		/* the read sent behind the first verb, or ask the home now */
		if (!rdlm_lvb_peek_take(ls, lkb, timeout_at))
			rdlm_lvb_get(ls, lkb, timeout_at);
		return;
	}
	if (writer && !res->lvb_writer) {
		res->lvb_writer = true;
		rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_HOLD, s->slot, 0,
				 res->key, 0, 0);
	}
	rdlm_lkb_granted(ls, lkb, lvb);
}

/*
 * The takeover bound gives remote waiters their turn when a hold serves
 * local locks on and on. A kept hold with nobody known to wait is exempt
 * for cache_us from when it was first kept: its re-acquires stay free of
 * verbs, and a waiter whose notice got lost still gets the word soon
 * after.
 */
static bool rdlm_slot_kept_fresh(struct rdlm_lockspace *ls,
				 struct rdlm_slot *s)
{
	return s->cached && !s->remote_waiting && !s->tried &&
	       ktime_get_ns() < s->kept_since + ls->cache_ns;
}

/* Could @lkb's waiting request be granted from this node's hold now? */
static bool rdlm_grantable(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb)
{
	struct rdlm_slot *s = lkb->res->slot;
	struct rdlm_lkb *h;

	if (lkb->rqmode == RDLM_LOCK_NL)
		return true;
	if (lkb->res->frozen)
		return false;
	if (s->state != RDLM_SLOT_OWNED || s->lost ||
	    !rdlm_covers(s->own_mode, lkb->rqmode))
		return false;
	if (ls->local_grants_max && s->local_grants > ls->local_grants_max &&
	    !rdlm_slot_kept_fresh(ls, s))
		return false;
	list_for_each_entry(h, &lkb->res->granted, gr_entry)
		if (h != lkb && !rdlm_compat(lkb->rqmode, h->grmode))
			return false;
	return true;
}

/*
 * May @lkb's request be granted past an earlier one of its name that
 * waits? Conversions may (unless QUECVT), new requests with NOORDER or an
 * EXPEDITE NL.
 */
static bool rdlm_may_pass(struct rdlm_lkb *lkb)
{
	if (lkb->state == RDLM_LKB_CONVERTING)
		return !(lkb->flags & RDLM_LKF_QUECVT);
	return lkb->flags & (RDLM_LKF_NOORDER | RDLM_LKF_EXPEDITE);
}

/* Tell the local holders that block @lkb's request. */
static void rdlm_bast_blockers(struct rdlm_lkb *lkb)
{
	struct rdlm_lkb *h;

	list_for_each_entry(h, &lkb->res->granted, gr_entry)
		if (h != lkb && !rdlm_compat(lkb->rqmode, h->grmode))
			rdlm_queue_bast(h, lkb->rqmode);
}

/* Report @res's granted locks lost (NL ones hold nothing). */
static void rdlm_res_lose(struct rdlm_lockspace *ls, struct rdlm_res *res)
{
	struct rdlm_lkb *lkb;

	list_for_each_entry(lkb, &res->granted, gr_entry) {
		if (lkb->grmode <= RDLM_LOCK_NL || lkb->lost)
			continue;
		lkb->lost = true;
		ls->st.lost++;
		rdlm_queue_ast(lkb, -ENOLCK, RDLM_SBF_LOST, false);
	}
}

/* The granted locks of @s's moved names: this node cannot take them back. */
static void rdlm_slot_lost_frozen(struct rdlm_lockspace *ls,
				  struct rdlm_slot *s)
{
	struct rdlm_res *res;

	list_for_each_entry(res, &s->resources, slot_entry)
		if (res->frozen)
			rdlm_res_lose(ls, res);
}

/* Fail the requests waiting on @s (only the NOQUEUE ones, or all). */
static void rdlm_slot_fail_waiters(struct rdlm_lockspace *ls,
				   struct rdlm_slot *s, int status,
				   bool noqueue_only)
{
	struct rdlm_lkb *lkb, *tmp;
	struct rdlm_res *res;

	list_for_each_entry(res, &s->resources, slot_entry)
		list_for_each_entry_safe(lkb, tmp, &res->waiting, wt_entry)
			if (!noqueue_only || (lkb->flags & RDLM_LKF_NOQUEUE))
				rdlm_lkb_fail(ls, lkb, status);
}

/**
 * rdlm_slot_pass() - grant what can be granted on a word, then move its hold
 * @ls: lockspace (locked)
 * @s: this node's state of the word
 *
 * After the grants: take the word for the waiters left, give it back when
 * no holder is left, or cancel an acquisition nobody waits for any more.
 */
void rdlm_slot_pass(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_lkb *lkb, *tmp;
	struct rdlm_res *res;
	bool waiters = false, holders = s->pinned, reclaim = false;
	bool upgrade, dlck_fail = false, ex_held = false, kept;
	u8 need = RDLM_MODE_SH, reclaim_need = RDLM_MODE_SH;

	if (ls->dead)
		return;
	list_for_each_entry(res, &s->resources, slot_entry) {
		bool blocked = false;

		if (res->frozen) {
			/*
			 * Its home moved: its holders take the new word again
			 * (nobody else may be granted it before the thaw), its
			 * waiters wait for the thaw without taking the word.
			 */
			list_for_each_entry(lkb, &res->granted, gr_entry) {
				if (lkb->grmode <= RDLM_LOCK_NL || lkb->lost)
					continue;
				holders = true;
				reclaim = true;
				if (rdlm_engine_mode(lkb->grmode) ==
				    RDLM_MODE_EX)
					reclaim_need = RDLM_MODE_EX;
			}
			continue;
		}
		/*
		 * As fs/dlm: a conversion is granted when the holders allow
		 * it (holding up a compatible one behind a blocked one could
		 * deadlock the two), a new request only when no request
		 * before it waits. Every blocked conversion tells its
		 * blockers: with NODLCKWT, two that block each other are
		 * resolved by their callers, who must hear of it.
		 */
		list_for_each_entry_safe(lkb, tmp, &res->waiting, wt_entry) {
			bool convert = lkb->state == RDLM_LKB_CONVERTING;

			if ((!blocked || rdlm_may_pass(lkb)) &&
			    rdlm_grantable(ls, lkb)) {
				rdlm_lkb_grant(ls, lkb);
				continue;
			}
			if (!blocked || convert)
				rdlm_bast_blockers(lkb);
			blocked = true;
			waiters = true;
			if (rdlm_engine_mode(lkb->rqmode) != RDLM_MODE_EX)
				continue;
			need = RDLM_MODE_EX;
			if (convert && !(lkb->flags & RDLM_LKF_NODLCKWT))
				dlck_fail = true;
		}
		list_for_each_entry(lkb, &res->granted, gr_entry) {
			if (lkb->grmode <= RDLM_LOCK_NL)
				continue;
			holders = true;
			/*
			 * Granted (or converted) after the engine said that
			 * someone waits for the word: it is told too, or a
			 * caller that caches it would keep the word forever.
			 */
			if (s->remote_waiting)
				rdlm_queue_bast(lkb, RDLM_LOCK_EX);
			if (rdlm_engine_mode(lkb->grmode) == RDLM_MODE_EX)
				ex_held = true;
		}
	}

	/*
	 * A moved name's holders need the word in a mode this node's hold
	 * does not give (its word is shared with another name this node
	 * holds or waits for weaker): reported lost rather than deadlocked.
	 */
	if (reclaim && (s->state == RDLM_SLOT_OWNED ||
			s->state == RDLM_SLOT_ACQUIRING) &&
	    s->own_mode != RDLM_MODE_EX && reclaim_need == RDLM_MODE_EX)
		rdlm_slot_lost_frozen(ls, s);
	/* a hold that stays, too weak for a waiter: upgrade it in place */
	upgrade = waiters && holders && need == RDLM_MODE_EX;
	if (upgrade && rdlm_slot_may_upgrade(ls, s))
		rdlm_slot_upgrade(ls, s, false, !dlck_fail);
	else if (!upgrade && s->upgrading && !s->upgrade_cancel)
		rdlm_slot_upgrade_cancel(ls, s);
	/*
	 * and an exclusive hold only shared locks need, down at once; a
	 * lockspace that keeps holds waits until another node asks or
	 * tries (the next exclusive lock here would have to convert it up
	 * again)
	 */
	if (holders && !ex_held && need == RDLM_MODE_SH && !reclaim &&
	    !s->pinned && !s->lvb_puts &&
	    (!ls->cache_ns || s->remote_waiting || s->tried))
		rdlm_slot_downgrade(ls, s);
	need = max(need, reclaim_need);
	/* no lock left on an owned word: keep it for the next one? */
	kept = s->state == RDLM_SLOT_OWNED && !holders && !waiters &&
	       !s->lvb_puts && rdlm_slot_keep(ls, s);
	if (!kept)
		s->cached = false;
	if ((s->state == RDLM_SLOT_ACQUIRING && !waiters && !holders) ||
	    (s->state == RDLM_SLOT_OWNED && !holders && !s->lvb_puts && !kept))
		rdlm_slot_release(ls, s);
	if (s->state == RDLM_SLOT_RELEASING && (waiters || reclaim))
		rdlm_slot_retire(ls, s);
	/* after a release that needed no verb (a lost lease), too */
	if (s->state == RDLM_SLOT_IDLE && (waiters || reclaim)) {
		if (!rdlm_home_awaited(ls, s->home) && !s->link_wait)
			rdlm_slot_acquire(ls, s, need, false);
		else
			rdlm_slot_fail_waiters(ls, s, -EAGAIN, true);
	}
	/* a peek serves the grants of this pass only */
	if (s->state == RDLM_SLOT_OWNED && s->grant_first) {
		s->grant_first = false;
		rdlm_lvb_peek_settle(ls, s);
	}
	rdlm_slot_maybe_free(ls, s);
}

/* ---- engine outputs --------------------------------------------------- */

/* The word of a request; a range lock's request has none (range.c). */
static struct rdlm_slot *rdlm_req_slot(struct rdlm_lockspace *ls,
				       struct rdlm_req *req)
{
	if (!req || ls->eng.ops->ranges)
		return NULL;
	return (struct rdlm_slot *)(uintptr_t)req->user;
}

/*
 * The engine did not make the hold exclusive. A conversion deadlock with
 * another node (-EDEADLK) is fs/dlm's: the conversions that did not say
 * NODLCKWT are refused, or wait demoted to NL with CONVDEADLK.
 */
static void rdlm_slot_unconverted(struct rdlm_lockspace *ls,
				  struct rdlm_slot *s, int err)
{
	bool trying = s->upgrade_trying;
	struct rdlm_lkb *lkb, *tmp;
	struct rdlm_res *res;

	rdlm_slot_upgrade_over(s);
	if (err == -ECANCELED)
		return;
	if (err == -EAGAIN && trying) {
		rdlm_slot_fail_waiters(ls, s, -EAGAIN, true);
		return;
	}
	s->upgrade_refused = true;
	if (err != -EDEADLK)
		return;
	list_for_each_entry(res, &s->resources, slot_entry)
		list_for_each_entry_safe(lkb, tmp, &res->waiting, wt_entry) {
			if (lkb->state != RDLM_LKB_CONVERTING ||
			    rdlm_engine_mode(lkb->rqmode) != RDLM_MODE_EX ||
			    (lkb->flags & RDLM_LKF_NODLCKWT))
				continue;
			if (lkb->flags & RDLM_LKF_CONVDEADLK) {
				lkb->grmode = RDLM_LOCK_NL;
				lkb->prev_grmode = RDLM_LOCK_NL;
				lkb->demoted = true;
			} else {
				rdlm_lkb_fail(ls, lkb, -EDEADLK);
			}
		}
}

static void rdlm_slot_lost(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_lkb *lkb, *tmp;
	struct rdlm_res *res;

	s->lost = true;
	list_for_each_entry(res, &s->resources, slot_entry) {
		/* a grant still waiting for its LVB is no grant any more */
		list_for_each_entry_safe(lkb, tmp, &res->granted, gr_entry)
			if (lkb->lvb_wait)
				rdlm_lkb_ungrant(ls, lkb, -ENOLCK);
		res->lvb_cached = false;
		/* the home invalidates the LVB when another node gets it */
		res->lvb_writer = false;
		rdlm_res_lose(ls, res);
	}
	rdlm_lvb_peek_drop(ls, s);
}

/*
 * What an engine's failure means to the waiting requests. Engines pass on
 * verb completion errors (-EIO, -ECONNRESET, ...): the home could not be
 * reached. Callers see only the errnos the API documents.
 */
int rdlm_engine_errno(int err)
{
	switch (err) {
	case -EAGAIN:
	case -ENOLCK:
		return err;
	case -ESHUTDOWN:	/* the fabric lockspace is going away */
		return -ENOLCK;
	default:
		return -ENOTCONN;
	}
}

static void rdlm_emit(struct rdlm_out *out, const struct rdlm_action *act)
{
	struct rdlm_lockspace *ls = out->priv;
	struct rdlm_slot *s = rdlm_req_slot(ls, act->req);
	struct rdlm_verb v;
	struct rdlm_res *res;
	int ret;

	if (ls->eng.ops->ranges && act->kind != RDLM_ACT_POST &&
	    act->kind != RDLM_ACT_TIMER) {
		rdlm_range_act(ls, act);
		return;
	}
	if (s && act->req == s->retiring && act->kind != RDLM_ACT_POST &&
	    act->kind != RDLM_ACT_TIMER) {
		/* released and replaced: only its end matters */
		if (act->kind == RDLM_ACT_DONE) {
			s->retiring = NULL;
			rdlm_req_free(&ls->eng, act->req);
		}
		return;
	}

	switch (act->kind) {
	case RDLM_ACT_POST:
		v = act->verb;
		ret = -EINVAL;
		if (v.node < ls->nr_members) {
			v.node = ls->members[v.node];
			ret = rdlm_fabric_post(ls->fls, &v, rdlm_ls_verb_done,
					       ls);
		}
		if (ret)
			rdlm_ls_fail_cqe(ls, &act->verb, ret);
		break;
	case RDLM_ACT_TIMER:
		rdlm_ls_arm(ls, act->req, act->delay_ns, act->cookie);
		break;
	case RDLM_ACT_GRANT:
		if (s->state == RDLM_SLOT_RELEASING)
			break;	/* cancelled: the engine gives it back */
		if (s->state == RDLM_SLOT_OWNED && s->upgrading) {
			/* converted in place: the hold and its LVB copies stay */
			s->own_mode = act->mode;
			rdlm_slot_upgrade_over(s);
			ls->st.upgrades++;
			break;
		}
		s->state = RDLM_SLOT_OWNED;
		s->upgrade_refused = false;
		s->own_mode = act->mode;
		/* a kept hold goes at half its lease (rdlm_slot_keep()) */
		s->keep_end = U64_MAX;
		if (act->lease_end && act->lease_end != U64_MAX)
			s->keep_end = act->lease_end > out->now ?
				      out->now + (act->lease_end - out->now) / 2 :
				      out->now;
		/* free when the request's first verb got there (lvb.c) */
		s->grant_first = ls->completing == act->req &&
				 s->answers == 1;
		s->local_grants = 0;
		s->kept_since = 0;
		s->lost = false;
		s->trying = false;
		s->remote_waiting = false;
		s->tried = false;
		/* passed after the engine call: see rdlm_ls_after() */
		break;
	case RDLM_ACT_FAIL:
		/*
		 * Cancelled by us, our ticket was skipped by a reset (bakery),
		 * or the grant came after the lease it would have run on had
		 * ended (a long queue): the waiters ask again once the engine
		 * is DONE.
		 */
		if (act->err == -ECANCELED || act->err == -EDEADLK ||
		    act->err == -ETIMEDOUT)
			break;
		/* and when the home was only out of reach, once it is back */
		if ((act->err == -ENOTCONN || act->err == -ECONNRESET ||
		     act->err == -EIO) && rdlm_home_member(ls, s->home)) {
			s->link_wait = true;
			break;
		}
		if (act->err == -EAGAIN)
			rdlm_slot_fail_waiters(ls, s, -EAGAIN, true);
		else
			rdlm_slot_fail_waiters(ls, s,
					       rdlm_engine_errno(act->err),
					       false);
		break;
	case RDLM_ACT_NOTICE:
		if (act->notice == RDLM_NOTICE_LOST) {
			rdlm_slot_lost(ls, s);
		} else if (act->notice == RDLM_NOTICE_UNCONVERTED) {
			rdlm_slot_unconverted(ls, s, act->err);
		} else if (act->notice == RDLM_NOTICE_TRIED) {
			s->tried = true;	/* a kept hold goes */
		} else if (act->notice == RDLM_NOTICE_BLOCKING) {
			struct rdlm_lkb *lkb;

			s->remote_waiting = true;
			list_for_each_entry(res, &s->resources, slot_entry)
				list_for_each_entry(lkb, &res->granted,
						    gr_entry)
					rdlm_queue_bast(lkb, RDLM_LOCK_EX);
		}
		break;
	case RDLM_ACT_DONE:
		rdlm_slot_idle(ls, s);
		rdlm_req_free(&ls->eng, act->req);
		break;
	default:
		break;
	}
}

/*
 * After an engine call: pass every slot the call may have changed. The
 * engine may have changed only the slot of @req; home-side work of other
 * slots changes no local lock.
 */
static void rdlm_ls_after(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct hlist_node *tmp;
	int bkt;

	if (s)
		rdlm_slot_pass(ls, s);
	if (ls->starved && ls->eng.free_head != U32_MAX) {
		/* engine requests were short: let every slot try again */
		ls->starved = false;
		hash_for_each_safe(ls->slots, bkt, tmp, s, hash)
			rdlm_slot_pass(ls, s);
	}
	rdlm_rehome_check(ls);
}

/**
 * rdlm_ls_call_complete() - hand a verb completion to the engine
 * @ls: lockspace (locked)
 * @cqe: completion
 */
void rdlm_ls_call_complete(struct rdlm_lockspace *ls,
			   const struct rdlm_cqe *cqe)
{
	struct rdlm_out out = rdlm_ls_out(ls);
	struct rdlm_slot *s = rdlm_req_slot(ls, cqe->req);

	if (ls->dead)
		return;
	if (cqe->req && !cqe->req->busy)
		return;
	if (s && cqe->req == s->req && s->answers < U8_MAX)
		s->answers++;
	ls->completing = cqe->req;
	ls->eng.ops->complete(&ls->eng, cqe, &out);
	ls->completing = NULL;
	/*
	 * A trylock gives up when the first answer of the word (the first
	 * two of dqnl-sf: ticket, then swap) did not grant it: the engine
	 * keeps its place only to give it back.
	 */
	if (s && s->trying && s->state == RDLM_SLOT_ACQUIRING &&
	    cqe->req == s->req && s->answers >= ls->eng.ops->try_answers &&
	    cqe->kind != RDLM_VERB_SEND && cqe->kind != RDLM_VERB_WRITE_IMM) {
		s->trying = false;
		rdlm_slot_fail_waiters(ls, s, -EAGAIN, true);
	}
	rdlm_ls_after(ls, s);
}

/**
 * rdlm_ls_pass_all() - pass every slot, after a call that may grant, fail
 *	or notify any request
 * @ls: lockspace (locked)
 */
void rdlm_ls_pass_all(struct rdlm_lockspace *ls)
{
	struct rdlm_slot *s;
	struct hlist_node *tmp;
	int bkt;

	ls->starved = false;
	hash_for_each_safe(ls->slots, bkt, tmp, s, hash)
		rdlm_slot_pass(ls, s);
	rdlm_rehome_check(ls);
}

/**
 * rdlm_ls_cache_expire() - give back the kept holds whose time is up
 * @ls: lockspace (locked)
 * @all: every kept hold (the lockspace stops), not only those
 *
 * Arms the cache timer again for the first hold left.
 */
void rdlm_ls_cache_expire(struct rdlm_lockspace *ls, bool all)
{
	u64 now = ktime_get_ns(), next = U64_MAX;
	struct hlist_node *tmp;
	struct rdlm_slot *s;
	int bkt;

	hash_for_each_safe(ls->slots, bkt, tmp, s, hash) {
		if (!s->cached)
			continue;
		if (all || s->cache_until <= now)
			rdlm_slot_pass(ls, s);
		else
			next = min(next, s->cache_until);
	}
	if (next != U64_MAX)
		rdlm_cache_arm(ls, next);
}

/**
 * rdlm_ls_cache_shrink() - give back every kept hold if a request found no
 *	engine request free (kept holds have theirs)
 * @ls: lockspace (locked)
 */
void rdlm_ls_cache_shrink(struct rdlm_lockspace *ls)
{
	if (!ls->cache_shrink || ls->dead)
		return;
	ls->cache_shrink = false;
	ls->cache_off = true;
	rdlm_ls_cache_expire(ls, true);
	ls->cache_off = false;
}

/**
 * rdlm_ls_call_recv() - hand an engine message to the engine
 * @ls: lockspace (locked)
 * @rx: message, src translated to an engine index
 */
void rdlm_ls_call_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	/* rangeseg's bakery words take no messages */
	if (ls->eng.ops->recv)
		ls->eng.ops->recv(&ls->eng, rx, &out);
	rdlm_ls_pass_all(ls);
}

/**
 * rdlm_ls_call_member_up() - the connection to a member is back
 * @ls: lockspace (locked)
 * @node: engine index of the member
 *
 * The engine repairs what verbs lost with the old connection may have
 * broken (the queue engines recover the words they touched).
 */
void rdlm_ls_call_member_up(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_out out = rdlm_ls_out(ls);
	struct rdlm_slot *s;
	int bkt;

	if (ls->eng.ops->member_up)
		ls->eng.ops->member_up(&ls->eng, node, &out);
	rdlm_plock_member_up(ls, node);
	/* and what waited for it as a home (rdlm_home_awaited()) */
	hash_for_each(ls->slots, bkt, s, hash)
		if (s->home == node)
			s->link_wait = false;
	rdlm_ls_pass_all(ls);
}

/**
 * rdlm_ls_call_member_down() - the cluster agreed a member departed
 * @ls: lockspace (locked)
 * @node: engine index of the member, fenced: no verb from or to it is in
 *	flight or lands later
 * @epoch: the membership epoch that left it out
 *
 * The engine removes it from the queues of the words; as a home, this
 * node invalidates the LVBs it was writing; requests for words it was the
 * home of fail.
 */
void rdlm_ls_call_member_down(struct rdlm_lockspace *ls, u32 node, u32 epoch)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	if (ls->eng.ops->member_down)
		ls->eng.ops->member_down(&ls->eng, node, epoch, &out);
	rdlm_plock_member_down(ls, node);
	rdlm_home_lvb_node_down(ls, node);
	rdlm_lm_home_down(ls, node);
	rdlm_rehome_node_down(ls, node);
	rdlm_ls_pass_all(ls);
}

/**
 * rdlm_ls_call_member_join() - a departed member is back, with fresh state
 * @ls: lockspace (locked)
 * @node: engine index of the member, still fenced
 */
void rdlm_ls_call_member_join(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	if (!ls->eng.ops->member_join)
		return;
	ls->eng.ops->member_join(&ls->eng, node, &out);
	rdlm_ls_pass_all(ls);
}

/**
 * rdlm_ls_call_timer() - an engine timer fired
 * @ls: lockspace (locked)
 * @req: engine request, or NULL for the home-side timer
 * @cookie: the cookie it was armed with
 */
void rdlm_ls_call_timer(struct rdlm_lockspace *ls, struct rdlm_req *req,
			u64 cookie)
{
	struct rdlm_out out = rdlm_ls_out(ls);
	struct rdlm_slot *s = rdlm_req_slot(ls, req);

	if (req && !req->busy)
		return;
	ls->eng.ops->timer(&ls->eng, req, cookie, &out);
	rdlm_ls_after(ls, s);
}

/* ---- a home going away ------------------------------------------------ */

/**
 * rdlm_lm_home_down() - a home became unreachable: stop waiting for it
 * @ls: lockspace (locked)
 * @node: engine index of the home
 *
 * Its answers to LVB reads and writes may never come: grants waiting for
 * the LVB complete with it invalid (readers) or fail with -ENOTCONN
 * (writers), LVB writes waiting for their ack fail with -EIO, and every
 * request waiting for one of its words fails with -ENOTCONN (the engine
 * decides what becomes of the words themselves and of held locks).
 */
void rdlm_lm_home_down(struct rdlm_lockspace *ls, u32 node)
{
	struct hlist_node *tmp;
	struct rdlm_slot *s;
	struct rdlm_lkb *lkb;
	int bkt;

	hash_for_each(ls->lkbs, bkt, lkb, hash) {
		if (lkb->lvb_wait && lkb->state != RDLM_LKB_DEAD &&
		    lkb->res->slot->home == node)
			rdlm_lkb_lvb_unreachable(ls, lkb);
	}
	hash_for_each_safe(ls->slots, bkt, tmp, s, hash) {
		if (s->home != node)
			continue;
		if (s->lvb_puts)
			rdlm_slot_puts_failed(ls, s);
		/* its waiters were answered above; its answer may never come */
		rdlm_lvb_peek_drop(ls, s);
		if (!rdlm_home_awaited(ls, node))
			rdlm_slot_fail_waiters(ls, s, -ENOTCONN, false);
		rdlm_slot_pass(ls, s);
	}
}

/* ---- the exported API -------------------------------------------------- */

static void rdlm_lkb_timeout(struct timer_list *t)
{
	struct rdlm_lkb *lkb = from_timer(lkb, t, timeout);
	struct rdlm_lockspace *ls = lkb->ls;
	struct rdlm_slot *s;

	spin_lock_bh(&ls->lock);
	s = lkb->res ? lkb->res->slot : NULL;
	/* not a request that came after the one this timer was armed for */
	if (!lkb->timeout_at || time_before(jiffies, lkb->timeout_at)) {
		;
	} else if (!s) {
		rdlm_range_timeout(ls, lkb);
	} else if (lkb->put_wait) {
		/* the home did not ack the LVB write in time */
		rdlm_slot_puts_failed(ls, s);
		rdlm_slot_pass(ls, s);
	} else if (lkb->lvb_wait && lkb->state != RDLM_LKB_DEAD) {
		rdlm_lkb_ungrant(ls, lkb, -ETIMEDOUT);
		rdlm_slot_pass(ls, s);
	} else if (lkb->rqmode >= 0 && lkb->state != RDLM_LKB_DEAD) {
		rdlm_lkb_fail(ls, lkb, -ETIMEDOUT);
		rdlm_slot_pass(ls, s);
	}
	rdlm_ls_unlock(ls);
}

/* Put @lkb's request for @mode in the queue of its name, or answer at once. */
static int rdlm_request(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			int mode, u32 flags, unsigned int timeout_ms)
{
	struct rdlm_res *res = lkb->res;
	struct rdlm_slot *s = res->slot;
	struct rdlm_lkb *w;

	lkb->prev_grmode = lkb->grmode;
	lkb->rqmode = mode;
	lkb->flags = flags;
	lkb->wait_start = ktime_get_ns();
	ls->st.requests++;
	if (lkb->state == RDLM_LKB_CONVERTING ||
	    (flags & RDLM_LKF_HEADQUE)) {
		/* conversions go before new requests, as in fs/dlm */
		list_for_each_entry(w, &res->waiting, wt_entry)
			if (w->state != RDLM_LKB_CONVERTING)
				break;
		list_add_tail(&lkb->wt_entry, &w->wt_entry);
	} else {
		list_add_tail(&lkb->wt_entry, &res->waiting);
	}

	if ((list_first_entry(&res->waiting, struct rdlm_lkb, wt_entry) ==
	     lkb || rdlm_may_pass(lkb)) && rdlm_grantable(ls, lkb)) {
		rdlm_lkb_grant(ls, lkb);
		rdlm_slot_pass(ls, s);
		return 0;
	}
	/* ALTPR/ALTCW: the other mode, if that one is grantable now */
	if (flags & (RDLM_LKF_ALTPR | RDLM_LKF_ALTCW)) {
		lkb->rqmode = flags & RDLM_LKF_ALTPR ? RDLM_LOCK_PR :
						       RDLM_LOCK_CW;
		if (lkb->rqmode != mode &&
		    list_first_entry(&res->waiting, struct rdlm_lkb,
				     wt_entry) == lkb &&
		    rdlm_grantable(ls, lkb)) {
			lkb->altmode = true;
			rdlm_lkb_grant(ls, lkb);
			rdlm_slot_pass(ls, s);
			return 0;
		}
		lkb->rqmode = mode;
	}
	if (flags & RDLM_LKF_NOQUEUE) {
		bool local = list_first_entry(&res->waiting, struct rdlm_lkb,
					      wt_entry) != lkb;

		/* a kept hold too weak for it goes: the home answers anew */
		if (s->cached) {
			s->cached = false;
			rdlm_slot_release(ls, s);
		}

		list_for_each_entry(w, &res->granted, gr_entry)
			if (w != lkb && !rdlm_compat(mode, w->grmode))
				local = true;
		/* a shared hold asks the home, which answers at once */
		if (!local && !res->frozen &&
		    rdlm_engine_mode(mode) == RDLM_MODE_EX &&
		    rdlm_slot_may_upgrade(ls, s)) {
			rdlm_slot_upgrade(ls, s, true, true);
			if (s->upgrading)
				return 0;
		}
		/* a name whose home moved answers after the thaw only */
		if (local || res->frozen || rdlm_home_awaited(ls, s->home) ||
		    s->link_wait ||
		    (s->state != RDLM_SLOT_IDLE && !rdlm_slot_retire(ls, s))) {
			if (flags & RDLM_LKF_NOQUEUEBAST)
				rdlm_bast_blockers(lkb);
			rdlm_lkb_fail(ls, lkb, -EAGAIN);
			rdlm_slot_pass(ls, s);
			return 0;
		}
		/* ask the word once; the first answer decides */
		rdlm_slot_acquire(ls, s, rdlm_engine_mode(mode), true);
		if (s->state == RDLM_SLOT_IDLE)
			rdlm_lkb_fail(ls, lkb, -EAGAIN);
		return 0;
	}
	if (timeout_ms) {
		lkb->timeout_at = jiffies + msecs_to_jiffies(timeout_ms) ?: 1;
		mod_timer(&lkb->timeout, lkb->timeout_at);
	}
	rdlm_slot_pass(ls, s);
	return 0;
}

int rdlm_check_ls(struct rdlm_lockspace *ls, u32 home)
{
	if (ls->dead)
		return -ENOLCK;
	if (!rdlm_fabric_ls_ready(ls->fls, ls->members[home]) &&
	    !rdlm_home_awaited(ls, home))
		return -ENOTCONN;
	return 0;
}

/* A conversion's callbacks replace the lock's, as in fs/dlm. */
static void rdlm_lkb_set_cbs(struct rdlm_lkb *lkb, void (*ast)(void *arg),
			     void *arg, void (*bast)(void *arg, int mode),
			     void *bast_arg)
{
	lkb->ast = ast;
	lkb->arg = arg;
	lkb->bast = bast;
	lkb->bast_arg = bast_arg;
}

static int rdlm_convert(struct rdlm_lockspace *ls, int mode,
			struct rdlm_lksb *lksb, u32 flags,
			unsigned int timeout_ms, void (*ast)(void *arg),
			void *arg, void (*bast)(void *arg, int mode),
			void *bast_arg, bool inline_cbs)
{
	struct rdlm_lkb *lkb, *w;
	bool demote, caller = false;
	struct rdlm_res *res;
	struct rdlm_slot *s;
	int ret;

	spin_lock_bh(&ls->lock);
	lkb = rdlm_lkb_find(ls, lksb->lkid);
	ret = -ENOENT;
	if (!lkb || lkb->state == RDLM_LKB_DEAD)
		goto out;
	ret = -EOPNOTSUPP;	/* a range lock */
	if (!lkb->res)
		goto out;
	ret = -EBUSY;
	if (lkb->state != RDLM_LKB_GRANTED || lkb->lvb_wait || lkb->put_wait)
		goto out;
	ret = -ENOLCK;
	if (ls->dead || lkb->lost)
		goto out;
	res = lkb->res;
	s = res->slot;
	ret = rdlm_check_ls(ls, s->home);
	if (ret)
		goto out;
	caller = inline_cbs && rdlm_lkb_caller_cbs_begin(ls, lkb);

	/* going down: at once; PW/EX hand their LVB to the home first */
	if (rdlm_weaker(mode, lkb->grmode)) {
		int put = 0;

		if (lkb->grmode >= RDLM_LOCK_PW && mode < RDLM_LOCK_PW)
			put = rdlm_lvb_put(ls, res, flags & (RDLM_LKF_VALBLK |
							     RDLM_LKF_IVVALBLK),
					   lksb->lvb, flags & RDLM_LKF_IVVALBLK);
		rdlm_lkb_set_cbs(lkb, ast, arg, bast, bast_arg);
		lkb->grmode = mode;
		lkb->bast_mode = -1;
		lkb->lksb = lksb;
		ls->st.requests++;
		ls->st.grants++;
		/* with an LVB write, the home's ack completes it */
		if (put > 0) {
			rdlm_lkb_put_wait(lkb, s);
		} else {
			if (put < 0)
				ls->st.lvb_lost++;
			rdlm_queue_ast(lkb, put < 0 ? -EIO : 0, 0, false);
		}
		rdlm_slot_pass(ls, s);
		ret = 0;
		goto out;
	}

	/*
	 * Two up-conversions that block each other: refuse the second,
	 * unless the callers resolve such deadlocks themselves (NODLCKWT).
	 */
	ret = -EDEADLK;
	list_for_each_entry(w, &res->waiting, wt_entry) {
		if (w->state == RDLM_LKB_CONVERTING &&
		    !rdlm_compat(w->rqmode, lkb->grmode) &&
		    !rdlm_compat(mode, w->grmode) &&
		    !(flags & RDLM_LKF_NODLCKWT))
			goto out;
	}
	/*
	 * A hold of the word too weak for the new mode cannot be upgraded in
	 * place: the engines' queues are FIFO, and a node queued behind our
	 * hold would wait for it while we wait for that node. The caller
	 * chooses: wait demoted to NL (CONVDEADLK, as fs/dlm), or -EDEADLK
	 * (then give the lock up or convert from NL). NOQUEUE just fails.
	 */
	demote = lkb->grmode > RDLM_LOCK_NL && s->state == RDLM_SLOT_OWNED &&
		 !rdlm_covers(s->own_mode, mode) &&
		 !rdlm_engine_converts(&ls->eng);
	if (demote && !(flags & (RDLM_LKF_CONVDEADLK | RDLM_LKF_NOQUEUE)))
		goto out;
	rdlm_lkb_set_cbs(lkb, ast, arg, bast, bast_arg);
	lkb->lksb = lksb;
	lkb->state = RDLM_LKB_CONVERTING;
	s->upgrade_refused = false;	/* a new request may try again */
	lkb->bast_mode = -1;
	if (demote && (flags & RDLM_LKF_CONVDEADLK)) {
		lkb->grmode = RDLM_LOCK_NL;
		lkb->demoted = true;
	}
	ret = rdlm_request(ls, lkb, mode, flags, timeout_ms);
out:
	rdlm_ls_unlock(ls);
	if (caller)
		rdlm_lkb_caller_cbs(ls, lkb);
	return ret;
}

/* fs/dlm's rules (validate_lock_args()) for the flags rdlm knows. */
static bool rdlm_lock_flags_valid(int mode, u32 flags)
{
	bool convert = flags & RDLM_LKF_CONVERT;

	if (mode < RDLM_LOCK_NL || mode > RDLM_LOCK_EX ||
	    (flags & ~RDLM_LKF_ALL) || (flags & RDLM_LKF_CANCEL))
		return false;
	if (!convert && (flags & (RDLM_LKF_QUECVT | RDLM_LKF_CONVDEADLK |
				  RDLM_LKF_IVVALBLK)))
		return false;
	if ((flags & RDLM_LKF_CONVDEADLK) && (flags & RDLM_LKF_NOQUEUE))
		return false;
	if ((flags & RDLM_LKF_EXPEDITE) &&
	    (convert || mode != RDLM_LOCK_NL ||
	     (flags & (RDLM_LKF_NOQUEUE | RDLM_LKF_QUECVT))))
		return false;
	if ((flags & RDLM_LKF_ALTPR) && (flags & RDLM_LKF_ALTCW))
		return false;
	return true;
}

/**
 * rdlm_lkb_alloc() - a new lock, not in the lockspace yet
 * @ls: lockspace
 * @lksb: its status block
 * @ast: completion callback
 * @arg: its argument
 * @bast: blocking callback
 * @bast_arg: its argument
 *
 * On behalf of the caller, who may hold a spinlock: never sleeps.
 *
 * Return: the lock, or NULL.
 */
struct rdlm_lkb *rdlm_lkb_alloc(struct rdlm_lockspace *ls,
				struct rdlm_lksb *lksb, void (*ast)(void *arg),
				void *arg, void (*bast)(void *arg, int mode),
				void *bast_arg)
{
	struct rdlm_lkb *lkb;

	lkb = kzalloc(sizeof(*lkb), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!lkb)
		return NULL;
	lkb->ls = ls;
	lkb->grmode = -1;
	lkb->rqmode = -1;
	lkb->prev_grmode = -1;
	lkb->bast_mode = -1;
	lkb->lksb = lksb;
	lkb->ast = ast;
	lkb->arg = arg;
	lkb->bast = bast;
	lkb->bast_arg = bast_arg;
	INIT_LIST_HEAD(&lkb->gr_entry);
	INIT_LIST_HEAD(&lkb->wt_entry);
	INIT_LIST_HEAD(&lkb->put_entry);
	timer_setup(&lkb->timeout, rdlm_lkb_timeout, 0);
	return lkb;
}

/**
 * rdlm_lkb_find() - a lock by its id
 * @ls: lockspace (locked)
 * @lkid: the id
 *
 * Return: the lock, or NULL.
 */
struct rdlm_lkb *rdlm_lkb_find(struct rdlm_lockspace *ls, u32 lkid)
{
	struct rdlm_lkb *lkb;

	lockdep_assert_held(&ls->lock);
	hash_for_each_possible(ls->lkbs, lkb, hash, lkid)
		if (lkb->lkid == lkid)
			return lkb;
	return NULL;
}

/**
 * rdlm_lkb_add() - give a new lock its id and add it to the lockspace
 * @ls: lockspace (locked)
 * @lkb: the lock
 *
 * Ids go round from 1 to INT_MAX, so that a stale id (a late answer, a
 * caller's unlock of a lock long gone) names no newer lock for a long
 * time. In a hash table rather than an xarray: ids far apart would make
 * the xarray allocate and free a node for nearly every lock, a third of
 * the ioctls' time in a CPU-atomic local lock+unlock through /dev/rdlm.
 */
void rdlm_lkb_add(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb)
{
	u32 id;

	/* fewer locks than ids (max_locks): this ends */
	do {
		id = ls->next_lkid;
		ls->next_lkid = id < INT_MAX ? id + 1 : 1;
	} while (!id || rdlm_lkb_find(ls, id));
	lkb->lkid = id;
	hash_add(ls->lkbs, &lkb->hash, id);
}

/**
 * rdlm_ls_may_add() - may this node add a lock to the lockspace?
 * @ls: lockspace (locked)
 *
 * Return: 0, -ENOLCK (it is going away) or -EAGAIN (its max_locks on this
 * node reached).
 */
int rdlm_ls_may_add(struct rdlm_lockspace *ls)
{
	if (ls->dead)
		return -ENOLCK;
	if (atomic_read(&ls->nr_lkbs) >= ls->max_locks)
		return -EAGAIN;
	return 0;
}

static int __rdlm_lock(struct rdlm_lockspace *ls, int mode,
		       struct rdlm_lksb *lksb, u32 flags, const void *name,
		       unsigned int namelen, unsigned int timeout_ms,
		       void (*ast)(void *arg), void *arg,
		       void (*bast)(void *arg, int mode), void *bast_arg,
		       bool inline_cbs)
{
	struct rdlm_lkb *lkb;
	struct rdlm_res *res;
	int ret;

	if (!ls || !lksb || !rdlm_lock_flags_valid(mode, flags))
		return -EINVAL;
	if (flags & RDLM_LKF_CONVERT)
		return rdlm_convert(ls, mode, lksb, flags, timeout_ms, ast,
				    arg, bast, bast_arg, inline_cbs);
	if (!name || !namelen || namelen > RDLM_NAME_MAX)
		return -EINVAL;
	if (ls->eng.ops->ranges)
		return -EOPNOTSUPP;	/* rdlm_range_lock() */

	lkb = rdlm_lkb_alloc(ls, lksb, ast, arg, bast, bast_arg);
	if (!lkb)
		return -ENOMEM;

	spin_lock_bh(&ls->lock);
	ret = rdlm_ls_may_add(ls);
	if (ret)
		goto out_free;
	ret = -ENOMEM;
	res = rdlm_res_get(ls, name, namelen);
	if (!res)
		goto out_free;
	ret = rdlm_check_ls(ls, res->slot->home);
	if (ret) {
		rdlm_res_put(ls, res);
		goto out_free;
	}
	rdlm_lkb_add(ls, lkb);
	lkb->res = res;
	res->nr_lkbs++;
	lksb->lkid = lkb->lkid;
	atomic_inc(&ls->nr_lkbs);
	lkb->cb_caller = inline_cbs;
	ret = rdlm_request(ls, lkb, mode, flags, timeout_ms);
	rdlm_ls_unlock(ls);
	if (inline_cbs)
		rdlm_lkb_caller_cbs(ls, lkb);
	return ret;

out_free:
	rdlm_ls_unlock(ls);
	kfree(lkb);
	return ret;
}

/**
 * rdlm_lock() - request a lock on a resource name, or convert one
 * @ls: lockspace from rdlm_lockspace_find()
 * @mode: RDLM_LOCK_NL, _CR, _CW, _PR, _PW or _EX
 * @lksb: status block; its lkid is set before this returns (new locks) or
 *	names the lock to convert (RDLM_LKF_CONVERT)
 * @flags: RDLM_LKF_NOQUEUE, _CONVERT, _VALBLK, _NOQUEUEBAST, _NOORDER,
 *	_HEADQUE, _EXPEDITE (NL only), _ALTPR or _ALTCW; with _CONVERT also
 *	_QUECVT, _CONVDEADLK, _NODLCKWT and _IVVALBLK, as in fs/dlm
 * @name: resource name (binary), ignored with RDLM_LKF_CONVERT
 * @namelen: 1..RDLM_NAME_MAX bytes
 * @timeout_ms: fail with -ETIMEDOUT after waiting this long; 0 = never
 * @ast: completion callback, called once per accepted request
 * @arg: argument of @ast and @bast
 * @bast: blocking callback (may be NULL): someone waits for a mode this
 *	granted lock blocks; at most one until the lock is converted
 *
 * Modes and flags have fs/dlm's numbers and meaning; the differences are
 * in Documentation/lock-manager.rst. A conversion's @ast, @arg and @bast
 * replace the lock's from then on.
 * On success the request is queued and @ast runs later, in process
 * context, with @lksb->status: 0 (granted), -EAGAIN (NOQUEUE), -ETIMEDOUT,
 * -RDLM_ECANCEL, -EDEADLK, -ENOLCK (lockspace went away), -ENOTCONN, -EIO
 * (a down-conversion from PW/EX whose LVB write the home did not confirm:
 * the conversion is done, the LVB is invalid at the home). A failed first
 * request leaves no lock; a failed conversion keeps the old mode. An
 * up-conversion this node cannot take without giving up its hold of the
 * lock word (CR or PR to CW, PW or EX while the node holds the word
 * shared) waits demoted to NL with RDLM_LKF_CONVDEADLK (and completes with
 * RDLM_SBF_DEMOTED), fails with -EAGAIN with RDLM_LKF_NOQUEUE, and is
 * refused with -EDEADLK otherwise. A grant in the ALTPR/ALTCW mode sets
 * RDLM_SBF_ALTMODE. A granted lock whose lease expired gets one more @ast
 * with -ENOLCK and RDLM_SBF_LOST and must still be unlocked.
 *
 * Context: any context but hard interrupts, with interrupts enabled; never
 * sleeps.
 * Return: 0 (queued), -EINVAL, -ENOMEM, -EAGAIN (the lockspace's
 * max_locks on this node reached), -ENOLCK, -ENOTCONN (home of the name not
 * connected), and for conversions -ENOENT (no such lock), -EBUSY
 * (a request of the lock waits) or -EDEADLK (conversion deadlock, or a
 * hold of the word too weak, see above).
 */
int rdlm_lock(struct rdlm_lockspace *ls, int mode, struct rdlm_lksb *lksb,
	      u32 flags, const void *name, unsigned int namelen,
	      unsigned int timeout_ms, void (*ast)(void *arg), void *arg,
	      void (*bast)(void *arg, int mode))
{
	return __rdlm_lock(ls, mode, lksb, flags, name, namelen, timeout_ms,
			   ast, arg, bast, arg, false);
}
EXPORT_SYMBOL_GPL(rdlm_lock);

/**
 * rdlm_lock_inline() - rdlm_lock(), running the early callbacks itself
 * @ls: as rdlm_lock()
 * @mode: as rdlm_lock()
 * @lksb: as rdlm_lock()
 * @flags: as rdlm_lock()
 * @name: as rdlm_lock()
 * @namelen: as rdlm_lock()
 * @timeout_ms: as rdlm_lock()
 * @ast: as rdlm_lock()
 * @arg: as rdlm_lock()
 * @bast: as rdlm_lock()
 *
 * The callbacks of the lock that come before this returns (a grant from
 * a hold this node keeps or from its own table in CPU-atomic mode, an
 * answer at once) run here, in order, before it returns, instead of on
 * the lockspace's work: a synchronous caller need not wait for a context
 * switch to the work and back. Later ones run on the work as usual.
 *
 * Context: process context, holding nothing @ast or @bast takes.
 * Return: as rdlm_lock().
 */
int rdlm_lock_inline(struct rdlm_lockspace *ls, int mode,
		     struct rdlm_lksb *lksb, u32 flags, const void *name,
		     unsigned int namelen, unsigned int timeout_ms,
		     void (*ast)(void *arg), void *arg,
		     void (*bast)(void *arg, int mode))
{
	might_sleep();
	return __rdlm_lock(ls, mode, lksb, flags, name, namelen, timeout_ms,
			   ast, arg, bast, arg, true);
}

/* @ast NULL keeps the lock's ast; @arg always replaces its argument. */
static int __rdlm_unlock(struct rdlm_lockspace *ls, u32 lkid, u32 flags,
			 struct rdlm_lksb *lksb, void (*ast)(void *arg),
			 void *arg, bool inline_cbs)
{
	struct rdlm_lkb *lkb;
	struct rdlm_slot *s;
	bool caller = false;
	int put = 0;
	int ret;

	if (!ls || (flags & ~(RDLM_LKF_VALBLK | RDLM_LKF_IVVALBLK |
			      RDLM_LKF_CANCEL)))
		return -EINVAL;
	spin_lock_bh(&ls->lock);
	lkb = rdlm_lkb_find(ls, lkid);
	ret = -ENOENT;
	if (!lkb || lkb->state == RDLM_LKB_DEAD)
		goto out;
	if (!lkb->res) {
		/* a range lock: its callbacks change as a name's do, below */
		ret = rdlm_range_unlock_check(lkb, flags);
		if (ret)
			goto out;
		if (lksb && !(flags & RDLM_LKF_CANCEL))
			lkb->lksb = lksb;
		if (ast)
			lkb->ast = ast;
		if (lkb->ast != rdlm_wake || !(flags & RDLM_LKF_CANCEL))
			lkb->arg = arg;
		rdlm_range_unlock_lkb(ls, lkb, flags);
		goto out;
	}
	s = lkb->res->slot;
	if (flags & RDLM_LKF_CANCEL) {
		ret = -EALREADY;
		if (lkb->rqmode < 0 && !lkb->lvb_wait)
			goto out;
		if (ast)
			lkb->ast = ast;
		/* a caller waiting in rdlm_lock_wait() keeps its wake-up */
		if (lkb->ast != rdlm_wake)
			lkb->arg = arg;
		/* granted but waiting for the LVB: taken back */
		if (lkb->lvb_wait)
			rdlm_lkb_ungrant(ls, lkb, -RDLM_ECANCEL);
		else
			rdlm_lkb_fail(ls, lkb, -RDLM_ECANCEL);
		rdlm_slot_pass(ls, s);
		ret = 0;
		goto out;
	}
	ret = -EBUSY;
	if (lkb->rqmode >= 0 || lkb->lvb_wait || lkb->put_wait)
		goto out;
	caller = inline_cbs && rdlm_lkb_caller_cbs_begin(ls, lkb);
	if (lksb)
		lkb->lksb = lksb;
	if (ast)
		lkb->ast = ast;
	lkb->arg = arg;
	if (lkb->grmode >= RDLM_LOCK_PW) {
		bool write = flags & (RDLM_LKF_VALBLK | RDLM_LKF_IVVALBLK);

		put = rdlm_lvb_put(ls, lkb->res, write && !lkb->lost,
				   lkb->lksb->lvb, flags & RDLM_LKF_IVVALBLK);
		if (write && lkb->lost)
			put = -EIO;
	}
	list_del_init(&lkb->gr_entry);
	lkb->grmode = -1;
	ls->st.unlocks++;
	if (put > 0) {
		/* gone for callers; the home's ack completes the unlock */
		lkb->state = RDLM_LKB_DEAD;
		rdlm_lkb_put_wait(lkb, s);
	} else {
		if (put < 0)
			ls->st.lvb_lost++;
		rdlm_lkb_kill(lkb, put < 0 ? -EIO : -RDLM_EUNLOCK, 0);
	}
	rdlm_slot_pass(ls, s);
	ret = 0;
out:
	rdlm_ls_unlock(ls);
	if (caller)
		rdlm_lkb_caller_cbs(ls, lkb);
	return ret;
}

/**
 * rdlm_unlock() - release a lock, or cancel its waiting request
 * @ls: lockspace
 * @lkid: the lock (&rdlm_lksb.lkid)
 * @flags: RDLM_LKF_VALBLK (write the LVB from PW/EX), _IVVALBLK (mark it
 *	invalid), _CANCEL (cancel the waiting request instead)
 * @lksb: NULL, or a status block replacing the lock's for this completion
 *	(and the LVB source with RDLM_LKF_VALBLK)
 * @arg: the lock's ast is called with this argument from now on
 *
 * An unlock completes with -RDLM_EUNLOCK, after which the lock id is gone,
 * or with -EIO when it released PW/EX with an LVB write (or a notice that
 * nothing was written) the home did not confirm: the lock is gone all the
 * same, and the home treats the LVB as invalid. A cancelled request
 * completes with -RDLM_ECANCEL, unless it was granted first.
 *
 * Context: as rdlm_lock().
 * Return: 0 (the ast follows), -EINVAL, -ENOENT (no such lock), -EBUSY
 * (a request of the lock waits: cancel it first), -EALREADY (nothing to
 * cancel).
 */
int rdlm_unlock(struct rdlm_lockspace *ls, u32 lkid, u32 flags,
		struct rdlm_lksb *lksb, void *arg)
{
	/* the lock's ast stays, with the new argument */
	return __rdlm_unlock(ls, lkid, flags, lksb, NULL, arg, false);
}
EXPORT_SYMBOL_GPL(rdlm_unlock);

/**
 * rdlm_unlock_inline() - rdlm_unlock() of a granted lock, running the
 *	early callbacks itself
 * @ls: as rdlm_unlock()
 * @lkid: as rdlm_unlock()
 * @flags: RDLM_LKF_VALBLK or _IVVALBLK (a cancel calls rdlm_unlock())
 * @arg: as rdlm_unlock()
 *
 * As rdlm_lock_inline(): the completion of an unlock that needs no answer
 * from the home runs before this returns.
 *
 * Context: as rdlm_lock_inline().
 * Return: as rdlm_unlock().
 */
int rdlm_unlock_inline(struct rdlm_lockspace *ls, u32 lkid, u32 flags,
		       void *arg)
{
	might_sleep();
	if (flags & RDLM_LKF_CANCEL)
		return -EINVAL;
	return __rdlm_unlock(ls, lkid, flags, NULL, NULL, arg, true);
}

/**
 * rdlm_lock_wait() - rdlm_lock() that waits for the completion
 * @ls: lockspace
 * @mode: as rdlm_lock()
 * @lksb: as rdlm_lock()
 * @flags: as rdlm_lock()
 * @name: as rdlm_lock()
 * @namelen: as rdlm_lock()
 * @timeout_ms: as rdlm_lock()
 * @bast: blocking callback, may be NULL
 * @arg: its argument
 *
 * The lock has no completion callback afterwards: later completions (its
 * unlock, a lost lease) show in @lksb only.
 *
 * Context: process context, sleeps (uninterruptibly: use @timeout_ms).
 * Return: 0 when granted, else the request's status (-EAGAIN, -ETIMEDOUT,
 * ...) or rdlm_lock()'s error.
 */
int rdlm_lock_wait(struct rdlm_lockspace *ls, int mode,
		   struct rdlm_lksb *lksb, u32 flags, const void *name,
		   unsigned int namelen, unsigned int timeout_ms,
		   void (*bast)(void *arg, int mode), void *arg)
{
	struct rdlm_waiter w;
	int ret;

	might_sleep();
	init_completion(&w.done);
	w.lksb = lksb;
	ret = __rdlm_lock(ls, mode, lksb, flags, name, namelen, timeout_ms,
			  rdlm_wake, &w, bast, arg, false);
	if (ret)
		return ret;
	rdlm_spin_wait(rdlm_waiter_done, &w);
	wait_for_completion(&w.done);
	return w.status;
}
EXPORT_SYMBOL_GPL(rdlm_lock_wait);

/**
 * rdlm_unlock_wait() - unlock @lksb's lock and wait for the completion
 * @ls: lockspace
 * @lksb: status block of the lock
 * @flags: RDLM_LKF_VALBLK or _IVVALBLK
 *
 * Context: process context, sleeps.
 * Return: 0 once released, or rdlm_unlock()'s error.
 */
int rdlm_unlock_wait(struct rdlm_lockspace *ls, struct rdlm_lksb *lksb,
		     u32 flags)
{
	struct rdlm_waiter w;
	int ret;

	might_sleep();
	if (flags & RDLM_LKF_CANCEL)
		return -EINVAL;
	init_completion(&w.done);
	w.lksb = lksb;
	/*
	 * Inline: the unlock's own completion, and the free of the lock,
	 * run here before we sleep, rather than in the lockspace's work,
	 * which would have to be scheduled first (the caller's wake-up
	 * waited for it on a one-CPU node).
	 */
	ret = __rdlm_unlock(ls, lksb->lkid, flags, lksb, rdlm_wake, &w, true);
	if (ret)
		return ret;
	rdlm_spin_wait(rdlm_waiter_done, &w);
	wait_for_completion(&w.done);
	return w.status == -RDLM_EUNLOCK ? 0 : w.status;
}
EXPORT_SYMBOL_GPL(rdlm_unlock_wait);

/* ---- lockspace going away ----------------------------------------------- */

/**
 * rdlm_ls_fail_all() - every request fails, every held lock is lost
 * @ls: lockspace (locked, dead)
 */
void rdlm_ls_fail_all(struct rdlm_lockspace *ls)
{
	struct rdlm_lkb *lkb;
	int bkt;

	rdlm_plock_fail_all(ls);
	hash_for_each(ls->lkbs, bkt, lkb, hash) {
		/* an LVB write the home will not ack now */
		if (lkb->put_wait)
			rdlm_lkb_put_done(ls, lkb, false);
		/* a range lock's release will not be DONE now */
		if (lkb->state == RDLM_LKB_DEAD && lkb->rreq) {
			lkb->rreq = NULL;
			rdlm_lkb_kill(lkb, -RDLM_EUNLOCK, 0);
		}
		if (lkb->state == RDLM_LKB_DEAD)
			continue;
		lkb->rreq = NULL;
		if (lkb->rqmode >= 0)
			rdlm_lkb_unwait(lkb);
		lkb->lvb_wait = false;
		if (lkb->state == RDLM_LKB_GRANTED ||
		    lkb->state == RDLM_LKB_CONVERTING) {
			list_del_init(&lkb->gr_entry);
			lkb->grmode = -1;
			ls->st.lost++;
			rdlm_lkb_kill(lkb, -ENOLCK, RDLM_SBF_LOST);
		} else {
			ls->st.fails++;
			rdlm_lkb_kill(lkb, -ENOLCK, 0);
		}
	}
}

/**
 * rdlm_ls_free_slots() - free what is left once no lock is
 * @ls: lockspace (locked, dead, no locks)
 */
void rdlm_ls_free_slots(struct rdlm_lockspace *ls)
{
	struct rdlm_slot *s;
	struct rdlm_res *res;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(ls->res, bkt, tmp, res, hash) {
		hash_del(&res->hash);
		list_del(&res->slot_entry);
		kfree(res);
	}
	hash_for_each_safe(ls->slots, bkt, tmp, s, hash) {
		hash_del(&s->hash);
		kfree(s);
	}
}

/**
 * rdlm_ls_dump_locks() - one line per lock, for debugfs
 * @ls: lockspace (locked)
 * @m: seq_file
 */
void rdlm_ls_dump_locks(struct rdlm_lockspace *ls, struct seq_file *m)
{
	static const char *const state[] = { "waiting", "granted",
					     "converting", "dead" };
	struct rdlm_lkb *lkb;
	int bkt;

	hash_for_each(ls->lkbs, bkt, lkb, hash) {
		struct rdlm_slot *s = lkb->res ? lkb->res->slot : NULL;

		if (!s) {
			seq_printf(m, "lock %u %s gr %d rq %d range %llu-%llu req %d\n",
				   lkb->lkid, state[lkb->state], lkb->grmode,
				   lkb->rqmode, lkb->start, lkb->end,
				   lkb->rreq ? (int)lkb->rreq->idx : -1);
			continue;
		}
		seq_printf(m, "lock %u %s gr %d rq %d home %u slot %u hold %d/%u name %*phN\n",
			   lkb->lkid, state[lkb->state], lkb->grmode,
			   lkb->rqmode, ls->members[s->home], s->slot,
			   s->state, s->own_mode, lkb->res->namelen,
			   lkb->res->name);
	}
}
