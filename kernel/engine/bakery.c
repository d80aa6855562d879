// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm bakery engine: DSLR (Yoon, Chowdhury, Mozafari, SIGMOD 2018).
 *
 * A lock word holds, per lock class c, a "now serving" counter n[c] and a
 * "next ticket" counter max[c].  Two classes (exclusive X, shared S) in four
 * 16-bit fields, or, with update locks, three classes (X, S, U) in six
 * 10-bit fields.  A request takes its ticket with one FA of k on max[c]
 * (k > 1 for multi-slot leases) and is granted when the n counters it waits
 * for equal its ticket; otherwise it polls with READ every waiters-ahead x
 * omega.  Release is one FA of k on n[c].
 *
 * Failures and deadlocks are handled with leases: a waiter that sees no n
 * counter change for twice the lease (times the slot count) resets the word
 * past itself with CAS and fails (Algorithm 2).  Counters stop at COUNT_MAX:
 * an FA that meets it is undone and retried after a truncated binary
 * exponential random backoff; the request whose ticket reaches COUNT_MAX
 * resets the word to zero with CAS once everyone is done (Algorithms 1, 3).
 * See Documentation/engines.rst for the choices made where the paper is
 * silent (lease start, stale-release rules, shared-waiter ambiguity).
 *
 * Blocking notices (not in the paper): a holder sees the waiters whose
 * tickets were taken before its grant; a request that has to wait SENDs
 * BLOCKING once per ticket to every other member, so that holders granted
 * before it took its ticket hear of it too (a member without a request on
 * the word ignores it); one that backs off a word at COUNT_MAX waits for
 * its holders all the same and SENDs too. Only requests the waiter is
 * behind, and of a class it waits for, are told. Holders that cache locks
 * depend on hearing of every waiter.
 *
 * Without leases (no_lease, not in the paper): holds last until released,
 * for callers that cache locks as long as they like (OCFS2).  A waiter
 * whose word stalls then cannot tell a dead holder from a slow one by the
 * clock; it takes a census instead: it asks every live member which of
 * the tickets ahead of its own it still has, and adds the units nobody
 * claims (a dead member's, or an orphan of a failed verb) to the n
 * counters with one CAS, as if they had been released.  Holds convert in
 * place: shared to exclusive takes an exclusive ticket and gives back our
 * shared units in one CAS, only while no exclusive ticket is outstanding
 * (none can then come before ours); exclusive to shared is the mirror, only
 * while no exclusive waits behind us (else the hold stays exclusive).
 */
#include "engine.h"

#define BK_X	0
#define BK_S	1
#define BK_U	2

struct bk_layout {
	u8 ncls;
	u8 width;
	u8 nsh[3];
	u8 msh[3];
	u32 half;
};

static const struct bk_layout bk_four = {
	.ncls = 2, .width = 16,
	.nsh = { 48, 32, 0 }, .msh = { 16, 0, 0 }, .half = 32768,
};

static const struct bk_layout bk_six = {
	.ncls = 3, .width = 10,
	.nsh = { 50, 40, 30 }, .msh = { 20, 10, 0 }, .half = 512,
};

enum bk_phase {
	BK_IDLE = 0,
	BK_FA,		/* ticket FA in flight */
	BK_UNDO,	/* undo FA in flight (counter at COUNT_MAX) */
	BK_OCAS,	/* zero reset of a stuck overflowed word in flight */
	BK_BACKOFF,	/* random backoff before the next ticket FA */
	BK_WAIT,	/* poll timer armed */
	BK_READ,	/* poll READ in flight */
	BK_RCAS,	/* lease reset CAS in flight */
	BK_HELD,
	BK_REL,		/* release FA in flight */
	BK_ZERO,	/* CAS to zero in flight */
	BK_ZWAIT,	/* backoff before the next CAS to zero */
	BK_FINISH,	/* DONE once nothing is in flight */
	BK_CENSUS,	/* census: waiting for the members' counts */
	BK_CREAD,	/* census: READ of the word in flight */
};

/* conversions in place (no_lease) */
enum bk_conv {
	BK_CV_NONE = 0,
	BK_CV_CAS,	/* up: CAS taking the exclusive ticket in flight */
	BK_CV_POLL,	/* up: backoff before that CAS again */
	BK_CV_QUEUED,	/* up: exclusive ticket taken, waits for its turn */
	BK_CV_DOWN,	/* down: CAS swapping the tickets in flight */
	BK_CV_CENSUS,	/* up, polling: census answers awaited */
	BK_CV_CREAD,	/* up, polling: census READ in flight */
	BK_CV_CCAS,	/* up, polling: census CAS in flight */
};

/* verb cookies */
enum {
	CK_FA = 1, CK_UNDO, CK_OCAS, CK_READ, CK_RCAS, CK_REL, CK_ZERO, CK_SKIP,
	CK_CENSUS, CK_CREAD, CK_CCAS, CK_UPCAS, CK_DOWNCAS
};

/* messages of the census (no_lease) */
#define BK_M_CENSUS	(RDLM_MSG_ENGINE + 0)	/* which tickets ahead are yours? */
#define BK_M_COUNT	(RDLM_MSG_ENGINE + 1)	/* these many units, per class */
#define BK_COUNT_BITS	20
#define BK_NCLS		3	/* classes of the six-field layout */

/* whose census: a waiter's, the reset to zero's, an up-conversion's */
enum { BK_CS_WAIT, BK_CS_ZERO, BK_CS_CONV };

#define BKF_RESETFROM	0x01	/* our ticket reached COUNT_MAX */
#define BKF_CANCEL	0x02
#define BKF_LOST	0x04
#define BKF_BLOCKING	0x08
#define BKF_OVF		0x10	/* ovf_n valid */
#define BKF_POLLING	0x20	/* READ in flight while held (update) */
#define BKF_ANNOUNCED	0x40	/* told the other members we wait */
#define BKF_TOLD	0x80	/* waiters announced themselves before our grant */
#define BKF_CZERO	0x100	/* census for the reset to zero */
#define BKF_CNOW	0x200	/* a member died: census at the next look */
#define BKF_CBUSY	0x400	/* a census answer said "ticket in flight" */
#define BKF_UPPEND	0x800	/* up-conversion asked during a down CAS */
#define BKF_CVCANCEL	0x1000	/* the up-conversion is cancelled */
#define BKF_CVNOQ	0x2000	/* up-conversion with NOQUEUE */
#define BKF_CVNODL	0x4000	/* up-conversion with NODLCKWT */

struct bk_req {
	u8 phase;
	u8 cls;
	u8 stage;	/* 0 waiting, 1 granted (read for update), 2 write */
	u8 conv;	/* &enum bk_conv */
	u16 flags;
	u16 k;
	u16 outstanding;
	u16 census_wait;	/* census answers still to come */
	u32 attempts;
	u32 zero_tries;
	u32 census_seq;
	u32 census_n;	/* censuses of this stall that found nobody dead */
	u64 census_from;/* members that answered */
	u32 live[BK_NCLS];	/* units ahead claimed by the answers */
	u32 told_max;	/* largest max counter of our class told (TOLD) */
	u64 ticket;	/* word value returned by our ticket FA */
	u64 last_n;	/* n counters of the latest observation */
	u64 stall_since;/* when last_n was first seen (completion time) */
	u64 prev_issue;	/* issue time of the latest observation */
	u64 issue;	/* issue time of the verb in flight */
	u64 lease_end;
	u64 ovf_n;
	u64 ovf_since;
	u64 fa_issue;	/* issue time of the latest ticket FA */
	u64 reset_from;	/* value to reset to zero from */
	u64 legit;	/* all-done value after our ticket (exact) */
	u64 cmp;	/* compare value of the reset CAS in flight */
	u64 cmp_new;	/* its swap value */
	u64 cv_seen;	/* up-conversion: the word as its CAS last saw it */
};

static_assert(sizeof(struct bk_req) <= sizeof(((struct rdlm_req *)0)->priv));

static struct bk_req *bk(struct rdlm_req *req)
{
	return (struct bk_req *)req->priv;
}

static const struct bk_layout *bk_lay(const struct rdlm_engine *eng)
{
	return eng->p.update_locks ? &bk_six : &bk_four;
}

static u32 bk_cmax(const struct rdlm_engine *eng)
{
	u32 half = bk_lay(eng)->half;

	return eng->p.count_max && eng->p.count_max < half ?
		eng->p.count_max : half;
}

static u32 fld(const struct bk_layout *l, u64 v, u8 sh)
{
	return (u32)(v >> sh) & ((1U << l->width) - 1);
}

static u32 nv(const struct bk_layout *l, u64 v, int c)
{
	return fld(l, v, l->nsh[c]);
}

static u32 mv(const struct bk_layout *l, u64 v, int c)
{
	return fld(l, v, l->msh[c]);
}

static u64 bk_nbits(const struct bk_layout *l, u64 v)
{
	u64 r = 0;
	int c;

	for (c = 0; c < l->ncls; c++)
		r |= (u64)nv(l, v, c) << l->nsh[c];
	return r;
}

/*
 * Is a waiter whose ticket came from a word with max counter @t in our
 * class behind our ticket?  Every FA after ours saw our k units on it; a
 * waiter ahead of us is not held up by us, and a notice from it would
 * only make a caching holder give the word back for nothing.
 */
static bool bk_behind(const struct bk_layout *l, const struct bk_req *b, u32 t)
{
	return t >= mv(l, b->ticket, b->cls) + b->k;
}

/* @v with every n counter set to its max: "everyone is done" */
static u64 bk_all_done(const struct bk_layout *l, u64 v)
{
	u64 r = 0;
	int c;

	for (c = 0; c < l->ncls; c++) {
		r |= (u64)mv(l, v, c) << l->nsh[c];
		r |= (u64)mv(l, v, c) << l->msh[c];
	}
	return r;
}

static bool bk_overflowed(const struct rdlm_engine *eng, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	int c;

	for (c = 0; c < l->ncls; c++)
		if (mv(l, v, c) >= bk_cmax(eng))
			return true;
	return false;
}

/*
 * The word as it is when only our hold is left on it: every class done up
 * to its max but ours, which misses our own k.
 */
static u64 bk_only_us(const struct bk_layout *l, const struct bk_req *b,
		      u64 v)
{
	return bk_all_done(l, v) - ((u64)b->k << l->nsh[b->cls]);
}

/* The word when only our hold is on it and nobody came after us. */
static u64 bk_quiet(const struct bk_layout *l, const struct bk_req *b)
{
	return bk_only_us(l, b, b->ticket + ((u64)b->k << l->msh[b->cls]));
}

/*
 * May a shared holder take the exclusive ticket on word @v?  Only while no
 * exclusive ticket is outstanding (one would be behind our share, waiting
 * for it, and would get the word before us once we give the share back),
 * or, on a word at COUNT_MAX, once ours is the only hold left on it.
 */
static bool bk_up_ok(struct rdlm_engine *eng, const struct bk_req *b, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);

	if (bk_overflowed(eng, v))
		return v == bk_only_us(l, b, v);
	return mv(l, v, BK_X) == nv(l, v, BK_X);
}

/* Classes whose n counter a request of class @cls (at @stage) waits for. */
static bool bk_waits_on(int cls, int stage, int c)
{
	switch (cls) {
	case BK_X:
		return true;
	case BK_S:
		return c != BK_S;
	default:	/* update: X and U first, S too for write access */
		return c != BK_S || stage >= 1;
	}
}

/* the class of a request for @mode (exclusive when unknown) */
static int bk_mode_cls(u8 mode)
{
	return mode == RDLM_MODE_SH ? BK_S : mode == RDLM_MODE_UP ? BK_U : BK_X;
}

static bool bk_turn(const struct bk_layout *l, u64 t, u64 v, int cls,
		    int stage)
{
	int c;

	for (c = 0; c < l->ncls; c++)
		if (bk_waits_on(cls, stage, c) && nv(l, v, c) != mv(l, t, c))
			return false;
	return true;
}

static u32 bk_wait_count(const struct bk_layout *l, u64 t, u64 v)
{
	u32 w = 0;
	int c;

	for (c = 0; c < l->ncls; c++)
		if (mv(l, t, c) > nv(l, v, c))
			w += mv(l, t, c) - nv(l, v, c);
	return w;
}

static void bk_post(struct rdlm_engine *eng, struct rdlm_req *req,
		    struct rdlm_out *out, u8 kind, u8 flags, u64 a0, u64 a1,
		    u64 cookie)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.flags = flags;
	v.node = req->node;
	v.slot = req->slot;
	v.arg0 = a0;
	v.arg1 = a1;
	v.req = req;
	v.cookie = cookie;
	bk(req)->outstanding++;
	bk(req)->issue = out->now;
	rdlm_engine_post(eng, out, &v);
}

static void bk_send(struct rdlm_engine *eng, struct rdlm_out *out,
		    struct rdlm_req *req, u32 node, const struct rdlm_msg *m)
{
	struct rdlm_verb v;

	memset(&v, 0, sizeof(v));
	v.kind = RDLM_VERB_SEND;
	v.node = node;
	v.slot = m->slot;
	v.msg = *m;
	v.msg.src = eng->p.node;
	if (req) {
		v.req = req;
		v.cookie = CK_CENSUS;
		bk(req)->outstanding++;
	}
	rdlm_engine_post(eng, out, &v);
}

static void bk_disarm(struct rdlm_req *req)
{
	req->timer_cookie++;
}

static void bk_finish(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	b->phase = BK_FINISH;
	bk_disarm(req);
	if (!b->outstanding) {
		b->phase = BK_IDLE;
		rdlm_engine_emit(eng, out, RDLM_ACT_DONE, req, 0, 0);
	}
}

static void bk_fail(struct rdlm_engine *eng, struct rdlm_req *req,
		    struct rdlm_out *out, int err)
{
	if (bk(req)->flags & BKF_CANCEL)
		err = -ECANCELED;
	rdlm_engine_emit(eng, out, RDLM_ACT_FAIL, req, err, 0);
}

static void bk_ticket(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	b->phase = BK_FA;
	b->fa_issue = out->now;
	/* a waiter behind this ticket announces itself after it is posted */
	b->flags &= ~BKF_TOLD;
	bk_post(eng, req, out, RDLM_VERB_FA, RDLM_VF_ENQUEUE,
		(u64)b->k << l->msh[b->cls], 0, CK_FA);
}

static int bk_lock(struct rdlm_engine *eng, struct rdlm_req *req,
		   struct rdlm_out *out)
{
	struct bk_req *b = bk(req);
	u32 k = req->slots ? req->slots : 1;

	if (req->node >= eng->p.nr_nodes || req->slot >= eng->p.nr_slots)
		return -EINVAL;
	if (req->mode >= RDLM_MODE_NR ||
	    (req->mode == RDLM_MODE_UP && !eng->p.update_locks))
		return -EOPNOTSUPP;
	if (k > eng->p.kmax || k >= bk_cmax(eng))
		return -EINVAL;
	/* the census knows 64 members; update locks need leases */
	if (eng->p.no_lease && (eng->p.update_locks || eng->p.nr_nodes > 64))
		return -EOPNOTSUPP;
	if (b->phase != BK_IDLE)
		return -EBUSY;
	memset(b, 0, sizeof(*b));
	b->k = (u16)k;
	b->cls = bk_mode_cls(req->mode);
	bk_ticket(eng, req, out);
	return 0;
}

/* Start resetting the word to zero from @from (Algorithm 3, line 7). */
static void bk_zero(struct rdlm_engine *eng, struct rdlm_req *req,
		    struct rdlm_out *out, u64 from)
{
	struct bk_req *b = bk(req);

	b->reset_from = from;
	b->flags &= ~BKF_RESETFROM;
	b->phase = BK_ZERO;
	bk_post(eng, req, out, RDLM_VERB_CAS, RDLM_VF_RESET, from, 0, CK_ZERO);
}

/* Holder gives up the word without releasing it (lease over). */
static void bk_abandon(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	if (b->flags & BKF_RESETFROM)
		/* we never added our k to n: expect the word without it */
		bk_zero(eng, req, out,
			b->reset_from - ((u64)b->k << l->nsh[b->cls]));
	else
		bk_finish(eng, req, out);
}

static void bk_release(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	bk_disarm(req);
	b->phase = BK_REL;
	bk_post(eng, req, out, RDLM_VERB_FA, 0,
		(u64)b->k << l->nsh[b->cls], 0, CK_REL);
}

/*
 * The hold is gone (lease over, or its word is not known any more): an
 * up-conversion under way ends first; if unlock was asked for meanwhile,
 * it just ends.  A census no longer counts it.
 */
static void bk_lose(struct rdlm_engine *eng, struct rdlm_req *req,
		    struct rdlm_out *out)
{
	struct bk_req *b = bk(req);
	u8 conv = b->conv;

	if (b->flags & BKF_LOST)
		return;
	b->flags |= BKF_LOST;
	b->phase = BK_HELD;
	b->conv = BK_CV_NONE;
	if (b->flags & BKF_CANCEL) {
		bk_finish(eng, req, out);
		return;
	}
	if ((conv != BK_CV_NONE && conv != BK_CV_DOWN) ||
	    (b->flags & BKF_UPPEND))
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_UNCONVERTED, (u64)(s64)-ENOLCK);
	b->flags &= ~BKF_UPPEND;
	rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req, RDLM_NOTICE_LOST, 0);
}

static u64 bk_poll_delay(struct rdlm_engine *eng, u32 wait_count)
{
	u64 d = (u64)wait_count * eng->p.omega_ns;
	u64 cap = eng->p.lease_ns / 4;

	if (d < eng->p.omega_ns)
		d = eng->p.omega_ns;
	return d > cap ? cap : d;
}

/* Arm the single timer of a holder: lease end, or next upgrade poll. */
static void bk_arm_held(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out, u32 wait_count)
{
	struct bk_req *b = bk(req);
	u64 d = b->lease_end > out->now ? b->lease_end - out->now : 0;

	if (eng->p.no_lease) {
		bk_disarm(req);		/* no lease, no update locks */
		return;
	}
	if (b->stage == 1 && !(b->flags & BKF_LOST)) {
		u64 p = bk_poll_delay(eng, wait_count);

		if (p < d)
			d = p;
	}
	rdlm_engine_arm(eng, out, req, d);
}

static void bk_grant(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out, u64 v, u64 lease_start)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	bool conv = b->conv == BK_CV_QUEUED;
	int c;

	b->lease_end = eng->p.no_lease ? U64_MAX :
		       lease_start + eng->p.lease_ns * b->k;
	b->attempts = 0;
	b->conv = BK_CV_NONE;
	b->census_n = 0;
	b->flags &= ~(BKF_CNOW | BKF_CVCANCEL);
	if (conv)
		req->mode = RDLM_MODE_EX;
	if (b->flags & BKF_CANCEL) {
		if (!conv)	/* unlocked while converting: just released */
			bk_fail(eng, req, out, -ECANCELED);
		bk_release(eng, req, out);
		return;
	}
	if (b->lease_end <= out->now) {
		/* our turn came, but too long ago to be ours any more */
		bk_fail(eng, req, out, -ETIMEDOUT);
		bk_abandon(eng, req, out);
		return;
	}
	b->phase = BK_HELD;
	b->stage = b->cls == BK_U && !bk_turn(l, b->ticket, v, b->cls, 1) ?
		   1 : 2;
	rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)b->lease_end,
			 req->mode);
	if (b->cls == BK_U && b->stage == 2)
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_UPGRADED, 0);
	for (c = 0; c < l->ncls; c++) {
		u32 mine = mv(l, b->ticket, c) + (c == b->cls ? b->k : 0);

		if (mv(l, v, c) > mine && bk_waits_on(c, 1, b->cls) &&
		    !(b->flags & BKF_BLOCKING)) {
			b->flags |= BKF_BLOCKING;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_BLOCKING, 0);
		}
	}
	if ((b->flags & BKF_TOLD) && !(b->flags & BKF_BLOCKING) &&
	    bk_behind(l, b, b->told_max)) {
		b->flags |= BKF_BLOCKING;
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_BLOCKING, 0);
	}
	bk_arm_held(eng, req, out, bk_wait_count(l, b->ticket, v));
}

static void bk_census_answer(struct rdlm_engine *eng, const struct rdlm_msg *m,
			     struct rdlm_out *out);
static void bk_census_count(struct rdlm_engine *eng, const struct rdlm_msg *m,
			    struct rdlm_out *out);

/* BLOCKING from a waiter: our requests on its word hold it up. */
static void bk_recv(struct rdlm_engine *eng, const struct rdlm_rx *rx,
		    struct rdlm_out *out)
{
	const struct bk_layout *l = bk_lay(eng);
	const struct rdlm_msg *m = &rx->msg;
	int w = bk_mode_cls(m->mode), cls;
	u32 i, t;
	bool up;

	if (rx->kind != RDLM_VERB_SEND || m->slot >= eng->p.nr_slots ||
	    m->src >= eng->p.nr_nodes || m->src == eng->p.node)
		return;
	if (m->type == BK_M_CENSUS && m->arg < eng->p.nr_nodes) {
		bk_census_answer(eng, m, out);
		return;
	}
	if (m->type == BK_M_COUNT) {
		bk_census_count(eng, m, out);
		return;
	}
	if (m->type != RDLM_MSG_BLOCKING || m->arg >= eng->p.nr_nodes)
		return;
	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct bk_req *b = bk(req);

		if (!req->busy || req->node != m->arg || req->slot != m->slot)
			continue;
		/*
		 * Not granted yet: told on its grant, if the waiter is behind
		 * it.  An up-conversion's CAS in flight is both: a shared
		 * holder now, and told on its grant as the exclusive it
		 * becomes (its CAS's word may not show the waiter).
		 */
		up = b->phase == BK_HELD && b->conv == BK_CV_CAS;
		cls = up ? BK_X : b->cls;
		if ((b->phase != BK_HELD || up) && bk_waits_on(w, 1, cls)) {
			t = mv(l, m->token, cls);
			if (!(b->flags & BKF_TOLD) || t > b->told_max)
				b->told_max = t;
			b->flags |= BKF_TOLD;
		}
		if (b->phase == BK_HELD && bk_waits_on(w, 1, b->cls) &&
		    !(b->flags & (BKF_BLOCKING | BKF_LOST)) &&
		    bk_behind(l, b, mv(l, m->token, b->cls))) {
			b->flags |= BKF_BLOCKING;
			rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
					 RDLM_NOTICE_BLOCKING, 0);
		}
	}
}

/*
 * We have to wait: tell the holders, whoever they are, once.  @t is the
 * word our ticket came from (or any later value): a holder ahead of it is
 * told, a request behind it not.
 */
static void bk_announce(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out, u64 t)
{
	struct bk_req *b = bk(req);
	struct rdlm_verb v;
	u32 n;

	/* not when composed into another engine that keeps the SENDs */
	if ((b->flags & BKF_ANNOUNCED) || eng->ops->recv != bk_recv)
		return;
	b->flags |= BKF_ANNOUNCED;
	for (n = 0; n < eng->p.nr_nodes; n++) {
		if (n == eng->p.node)
			continue;
		memset(&v, 0, sizeof(v));
		v.kind = RDLM_VERB_SEND;
		v.node = n;
		v.slot = req->slot;
		v.msg.type = RDLM_MSG_BLOCKING;
		/*
		 * what we wait for: a conversion waits for exclusive, and so
		 * does a request on a word at COUNT_MAX (every hold must go)
		 */
		v.msg.mode = b->conv != BK_CV_NONE || bk_overflowed(eng, t) ?
			     RDLM_MODE_EX : req->mode;
		v.msg.src = eng->p.node;
		v.msg.slot = req->slot;
		v.msg.arg = req->node;
		v.msg.token = t & ~bk_nbits(bk_lay(eng), ~0ULL);
		rdlm_engine_post(eng, out, &v);
	}
}

/*
 * Was our ticket skipped by someone else's reset?  Counters only move
 * backwards on a reset to zero, and an n counter passes our ticket only by
 * a reset.  The one exception is nS for a shared waiter: shared requests
 * behind it are granted with it and may release before it looks.  Resets
 * never give that picture: shared and update resetters leave nS alone, and
 * an exclusive resetter behind us also moves nX past our ticket.
 */
static bool bk_skipped(struct rdlm_engine *eng, struct bk_req *b, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	int c;

	for (c = 0; c < l->ncls; c++) {
		if (nv(l, v, c) < nv(l, b->last_n, c))
			return true;
		if (c == BK_S && b->cls == BK_S)
			continue;
		if (nv(l, v, c) > mv(l, b->ticket, c))
			return true;
	}
	return false;
}

static void bk_census(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out, u8 kind);

/*
 * No leases: a stalled word is looked into by a census, after twice the
 * lease, then after twice as long each time it found everyone alive, and
 * at once after a member died.
 */
static bool bk_census_due(struct rdlm_engine *eng, struct bk_req *b,
			  struct rdlm_out *out)
{
	u32 n = b->census_n < 6 ? b->census_n : 6;

	return (b->flags & BKF_CNOW) ||
	       out->now - b->stall_since >= (2 * eng->p.lease_ns) << n;
}

/* Algorithm 2: one observation @v of the word, read by a verb issued at @issue. */
static void bk_observe(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v, u64 issue)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	u64 n = bk_nbits(l, v), nw;
	u32 wc, f;
	int c;

	if (bk_skipped(eng, b, v)) {
		if (b->conv == BK_CV_QUEUED) {
			bk_lose(eng, req, out);	/* a hold: it is gone */
			return;
		}
		bk_fail(eng, req, out, -EDEADLK);
		bk_finish(eng, req, out);
		return;
	}
	if (bk_turn(l, b->ticket, v, b->cls, 0)) {
		bk_grant(eng, req, out, v, b->prev_issue);
		return;
	}
	if (n != b->last_n) {
		b->last_n = n;
		b->stall_since = out->now;
	}
	b->prev_issue = issue;
	wc = bk_wait_count(l, b->ticket, v);
	f = wc < 1 ? 1 : wc > eng->p.kmax ? eng->p.kmax : wc;
	if (eng->p.no_lease) {
		if (bk_census_due(eng, b, out)) {
			bk_census(eng, req, out, BK_CS_WAIT);
			return;
		}
	} else if (out->now - b->stall_since >= 2 * eng->p.lease_ns * f) {
		/*
		 * Everyone before us is presumed dead.  An exclusive waiter
		 * skips them and itself, and fails (Algorithm 2, line 15).
		 * A shared or update waiter only skips the classes it waits
		 * for and takes its turn: readers before it are not in its
		 * way, and leaving nS alone keeps resets recognisable.
		 */
		nw = v & ~bk_nbits(l, ~0ULL);
		for (c = 0; c < l->ncls; c++) {
			u32 to = mv(l, b->ticket, c);

			if (b->cls != BK_X && c == BK_S)
				to = nv(l, v, c);
			else if (c == b->cls && b->cls == BK_X)
				to += b->k;
			nw |= (u64)to << l->nsh[c];
		}
		b->phase = BK_RCAS;
		b->cmp = v;
		b->cmp_new = nw;
		bk_post(eng, req, out, RDLM_VERB_CAS, RDLM_VF_RESET, v, nw,
			CK_RCAS);
		return;
	}
	b->phase = BK_WAIT;
	rdlm_engine_arm(eng, out, req, bk_poll_delay(eng, wc));
}

/* Does @b hold a ticket whose units it has not given back? */
static bool bk_claims(const struct bk_req *b)
{
	if (b->flags & BKF_LOST)
		return false;
	switch (b->phase) {
	case BK_WAIT:
	case BK_READ:
	case BK_RCAS:
	case BK_CENSUS:
	case BK_CREAD:
	case BK_HELD:
	case BK_REL:
		return true;
	default:
		return false;
	}
}

/*
 * Count the units this node's requests other than @self hold on word
 * (@home, @slot) ahead of the max counters of @t, per class, not given
 * back yet.  A request whose ticket is still in flight might be ahead:
 * then the count is no good (*busy).
 */
static void bk_count_live(struct rdlm_engine *eng, struct rdlm_req *self,
			  u32 home, u32 slot, u64 t, u32 *live, bool *busy)
{
	const struct bk_layout *l = bk_lay(eng);
	u32 i;

	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct bk_req *b = bk(req);

		if (!req->busy || req == self || req->node != home ||
		    req->slot != slot)
			continue;
		if (b->phase == BK_FA || b->conv == BK_CV_CAS ||
		    b->conv == BK_CV_DOWN) {
			*busy = true;
			continue;
		}
		if (bk_claims(b) && mv(l, b->ticket, b->cls) < mv(l, t, b->cls))
			live[b->cls] += b->k;
	}
}

static u8 bk_census_kind(const struct bk_req *b)
{
	if (b->conv == BK_CV_CENSUS || b->conv == BK_CV_CREAD ||
	    b->conv == BK_CV_CCAS)
		return BK_CS_CONV;
	return b->flags & BKF_CZERO ? BK_CS_ZERO : BK_CS_WAIT;
}

static bool bk_in_census(const struct bk_req *b)
{
	return b->phase == BK_CENSUS || b->conv == BK_CV_CENSUS;
}

/*
 * The counters the census looks ahead of: our ticket; the all-done value
 * (reset to zero); the word as the up-conversion saw it (the exclusive
 * tickets queued behind our share).
 */
static u64 bk_census_target(const struct bk_req *b)
{
	switch (bk_census_kind(b)) {
	case BK_CS_ZERO:
		return b->legit;
	case BK_CS_CONV:
		return b->cv_seen;
	default:
		return b->ticket;
	}
}

/* a census that cannot conclude: look again after a poll */
static void bk_census_abort(struct rdlm_engine *eng, struct rdlm_req *req,
			    struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	b->census_seq++;
	switch (bk_census_kind(b)) {
	case BK_CS_CONV:
		b->conv = BK_CV_POLL;
		rdlm_engine_arm(eng, out, req,
				rdlm_engine_backoff(eng, ++b->attempts));
		break;
	case BK_CS_ZERO:
		b->phase = BK_ZWAIT;
		rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, 1));
		break;
	default:
		b->phase = BK_WAIT;
		rdlm_engine_arm(eng, out, req, bk_poll_delay(eng, 1));
		break;
	}
}

static void bk_census_readword(struct rdlm_engine *eng, struct rdlm_req *req,
			       struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	if (bk_census_kind(b) == BK_CS_CONV)
		b->conv = BK_CV_CREAD;
	else
		b->phase = BK_CREAD;
	bk_post(eng, req, out, RDLM_VERB_READ, 0, 0, 0, CK_CREAD);
}

/*
 * Ask every live member for the units it holds ahead of the census's
 * target (bk_census_target()), of the kind @kind.
 */
static void bk_census(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out, u8 kind)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	struct rdlm_msg m;
	u32 n;

	b->flags &= ~(BKF_CNOW | BKF_CBUSY | BKF_CZERO);
	if (kind == BK_CS_ZERO)
		b->flags |= BKF_CZERO;
	if (kind == BK_CS_CONV)
		b->conv = BK_CV_CENSUS;
	else
		b->phase = BK_CENSUS;
	b->census_seq++;
	b->census_from = 0;
	b->census_wait = 0;
	memset(b->live, 0, sizeof(b->live));
	memset(&m, 0, sizeof(m));
	m.type = BK_M_CENSUS;
	m.slot = req->slot;
	m.arg = req->node;
	m.token = bk_census_target(b) & ~bk_nbits(l, ~0ULL);
	m.reqid = rdlm_req_id(req);
	m.arg2 = b->census_seq;
	for (n = 0; n < eng->p.nr_nodes; n++) {
		if (n == eng->p.node || (eng->down & BIT_ULL(n)))
			continue;
		b->census_wait++;
		bk_send(eng, out, req, n, &m);
	}
	if (!b->census_wait) {
		bk_census_readword(eng, req, out);
		return;
	}
	/* an answer lost with a failed connection: ask again */
	rdlm_engine_arm(eng, out, req, 2 * eng->p.lease_ns);
}

/* A member's count for our census. */
static void bk_census_count(struct rdlm_engine *eng, const struct rdlm_msg *m,
			    struct rdlm_out *out)
{
	struct rdlm_req *req = rdlm_req_lookup(eng, m->reqid);
	const u64 mask = (1ULL << BK_COUNT_BITS) - 1;
	struct bk_req *b;
	int c;

	if (!req)
		return;
	b = bk(req);
	if (!bk_in_census(b) || m->arg2 != b->census_seq ||
	    (b->census_from & BIT_ULL(m->src)) || !b->census_wait)
		return;
	b->census_from |= BIT_ULL(m->src);
	if (m->flags)
		b->flags |= BKF_CBUSY;
	for (c = 0; c < BK_NCLS; c++)
		b->live[c] += (m->arg >> (c * BK_COUNT_BITS)) & mask;
	if (--b->census_wait)
		return;
	if (b->flags & BKF_CBUSY) {
		b->flags |= BKF_CNOW;	/* again soon */
		bk_census_abort(eng, req, out);
		return;
	}
	bk_census_readword(eng, req, out);
}

/* Answer a census: the units of our requests ahead of its ticket. */
static void bk_census_answer(struct rdlm_engine *eng, const struct rdlm_msg *m,
			     struct rdlm_out *out)
{
	u32 live[BK_NCLS] = { 0, 0, 0 };
	struct rdlm_msg r;
	bool busy = false;
	int c;

	bk_count_live(eng, NULL, (u32)m->arg, m->slot, m->token, live, &busy);
	memset(&r, 0, sizeof(r));
	r.type = BK_M_COUNT;
	r.slot = m->slot;
	r.reqid = m->reqid;
	r.arg2 = m->arg2;
	r.flags = busy;
	for (c = 0; c < BK_NCLS; c++)
		r.arg |= (u64)live[c] << (c * BK_COUNT_BITS);
	bk_send(eng, out, NULL, m->src, &r);
}

static void bk_unconverted(struct rdlm_engine *eng, struct rdlm_req *req,
			   int err, struct rdlm_out *out);
static void bk_up_next(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v);

/*
 * Every answer is in and the word reads @v.  When nobody claims a unit
 * ahead of the target in the classes it concerns, every one of them is a
 * dead member's or an orphan of a failed verb: move those n counters to
 * the target, as Algorithm 2's reset does for holders presumed dead.  Safe
 * because a live request ahead that had not released when we read @v was
 * claimed in its node's answer (its ticket was known there, or the answer
 * said busy), and the CAS from @v fails if a release lands since.  Units
 * can only be skipped from the head of a class: n counters are positions,
 * so the live waiter nearest the dead ones repairs the word.  A waiter
 * looks at the classes it waits for; the reset to zero at every class; an
 * up-conversion at the exclusive tickets queued behind our share (none of
 * them can be granted while we hold it).
 */
static void bk_census_read(struct rdlm_engine *eng, struct rdlm_req *req,
			   struct rdlm_out *out, u64 v, u64 issue)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	u8 kind = bk_census_kind(b);
	u64 t = bk_census_target(b), add = 0;
	bool busy = false;
	int c;

	switch (kind) {
	case BK_CS_ZERO:
		if (!bk_overflowed(eng, v)) {
			bk_finish(eng, req, out);	/* someone reset it */
			return;
		}
		break;
	case BK_CS_CONV:
		if ((b->flags & (BKF_CVCANCEL | BKF_CANCEL)) ||
		    bk_up_ok(eng, b, v) || bk_overflowed(eng, v)) {
			b->conv = BK_CV_CAS;	/* as if our CAS saw @v */
			bk_up_next(eng, req, out, v);
			return;
		}
		break;
	default:
		if (bk_skipped(eng, b, v) ||
		    bk_turn(l, b->ticket, v, b->cls, 0)) {
			bk_observe(eng, req, out, v, issue);
			return;
		}
		break;
	}
	bk_count_live(eng, req, req->node, req->slot, t, b->live, &busy);
	if (busy) {
		b->flags |= BKF_CNOW;
		bk_census_abort(eng, req, out);
		return;
	}
	for (c = 0; c < l->ncls; c++) {
		if ((kind == BK_CS_WAIT && !bk_waits_on(b->cls, 0, c)) ||
		    (kind == BK_CS_CONV && c != BK_X))
			continue;
		if (b->live[c]) {
			add = 0;	/* someone alive is ahead */
			break;
		}
		if (nv(l, v, c) < mv(l, t, c))
			add += (u64)(mv(l, t, c) - nv(l, v, c)) << l->nsh[c];
	}
	if (!add) {
		b->census_n++;		/* all alive: look less often */
		b->stall_since = out->now;
		if (kind != BK_CS_WAIT) {
			bk_census_abort(eng, req, out);
			return;
		}
		b->phase = BK_WAIT;
		rdlm_engine_arm(eng, out, req,
				bk_poll_delay(eng, bk_wait_count(l, t, v)));
		return;
	}
	b->cmp = v;
	b->cmp_new = v + add;
	switch (kind) {
	case BK_CS_ZERO:
		b->phase = BK_ZERO;
		bk_post(eng, req, out, RDLM_VERB_CAS, 0, v, v + add, CK_SKIP);
		break;
	case BK_CS_CONV:
		b->conv = BK_CV_CCAS;
		bk_post(eng, req, out, RDLM_VERB_CAS, 0, v, v + add, CK_CCAS);
		break;
	default:
		b->phase = BK_RCAS;
		bk_post(eng, req, out, RDLM_VERB_CAS, 0, v, v + add, CK_CCAS);
		break;
	}
}

static void bk_backoff(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	if (b->flags & BKF_CANCEL) {
		bk_fail(eng, req, out, -ECANCELED);
		bk_finish(eng, req, out);
		return;
	}
	b->phase = BK_BACKOFF;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, ++b->attempts));
}

/*
 * Algorithm 1, lines 6-9: after an FA that met COUNT_MAX was undone, back
 * off, or reset the word to zero when it shows everyone done (n == max) for
 * twice the lease: its ResetFrom holder is then gone.  Only an all-done
 * value is ever reset to zero: an FA not yet undone shows as max > n, so
 * no undo can land on the word after the reset.  A word with dead tickets
 * and nobody behind them is not repaired here (see engines.rst).
 */
static void bk_after_overflow(struct rdlm_engine *eng, struct rdlm_req *req,
			      struct rdlm_out *out)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	if (!(b->flags & BKF_CANCEL) &&
	    bk_all_done(l, b->ticket) == b->ticket &&
	    out->now - b->ovf_since >= 2 * eng->p.lease_ns) {
		b->phase = BK_OCAS;
		bk_post(eng, req, out, RDLM_VERB_CAS, RDLM_VF_RESET, b->ticket,
			0, CK_OCAS);
		return;
	}
	bk_backoff(eng, req, out);
}

/* Algorithm 1: the ticket FA came back with the previous word value. */
static void bk_on_ticket(struct rdlm_engine *eng, struct rdlm_req *req,
			 struct rdlm_out *out, u64 prev)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	u64 n = bk_nbits(l, prev);

	if (bk_overflowed(eng, prev)) {
		rdlm_stat_inc(&eng->stats.overflows);
		if (!(b->flags & BKF_OVF) || n != b->ovf_n) {
			b->ovf_n = n;
			b->ovf_since = out->now;
			b->flags &= ~BKF_ANNOUNCED;	/* new holders */
		}
		b->flags |= BKF_OVF;
		b->ticket = prev;
		b->phase = BK_UNDO;
		/*
		 * we wait as much as a queued ticket does: for every hold on
		 * the word to go (the ResetFrom holder's resets it), and a
		 * holder that caches its lock must hear of us
		 */
		bk_announce(eng, req, out, prev);
		bk_post(eng, req, out, RDLM_VERB_FA, RDLM_VF_DEQUEUE,
			-((u64)b->k << l->msh[b->cls]), 0, CK_UNDO);
		return;
	}
	b->ticket = prev;
	if (mv(l, prev, b->cls) + b->k >= bk_cmax(eng)) {
		b->flags |= BKF_RESETFROM;
		b->reset_from = bk_all_done(l, prev +
					    ((u64)b->k << l->msh[b->cls]));
		b->legit = b->reset_from;
	}
	b->last_n = n;
	b->stall_since = out->now;
	b->prev_issue = b->issue;
	if (bk_turn(l, prev, prev, b->cls, 0)) {
		bk_grant(eng, req, out, prev, b->issue);
		return;
	}
	/*
	 * the FA result is our first look: wait before the first READ.  Told
	 * of us already when the word was at COUNT_MAX?  Those holders may
	 * be gone: the ones of this ticket hear of us anew.
	 */
	b->flags &= ~BKF_ANNOUNCED;
	bk_announce(eng, req, out, prev);
	b->phase = BK_WAIT;
	rdlm_engine_arm(eng, out, req,
			bk_poll_delay(eng, bk_wait_count(l, prev, prev)));
}

/* Update lock held for reading: poll until earlier readers are gone. */
static void bk_on_upgrade_poll(struct rdlm_engine *eng, struct rdlm_req *req,
			       struct rdlm_out *out, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	int c;

	b->flags &= ~BKF_POLLING;
	if (b->phase != BK_HELD || (b->flags & BKF_LOST))
		return;
	for (c = 0; c < l->ncls; c++) {
		if (nv(l, v, c) > mv(l, b->ticket, c) ||
		    nv(l, v, c) < nv(l, b->last_n, c)) {
			/* reset past us: our lease must be over */
			bk_lose(eng, req, out);
			return;
		}
	}
	if (bk_turn(l, b->ticket, v, BK_U, 1)) {
		b->stage = 2;
		rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
				 RDLM_NOTICE_UPGRADED, 0);
	}
	bk_arm_held(eng, req, out, bk_wait_count(l, b->ticket, v));
}

/*
 * Algorithm 3, line 7: CAS to zero, repeated until it succeeds.  We hold the
 * last ticket before COUNT_MAX, so we know the exact all-done value.  If
 * the n counters stop moving for twice the lease, tickets before ours are
 * dead and nobody can queue behind them to reset them: set the n counters
 * to their all-done values ourselves, keeping the max counters as read
 * (increments still to be undone then drain to the all-done value).
 */
static void bk_on_zero(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	u64 n = bk_nbits(l, v);

	if (v == b->reset_from) {
		rdlm_stat_inc(&eng->stats.zero_resets);
		bk_finish(eng, req, out);
		return;
	}
	if (!bk_overflowed(eng, v)) {
		bk_finish(eng, req, out);	/* someone else reset it */
		return;
	}
	if (!b->zero_tries++ || n != b->last_n) {
		b->last_n = n;
		b->stall_since = out->now;
	} else if (eng->p.no_lease) {
		if (bk_census_due(eng, b, out)) {
			bk_census(eng, req, out, BK_CS_ZERO);
			return;
		}
	} else if (n != bk_nbits(l, b->legit) &&
		   out->now - b->stall_since >= 2 * eng->p.lease_ns * eng->p.kmax) {
		b->cmp = v;
		b->phase = BK_ZERO;
		bk_post(eng, req, out, RDLM_VERB_CAS, RDLM_VF_RESET, v,
			(v & ~bk_nbits(l, ~0ULL)) | bk_nbits(l, b->legit),
			CK_SKIP);
		return;
	}
	b->phase = BK_ZWAIT;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, b->zero_tries));
}

static void bk_on_skip(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v)
{
	struct bk_req *b = bk(req);

	if (v == b->cmp) {
		rdlm_stat_inc(&eng->stats.resets);
		b->reset_from = b->legit;
		b->zero_tries = 0;
	}
	b->phase = BK_ZWAIT;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, 1));
}

/* Algorithm 2, lines 16-19: our reset CAS came back. */
static void bk_on_rcas(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v, u64 issue)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	if (v != b->cmp) {
		/* the word moved: that is a fresh observation */
		bk_observe(eng, req, out, v, issue);
		return;
	}
	rdlm_stat_inc(&eng->stats.resets);
	if (b->cls != BK_X) {
		/* our turn now, established by our own CAS */
		b->last_n = bk_nbits(l, b->cmp_new);
		bk_grant(eng, req, out, b->cmp_new, issue);
		return;
	}
	bk_fail(eng, req, out, -EDEADLK);
	if (b->flags & BKF_RESETFROM)
		/* we held the last ticket: nobody else will reset to zero */
		bk_zero(eng, req, out, b->reset_from);
	else
		bk_finish(eng, req, out);
}

/* ---- conversions in place (no_lease) ---- */

static void bk_unconverted(struct rdlm_engine *eng, struct rdlm_req *req,
			   int err, struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	b->conv = BK_CV_NONE;
	b->flags &= ~(BKF_CVCANCEL | BKF_UPPEND);
	if (b->flags & BKF_CANCEL) {
		bk_release(eng, req, out);	/* unlocked meanwhile */
		return;
	}
	rdlm_engine_emit(eng, out, RDLM_ACT_NOTICE, req,
			 RDLM_NOTICE_UNCONVERTED, (u64)(s64)err);
}

/*
 * The up-conversion's CAS from @v: our exclusive ticket and the release of
 * our shared units in one atomic; on a word at COUNT_MAX, a fresh word
 * with only our exclusive ticket (nothing else is left on it).
 */
static void bk_up_cas(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	b->conv = BK_CV_CAS;
	b->cmp = v;
	b->flags &= ~BKF_TOLD;	/* those behind this CAS tell us anew */
	if (bk_overflowed(eng, v))
		b->cmp_new = (u64)b->k << l->msh[BK_X];
	else
		b->cmp_new = v + ((u64)b->k << l->msh[BK_X]) +
			     ((u64)b->k << l->nsh[BK_S]);
	bk_post(eng, req, out, RDLM_VERB_CAS, 0, v, b->cmp_new, CK_UPCAS);
}

static void bk_up_poll(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	/* on a word at COUNT_MAX the other holds go first: tell them */
	if (bk_overflowed(eng, b->cv_seen))
		bk_announce(eng, req, out, b->cv_seen);
	b->conv = BK_CV_POLL;
	rdlm_engine_arm(eng, out, req, rdlm_engine_backoff(eng, ++b->attempts));
}

static void bk_up_start(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	b->attempts = 0;
	b->census_n = 0;
	b->stall_since = out->now;
	b->flags &= ~BKF_ANNOUNCED;	/* a new wait: announced anew */
	if (b->cls == BK_X) {
		/* a down-conversion kept the word exclusive: granted now */
		b->conv = BK_CV_POLL;
		rdlm_engine_arm(eng, out, req, 0);
		return;
	}
	/* with luck, nobody else is on the word */
	bk_up_cas(eng, req, out, bk_quiet(bk_lay(eng), b));
}

/* the up-conversion could not take its ticket on word @v: what next */
static void bk_up_next(struct rdlm_engine *eng, struct rdlm_req *req,
		       struct rdlm_out *out, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	bool fresh = bk_overflowed(eng, v);
	bool at_once = bk_up_ok(eng, b, v) &&
		       (fresh || nv(l, v, BK_S) + b->k == mv(l, v, BK_S));

	b->cv_seen = v;
	if (b->flags & (BKF_CVCANCEL | BKF_CANCEL))
		bk_unconverted(eng, req, -ECANCELED, out);
	else if ((b->flags & BKF_CVNOQ) && !at_once)
		bk_unconverted(eng, req, -EAGAIN, out);
	else if (bk_up_ok(eng, b, v))
		bk_up_cas(eng, req, out, v);
	else if (!fresh && !(b->flags & BKF_CVNODL))
		/* an exclusive waits for our share: fs/dlm's -EDEADLK */
		bk_unconverted(eng, req, -EDEADLK, out);
	else
		bk_up_poll(eng, req, out);	/* the callers resolve it */
}

/* the up-conversion's CAS came back with the word's value @old */
static void bk_on_upcas(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out, u64 old, u64 issue)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);
	bool fresh = bk_overflowed(eng, old);
	u64 v = b->cmp_new;

	if (old != b->cmp) {
		bk_up_next(eng, req, out, old);
		return;
	}
	/* our exclusive ticket is taken, our shared units given back */
	b->conv = BK_CV_QUEUED;
	b->cls = BK_X;
	b->ticket = fresh ? 0 : old;
	b->flags &= ~(BKF_RESETFROM | BKF_BLOCKING | BKF_ANNOUNCED);
	if (mv(l, b->ticket, BK_X) + b->k >= bk_cmax(eng)) {
		b->flags |= BKF_RESETFROM;
		b->reset_from = bk_all_done(l, v);
		b->legit = b->reset_from;
	}
	b->last_n = bk_nbits(l, v);
	b->stall_since = out->now;
	b->prev_issue = issue;
	b->census_n = 0;
	if (bk_turn(l, b->ticket, v, BK_X, 0)) {
		bk_grant(eng, req, out, v, issue);
		return;
	}
	bk_announce(eng, req, out, v);
	b->phase = BK_WAIT;
	rdlm_engine_arm(eng, out, req,
			bk_poll_delay(eng, bk_wait_count(l, b->ticket, v)));
}

/*
 * The down-conversion's CAS from @v: a shared ticket and the release of
 * our exclusive units in one atomic, only while no exclusive waits behind
 * us (it would come before our shared ticket).
 */
static bool bk_down_ok(struct rdlm_engine *eng, const struct bk_req *b, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);

	return !bk_overflowed(eng, v) && !(b->flags & BKF_RESETFROM) &&
	       mv(l, v, BK_X) == mv(l, b->ticket, BK_X) + b->k;
}

static void bk_down_cas(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out, u64 v)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	b->conv = BK_CV_DOWN;
	b->cmp = v;
	b->cmp_new = v + ((u64)b->k << l->msh[BK_S]) +
		     ((u64)b->k << l->nsh[BK_X]);
	bk_post(eng, req, out, RDLM_VERB_CAS, 0, v, b->cmp_new, CK_DOWNCAS);
}

static void bk_on_downcas(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out, u64 old)
{
	const struct bk_layout *l = bk_lay(eng);
	struct bk_req *b = bk(req);

	if (old != b->cmp && bk_down_ok(eng, b, old)) {
		bk_down_cas(eng, req, out, old);
		return;
	}
	b->conv = BK_CV_NONE;
	if (old == b->cmp) {
		/* a shared holder now, granted with the release */
		b->cls = BK_S;
		b->ticket = old;
		b->flags &= ~(BKF_BLOCKING | BKF_TOLD);
		if (mv(l, old, BK_S) + b->k >= bk_cmax(eng)) {
			b->flags |= BKF_RESETFROM;
			b->reset_from = bk_all_done(l, b->cmp_new);
			b->legit = b->reset_from;
		}
	}
	/* else an exclusive waits behind us: the hold stays exclusive */
	if (b->flags & BKF_CANCEL) {
		b->flags &= ~BKF_UPPEND;
		bk_release(eng, req, out);
	} else if ((b->flags & BKF_UPPEND) && (b->flags & BKF_CVCANCEL)) {
		bk_unconverted(eng, req, -ECANCELED, out);
	} else if (b->flags & BKF_UPPEND) {
		b->flags &= ~BKF_UPPEND;
		bk_up_start(eng, req, out);
	}
}

/*
 * &rdlm_engine_ops.convert (no_lease only): shared to exclusive and back in
 * place.  Shared again while an up-conversion waits cancels it, unless its
 * ticket is taken (then it is granted).
 */
static int bk_convert(struct rdlm_engine *eng, struct rdlm_req *req, u8 mode,
		      u8 flags, struct rdlm_out *out)
{
	struct bk_req *b = bk(req);
	bool held = b->phase == BK_HELD || b->conv == BK_CV_QUEUED;

	if (!eng->p.no_lease)
		return -EOPNOTSUPP;
	if (!held || (b->flags & (BKF_LOST | BKF_CANCEL)) ||
	    mode >= RDLM_MODE_UP)
		return -EINVAL;
	if ((b->conv != BK_CV_NONE && b->conv != BK_CV_DOWN) ||
	    (b->flags & BKF_UPPEND)) {
		if (mode != req->mode)
			return -EBUSY;
		b->flags |= BKF_CVCANCEL;
		if (b->conv == BK_CV_POLL || b->conv == BK_CV_CENSUS)
			rdlm_engine_arm(eng, out, req, 0);	/* answer soon */
		return 0;
	}
	if (mode == req->mode)
		return -EINVAL;
	if (mode == RDLM_MODE_EX) {
		b->flags &= ~(BKF_CVCANCEL | BKF_CVNOQ | BKF_CVNODL);
		if (flags & RDLM_RF_NOQUEUE)
			b->flags |= BKF_CVNOQ;
		if (flags & RDLM_RF_NODLCKWT)
			b->flags |= BKF_CVNODL;
		if (b->conv == BK_CV_DOWN)
			b->flags |= BKF_UPPEND;
		else
			bk_up_start(eng, req, out);
		return 0;
	}
	req->mode = RDLM_MODE_SH;
	if (b->cls == BK_X && !(b->flags & BKF_RESETFROM))
		bk_down_cas(eng, req, out, bk_quiet(bk_lay(eng), b));
	return 0;
}

static void bk_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			struct rdlm_out *out)
{
	struct rdlm_req *req = cqe->req;
	struct bk_req *b;
	u64 issue, v;

	if (!req)
		return;
	b = bk(req);
	if (b->outstanding)
		b->outstanding--;
	issue = b->issue;
	if (b->phase == BK_FINISH) {
		bk_finish(eng, req, out);
		return;
	}
	if (cqe->cookie == CK_CENSUS) {
		/* a census question that may not have arrived */
		if (cqe->status && bk_in_census(b))
			bk_census_abort(eng, req, out);
		return;
	}
	if (cqe->status && (b->conv == BK_CV_CREAD || b->conv == BK_CV_CCAS)) {
		/* the hold is untouched (the CAS only skips dead tickets) */
		b->conv = BK_CV_CENSUS;
		bk_census_abort(eng, req, out);
		return;
	}
	if (cqe->status) {
		/*
		 * Connection lost: the verb may or may not have executed.  A
		 * hold (or conversion) whose CAS may have moved the word has
		 * no tickets a census would count.
		 */
		if (b->phase == BK_HELD || b->conv == BK_CV_QUEUED) {
			b->flags &= ~BKF_POLLING;
			bk_lose(eng, req, out);
			return;
		}
		if (b->phase != BK_REL && b->phase != BK_ZERO)
			bk_fail(eng, req, out, -EIO);
		bk_finish(eng, req, out);
		return;
	}
	switch (cqe->cookie) {
	case CK_FA:
		if (b->phase == BK_FA)
			bk_on_ticket(eng, req, out, cqe->value);
		break;
	case CK_UNDO:
		if (b->phase == BK_UNDO)
			bk_after_overflow(eng, req, out);
		break;
	case CK_OCAS:
		if (b->phase != BK_OCAS)
			break;
		if (cqe->value == b->ticket) {
			rdlm_stat_inc(&eng->stats.zero_resets);
			b->flags &= ~BKF_OVF;
		}
		bk_backoff(eng, req, out);
		break;
	case CK_READ:
		if (b->phase == BK_READ)
			bk_observe(eng, req, out, cqe->value, issue);
		else if (b->phase == BK_HELD)
			bk_on_upgrade_poll(eng, req, out, cqe->value);
		break;
	case CK_RCAS:
		if (b->phase == BK_RCAS)
			bk_on_rcas(eng, req, out, cqe->value, issue);
		break;
	case CK_REL:
		if (b->phase != BK_REL)
			break;
		if (b->flags & BKF_RESETFROM)
			bk_zero(eng, req, out, b->reset_from);
		else
			bk_finish(eng, req, out);
		break;
	case CK_ZERO:
		if (b->phase == BK_ZERO)
			bk_on_zero(eng, req, out, cqe->value);
		break;
	case CK_CREAD:
		if (b->phase == BK_CREAD || b->conv == BK_CV_CREAD)
			bk_census_read(eng, req, out, cqe->value, issue);
		break;
	case CK_CCAS:
		if (b->phase != BK_RCAS && b->conv != BK_CV_CCAS)
			break;
		if (cqe->value == b->cmp)
			rdlm_stat_inc(&eng->stats.resets);
		v = cqe->value == b->cmp ? b->cmp_new : cqe->value;
		if (b->conv == BK_CV_CCAS) {
			b->conv = BK_CV_CAS;	/* as if our CAS saw @v */
			bk_up_next(eng, req, out, v);
		} else {
			bk_observe(eng, req, out, v, issue);
		}
		break;
	case CK_UPCAS:
		if (b->phase == BK_HELD && b->conv == BK_CV_CAS)
			bk_on_upcas(eng, req, out, cqe->value, issue);
		break;
	case CK_DOWNCAS:
		if (b->phase == BK_HELD && b->conv == BK_CV_DOWN)
			bk_on_downcas(eng, req, out, cqe->value);
		break;
	case CK_SKIP:
		if (b->phase == BK_ZERO)
			bk_on_skip(eng, req, out, cqe->value);
		break;
	default:
		break;
	}
}

static int bk_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
		     struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	if (b->phase == BK_HELD && !(b->flags & BKF_LOST)) {
		switch (b->conv) {
		case BK_CV_CAS:
		case BK_CV_DOWN:
		case BK_CV_CREAD:
		case BK_CV_CCAS:
			/* given back once the verb in flight is answered */
			b->flags |= BKF_CANCEL;
			return 0;
		case BK_CV_POLL:
		case BK_CV_CENSUS:
			b->conv = BK_CV_NONE;
			break;
		default:
			break;
		}
		b->flags &= ~(BKF_UPPEND | BKF_CVCANCEL);
	}
	switch (b->phase) {
	case BK_HELD:
		if (!(b->flags & BKF_LOST) && out->now >= b->lease_end)
			bk_lose(eng, req, out);
		if (b->flags & BKF_LOST) {
			/* Algorithm 3, line 1: no release after the lease */
			bk_disarm(req);
			bk_abandon(eng, req, out);
		} else {
			bk_release(eng, req, out);
		}
		return 0;
	case BK_BACKOFF:
		b->flags |= BKF_CANCEL;
		bk_disarm(req);
		bk_backoff(eng, req, out);	/* fails it at once */
		return 0;
	case BK_FA:
	case BK_UNDO:
	case BK_OCAS:
	case BK_WAIT:
	case BK_READ:
	case BK_RCAS:
	case BK_CENSUS:
	case BK_CREAD:
		/* a ticket may be ours: wait for the turn, then give it back */
		b->flags |= BKF_CANCEL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* an up-conversion's backoff is over */
static void bk_up_timer(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out)
{
	struct bk_req *b = bk(req);

	if (b->flags & BKF_CVCANCEL) {
		bk_unconverted(eng, req, -ECANCELED, out);
	} else if (b->cls == BK_X) {
		/* kept exclusive by a down-conversion: nothing to wait for */
		b->conv = BK_CV_NONE;
		b->flags &= ~BKF_CVCANCEL;
		req->mode = RDLM_MODE_EX;
		rdlm_engine_emit(eng, out, RDLM_ACT_GRANT, req, (s64)U64_MAX,
				 RDLM_MODE_EX);
	} else if (b->cls == BK_S && !bk_overflowed(eng, b->cv_seen) &&
		   bk_census_due(eng, b, out)) {
		/* an exclusive behind our share for long: is it alive? */
		bk_census(eng, req, out, BK_CS_CONV);
	} else {
		bk_up_cas(eng, req, out, bk_quiet(bk_lay(eng), b));
	}
}

static void bk_timer(struct rdlm_engine *eng, struct rdlm_req *req,
		     u64 cookie, struct rdlm_out *out)
{
	struct bk_req *b;

	if (!req || cookie != req->timer_cookie) {
		rdlm_stat_inc(&eng->stats.stale);
		return;
	}
	b = bk(req);
	switch (b->phase) {
	case BK_BACKOFF:
		if (b->flags & BKF_CANCEL)
			bk_backoff(eng, req, out);
		else
			bk_ticket(eng, req, out);
		break;
	case BK_WAIT:
		b->phase = BK_READ;
		bk_post(eng, req, out, RDLM_VERB_READ, 0, 0, 0, CK_READ);
		break;
	case BK_HELD:
		if (b->conv == BK_CV_POLL) {
			bk_up_timer(eng, req, out);
		} else if (b->conv == BK_CV_CENSUS) {
			if (b->flags & BKF_CVCANCEL)
				bk_unconverted(eng, req, -ECANCELED, out);
			else
				bk_census(eng, req, out, BK_CS_CONV);
		} else if (out->now >= b->lease_end) {
			bk_lose(eng, req, out);
		} else if (b->stage == 1 && !(b->flags & BKF_POLLING)) {
			b->flags |= BKF_POLLING;
			bk_post(eng, req, out, RDLM_VERB_READ, 0, 0, 0, CK_READ);
		}
		break;
	case BK_CENSUS:
		bk_census(eng, req, out, bk_census_kind(b));
		break;
	case BK_ZWAIT:
		b->phase = BK_ZERO;
		bk_post(eng, req, out, RDLM_VERB_CAS, RDLM_VF_RESET,
			b->reset_from, 0, CK_ZERO);
		break;
	default:
		break;
	}
}

/*
 * &rdlm_engine_ops.member_down: no verb to or from @node is in flight any
 * more.  Requests on its words lose them; without leases, every waiter
 * elsewhere takes a census at its next look, and one under way starts
 * again without @node.
 */
static void bk_member_down(struct rdlm_engine *eng, u32 node, u32 epoch,
			   struct rdlm_out *out)
{
	u32 i;

	if (node >= eng->p.nr_nodes)
		return;
	if (node < 64)
		eng->down |= BIT_ULL(node);
	for (i = 0; i < eng->p.nr_reqs; i++) {
		struct rdlm_req *req = &eng->reqs[i];
		struct bk_req *b = bk(req);

		if (!req->busy || b->phase == BK_IDLE || b->phase == BK_FINISH)
			continue;
		if (req->node == node) {
			bk_disarm(req);
			if (b->phase == BK_HELD || b->conv == BK_CV_QUEUED) {
				bk_lose(eng, req, out);
			} else if (b->phase == BK_WAIT ||
				   b->phase == BK_BACKOFF ||
				   b->phase == BK_CENSUS) {
				bk_fail(eng, req, out, -EIO);
				bk_finish(eng, req, out);
			} else if (b->phase == BK_ZWAIT) {
				bk_finish(eng, req, out);
			}
			/* the others' verbs to it have failed already */
			continue;
		}
		if (!eng->p.no_lease)
			continue;
		b->flags |= BKF_CNOW;
		if (bk_in_census(b))
			bk_census(eng, req, out, bk_census_kind(b));
	}
}

/* &rdlm_engine_ops.member_join: @node is back with nothing on any word */
static void bk_member_join(struct rdlm_engine *eng, u32 node,
			   struct rdlm_out *out)
{
	if (node < 64)
		eng->down &= ~BIT_ULL(node);
}

const struct rdlm_engine_ops rdlm_bakery_ops = {
	.name = "bakery",
	.many_per_word = true,
	.grant_on_first = true,
	.convert_no_lease = true,
	.lock = bk_lock,
	.unlock = bk_unlock,
	.convert = bk_convert,
	.complete = bk_complete,
	.timer = bk_timer,
	.recv = bk_recv,
	.member_down = bk_member_down,
	.member_join = bk_member_join,
};
