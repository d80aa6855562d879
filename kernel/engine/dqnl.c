// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm DQNL engines: Devulapalli and Wyckoff's distributed FIFO queue lock
 * ("Distributed", section 4.2-4.3) and its starvation-free variant
 * (section 4.4).  Exclusive only: shared requests are served as exclusive.
 *
 * DQNL word: [0:32 | tail:32].  Acquire: CAS the tail from the last value
 * seen to ourselves until it succeeds; an empty tail means we hold the
 * lock, else the old tail is our predecessor and we WRITE_WITH_IMM our
 * identity into its mailbox.  Release: hand over to a known successor with
 * a WRITE_WITH_IMM; with none, CAS the tail from ourselves back to empty;
 * if that fails a successor is between its CAS and its notice (the
 * transient state of 4.3.1): wait for its notice, then hand over.
 *
 * DQNL-SF word: [ticket counter:16 | turn:16 | tail:32].  The paper's
 * separate ever-increasing counter shares the lock word here (the table
 * has one 64-bit word per lock): FA adds one to the counter and returns our
 * ticket; only the request whose ticket equals "turn" may CAS itself into
 * the tail (turn then advances); others re-CAS until it is their turn.
 * Every CAS that does not install us is counted in stats.cas_failed.
 */
#include "dqueue.h"

#define SF_ONE		0x1000000000000ULL	/* counter += 1 */
#define SF_LOW48	(SF_ONE - 1)
#define TAIL_MASK	0xffffffffULL

static u32 tail(u64 w)
{
	return (u32)w;
}

static u16 sf_counter(u64 w)
{
	return (u16)(w >> 48);
}

static u16 sf_turn(u64 w)
{
	return (u16)(w >> 32);
}

static bool dqnl_sf(struct rdlm_engine *eng);

/* our CAS into the tail succeeded; @old names our predecessor */
static void dqnl_enqueued(struct rdlm_engine *eng, struct rdlm_req *req,
			  u64 old, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	d->pred = tail(old);
	if (!d->pred) {
		dq_grant(eng, req, out);
		return;
	}
	d->phase = DQ_WAIT;
	if (dqe(eng)->dead[dq_id_node(d->pred)]) {
		dq_recover(eng, req, out);
		return;
	}
	dq_notify(eng, out, req, d->pred, DQ_N_SUCC, 0);
}

static void sf_try(struct rdlm_engine *eng, struct rdlm_req *req,
		   u16 old_turn, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);
	u64 swap;

	if (sf_turn(d->expect) == (u16)d->ticket) {
		d->turnwait = 0;
		swap = (d->expect & ~SF_LOW48) |
		       (u64)(u16)(d->ticket + 1) << 32 | d->id;
		dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_SWAP, d->expect,
			  swap);
	} else {
		/*
		 * A ticket taken by a member that died before swapping in
		 * stops the turn for good, and nobody knows whose it was: after
		 * any death, a turn that has not moved for a lease gets the
		 * word recovered.
		 */
		if (!d->turnwait || sf_turn(d->expect) != old_turn) {
			d->turn_since = out->now;
		} else if (dqe(eng)->deaths &&
			   out->now - d->turn_since > eng->p.lease_ns) {
			d->turn_since = out->now;
			dq_recover(eng, req, out);
		}
		/* not our turn: re-read the word with a CAS (section 4.4) */
		d->turnwait = 1;
		dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_PROBE, d->expect,
			  d->expect);
	}
}

static void dqnl_start(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (dqnl_sf(eng)) {
		dq_atomic(eng, out, req, RDLM_VERB_FA, DQ_OP_TICKET, SF_ONE, 0);
		return;
	}
	d->expect = 0;
	dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_ENQ, 0, d->id);
}

static void dqnl_handover(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out)
{
	dq_notify(eng, out, req, dq(req)->succ, DQ_N_GRANT, 0);
	dq_finish(eng, req, out);
}

static void dqnl_release(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	if (d->has_succ) {
		dqnl_handover(eng, req, out);
		return;
	}
	d->phase = DQ_REL;
	if (!dqnl_sf(eng))
		d->expect = d->id;
	dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_REL, d->expect,
		  d->expect & ~TAIL_MASK);
}

static void dqnl_atomic_done(struct rdlm_engine *eng, struct rdlm_req *req,
			     u8 op, u64 old, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);
	u16 seen;

	if (op != DQ_OP_REL && tail(old) == DQ_FROZEN) {
		/* under recovery: any ticket we hold is void */
		if (op != DQ_OP_TICKET)
			rdlm_stat_inc(&eng->stats.cas_failed);
		dq_backoff(eng, req, out);
		return;
	}
	switch (op) {
	case DQ_OP_ENQ:
		if (old == d->expect) {
			dqnl_enqueued(eng, req, old, out);
			return;
		}
		rdlm_stat_inc(&eng->stats.cas_failed);
		if (d->cancel) {
			rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req,
					 -ECANCELED, 0);
			dq_finish(eng, req, out);
			return;
		}
		d->expect = old;
		dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_ENQ, old,
			  (old & ~TAIL_MASK) | d->id);
		return;
	case DQ_OP_TICKET:
		d->ticket = sf_counter(old);
		d->expect = old + SF_ONE;
		sf_try(eng, req, sf_turn(old), out);
		return;
	case DQ_OP_SWAP:
	case DQ_OP_PROBE:
		if (op == DQ_OP_SWAP && old == d->expect) {
			d->expect = (old & ~SF_LOW48) |
				    (u64)(u16)(d->ticket + 1) << 32 | d->id;
			dqnl_enqueued(eng, req, old, out);
			return;
		}
		rdlm_stat_inc(&eng->stats.cas_failed);
		seen = sf_turn(d->expect);	/* the turn seen before */
		d->expect = old;
		sf_try(eng, req, seen, out);
		return;
	case DQ_OP_REL:
		if (old == d->expect) {
			dq_finish(eng, req, out);	/* the lock is free */
			return;
		}
		rdlm_stat_inc(&eng->stats.cas_failed);
		if (dq_rel_frozen(eng, req, old, out))
			return;
		if (tail(old) == d->id) {
			/*
			 * Still the tail: only tickets were taken (DQNL-SF),
			 * or a recovery wrote the word back to us
			 */
			d->expect = old;
			dq_atomic(eng, out, req, RDLM_VERB_CAS, DQ_OP_REL, old,
				  old & ~TAIL_MASK);
			return;
		}
		/* 4.3.1: a successor swapped in, its notice is on the way */
		d->phase = DQ_RELWAIT;
		if (d->has_succ)
			dqnl_handover(eng, req, out);
		else if (dq_dead_since(eng, req))
			dq_recover(eng, req, out);
		return;
	default:
		return;
	}
}

static void dqnl_notice(struct rdlm_engine *eng, struct rdlm_req *req,
			u8 kind, u32 arg, u32 sender, struct rdlm_out *out)
{
	struct dq_req *d = dq(req);

	switch (kind) {
	case DQ_N_SUCC:
		if (d->has_succ || d->lost)
			break;
		d->has_succ = 1;
		d->succ = sender;
		if (d->phase == DQ_HELD)
			dq_blocking(eng, req, out);
		else if (d->phase == DQ_RELWAIT)
			dqnl_handover(eng, req, out);
		return;
	case DQ_N_GRANT:
		if (d->phase != DQ_WAIT || sender != d->pred)
			break;
		dq_grant(eng, req, out);
		return;
	default:
		break;
	}
	rdlm_stat_inc(&eng->stats.stale);
}

static u64 dqnl_frozen(u64 v)
{
	return (v & ~TAIL_MASK) | DQ_FROZEN;
}

static u64 dqnl_thawed(u64 v)
{
	return 0;
}

static u64 dqnl_thawed_held(u64 v, u32 holder, u32 shared)
{
	return holder;
}

static u64 sf_thawed(u64 v)
{
	/* every ticket issued so far is void: the next one goes first */
	return (u64)sf_counter(v) << 48 | (u64)sf_counter(v) << 32;
}

static u64 sf_thawed_held(u64 v, u32 holder, u32 shared)
{
	return sf_thawed(v) | holder;
}

static const struct dq_proto dqnl_proto = {
	.start = dqnl_start,
	.atomic_done = dqnl_atomic_done,
	.notice = dqnl_notice,
	.release = dqnl_release,
	.tail = tail,
	.frozen = dqnl_frozen,
	.thawed = dqnl_thawed,
	.thawed_held = dqnl_thawed_held,
};

static const struct dq_proto dqnl_sf_proto = {
	.start = dqnl_start,
	.atomic_done = dqnl_atomic_done,
	.notice = dqnl_notice,
	.release = dqnl_release,
	.tail = tail,
	.frozen = dqnl_frozen,
	.thawed = sf_thawed,
	.thawed_held = sf_thawed_held,
};

static bool dqnl_sf(struct rdlm_engine *eng)
{
	return dqe(eng)->proto == &dqnl_sf_proto;
}

static int dqnl_init(struct rdlm_engine *eng)
{
	return dq_init(eng, &dqnl_proto, false);
}

static int dqnl_sf_init(struct rdlm_engine *eng)
{
	return dq_init(eng, &dqnl_sf_proto, false);
}

const struct rdlm_engine_ops rdlm_dqnl_ops =
	DQ_ENGINE_OPS("dqnl", dqnl_init, true, 1, true, NULL);
const struct rdlm_engine_ops rdlm_dqnl_sf_ops =
	DQ_ENGINE_OPS("dqnl-sf", dqnl_sf_init, false, 2, true, NULL);
