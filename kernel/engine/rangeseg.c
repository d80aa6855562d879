// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm rangeseg engine: range locks by static segmentation (the client-side
 * baseline of "Range locks with server-side combination", section 3.1).
 *
 * The units of a resource are cut into fixed segments of seg_units units;
 * segment i covers units [i * seg_units, (i + 1) * seg_units - 1] and is the
 * lock word at slot req->slot + i of the home node req->node, a DSLR bakery
 * word (shared counters for readers, exclusive ones for writers).  The
 * caller reserves the slots [req->slot, req->slot + segments) for the
 * resource; a range whose last segment falls outside the table is refused.
 *
 * A range request takes the bakery lock of every segment it covers, in
 * ascending order, one after the other: the lock of segment i + 1 is asked
 * for only once segment i is granted, and the range is granted when the
 * last one is.  Taking the tickets of all segments at once (in parallel)
 * deadlocks: two writers on segments {1, 2} can get tickets 0 on segment 1
 * and 1 on segment 2, and 1 on segment 1 and 0 on segment 2, each then
 * waiting for the other.  Ascending, one at a time, is the usual total
 * order on resources and cannot deadlock.
 *
 * The engine composes rdlm_bakery_ops rather than copying it: every segment
 * is a child request from this engine's pool, driven by the bakery's own
 * lock/unlock/complete/timer with a wrapping &struct rdlm_out.  The wrapper
 * passes the children's POST and TIMER actions through unchanged (their
 * completions and timers come back naming the child) and intercepts their
 * GRANT, FAIL, NOTICE and DONE.  The child -> parent link lives in this
 * engine's private state, indexed by the child's pool index, because the
 * child's own priv belongs to the bakery.  A child carries its parent's
 * &rdlm_req.user, so that a caller tracing verbs by request finds the range.
 *
 * A trylock (RDLM_RF_NOQUEUE) fails with -EAGAIN, releasing what it holds,
 * when a segment was not free as its ticket was taken: the bakery grants
 * on that first answer if it was.
 *
 * Outcomes: a lost lease of any segment is a lost lease of the range
 * (NOTICE LOST once); a segment that fails (reset, fabric error, lease
 * over while still acquiring the next ones) fails the range and releases
 * the segments already held; unlock of a pending range cancels it: held
 * segments are released at once, the one being acquired is cancelled in
 * the bakery, and the range fails with -ECANCELED.  GRANT, FAIL and NOTICE
 * counts in &rdlm_engine.stats are those of the segments.
 */
#include "engine.h"

#define RS_MAX_SEGS	32
#define RS_SEG_UNITS	256
#define RS_NONE		U32_MAX

enum rs_phase {
	RS_IDLE = 0,
	RS_ACQ,		/* segments [0, held) granted, held in flight */
	RS_HELD,	/* every segment granted, range granted */
	RS_FINISH,	/* failed or released: DONE once every child is */
};

#define RSF_CANCEL	0x01	/* unlock of the pending range */
#define RSF_FAILED	0x02	/* FAIL emitted */
#define RSF_LOST	0x04	/* NOTICE LOST emitted */
#define RSF_BLOCKING	0x08	/* a segment has a waiter behind it */
#define RSF_TOLD	0x10	/* NOTICE BLOCKING emitted */
#define RSF_NEXT	0x20	/* to do: lock the next segment */
#define RSF_RELEASE	0x40	/* to do: release the segments held */
#define RSF_CURDONE	0x80	/* the segment in flight failed or is cancelled */

struct rs_req {
	u8 phase;
	u8 flags;
	u8 nseg;	/* segments covered, children allocated at lock() */
	u8 held;	/* children [0, held) granted */
	u8 locked;	/* children [0, locked) handed to the bakery */
	u8 released;	/* children [0, released) unlocked again */
	u8 freed;	/* children [locked, nseg) given back unused */
	u8 answered;	/* children [0, answered) had their first answer */
	u32 live;	/* children not DONE yet */
	int err;
	u64 lease_end;	/* earliest lease end of the segments held */
	u32 child[RS_MAX_SEGS];
};

static_assert(sizeof(struct rs_req) <= sizeof(((struct rdlm_req *)0)->priv));

struct rs_priv {
	u32 *parent;	/* by pool index: parent of a child, or RS_NONE */
};

/* the children's out: passes verbs and timers up, keeps the rest */
struct rs_out {
	struct rdlm_out out;
	struct rdlm_out *up;
	struct rdlm_engine *eng;
};

static const struct rdlm_engine_ops *const rs_child = &rdlm_bakery_ops;

static struct rs_req *rs(struct rdlm_req *req)
{
	return (struct rs_req *)req->priv;
}

static u32 rs_seg(const struct rdlm_engine *eng)
{
	return eng->p.seg_units ? eng->p.seg_units : RS_SEG_UNITS;
}

static int rs_init(struct rdlm_engine *eng)
{
	struct rs_priv *pv;
	u32 i;

	if (rs_child->init)	/* the bakery keeps no engine-wide state */
		return -EINVAL;
	pv = rdlm_zalloc(sizeof(*pv));
	if (!pv)
		return -ENOMEM;
	pv->parent = rdlm_zalloc(sizeof(*pv->parent) * eng->p.nr_reqs);
	if (!pv->parent) {
		rdlm_free(pv);
		return -ENOMEM;
	}
	for (i = 0; i < eng->p.nr_reqs; i++)
		pv->parent[i] = RS_NONE;
	eng->priv = pv;
	return 0;
}

static void rs_fini(struct rdlm_engine *eng)
{
	struct rs_priv *pv = eng->priv;

	if (!pv)
		return;
	rdlm_free(pv->parent);
	rdlm_free(pv);
	eng->priv = NULL;
}

static struct rdlm_req *rs_parent_of(struct rdlm_engine *eng,
				     const struct rdlm_req *child)
{
	struct rs_priv *pv = eng->priv;
	u32 p;

	if (!child || child->idx >= eng->p.nr_reqs)
		return NULL;
	p = pv->parent[child->idx];
	return p == RS_NONE ? NULL : &eng->reqs[p];
}

/* an action about the range itself, to the caller (not counted again) */
static void rs_up(struct rs_out *w, u8 kind, struct rdlm_req *req, s64 arg)
{
	struct rdlm_action act;

	memset(&act, 0, sizeof(act));
	act.kind = kind;
	act.req = req;
	switch (kind) {
	case RDLM_ACT_GRANT:
		act.lease_end = (u64)arg;
		act.mode = req->mode;
		break;
	case RDLM_ACT_FAIL:
		act.err = (int)arg;
		break;
	case RDLM_ACT_NOTICE:
		act.notice = (u8)arg;
		break;
	default:
		break;
	}
	w->up->emit(w->up, &act);
}

static void rs_fail(struct rs_out *w, struct rdlm_req *req, int err)
{
	struct rs_req *p = rs(req);

	if (p->flags & RSF_FAILED)
		return;
	if (p->flags & RSF_CANCEL)
		err = -ECANCELED;
	p->flags |= RSF_FAILED | RSF_RELEASE;
	p->flags &= ~RSF_NEXT;
	p->err = err;
	p->phase = RS_FINISH;
	rs_up(w, RDLM_ACT_FAIL, req, err);
}

static void rs_child_done(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_req *child)
{
	struct rs_priv *pv = eng->priv;

	pv->parent[child->idx] = RS_NONE;
	rdlm_req_free(eng, child);
	if (rs(req)->live)
		rs(req)->live--;
}

static void rs_emit(struct rdlm_out *o, const struct rdlm_action *a)
{
	struct rs_out *w = o->priv;
	struct rdlm_req *child = a->req, *req;
	struct rs_req *p;

	if (a->kind == RDLM_ACT_POST || a->kind == RDLM_ACT_TIMER) {
		w->up->emit(w->up, a);
		return;
	}
	req = rs_parent_of(w->eng, child);
	if (!req)
		return;
	p = rs(req);
	switch (a->kind) {
	case RDLM_ACT_GRANT:
		if (p->phase != RS_ACQ && !(p->flags & RSF_FAILED))
			break;
		if (p->held >= p->locked || p->child[p->held] != child->idx)
			break;
		p->held++;
		if (!p->lease_end || a->lease_end < p->lease_end)
			p->lease_end = a->lease_end;
		if (p->flags & (RSF_FAILED | RSF_CANCEL)) {
			p->flags |= RSF_RELEASE;
		} else if (p->held == p->nseg) {
			p->phase = RS_HELD;
			rs_up(w, RDLM_ACT_GRANT, req, (s64)p->lease_end);
			if (p->flags & RSF_BLOCKING) {
				p->flags |= RSF_TOLD;
				rs_up(w, RDLM_ACT_NOTICE, req,
				      RDLM_NOTICE_BLOCKING);
			}
		} else {
			p->flags |= RSF_NEXT;
		}
		break;
	case RDLM_ACT_FAIL:
		p->flags |= RSF_CURDONE;
		rs_fail(w, req, a->err);
		break;
	case RDLM_ACT_NOTICE:
		if (a->notice == RDLM_NOTICE_LOST) {
			if (p->phase == RS_ACQ) {
				/* an earlier segment's lease ran out first */
				rs_fail(w, req, -ETIMEDOUT);
			} else if (!(p->flags & (RSF_LOST | RSF_FAILED))) {
				p->flags |= RSF_LOST;
				rs_up(w, RDLM_ACT_NOTICE, req,
				      RDLM_NOTICE_LOST);
			}
		} else if (a->notice == RDLM_NOTICE_BLOCKING) {
			p->flags |= RSF_BLOCKING;
			if (p->phase == RS_HELD && !(p->flags & RSF_TOLD)) {
				p->flags |= RSF_TOLD;
				rs_up(w, RDLM_ACT_NOTICE, req,
				      RDLM_NOTICE_BLOCKING);
			}
		}
		break;
	case RDLM_ACT_DONE:
		rs_child_done(w->eng, req, child);
		break;
	default:
		break;
	}
}

static void rs_wrap(struct rs_out *w, struct rdlm_engine *eng,
		    struct rdlm_out *up)
{
	w->out.now = up->now;
	w->out.emit = rs_emit;
	w->out.priv = w;
	w->up = up;
	w->eng = eng;
}

/* Carry out what the children's actions asked for, then DONE if all done. */
static void rs_drive(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rs_out *w)
{
	struct rs_req *p = rs(req);
	struct rdlm_req *c;
	int ret;

	while (p->phase != RS_IDLE && (p->flags & (RSF_NEXT | RSF_RELEASE))) {
		if (p->flags & RSF_RELEASE) {
			p->flags &= ~RSF_RELEASE;
			/* the segment in flight is given up in the bakery */
			if (p->locked > p->held && !(p->flags & RSF_CURDONE)) {
				p->flags |= RSF_CURDONE;
				c = &eng->reqs[p->child[p->held]];
				rs_child->unlock(eng, c, &w->out);
			}
			/* segments never asked for go straight back */
			while (p->locked + p->freed < p->nseg) {
				c = &eng->reqs[p->child[p->locked + p->freed]];
				p->freed++;
				rs_child_done(eng, req, c);
			}
			while (p->released < p->held) {
				c = &eng->reqs[p->child[p->released++]];
				rs_child->unlock(eng, c, &w->out);
			}
			continue;
		}
		p->flags &= ~RSF_NEXT;
		c = &eng->reqs[p->child[p->locked++]];
		ret = rs_child->lock(eng, c, &w->out);
		if (ret) {
			/* not the bakery's: ours to give back */
			p->locked--;
			p->freed++;
			rs_child_done(eng, req, c);
			rs_fail(w, req, ret);
		}
	}
	if (p->phase == RS_FINISH && !p->live) {
		p->phase = RS_IDLE;
		p->flags = 0;
		rs_up(w, RDLM_ACT_DONE, req, 0);
	}
}

static int rs_lock(struct rdlm_engine *eng, struct rdlm_req *req,
		   struct rdlm_out *out)
{
	struct rs_priv *pv = eng->priv;
	struct rs_req *p = rs(req);
	u32 seg = rs_seg(eng), k = req->slots ? req->slots : 1;
	struct rs_out w;
	u64 first, last;
	u32 i;

	if (req->node >= eng->p.nr_nodes || req->start > req->end)
		return -EINVAL;
	if (req->mode != RDLM_MODE_SH && req->mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	if (k > eng->p.kmax)
		return -EINVAL;
	if (p->phase != RS_IDLE)
		return -EBUSY;
	first = div_u64(req->start, seg);
	last = div_u64(req->end, seg);
	if (last - first >= RS_MAX_SEGS)
		return -E2BIG;
	if (last >= eng->p.nr_slots || req->slot >= eng->p.nr_slots - last)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->nseg = (u8)(last - first + 1);
	/* every segment's request up front: none is missing half way */
	for (i = 0; i < p->nseg; i++) {
		struct rdlm_req *c = rdlm_req_alloc(eng);

		if (!c) {
			while (i--) {
				pv->parent[p->child[i]] = RS_NONE;
				rdlm_req_free(eng, &eng->reqs[p->child[i]]);
			}
			return -EAGAIN;
		}
		c->node = req->node;
		c->slot = req->slot + (u32)first + i;
		c->mode = req->mode;
		c->slots = req->slots;
		c->user = req->user;
		p->child[i] = c->idx;
		pv->parent[c->idx] = req->idx;
	}
	p->live = p->nseg;
	p->phase = RS_ACQ;
	p->flags = RSF_NEXT;
	rs_wrap(&w, eng, out);
	rs_drive(eng, req, &w);
	return 0;
}

static int rs_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct rs_req *p = rs(req);
	struct rs_out w;

	rs_wrap(&w, eng, out);
	switch (p->phase) {
	case RS_HELD:
		p->phase = RS_FINISH;
		p->flags |= RSF_RELEASE;
		break;
	case RS_ACQ:
		/* release what we hold now, cancel the segment in flight */
		p->flags |= RSF_CANCEL | RSF_RELEASE;
		break;
	default:
		return -EINVAL;
	}
	rs_drive(eng, req, &w);
	return 0;
}

static void rs_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct rdlm_req *req = rs_parent_of(eng, cqe->req);
	struct rs_out w;
	struct rs_req *p;
	bool first;
	u8 held;

	if (!req) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	p = rs(req);
	held = p->held;
	/* the ticket's answer, for the segment being acquired */
	first = p->phase == RS_ACQ && p->answered == held &&
		held < p->locked && cqe->req == &eng->reqs[p->child[held]];
	if (first)
		p->answered = held + 1;
	rs_wrap(&w, eng, out);
	rs_child->complete(eng, cqe, &w.out);
	if (first && (req->flags & RDLM_RF_NOQUEUE) && p->phase == RS_ACQ &&
	    p->held == held)
		rs_fail(&w, req, -EAGAIN);
	rs_drive(eng, req, &w);
}

static void rs_timer(struct rdlm_engine *eng, struct rdlm_req *req,
		     u64 cookie, struct rdlm_out *out)
{
	struct rdlm_req *parent = rs_parent_of(eng, req);
	struct rs_out w;

	if (!parent) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	rs_wrap(&w, eng, out);
	rs_child->timer(eng, req, cookie, &w.out);
	rs_drive(eng, parent, &w);
}

static int rs_describe(struct rdlm_engine *eng, struct rdlm_req *req,
		       char *buf, size_t len)
{
	struct rdlm_req *parent = rs_parent_of(eng, req);
	struct rs_req *p;

	if (!req)
		return snprintf(buf, len, "rangeseg: no home state");
	if (parent)
		return snprintf(buf, len, "segment of request %u", parent->idx);
	p = rs(req);
	return snprintf(buf, len,
			"phase %u flags %#x segs %u held %u locked %u released %u live %u",
			p->phase, p->flags, p->nseg, p->held, p->locked,
			p->released, p->live);
}

const struct rdlm_engine_ops rdlm_rangeseg_ops = {
	.name = "rangeseg",
	.needs_lease = true,
	.ranges = true,
	.init = rs_init,
	.fini = rs_fini,
	.lock = rs_lock,
	.unlock = rs_unlock,
	.complete = rs_complete,
	.timer = rs_timer,
	.describe = rs_describe,
};
