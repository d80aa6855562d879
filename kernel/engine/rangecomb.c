// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm rangecomb engine: range locks granted by a server-side combiner
 * ("Range locks with server-side combination", sections 4.3.1 - 4.3.3,
 * the variant whose clients learn of their grant by RPC).
 *
 * A requester SENDs LOCK (range, mode, request id) to the resource's home
 * and waits for GRANT; it SENDs UNLOCK (no reply) to release.  The home's
 * CPU is the combiner: it applies LOCK and UNLOCK in the order they arrive
 * to one table of held and waiting ranges per resource (slot), kept in
 * arrival order.  A new range counts its blockers, the entries before it
 * that overlap it incompatibly, held or still waiting (readers do not
 * block readers), and is granted when the count is zero.  Removing an
 * entry (UNLOCK, expired lease, cancel, dead requester) decrements the
 * count of every later entry it blocked, granting those that reach zero.
 * Since waiting entries block later overlapping ones too, requests on
 * overlapping ranges are granted in arrival order (FIFO among them, no
 * starvation); requests on disjoint ranges, or readers among readers, do
 * not wait for each other.  Counting only earlier entries makes the
 * waits-for relation acyclic: no deadlock.
 *
 * The table is a preallocated array of entries, linked per resource in
 * arrival order (for sweeps and lookups by token) and indexed per
 * resource by their ranges (&struct rdlm_itree: the kernel's interval
 * tree in the kernel, as the paper's red-black tree), so that counting,
 * decrementing and blocking notices visit only overlapping entries. The
 * grant token, increasing at the home, tells which of two came first.
 *
 * The grant is a SEND, as central's: it names the request and carries the
 * grant token that UNLOCK echoes, it needs no mailbox area, and a lost one
 * is recognised by its completion and sent again.  A WRITE_WITH_IMM notice
 * would save the receiver's message parsing only; the paper's variant that
 * made clients poll remote memory instead was the slower one under
 * contention.
 *
 * Leases, busy answers, trylock (RDLM_RF_NOQUEUE), link failures and dead
 * members are handled as in the central engine (central.c): the home
 * forgets a holder two leases after granting it, the holder gives up one
 * lease after asking; a full table answers BUSY and the requester backs
 * off; a waiter at a home whose connection failed is failed (a grant still
 * arriving is handed back).  A dead requester's waiting entries are removed
 * at once; its held entries expire with their lease.  A pending request is
 * cancelled with a CANCEL message: the home removes the entry if it is
 * still waiting and answers CANCELED; if it was granted meanwhile, the
 * requester hands the grant back.
 */
#include "engine.h"

enum rc_phase {
	RC_IDLE = 0,
	RC_WAIT,	/* LOCK sent, waiting for GRANT */
	RC_BACKOFF,	/* home was full, LOCK to be sent again */
	RC_HELD,
	RC_FINISH,	/* DONE once all SENDs completed */
};

/* engine-private messages */
#define RC_MSG_CANCEL	(RDLM_MSG_ENGINE + 0)	/* requester -> home */
#define RC_MSG_CANCELED	(RDLM_MSG_ENGINE + 1)	/* home -> requester */

/* LOCK message flag: answer BUSY instead of queueing (trylock) */
#define RC_MF_NOQUEUE	0x01

struct rc_req {
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

static_assert(sizeof(struct rc_req) <= sizeof(((struct rdlm_req *)0)->priv));

struct rc_entry {
	u32 next;
	u32 src;
	u32 slot;
	u32 blockers;	/* earlier entries overlapping it incompatibly */
	u64 reqid;
	u64 token;	/* also the arrival order: increasing */
	struct rdlm_itree_node it;	/* the range: it.start, it.last */
	u64 expire;
	u8 mode;
	u8 granted;
	u8 notified;
	u8 used;
	u8 grant_lost;	/* its GRANT's connection failed: sent again */
};

struct rc_res {
	u32 head;
	u32 tail;
	struct rdlm_itree ranges;
};

struct rc_home {
	struct rc_res *res;
	struct rc_entry *ents;
	u32 free;
	u64 token;
	u64 sweep_at;		/* time the sweep timer is armed for, 0 = none */
	u64 sweep_cookie;
};

#define RC_NONE		U32_MAX
#define RC_CK_GRANT	BIT_ULL(63)

static struct rc_entry *rc_entry_of(struct rdlm_itree_node *n)
{
	return n ? (struct rc_entry *)((char *)n - offsetof(struct rc_entry, it))
		 : NULL;
}

/* The entries of @r overlapping the range of @e (@e too, if indexed). */
static struct rc_entry *rc_overlap_first(struct rc_res *r,
					 const struct rc_entry *e)
{
	return rc_entry_of(rdlm_itree_first(&r->ranges, e->it.start,
					    e->it.last));
}

static struct rc_entry *rc_overlap_next(struct rc_entry *o,
					const struct rc_entry *e)
{
	return rc_entry_of(rdlm_itree_next(&o->it, e->it.start, e->it.last));
}

static struct rc_req *rc(struct rdlm_req *req)
{
	return (struct rc_req *)req->priv;
}

static int rc_init(struct rdlm_engine *eng)
{
	struct rc_home *h;
	u32 i, n = eng->p.home_entries;

	if (!n)
		n = eng->p.nr_reqs * eng->p.nr_nodes;
	eng->p.home_entries = n;
	h = rdlm_zalloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->res = rdlm_zalloc(sizeof(*h->res) * eng->p.nr_slots);
	h->ents = rdlm_zalloc(sizeof(*h->ents) * n);
	if (!h->res || !h->ents) {
		rdlm_free(h->res);
		rdlm_free(h->ents);
		rdlm_free(h);
		return -ENOMEM;
	}
	for (i = 0; i < eng->p.nr_slots; i++) {
		h->res[i].head = RC_NONE;
		h->res[i].tail = RC_NONE;
		rdlm_itree_init(&h->res[i].ranges);
	}
	for (i = 0; i < n; i++)
		h->ents[i].next = i + 1 < n ? i + 1 : RC_NONE;
	h->free = 0;
	eng->priv = h;
	return 0;
}

static void rc_fini(struct rdlm_engine *eng)
{
	struct rc_home *h = eng->priv;

	if (!h)
		return;
	rdlm_free(h->res);
	rdlm_free(h->ents);
	rdlm_free(h);
	eng->priv = NULL;
}

static void rc_send(struct rdlm_engine *eng, struct rdlm_out *out,
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
	if (type == RDLM_MSG_BUSY || type == RC_MSG_CANCELED)
		v.flags = RDLM_VF_DEQUEUE;	/* not (or no longer) queued */
	if (type == RDLM_MSG_LOCK && req) {
		v.flags = RDLM_VF_ENQUEUE;
		v.msg.token = req->start;
		v.msg.arg = req->end;
		if (req->flags & RDLM_RF_NOQUEUE)
			v.msg.flags = RC_MF_NOQUEUE;
	}
	if (req)
		rc(req)->outstanding++;
	rdlm_engine_post(eng, out, &v);
}

static void rc_maybe_done(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out)
{
	struct rc_req *c = rc(req);

	if (c->phase == RC_FINISH && !c->outstanding) {
		c->phase = RC_IDLE;
		rdlm_engine_emit(eng, out, RDLM_ACT_DONE, req, 0, 0);
	}
}

static void rc_finish(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out, int err)
{
	if (rc(req)->cancel)
		err = -ECANCELED;	/* whatever else ended it */
	rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, err, 0);
	rc(req)->phase = RC_FINISH;
	req->timer_cookie++;	/* disarm */
	rc_maybe_done(eng, req, out);
}

static void rc_send_lock(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct rc_req *c = rc(req);

	c->phase = RC_WAIT;
	c->lease_start = out->now;
	rc_send(eng, out, req, req->node, RDLM_MSG_LOCK, req->slot, req->mode,
		rdlm_req_id(req), 0);
}

static int rc_lock(struct rdlm_engine *eng, struct rdlm_req *req,
		   struct rdlm_out *out)
{
	struct rc_req *c = rc(req);

	if (req->mode != RDLM_MODE_SH && req->mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	if (req->node >= eng->p.nr_nodes || req->slot >= eng->p.nr_slots ||
	    req->start > req->end)
		return -EINVAL;
	if (c->phase != RC_IDLE)
		return -EBUSY;
	memset(c, 0, sizeof(*c));
	rc_send_lock(eng, req, out);
	return 0;
}

static int rc_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct rc_req *c = rc(req);

	switch (c->phase) {
	case RC_WAIT:
		if (!c->cancel) {
			c->cancel = 1;
			rc_send(eng, out, req, req->node, RC_MSG_CANCEL,
				req->slot, req->mode, rdlm_req_id(req), 0);
		}
		return 0;
	case RC_BACKOFF:
		rc_finish(eng, req, out, -ECANCELED);
		return 0;
	case RC_HELD:
		if (!c->lost && out->now >= c->lease_end) {
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		}
		/* even when lost: the token makes a late UNLOCK harmless */
		c->phase = RC_FINISH;
		req->timer_cookie++;
		rc_send(eng, out, req, req->node, RDLM_MSG_UNLOCK, req->slot,
			req->mode, rdlm_req_id(req), c->token);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- home side: the combiner ---- */

/* for entries found overlapping: do their modes conflict? */
static bool rc_modes_conflict(const struct rc_entry *a, const struct rc_entry *b)
{
	return a->mode == RDLM_MODE_EX || b->mode == RDLM_MODE_EX;
}

static void rc_arm_sweep(struct rdlm_engine *eng, struct rc_home *h,
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

static void rc_send_grant(struct rdlm_engine *eng, struct rdlm_out *out,
			  struct rc_home *h, u32 idx)
{
	struct rc_entry *e = &h->ents[idx];
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = e->src;
	v.slot = e->slot;
	v.cookie = RC_CK_GRANT | (e->token & 0x7fffffffULL) << 32 | idx;
	v.msg.type = RDLM_MSG_GRANT;
	v.msg.mode = e->mode;
	v.msg.slot = e->slot;
	v.msg.reqid = e->reqid;
	v.msg.token = e->token;
	e->grant_lost = 0;
	rdlm_engine_post(eng, out, &v);
}

static void rc_grant(struct rdlm_engine *eng, struct rc_home *h, u32 idx,
		     struct rdlm_out *out)
{
	struct rc_entry *e = &h->ents[idx];

	e->granted = 1;
	e->expire = out->now + 2 * eng->p.lease_ns;
	rc_send_grant(eng, out, h, idx);
	rc_arm_sweep(eng, h, e->expire, out);
}

/*
 * Take entry @idx out of its resource's list, unblocking the later entries
 * it blocked (DecrementBlockingRanges) and granting those now free.
 */
static void rc_remove(struct rdlm_engine *eng, struct rc_home *h, u32 idx,
		      struct rdlm_out *out)
{
	struct rc_entry *x = &h->ents[idx], *y;
	struct rc_res *r = &h->res[x->slot];
	u32 i, prev = RC_NONE;

	for (i = r->head; i != RC_NONE && i != idx; i = h->ents[i].next)
		prev = i;
	if (i != idx)
		return;
	if (prev == RC_NONE)
		r->head = x->next;
	else
		h->ents[prev].next = x->next;
	if (r->tail == idx)
		r->tail = prev;
	rdlm_itree_remove(&r->ranges, &x->it);
	/* the later entries it blocked */
	for (y = rc_overlap_first(r, x); y; y = rc_overlap_next(y, x)) {
		if (y->token < x->token || !rc_modes_conflict(x, y) ||
		    !y->blockers)
			continue;
		if (!--y->blockers && !y->granted)
			rc_grant(eng, h, y - h->ents, out);
	}
	memset(x, 0, sizeof(*x));
	x->next = h->free;
	h->free = idx;
}

static void rc_home_lock(struct rdlm_engine *eng, struct rc_home *h,
			 const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rc_res *r = &h->res[m->slot];
	struct rc_entry *e, *o;
	u32 idx;

	if (h->free == RC_NONE || m->token > m->arg ||
	    (m->mode != RDLM_MODE_SH && m->mode != RDLM_MODE_EX)) {
		rdlm_stat_inc(&eng->stats.busy);
		rc_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
		return;
	}
	idx = h->free;
	e = &h->ents[idx];
	h->free = e->next;
	memset(e, 0, sizeof(*e));
	e->next = RC_NONE;
	e->used = 1;
	e->src = rx->src;
	e->slot = m->slot;
	e->reqid = m->reqid;
	e->mode = m->mode;
	e->it.start = m->token;
	e->it.last = m->arg;
	e->token = ++h->token;
	/* CountBlockingRanges: every entry before it, held or waiting */
	for (o = rc_overlap_first(r, e); o; o = rc_overlap_next(o, e))
		if (rc_modes_conflict(o, e))
			e->blockers++;
	rdlm_itree_insert(&r->ranges, &e->it);
	if (r->tail == RC_NONE)
		r->head = idx;
	else
		h->ents[r->tail].next = idx;
	r->tail = idx;
	if (!e->blockers) {
		rc_grant(eng, h, idx, out);
		return;
	}
	if (m->flags & RC_MF_NOQUEUE) {
		/* a trylock that would wait: it blocks nobody yet */
		rc_remove(eng, h, idx, out);
		rc_send(eng, out, NULL, rx->src, RDLM_MSG_BUSY, m->slot,
			m->mode, m->reqid, 0);
		return;
	}
	/* tell the holders in its way, once per grant, that someone waits */
	for (o = rc_overlap_first(r, e); o; o = rc_overlap_next(o, e)) {
		if (o == e || !o->granted || o->notified ||
		    !rc_modes_conflict(o, e))
			continue;
		o->notified = 1;
		rc_send(eng, out, NULL, o->src, RDLM_MSG_BLOCKING, m->slot,
			o->mode, o->reqid, o->token);
	}
}

static void rc_home_unlock(struct rdlm_engine *eng, struct rc_home *h,
			   const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	u32 i;

	for (i = h->res[m->slot].head; i != RC_NONE; i = h->ents[i].next) {
		struct rc_entry *e = &h->ents[i];

		if (e->granted && e->token == m->token && e->src == rx->src) {
			rc_remove(eng, h, i, out);
			return;
		}
	}
	rdlm_stat_inc(&eng->stats.stale);	/* expired already */
}

static void rc_home_cancel(struct rdlm_engine *eng, struct rc_home *h,
			   const struct rdlm_rx *rx, struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	u32 i;

	for (i = h->res[m->slot].head; i != RC_NONE; i = h->ents[i].next) {
		struct rc_entry *e = &h->ents[i];

		if (e->reqid != m->reqid || e->src != rx->src)
			continue;
		if (e->granted)
			return;	/* its GRANT is on the way: handed back */
		rc_remove(eng, h, i, out);
		break;
	}
	rc_send(eng, out, NULL, rx->src, RC_MSG_CANCELED, m->slot, m->mode,
		m->reqid, 0);
}

static void rc_home_sweep(struct rdlm_engine *eng, struct rc_home *h,
			  struct rdlm_out *out)
{
	u64 next = 0;
	u32 slot, i, nxt;

	h->sweep_at = 0;
	for (slot = 0; slot < eng->p.nr_slots; slot++) {
		for (i = h->res[slot].head; i != RC_NONE; i = nxt) {
			struct rc_entry *e = &h->ents[i];

			nxt = e->next;
			if (e->granted && e->expire <= out->now)
				rc_remove(eng, h, i, out);
		}
		for (i = h->res[slot].head; i != RC_NONE; i = h->ents[i].next) {
			struct rc_entry *e = &h->ents[i];

			if (e->granted && (!next || e->expire < next))
				next = e->expire;
		}
	}
	if (next)
		rc_arm_sweep(eng, h, next, out);
}

/* ---- requester side of incoming messages ---- */

static void rc_on_grant(struct rdlm_engine *eng, const struct rdlm_rx *rx,
			struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_req *req = rdlm_req_lookup(eng, m->reqid);
	struct rc_req *c = req ? rc(req) : NULL;

	if (c && c->phase == RC_HELD && c->token == m->token) {
		/* sent again after a link failure, and had arrived: ours */
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	if (!c || c->phase != RC_WAIT || c->cancel) {
		/* nobody wants it (any more): hand it straight back */
		rdlm_stat_inc(&eng->stats.stale);
		rc_send(eng, out, NULL, rx->src, RDLM_MSG_UNLOCK, m->slot,
			m->mode, m->reqid, m->token);
		if (c && c->phase == RC_WAIT)
			rc_finish(eng, req, out, -ECANCELED);
		return;
	}
	c->token = m->token;
	c->phase = RC_HELD;
	c->lease_end = c->lease_start + eng->p.lease_ns;
	if (c->lease_end <= out->now) {
		/* the grant came too late to be trusted: give it back */
		rc_send(eng, out, req, rx->src, RDLM_MSG_UNLOCK, m->slot,
			m->mode, m->reqid, m->token);
		rc_finish(eng, req, out, -ETIMEDOUT);
		return;
	}
	rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)c->lease_end,
			 req->mode);
	rdlm_engine_arm(eng, out, req, c->lease_end - out->now);
}

static void rc_recv(struct rdlm_engine *eng, const struct rdlm_rx *rx,
		    struct rdlm_out *out)
{
	struct rc_home *h = eng->priv;
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_req *req;
	unsigned long flags = 0;

	if (rx->kind != RDLM_VERB_SEND)
		return;
	switch (m->type) {
	case RDLM_MSG_LOCK:
	case RDLM_MSG_UNLOCK:
	case RC_MSG_CANCEL:
		if (m->slot >= eng->p.nr_slots)
			return;
		rdlm_spin_lock(&eng->lock, flags);
		if (m->type == RDLM_MSG_LOCK)
			rc_home_lock(eng, h, rx, out);
		else if (m->type == RDLM_MSG_UNLOCK)
			rc_home_unlock(eng, h, rx, out);
		else
			rc_home_cancel(eng, h, rx, out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case RDLM_MSG_GRANT:
		rc_on_grant(eng, rx, out);
		break;
	case RDLM_MSG_BLOCKING:
		req = rdlm_req_lookup(eng, m->reqid);
		if (req && rc(req)->phase == RC_HELD &&
		    rc(req)->token == m->token)
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_BLOCKING, 0);
		break;
	case RDLM_MSG_BUSY:
	case RC_MSG_CANCELED:
		req = rdlm_req_lookup(eng, m->reqid);
		if (!req || rc(req)->phase != RC_WAIT)
			break;
		if (m->type == RC_MSG_CANCELED || rc(req)->cancel ||
		    (req->flags & RDLM_RF_NOQUEUE)) {
			rc_finish(eng, req, out,
				  m->type == RDLM_MSG_BUSY ? -EAGAIN : -ECANCELED);
			break;
		}
		rc(req)->phase = RC_BACKOFF;
		rdlm_engine_arm(eng, out, req,
				rdlm_engine_backoff(eng, ++rc(req)->tries));
		break;
	default:
		break;
	}
}

static void rc_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct rdlm_req *req = cqe->req;
	struct rc_home *h = eng->priv;
	unsigned long flags = 0;
	struct rc_req *c;

	if (!req) {
		/* home side: a GRANT that may not have arrived */
		u32 idx = (u32)cqe->cookie;
		u64 tok = (cqe->cookie >> 32) & 0x7fffffffULL;

		if (!cqe->status || !(cqe->cookie & RC_CK_GRANT) ||
		    idx >= eng->p.home_entries)
			return;
		rdlm_spin_lock(&eng->lock, flags);
		if (h->ents[idx].used && h->ents[idx].granted &&
		    (h->ents[idx].token & 0x7fffffffULL) == tok)
			h->ents[idx].grant_lost = 1;	/* rc_member_up() */
		rdlm_spin_unlock(&eng->lock, flags);
		return;
	}
	c = rc(req);
	if (c->outstanding)
		c->outstanding--;
	if (cqe->status && c->phase == RC_WAIT) {
		/* LOCK may or may not have arrived: a late GRANT is answered */
		rc_finish(eng, req, out, cqe->status);
		return;
	}
	rc_maybe_done(eng, req, out);
}

static void rc_timer(struct rdlm_engine *eng, struct rdlm_req *req,
		     u64 cookie, struct rdlm_out *out)
{
	struct rc_home *h = eng->priv;
	unsigned long flags = 0;
	struct rc_req *c;

	if (!req) {
		rdlm_spin_lock(&eng->lock, flags);
		if (cookie == h->sweep_cookie)
			rc_home_sweep(eng, h, out);
		rdlm_spin_unlock(&eng->lock, flags);
		return;
	}
	if (cookie != req->timer_cookie) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	c = rc(req);
	if (c->phase == RC_HELD && !c->lost) {
		c->lost = 1;
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_LOST, 0);
	} else if (c->phase == RC_BACKOFF) {
		rc_send_lock(eng, req, out);
	}
}

/* Fail our requests waiting at @node; with @held, our holds there are lost. */
static void rc_fail_at(struct rdlm_engine *eng, u32 node, bool held,
		       struct rdlm_out *out)
{
	u32 i;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct rc_req *c = rc(req);

		if (!req->busy || req->node != node)
			continue;
		if (c->phase == RC_WAIT || c->phase == RC_BACKOFF) {
			rc_finish(eng, req, out, -EIO);
		} else if (held && c->phase == RC_HELD && !c->lost) {
			c->lost = 1;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_LOST, 0);
		}
	}
}

/*
 * @node died.  As a requester: our requests at its home fail or are lost.
 * As a home: its waiting entries go now (nobody will take their grant, and
 * they block every later overlapping range); its held entries expire with
 * their lease, as the central engine's do.
 */
static void rc_member_down(struct rdlm_engine *eng, u32 node, u32 epoch,
			   struct rdlm_out *out)
{
	struct rc_home *h = eng->priv;
	unsigned long flags = 0;
	u32 slot, i;
	bool again;

	rc_fail_at(eng, node, true, out);
	rdlm_spin_lock(&eng->lock, flags);
	for (slot = 0; slot < eng->p.nr_slots; slot++) {
		do {
			again = false;
			for (i = h->res[slot].head; i != RC_NONE;
			     i = h->ents[i].next) {
				if (h->ents[i].src == node &&
				    !h->ents[i].granted) {
					rc_remove(eng, h, i, out);
					again = true;
					break;
				}
			}
		} while (again);
	}
	rdlm_spin_unlock(&eng->lock, flags);
}

/*
 * The connection to @node is back.  As a requester: a BUSY, CANCELED or
 * GRANT from that home may be lost, so our waiters there fail (a GRANT that
 * still comes is handed back).  As a home: GRANTs whose connection failed
 * under them are sent again while they are held.
 */
static void rc_member_up(struct rdlm_engine *eng, u32 node,
			 struct rdlm_out *out)
{
	struct rc_home *h = eng->priv;
	unsigned long flags = 0;
	u32 slot, i;

	rc_fail_at(eng, node, false, out);
	rdlm_spin_lock(&eng->lock, flags);
	for (slot = 0; slot < eng->p.nr_slots; slot++)
		for (i = h->res[slot].head; i != RC_NONE;
		     i = h->ents[i].next)
			if (h->ents[i].src == node && h->ents[i].grant_lost)
				rc_send_grant(eng, out, h, i);
	rdlm_spin_unlock(&eng->lock, flags);
}

static int rc_describe(struct rdlm_engine *eng, struct rdlm_req *req,
		       char *buf, size_t len)
{
	struct rc_home *h = eng->priv;
	u32 slot, i, held = 0, waiting = 0;

	if (req)
		return snprintf(buf, len, "phase %u cancel %u lost %u token %llu",
				rc(req)->phase, rc(req)->cancel, rc(req)->lost,
				(unsigned long long)rc(req)->token);
	for (slot = 0; slot < eng->p.nr_slots; slot++)
		for (i = h->res[slot].head; i != RC_NONE; i = h->ents[i].next) {
			if (h->ents[i].granted)
				held++;
			else
				waiting++;
		}
	return snprintf(buf, len, "held %u waiting %u", held, waiting);
}

const struct rdlm_engine_ops rdlm_rangecomb_ops = {
	.name = "rangecomb",
	.needs_lease = true,
	.ranges = true,
	.init = rc_init,
	.fini = rc_fini,
	.lock = rc_lock,
	.unlock = rc_unlock,
	.complete = rc_complete,
	.timer = rc_timer,
	.recv = rc_recv,
	.member_down = rc_member_down,
	.member_up = rc_member_up,
	.describe = rc_describe,
};
