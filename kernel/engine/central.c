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
 *
 * A shared holder may convert to exclusive in place (CONVERT): as in fs/dlm
 * the conversion goes before every waiting request, is granted once its
 * holder is the only one, and meets another waiting conversion with
 * -EDEADLK unless asked to wait (then both holders are told and their
 * callers resolve it, by cancelling one).  With no_lease, holds last until
 * released; a dead holder's go when the cluster says it is dead.
 *
 * A word here is any 31-bit number (any_slot), not an index into a table:
 * the engine posts no atomic. The lock manager hashes each name to one, so
 * that names rarely share one (two names on one word wait for each other,
 * and a caller that holds one for good would starve the other). The home
 * keeps a queue only for the words that have requests. A GRANT's cookie
 * has the word in bits 32-62 and its top bit set.
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
	u8 converting;	/* CONVERT to exclusive sent, no answer yet */
	u8 conv_flags;	/* its RDLM_RF_* (sent again after a link failure) */
	u8 conv_cancel;	/* and a cancel of it */
	u32 outstanding;
	u32 tries;
	u64 token;
	u64 lease_start;
	u64 lease_end;
	u64 conv_start;	/* when CONVERT was sent: the new lease's start */
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
	u8 converting;	/* granted shared, waits to become exclusive */
};

/* The queue of a word with requests; at most one per entry. */
struct cl_slot {
	u32 slot;
	u32 head;
	u32 tail;
	u32 next;	/* in its bucket, or in the free list */
};

struct cl_home {
	struct cl_slot *slots;
	u32 *buckets;
	u32 bucket_mask;
	u32 free_slots;
	struct cl_entry *ents;
	u32 free;
	u64 token;
	u64 sweep_at;		/* time the sweep timer is armed for, 0 = none */
	u64 sweep_cookie;
};

#define CL_NONE U32_MAX

/* LOCK and CONVERT flag: answer BUSY instead of queueing (trylock) */
#define CL_MF_NOQUEUE	0x01
/* CONVERT flag: wait even when another conversion waits (a deadlock) */
#define CL_MF_NODLCKWT	0x02
/* CONVERT flag: cancel the conversion that waits (too late once granted) */
#define CL_MF_CANCEL	0x04

enum {
	CL_MSG_CONVERT = RDLM_MSG_ENGINE,	/* holder -> home: mode, token */
	CL_MSG_UNCONVERTED,	/* home -> holder: not converted, arg = -errno */
	CL_MSG_TRIED,		/* home -> holder: a trylock was refused */
};

static struct cl_req *cl(struct rdlm_req *req)
{
	return (struct cl_req *)req->priv;
}

/* A holder's lease end for a grant asked for at @start; 0 = none. */
static u64 cl_lease_end(struct rdlm_engine *eng, u64 start)
{
	return eng->p.no_lease ? 0 : start + eng->p.lease_ns;
}

static int cl_init(struct rdlm_engine *eng)
{
	struct cl_home *h;
	u32 i, nb, n = eng->p.home_entries;

	if (!n)
		n = eng->p.nr_reqs * eng->p.nr_nodes;
	eng->p.home_entries = n;
	h = rdlm_zalloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	nb = 1;
	while (nb < n && nb < (1U << 30))
		nb <<= 1;
	h->bucket_mask = nb - 1;
	h->buckets = rdlm_zalloc(sizeof(*h->buckets) * nb);
	h->slots = rdlm_zalloc(sizeof(*h->slots) * n);
	h->ents = rdlm_zalloc(sizeof(*h->ents) * n);
	if (!h->buckets || !h->slots || !h->ents) {
		rdlm_free(h->buckets);
		rdlm_free(h->slots);
		rdlm_free(h->ents);
		rdlm_free(h);
		return -ENOMEM;
	}
	for (i = 0; i < nb; i++)
		h->buckets[i] = CL_NONE;
	for (i = 0; i < n; i++) {
		h->ents[i].next = i + 1 < n ? i + 1 : CL_NONE;
		h->slots[i].head = CL_NONE;
		h->slots[i].tail = CL_NONE;
		h->slots[i].next = i + 1 < n ? i + 1 : CL_NONE;
	}
	h->free = 0;
	h->free_slots = 0;
	eng->priv = h;
	return 0;
}

static void cl_fini(struct rdlm_engine *eng)
{
	struct cl_home *h = eng->priv;

	if (!h)
		return;
	rdlm_free(h->buckets);
	rdlm_free(h->slots);
	rdlm_free(h->ents);
	rdlm_free(h);
	eng->priv = NULL;
}

/* SEND @m to @node; with @req, its completion is @req's */
static void cl_send_msg(struct rdlm_engine *eng, struct rdlm_out *out,
			struct rdlm_req *req, u32 node,
			const struct rdlm_msg *m)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = node;
	v.slot = m->slot;
	v.req = req;
	v.msg = *m;
	if (m->type == RDLM_MSG_LOCK) {
		v.flags = RDLM_VF_ENQUEUE;
		if (req && (req->flags & RDLM_RF_NOQUEUE))
			v.msg.flags = CL_MF_NOQUEUE;
	}
	if (req)
		cl(req)->outstanding++;
	rdlm_engine_post(eng, out, &v);
}

static void cl_send(struct rdlm_engine *eng, struct rdlm_out *out,
		    struct rdlm_req *req, u32 node, u16 type, u32 slot,
		    u8 mode, u64 reqid, u64 token)
{
	struct rdlm_msg m = {
		.type = type,
		.mode = mode,
		.slot = slot,
		.reqid = reqid,
		.token = token,
	};

	cl_send_msg(eng, out, req, node, &m);
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
	if (req->node >= eng->p.nr_nodes || req->slot > RDLM_ANY_SLOT_MAX)
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
		if (!c->lost && c->lease_end && out->now >= c->lease_end) {
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		}
		/* even when lost: the token makes a late UNLOCK harmless */
		c->phase = CL_FINISH;
		c->converting = 0;
		req->timer_cookie++;
		cl_send(eng, out, req, req->node, RDLM_MSG_UNLOCK, req->slot,
			req->mode, rdlm_req_id(req), c->token);
		return 0;
	default:
		return -EINVAL;
	}
}

static void cl_send_convert(struct rdlm_engine *eng, struct rdlm_req *req,
			    struct rdlm_out *out, u8 mode)
{
	struct cl_req *c = cl(req);
	struct rdlm_msg m = {
		.type = CL_MSG_CONVERT,
		.mode = mode,
		.slot = req->slot,
		.reqid = rdlm_req_id(req),
		.token = c->token,
	};

	if (c->conv_flags & RDLM_RF_NOQUEUE)
		m.flags |= CL_MF_NOQUEUE;
	if (c->conv_flags & RDLM_RF_NODLCKWT)
		m.flags |= CL_MF_NODLCKWT;
	if (mode != RDLM_MODE_EX && c->converting)
		m.flags = CL_MF_CANCEL;
	cl_send_msg(eng, out, req, req->node, &m);
}

static void cl_unconverted(struct rdlm_engine *eng, struct rdlm_req *req,
			   int err, struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	c->converting = 0;
	c->conv_cancel = 0;
	rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
			 RDLM_NOTICE_UNCONVERTED, (u64)(s64)err);
}

/*
 * Shared to exclusive in place, or cancel that while it waits; exclusive
 * to shared at once (the home hears of it, nothing to wait for).
 */
static int cl_convert(struct rdlm_engine *eng, struct rdlm_req *req, u8 mode,
		      u8 flags, struct rdlm_out *out)
{
	struct cl_req *c = cl(req);

	if (c->phase != CL_HELD || c->lost)
		return -EINVAL;
	if (!c->converting && req->mode == RDLM_MODE_EX &&
	    mode == RDLM_MODE_SH) {
		req->mode = mode;
		c->conv_flags = 0;
		cl_send_convert(eng, req, out, mode);
		return 0;
	}
	if (c->converting) {
		if (mode != req->mode)
			return -EBUSY;
		if (!c->conv_cancel) {
			c->conv_cancel = 1;
			cl_send_convert(eng, req, out, mode);
		}
		return 0;
	}
	if (req->mode != RDLM_MODE_SH || mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	c->converting = 1;
	c->conv_flags = flags;
	c->conv_start = out->now;
	cl_send_convert(eng, req, out, mode);
	return 0;
}

static void cl_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct rdlm_req *req = cqe->req;
	struct cl_home *h = eng->priv;
	struct cl_req *c;

	if (!req) {
		/* home side: a GRANT that may not have arrived */
		u32 idx = (u32)cqe->cookie;

		if (cqe->status && (cqe->cookie & CL_CK_GRANT) &&
		    idx < eng->p.home_entries &&
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

static u32 *cl_bucket(struct cl_home *h, u32 slot)
{
	/* the lock manager's words are hashes already; the tests' are not */
	return &h->buckets[(slot ^ (slot >> 13) ^ (slot >> 26)) &
			   h->bucket_mask];
}

/* The queue of @slot, or NULL if nothing waits for it or holds it here. */
static struct cl_slot *cl_queue(struct cl_home *h, u32 slot)
{
	u32 i;

	for (i = *cl_bucket(h, slot); i != CL_NONE; i = h->slots[i].next)
		if (h->slots[i].slot == slot)
			return &h->slots[i];
	return NULL;
}

/* The first entry of @slot's queue, CL_NONE if it has none. */
static u32 cl_head(struct cl_home *h, u32 slot)
{
	struct cl_slot *q = cl_queue(h, slot);

	return q ? q->head : CL_NONE;
}

/* @slot's queue; a new one if it has none (a free entry means a free one) */
static struct cl_slot *cl_queue_get(struct cl_home *h, u32 slot)
{
	struct cl_slot *q = cl_queue(h, slot);
	u32 *b = cl_bucket(h, slot);
	u32 i;

	if (q || h->free_slots == CL_NONE)
		return q;
	i = h->free_slots;
	q = &h->slots[i];
	h->free_slots = q->next;
	q->slot = slot;
	q->head = CL_NONE;
	q->tail = CL_NONE;
	q->next = *b;
	*b = i;
	return q;
}

/* An emptied queue goes back to the free list. */
static void cl_queue_put(struct cl_home *h, struct cl_slot *q)
{
	u32 idx = q - h->slots, *i = cl_bucket(h, q->slot);

	if (q->head != CL_NONE)
		return;
	while (*i != idx)
		i = &h->slots[*i].next;
	*i = q->next;
	q->next = h->free_slots;
	h->free_slots = idx;
}

static bool cl_compatible(u8 a, u8 b)
{
	return a == RDLM_MODE_SH && b == RDLM_MODE_SH;
}

static void cl_arm_sweep(struct rdlm_engine *eng, struct cl_home *h,
			 u64 expire, struct rdlm_out *out)
{
	if (eng->p.no_lease || (h->sweep_at && h->sweep_at <= expire))
		return;
	h->sweep_at = expire;
	h->sweep_cookie++;
	rdlm_engine_emit(eng, out, RDLM_ACT_TIMER, NULL,
			 (s64)(expire > out->now ? expire - out->now : 0),
			 h->sweep_cookie);
}

static void cl_grant(struct rdlm_engine *eng, struct cl_home *h, u32 slot,
		     u32 idx, struct rdlm_out *out)
{
	struct cl_entry *e = &h->ents[idx];

	e->granted = 1;
	e->notified = 0;
	e->expire = eng->p.no_lease ? U64_MAX : out->now + 2 * eng->p.lease_ns;
	cl_send_grant(eng, out, h, slot, idx);
	cl_arm_sweep(eng, h, e->expire, out);
}

/*
 * A waiting conversion goes first: granted once its holder is the only
 * one, and nothing new is granted while it waits. Then the FIFO prefix
 * that is compatible with the current holders.
 */
static void cl_grant_waiters(struct rdlm_engine *eng, struct cl_home *h,
			     u32 slot, struct rdlm_out *out)
{
	u32 i, conv = CL_NONE, nr_sh = 0, nr_ex = 0;
	struct cl_entry *e;

	for (i = cl_head(h, slot); i != CL_NONE; i = e->next) {
		e = &h->ents[i];
		if (!e->granted)
			break;
		if (e->converting && conv == CL_NONE)
			conv = i;
		nr_sh++;
	}
	if (conv != CL_NONE) {
		if (nr_sh > 1)
			return;
		e = &h->ents[conv];
		e->converting = 0;
		e->mode = RDLM_MODE_EX;
		cl_grant(eng, h, slot, conv, out);
		return;
	}
	nr_sh = 0;
	for (i = cl_head(h, slot); i != CL_NONE; i = e->next) {
		e = &h->ents[i];
		if (!e->granted) {
			if (nr_ex || (e->mode == RDLM_MODE_EX && nr_sh))
				break;
			cl_grant(eng, h, slot, i, out);
		}
		if (e->mode == RDLM_MODE_EX)
			nr_ex++;
		else
			nr_sh++;
	}
}

/*
 * Tell each holder, once per grant, that it blocks someone: a conversion
 * of another holder, or the first request that waits.
 */
static void cl_tell_holders(struct rdlm_engine *eng, struct cl_home *h,
			    u32 slot, struct rdlm_out *out)
{
	u32 i, nr_conv = 0, first = cl_head(h, slot);
	struct cl_entry *o, *w = NULL;
	bool blocks;

	for (; first != CL_NONE && h->ents[first].granted;
	     first = h->ents[first].next)
		nr_conv += h->ents[first].converting;
	if (first != CL_NONE)
		w = &h->ents[first];
	if (!nr_conv && !w)
		return;
	for (i = cl_head(h, slot); i != first; i = o->next) {
		o = &h->ents[i];
		blocks = nr_conv > o->converting ||
			 (w && !cl_compatible(o->mode, w->mode));
		if (!blocks || o->notified)
			continue;
		o->notified = 1;
		cl_send(eng, out, NULL, o->src, RDLM_MSG_BLOCKING, slot,
			o->mode, o->reqid, o->token);
	}
}

static void cl_grant_pass(struct rdlm_engine *eng, struct cl_home *h, u32 slot,
			  struct rdlm_out *out)
{
	cl_grant_waiters(eng, h, slot, out);
	cl_tell_holders(eng, h, slot, out);
}

static void cl_remove(struct cl_home *h, u32 slot, u32 idx, u32 prev)
{
	struct cl_slot *s = cl_queue(h, slot);
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
	cl_queue_put(h, s);
}

static void cl_home_lock(struct rdlm_engine *eng, struct cl_home *h,
			 const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct cl_slot *s;
	struct cl_entry *e;
	u32 idx, i;

	if (h->free == CL_NONE || (m->mode != RDLM_MODE_SH &&
				   m->mode != RDLM_MODE_EX)) {
		rdlm_stat_inc(&eng->stats.busy);
		cl_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
		return;
	}
	s = cl_queue_get(h, m->slot);
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
	cl_grant_waiters(eng, h, m->slot, out);
	if (!e->granted && (m->flags & CL_MF_NOQUEUE)) {
		/* a trylock that would wait: take it out, answer busy */
		u32 prev = CL_NONE;

		for (i = s->head; i != idx; i = h->ents[i].next) {
			struct cl_entry *o = &h->ents[i];

			prev = i;
			/* its holders hear of it: one may only keep it */
			if (o->granted && !cl_compatible(o->mode, e->mode))
				cl_send(eng, out, NULL, o->src, CL_MSG_TRIED,
					m->slot, o->mode, o->reqid, o->token);
		}
		cl_remove(h, m->slot, idx, prev);
		cl_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
	}
	cl_tell_holders(eng, h, m->slot, out);
}

static void cl_send_unconverted(struct rdlm_engine *eng, struct rdlm_out *out,
				u32 node, const struct rdlm_msg *m, int err)
{
	struct rdlm_msg r = {
		.type = CL_MSG_UNCONVERTED,
		.mode = m->mode,
		.slot = m->slot,
		.reqid = m->reqid,
		.token = m->token,
		.arg = (u64)(s64)err,
	};

	cl_send_msg(eng, out, NULL, node, &r);
}

/* The granted entry of @token from @src on @slot, or NULL. */
static struct cl_entry *cl_find_held(struct cl_home *h, u32 slot, u32 src,
				     u64 token)
{
	u32 i;

	for (i = cl_head(h, slot); i != CL_NONE; i = h->ents[i].next) {
		struct cl_entry *e = &h->ents[i];

		if (!e->granted)
			break;
		if (e->token == token && e->src == src)
			return e;
	}
	return NULL;
}

static void cl_home_convert(struct rdlm_engine *eng, struct cl_home *h,
			    const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct cl_entry *e = cl_find_held(h, m->slot, rx->src, m->token);
	int err = -ENOLCK;
	u32 i;

	if (!e)
		goto refuse;	/* expired, or unlocked meanwhile */
	if (m->flags & CL_MF_CANCEL) {
		/* too late when it is exclusive already: GRANT is on its way */
		if (!e->converting)
			return;
		e->converting = 0;
		err = -ECANCELED;
		goto refuse_pass;
	}
	if (m->mode != RDLM_MODE_EX) {
		/* down to shared: those who wait for that may come in */
		if (e->mode == RDLM_MODE_EX && !e->converting) {
			e->mode = RDLM_MODE_SH;
			cl_grant_pass(eng, h, m->slot, out);
		}
		return;
	}
	if (e->mode == RDLM_MODE_EX) {
		cl_send_grant(eng, out, h, m->slot, e - h->ents); /* asked again */
		return;
	}
	if (e->converting)
		return;
	err = -EDEADLK;
	for (i = cl_head(h, m->slot); i != CL_NONE && h->ents[i].granted;
	     i = h->ents[i].next)
		if (h->ents[i].converting && !(m->flags & CL_MF_NODLCKWT))
			goto refuse;
	e->converting = 1;
	cl_grant_waiters(eng, h, m->slot, out);
	if (e->converting && (m->flags & CL_MF_NOQUEUE)) {
		e->converting = 0;
		err = -EAGAIN;
		goto refuse;
	}
	cl_tell_holders(eng, h, m->slot, out);
	return;
refuse_pass:
	cl_grant_pass(eng, h, m->slot, out);
refuse:
	cl_send_unconverted(eng, out, rx->src, m, err);
}

static void cl_home_unlock(struct rdlm_engine *eng, struct cl_home *h,
			   const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	u32 i, prev = CL_NONE;

	for (i = cl_head(h, m->slot); i != CL_NONE; i = h->ents[i].next) {
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
	u32 q, slot, i, prev, nxt;
	bool changed;

	h->sweep_at = 0;
	for (q = 0; q < eng->p.home_entries; q++) {
		if (h->slots[q].head == CL_NONE)
			continue;
		slot = h->slots[q].slot;
		changed = false;
		prev = CL_NONE;
		for (i = cl_head(h, slot); i != CL_NONE; i = nxt) {
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
		for (i = cl_head(h, slot); i != CL_NONE; i = h->ents[i].next) {
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
		if (c->converting && m->mode == RDLM_MODE_EX) {
			/* converted: the home renewed the hold's lease too */
			c->converting = 0;
			c->conv_cancel = 0;
			req->mode = RDLM_MODE_EX;
			c->lease_end = cl_lease_end(eng, c->conv_start);
			rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req,
					 (s64)c->lease_end, req->mode);
			if (c->lease_end)
				rdlm_engine_arm(eng, out, req,
						c->lease_end - out->now);
			return;
		}
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
	c->lease_end = cl_lease_end(eng, c->lease_start);
	if (c->lease_end && c->lease_end <= out->now) {
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
	if (c->lease_end)
		rdlm_engine_arm(eng, out, req, c->lease_end - out->now);
}

static void cl_on_unconverted(struct rdlm_engine *eng,
			      const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_req *req = rdlm_req_lookup(eng, m->reqid);
	int err = (int)(s64)m->arg;

	if (!req || cl(req)->phase != CL_HELD || !cl(req)->converting ||
	    cl(req)->token != m->token) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	/* an answer to the cancel, or to the conversion */
	if (err != -EDEADLK && err != -EAGAIN && err != -ECANCELED)
		err = -ENOLCK;
	cl_unconverted(eng, req, err, out);
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
	case CL_MSG_CONVERT:
		if (m->slot > RDLM_ANY_SLOT_MAX)
			return;
		rdlm_spin_lock(&eng->lock, flags);
		if (m->type == RDLM_MSG_LOCK)
			cl_home_lock(eng, h, rx, out);
		else if (m->type == RDLM_MSG_UNLOCK)
			cl_home_unlock(eng, h, rx, out);
		else
			cl_home_convert(eng, h, rx, out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case CL_MSG_UNCONVERTED:
		cl_on_unconverted(eng, rx, out);
		break;
	case RDLM_MSG_GRANT:
		cl_on_grant(eng, rx, out);
		break;
	case RDLM_MSG_BLOCKING:
	case CL_MSG_TRIED:
		req = rdlm_req_lookup(eng, m->reqid);
		if (req && cl(req)->phase == CL_HELD &&
		    cl(req)->token == m->token)
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 m->type == RDLM_MSG_BLOCKING ?
					 RDLM_NOTICE_BLOCKING :
					 RDLM_NOTICE_TRIED, 0);
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
		if (c->converting)
			cl_unconverted(eng, req, -ENOLCK, out);
		c->lost = 1;
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_LOST, 0);
	} else if (c->phase == CL_BACKOFF) {
		cl_send_lock(eng, req, out);
	}
}

/*
 * Fail our requests waiting at @node; with @held, our holds there are
 * lost, else our conversions waiting there ask again.
 */
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
			if (c->converting)
				cl_unconverted(eng, req, -ENOLCK, out);
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		} else if (c->phase == CL_HELD && c->converting) {
			/* its answer may be lost: asking again is harmless */
			cl_send_convert(eng, req, out, RDLM_MODE_EX);
			if (c->conv_cancel)
				cl_send_convert(eng, req, out, RDLM_MODE_SH);
		} else if (c->phase == CL_HELD && req->mode == RDLM_MODE_SH) {
			/* a down-conversion may be lost: the home ignores a repeat */
			cl_send_convert(eng, req, out, RDLM_MODE_SH);
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
	u32 q, slot, i, prev, nxt;
	bool changed;

	rdlm_spin_lock(&eng->lock, flags);
	for (q = 0; q < eng->p.home_entries; q++) {
		if (h->slots[q].head == CL_NONE)
			continue;
		slot = h->slots[q].slot;
		changed = false;
		prev = CL_NONE;
		for (i = cl_head(h, slot); i != CL_NONE; i = nxt) {
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
	u32 q, slot, i;

	cl_fail_at(eng, node, false, out);
	rdlm_spin_lock(&eng->lock, flags);
	for (q = 0; q < eng->p.home_entries; q++)
		for (i = h->slots[q].head, slot = h->slots[q].slot; i != CL_NONE;
		     i = h->ents[i].next)
			if (h->ents[i].src == node && h->ents[i].grant_lost)
				cl_send_grant(eng, out, h, slot, i);
	rdlm_spin_unlock(&eng->lock, flags);
}

const struct rdlm_engine_ops rdlm_central_ops = {
	.name = "central",
	.many_per_word = true,
	.any_slot = true,
	.init = cl_init,
	.fini = cl_fini,
	.lock = cl_lock,
	.unlock = cl_unlock,
	.convert = cl_convert,
	.complete = cl_complete,
	.timer = cl_timer,
	.recv = cl_recv,
	.member_down = cl_member_down,
	.member_up = cl_member_up,
};
