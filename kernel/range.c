// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: range locks, on a lockspace whose engine locks ranges of a
 * resource (rangeseg, rangecomb; Documentation/range-locks.rst).
 *
 * A range lock is one engine request of its own. A name's word locks share
 * this node's hold of the name's lock word (lock.c); two range locks of
 * this node are two requests, and the engine orders them as it orders two
 * nodes' requests, so that local ranges wait for each other only where
 * they overlap. The lock is a &struct rdlm_lkb without a resource: lock
 * ids, callbacks, timeouts and rdlm_unlock() are the word locks'.
 *
 * A name's home is chosen over every configured member, not over the
 * current membership: a home that departs is not replaced, its ranges fail
 * with -ENOTCONN until it is back (range locks are not re-homed).
 *
 * An unlock completes when the engine is DONE with the request: the release
 * has reached the home when the caller hears of it. A waiting request that
 * fails, is cancelled or times out completes at once and leaves its engine
 * request behind, to finish on its own (rdlm_range_detach()).
 */
#include <linux/jhash.h>
#include <linux/jiffies.h>

#include "lock_priv.h"

/*
 * rangeseg: a name has a window of this many consecutive segments (lock
 * words) in its home's table; units past the window's last lock its last
 * segment.
 */
#define RDLM_RANGE_SEGS		16
#define RDLM_RANGE_SEG_UNITS	256	/* rangeseg's default segment size */

static bool rdlm_range_seg_engine(struct rdlm_lockspace *ls)
{
	/* rangeseg composes bakery words, and so holds one per segment */
	return ls->eng.ops == &rdlm_rangeseg_ops;
}

/* The (home, slot) of a name, and the range the engine is asked for. */
static int rdlm_range_place(struct rdlm_lockspace *ls, struct rdlm_req *req,
			    const void *name, unsigned int namelen)
{
	u64 key = rdlm_name_key(name, namelen);
	u32 h = jhash(name, namelen, 0x51075107);
	u64 last;

	req->node = rdlm_home_of(ls, 0, key);
	if (!rdlm_range_seg_engine(ls)) {
		req->slot = h % ls->nr_slots;
		return 0;
	}
	if (ls->nr_slots < RDLM_RANGE_SEGS)
		return -EINVAL;
	req->slot = h % (ls->nr_slots / RDLM_RANGE_SEGS) * RDLM_RANGE_SEGS;
	last = (u64)RDLM_RANGE_SEGS * (ls->eng.p.seg_units ?:
				       RDLM_RANGE_SEG_UNITS) - 1;
	req->start = min(req->start, last);
	req->end = min(req->end, last);
	return 0;
}

/**
 * rdlm_range_lock() - request a lock on the units [start, end] of a name
 * @ls: lockspace from rdlm_lockspace_find(), with a range engine
 * @mode: RDLM_LOCK_PR (shared with other PR ranges) or RDLM_LOCK_EX
 * @lksb: status block; its lkid is set before this returns
 * @flags: 0 or RDLM_LKF_NOQUEUE (fail with -EAGAIN rather than wait)
 * @name: resource name (binary)
 * @namelen: 1..RDLM_NAME_MAX bytes
 * @start: first unit of the range (a byte, a block: the caller's choice)
 * @end: last unit, inclusive, @start <= @end (U64_MAX: to the end)
 * @timeout_ms: fail with -ETIMEDOUT after waiting this long; 0 = never
 * @ast: completion callback, called once per accepted request
 * @arg: argument of @ast and @bast
 * @bast: blocking callback (may be NULL): another request waits for a
 *	range this granted lock overlaps; at most one per lock
 *
 * Two range locks of a name conflict when their ranges overlap and one of
 * them is EX, whichever node or caller they come from; ranges are granted
 * in the order their requests reach the home where they overlap. The
 * rangeseg engine locks whole segments (256 units each, the last of a
 * name's 16 also covers everything above), so ranges in one segment
 * conflict as if they overlapped. A lock is released or cancelled with
 * rdlm_unlock() (RDLM_LKF_VALBLK and _IVVALBLK are refused: ranges carry
 * no LVB) and cannot be converted. @ast runs in process context with
 * @lksb->status: 0 (granted), -EAGAIN (NOQUEUE), -ETIMEDOUT (@timeout_ms,
 * or a segment's lease ran out while later ones were asked for),
 * -RDLM_ECANCEL, -EDEADLK (a segment's bakery word was reset under the
 * request: ask again), -ENOLCK, -ENOTCONN; a granted lock whose lease expired
 * gets one more @ast with -ENOLCK and RDLM_SBF_LOST and must still be
 * unlocked; its unlock completes with -RDLM_EUNLOCK once the home has it.
 *
 * Context: any context but hard interrupts, with interrupts enabled; never
 * sleeps.
 * Return: 0 (queued), -EINVAL, -EOPNOTSUPP (not a range lockspace),
 * -ENOMEM, -EAGAIN (the lockspace's max_locks on this node reached, or no
 * engine request free: nr_reqs), -ENOLCK, -ENOTCONN (home not connected).
 */
int rdlm_range_lock(struct rdlm_lockspace *ls, int mode,
		    struct rdlm_lksb *lksb, u32 flags, const void *name,
		    unsigned int namelen, u64 start, u64 end,
		    unsigned int timeout_ms, void (*ast)(void *arg), void *arg,
		    void (*bast)(void *arg, int mode))
{
	struct rdlm_out out;
	struct rdlm_lkb *lkb;
	struct rdlm_req *req;
	int ret;

	if (!ls || !lksb || !name || !namelen || namelen > RDLM_NAME_MAX ||
	    (mode != RDLM_LOCK_PR && mode != RDLM_LOCK_EX) ||
	    (flags & ~RDLM_LKF_NOQUEUE) || start > end)
		return -EINVAL;
	if (!ls->eng.ops->ranges)
		return -EOPNOTSUPP;
	lkb = rdlm_lkb_alloc(ls, lksb, ast, arg, bast, arg);
	if (!lkb)
		return -ENOMEM;

	spin_lock_bh(&ls->lock);
	ret = rdlm_ls_may_add(ls);
	if (ret)
		goto out_free;
	ret = -EAGAIN;
	req = rdlm_req_alloc(&ls->eng);
	if (!req)
		goto out_free;
	req->mode = mode == RDLM_LOCK_EX ? RDLM_MODE_EX : RDLM_MODE_SH;
	req->flags = flags & RDLM_LKF_NOQUEUE ? RDLM_RF_NOQUEUE : 0;
	req->slots = 1;
	req->start = start;
	req->end = end;
	req->user = (u64)(uintptr_t)lkb;
	ret = rdlm_range_place(ls, req, name, namelen);
	if (!ret)
		ret = rdlm_check_ls(ls, req->node);
	if (ret)
		goto out_req;
	rdlm_lkb_add(ls, lkb);
	lkb->rreq = req;
	lkb->start = start;
	lkb->end = end;
	lkb->rqmode = mode;
	lkb->flags = flags;
	lkb->wait_start = ktime_get_ns();
	lksb->lkid = lkb->lkid;
	atomic_inc(&ls->nr_lkbs);
	out = rdlm_ls_out(ls);
	ret = ls->eng.ops->lock(&ls->eng, req, &out);
	if (ret) {
		hash_del(&lkb->hash);
		atomic_dec(&ls->nr_lkbs);
		goto out_req;
	}
	ls->st.requests++;
	if (timeout_ms) {
		lkb->timeout_at = jiffies + msecs_to_jiffies(timeout_ms) ?: 1;
		mod_timer(&lkb->timeout, lkb->timeout_at);
	}
	rdlm_ls_unlock(ls);
	return 0;

out_req:
	rdlm_req_free(&ls->eng, req);
out_free:
	rdlm_ls_unlock(ls);
	kfree(lkb);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlm_range_lock);

/*
 * What an engine's failure of a range request tells its caller: a bakery
 * word reset under the request (-EDEADLK) or a lease that ran out while
 * later segments were still asked for (-ETIMEDOUT) as they are; the caller
 * may ask again.
 */
static int rdlm_range_errno(int err)
{
	if (err == -EDEADLK || err == -ETIMEDOUT)
		return err;
	return rdlm_engine_errno(err);
}

/*
 * A waiting request is over for its caller (cancelled, timed out, failed):
 * it completes now. The engine may need long to finish its request (the
 * bakery gives a cancelled ticket back only at its turn), so the request
 * goes on without the lock, and is freed at its DONE.
 */
static void rdlm_range_detach(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			      int status)
{
	struct rdlm_req *req = lkb->rreq;

	req->user = 0;
	lkb->rreq = NULL;
	rdlm_lkb_unwait(lkb);
	if (status == -RDLM_ECANCEL)
		ls->st.cancels++;
	else
		ls->st.fails++;
	rdlm_lkb_kill(lkb, status, 0);
}

/* Cancel @lkb's waiting request: it completes with @status. */
static void rdlm_range_cancel(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			      int status)
{
	struct rdlm_req *req = lkb->rreq;
	struct rdlm_out out = rdlm_ls_out(ls);

	rdlm_range_detach(ls, lkb, status);
	/* refused only when it is finishing already: DONE follows anyway */
	ls->eng.ops->unlock(&ls->eng, req, &out);
}

/**
 * rdlm_range_unlock_check() - may rdlm_unlock() release or cancel a range lock?
 * @lkb: the lock, not dead
 * @flags: rdlm_unlock()'s
 *
 * Return: 0, or rdlm_unlock()'s error.
 */
int rdlm_range_unlock_check(struct rdlm_lkb *lkb, u32 flags)
{
	if (flags & ~RDLM_LKF_CANCEL)
		return -EINVAL;	/* no LVB */
	if (flags & RDLM_LKF_CANCEL)
		return lkb->state != RDLM_LKB_NEW ? -EALREADY : 0;
	return lkb->state != RDLM_LKB_GRANTED ? -EBUSY : 0;
}

/**
 * rdlm_range_unlock_lkb() - release or cancel a range lock
 * @ls: lockspace (locked)
 * @lkb: the lock, rdlm_range_unlock_check() passed
 * @flags: RDLM_LKF_CANCEL or 0
 */
void rdlm_range_unlock_lkb(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			   u32 flags)
{
	struct rdlm_out out = rdlm_ls_out(ls);

	if (flags & RDLM_LKF_CANCEL) {
		rdlm_range_cancel(ls, lkb, -RDLM_ECANCEL);
		return;
	}
	/* gone for callers now; the engine's DONE completes it */
	lkb->state = RDLM_LKB_DEAD;
	lkb->grmode = -1;
	ls->st.unlocks++;
	/* refused only when it is finishing already: DONE follows anyway */
	ls->eng.ops->unlock(&ls->eng, lkb->rreq, &out);
}

/**
 * rdlm_range_timeout() - a range request waited its timeout out
 * @ls: lockspace (locked)
 * @lkb: the lock
 */
void rdlm_range_timeout(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb)
{
	if (lkb->state == RDLM_LKB_NEW)
		rdlm_range_cancel(ls, lkb, -ETIMEDOUT);
}

/**
 * rdlm_range_act() - an engine action about a range lock's request
 * @ls: lockspace (locked)
 * @act: GRANT, FAIL, NOTICE or DONE
 */
void rdlm_range_act(struct rdlm_lockspace *ls, const struct rdlm_action *act)
{
	struct rdlm_lkb *lkb = (struct rdlm_lkb *)(uintptr_t)act->req->user;

	if (ls->dead)
		return;	/* rdlm_ls_fail_all() answered every lock */
	if (!lkb) {
		/* a request its lock left (rdlm_range_detach()) */
		if (act->kind == RDLM_ACT_DONE)
			rdlm_req_free(&ls->eng, act->req);
		return;
	}
	switch (act->kind) {
	case RDLM_ACT_GRANT:
		if (lkb->state != RDLM_LKB_NEW)
			break;
		rdlm_lkb_unwait(lkb);
		lkb->grmode = act->mode == RDLM_MODE_EX ? RDLM_LOCK_EX :
							  RDLM_LOCK_PR;
		lkb->state = RDLM_LKB_GRANTED;
		ls->st.grants++;
		rdlm_queue_ast(lkb, 0, 0, false);
		break;
	case RDLM_ACT_FAIL:
		if (lkb->state == RDLM_LKB_NEW)
			rdlm_range_detach(ls, lkb, rdlm_range_errno(act->err));
		break;
	case RDLM_ACT_NOTICE:
		if (lkb->state != RDLM_LKB_GRANTED)
			break;
		if (act->notice == RDLM_NOTICE_LOST && !lkb->lost) {
			lkb->lost = true;
			ls->st.lost++;
			rdlm_queue_ast(lkb, -ENOLCK, RDLM_SBF_LOST, false);
		} else if (act->notice == RDLM_NOTICE_BLOCKING) {
			rdlm_queue_bast(lkb, RDLM_LOCK_EX);
		}
		break;
	case RDLM_ACT_DONE:
		rdlm_req_free(&ls->eng, act->req);
		lkb->rreq = NULL;
		lkb->grmode = -1;
		/* released (a request that failed was detached at its FAIL) */
		rdlm_lkb_kill(lkb, -RDLM_EUNLOCK, 0);
		break;
	default:
		break;
	}
}
