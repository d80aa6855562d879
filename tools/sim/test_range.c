// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the range engines (rangeseg, rangecomb).  Included by
 * check.c after its harness (CHECK, LEASE); not built on its own.
 *
 * A small deterministic cluster: NN engine instances (node i = XN[i]), one
 * lock table per node, a FIFO of posted verbs that pump() executes in
 * order (FA/CAS/READ on the table, SEND handed to the target's ->recv()),
 * completing each at its sender, and a list of armed timers that
 * advance() fires.  Every GRANT, FAIL, NOTICE and DONE is recorded per
 * request; DONE frees the request.
 */
#define NN	3
#define RQ	48	/* requests per node */
#define NSLOT	64

static struct rdlm_engine XN[NN];
static u64 xtab[NN][NSLOT];
static u64 xnow;
static u32 xcur;

struct xrec {
	int granted, done, lost, blocking;
	int err;
	u64 grant_seq;
};

static struct xrec xrec[NN][RQ];
static u64 xgrant_seq;

struct xpost {
	u32 node;
	struct rdlm_verb v;
};

#define XQ	512
static struct xpost xq[XQ];
static u32 xq_head, xq_tail;

struct xtimer {
	u32 node;
	struct rdlm_req *req;
	u64 cookie, at;
	bool live;
};

#define XT	256
static struct xtimer xt[XT];
static u64 xverbs[RDLM_VERB_NR];
static u64 xmsgs[64];

static void x_emit(struct rdlm_out *out, const struct rdlm_action *a)
{
	struct xrec *r = a->req ? &xrec[xcur][a->req->idx] : NULL;
	u32 i;

	switch (a->kind) {
	case RDLM_ACT_POST:
		if (xq_tail - xq_head >= XQ)
			abort();
		xq[xq_tail % XQ].node = xcur;
		xq[xq_tail % XQ].v = a->verb;
		xq_tail++;
		xverbs[a->verb.kind]++;
		if (a->verb.kind == RDLM_VERB_SEND && a->verb.msg.type < 64)
			xmsgs[a->verb.msg.type]++;
		break;
	case RDLM_ACT_TIMER:
		for (i = 0; i < XT && xt[i].live; i++)
			;
		if (i == XT)
			abort();
		xt[i].live = true;
		xt[i].node = xcur;
		xt[i].req = a->req;
		xt[i].cookie = a->cookie;
		xt[i].at = out->now + a->delay_ns;
		break;
	case RDLM_ACT_GRANT:
		r->granted++;
		r->grant_seq = ++xgrant_seq;
		break;
	case RDLM_ACT_FAIL:
		r->err = a->err;
		break;
	case RDLM_ACT_NOTICE:
		if (a->notice == RDLM_NOTICE_LOST)
			r->lost++;
		else if (a->notice == RDLM_NOTICE_BLOCKING)
			r->blocking++;
		break;
	case RDLM_ACT_DONE:
		r->done++;
		rdlm_req_free(&XN[xcur], a->req);
		break;
	default:
		break;
	}
}

static struct rdlm_out x_out(u32 node)
{
	struct rdlm_out o = { .now = xnow, .emit = x_emit };

	xcur = node;
	return o;
}

static void x_setup(const struct rdlm_engine_ops *ops, u32 seg_units,
		    u32 home_entries)
{
	struct rdlm_engine_params p;
	u32 i;

	memset(xtab, 0, sizeof(xtab));
	memset(xrec, 0, sizeof(xrec));
	memset(xt, 0, sizeof(xt));
	memset(xverbs, 0, sizeof(xverbs));
	memset(xmsgs, 0, sizeof(xmsgs));
	xq_head = 0;
	xq_tail = 0;
	xnow = 0;
	xgrant_seq = 0;
	for (i = 0; i < NN; i++) {
		memset(&p, 0, sizeof(p));
		rdlm_engine_default_params(&p);
		p.node = i;
		p.nr_nodes = NN;
		p.nr_slots = NSLOT;
		p.nr_reqs = RQ;
		p.home_entries = home_entries;
		p.lease_ns = LEASE;
		p.seg_units = seg_units;
		p.seed = 5 + i;
		if (rdlm_engine_init(&XN[i], ops, &p))
			abort();
	}
}

static void x_fini(void)
{
	u32 i;

	for (i = 0; i < NN; i++)
		rdlm_engine_fini(&XN[i]);
}

static u32 x_free(u32 node)
{
	u32 i, n = 0;

	for (i = 0; i < RQ; i++)
		n += !XN[node].reqs[i].busy;
	return n;
}

/* lock [start, end] of the resource at (home, slot) from @node */
static struct rdlm_req *x_lock(u32 node, u32 home, u32 slot, u8 mode,
			       u64 start, u64 end, u8 flags)
{
	struct rdlm_req *r = rdlm_req_alloc(&XN[node]);
	struct rdlm_out o = x_out(node);
	int ret;

	r->node = home;
	r->slot = slot;
	r->mode = mode;
	r->start = start;
	r->end = end;
	r->flags = flags;
	r->user = 0x1000 + r->idx;
	memset(&xrec[node][r->idx], 0, sizeof(xrec[node][r->idx]));
	ret = XN[node].ops->lock(&XN[node], r, &o);
	if (ret) {
		xrec[node][r->idx].err = ret;
		rdlm_req_free(&XN[node], r);
	}
	return r;
}

static int x_unlock(u32 node, struct rdlm_req *r)
{
	struct rdlm_out o = x_out(node);

	return XN[node].ops->unlock(&XN[node], r, &o);
}

static struct xrec *R(u32 node, struct rdlm_req *r)
{
	return &xrec[node][r->idx];
}

/* execute the oldest posted verb; @status != 0 fails it (not executed) */
static bool x_pump_one(int status)
{
	struct xpost p;
	struct rdlm_cqe c;
	struct rdlm_rx rx;
	struct rdlm_out o;
	u64 old = 0;

	if (xq_head == xq_tail)
		return false;
	p = xq[xq_head++ % XQ];
	if (!status && p.v.kind == RDLM_VERB_SEND) {
		memset(&rx, 0, sizeof(rx));
		rx.kind = RDLM_VERB_SEND;
		rx.src = p.node;
		rx.msg = p.v.msg;
		o = x_out(p.v.node);
		XN[p.v.node].ops->recv(&XN[p.v.node], &rx, &o);
	} else if (!status) {
		old = xtab[p.v.node][p.v.slot];
		xtab[p.v.node][p.v.slot] = rdlm_word_apply(old, p.v.kind,
							   p.v.arg0, p.v.arg1);
	}
	memset(&c, 0, sizeof(c));
	c.req = p.v.req;
	c.cookie = p.v.cookie;
	c.kind = p.v.kind;
	c.status = status;
	c.value = old;
	o = x_out(p.node);
	XN[p.node].ops->complete(&XN[p.node], &c, &o);
	return true;
}

static void x_pump(void)
{
	int n = 0;

	while (x_pump_one(0))
		if (++n > 100000)
			abort();
}

/* move the clock to @t, firing due timers (and pumping) in time order */
static void x_advance(u64 t)
{
	struct rdlm_out o;
	u32 i, best;

	x_pump();
	for (;;) {
		best = XT;
		for (i = 0; i < XT; i++)
			if (xt[i].live && xt[i].at <= t &&
			    (best == XT || xt[i].at < xt[best].at))
				best = i;
		if (best == XT)
			break;
		xt[best].live = false;
		if (xt[best].at > xnow)
			xnow = xt[best].at;
		o = x_out(xt[best].node);
		XN[xt[best].node].ops->timer(&XN[xt[best].node], xt[best].req,
					     xt[best].cookie, &o);
		x_pump();
	}
	if (t > xnow)
		xnow = t;
}

static u32 x_queued(void)
{
	return xq_tail - xq_head;
}

static const struct rdlm_verb *x_peek(u32 i)
{
	return i < x_queued() ? &xq[(xq_head + i) % XQ].v : NULL;
}

/* bakery word, four 16-bit fields: nX nS maxX maxS */
#define XNX(w)	((u32)((w) >> 48) & 0xffff)
#define XMX(w)	((u32)((w) >> 16) & 0xffff)

/* ---- rangeseg ---- */

static void t_rs_basic(void)
{
	const struct rdlm_verb *v;
	struct rdlm_req *a, *b;
	u32 i;

	/* segments of 16 units; resource at home 1, slots 0.. */
	x_setup(&rdlm_rangeseg_ops, 16, 0);
	CHECK(rdlm_engine_find("rangeseg") == &rdlm_rangeseg_ops);
	a = x_lock(0, 1, 4, RDLM_MODE_EX, 0, 40, 0);	/* segments 0-2 */
	/* ascending, one at a time: only segment 0's ticket FA is out */
	for (i = 0; i < 3; i++) {
		CHECK(x_queued() == 1);
		v = x_peek(0);
		CHECK(v && v->kind == RDLM_VERB_FA && v->slot == 4 + i &&
		      v->node == 1);
		CHECK(v && v->req != a && v->req->user == a->user);
		CHECK(!R(0, a)->granted);
		x_pump_one(0);
	}
	CHECK(R(0, a)->granted == 1 && x_queued() == 0);
	CHECK(XMX(xtab[1][4]) == 1 && XMX(xtab[1][6]) == 1 && !xtab[1][7]);
	CHECK(x_free(0) == RQ - 4);
	/* release: one FA per segment, DONE after the last one only */
	CHECK(x_unlock(0, a) == 0);
	CHECK(x_queued() == 3);
	x_pump_one(0);
	x_pump_one(0);
	CHECK(!R(0, a)->done);
	x_pump_one(0);
	CHECK(R(0, a)->done == 1 && x_free(0) == RQ);
	CHECK(XNX(xtab[1][4]) == 1 && XNX(xtab[1][6]) == 1);

	/* readers on overlapping ranges are granted together */
	a = x_lock(0, 1, 4, RDLM_MODE_SH, 0, 40, 0);
	b = x_lock(2, 1, 4, RDLM_MODE_SH, 20, 60, 0);
	x_pump();
	CHECK(R(0, a)->granted == 1 && R(2, b)->granted == 1);
	x_unlock(0, a);
	x_unlock(2, b);
	x_pump();
	CHECK(R(0, a)->done && R(2, b)->done);

	/* writers on disjoint segments are granted together ... */
	a = x_lock(0, 1, 4, RDLM_MODE_EX, 0, 15, 0);
	b = x_lock(2, 1, 4, RDLM_MODE_EX, 16, 31, 0);
	x_pump();
	CHECK(R(0, a)->granted && R(2, b)->granted);
	x_unlock(0, a);
	x_unlock(2, b);
	x_pump();
	/* ... disjoint ranges in one segment are not (false conflict) */
	a = x_lock(0, 1, 4, RDLM_MODE_EX, 0, 5, 0);
	b = x_lock(2, 1, 4, RDLM_MODE_EX, 10, 15, 0);
	x_advance(xnow + 100000);
	CHECK(R(0, a)->granted && !R(2, b)->granted);
	x_unlock(0, a);
	x_advance(xnow + 100000);
	CHECK(R(2, b)->granted);
	x_unlock(2, b);
	x_pump();

	/* refused: too many segments, beyond the table, update mode */
	a = x_lock(0, 1, 4, RDLM_MODE_EX, 0, 16 * 40, 0);
	CHECK(R(0, a)->err == -E2BIG);
	a = x_lock(0, 1, NSLOT - 2, RDLM_MODE_EX, 0, 40, 0);
	CHECK(R(0, a)->err == -EINVAL);
	a = x_lock(0, 1, 0, RDLM_MODE_UP, 0, 4, 0);
	CHECK(R(0, a)->err == -EOPNOTSUPP);
	CHECK(x_free(0) == RQ && x_queued() == 0);
	x_fini();
}

static void t_rs_conflict(void)
{
	struct rdlm_req *a, *b;
	int mode;

	x_setup(&rdlm_rangeseg_ops, 16, 0);
	/* a writer blocks an overlapping reader, and a reader a writer */
	for (mode = 0; mode < 2; mode++) {
		a = x_lock(0, 1, 0, mode ? RDLM_MODE_SH : RDLM_MODE_EX,
			   0, 20, 0);
		x_pump();
		CHECK(R(0, a)->granted);
		b = x_lock(2, 1, 0, mode ? RDLM_MODE_EX : RDLM_MODE_SH,
			   10, 30, 0);
		x_advance(xnow + LEASE / 2);
		CHECK(!R(2, b)->granted);
		x_unlock(0, a);
		x_advance(xnow + LEASE / 4);
		CHECK(R(2, b)->granted && R(0, a)->done);
		x_unlock(2, b);
		x_pump();
		CHECK(R(2, b)->done);
	}
	CHECK(x_free(0) == RQ && x_free(2) == RQ);
	x_fini();
}

/*
 * A trylock fails with -EAGAIN at the first segment that was not free when
 * its ticket was taken, and gives back the segments it held at once.
 */
static void t_rs_trylock(void)
{
	struct rdlm_req *a, *b, *c;

	x_setup(&rdlm_rangeseg_ops, 16, 0);
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 16, 31, 0);	/* segment 1 */
	x_pump();
	CHECK(R(0, a)->granted);
	/* segments 0-2: 0 is free and taken, 1 is a's */
	b = x_lock(2, 1, 0, RDLM_MODE_EX, 0, 40, RDLM_RF_NOQUEUE);
	x_pump();
	CHECK(!R(2, b)->granted && R(2, b)->err == -EAGAIN);
	/* segment 0 went back: a trylock of it alone is granted */
	c = x_lock(2, 1, 0, RDLM_MODE_EX, 0, 15, RDLM_RF_NOQUEUE);
	x_pump();
	CHECK(R(2, c)->granted && !R(2, c)->err);
	x_unlock(2, c);
	x_unlock(0, a);
	/* b's ticket of segment 1 goes back at its turn */
	x_advance(xnow + LEASE / 4);
	CHECK(R(2, b)->done && R(2, c)->done && R(0, a)->done);
	CHECK(x_free(0) == RQ && x_free(2) == RQ);
	x_fini();
}

static void t_rs_failure(void)
{
	struct rdlm_req *a, *b;

	x_setup(&rdlm_rangeseg_ops, 16, 0);
	/* segment 1's ticket FA fails: range fails, segment 0 released */
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 47, 0);
	x_pump_one(0);				/* segment 0 granted */
	CHECK(x_queued() == 1 && x_peek(0)->slot == 1);
	x_pump_one(-EIO);			/* segment 1: fabric error */
	CHECK(R(0, a)->err == -EIO && !R(0, a)->granted);
	x_pump();
	CHECK(XNX(xtab[1][0]) == 1);		/* released */
	CHECK(!xtab[1][2]);			/* never asked for */
	CHECK(R(0, a)->done == 1 && x_free(0) == RQ);

	/* a dead holder on segment 1: lease of segment 0 runs out first */
	memset(xtab, 0, sizeof(xtab));
	xtab[1][1] = 1ULL << 16;		/* maxX 1, never released */
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 47, 0);
	x_advance(xnow + 3 * LEASE);
	CHECK(R(0, a)->err == -ETIMEDOUT && !R(0, a)->granted);
	CHECK(!xtab[1][2]);
	CHECK(R(0, a)->done == 1 && x_free(0) == RQ);

	/* a held range's lease runs out: one NOTICE LOST, no release FA */
	memset(xtab, 0, sizeof(xtab));
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 47, 0);
	x_pump();
	CHECK(R(0, a)->granted == 1 && !R(0, a)->lost);
	x_advance(xnow + 2 * LEASE);
	CHECK(R(0, a)->lost == 1);		/* three segments, one notice */
	CHECK(x_unlock(0, a) == 0);
	x_pump();
	CHECK(R(0, a)->done == 1 && x_free(0) == RQ);
	CHECK(!XNX(xtab[1][0]) && !XNX(xtab[1][2]));	/* abandoned */

	/* cancel: held segments go at once, the range fails -ECANCELED */
	memset(xtab, 0, sizeof(xtab));
	b = x_lock(2, 1, 0, RDLM_MODE_EX, 16, 31, 0);	/* segment 1 */
	x_pump();
	CHECK(R(2, b)->granted);
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 47, 0);
	x_advance(xnow + 20000);
	CHECK(!R(0, a)->granted && XMX(xtab[1][0]) == 1);
	CHECK(x_unlock(0, a) == 0);
	x_pump();
	CHECK(XNX(xtab[1][0]) == 1);		/* segment 0 given back */
	x_unlock(2, b);
	x_advance(xnow + 100000);
	CHECK(R(0, a)->err == -ECANCELED && !R(0, a)->granted);
	CHECK(R(0, a)->done == 1 && !xtab[1][2]);
	CHECK(XNX(xtab[1][1]) == 2);		/* its turn, given back */
	CHECK(x_free(0) == RQ && x_free(2) == RQ);
	x_fini();
}

/* ---- rangecomb ---- */

static void t_rc_basic(void)
{
	struct rdlm_req *a, *b, *c;

	x_setup(&rdlm_rangecomb_ops, 0, 0);
	CHECK(rdlm_engine_find("rangecomb") == &rdlm_rangecomb_ops);
	/* one LOCK, one GRANT, one UNLOCK */
	a = x_lock(0, 1, 2, RDLM_MODE_EX, 0, 100, 0);
	CHECK(x_queued() == 1 && x_peek(0)->msg.type == RDLM_MSG_LOCK &&
	      x_peek(0)->msg.token == 0 && x_peek(0)->msg.arg == 100);
	x_pump();
	CHECK(R(0, a)->granted == 1);
	x_unlock(0, a);
	x_pump();
	CHECK(R(0, a)->done == 1);
	CHECK(xverbs[RDLM_VERB_SEND] == 3 && xmsgs[RDLM_MSG_GRANT] == 1);

	/* readers together; a writer waits for the overlapping reader */
	a = x_lock(0, 1, 2, RDLM_MODE_SH, 0, 100, 0);
	b = x_lock(2, 1, 2, RDLM_MODE_SH, 50, 150, 0);
	c = x_lock(0, 1, 2, RDLM_MODE_EX, 150, 150, 0);
	x_pump();
	CHECK(R(0, a)->granted && R(2, b)->granted && !R(0, c)->granted);
	CHECK(R(2, b)->blocking == 1 && !R(0, a)->blocking);
	x_unlock(0, a);
	x_pump();
	CHECK(!R(0, c)->granted);
	x_unlock(2, b);
	x_pump();
	CHECK(R(0, c)->granted);
	/* a reader waits for the overlapping writer; disjoint writers don't */
	a = x_lock(2, 1, 2, RDLM_MODE_SH, 100, 200, 0);
	b = x_lock(2, 1, 2, RDLM_MODE_EX, 201, 400, 0);
	x_pump();
	CHECK(!R(2, a)->granted && R(2, b)->granted);
	x_unlock(2, b);
	x_pump();
	CHECK(!R(2, a)->granted);
	x_unlock(0, c);
	x_pump();
	CHECK(R(2, a)->granted);
	/* another resource (slot) is independent */
	b = x_lock(0, 1, 3, RDLM_MODE_EX, 0, 1000, 0);
	x_pump();
	CHECK(R(0, b)->granted);
	x_unlock(2, a);
	x_unlock(0, b);
	x_pump();
	CHECK(x_free(0) == RQ && x_free(2) == RQ);
	/* refused: bad range, update mode */
	a = x_lock(0, 1, 2, RDLM_MODE_EX, 5, 4, 0);
	CHECK(R(0, a)->err == -EINVAL);
	a = x_lock(0, 1, 2, RDLM_MODE_UP, 0, 4, 0);
	CHECK(R(0, a)->err == -EOPNOTSUPP);
	x_fini();
}

static void t_rc_fifo_cancel(void)
{
	struct rdlm_req *w1, *r2, *w3, *r4, *w5;

	x_setup(&rdlm_rangecomb_ops, 0, 0);
	/*
	 * W1 holds [0,100]; R2 [50,150] waits for W1; W3 [120,200] meets
	 * only R2, and waits behind it although W1 is not in its way;
	 * R4 [180,190] waits behind W3.
	 */
	w1 = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 100, 0);
	x_pump();
	r2 = x_lock(2, 1, 0, RDLM_MODE_SH, 50, 150, 0);
	x_pump();
	w3 = x_lock(0, 1, 0, RDLM_MODE_EX, 120, 200, 0);
	x_pump();
	r4 = x_lock(2, 1, 0, RDLM_MODE_SH, 180, 190, 0);
	x_pump();
	CHECK(R(0, w1)->granted && !R(2, r2)->granted &&
	      !R(0, w3)->granted && !R(2, r4)->granted);
	x_unlock(0, w1);
	x_pump();
	CHECK(R(2, r2)->granted && !R(0, w3)->granted && !R(2, r4)->granted);
	x_unlock(2, r2);
	x_pump();
	CHECK(R(0, w3)->granted && !R(2, r4)->granted);
	x_unlock(0, w3);
	x_pump();
	CHECK(R(2, r4)->granted);
	CHECK(R(2, r2)->grant_seq < R(0, w3)->grant_seq &&
	      R(0, w3)->grant_seq < R(2, r4)->grant_seq);
	x_unlock(2, r4);
	x_pump();

	/*
	 * Cancel: W1 holds [0,100], W3 [50,150] waits for it, W5 [120,200]
	 * for W3 only.  Cancelling W3 fails it and lets W5 in at once.
	 */
	w1 = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 100, 0);
	w3 = x_lock(2, 1, 0, RDLM_MODE_EX, 50, 150, 0);
	w5 = x_lock(0, 1, 0, RDLM_MODE_EX, 120, 200, 0);
	x_pump();
	CHECK(R(0, w1)->granted && !R(2, w3)->granted && !R(0, w5)->granted);
	CHECK(x_unlock(2, w3) == 0);
	x_pump();
	CHECK(R(2, w3)->err == -ECANCELED && R(2, w3)->done &&
	      !R(2, w3)->granted);
	CHECK(R(0, w5)->granted && R(0, w1)->granted);
	/* cancel of a request whose GRANT crossed the CANCEL: handed back */
	r2 = x_lock(2, 1, 0, RDLM_MODE_EX, 300, 300, 0);
	x_pump_one(0);			/* LOCK: granted at the home */
	x_unlock(2, r2);		/* CANCEL after the GRANT */
	x_pump();
	CHECK(R(2, r2)->err == -ECANCELED && !R(2, r2)->granted &&
	      R(2, r2)->done);
	r4 = x_lock(0, 1, 0, RDLM_MODE_EX, 300, 300, 0);
	x_pump();
	CHECK(R(0, r4)->granted);	/* the grant really went back */
	x_unlock(0, w1);
	x_unlock(0, w5);
	x_unlock(0, r4);
	x_pump();
	CHECK(x_free(0) == RQ && x_free(2) == RQ);
	x_fini();
}

static void t_rc_busy_down(void)
{
	struct rdlm_req *a, *b, *c, *d;

	/* a home table of two entries */
	x_setup(&rdlm_rangecomb_ops, 0, 2);
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 10, 0);
	b = x_lock(0, 1, 0, RDLM_MODE_EX, 5, 15, 0);
	c = x_lock(2, 1, 0, RDLM_MODE_EX, 100, 110, RDLM_RF_NOQUEUE);
	x_pump();
	CHECK(R(0, a)->granted && !R(0, b)->granted);
	CHECK(R(2, c)->err == -EAGAIN && R(2, c)->done);
	CHECK(rdlm_stat_read(&XN[1].stats.busy) == 1);
	/* without NOQUEUE: back off, retry, granted once there is room */
	c = x_lock(2, 1, 0, RDLM_MODE_EX, 100, 110, 0);
	x_pump();
	CHECK(!R(2, c)->granted && !R(2, c)->err);
	x_unlock(0, a);
	x_advance(xnow + 10 * LEASE);
	CHECK(R(0, b)->granted && R(2, c)->granted);
	x_unlock(0, b);
	x_unlock(2, c);
	x_pump();
	/* a trylock that would wait is refused and leaves no entry */
	a = x_lock(0, 1, 0, RDLM_MODE_SH, 0, 10, 0);
	b = x_lock(2, 1, 0, RDLM_MODE_EX, 10, 20, RDLM_RF_NOQUEUE);
	x_pump();
	CHECK(R(0, a)->granted && R(2, b)->err == -EAGAIN);
	c = x_lock(2, 1, 0, RDLM_MODE_EX, 11, 20, 0);
	x_pump();
	CHECK(R(2, c)->granted);	/* not behind the refused one */
	x_unlock(0, a);
	x_unlock(2, c);
	x_pump();
	x_fini();

	/*
	 * A refused trylock behind a waiter unblocks nobody: only entries
	 * after the one removed counted it (an earlier waiter let in here
	 * would hold with the holder).
	 */
	x_setup(&rdlm_rangecomb_ops, 0, 0);
	a = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 10, 0);
	b = x_lock(2, 1, 0, RDLM_MODE_EX, 5, 15, 0);
	x_pump();
	c = x_lock(0, 1, 0, RDLM_MODE_EX, 0, 20, RDLM_RF_NOQUEUE);
	x_pump();
	CHECK(R(0, a)->granted && !R(2, b)->granted &&
	      R(0, c)->err == -EAGAIN);
	x_unlock(0, a);
	x_pump();
	CHECK(R(2, b)->granted);
	x_unlock(2, b);
	x_pump();
	x_fini();

	/* node 0 dies: its waiter goes at once, its holder with its lease */
	x_setup(&rdlm_rangecomb_ops, 0, 0);
	a = x_lock(2, 1, 0, RDLM_MODE_EX, 0, 100, 0);	/* held by 2 */
	b = x_lock(0, 1, 0, RDLM_MODE_EX, 50, 150, 0);	/* 0 waits */
	c = x_lock(2, 1, 0, RDLM_MODE_EX, 120, 200, 0);	/* behind b */
	d = x_lock(0, 1, 0, RDLM_MODE_SH, 500, 600, 0);	/* held by 0 */
	x_pump();
	CHECK(R(2, a)->granted && !R(0, b)->granted && !R(2, c)->granted &&
	      R(0, d)->granted);
	{
		struct rdlm_out o = x_out(1);

		XN[1].ops->member_down(&XN[1], 0, 1, &o);
	}
	x_pump();
	CHECK(R(2, c)->granted && R(2, a)->granted);
	x_advance(3 * LEASE / 2);
	b = x_lock(2, 1, 0, RDLM_MODE_EX, 550, 550, 0);
	x_pump();
	CHECK(!R(2, b)->granted);		/* d's lease still counts */
	x_advance(2 * LEASE - 1);
	CHECK(!R(2, b)->granted);
	x_advance(2 * LEASE);			/* the home forgets d */
	CHECK(R(2, b)->granted);
	x_fini();
}
