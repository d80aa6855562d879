// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm central engine: the classic lock server ("Traditional" in DSLR,
 * "Basecase" in DQNL, "SRSL" in N-CoSED).
 *
 * The home node's CPU keeps one FIFO queue per lock word.  A requester SENDs
 * LOCK and waits for GRANT; it SENDs UNLOCK (no reply) to release.  Shared
 * and exclusive modes; grants are strictly FIFO (a shared request never
 * overtakes a queued exclusive one).  The home grants with a lease of twice
 * the holder's lease, counted from the grant; the holder counts its own lease
 * from the moment it sent LOCK, so it always gives up first.  Stale UNLOCKs
 * are recognised by their grant token.  When a request queues behind
 * holders, each holder is told once (BLOCKING).
 */
#include "engine.h"

enum cl_phase {
	CL_IDLE = 0,
	CL_WAIT,	/* LOCK sent, waiting for GRANT */
	CL_BACKOFF,	/* home was full, LOCK to be re-sent */
	CL_HELD,
	CL_FINISH,	/* DONE once all SENDs completed */
};

struct cl_req {
	u8 phase;
	u8 cancel;
	u8 lost;
	u8 pad;
	u32 outstanding;
	u32 tries;
	u64 token;
	u64 lease_start;
	u64 lease_end;
};

static_assert(sizeof(struct cl_req) <= sizeof(((struct rdlm_req *)0)->priv));

struct cl_entry {
	u32 next;
	u32 src;
	u64 reqid;
	u64 token;
	u64 expire;
	u8 mode;
	u8 granted;
	u8 notified;
	u8 used;
	u8 grant_lost;	/* its GRANT's connection failed: sent again */
};

struct cl_slot {
	u32 head;
	u32 tail;
};

struct cl_home {
	struct cl_slot *slots;
	struct cl_entry *ents;
	u32 free;
	u64 token;
	u64 sweep_at;		/* time the sweep timer is armed for, 0 = none */
	u64 sweep_cookie;
};

#define CL_NONE U32_MAX

/* LOCK message flag: answer BUSY instead of queueing (trylock) */
#define CL_MF_NOQUEUE	0x01

static struct cl_req *cl(struct rdlm_req *req)
{
	return (struct cl_req *)req->priv;
}

static int cl_init(struct rdlm_engine *eng)
{
	struct cl_home *h;
	u32 i, n = eng->p.home_entries;

	if (!n)
		n = eng->p.nr_reqs * eng->p.nr_nodes;
	eng->p.home_entries = n;
	h = rdlm_zalloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->slots = rdlm_zalloc(sizeof(*h->slots) * eng->p.nr_slots);
	h->ents = rdlm_zalloc(sizeof(*h->ents) * n);
	if (!h->slots || !h->ents) {
		rdlm_free(h->slots);
		rdlm_free(h->ents);
		rdlm_free(h);
		return -ENOMEM;
	}
	for (i = 0; i < eng->p.nr_slots; i++) {
		h->slots[i].head = CL_NONE;
		h->slots[i].tail = CL_NONE;
	}
	for (i = 0; i < n; i++)
		h->ents[i].next = i + 1 < n ? i + 1 : CL_NONE;
	h->free = 0;
	eng->priv = h;
	return 0;
}

static void cl_fini(struct rdlm_engine *eng)
{
	struct cl_home *h = eng->priv;

	if (!h)
		return;
	rdlm_free(h->slots);
	rdlm_free(h->ents);
	rdlm_free(h);
	eng->priv = NULL;
}

static void cl_send(struct rdlm_engine *eng, struct rdlm_out *out,
		    struct rdlm_req *req, u32 node, u16 type, u32 slot,
		    u8 mode, u64 reqid, u64 token)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = node;
	v.slot = slot;
	v.req = req;
	v.msg.type = type;
	v.msg.mode = mode;
	v.msg.slot = slot;
	v.msg.reqid = reqid;
	v.msg.token = token;
	if (type == RDLM_MSG_LOCK) {
		v.flags = RDLM_VF_ENQUEUE;
		if (req && (req->flags & RDLM_RF_NOQUEUE))
			v.msg.flags = CL_MF_NOQUEUE;
	}
	if (req)
		cl(req)->outstanding++;
	rdlm_engine_post(eng, out, &v);
}

/* Cookie of a home's GRANT: which entry, so that a lost one is sent again */
#define CL_CK_GRANT	BIT_ULL(63)

static void cl_send_grant(struct rdlm_engine *eng, struct rdlm_out *out,
			  struct cl_home *h, u32 slot, u32 idx)
{
	struct cl_entry *e = &h->ents[idx];
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = e->src;
	v.slot = slot;
	v.cookie = CL_CK_GRANT | (u64)slot << 32 | idx;
	v.msg.type = RDLM_MSG_GRANT;
	v.msg.mode = e->mode;
	v.msg.slot = slot;
	v.msg.reqid = e->reqid;
	v.msg.token = e->token;
	e->grant_lost = 0;
	rdlm_engine_post(eng, out, &v);
}

static void cl_maybe_done(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	if (c->phase == CL_FINISH && !c->outstanding) {
		c->phase = CL_IDLE;
		rdlm_engine_emit(eng, out, RDLM_ACT_DONE, req, 0, 0);
	}
}

static void cl_send_lock(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	c->phase = CL_WAIT;
	c->lease_start = out->now;
	cl_send(eng, out, req, req->node, RDLM_MSG_LOCK, req->slot, req->mode,
		rdlm_req_id(req), 0);
}

static int cl_lock(struct rdlm_engine *eng, struct rdlm_req *req,
		   struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	if (req->mode != RDLM_MODE_SH && req->mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	if (req->node >= eng->p.nr_nodes || req->slot >= eng->p.nr_slots)
		return -EINVAL;
	if (c->phase != CL_IDLE)
		return -EBUSY;
	memset(c, 0, sizeof(*c));
	cl_send_lock(eng, req, out);
	return 0;
}

static int cl_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	switch (c->phase) {
	case CL_WAIT:
		c->cancel = 1;
		return 0;
	case CL_BACKOFF:
		rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, -ECANCELED, 0);
		c->phase = CL_FINISH;
		req->timer_cookie++;	/* disarm */
		cl_maybe_done(eng, req, out);
		return 0;
	case CL_HELD:
		if (!c->lost && out->now >= c->lease_end) {
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		}
		/* even when lost: the token makes a late UNLOCK harmless */
		c->phase = CL_FINISH;
		req->timer_cookie++;
		cl_send(eng, out, req, req->node, RDLM_MSG_UNLOCK, req->slot,
			req->mode, rdlm_req_id(req), c->token);
		return 0;
	default:
		return -EINVAL;
	}
}

static void cl_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct rdlm_req *req = cqe->req;
	struct cl_home *h = eng->priv;
	struct cl_req *c;

	if (!req) {
		/* home side: a GRANT that may not have arrived */
		u32 idx = (u32)cqe->cookie, slot = (cqe->cookie >> 32) & 0x7fffffff;

		if (cqe->status && (cqe->cookie & CL_CK_GRANT) &&
		    idx < eng->p.home_entries && slot < eng->p.nr_slots &&
		    h->ents[idx].used && h->ents[idx].granted)
			h->ents[idx].grant_lost = 1;	/* cl_member_up() */
		return;
	}
	c = cl(req);
	if (c->outstanding)
		c->outstanding--;
	if (cqe->status && c->phase == CL_WAIT) {
		/* LOCK may or may not have arrived: a late GRANT is answered */
		rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, cqe->status, 0);
		c->phase = CL_FINISH;
	}
	cl_maybe_done(eng, req, out);
}

static void cl_timer(struct rdlm_engine *eng, struct rdlm_req *req,
		     u64 cookie, struct rdlm_out *out);

/* ---- home side ---- */

static bool cl_compatible(u8 a, u8 b)
{
	return a == RDLM_MODE_SH && b == RDLM_MODE_SH;
}

static void cl_arm_sweep(struct rdlm_engine *eng, struct cl_home *h,
			 u64 expire, struct rdlm_out *out)
{
	if (h->sweep_at && h->sweep_at <= expire)
		return;
	h->sweep_at = expire;
	h->sweep_cookie++;
	rdlm_engine_emit(eng, out, RDLM_ACT_TIMER, NULL,
			 (s64)(expire > out->now ? expire - out->now : 0),
			 h->sweep_cookie);
}

/* Grant the FIFO prefix that is compatible with the current holders. */
static void cl_grant_pass(struct rdlm_engine *eng, struct cl_home *h, u32 slot,
			  struct rdlm_out *out)
{
	u32 i, nr_sh = 0, nr_ex = 0;
	struct cl_entry *e;

	for (i = h->slots[slot].head; i != CL_NONE; i = e->next) {
		e = &h->ents[i];
		if (!e->granted) {
			if (nr_ex || (e->mode == RDLM_MODE_EX && nr_sh))
				break;
			e->granted = 1;
			e->expire = out->now + 2 * eng->p.lease_ns;
			cl_send_grant(eng, out, h, slot, i);
			cl_arm_sweep(eng, h, e->expire, out);
		}
		if (e->mode == RDLM_MODE_EX)
			nr_ex++;
		else
			nr_sh++;
	}
}

static void cl_remove(struct cl_home *h, u32 slot, u32 idx, u32 prev)
{
	struct cl_slot *s = &h->slots[slot];
	struct cl_entry *e = &h->ents[idx];

	if (prev == CL_NONE)
		s->head = e->next;
	else
		h->ents[prev].next = e->next;
	if (s->tail == idx)
		s->tail = prev;
	memset(e, 0, sizeof(*e));
	e->next = h->free;
	h->free = idx;
}

static void cl_home_lock(struct rdlm_engine *eng, struct cl_home *h,
			 const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct cl_slot *s = &h->slots[m->slot];
	struct cl_entry *e, *o;
	u32 idx, i;

	if (h->free == CL_NONE || (m->mode != RDLM_MODE_SH &&
				   m->mode != RDLM_MODE_EX)) {
		rdlm_stat_inc(&eng->stats.busy);
		cl_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
		return;
	}
	idx = h->free;
	e = &h->ents[idx];
	h->free = e->next;
	memset(e, 0, sizeof(*e));
	e->next = CL_NONE;
	e->used = 1;
	e->src = rx->src;
	e->reqid = m->reqid;
	e->mode = m->mode;
	e->token = ++h->token;
	if (s->tail == CL_NONE)
		s->head = idx;
	else
		h->ents[s->tail].next = idx;
	s->tail = idx;
	cl_grant_pass(eng, h, m->slot, out);
	if (e->granted)
		return;
	if (m->flags & CL_MF_NOQUEUE) {
		/* a trylock that would wait: take it out, answer busy */
		u32 prev = CL_NONE;

		for (i = s->head; i != idx; i = h->ents[i].next)
			prev = i;
		cl_remove(h, m->slot, idx, prev);
		cl_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
		return;
	}
	/* tell the holders, once per grant, that someone now waits */
	for (i = s->head; i != CL_NONE; i = o->next) {
		o = &h->ents[i];
		if (!o->granted)
			break;
		if (o->notified || cl_compatible(o->mode, e->mode))
			continue;
		o->notified = 1;
		cl_send(eng, out, NULL, o->src, RDLM_MSG_BLOCKING, m->slot,
			o->mode, o->reqid, o->token);
	}
}

static void cl_home_unlock(struct rdlm_engine *eng, struct cl_home *h,
			   const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	u32 i, prev = CL_NONE;

	for (i = h->slots[m->slot].head; i != CL_NONE; i = h->ents[i].next) {
		struct cl_entry *e = &h->ents[i];

		if (e->granted && e->token == m->token && e->src == rx->src) {
			cl_remove(h, m->slot, i, prev);
			cl_grant_pass(eng, h, m->slot, out);
			return;
		}
		prev = i;
	}
	rdlm_stat_inc(&eng->stats.stale);	/* expired already */
}

static void cl_home_sweep(struct rdlm_engine *eng, struct cl_home *h,
			  struct rdlm_out *out)
{
	u64 next = 0;
	u32 slot, i, prev, nxt;
	bool changed;

	h->sweep_at = 0;
	for (slot = 0; slot < eng->p.nr_slots; slot++) {
		changed = false;
		prev = CL_NONE;
		for (i = h->slots[slot].head; i != CL_NONE; i = nxt) {
			struct cl_entry *e = &h->ents[i];

			nxt = e->next;
			if (!e->granted)
				break;
			if (e->expire <= out->now) {
				cl_remove(h, slot, i, prev);
				changed = true;
				continue;
			}
			prev = i;
		}
		if (changed)
			cl_grant_pass(eng, h, slot, out);
		for (i = h->slots[slot].head; i != CL_NONE; i = h->ents[i].next) {
			if (!h->ents[i].granted)
				break;
			if (!next || h->ents[i].expire < next)
				next = h->ents[i].expire;
		}
	}
	if (next)
		cl_arm_sweep(eng, h, next, out);
}

/* ---- requester side of incoming messages ---- */

static void cl_on_grant(struct rdlm_engine *eng, const struct rdlm_rx *rx,
			struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_req *req = rdlm_req_lookup(eng, m->reqid);
	struct cl_req *c = req ? cl(req) : NULL;

	if (c && c->phase == CL_HELD && c->token == m->token) {
		/* sent again after a link failure, and had arrived: ours */
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	if (!c || c->phase != CL_WAIT || c->cancel) {
		/* nobody wants it (any more): hand it straight back */
		rdlm_stat_inc(&eng->stats.stale);
		cl_send(eng, out, NULL, rx->src, RDLM_MSG_UNLOCK, m->slot,
			m->mode, m->reqid, m->token);
		if (c && c->phase == CL_WAIT) {
			rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req,
					 -ECANCELED, 0);
			c->phase = CL_FINISH;
			cl_maybe_done(eng, req, out);
		}
		return;
	}
	c->token = m->token;
	c->phase = CL_HELD;
	c->lease_end = c->lease_start + eng->p.lease_ns;
	if (c->lease_end <= out->now) {
		/* the grant came too late to be trusted: give it back */
		cl_send(eng, out, req, rx->src, RDLM_MSG_UNLOCK, m->slot,
			m->mode, m->reqid, m->token);
		rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, -ETIMEDOUT, 0);
		c->phase = CL_FINISH;
		cl_maybe_done(eng, req, out);
		return;
	}
	rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)c->lease_end,
			 req->mode);
	rdlm_engine_arm(eng, out, req, c->lease_end - out->now);
}

static void cl_recv(struct rdlm_engine *eng, const struct rdlm_rx *rx,
		    struct rdlm_out *out)
{
	struct cl_home *h = eng->priv;
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_req *req;
	unsigned long flags = 0;

	if (rx->kind != RDLM_VERB_SEND)
		return;
	switch (m->type) {
	case RDLM_MSG_LOCK:
	case RDLM_MSG_UNLOCK:
		if (m->slot >= eng->p.nr_slots)
			return;
		rdlm_spin_lock(&eng->lock, flags);
		if (m->type == RDLM_MSG_LOCK)
			cl_home_lock(eng, h, rx, out);
		else
			cl_home_unlock(eng, h, rx, out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case RDLM_MSG_GRANT:
		cl_on_grant(eng, rx, out);
		break;
	case RDLM_MSG_BLOCKING:
		req = rdlm_req_lookup(eng, m->reqid);
		if (req && cl(req)->phase == CL_HELD &&
		    cl(req)->token == m->token)
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_BLOCKING, 0);
		break;
	case RDLM_MSG_BUSY:
		req = rdlm_req_lookup(eng, m->reqid);
		if (!req || cl(req)->phase != CL_WAIT)
			break;
		if (cl(req)->cancel || (req->flags & RDLM_RF_NOQUEUE)) {
			rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req,
					 cl(req)->cancel ? -ECANCELED : -EAGAIN,
					 0);
			cl(req)->phase = CL_FINISH;
			cl_maybe_done(eng, req, out);
			break;
		}
		cl(req)->phase = CL_BACKOFF;
		rdlm_engine_arm(eng, out, req,
				rdlm_engine_backoff(eng, ++cl(req)->tries));
		break;
	default:
		break;
	}
}

static void cl_timer(struct rdlm_engine *eng, struct rdlm_req *req,
		     u64 cookie, struct rdlm_out *out)
{
	struct cl_home *h = eng->priv;
	unsigned long flags = 0;
	struct cl_req *c;

	if (!req) {
		rdlm_spin_lock(&eng->lock, flags);
		if (cookie == h->sweep_cookie)
			cl_home_sweep(eng, h, out);
		rdlm_spin_unlock(&eng->lock, flags);
		return;
	}
	if (cookie != req->timer_cookie) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	c = cl(req);
	if (c->phase == CL_HELD && !c->lost) {
		c->lost = 1;
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_LOST, 0);
	} else if (c->phase == CL_BACKOFF) {
		cl_send_lock(eng, req, out);
	}
}

/* Fail our requests waiting at @node; with @held, our holds there are lost. */
static void cl_fail_at(struct rdlm_engine *eng, u32 node, bool held,
		       struct rdlm_out *out)
{
	u32 i;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct cl_req *c = cl(req);

		if (!req->busy || req->node != node)
			continue;
		if (c->phase == CL_WAIT || c->phase == CL_BACKOFF) {
			rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, -EIO, 0);
			c->phase = CL_FINISH;
			req->timer_cookie++;
			cl_maybe_done(eng, req, out);
		} else if (held && c->phase == CL_HELD && !c->lost) {
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		}
	}
}

/*
 * As the home: every entry of a dead node goes. Its waiting ones would be
 * granted to it and block everyone behind them until their lease ran out;
 * its held ones would block them until then too, and the node holds
 * nothing any more (see &rdlm_engine_ops.member_down).
 */
static void cl_home_forget_node(struct rdlm_engine *eng, u32 node,
				struct rdlm_out *out)
{
	struct cl_home *h = eng->priv;
	unsigned long flags = 0;
	u32 slot, i, prev, nxt;
	bool changed;

	rdlm_spin_lock(&eng->lock, flags);
	for (slot = 0; slot < eng->p.nr_slots; slot++) {
		changed = false;
		prev = CL_NONE;
		for (i = h->slots[slot].head; i != CL_NONE; i = nxt) {
			struct cl_entry *e = &h->ents[i];

			nxt = e->next;
			if (e->src == node) {
				cl_remove(h, slot, i, prev);
				changed = true;
				continue;
			}
			prev = i;
		}
		if (changed)
			cl_grant_pass(eng, h, slot, out);
	}
	rdlm_spin_unlock(&eng->lock, flags);
}

/*
 * The home of some of our requests died: nobody will grant them. As a
 * home, forget what the dead node waits for.
 */
static void cl_member_down(struct rdlm_engine *eng, u32 node, u32 epoch,
			   struct rdlm_out *out)
{
	cl_fail_at(eng, node, true, out);
	cl_home_forget_node(eng, node, out);
}

/*
 * The connection to a home is back: a GRANT it sent meanwhile may be lost,
 * so a waiter there could wait forever (the home takes such a hold back
 * when its lease ends). Fail them; a GRANT that still comes is answered
 * with an UNLOCK. Holds stay: their leases still tell.
 * As the home: the connection to @node is back (each direction comes back
 * on its own, so @node may have queued new requests already): send the
 * GRANTs whose connection failed under them again, while they are held.
 */
static void cl_member_up(struct rdlm_engine *eng, u32 node,
			 struct rdlm_out *out)
{
	struct cl_home *h = eng->priv;
	unsigned long flags = 0;
	u32 slot, i;

	cl_fail_at(eng, node, false, out);
	rdlm_spin_lock(&eng->lock, flags);
	for (slot = 0; slot < eng->p.nr_slots; slot++)
		for (i = h->slots[slot].head; i != CL_NONE;
		     i = h->ents[i].next)
			if (h->ents[i].src == node && h->ents[i].grant_lost)
				cl_send_grant(eng, out, h, slot, i);
	rdlm_spin_unlock(&eng->lock, flags);
}

const struct rdlm_engine_ops rdlm_central_ops = {
	.name = "central",
	.many_per_word = true,
	.init = cl_init,
	.fini = cl_fini,
	.lock = cl_lock,
	.unlock = cl_unlock,
	.complete = cl_complete,
	.timer = cl_timer,
	.recv = cl_recv,
	.member_down = cl_member_down,
	.member_up = cl_member_up,
};
