// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the distributed-queue engines (DQNL, DQNL-SF, N-CoSED).
 * Included by check.c after its harness (cap, O(), find(), posted(),
 * has_notice(), count_msgs(), deliver(), CHECK); not built on its own.
 * Three engine instances: A (node 0) and B (node 2) request the word at
 * home H (node 1), slot 3.
 */
#include "dqueue.h"

static struct rdlm_engine DA, DB, DH;

static void dqt_setup(struct rdlm_engine *eng,
		      const struct rdlm_engine_ops *ops, u32 node)
{
	struct rdlm_engine_params p;

	memset(&p, 0, sizeof(p));
	rdlm_engine_default_params(&p);
	p.node = node;
	p.nr_nodes = 4;
	p.nr_slots = 16;
	p.nr_reqs = 8;
	p.seed = 11 + node;
	if (rdlm_engine_init(eng, ops, &p))
		abort();
}

static void dqt_all(const struct rdlm_engine_ops *ops)
{
	dqt_setup(&DA, ops, 0);
	dqt_setup(&DB, ops, 2);
	dqt_setup(&DH, ops, 1);
}

static void dqt_fini(void)
{
	rdlm_engine_fini(&DA);
	rdlm_engine_fini(&DB);
	rdlm_engine_fini(&DH);
}

static struct rdlm_req *dqt_req(struct rdlm_engine *eng, u8 mode)
{
	struct rdlm_req *r = rdlm_req_alloc(eng);

	r->node = 1;
	r->slot = 3;
	r->mode = mode;
	return r;
}

/* the nth captured POST of verb kind @kind (copied: cap is reused) */
static bool dqt_post(u8 kind, int nth, struct rdlm_verb *v)
{
	int i;

	for (i = 0; i < cap.n; i++)
		if (cap.a[i].kind == RDLM_ACT_POST &&
		    cap.a[i].verb.kind == kind && !nth--) {
			*v = cap.a[i].verb;
			return true;
		}
	memset(v, 0, sizeof(*v));
	return false;
}

static int dqt_posts(void)
{
	int i, n = 0;

	for (i = 0; i < cap.n; i++)
		n += cap.a[i].kind == RDLM_ACT_POST;
	return n;
}

static void dqt_lock(struct rdlm_engine *eng, struct rdlm_req *r)
{
	struct rdlm_out o = O(0);

	CHECK(eng->ops->lock(eng, r, &o) == 0);
}

static void dqt_unlock(struct rdlm_engine *eng, struct rdlm_req *r)
{
	struct rdlm_out o = O(0);

	CHECK(eng->ops->unlock(eng, r, &o) == 0);
}

/* complete verb @v posted by @eng with @value */
static void dqt_cqe(struct rdlm_engine *eng, const struct rdlm_verb *v,
		    u64 value, int status)
{
	struct rdlm_cqe c = { .req = v->req, .cookie = v->cookie,
			      .kind = v->kind, .status = status,
			      .value = value };
	struct rdlm_out o = O(0);

	eng->ops->complete(eng, &c, &o);
}

/* mailbox entry of a notice of @kind from node @from to @r (4 nodes) */
static u32 mbox(const struct rdlm_req *r, u32 from, u8 kind)
{
	return (r->idx * 4 + from) * DQ_MBOX_KINDS + kind - 1;
}

/* the WRITE_WITH_IMM @v lands at @to */
static void dqt_imm(struct rdlm_engine *to, const struct rdlm_verb *v,
		    u32 from)
{
	struct rdlm_rx rx;
	struct rdlm_out o;

	memset(&rx, 0, sizeof(rx));
	rx.kind = RDLM_VERB_WRITE_IMM;
	rx.src = from;
	rx.slot = v->slot;
	rx.imm = v->imm;
	rx.value = v->arg0;
	o = O(0);
	to->ops->recv(to, &rx, &o);
}

static void dqt_down(struct rdlm_engine *eng, u32 node)
{
	struct rdlm_out o = O(0);

	eng->ops->member_down(eng, node, 1, &o);
}

/* an exclusive request granted on a free word (one CAS) */
static struct rdlm_req *dqt_held(struct rdlm_engine *eng)
{
	struct rdlm_req *r = dqt_req(eng, RDLM_MODE_EX);
	struct rdlm_verb v = { 0 };

	dqt_lock(eng, r);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(eng, &v, 0, 0);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->req == r);
	return r;
}

/* an exclusive request swapped in behind the word value @tail */
static struct rdlm_req *dqt_behind(struct rdlm_engine *eng, u64 tail)
{
	struct rdlm_req *r = dqt_req(eng, RDLM_MODE_EX);
	struct rdlm_verb v = { 0 };

	dqt_lock(eng, r);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(eng, &v, tail, 0);		/* compare 0 failed: retry */
	dqt_post(RDLM_VERB_CAS, 0, &v);
	CHECK(v.arg0 == tail);
	dqt_cqe(eng, &v, tail, 0);
	return r;
}

static u64 NCW(u32 ex, u32 sh)
{
	return (u64)ex << 32 | sh;
}

static u64 SFW(u64 counter, u64 turn, u64 tl)
{
	return counter << 48 | turn << 32 | tl;
}

/* DQNL: uncontended, one CAS to lock and one to unlock (Table 3) */
static void t_dq_uncontended(void)
{
	struct rdlm_verb v = { 0 };
	const struct rdlm_action *g;
	struct rdlm_req *r;
	u32 id;

	dqt_all(&rdlm_dqnl_ops);
	r = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, r);
	id = dq(r)->id;
	CHECK(dqt_posts() == 1 && dqt_post(RDLM_VERB_CAS, 0, &v));
	CHECK(v.node == 1 && v.slot == 3 && v.arg0 == 0 && v.arg1 == id);
	CHECK(dq_id_node(id) == 0 && dq_id_idx(id) == r->idx);
	dqt_cqe(&DA, &v, 0, 0);
	g = find(RDLM_ACT_GRANT, 0);
	CHECK(g && g->req == r && g->lease_end == U64_MAX);
	CHECK(DA.stats.verbs[RDLM_VERB_CAS] == 1 && !DA.stats.cas_failed);
	dqt_unlock(&DA, r);
	CHECK(dqt_posts() == 1 && dqt_post(RDLM_VERB_CAS, 0, &v));
	CHECK(v.arg0 == id && v.arg1 == 0);
	dqt_cqe(&DA, &v, id, 0);
	CHECK(find(RDLM_ACT_DONE, 0));
	CHECK(DA.stats.verbs[RDLM_VERB_CAS] == 2);
	dqt_fini();
}

/* DQNL: queue behind a holder, successor notice, blocking, handover */
static void t_dq_handover(void)
{
	struct rdlm_verb v = { 0 }, note = { 0 }, hand = { 0 };
	struct rdlm_req *a, *b;
	u32 ida, idb;

	dqt_all(&rdlm_dqnl_ops);
	a = dqt_held(&DA);
	ida = dq(a)->id;

	b = dqt_req(&DB, RDLM_MODE_EX);
	dqt_lock(&DB, b);
	idb = dq(b)->id;
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DB, &v, ida, 0);		/* compare 0 failed: retry */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == ida &&
	      v.arg1 == idb);
	CHECK(DB.stats.cas_failed == 1);
	dqt_cqe(&DB, &v, ida, 0);		/* swapped in behind A */
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &note));
	/* into A's mailbox slot, never the lock table */
	CHECK(note.node == 0 && note.slot == mbox(a, 2, DQ_N_SUCC) &&
	      note.imm == ida);
	CHECK((u32)note.arg0 == idb && note.arg0 >> 56 == DQ_N_SUCC);
	dqt_imm(&DA, &note, 2);
	CHECK(has_notice(RDLM_NOTICE_BLOCKING));
	/* a notice for another incarnation of A's slot is dropped */
	note.imm ^= 1;
	dqt_imm(&DA, &note, 2);
	CHECK(cap.n == 0 && DA.stats.stale == 1);

	dqt_unlock(&DA, a);			/* successor known: no CAS */
	CHECK(dqt_posts() == 1 && dqt_post(RDLM_VERB_WRITE_IMM, 0, &hand));
	CHECK(hand.node == 2 && hand.slot == mbox(b, 0, DQ_N_GRANT) &&
	      hand.imm == idb &&
	      hand.arg0 >> 56 == DQ_N_GRANT);
	CHECK(!find(RDLM_ACT_DONE, 0));
	dqt_cqe(&DA, &hand, 0, 0);
	CHECK(find(RDLM_ACT_DONE, 0));
	/* a GRANT found in another kind's entry is not one: dropped */
	hand.slot = mbox(b, 0, DQ_N_SUCC);
	dqt_imm(&DB, &hand, 0);
	CHECK(!find(RDLM_ACT_GRANT, 0) && DB.stats.stale == 1);
	hand.slot = mbox(b, 0, DQ_N_GRANT);
	dqt_imm(&DB, &hand, 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	dqt_imm(&DB, &hand, 0);			/* twice: ignored */
	CHECK(!find(RDLM_ACT_GRANT, 0));
	dqt_fini();
}

/* DQNL 4.3.1: release CAS finds a successor that has not written yet */
static void t_dq_transient(void)
{
	struct rdlm_verb v = { 0 }, hand = { 0 };
	struct rdlm_req *a;
	u32 ida, other = dq_mkid(2, 5, 9);

	dqt_all(&rdlm_dqnl_ops);
	a = dqt_held(&DA);
	ida = dq(a)->id;
	dqt_unlock(&DA, a);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DA, &v, other, 0);
	CHECK(dqt_posts() == 0 && !find(RDLM_ACT_DONE, 0));
	CHECK(DA.stats.cas_failed == 1);
	/* the successor's notice lands: hand over, then done */
	memset(&v, 0, sizeof(v));
	v.slot = mbox(a, 2, DQ_N_SUCC);
	v.imm = ida;
	v.arg0 = dq_note(DQ_N_SUCC, 0, other);
	dqt_imm(&DA, &v, 2);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &hand) && hand.imm == other &&
	      hand.arg0 >> 56 == DQ_N_GRANT);
	dqt_cqe(&DA, &hand, 0, 0);
	CHECK(find(RDLM_ACT_DONE, 0));
	dqt_fini();
}

/* DQNL-SF: FA then CAS; only the next ticket swaps in; failed CAS counted */
static void t_dq_sf(void)
{
	struct rdlm_verb v = { 0 };
	struct rdlm_req *a, *b;
	u32 ida, idb, x = dq_mkid(3, 1, 1);

	dqt_all(&rdlm_dqnl_sf_ops);
	a = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, a);
	ida = dq(a)->id;
	CHECK(dqt_post(RDLM_VERB_FA, 0, &v) && v.arg0 == 1ULL << 48);
	dqt_cqe(&DA, &v, SFW(5, 5, 0), 0);	/* ticket 5, our turn */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == SFW(6, 5, 0) &&
	      v.arg1 == SFW(6, 6, ida));
	dqt_cqe(&DA, &v, SFW(6, 5, 0), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	CHECK(DA.stats.verbs[RDLM_VERB_FA] == 1 &&
	      DA.stats.verbs[RDLM_VERB_CAS] == 1);	/* one extra FA */
	/* release while tickets were taken: CAS again, keep the turn */
	dqt_unlock(&DA, a);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == SFW(6, 6, ida) &&
	      v.arg1 == SFW(6, 6, 0));
	dqt_cqe(&DA, &v, SFW(9, 6, ida), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == SFW(9, 6, ida) &&
	      v.arg1 == SFW(9, 6, 0));
	dqt_cqe(&DA, &v, SFW(9, 6, ida), 0);
	CHECK(find(RDLM_ACT_DONE, 0) && DA.stats.cas_failed == 1);

	/* ticket 7 while turn is 5: probe until turn 7, then swap */
	b = dqt_req(&DB, RDLM_MODE_EX);
	dqt_lock(&DB, b);
	idb = dq(b)->id;
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, SFW(7, 5, x), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == SFW(8, 5, x) &&
	      v.arg1 == v.arg0);
	dqt_cqe(&DB, &v, SFW(8, 6, x), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg1 == v.arg0);
	dqt_cqe(&DB, &v, SFW(9, 7, x), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == SFW(9, 7, x) &&
	      v.arg1 == SFW(9, 8, idb));
	dqt_cqe(&DB, &v, SFW(9, 7, x), 0);
	CHECK(DB.stats.cas_failed == 2);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &v) && v.imm == x &&
	      v.node == 3 && (u32)v.arg0 == idb);
	dqt_fini();
}

/* N-CoSED 3.2.2 / 3.2.3: shared by FA, exclusive after shared waits at home */
static void t_nc_shared_then_ex(void)
{
	struct rdlm_verb v = { 0 }, rel = { 0 }, exw = { 0 }, reset = { 0 };
	struct rdlm_req *s, *x;
	u32 idx;

	dqt_all(&rdlm_ncosed_ops);
	s = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, s);
	CHECK(dqt_posts() == 1 && dqt_post(RDLM_VERB_FA, 0, &v) &&
	      v.arg0 == 1);
	dqt_cqe(&DB, &v, NCW(0, 1), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));

	x = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, x);
	idx = dq(x)->id;
	dqt_post(RDLM_VERB_CAS, 0, &v);
	CHECK(v.arg0 == 0 && v.arg1 == NCW(idx, 0));
	dqt_cqe(&DA, &v, NCW(0, 2), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 2));
	dqt_cqe(&DA, &v, NCW(0, 2), 0);		/* two shared holders */
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &exw) && exw.node == 1 &&
	      exw.msg.type == DQ_M_EXWAIT && exw.msg.arg == 2);

	dqt_unlock(&DB, s);			/* shared release: to the home */
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &rel) &&
	      rel.msg.type == DQ_M_SHREL && rel.node == 1);
	deliver(&DH, &rel, 2, 0);
	/* home: all in? try to zero the shared half */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &reset) && reset.node == 1 &&
	      reset.arg0 == NCW(0, 1) && reset.arg1 == 0);
	deliver(&DH, &exw, 0, 0);		/* still one holder out */
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	dqt_cqe(&DH, &reset, NCW(idx, 0), 0);	/* an exclusive came */
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	deliver(&DH, &rel, 3, 0);		/* second shared release */
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) &&
	      v.msg.type == RDLM_MSG_GRANT && v.node == 0 &&
	      v.msg.token == idx);
	deliver(&DA, &v, 1, 0);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->req == x);
	dqt_fini();
}

/*
 * N-CoSED recovery: the home's own shared release is still on its loopback
 * connection when the home fences the word.  It arrives ahead of the
 * home's fence of itself (same connection) and is void; counted after the
 * thaw, it would let a later exclusive in past a live shared holder
 * (simulator, ncosed NIC, 6 crash-restarts, seed 640).
 */
static void t_nc_fence_self(void)
{
	struct rdlm_verb v = { 0 }, rel = { 0 }, exw = { 0 }, fence[4];
	struct rdlm_req *s, *t, *x;
	u32 idx;
	int i;

	dqt_all(&rdlm_ncosed_ops);
	s = dqt_req(&DH, RDLM_MODE_SH);		/* the home's own */
	dqt_lock(&DH, s);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DH, &v, NCW(0, 0), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	dqt_unlock(&DH, s);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &rel) &&
	      rel.msg.type == DQ_M_SHREL && rel.node == 1);
	/* ... still in flight when somebody asks the home to recover */
	memset(&v, 0, sizeof(v));
	v.msg.type = DQ_M_RECOVER;
	v.msg.slot = 3;
	deliver(&DH, &v, 0, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg1 == NCW(DQ_FROZEN, 0));
	dqt_cqe(&DH, &v, NCW(0, 1), 0);		/* the count it left */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1) &&
	      v.arg1 == NCW(DQ_FROZEN, 1));
	dqt_cqe(&DH, &v, NCW(0, 1), 0);
	/* every member is fenced through its connection, the home too */
	CHECK(count_msgs(DQ_M_FENCE) == 4);
	for (i = 0; i < 4; i++) {
		dqt_post(RDLM_VERB_SEND, i, &fence[i]);
		CHECK(fence[i].msg.type == DQ_M_FENCE &&
		      fence[i].node == (u32)i);
	}
	for (i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		v = fence[i];
		v.msg.type = DQ_M_ACK;
		deliver(&DH, &v, i, 0);
		CHECK(!dqt_posts());
	}
	/* loopback, in order: the release (void), the fence, its ACK */
	deliver(&DH, &rel, 1, 0);
	CHECK(!dqt_posts());
	deliver(&DH, &fence[1], 1, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) && v.msg.type == DQ_M_ACK &&
	      v.node == 1);
	deliver(&DH, &v, 1, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg0 == NCW(DQ_FROZEN, 1) && v.arg1 == 0);
	dqt_cqe(&DH, &v, NCW(DQ_FROZEN, 1), 0);
	CHECK(DH.stats.resets == 1 && !dqe(&DH)->slots[3].rel);
	/* a new shared holder, then an exclusive: it waits for its release */
	t = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, t);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, NCW(0, 0), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	x = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, x);
	idx = dq(x)->id;
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DA, &v, NCW(0, 1), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1));
	dqt_cqe(&DA, &v, NCW(0, 1), 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &exw) &&
	      exw.msg.type == DQ_M_EXWAIT && exw.msg.arg == 1);
	deliver(&DH, &exw, 0, 0);
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	dqt_unlock(&DB, t);
	dqt_post(RDLM_VERB_SEND, 0, &rel);
	deliver(&DH, &rel, 2, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) &&
	      v.msg.type == RDLM_MSG_GRANT && v.node == 0 &&
	      v.msg.token == idx);
	dqt_fini();
}

/*
 * N-CoSED recovery keeps survivors' shared holds: each ACK counts its
 * node's, a release sent after the ACK takes one off, and the thawed word
 * counts those left, so an exclusive waits for their releases. Losing
 * them instead told both holders LOST while the word was granted on
 * (recover_kill.sh's critical-section check, fault_flap.sh in CI).
 */
static void t_nc_keep_shared(void)
{
	struct rdlm_verb v = { 0 }, rel = { 0 }, exw = { 0 }, fence[4];
	struct rdlm_verb ack0 = { 0 }, ack2 = { 0 };
	struct rdlm_req *s, *u, *x;
	u32 idx;
	int i;

	dqt_all(&rdlm_ncosed_ops);
	s = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, s);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, NCW(0, 0), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	u = dqt_req(&DA, RDLM_MODE_SH);
	dqt_lock(&DA, u);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DA, &v, NCW(0, 1), 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	/* node 3 died with a share of its own: the home recovers the word */
	memset(&v, 0, sizeof(v));
	v.msg.type = DQ_M_RECOVER;
	v.msg.slot = 3;
	deliver(&DH, &v, 0, 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DH, &v, NCW(0, 3), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg1 == NCW(DQ_FROZEN, 3));
	dqt_cqe(&DH, &v, NCW(0, 3), 0);
	CHECK(count_msgs(DQ_M_FENCE) == 4);
	for (i = 0; i < 4; i++)
		dqt_post(RDLM_VERB_SEND, i, &fence[i]);
	/* both holders keep their shares and count them in their ACKs */
	deliver(&DB, &fence[2], 1, 0);
	CHECK(!has_notice(RDLM_NOTICE_LOST));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &ack2) &&
	      ack2.msg.type == DQ_M_ACK && ack2.msg.arg == 1ULL << 32);
	deliver(&DA, &fence[0], 1, 0);
	CHECK(!has_notice(RDLM_NOTICE_LOST));
	dqt_post(RDLM_VERB_SEND, 0, &ack0);
	CHECK(ack0.msg.arg == 1ULL << 32);
	deliver(&DH, &ack0, 0, 0);
	/* A lets go after its ACK: one share less for the thaw to count */
	dqt_unlock(&DA, u);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &rel) &&
	      rel.msg.type == DQ_M_SHREL);
	deliver(&DH, &rel, 0, 0);
	deliver(&DH, &ack2, 2, 0);
	v = fence[3];
	v.msg.type = DQ_M_ACK;
	deliver(&DH, &v, 3, 0);
	CHECK(!dqt_posts());
	deliver(&DH, &fence[1], 1, 0);		/* the home's loopback */
	dqt_post(RDLM_VERB_SEND, 0, &v);
	deliver(&DH, &v, 1, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg0 == NCW(DQ_FROZEN, 3) && v.arg1 == NCW(0, 1));
	dqt_cqe(&DH, &v, NCW(DQ_FROZEN, 3), 0);
	CHECK(DH.stats.resets == 1);
	/* an exclusive now waits for B's share */
	x = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, x);
	idx = dq(x)->id;
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DA, &v, NCW(0, 1), 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DA, &v, NCW(0, 1), 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &exw) &&
	      exw.msg.type == DQ_M_EXWAIT && exw.msg.arg == 1);
	deliver(&DH, &exw, 0, 0);
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	dqt_unlock(&DB, s);
	dqt_post(RDLM_VERB_SEND, 0, &rel);
	deliver(&DH, &rel, 2, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) &&
	      v.msg.type == RDLM_MSG_GRANT && v.node == 0 &&
	      v.msg.token == idx);
	dqt_fini();
}

/*
 * Someone asks the home to recover word 3, which holds @word: the freeze
 * CAS misses once and then takes it; @fence gets the four FENCEs.
 */
static void dqt_freeze(u64 word, struct rdlm_verb fence[4])
{
	struct rdlm_verb v = { 0 };
	int i;

	v.msg.type = DQ_M_RECOVER;
	v.msg.slot = 3;
	deliver(&DH, &v, 0, 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DH, &v, word, 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DH, &v, word, 0);
	for (i = 0; i < 4; i++)
		dqt_post(RDLM_VERB_SEND, i, &fence[i]);
}

/* every member but @skip acknowledges its FENCE, holding nothing */
static void dqt_ack_others(const struct rdlm_verb fence[4], int skip)
{
	struct rdlm_verb v;
	int i;

	for (i = 0; i < 4; i++) {
		if (i == skip)
			continue;
		v = fence[i];
		v.msg.type = DQ_M_ACK;
		deliver(&DH, &v, i, 0);
	}
}

/*
 * DQNL serves a shared request as exclusive: kept through a recovery, it
 * is the word's tail again, not a share the word would not count (which
 * let the next requester in at once).
 */
static void t_dq_keep_sh_as_ex(void)
{
	struct rdlm_verb v = { 0 }, fence[4], ack = { 0 };
	struct rdlm_req *b;
	u32 idb;

	dqt_all(&rdlm_dqnl_ops);
	b = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, b);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DB, &v, 0, 0);
	CHECK(find(RDLM_ACT_GRANT, 0));
	idb = dq(b)->id;
	dqt_freeze(idb, fence);
	dqt_ack_others(fence, 2);
	deliver(&DB, &fence[2], 1, 0);
	dqt_post(RDLM_VERB_SEND, 0, &ack);
	deliver(&DH, &ack, 2, 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	CHECK(v.arg1 == dq(b)->id);
	dqt_fini();
}

/*
 * N-CoSED: a member that kept a share in its ACK, then died and came back
 * before the thaw, holds nothing: the thawed word must not count it (an
 * exclusive would wait for a release that never comes).
 */
static void t_nc_keep_dead_share(void)
{
	struct rdlm_verb v = { 0 }, fence[4], ack2 = { 0 };
	struct rdlm_req *s;
	struct rdlm_out o;

	dqt_all(&rdlm_ncosed_ops);
	s = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, s);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, NCW(0, 0), 0);
	dqt_freeze(NCW(0, 1), fence);
	deliver(&DB, &fence[2], 1, 0);
	dqt_post(RDLM_VERB_SEND, 0, &ack2);
	deliver(&DH, &ack2, 2, 0);		/* B: one share kept */
	dqt_down(&DH, 2);			/* B dies (its hold with it) */
	o = O(0);
	DH.ops->member_join(&DH, 2, &o);	/* ... and is back, fresh */
	dqt_ack_others(fence, 2);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v));
	CHECK(v.arg1 == 0);
	dqt_fini();
}

/*
 * N-CoSED: an ACK lost with its connection is sent again once the link is
 * back, and a kept share released meanwhile, whose SHREL reached the home
 * first (void: no ACK yet), is not counted in it.
 */
static void t_nc_reack_counts_now(void)
{
	struct rdlm_verb v = { 0 }, fence[4], ack2 = { 0 }, rel = { 0 };
	struct rdlm_req *s;
	struct rdlm_cqe c;
	struct rdlm_out o;

	dqt_all(&rdlm_ncosed_ops);
	s = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, s);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, NCW(0, 0), 0);
	dqt_freeze(NCW(0, 1), fence);
	dqt_ack_others(fence, 2);
	deliver(&DB, &fence[2], 1, 0);
	dqt_post(RDLM_VERB_SEND, 0, &ack2);
	/* the ACK is flushed with B's connection */
	memset(&c, 0, sizeof(c));
	c.cookie = ack2.cookie;
	c.kind = ack2.kind;
	c.status = -5;
	o = O(0);
	DB.ops->complete(&DB, &c, &o);
	/* B lets go; its SHREL makes it on the new connection first */
	dqt_unlock(&DB, s);
	dqt_post(RDLM_VERB_SEND, 0, &rel);
	CHECK(rel.msg.type == DQ_M_SHREL);
	deliver(&DH, &rel, 2, 0);		/* FENCE, not acked: void */
	o = O(0);
	DB.ops->member_up(&DB, 1, &o);		/* the ACK again */
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) && v.msg.type == DQ_M_ACK);
	deliver(&DH, &v, 2, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v));
	CHECK(v.arg1 == 0);
	dqt_fini();
}

/* N-CoSED 3.2.1 / 3.2.4: shared and exclusive queued behind an exclusive */
static void t_nc_behind_ex(void)
{
	struct rdlm_verb v = { 0 }, shreq = { 0 }, succ = { 0 }, g1 = { 0 }, g2 = { 0 };
	struct rdlm_req *a, *s, *c, *d;
	u32 ida, idc;

	dqt_all(&rdlm_ncosed_ops);
	a = dqt_held(&DA);
	ida = dq(a)->id;

	s = dqt_req(&DB, RDLM_MODE_SH);
	dqt_lock(&DB, s);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(&DB, &v, NCW(ida, 0), 0);
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &shreq) && shreq.imm == ida &&
	      shreq.arg0 >> 56 == DQ_N_SHREQ);
	dqt_imm(&DA, &shreq, 2);
	CHECK(has_notice(RDLM_NOTICE_BLOCKING));

	c = dqt_behind(&DB, NCW(ida, 1));
	idc = dq(c)->id;
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &succ) &&
	      ((succ.arg0 >> 32) & 0xffffff) == 1);	/* one shared between */
	dqt_imm(&DA, &succ, 2);

	/* A releases: shared waiter and exclusive successor, no atomics */
	dqt_unlock(&DA, a);
	CHECK(dqt_posts() == 2 && dqt_post(RDLM_VERB_WRITE_IMM, 0, &g1) &&
	      dqt_post(RDLM_VERB_WRITE_IMM, 1, &g2));
	CHECK(g1.imm == dq(s)->id && g1.arg0 >> 56 == DQ_N_SHGRANT);
	CHECK(g2.imm == idc && g2.arg0 >> 56 == DQ_N_GRANT);
	dqt_imm(&DB, &g1, 0);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->req == s);
	dqt_imm(&DB, &g2, 0);			/* wait for that shared one */
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) && v.msg.type == DQ_M_EXWAIT &&
	      v.msg.arg == 1);

	/* exclusive release with a shared waiter and no successor */
	d = dqt_held(&DA);
	memset(&v, 0, sizeof(v));
	v.slot = mbox(d, 3, DQ_N_SHREQ);
	v.imm = dq(d)->id;
	v.arg0 = dq_note(DQ_N_SHREQ, 0, dq_mkid(3, 2, 2));
	dqt_imm(&DA, &v, 3);
	dqt_unlock(&DA, d);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &g1) && g1.node == 3);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg0 == NCW(dq(d)->id, 1) && v.arg1 == NCW(0, 1));
	dqt_cqe(&DA, &g1, 0, 0);
	dqt_cqe(&DA, &v, NCW(dq(d)->id, 1), 0);
	CHECK(find(RDLM_ACT_DONE, 0));

	/*
	 * The same, but the shared grant is lost while the release CAS is in
	 * flight: the word keeps counting a shared request nobody will grant,
	 * so the home must recover it (or the next exclusive waits forever).
	 */
	d = dqt_held(&DA);
	memset(&v, 0, sizeof(v));
	v.slot = mbox(d, 3, DQ_N_SHREQ);
	v.imm = dq(d)->id;
	v.arg0 = dq_note(DQ_N_SHREQ, 0, dq_mkid(3, 3, 3));
	dqt_imm(&DA, &v, 3);
	dqt_unlock(&DA, d);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &g1) && g1.node == 3);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg0 == NCW(dq(d)->id, 1) && v.arg1 == NCW(0, 1));
	dqt_cqe(&DA, &g1, 0, -ENOTCONN);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &g2) &&
	      g2.msg.type == DQ_M_RECOVER && g2.node == 1 &&
	      g2.msg.slot == 3);
	dqt_cqe(&DA, &v, NCW(dq(d)->id, 1), 0);
	CHECK(!find(RDLM_ACT_DONE, 0));		/* the RECOVER is in flight */
	dqt_cqe(&DA, &g2, 0, 0);
	CHECK(find(RDLM_ACT_DONE, 0));
	dqt_fini();
}

/* a shared request of @eng granted on a word the FA finds at @old */
static struct rdlm_req *dqt_shared(struct rdlm_engine *eng, u64 old)
{
	struct rdlm_req *r = dqt_req(eng, RDLM_MODE_SH);
	struct rdlm_verb v = { 0 };

	dqt_lock(eng, r);
	dqt_post(RDLM_VERB_FA, 0, &v);
	dqt_cqe(eng, &v, old, 0);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->req == r);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) && v.msg.type == DQ_M_SHHOLD);
	deliver(&DH, &v, eng->p.node, 0);
	return r;
}

/*
 * N-CoSED holders in a conversion whose CAS is in flight when their word
 * is fenced keep a shared hold, counted in the ACK; the CAS is void (its
 * effect, if any, came before the ACK and the thaw overwrites it), and an
 * up-conversion starts over under a new identity. Reporting them lost
 * while the word was granted on left two holders until the program read
 * the notice (the simulator's crash-restart runs: 33 and 51 holds lost).
 */
static void t_nc_keep_converting(void)
{
	struct rdlm_verb v = { 0 }, upg = { 0 }, fence[4], ack = { 0 };
	const struct rdlm_action *t;
	struct rdlm_req *b, *a;
	struct rdlm_out o;
	u64 cookie;
	u32 idb;

	/* B converts up; its CAS into the tail is in flight at the fence */
	dqt_all(&rdlm_ncosed_ops);
	b = dqt_shared(&DB, NCW(0, 0));
	o = O(0);
	CHECK(DB.ops->convert(&DB, b, RDLM_MODE_EX, 0, &o) == 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &upg) && upg.arg0 == NCW(0, 1));
	idb = dq(b)->id;
	dqt_freeze(NCW(idb, 0), fence);
	dqt_ack_others(fence, 2);
	deliver(&DB, &fence[2], 1, 0);
	CHECK(!has_notice(RDLM_NOTICE_LOST) && unconverted_err() == 1);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &ack) &&
	      ack.msg.type == DQ_M_ACK && ack.msg.arg == 1ULL << 32);
	/* it had taken the tail: void, nothing told to the home */
	dqt_cqe(&DB, &upg, NCW(0, 1), 0);
	CHECK(!dqt_posts() && !has_notice(RDLM_NOTICE_LOST));
	t = find(RDLM_ACT_TIMER, 0);
	CHECK(t);
	cookie = t ? t->cookie : 0;
	deliver(&DH, &ack, 2, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) &&
	      v.arg0 == NCW(DQ_FROZEN, 0) && v.arg1 == NCW(0, 1));
	dqt_cqe(&DH, &v, NCW(DQ_FROZEN, 0), 0);
	/* after the backoff it converts again, under a new identity */
	o = O(0);
	DB.ops->timer(&DB, b, cookie, &o);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1) &&
	      dq(b)->id != idb && v.arg1 == NCW(dq(b)->id, 0));
	CHECK(b->mode == RDLM_MODE_SH && !has_notice(RDLM_NOTICE_LOST));
	dqt_fini();

	/*
	 * A converts down, and up again meanwhile (it starts after); the CAS
	 * out of the tail is in flight at the fence
	 */
	dqt_all(&rdlm_ncosed_ops);
	a = dqt_held(&DA);
	o = O(0);
	CHECK(DA.ops->convert(&DA, a, RDLM_MODE_SH, 0, &o) == 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &upg) &&
	      upg.arg0 == NCW(dq(a)->id, 0) && upg.arg1 == NCW(0, 1));
	o = O(0);
	CHECK(DA.ops->convert(&DA, a, RDLM_MODE_EX, 0, &o) == 0 && !dqt_posts());
	dqt_freeze(NCW(0, 1), fence);
	dqt_ack_others(fence, 0);
	deliver(&DA, &fence[0], 1, 0);
	CHECK(!has_notice(RDLM_NOTICE_LOST));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &ack) &&
	      ack.msg.type == DQ_M_ACK && ack.msg.arg == 1ULL << 32);
	dqt_cqe(&DA, &upg, NCW(dq(a)->id, 0), 0);
	CHECK(!dqt_posts() && !has_notice(RDLM_NOTICE_LOST) &&
	      a->mode == RDLM_MODE_SH);
	/* the up-conversion asked for starts after a backoff */
	t = find(RDLM_ACT_TIMER, 0);
	CHECK(t);
	cookie = t ? t->cookie : 0;
	deliver(&DH, &ack, 0, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg1 == NCW(0, 1));
	dqt_cqe(&DH, &v, NCW(DQ_FROZEN, 1), 0);
	o = O(0);
	DA.ops->timer(&DA, a, cookie, &o);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1) &&
	      v.arg1 == NCW(dq(a)->id, 0));
	dqt_fini();
}

/*
 * In-place conversions: up while no exclusive is queued (our share counted
 * with the others', the home does not tell us), a second one refused
 * (-EDEADLK) or trying again until cancelled (NODLCKWT), NOQUEUE, a cancel in the tail answered by the grant; down
 * with a successor waiting: it waits for one release more, ours.
 */
static void t_nc_convert(void)
{
	struct rdlm_verb v = { 0 }, exw = { 0 }, rel = { 0 }, g = { 0 };
	const struct rdlm_action *t;
	struct rdlm_req *a, *b, *c;
	struct rdlm_out o;
	u64 cookie;
	u32 ida;

	dqt_all(&rdlm_ncosed_ops);
	a = dqt_shared(&DA, NCW(0, 0));
	b = dqt_shared(&DB, NCW(0, 1));
	ida = dq(a)->id;
	o = O(0);
	CHECK(DA.ops->convert(&DA, a, RDLM_MODE_EX, 0, &o) == 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1) &&
	      dq(a)->id != ida && v.arg1 == NCW(dq(a)->id, 0));
	ida = dq(a)->id;
	dqt_cqe(&DA, &v, NCW(0, 2), 0);		/* b holds too: again */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 2));
	dqt_cqe(&DA, &v, NCW(0, 2), 0);		/* the tail */
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &exw) &&
	      exw.msg.type == DQ_M_EXWAIT && exw.msg.arg == 2 &&
	      dqt_post(RDLM_VERB_SEND, 1, &rel) && rel.msg.type == DQ_M_SHREL);
	CHECK(!find(RDLM_ACT_GRANT, 0) && a->mode == RDLM_MODE_SH);
	/* b converts too: an exclusive in the tail waits for b */
	o = O(0);
	CHECK(DB.ops->convert(&DB, b, RDLM_MODE_EX, 0, &o) == 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DB, &v, NCW(ida, 0), 0);
	CHECK(unconverted_err() == -EDEADLK && b->mode == RDLM_MODE_SH);
	/* with NODLCKWT b tries again later, until it gives way (cancel) */
	o = O(0);
	CHECK(DB.ops->convert(&DB, b, RDLM_MODE_EX, RDLM_RF_NODLCKWT, &o) == 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DB, &v, NCW(ida, 0), 0);
	t = find(RDLM_ACT_TIMER, 0);
	CHECK(t && unconverted_err() == 1);
	cookie = t ? t->cookie : 0;
	o = O(0);
	DB.ops->timer(&DB, b, cookie, &o);	/* still the tail: again */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == NCW(0, 1));
	dqt_cqe(&DB, &v, NCW(ida, 0), 0);
	t = find(RDLM_ACT_TIMER, 0);
	CHECK(t && t->cookie != cookie);
	o = O(0);
	CHECK(DB.ops->convert(&DB, b, RDLM_MODE_SH, 0, &o) == 0);
	t = find(RDLM_ACT_TIMER, 0);
	CHECK(t && t->delay_ns == 0);
	cookie = t ? t->cookie : 0;
	o = O(0);
	DB.ops->timer(&DB, b, cookie, &o);
	CHECK(unconverted_err() == -ECANCELED && b->mode == RDLM_MODE_SH &&
	      !dqt_posts());
	/* the home tells b, not a, and counts a's own release */
	deliver(&DH, &exw, 0, 0);
	CHECK(count_msgs(DQ_M_SHBLOCK) == 1 && sent(DQ_M_SHBLOCK).node == 2);
	deliver(&DH, &rel, 0, 0);
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	/* in the tail a cancel cannot take a out: granted */
	o = O(0);
	CHECK(DA.ops->convert(&DA, a, RDLM_MODE_SH, 0, &o) == 0 && !cap.n);
	dqt_unlock(&DB, b);
	dqt_post(RDLM_VERB_SEND, 0, &rel);
	deliver(&DH, &rel, 2, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &g) && g.msg.type == RDLM_MSG_GRANT &&
	      g.node == 0 && g.msg.token == ida);
	deliver(&DA, &g, 1, 0);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->mode ==
	      RDLM_MODE_EX && a->mode == RDLM_MODE_EX);
	/* an exclusive queues behind a, which goes down to shared */
	c = dqt_behind(&DB, NCW(ida, 0));
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &v) &&
	      v.arg0 >> 56 == DQ_N_SUCC);
	dqt_imm(&DA, &v, 2);
	CHECK(has_notice(RDLM_NOTICE_BLOCKING));
	o = O(0);
	CHECK(DA.ops->convert(&DA, a, RDLM_MODE_SH, 0, &o) == 0 &&
	      a->mode == RDLM_MODE_SH);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &g) &&
	      g.arg0 >> 56 == DQ_N_GRANT && ((g.arg0 >> 32) & 0xffffff) == 1);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &v) && v.msg.type == DQ_M_SHHOLD);
	CHECK(!find(RDLM_ACT_GRANT, 0) && !has_notice(RDLM_NOTICE_LOST));
	/* had that hand-over failed, the queue would be broken: recovered */
	dqt_cqe(&DA, &g, 0, -ENOTCONN);
	CHECK(count_msgs(DQ_M_RECOVER) == 1);
	dqt_imm(&DB, &g, 0);
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &exw) &&
	      exw.msg.type == DQ_M_EXWAIT && exw.msg.arg == 1);
	deliver(&DH, &exw, 2, 0);
	CHECK(!count_msgs(RDLM_MSG_GRANT));
	dqt_unlock(&DA, a);			/* a's share: c's turn */
	dqt_post(RDLM_VERB_SEND, 0, &rel);
	CHECK(rel.msg.type == DQ_M_SHREL);
	deliver(&DH, &rel, 0, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &g) && g.msg.type == RDLM_MSG_GRANT &&
	      g.node == 2 && g.msg.token == dq(c)->id);
	/* NOQUEUE: alone or -EAGAIN, one CAS */
	b = dqt_shared(&DA, NCW(0, 0));
	o = O(0);
	CHECK(DA.ops->convert(&DA, b, RDLM_MODE_EX, RDLM_RF_NOQUEUE, &o) == 0);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_cqe(&DA, &v, NCW(0, 2), 0);
	CHECK(unconverted_err() == -EAGAIN && dqt_posts() == 0);
	dqt_fini();
}

/* names, modes, cancel while queued, cancel before enqueued */
static void t_dq_cancel(void)
{
	struct rdlm_verb v = { 0 }, note = { 0 };
	struct rdlm_req *a, *b;
	struct rdlm_out o;
	u32 x = dq_mkid(3, 4, 4);

	CHECK(rdlm_engine_find("dqnl") == &rdlm_dqnl_ops);
	CHECK(rdlm_engine_find("dqnl-sf") == &rdlm_dqnl_sf_ops);
	CHECK(rdlm_engine_find("ncosed") == &rdlm_ncosed_ops);
	dqt_all(&rdlm_dqnl_ops);
	a = dqt_req(&DA, RDLM_MODE_UP);
	o = O(0);
	CHECK(DA.ops->lock(&DA, a, &o) == -EOPNOTSUPP && !cap.n);
	/* queued behind x, then cancelled: on the handover, fail and pass on */
	b = dqt_behind(&DB, x);
	dqt_post(RDLM_VERB_WRITE_IMM, 0, &note);
	dqt_unlock(&DB, b);
	CHECK(!find(RDLM_ACT_FAIL, 0) && !dqt_posts());
	memset(&v, 0, sizeof(v));
	v.slot = mbox(b, 3, DQ_N_GRANT);
	v.imm = dq(b)->id;
	v.arg0 = dq_note(DQ_N_GRANT, 0, x);
	dqt_imm(&DB, &v, 3);
	CHECK(fail_err() == -ECANCELED && !find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == dq(b)->id &&
	      v.arg1 == 0);
	dqt_cqe(&DB, &note, 0, 0);
	dqt_cqe(&DB, &v, dq(b)->id, 0);
	CHECK(find(RDLM_ACT_DONE, 0));
	/* cancelled before its CAS got in: fails when the CAS misses */
	a = dqt_req(&DA, RDLM_MODE_EX);
	dqt_lock(&DA, a);
	dqt_post(RDLM_VERB_CAS, 0, &v);
	dqt_unlock(&DA, a);
	dqt_cqe(&DA, &v, x, 0);
	CHECK(fail_err() == -ECANCELED && find(RDLM_ACT_DONE, 0));
	dqt_fini();
}

/*
 * recovery: a dead predecessor, freeze, fence, thaw, re-queue; the holder
 * (its successor was the one behind the dead member) keeps its lock
 */
static void t_dq_recovery(void)
{
	struct rdlm_verb v = { 0 }, rec = { 0 }, f0 = { 0 }, f1 = { 0 }, f2 = { 0 };
	struct rdlm_verb ack0 = { 0 }, ack1 = { 0 }, ack2 = { 0 };
	struct rdlm_req *a, *b;
	u32 dead = dq_mkid(3, 0, 0), ida;

	dqt_all(&rdlm_dqnl_ops);
	b = dqt_held(&DB);			/* holder elsewhere */
	a = dqt_behind(&DA, dead);		/* queued behind node 3 */
	ida = dq(a)->id;
	dqt_down(&DA, 3);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &rec) && rec.node == 1 &&
	      rec.msg.type == DQ_M_RECOVER && rec.msg.slot == 3);
	dqt_down(&DH, 3);
	deliver(&DH, &rec, 0, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.node == 1 &&
	      (v.flags & RDLM_VF_RESET) && v.arg1 == DQ_FROZEN);
	dqt_cqe(&DH, &v, ida, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == ida &&
	      v.arg1 == DQ_FROZEN);
	dqt_cqe(&DH, &v, ida, 0);
	/* fence the live members only, the home too (its loopback) */
	CHECK(count_msgs(DQ_M_FENCE) == 3);
	dqt_post(RDLM_VERB_SEND, 0, &f0);
	dqt_post(RDLM_VERB_SEND, 1, &f1);
	dqt_post(RDLM_VERB_SEND, 2, &f2);
	CHECK(f0.node == 0 && f1.node == 1 && f2.node == 2);
	deliver(&DH, &f1, 1, 0);
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &ack1) &&
	      ack1.msg.type == DQ_M_ACK && ack1.node == 1);
	deliver(&DH, &ack1, 1, 0);
	CHECK(!dqt_posts());
	deliver(&DA, &f0, 1, 0);		/* waiter: re-queue later */
	CHECK(find(RDLM_ACT_TIMER, 0) && !find(RDLM_ACT_FAIL, 0));
	CHECK(dqt_post(RDLM_VERB_SEND, 0, &ack0) &&
	      ack0.msg.type == DQ_M_ACK);
	deliver(&DB, &f2, 1, 0);		/* holder: keeps it, says so */
	CHECK(!has_notice(RDLM_NOTICE_LOST));
	dqt_post(RDLM_VERB_SEND, 0, &ack2);
	CHECK(ack2.msg.arg == dq(b)->id);
	deliver(&DH, &ack0, 0, 0);
	CHECK(!dqt_posts());
	deliver(&DH, &ack2, 2, 0);
	/* thawed to the holder: the word's tail is b again */
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == DQ_FROZEN &&
	      v.arg1 == dq(b)->id);
	dqt_cqe(&DH, &v, DQ_FROZEN, 0);
	CHECK(DH.stats.resets == 1);
	/* the waiter re-queues under a new incarnation, behind b */
	{
		struct rdlm_out o = O(0);

		DA.ops->timer(&DA, a, a->timer_cookie, &o);
	}
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == 0 &&
	      v.arg1 == dq(a)->id && dq(a)->id != ida);
	dqt_cqe(&DA, &v, dq(b)->id, 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.arg0 == dq(b)->id);
	dqt_cqe(&DA, &v, dq(b)->id, 0);
	CHECK(!find(RDLM_ACT_GRANT, 0));
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &v) && v.node == 2);
	dqt_imm(&DB, &v, 0);			/* SUCC: b hears of a */
	CHECK(has_notice(RDLM_NOTICE_BLOCKING));
	/* b lets go: a GRANT notice, no atomic; a holds it */
	dqt_unlock(&DB, b);
	CHECK(dqt_post(RDLM_VERB_WRITE_IMM, 0, &v) && v.node == 0 &&
	      !dqt_post(RDLM_VERB_CAS, 0, &f0));
	dqt_imm(&DA, &v, 2);
	CHECK(find(RDLM_ACT_GRANT, 0) && find(RDLM_ACT_GRANT, 0)->req == a);
	/* a word whose home died: waiting requests fail with -EIO */
	b = dqt_behind(&DB, dead);
	dqt_down(&DB, 1);
	CHECK(fail_err() == -EIO);
	dqt_fini();
}

/*
 * Rejoin: a member's ->member_join clears the dead mark of its home; a
 * home's ->member_down recovers the words whose queue ends in the dead
 * member (nobody behind it would notice before it rejoins).
 */
static void t_dq_rejoin(void)
{
	struct rdlm_verb v = { 0 }, p3 = { 0 }, p4 = { 0 }, p5 = { 0 };
	struct rdlm_req *a;
	struct rdlm_out o;
	int i;

	dqt_all(&rdlm_dqnl_ops);
	dqt_down(&DA, 1);
	a = dqt_req(&DA, RDLM_MODE_EX);
	o = O(0);
	CHECK(DA.ops->lock(&DA, a, &o) == -EIO && !cap.n);
	o = O(0);
	DA.ops->member_join(&DA, 1, &o);
	CHECK(!cap.n);
	dqt_lock(&DA, a);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.node == 1 && v.slot == 3);
	dqt_cqe(&DA, &v, 0, 0);
	CHECK(find(RDLM_ACT_GRANT, 0));

	/* the home reads each of its words once */
	dqt_down(&DH, 3);
	CHECK(dqt_posts() == 16);
	for (i = 0; i < 16; i++)
		CHECK(dqt_post(RDLM_VERB_READ, i, &v) && v.node == 1 &&
		      v.slot == (u32)i && !v.req);
	dqt_post(RDLM_VERB_READ, 3, &p3);
	dqt_post(RDLM_VERB_READ, 4, &p4);
	dqt_post(RDLM_VERB_READ, 5, &p5);
	/* a live tail, then a tail that died: only that word is frozen */
	dqt_cqe(&DH, &p4, dq_mkid(2, 1, 7), 0);
	CHECK(!dqt_posts());
	dqt_cqe(&DH, &p3, dq_mkid(3, 5, 9), 0);
	CHECK(dqt_post(RDLM_VERB_CAS, 0, &v) && v.slot == 3 &&
	      (v.flags & RDLM_VF_RESET) && v.arg1 == DQ_FROZEN);
	/* a failed read may have missed one: recovered too, after slot 3 */
	dqt_cqe(&DH, &p5, 0, -EIO);
	CHECK(!dqt_posts() && dqe(&DH)->slots[5].rec == DQ_REC_PENDING);
	dqt_fini();
}
