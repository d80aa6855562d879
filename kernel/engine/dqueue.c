// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm distributed-queue engines: the part shared by DQNL, DQNL-SF and
 * N-CoSED.  Request bookkeeping, notices (WRITE_WITH_IMM into the
 * receiver's per-request mailbox slot, never into the lock table), and
 * epoch recovery: when the cluster declares a member dead, a member that
 * finds a dead neighbour asks the word's home to recover it; the home
 * freezes the word, fences every live member (holders are told their lock
 * is lost, waiters re-queue), and then resets the word.
 * See Documentation/queue-engines.rst.
 */
#include "dqueue.h"

/**
 * dq_init() - allocate the state shared by the queue engines
 * @eng: instance
 * @proto: engine hooks
 * @shared_pool: N-CoSED: allocate the shared-waiter pool
 *
 * Return: 0 or -errno.
 */
int dq_init(struct rdlm_engine *eng, const struct dq_proto *proto,
	    bool shared_pool)
{
	struct dq_eng *e;
	u32 i;

	if (eng->p.nr_nodes > DQ_MAX_NODES || eng->p.nr_reqs > DQ_MAX_REQS)
		return -EINVAL;
	e = rdlm_zalloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	eng->priv = e;
	e->proto = proto;
	e->rec_slot = DQ_NONE;
	e->sh_free = DQ_NONE;
	e->probe_next = eng->p.nr_slots;
	e->inc = rdlm_zalloc(eng->p.nr_reqs);
	e->dead = rdlm_zalloc(eng->p.nr_nodes);
	e->acked = rdlm_zalloc(eng->p.nr_nodes);
	e->keep_sh = rdlm_zalloc(sizeof(u32) * eng->p.nr_nodes);
	e->slots = rdlm_zalloc(sizeof(*e->slots) * eng->p.nr_slots);
	e->broken = rdlm_zalloc((eng->p.nr_nodes * eng->p.nr_slots + 7) / 8);
	e->acks = rdlm_zalloc(sizeof(*e->acks) * eng->p.nr_nodes);
	if (!e->inc || !e->dead || !e->acked || !e->keep_sh || !e->slots ||
	    !e->broken || !e->acks)
		goto nomem;
	if (shared_pool) {
		e->nr_sh = eng->p.nr_reqs * eng->p.nr_nodes;
		e->sh_next = rdlm_zalloc(sizeof(u32) * e->nr_sh);
		e->sh_id = rdlm_zalloc(sizeof(u32) * e->nr_sh);
		if (!e->sh_next || !e->sh_id)
			goto nomem;
		for (i = 0; i < e->nr_sh; i++)
			e->sh_next[i] = i + 1 < e->nr_sh ? i + 1 : DQ_NONE;
		e->sh_free = 0;
	}
	return 0;
nomem:
	dq_fini(eng);
	return -ENOMEM;
}

/**
 * dq_fini() - free what dq_init() allocated
 * @eng: instance
 */
void dq_fini(struct rdlm_engine *eng)
{
	struct dq_eng *e = eng->priv;

	if (!e)
		return;
	rdlm_free(e->inc);
	rdlm_free(e->dead);
	rdlm_free(e->acked);
	rdlm_free(e->keep_sh);
	rdlm_free(e->slots);
	rdlm_free(e->broken);
	rdlm_free(e->acks);
	rdlm_free(e->sh_next);
	rdlm_free(e->sh_id);
	rdlm_free(e);
	eng->priv = NULL;
}

/* ---- posting ---- */

/**
 * dq_atomic() - post the acquire/release atomic of a request
 * @eng: instance
 * @out: call context
 * @req: request (at most one such atomic in flight)
 * @kind: RDLM_VERB_FA or RDLM_VERB_CAS
 * @op: &enum dq_op
 * @arg0: addend or compare value
 * @arg1: swap value
 */
void dq_atomic(struct rdlm_engine *eng, struct rdlm_out *out,
	       struct rdlm_req *req, u8 kind, u8 op, u64 arg0, u64 arg1)
{
	struct dq_req *d = dq(req);
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.node = req->node;
	v.slot = req->slot;
	v.arg0 = arg0;
	v.arg1 = arg1;
	v.req = req;
	v.cookie = dq_cookie(d, op);
	if (op == DQ_OP_ENQ || op == DQ_OP_TICKET || op == DQ_OP_SHFA ||
	    op == DQ_OP_UPG)
		v.flags = RDLM_VF_ENQUEUE;
	d->ainf = 1;
	d->outstanding++;
	rdlm_engine_post(eng, out, &v);
}

/**
 * dq_home_cas() - post a home-side CAS on one of this node's own words
 * @eng: instance (the home)
 * @out: call context
 * @slot: word
 * @kind: DQ_HC_* cookie kind
 * @cmp: compare value
 * @swap: swap value
 */
void dq_home_cas(struct rdlm_engine *eng, struct rdlm_out *out, u32 slot,
		 u64 kind, u64 cmp, u64 swap)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_CAS;
	v.flags = kind == DQ_HC_RESET ? 0 : RDLM_VF_RESET;
	v.node = eng->p.node;
	v.slot = slot;
	v.arg0 = cmp;
	v.arg1 = swap;
	v.cookie = kind << 32 | slot;
	rdlm_engine_post(eng, out, &v);
}

/**
 * dq_notify() - WRITE_WITH_IMM a notice into a queue member's mailbox
 * @eng: instance
 * @out: call context
 * @req: sending request
 * @target: identity of the receiving request
 * @kind: &enum dq_notice
 * @arg: 24-bit argument
 *
 * Mailbox entry: one per (target request, sender node, notice kind), so
 * that concurrent notices from different nodes to one request (a successor,
 * shared requests) never share an entry, nor a handover and the next
 * request the same node queues behind its receiver (GRANT, then SUCC, both
 * in flight before the receiver reads the first). A second notice of one
 * kind from one node to one request needs the receiver's answer to the
 * first, so it cannot overwrite it. The immediate carries the target
 * identity so that notices for an earlier enqueue are dropped.
 */
void dq_notify(struct rdlm_engine *eng, struct rdlm_out *out,
	       struct rdlm_req *req, u32 target, u8 kind, u32 arg)
{
	struct dq_req *d = dq(req);
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_WRITE_IMM;
	v.node = dq_id_node(target);
	v.slot = (dq_id_idx(target) * eng->p.nr_nodes + eng->p.node) *
		 DQ_MBOX_KINDS + kind - 1;
	v.imm = target;
	v.arg0 = dq_note(kind, arg, d->id);
	v.req = req;
	v.cookie = dq_cookie(d, DQ_OP_NOTE) | (u64)kind << 8;
	d->outstanding++;
	rdlm_engine_post(eng, out, &v);
}

/**
 * dq_send() - SEND a queue-engine message
 * @eng: instance
 * @out: call context
 * @req: sending request, or NULL for the home side
 * @node: destination
 * @type: &enum dq_msg or RDLM_MSG_GRANT
 * @slot: lock word slot
 * @reqid: requester's rdlm_req_id()
 * @token: identity or fence sequence
 * @arg: argument
 */
void dq_send(struct rdlm_engine *eng, struct rdlm_out *out,
	     struct rdlm_req *req, u32 node, u16 type, u32 slot, u64 reqid,
	     u64 token, u64 arg)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = node;
	v.slot = slot;
	v.req = req;
	v.msg.type = type;
	v.msg.slot = slot;
	v.msg.reqid = reqid;
	v.msg.token = token;
	v.msg.arg = arg;
	if (req) {
		v.msg.mode = req->mode;
		v.cookie = dq_cookie(dq(req), DQ_OP_SEND);
		dq(req)->outstanding++;
	} else {
		v.cookie = (DQ_HC_MSG | (u64)(u8)type << 8 | (u64)node << 16) <<
			   32 | slot;
	}
	rdlm_engine_post(eng, out, &v);
}

/* a verb on @home's word @slot failed: recover the word when @home is back */
static void dq_mark_broken(struct rdlm_engine *eng, u32 home, u32 slot)
{
	u32 bit = home * eng->p.nr_slots + slot;

	if (!dqe(eng)->dead[home])
		dqe(eng)->broken[bit / 8] |= 1 << (bit % 8);
}

static bool dq_take_broken(struct rdlm_engine *eng, u32 home, u32 slot)
{
	u32 bit = home * eng->p.nr_slots + slot;
	u8 *b = &dqe(eng)->broken[bit / 8];

	if (!(*b & 1 << (bit % 8)))
		return false;
	*b &= ~(1 << (bit % 8));
	return true;
}

/* ---- request life cycle ---- */

static void dq_maybe_done(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->phase == DQ_FINISH && !d->outstanding && !d->ainf) {
		d->phase = DQ_IDLE;
		rdlm_engine_emit(eng, out, RDLM_ACT_DONE, req, 0, 0);
	}
}

/**
 * dq_finish() - the request is over: DONE once its verbs completed
 * @eng: instance
 * @req: request
 * @out: call context
 */
void dq_finish(struct rdlm_engine *eng, struct rdlm_req *req,
	       struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (dqe(eng)->proto->fence)
		dqe(eng)->proto->fence(eng, req);	/* leftover waiters */
	d->phase = DQ_FINISH;
	req->timer_cookie++;	/* disarm */
	dq_maybe_done(eng, req, out);
}

/**
 * dq_grant() - grant @req, or pass the lock on at once if it was cancelled
 * @eng: instance
 * @req: request
 * @out: call context
 */
void dq_grant(struct rdlm_engine *eng, struct rdlm_req *req,
	      struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->phase = DQ_HELD;
	d->homewait = 0;
	if (d->cancel) {
		rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, -ECANCELED, 0);
		dqe(eng)->proto->release(eng, req, out);
		return;
	}
	/* no lease: a queue lock is held until released or fenced */
	rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)U64_MAX,
			 req->mode);
	if (d->has_succ || d->nsh)
		dq_blocking(eng, req, out);
}

/**
 * dq_blocking() - tell the holder, once per grant, that someone waits
 * @eng: instance
 * @req: request
 * @out: call context
 */
void dq_blocking(struct rdlm_engine *eng, struct rdlm_req *req,
		 struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	/* a queued up-conversion tells once granted: it cannot give way */
	if (d->phase != DQ_HELD || d->blocked || d->lost ||
	    d->upg == DQ_UPG_QUEUED)
		return;
	d->blocked = 1;
	rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req, RDLM_NOTICE_BLOCKING,
			 0);
}

static void dq_begin(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_req *d = dq(req);

	d->id = dq_new_id(eng, req);
	d->pred = 0;
	d->succ = 0;
	d->succ_arg = 0;
	d->has_succ = 0;
	d->blocked = 0;
	d->homewait = 0;
	d->turnwait = 0;
	d->need = 0;
	d->nsh = 0;
	d->sh_head = DQ_NONE;
	d->restart = 0;
	d->kept = 0;
	d->relretry = 0;
	d->deaths = e->deaths;
	d->phase = DQ_ACQ;
	e->proto->start(eng, req, out);
}

/**
 * dq_rel_frozen() - did a kept hold's release meet its word still frozen?
 * @eng: instance
 * @req: request, kept through a recovery of its word not thawed yet
 * @old: the word its release (or down-conversion) CAS saw
 * @out: call context
 *
 * Then it tries again after a backoff (the timer calls ->rel_retry, or
 * ->release).
 *
 * Return: true if so; the caller has nothing else to do.
 */
bool dq_rel_frozen(struct rdlm_engine *eng, struct rdlm_req *req, u64 old,
		   struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (!d->kept || dqe(eng)->proto->tail(old) != DQ_FROZEN)
		return false;
	d->relretry = 1;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, ++d->tries));
	return true;
}

/**
 * dq_backoff() - the word is frozen: retry after a random backoff
 * @eng: instance
 * @req: request
 * @out: call context
 */
void dq_backoff(struct rdlm_engine *eng, struct rdlm_req *req,
		struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->cancel) {
		rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, -ECANCELED, 0);
		dq_finish(eng, req, out);
		return;
	}
	d->phase = DQ_BACKOFF;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, ++d->tries));
}

/**
 * dq_dead_since() - did a member die since @req began its enqueue?
 * @eng: instance
 * @req: request
 *
 * Return: true if so.
 */
bool dq_dead_since(struct rdlm_engine *eng, struct rdlm_req *req)
{
	return dq(req)->deaths != dqe(eng)->deaths;
}

/**
 * dq_recover() - ask the home of @req's word to recover it
 * @eng: instance
 * @req: request that found a dead neighbour
 * @out: call context
 */
void dq_recover(struct rdlm_engine *eng, struct rdlm_req *req,
		struct rdlm_out *out)
{
	if (dqe(eng)->dead[req->node])
		return;
	rdlm_stat_inc(&eng->stats.recovers);
	dq_send(eng, out, req, req->node, DQ_M_RECOVER, req->slot,
		rdlm_req_id(req), dq(req)->id, 0);
}

/**
 * dq_lock() - &rdlm_engine_ops.lock of the queue engines
 * @eng: instance
 * @req: request (node, slot, mode set by the caller)
 * @out: call context
 *
 * Return: 0, or -EOPNOTSUPP (update mode), -EINVAL, -EBUSY, -EIO (the
 * home was declared dead); nothing is emitted on error.
 */
int dq_lock(struct rdlm_engine *eng, struct rdlm_req *req,
	    struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (req->mode != RDLM_MODE_SH && req->mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	if (req->node >= eng->p.nr_nodes || req->slot >= eng->p.nr_slots)
		return -EINVAL;
	if (d->phase != DQ_IDLE)
		return -EBUSY;
	if (dqe(eng)->dead[req->node])
		return -EIO;
	memset(d, 0, sizeof(*d));
	dq_begin(eng, req, out);
	return 0;
}

/**
 * dq_unlock() - &rdlm_engine_ops.unlock: release, or cancel while queued
 * @eng: instance
 * @req: request
 * @out: call context
 *
 * Return: 0, or -EINVAL when @req is neither queued nor held.
 */
int dq_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
	      struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	switch (d->phase) {
	case DQ_ACQ:
	case DQ_WAIT:
		/* queued: take the lock when it comes and pass it on */
		d->cancel = 1;
		return 0;
	case DQ_BACKOFF:
		d->cancel = 1;
		dq_backoff(eng, req, out);
		return 0;
	case DQ_HELD:
		if (d->lost) {
			dq_finish(eng, req, out);
			return 0;
		}
		dqe(eng)->proto->release(eng, req, out);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- completions ---- */

/*
 * A GRANT or SHGRANT notice passes the lock on: lost, it breaks the queue
 * whatever the sender does since (an N-CoSED down-conversion sends them
 * while it holds on, and may take a new identity right after).
 */
static bool dq_note_passes(u64 cookie)
{
	u8 kind = (u8)(cookie >> 8);

	return kind == DQ_N_GRANT || kind == DQ_N_SHGRANT;
}

static void dq_home_complete(struct rdlm_engine *eng,
			     const struct rdlm_cqe *cqe, struct rdlm_out *out);

/**
 * dq_complete() - &rdlm_engine_ops.complete of the queue engines
 * @eng: instance
 * @cqe: completion (requester side, or home side when @cqe->req is NULL)
 * @out: call context
 */
void dq_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
		 struct rdlm_out *out)
{
	struct rdlm_req *req = cqe->req;
	struct dq_req *d;
	u8 op = (u8)cqe->cookie;

	if (!req) {
		dq_home_complete(eng, cqe, out);
		return;
	}
	d = dq(req);
	if (d->outstanding)
		d->outstanding--;
	if (cqe->kind == RDLM_VERB_FA || cqe->kind == RDLM_VERB_CAS) {
		d->ainf = 0;
		if (cqe->status)	/* it may have executed all the same */
			dq_mark_broken(eng, req->node, req->slot);
		if (d->phase == DQ_HELD && dqe(eng)->proto->held_atomic) {
			dqe(eng)->proto->held_atomic(eng, req, op, cqe->status,
						     cqe->value, out);
			dq_maybe_done(eng, req, out);
			return;
		}
		if (cqe->status || d->failio) {
			/* the home is gone: the lock word with it */
			if (d->phase == DQ_ACQ)
				rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req,
						 -EIO, 0);
			dq_finish(eng, req, out);
			return;
		}
		if (d->restart) {
			/* fenced while in flight: the result is void */
			d->restart = 0;
			if (d->phase == DQ_ACQ)
				dq_backoff(eng, req, out);
			else
				dq_finish(eng, req, out);
			return;
		}
		if (d->phase != DQ_FINISH)
			dqe(eng)->proto->atomic_done(eng, req, op, cqe->value,
						     out);
	} else if (cqe->status && op == DQ_OP_NOTE &&
		   (dq_note_passes(cqe->cookie) ||
		    ((u32)(cqe->cookie >> 32) == d->id &&
		     (d->phase == DQ_WAIT || d->phase == DQ_FINISH ||
		      d->phase == DQ_REL || d->phase == DQ_RELWAIT)))) {
		/*
		 * The neighbour we wrote to is gone, or our connection to it
		 * is: the queue is broken.  A release CAS may be in flight
		 * (N-CoSED posts it right after its SHGRANT notices): a lost
		 * SHGRANT leaves a shared request counted in the word that
		 * nobody will ever grant, whatever the CAS does.
		 */
		dq_recover(eng, req, out);
	} else if (cqe->status && op == DQ_OP_SEND) {
		/* every request's message goes to its word's home */
		dq_mark_broken(eng, req->node, req->slot);
	}
	dq_maybe_done(eng, req, out);
}

/**
 * dq_timer() - &rdlm_engine_ops.timer: end of a backoff on a frozen word
 * (acquiring, or releasing a hold kept through its recovery), or of a held
 * request's wait (N-CoSED's up-conversion)
 * @eng: instance
 * @req: request
 * @cookie: timer cookie
 * @out: call context
 */
void dq_timer(struct rdlm_engine *eng, struct rdlm_req *req, u64 cookie,
	      struct rdlm_out *out)
{
	if (!req)
		return;
	if (cookie != req->timer_cookie) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	if (dq(req)->phase == DQ_BACKOFF) {
		dq_begin(eng, req, out);
	} else if (dq(req)->relretry) {
		dq(req)->relretry = 0;
		if (dqe(eng)->proto->rel_retry)
			dqe(eng)->proto->rel_retry(eng, req, out);
		else if (dq(req)->phase == DQ_REL)
			dqe(eng)->proto->release(eng, req, out);
	} else if (dq(req)->phase == DQ_HELD && dqe(eng)->proto->held_timer) {
		dqe(eng)->proto->held_timer(eng, req, out);
	}
}

/* ---- recovery: home side ---- */

static void dq_rec_next(struct rdlm_engine *eng, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u32 s;

	e->rec_slot = DQ_NONE;
	for (s = 0; s < eng->p.nr_slots; s++) {
		if (e->slots[s].rec == DQ_REC_PENDING) {
			e->slots[s].rec = DQ_REC_NONE;
			dq_home_recover(eng, s, out);
			return;
		}
	}
}

/**
 * dq_home_recover() - start recovering one of this home's words
 * @eng: instance (the home)
 * @slot: word
 * @out: call context
 *
 * One word at a time: freeze it (its tail becomes DQ_FROZEN, so nobody
 * queues behind the broken queue), fence every live member, reset it.
 */
void dq_home_recover(struct rdlm_engine *eng, u32 slot, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_slot *s = &e->slots[slot];

	if (s->rec == DQ_REC_THAW) {
		/*
		 * The thaw may have executed already: requests that queued
		 * after it were not fenced, and whatever broke their queue
		 * needs a recovery of its own once this one is over.
		 */
		s->rec_again = 1;
		return;
	}
	if (s->rec != DQ_REC_NONE)
		return;
	if (e->rec_slot != DQ_NONE) {
		s->rec = DQ_REC_PENDING;
		return;
	}
	e->rec_slot = slot;
	s->rec = DQ_REC_FREEZE;
	s->word = 0;
	dq_home_cas(eng, out, slot, DQ_HC_FREEZE, 0, e->proto->frozen(0));
}

static void dq_rec_thaw(struct rdlm_engine *eng, u32 slot,
			struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_slot *s = &e->slots[slot];
	u32 n, shared = 0;

	if (s->rec == DQ_REC_FENCE) {
		/*
		 * Every live member has dropped its claims and everything it
		 * sent before (same QP) has arrived: forget the old counts.
		 * Messages from here on come from requests that enqueue after
		 * the thaw, possibly before its completion reaches us, and
		 * from the holds kept, which the thawed word counts.
		 */
		s->rel = 0;
		s->ex_pending = 0;
		s->group_deaths = e->deaths;
		s->sh_holders = 0;
	}
	/* holders that kept their locks, unless they died since their ACK */
	if (s->keep && (dq_id_node(s->keep) >= eng->p.nr_nodes ||
			e->dead[dq_id_node(s->keep)]))
		s->keep = 0;
	for (n = 0; n < eng->p.nr_nodes; n++) {
		if (e->dead[n] || !e->keep_sh[n])
			continue;
		shared += e->keep_sh[n];
		if (n < 64)
			s->sh_holders |= BIT_ULL(n);
	}
	s->rec = DQ_REC_THAW;
	dq_home_cas(eng, out, slot, DQ_HC_THAW, s->word, s->keep || shared ?
		    e->proto->thawed_held(s->word, s->keep, shared) :
		    e->proto->thawed(s->word));
}

static void dq_rec_fence(struct rdlm_engine *eng, u32 slot,
			 struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u32 n;

	e->slots[slot].rec = DQ_REC_FENCE;
	e->slots[slot].keep = 0;
	memset(e->keep_sh, 0, sizeof(u32) * eng->p.nr_nodes);
	rdlm_stat_inc(&eng->stats.fences);
	e->rec_seq++;
	e->rec_wait = 0;
	/*
	 * We fence ourselves through our loopback connection too: a shared
	 * release or EXWAIT our own requests sent the home before the fence
	 * may still be on its way there, and only the ACK behind it on the
	 * same connection says it has arrived (is void), not counted after
	 * the thaw as a release of a request that enqueued after it.
	 */
	for (n = 0; n < eng->p.nr_nodes; n++) {
		e->acked[n] = 1;
		if (e->dead[n])
			continue;
		e->acked[n] = 0;
		e->rec_wait++;
		dq_send(eng, out, NULL, n, DQ_M_FENCE, slot, 0, e->rec_seq, 0);
	}
	if (!e->rec_wait)
		dq_rec_thaw(eng, slot, out);
}

/* a message sent without a request was lost (its connection failed) */
static void dq_msg_lost(struct rdlm_engine *eng, u64 cookie, u32 slot,
			struct rdlm_out *out)
{
	u32 type = (cookie >> 40) & 0xff, node = cookie >> 48;

	if (node >= eng->p.nr_nodes || dqe(eng)->dead[node])
		return;
	switch (type) {
	case DQ_M_FENCE:
		break;		/* dq_member_up() fences again until acked */
	case DQ_M_SHHOLD:
	case DQ_M_SHBLOCK:
		break;		/* a blocking notice lost, nothing else */
	case DQ_M_ACK:
		if (dqe(eng)->acks[node].slot == slot)
			dqe(eng)->acks[node].lost = 1;	/* dq_member_up() */
		break;
	case DQ_M_RECOVER:
		dq_mark_broken(eng, node, slot);
		break;
	default:
		/* a grant from this home: the word's queue is broken */
		dq_home_recover(eng, slot, out);
		break;
	}
}

/*
 * Read our words, DQ_PROBE_BATCH at a time (a table may have 2^20): a queue
 * whose tail is a departed member's request has nobody behind it to notice
 * the death, and once the member rejoins, a request that queued there
 * would send its notice to the new incarnation, which drops it (or, if its
 * identity is reused, takes it for its own): those are recovered. A new
 * departure restarts the sweep, which then covers every dead member. The
 * reads complete long before a member can rejoin (the recovery grace).
 */
static void dq_probe_more(struct rdlm_engine *eng, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_READ;
	v.node = eng->p.node;
	while (e->probe_out < DQ_PROBE_BATCH &&
	       e->probe_next < eng->p.nr_slots) {
		v.slot = e->probe_next++;
		v.cookie = DQ_HC_PROBE << 32 | v.slot;
		e->probe_out++;
		rdlm_engine_post(eng, out, &v);
	}
}

static void dq_home_complete(struct rdlm_engine *eng,
			     const struct rdlm_cqe *cqe, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u64 kind = (cqe->cookie >> 32) & 0xff;
	u32 slot = (u32)cqe->cookie;
	struct dq_slot *s;

	if (!kind || slot >= eng->p.nr_slots)
		return;
	s = &e->slots[slot];
	if (kind == DQ_HC_PROBE) {
		u32 t = e->proto->tail(cqe->value);

		e->probe_out--;
		/* a failed probe may have missed such a tail */
		if (cqe->status || (t && t != DQ_FROZEN &&
				    dq_id_node(t) < eng->p.nr_nodes &&
				    e->dead[dq_id_node(t)]))
			dq_home_recover(eng, slot, out);
		dq_probe_more(eng, out);
		return;
	}
	if (kind == DQ_HC_MSG) {
		if (cqe->status)
			dq_msg_lost(eng, cqe->cookie, slot, out);
		return;
	}
	if (kind == DQ_HC_RESET) {
		e->proto->home_cqe(eng, cqe, out);
		return;
	}
	if (cqe->status) {
		/* our own word, through our own connection: retry when it is back */
		if (slot == e->rec_slot)
			e->rec_cas_lost = 1;
		return;
	}
	if (kind == DQ_HC_FREEZE && s->rec == DQ_REC_FREEZE) {
		if (cqe->value != s->word) {
			rdlm_stat_inc(&eng->stats.cas_failed);
			s->word = cqe->value;
			dq_home_cas(eng, out, slot, DQ_HC_FREEZE, s->word,
				    e->proto->frozen(s->word));
			return;
		}
		s->word = e->proto->frozen(s->word);
		dq_rec_fence(eng, slot, out);
	} else if (kind == DQ_HC_THAW && s->rec == DQ_REC_THAW) {
		if (cqe->value != s->word &&
		    e->proto->frozen(cqe->value) == cqe->value) {
			/* shared FAs or tickets taken meanwhile: still frozen */
			rdlm_stat_inc(&eng->stats.cas_failed);
			s->word = cqe->value;
			dq_rec_thaw(eng, slot, out);
			return;
		}
		/* thawed, if only by our earlier CAS whose completion was lost */
		rdlm_stat_inc(&eng->stats.resets);
		s->rec = s->rec_again ? DQ_REC_PENDING : DQ_REC_NONE;
		s->rec_again = 0;
		dq_rec_next(eng, out);
	}
}

static void dq_home_ack(struct rdlm_engine *eng, u32 node, u32 slot,
			u32 kept, u32 kept_sh, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_slot *s = &e->slots[slot];

	if (slot != e->rec_slot || s->rec != DQ_REC_FENCE || e->acked[node])
		return;
	e->acked[node] = 1;
	/* a member speaks for its own requests only */
	if (kept && dq_id_node(kept) == node && !s->keep)
		s->keep = kept;
	e->keep_sh[node] = kept_sh;
	if (!--e->rec_wait)
		dq_rec_thaw(eng, slot, out);
}

/* ---- recovery: member side ---- */

/**
 * dq_lose() - a held request's word was fenced, or its home died
 * @eng: instance
 * @req: request
 * @out: call context
 *
 * The holder is told, unless it released the lock already (an N-CoSED
 * conversion that had to settle first): then it is over. An up-conversion
 * under way ends, refused.
 */
void dq_lose(struct rdlm_engine *eng, struct rdlm_req *req,
	     struct rdlm_out *out)
{
	struct dq_req *d = dq(req);
	bool upg = d->upg != DQ_UPG_NONE;

	d->upg = DQ_UPG_NONE;
	d->down = 0;
	if (d->cancel) {
		dq_finish(eng, req, out);
	} else if (!d->lost) {
		d->lost = 1;
		if (upg)
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_UNCONVERTED,
					 (u64)(s64)-ENOLCK);
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_LOST, 0);
	}
}

/* a shared hold the word counts (N-CoSED; the others serve it as EX) */
static bool dq_shared(struct rdlm_engine *eng, struct rdlm_req *req)
{
	return req->mode == RDLM_MODE_SH && !eng->ops->exclusive_only;
}

/*
 * A holder keeps its lock through the recovery of its word, where the
 * engine can write it back: an exclusive one with nothing under way as the
 * word's tail (its ACK names it), shared ones (N-CoSED) as the word's
 * count (its ACK counts them), whatever conversion they are in: an
 * up-conversion is still shared, a down-conversion already is.
 */
static bool dq_keep(struct rdlm_engine *eng, struct rdlm_req *req)
{
	struct dq_req *d = dq(req);

	if (!dqe(eng)->proto->thawed_held || d->phase != DQ_HELD ||
	    d->lost || d->cancel)
		return false;
	return dq_shared(eng, req) ||
	       (!d->ainf && !d->down && d->upg == DQ_UPG_NONE);
}

/**
 * dq_upg_again() - an N-CoSED up-conversion starts over after a backoff
 * @eng: instance
 * @req: a shared hold kept through a recovery of its word
 * @out: call context
 *
 * Under a new identity: notices sent to the tail it may have been do not
 * reach it.
 */
void dq_upg_again(struct rdlm_engine *eng, struct rdlm_req *req,
		  struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->upg = DQ_UPG_POLL;
	d->id = dq_new_id(eng, req);
	d->deaths = dqe(eng)->deaths;
	d->tries = 0;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, ++d->tries));
}

/*
 * Drop @req's claims on its word, fenced; return its identity if it keeps
 * an exclusive lock (a shared one kept is marked, dq_send_ack() counts it).
 */
static u32 dq_fence_req(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out)
{
	struct dq_req *d = dq(req);
	bool keep;

	if (dqe(eng)->proto->fence)
		dqe(eng)->proto->fence(eng, req);
	d->has_succ = 0;
	d->nsh = 0;
	d->relretry = 0;
	keep = dq_keep(eng, req);
	if (keep && dq_shared(eng, req)) {
		d->kept = 1;
		/* a down-conversion is over: the thawed word counts a share */
		d->down = 0;
		if (d->ainf) {
			/*
			 * A conversion's CAS: it executes before our ACK
			 * arrives, so the thaw overwrites what it did. Void;
			 * an up-conversion starts over once it completes.
			 */
			d->restart = 1;
			d->id = dq_new_id(eng, req);
		} else if (d->upg == DQ_UPG_QUEUED ||
			   d->upg == DQ_UPG_PENDING) {
			/*
			 * Its share, counted released at the home (queued),
			 * is a hold again in the thawed word; one asked for
			 * during the down-conversion starts now.
			 */
			dq_upg_again(eng, req, out);
		}
		return 0;
	}
	if (keep) {
		/*
		 * Under a new identity, which the thaw writes back: a notice
		 * sent to the old one before the fence (a successor that has
		 * re-queued since) is stale, not taken for a new successor.
		 */
		d->id = dq_new_id(eng, req);
		d->kept = 1;
		d->deaths = dqe(eng)->deaths;	/* its queue starts anew */
		return d->id;
	}
	if (d->ainf) {
		d->restart = 1;
		/* a conversion's atomic: the hold goes now, before our ACK */
		if (d->phase == DQ_HELD)
			dq_lose(eng, req, out);
		return 0;
	}
	switch (d->phase) {
	case DQ_HELD:
		dq_lose(eng, req, out);
		break;
	case DQ_WAIT:
		d->phase = DQ_ACQ;
		dq_backoff(eng, req, out);	/* re-queue */
		break;
	case DQ_REL:		/* its CAS done, waiting for notices */
	case DQ_RELWAIT:
		dq_finish(eng, req, out);
		break;
	default:
		break;
	}
	return 0;
}

/* Fence our requests on a word; return the one that keeps an exclusive lock, or 0. */
static u32 dq_fence_local(struct rdlm_engine *eng, u32 home, u32 slot,
			  struct rdlm_out *out)
{
	u32 i, id, kept = 0;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];

		if (req->busy && req->node == home && req->slot == slot &&
		    dq(req)->phase != DQ_IDLE) {
			id = dq_fence_req(eng, req, out);
			if (id && !kept)
				kept = id;
			else if (id)	/* two holders: cannot be, lose this */
				dq_lose(eng, req, out);
		}
	}
	return kept;
}

/*
 * Our ACK of @home's last fence: the exclusive hold kept, and the shared
 * holds kept as they stand now. Sent again, it must not count one
 * released meanwhile: that release may have reached the home before the
 * ACK, when it was void.
 */
static void dq_send_ack(struct rdlm_engine *eng, u32 home,
			struct rdlm_out *out)
{
	const struct dq_ack *a = &dqe(eng)->acks[home];
	u32 i, n = 0;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct dq_req *d = dq(req);

		n += req->busy && req->node == home && req->slot == a->slot &&
		     d->phase == DQ_HELD && d->kept && !d->lost &&
		     dq_shared(eng, req);
	}
	dq_send(eng, out, NULL, home, DQ_M_ACK, a->slot, 0, a->seq,
		(u64)n << 32 | a->kept);
}

/**
 * dq_recv() - &rdlm_engine_ops.recv: mailbox notices and messages
 * @eng: instance
 * @rx: WRITE_WITH_IMM notice or SEND message
 * @out: call context
 */
void dq_recv(struct rdlm_engine *eng, const struct rdlm_rx *rx,
	     struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct dq_eng *e = dqe(eng);
	struct rdlm_req *req;
	unsigned long flags = 0;
	u32 kept;

	if (rx->kind == RDLM_VERB_WRITE_IMM) {
		u32 entry = rx->slot / DQ_MBOX_KINDS;
		u32 idx = entry / eng->p.nr_nodes;
		u8 kind = (u8)(rx->value >> 56);

		/* the entry must be the one the sender's notice kind uses */
		req = idx < eng->p.nr_reqs &&
		      entry % eng->p.nr_nodes == rx->src &&
		      rx->slot % DQ_MBOX_KINDS == (u8)(kind - 1) ?
		      &eng->reqs[idx] : NULL;
		if (!req || !req->busy || dq(req)->id != rx->imm ||
		    dq(req)->phase == DQ_IDLE || dq(req)->phase == DQ_FINISH) {
			rdlm_stat_inc(&eng->stats.stale);
			return;
		}
		e->proto->notice(eng, req, kind, (u32)(rx->value >> 32) &
				 0xffffff, (u32)rx->value, out);
		return;
	}
	if (rx->kind != RDLM_VERB_SEND || m->slot >= eng->p.nr_slots)
		return;
	switch (m->type) {
	case DQ_M_RECOVER:
		rdlm_spin_lock(&eng->lock, flags);
		if (m->slot == e->rec_slot &&
		    e->slots[m->slot].rec == DQ_REC_FENCE && e->acked[rx->src])
			/* broken after its ACK (a kept hold's SHREL lost?) */
			e->slots[m->slot].rec_again = 1;
		else
			dq_home_recover(eng, m->slot, out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case DQ_M_FENCE:
		/*
		 * The same fence again (the home had not seen our ACK when its
		 * connection came back): its claims are dropped already, and a
		 * hold kept and named stays so; answer as before.
		 */
		if (m->token && e->acks[rx->src].seq == m->token &&
		    e->acks[rx->src].slot == m->slot) {
			e->acks[rx->src].lost = 0;
			dq_send_ack(eng, rx->src, out);
			break;
		}
		kept = dq_fence_local(eng, rx->src, m->slot, out);
		e->acks[rx->src].seq = m->token;
		e->acks[rx->src].slot = m->slot;
		e->acks[rx->src].lost = 0;
		e->acks[rx->src].kept = kept;
		dq_send_ack(eng, rx->src, out);
		break;
	case DQ_M_ACK:
		rdlm_spin_lock(&eng->lock, flags);
		if (m->token == e->rec_seq)
			dq_home_ack(eng, rx->src, m->slot, (u32)m->arg,
				    (u32)(m->arg >> 32), out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	default:
		if (e->proto->home_msg)
			e->proto->home_msg(eng, rx, out);
		break;
	}
}

/**
 * dq_member_down() - &rdlm_engine_ops.member_down of the queue engines
 * @eng: instance
 * @node: member declared dead
 * @epoch: new membership epoch (unused: deaths are counted per instance)
 * @out: call context
 *
 * Fails or fences the requests on words @node was home of, asks the homes
 * of words whose queue may run through @node to recover them, and as a
 * home, recovers its words whose queue ends in @node.
 */
void dq_member_down(struct rdlm_engine *eng, u32 node, u32 epoch,
		    struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	unsigned long flags = 0;
	u32 i;

	if (node >= eng->p.nr_nodes || e->dead[node])
		return;
	e->dead[node] = 1;
	e->deaths++;
	/* home side: stop waiting for its ACK, let the engine look around */
	rdlm_spin_lock(&eng->lock, flags);
	if (e->rec_slot != DQ_NONE) {
		/* a holder it named keeps nothing now, nor do its shares */
		if (e->slots[e->rec_slot].keep &&
		    dq_id_node(e->slots[e->rec_slot].keep) == node)
			e->slots[e->rec_slot].keep = 0;
		e->keep_sh[node] = 0;
		dq_home_ack(eng, node, e->rec_slot, 0, 0, out);
	}
	if (e->proto->home_down)
		e->proto->home_down(eng, out);
	rdlm_spin_unlock(&eng->lock, flags);
	dqe(eng)->probe_next = 0;
	dq_probe_more(eng, out);
	/* member side */
	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct dq_req *d = dq(req);

		if (!req->busy || d->phase == DQ_IDLE ||
		    d->phase == DQ_FINISH)
			continue;
		if (req->node == node) {
			/* the word died with its home */
			if (d->ainf) {
				d->failio = 1;
			} else if (d->phase == DQ_HELD) {
				if (dqe(eng)->proto->fence)
					dqe(eng)->proto->fence(eng, req);
				dq_lose(eng, req, out);
			} else {
				/* a release (waiting, or to retry) is over */
				if (d->phase != DQ_RELWAIT &&
				    !(d->phase == DQ_REL && d->relretry))
					rdlm_engine_emit(eng, out,
							 RDLM_ACT_FAIL, req,
							 -EIO, 0);
				dq_finish(eng, req, out);
			}
			continue;
		}
		if ((d->phase == DQ_WAIT && d->pred &&
		     dq_id_node(d->pred) == node) ||
		    (d->has_succ && dq_id_node(d->succ) == node) ||
		    d->phase == DQ_RELWAIT || d->down ||
		    d->turnwait ||
		    d->nsh)
			dq_recover(eng, req, out);
	}
}

/**
 * dq_member_up() - &rdlm_engine_ops.member_up of the queue engines
 * @eng: instance
 * @node: member whose connection is back
 * @out: call context
 *
 * Verbs that failed while the connection was down may have executed, and
 * messages may have been lost: ask @node to recover every word of its
 * that our failed verbs touched, fence @node again if a recovery here waits
 * for its acknowledgment, and repost a freeze or thaw CAS of our own that
 * failed.
 */
void dq_member_up(struct rdlm_engine *eng, u32 node, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	unsigned long flags = 0;
	struct dq_slot *s;
	u32 slot;

	if (node >= eng->p.nr_nodes || e->dead[node])
		return;
	/* member side: our ACK of @node's fence was lost, and it waits */
	if (e->acks[node].lost) {
		e->acks[node].lost = 0;
		dq_send_ack(eng, node, out);
	}
	for (slot = 0; slot < eng->p.nr_slots; slot++)
		if (dq_take_broken(eng, node, slot)) {
			rdlm_stat_inc(&eng->stats.recovers);
			dq_send(eng, out, NULL, node, DQ_M_RECOVER, slot, 0, 0,
				0);
		}
	rdlm_spin_lock(&eng->lock, flags);
	if (e->rec_slot != DQ_NONE) {
		s = &e->slots[e->rec_slot];
		if (s->rec == DQ_REC_FENCE && !e->acked[node])
			dq_send(eng, out, NULL, node, DQ_M_FENCE, e->rec_slot,
				0, e->rec_seq, 0);
		if (e->rec_cas_lost && s->rec == DQ_REC_FREEZE)
			dq_home_cas(eng, out, e->rec_slot, DQ_HC_FREEZE,
				    s->word, e->proto->frozen(s->word));
		else if (e->rec_cas_lost && s->rec == DQ_REC_THAW)
			dq_rec_thaw(eng, e->rec_slot, out);	/* to its keeper */
		e->rec_cas_lost = 0;
	}
	rdlm_spin_unlock(&eng->lock, flags);
}

/**
 * dq_member_join() - &rdlm_engine_ops.member_join of the queue engines
 * @eng: instance
 * @node: member back with a fresh engine
 * @out: call context
 *
 * ->member_down() removed every trace of the old incarnation from the
 * queues; what this instance remembers of it (a fence to acknowledge
 * again, words to ask it to recover) concerns a table that is gone.
 */
void dq_member_join(struct rdlm_engine *eng, u32 node, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u32 slot;

	if (node >= eng->p.nr_nodes || !e->dead[node])
		return;
	e->dead[node] = 0;
	memset(&e->acks[node], 0, sizeof(e->acks[node]));
	for (slot = 0; slot < eng->p.nr_slots; slot++)
		dq_take_broken(eng, node, slot);
}

/**
 * dq_describe() - &rdlm_engine_ops.describe of the queue engines
 * @eng: instance
 * @req: request, or NULL for the home side
 * @buf: where the line goes
 * @len: its size
 *
 * Return: what snprintf() returns.
 */
int dq_describe(struct rdlm_engine *eng, struct rdlm_req *req, char *buf,
		size_t len)
{
	struct dq_eng *e = dqe(eng);
	struct dq_req *d;

	if (!req)
		return snprintf(buf, len,
				"rec_slot %d rec %u rec_wait %u rec_seq %llu cas_lost %u",
				e->rec_slot == DQ_NONE ? -1 : (int)e->rec_slot,
				e->rec_slot == DQ_NONE ? 0 :
				e->slots[e->rec_slot].rec, e->rec_wait,
				(unsigned long long)e->rec_seq, e->rec_cas_lost);
	d = dq(req);
	return snprintf(buf, len,
			"phase %u id %08x pred %08x succ %08x%s%s%s%s%s%s%s out %u nsh %u upg %u",
			d->phase, d->id, d->pred, d->succ,
			d->cancel ? " cancel" : "", d->lost ? " lost" : "",
			d->ainf ? " ainf" : "", d->has_succ ? " has_succ" : "",
			d->homewait ? " homewait" : "",
			d->turnwait ? " turnwait" : "", d->down ? " down" : "",
			d->outstanding, d->nsh, d->upg);
}
