// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm N-CoSED engine: Narravula et al.'s combined shared/exclusive
 * distributed queue lock (section 3.2).  Word: [exclusive tail:32 | shared
 * count:32].
 *
 *  Exclusive: CAS [tail:count] -> [us:0], retrying with the value seen.
 *   old [0:0]  granted at once (3.2.1);
 *   old [0:c]  c shared holders: the home grants us after counting c
 *              shared releases (3.2.3; we SEND it EXWAIT(c));
 *   old [T:c]  queue behind exclusive T: WRITE_WITH_IMM T our identity and
 *              c; T hands over when it and the c shared requests queued
 *              behind it are through (then, if c > 0, EXWAIT(c) as above).
 *  Shared: FA +1 on the low half (3.2.2).
 *   old [0:*]  granted at once;
 *   old [T:*]  queued behind exclusive T (3.2.4): WRITE_WITH_IMM T, which
 *              grants all its shared waiters together when it releases.
 *  Shared grant: SEND SHHOLD to the home, which keeps the holders' nodes to
 *   tell them (SHBLOCK) when an exclusive waits for them: the word's
 *   count says how many hold it, not who (an addition to the paper, for
 *   the blocking callbacks of a lock manager whose clients cache locks).
 *  Shared release: SEND SHREL to the home, which counts releases, grants a
 *  waiting exclusive when its count is reached and otherwise resets the
 *  shared half to zero with a CAS [0:n] -> [0:0] once n releases are in.
 *  Exclusive release: grant the shared waiters, then hand over to the
 *  exclusive successor or CAS [us:c] -> [0:c] (the c shared holders it just
 *  granted now count as holders of the free word).
 *
 * In-place conversions (additions to the paper, for fs/dlm's conversions):
 *  Up, a shared holder: CAS [0:c] -> [us:0], only while no exclusive
 *   is queued (one that is waits for our share: a conversion deadlock,
 *   refused). As the tail nobody can be granted the word before us; our
 *   share is one of the c the home counts (EXWAIT(c), then our SHREL), and
 *   the hold stays shared until the home's GRANT. Once in the tail it
 *   cannot be cancelled: a cancel is answered by the grant.
 *  Down, an exclusive holder: shared at once; the release steps follow
 *   with our own share added: CAS [us:c] -> [0:c+1], or GRANT the
 *   successor with one release more to wait for.
 */
#include "dqueue.h"

static u32 ex_of(u64 w)
{
	return (u32)(w >> 32);
}

static u32 sh_of(u64 w)
{
	return (u32)w;
}

static u64 mkword(u32 ex, u32 sh)
{
	return (u64)ex << 32 | sh;
}

static void nc_start(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (req->mode == RDLM_MODE_SH) {
		dq_atomic(eng, out, req, RDLM_VERB_FA, DQ_OP_SHFA, 1, 0);
		return;
	}
	d->expect = 0;
	dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_ENQ, 0,
		  mkword(d->id, 0));
}

/*
 * A shared request is granted: the home learns of its holder first. Not
 * the request's own message: losing it costs a blocking notice, not the
 * word's queue.
 */
static void nc_grant_shared_req(struct rdlm_engine *eng, struct rdlm_req *req,
				struct rdlm_out *out)
{
	dq_send(eng, out, NULL, req->node, DQ_M_SHHOLD, req->slot,
		rdlm_req_id(req), dq(req)->id, 0);
	dq_grant(eng, req, out);
}

/* wait for the home to count @need shared releases */
static void nc_home_wait(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->phase = DQ_WAIT;
	d->homewait = 1;
	dq_send(eng, out, req, req->node, DQ_M_EXWAIT, req->slot,
		rdlm_req_id(req), d->id, d->need);
}

static void nc_queue_behind(struct rdlm_engine *eng, struct rdlm_req *req,
			    u32 pred, u8 kind, u32 arg, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->pred = pred;
	d->phase = DQ_WAIT;
	if (dqe(eng)->dead[dq_id_node(pred)])
		dq_recover(eng, req, out);
	else
		dq_notify(eng, out, req, pred, kind, arg);
}

/* take the next shared waiter off @d's list: its identity, or 0 */
static u32 nc_pop_shared(struct dq_eng *e, struct dq_req *d)
{
	u32 i = d->sh_head;

	if (i == DQ_NONE)
		return 0;
	d->sh_head = e->sh_next[i];
	e->sh_next[i] = e->sh_free;
	e->sh_free = i;
	return e->sh_id[i];
}

static void nc_grant_shared(struct rdlm_engine *eng, struct rdlm_req *req,
			    struct rdlm_out *out)
{
	u32 id;

	while ((id = nc_pop_shared(dqe(eng), dq(req))))
		dq_notify(eng, out, req, id, DQ_N_SHGRANT, 0);
}

static void nc_down_done(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out);

/*
 * Exclusive release, one step: called whenever something it waits for
 * came. A down-conversion takes the same steps, its own share added.
 */
static void nc_release_step(struct rdlm_engine *eng, struct rdlm_req *req,
			    struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	nc_grant_shared(eng, req, out);
	if (d->ainf || d->relretry)
		return;		/* the release CAS, or its retry, will tell */
	if (d->has_succ) {
		if (d->nsh >= d->succ_arg) {
			dq_notify(eng, out, req, d->succ, DQ_N_GRANT, d->down);
			if (d->down)
				nc_down_done(eng, req, out);
			else
				dq_finish(eng, req, out);
		} else if (dq_dead_since(eng, req)) {
			dq_recover(eng, req, out);
		}
		return;
	}
	if (ex_of(d->expect) == d->id && sh_of(d->expect) <= d->nsh) {
		if (!d->down)
			d->phase = DQ_REL;
		d->expect = mkword(d->id, d->nsh);
		dq_atomic(eng, out, req, RDLM_VERB_CAS,
			  d->down ? DQ_OP_DOWN : DQ_OP_REL, d->expect,
			  mkword(0, d->nsh + d->down));
		return;
	}
	/* shared notices or the successor's notice still on the way */
	if (!d->down)
		d->phase = DQ_RELWAIT;
	if (dq_dead_since(eng, req))
		dq_recover(eng, req, out);
}

static void nc_release(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->upg == DQ_UPG_CAS || d->upg == DQ_UPG_QUEUED ||
	    d->upg == DQ_UPG_POLL) {
		d->cancel = 1;	/* once the up-conversion settles */
		if (d->upg == DQ_UPG_POLL)
			rdlm_engine_arm(eng, out, req, 0);
		return;
	}
	d->upg = DQ_UPG_NONE;	/* one still to start: never mind */
	if (d->down) {
		/* the tail is still ours: an exclusive release from here */
		req->mode = RDLM_MODE_EX;
		d->down = 0;
		d->phase = DQ_RELWAIT;
		nc_release_step(eng, req, out);
		return;
	}
	if (req->mode == RDLM_MODE_SH) {
		dq_send(eng, out, req, req->node, DQ_M_SHREL, req->slot,
			rdlm_req_id(req), d->id, 0);
		dq_finish(eng, req, out);
		return;
	}
	d->phase = DQ_RELWAIT;
	d->expect = mkword(d->id, d->nsh);
	nc_release_step(eng, req, out);
}

static void nc_atomic_done(struct rdlm_engine *eng, struct rdlm_req *req,
			   u8 op, u64 old, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (op != DQ_OP_REL && op != DQ_OP_DOWN && ex_of(old) == DQ_FROZEN) {
		if (op == DQ_OP_ENQ)
			rdlm_stat_inc(&eng->stats.cas_failed);
		dq_backoff(eng, req, out);
		return;
	}
	switch (op) {
	case DQ_OP_SHFA:
		if (!ex_of(old))
			nc_grant_shared_req(eng, req, out);	/* 3.2.2 */
		else
			nc_queue_behind(eng, req, ex_of(old), DQ_N_SHREQ, 0,
					out);		/* 3.2.4 */
		return;
	case DQ_OP_ENQ:
		if (old != d->expect) {
			rdlm_stat_inc(&eng->stats.cas_failed);
			if (d->cancel) {
				rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req,
						 -ECANCELED, 0);
				dq_finish(eng, req, out);
				return;
			}
			d->expect = old;
			dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_ENQ, old,
				  mkword(d->id, 0));
			return;
		}
		d->need = sh_of(old);
		d->expect = mkword(d->id, 0);
		if (ex_of(old))
			nc_queue_behind(eng, req, ex_of(old), DQ_N_SUCC,
					d->need, out);		/* 3.2.1 */
		else if (d->need)
			nc_home_wait(eng, req, out);		/* 3.2.3 */
		else
			dq_grant(eng, req, out);
		return;
	case DQ_OP_REL:
	case DQ_OP_DOWN:
		if (old != d->expect && dq_rel_frozen(eng, req, old, out))
			return;
		if (old != d->expect) {
			rdlm_stat_inc(&eng->stats.cas_failed);
			d->expect = old;
			nc_release_step(eng, req, out);
		} else if (d->down) {
			nc_down_done(eng, req, out);
		} else {
			/* released during a down-conversion: our share too */
			if (op == DQ_OP_DOWN)
				dq_send(eng, out, req, req->node, DQ_M_SHREL,
					req->slot, rdlm_req_id(req), d->id, 0);
			dq_finish(eng, req, out);
		}
		return;
	default:
		return;
	}
}

/* is @req the exclusive queue member its word's tail names (or did)? */
static bool nc_tail(struct rdlm_req *req)
{
	struct dq_req *d = dq(req);

	/* an up-conversion's notices may come before its CAS's completion */
	return req->mode == RDLM_MODE_EX || d->down ||
	       d->upg == DQ_UPG_CAS || d->upg == DQ_UPG_QUEUED;
}

static void nc_notice(struct rdlm_engine *eng, struct rdlm_req *req, u8 kind,
		      u32 arg, u32 sender, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_req *d = dq(req);
	u32 i;

	switch (kind) {
	case DQ_N_SUCC:
		if (!nc_tail(req) || d->has_succ || d->lost)
			break;
		d->has_succ = 1;
		d->succ = sender;
		d->succ_arg = arg;
		/*
		 * a down-conversion's successor waits for our share; an
		 * up-conversion tells once granted
		 */
		if (d->phase == DQ_HELD && !d->upg)
			dq_blocking(eng, req, out);
		if (d->phase == DQ_RELWAIT || d->down)
			nc_release_step(eng, req, out);
		return;
	case DQ_N_SHREQ:
		if (!nc_tail(req) || d->lost || e->sh_free == DQ_NONE)
			break;
		i = e->sh_free;
		e->sh_free = e->sh_next[i];
		e->sh_id[i] = sender;
		e->sh_next[i] = d->sh_head;
		d->sh_head = i;
		d->nsh++;
		if (d->phase == DQ_RELWAIT || d->phase == DQ_REL || d->down)
			nc_release_step(eng, req, out);
		else if (d->phase == DQ_HELD && !d->upg)
			dq_blocking(eng, req, out);
		return;
	case DQ_N_SHGRANT:
		if (d->phase != DQ_WAIT || req->mode != RDLM_MODE_SH ||
		    sender != d->pred)
			break;
		nc_grant_shared_req(eng, req, out);
		return;
	case DQ_N_GRANT:
		if (d->phase != DQ_WAIT || d->homewait || sender != d->pred)
			break;
		d->need += arg;		/* a down-converted predecessor's share */
		if (d->need)
			nc_home_wait(eng, req, out);	/* group behind pred */
		else
			dq_grant(eng, req, out);
		return;
	default:
		break;
	}
	rdlm_stat_inc(&eng->stats.stale);
}

/* ---- home side: counting shared releases ---- */

/* tell the shared holders in @nodes that an exclusive waits for them */
static void nc_home_tell(struct rdlm_engine *eng, u32 slot, u64 nodes,
			 struct rdlm_out *out)
{
	u32 n;

	for (n = 0; nodes; n++, nodes >>= 1)
		if (nodes & 1)
			dq_send(eng, out, NULL, n, DQ_M_SHBLOCK, slot, 0, 0,
				0);
}

/* SHBLOCK from home @home: our shared holds of @slot block an exclusive */
static void nc_told(struct rdlm_engine *eng, u32 home, u32 slot,
		    struct rdlm_out *out)
{
	u32 i;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];

		if (req->busy && req->node == home && req->slot == slot &&
		    req->mode == RDLM_MODE_SH) {
			/* another exclusive than the last one told of */
			dq(req)->blocked = 0;
			dq_blocking(eng, req, out);
		}
	}
}

static void nc_home_settle(struct rdlm_engine *eng, u32 slot, bool reset,
			   struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_slot *s = &e->slots[slot];

	/*
	 * Never grant while our reset CAS is in flight: the word could pass
	 * through [ex:..] and back to [0:n] and the stale reset would then
	 * zero a live count (ABA).  Until the exclusive is granted the word
	 * has a non-zero tail, so that reset fails and settles the grant.
	 */
	if (s->ex_pending && s->rel >= s->ex_need && !s->reset_busy) {
		s->rel -= s->ex_need;
		s->ex_pending = 0;
		s->group_deaths = e->deaths;
		dq_send(eng, out, NULL, s->ex_node, RDLM_MSG_GRANT, slot,
			s->ex_reqid, s->ex_id, 0);
	} else if (reset && !s->ex_pending && !s->reset_busy && s->rel) {
		/* 3.2.2 step 2: all releases in? then zero the shared half */
		s->reset_busy = 1;
		s->reset_r = s->rel;
		dq_home_cas(eng, out, slot, DQ_HC_RESET, mkword(0, s->rel), 0);
	}
}

static void nc_upgraded(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out);

static void nc_home_msg(struct rdlm_engine *eng, const struct rdlm_rx *rx,
			struct rdlm_out *out)
{
	const struct rdlm_msg *m = &rx->msg;
	struct dq_eng *e = dqe(eng);
	struct dq_slot *s = &e->slots[m->slot];
	struct rdlm_req *req;
	unsigned long flags = 0;

	switch (m->type) {
	case DQ_M_EXWAIT:
	case DQ_M_SHREL:
		rdlm_spin_lock(&eng->lock, flags);
		if (m->type == DQ_M_SHREL && s->rec == DQ_REC_FENCE &&
		    m->slot == e->rec_slot && e->acked[rx->src] &&
		    e->keep_sh[rx->src]) {
			/* after its ACK: a kept hold, which the thaw forgets */
			e->keep_sh[rx->src]--;
		} else if (s->rec == DQ_REC_FREEZE || s->rec == DQ_REC_FENCE) {
			/* sent before its sender was fenced: void */
			rdlm_stat_inc(&eng->stats.stale);
		} else if (m->type == DQ_M_SHREL) {
			s->rel++;
			s->sh_holders &= ~BIT_ULL(rx->src);
			nc_home_settle(eng, m->slot, true, out);
		} else {
			s->ex_pending = 1;
			s->ex_need = (u32)m->arg;
			s->ex_node = rx->src;
			s->ex_id = (u32)m->token;
			s->ex_reqid = m->reqid;
			/* not an up-converting requester: its share is ours */
			nc_home_tell(eng, m->slot, s->sh_holders &
				     (rx->src < 64 ? ~BIT_ULL(rx->src) : ~0ULL),
				     out);
			nc_home_settle(eng, m->slot, false, out);
			if (s->ex_pending && s->group_deaths != e->deaths)
				dq_home_recover(eng, m->slot, out);
		}
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case DQ_M_SHHOLD:
		/* SHHOLD and SHREL of a node come in order: one connection */
		rdlm_spin_lock(&eng->lock, flags);
		if (rx->src < 64)
			s->sh_holders |= BIT_ULL(rx->src);
		if (s->ex_pending)
			nc_home_tell(eng, m->slot, BIT_ULL(rx->src), out);
		rdlm_spin_unlock(&eng->lock, flags);
		break;
	case DQ_M_SHBLOCK:
		nc_told(eng, rx->src, m->slot, out);
		break;
	case RDLM_MSG_GRANT:
		req = rdlm_req_lookup(eng, m->reqid);
		if (req && dq(req)->phase == DQ_WAIT && dq(req)->homewait &&
		    dq(req)->id == (u32)m->token)
			dq_grant(eng, req, out);
		else if (req && dq(req)->phase == DQ_HELD &&
			 dq(req)->upg == DQ_UPG_QUEUED &&
			 dq(req)->id == (u32)m->token)
			nc_upgraded(eng, req, out);
		else
			rdlm_stat_inc(&eng->stats.stale);
		break;
	default:
		break;
	}
}

static void nc_home_cqe(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u32 slot = (u32)cqe->cookie;
	struct dq_slot *s = &e->slots[slot];

	s->reset_busy = 0;
	if (cqe->status) {
		/* it may have zeroed the count all the same */
		dq_home_recover(eng, slot, out);
		return;
	}
	if (s->rec == DQ_REC_FREEZE || s->rec == DQ_REC_FENCE)
		return;
	if (cqe->value != mkword(0, s->reset_r)) {
		/* more shared holders, or an exclusive came */
		rdlm_stat_inc(&eng->stats.cas_failed);
	} else {
		s->rel -= s->reset_r;
		s->group_deaths = e->deaths;
	}
	nc_home_settle(eng, slot, false, out);
}

/* a member died: an exclusive waiting for shared releases may wait forever */
static void nc_home_down(struct rdlm_engine *eng, struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	u32 slot;

	for (slot = 0; slot < eng->p.nr_slots; slot++)
		if (e->slots[slot].ex_pending)
			dq_home_recover(eng, slot, out);
}

static void nc_fence(struct rdlm_engine *eng, struct rdlm_req *req)
{
	struct dq_req *d = dq(req);

	while (nc_pop_shared(dqe(eng), d))
		;
	d->homewait = 0;
}

static u64 nc_frozen(u64 v)
{
	return mkword(DQ_FROZEN, sh_of(v));
}

static u64 nc_thawed(u64 v)
{
	return 0;
}

/* never both: an exclusive is granted once every share is released */
static u64 nc_thawed_held(u64 v, u32 holder, u32 shared)
{
	return holder ? mkword(holder, 0) : mkword(0, shared);
}

/* a kept hold's release or down-conversion met the frozen word: again */
static void nc_rel_retry(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->phase == DQ_REL)
		d->phase = DQ_RELWAIT;
	else if (d->phase != DQ_RELWAIT && !(d->phase == DQ_HELD && d->down))
		return;
	d->expect = mkword(d->id, d->nsh);
	nc_release_step(eng, req, out);
}

/* ---- in-place conversions ---- */

static void nc_upgrade_start(struct rdlm_engine *eng, struct rdlm_req *req,
			     struct rdlm_out *out)
{
	struct dq_eng *e = dqe(eng);
	struct dq_req *d = dq(req);

	/* a queue identity of its own: notices to the shared one are stale */
	d->id = dq_new_id(eng, req);
	d->deaths = e->deaths;
	d->tries = 0;
	d->has_succ = 0;
	d->nsh = 0;
	d->upg = DQ_UPG_CAS;
	d->expect = mkword(0, 1);	/* alone, with luck */
	dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_UPG, d->expect,
		  mkword(d->id, 0));
}

static void nc_unconverted(struct rdlm_engine *eng, struct rdlm_req *req,
			   int err, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->upg = DQ_UPG_NONE;
	if (d->cancel) {
		/* released meanwhile: still a shared holder */
		dq_send(eng, out, req, req->node, DQ_M_SHREL, req->slot,
			rdlm_req_id(req), d->id, 0);
		dq_finish(eng, req, out);
		return;
	}
	rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
			 RDLM_NOTICE_UNCONVERTED, (u64)(s64)err);
}

/* the up-conversion's CAS into the tail completed */
static void nc_upgrade_cas(struct rdlm_engine *eng, struct rdlm_req *req,
			   u64 old, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (old == d->expect) {
		/* ours: our share is one of the need the home counts */
		d->upg = DQ_UPG_QUEUED;
		d->need = sh_of(old);
		d->expect = mkword(d->id, 0);
		d->homewait = 1;
		dq_send(eng, out, req, req->node, DQ_M_EXWAIT, req->slot,
			rdlm_req_id(req), d->id, d->need);
		dq_send(eng, out, req, req->node, DQ_M_SHREL, req->slot,
			rdlm_req_id(req), d->id, 0);
		return;
	}
	rdlm_stat_inc(&eng->stats.cas_failed);
	if (d->upg_cancel || d->cancel) {
		nc_unconverted(eng, req, -ECANCELED, out);
	} else if (d->upg_flags & RDLM_RF_NOQUEUE) {
		nc_unconverted(eng, req, -EAGAIN, out);
	} else if (!ex_of(old) && sh_of(old)) {
		/* other shared holders (or releases not yet counted): wait */
		d->expect = old;
		dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_UPG, old,
			  mkword(d->id, 0));
	} else if (ex_of(old) && ex_of(old) != DQ_FROZEN &&
		   !(d->upg_flags & RDLM_RF_NODLCKWT)) {
		/*
		 * An exclusive queued: it waits for our share, a conversion
		 * deadlock (fs/dlm's -EDEADLK); or it is a release on its way
		 * (its CAS behind its grant of our share): refused all the
		 * same (Documentation/queue-engines.rst).
		 */
		nc_unconverted(eng, req, -EDEADLK, out);
	} else {
		/*
		 * The callers resolve it (NODLCKWT: the holders were told,
		 * one gives way), or the word is under recovery: again later.
		 */
		d->upg = DQ_UPG_POLL;
		rdlm_engine_arm(eng, out, req,
				rdlm_engine_backoff(eng, ++d->tries));
	}
}

/* an up-conversion waiting for the tail to clear: try again */
static void nc_held_timer(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->upg != DQ_UPG_POLL)
		return;
	if (d->upg_cancel || d->cancel) {
		nc_unconverted(eng, req, -ECANCELED, out);
		return;
	}
	d->upg = DQ_UPG_CAS;
	d->expect = mkword(0, 1);
	dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_UPG, d->expect,
		  mkword(d->id, 0));
}

/* the home counted every shared release: exclusive in place */
static void nc_upgraded(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->upg = DQ_UPG_NONE;
	d->homewait = 0;
	d->blocked = 0;
	req->mode = RDLM_MODE_EX;
	if (d->cancel) {
		nc_release(eng, req, out);
		return;
	}
	rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)U64_MAX,
			 RDLM_MODE_EX);
	if (d->has_succ || d->nsh)
		dq_blocking(eng, req, out);
}

/* a down-conversion let go of the tail: a shared holder like any other */
static void nc_down_done(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->down = 0;
	d->has_succ = 0;
	d->nsh = 0;
	d->blocked = 0;
	dq_send(eng, out, NULL, req->node, DQ_M_SHHOLD, req->slot,
		rdlm_req_id(req), d->id, 0);
	if (d->upg != DQ_UPG_PENDING)
		return;
	if (d->upg_cancel)
		nc_unconverted(eng, req, -ECANCELED, out);
	else
		nc_upgrade_start(eng, req, out);
}

static void nc_held_atomic(struct rdlm_engine *eng, struct rdlm_req *req,
			   u8 op, int status, u64 old, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->restart && d->kept && !d->lost && !d->failio) {
		/*
		 * Kept through the fence of its word: this atomic is void. An
		 * up-conversion, or one asked for during the down-conversion
		 * this CAS was, starts over.
		 */
		d->restart = 0;
		if (op == DQ_OP_UPG || d->upg == DQ_UPG_PENDING)
			dq_upg_again(eng, req, out);
		return;
	}
	if (d->restart || d->failio) {
		/* fenced, or the home is gone: the hold with it */
		d->restart = 0;
		nc_fence(eng, req);
		dq_lose(eng, req, out);
		return;
	}
	if (status) {
		/*
		 * It may have executed: the word is broken, and its recovery
		 * (once the link is back) fences this hold. Shared until then:
		 * the up-conversion is refused, the down-conversion over.
		 */
		d->down = 0;
		req->mode = RDLM_MODE_SH;
		if (op == DQ_OP_UPG)
			nc_unconverted(eng, req, status, out);
		else if (d->upg == DQ_UPG_PENDING)
			nc_unconverted(eng, req, d->upg_cancel ? -ECANCELED :
				       status, out);
		return;
	}
	if (op == DQ_OP_UPG)
		nc_upgrade_cas(eng, req, old, out);
	else
		nc_atomic_done(eng, req, op, old, out);
}

/*
 * &rdlm_engine_ops.convert: shared to exclusive and back in place. Shared
 * again while an up-conversion waits cancels it, if it is not in the tail
 * yet (then it is granted).
 */
static int nc_convert(struct rdlm_engine *eng, struct rdlm_req *req, u8 mode,
		      u8 flags, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->phase != DQ_HELD || d->lost || d->cancel)
		return -EINVAL;
	if (d->upg) {
		if (mode != req->mode)
			return -EBUSY;
		d->upg_cancel = 1;
		if (d->upg == DQ_UPG_POLL)
			rdlm_engine_arm(eng, out, req, 0);	/* answer soon */
		return 0;
	}
	if (mode == RDLM_MODE_EX && req->mode == RDLM_MODE_SH) {
		d->upg_flags = flags;
		d->upg_cancel = 0;
		if (d->down)
			d->upg = DQ_UPG_PENDING;
		else
			nc_upgrade_start(eng, req, out);
		return 0;
	}
	if (mode != RDLM_MODE_SH || req->mode != RDLM_MODE_EX)
		return -EOPNOTSUPP;
	req->mode = RDLM_MODE_SH;
	d->down = 1;
	d->expect = mkword(d->id, d->nsh);
	nc_release_step(eng, req, out);
	return 0;
}

static const struct dq_proto nc_proto = {
	.start = nc_start,
	.atomic_done = nc_atomic_done,
	.notice = nc_notice,
	.release = nc_release,
	.home_msg = nc_home_msg,
	.home_cqe = nc_home_cqe,
	.tail = ex_of,
	.frozen = nc_frozen,
	.thawed = nc_thawed,
	.thawed_held = nc_thawed_held,
	.rel_retry = nc_rel_retry,
	.fence = nc_fence,
	.home_down = nc_home_down,
	.held_atomic = nc_held_atomic,
	.held_timer = nc_held_timer,
};

static int nc_init(struct rdlm_engine *eng)
{
	return dq_init(eng, &nc_proto, true);
}

const struct rdlm_engine_ops rdlm_ncosed_ops =
	DQ_ENGINE_OPS("ncosed", nc_init, true, 1, false, nc_convert);
