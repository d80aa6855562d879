// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic discrete-event simulator for the rdlm protocol engines.
 *
 * N nodes, each with a lock table and one engine instance; clients on each
 * node lock words chosen by a power law.  The fabric delivers verbs with a
 * per-verb latency distribution, keeps order within a QP (ordered pair of
 * nodes), serialises atomics per address at the home NIC (or on the home
 * CPU in CPU-atomic mode), and queues received messages on the receiving
 * CPU.  Everything random comes from one seeded generator, so a run replays
 * exactly from its seed.  Faults: crash (a node stops, verbs to it fail
 * after a timeout, the others get ->member_down; with cfg->restart_delay
 * it comes back once every survivor recovered and nothing of its old
 * incarnation is in flight any more, with a fresh engine, table and
 * clients, and each survivor's ->member_join lets it in), pause (a
 * node's CPU stops, its NIC keeps serving; it resumes believing what it
 * believed), link flap (every connection of
 * a node fails for a while, its loopback included: verbs posted meanwhile
 * fail, verbs in flight fail before or after they executed, and once the
 * links are back every pair is told so through ->member_up), extra delay
 * of verbs/messages (reordering across QPs, never within one).
 *
 * On every grant the checker verifies that no incompatible holder exists
 * (a holder counts until it releases or is told LOST, whatever lease end
 * its engine announced, unless its node crashed, or is paused past that
 * lease end) and, if asked, that no conflicting request queued earlier is
 * still waiting (FIFO).  A hold not told LOST within LOST_DELAY of its
 * lease end (of running again, for a paused node), or released after it
 * untold, is a violation too.  With a range workload (cfg->range_units)
 * each op locks a range of units of its word, and only overlapping
 * requests conflict; for rangeseg a word takes the slots of all its
 * segments.
 */
#include <stdio.h>
#include <math.h>
#include "sim.h"

enum ev_type {
	EV_ARRIVE = 1,	/* verb reaches home NIC */
	EV_EXEC,	/* verb executes on the word */
	EV_CQE,		/* completion at the requester */
	EV_RX,		/* message handed to the engine */
	EV_TIMER,
	EV_START,	/* client starts its next lock */
	EV_RELEASE,	/* client unlocks */
	EV_CRASH,
	EV_PAUSE,
	EV_RESUME,
	EV_PEER_DOWN,	/* node learns that e->src died */
	EV_LINK_DOWN,	/* every connection of the node fails */
	EV_LINK_UP,	/* ... and comes back */
	EV_PEER_UP,	/* node learns that its connection to e->src is back */
	EV_RESTART,	/* a crashed node comes back with a fresh engine */
	EV_JOIN,	/* node lets e->src's new incarnation in */
	EV_UNCACHE,	/* a kept hold goes (cache_ns), cookie: its keep_seq */
	EV_LEASE,	/* checker: a hold's lease ended, cookie: that end */
};

/* of events that concern a node whatever its incarnation (faults) */
#define INC_ANY	U32_MAX

struct ev {
	u64 t;
	u64 seq;
	u8 type;
	u32 node;	/* node whose CPU/NIC handles it */
	u32 src;
	u32 client;
	struct rdlm_verb verb;
	struct rdlm_cqe cqe;
	struct rdlm_rx rx;
	struct rdlm_req *req;
	u64 cookie;
	u32 gen;	/* verbs: link generation when posted, 0 = unchecked */
	u32 inc;	/* incarnation of @node it is for, or INC_ANY */
	u32 src_inc;	/* verbs and joins: incarnation of @src */
	struct ev *next_free;
};

enum { SR_IDLE = 0, SR_WAIT, SR_HELD, SR_REL };

/* a held request's conversion (cfg->convert_pct) */
enum { CV_NONE = 0, CV_WAIT, CV_CANCEL, CV_UP, CV_DONE };

struct sreq {
	u32 node, client;
	u32 word;
	u8 mode;
	u8 state;
	u8 conv;	/* CV_* */
	u8 phase;	/* 0 shared, 1 update-read, 2 exclusive */
	bool told_lost;
	bool enq;
	bool served;	/* its home sent it a GRANT (message engines) */
	bool skipped;
	bool kept;	/* released by its client, kept by the node */
	bool blocked;	/* the engine said someone waits or tried */
	u32 keep_seq;
	u64 granted_at;
	u64 enq_seq;
	u64 lease_end;
	u64 start;
	u64 rstart, rend;	/* range workloads: units locked */
	struct rdlm_req *req;
	struct sreq *wnext;	/* active list of the word */
	struct sreq **wprev;
};

struct client {
	u32 word;
	u8 mode;
	u8 role;	/* oltp: 0 reader, 1 writer, 2 log writer */
	u16 k;
	u64 rstart, rend;
	u64 writes;	/* oltp: ops done by a (log) writer */
	u64 hold;
	u64 first_start;	/* of the current op, across retries */
	struct sreq *cur;
	bool busy;
};

/*
 * One mailbox entry. As on the fabric, a WRITE_WITH_IMM lands here when it
 * arrives and the receiver reads it only when it handles the completion,
 * so a second notice into one entry before then overwrites the first.
 */
struct sim_mbox {
	u64 value;
	u32 imm;
	u32 src;
};

struct node {
	struct rdlm_engine eng;
	u64 *table;
	u64 *busy_until;	/* per word, NIC serialisation */
	struct sim_mbox *mbox;	/* WRITE_WITH_IMM receive area */
	u32 nr_mbox;
	u64 cpu_busy;
	u64 nic_busy;		/* NIC-wide verb serialisation (nic_verb) */
	bool crashed;
	bool paused;
	u64 resumed_at;		/* when its last pause ended */
	bool await_join;	/* restarted: clients start once all let it in */
	u32 incarn;		/* restarts so far */
	u32 cuts;	/* link flaps in progress */
	u32 cut_gen;	/* link flaps so far */
	struct ev **deferred;
	u32 ndeferred, cap_deferred;
	struct client *clients;
	struct sreq *sreqs;	/* one per engine request */
};

struct trace_rec {
	u64 t;
	u32 node;
	u8 what;
	u32 word;
	u64 a, b;
};

#define TRACE_N 400

struct sim {
	const struct sim_cfg *cfg;
	struct sim_result *res;
	u64 now;
	u64 seq;
	u64 rng;
	struct ev **heap;
	u64 nheap, capheap;
	struct ev *free_ev;
	struct node *nodes;
	u32 verb_gen;		/* gen of the verb being handled */
	u64 *qp_last;		/* per ordered pair: last arrival */
	u8 *conn_down;		/* per ordered pair: a's connection to b */
	u8 *gone;		/* per ordered pair: a's engine had b's
				 * ->member_down and no ->member_join since */
	u64 *down_at;		/* per node: its last ->member_down anywhere */
	u64 *cq_last;		/* per ordered pair: last completion */
	struct sreq **wactive;	/* per global word */
	double *cdf;
	u64 enq_seq;
	u64 epoch;
	u64 lat_cap;
	u32 stride;		/* slots per word (rangeseg: its segments) */
	struct trace_rec trace[TRACE_N];
	u64 ntrace;
	u32 cur_node;
};

/* ---- random numbers (simulator's own, seeded) ---- */

static u64 rnd(struct sim *s)
{
	u64 z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rndf(struct sim *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static u64 rnd_exp(struct sim *s, u64 mean)
{
	double u = rndf(s);

	if (!mean)
		return 0;
	return (u64)(-log(1.0 - u) * (double)mean);
}

static u64 one_way(struct sim *s, u64 rtt)
{
	u64 half = rtt / 2;
	u64 j = half * s->cfg->jitter_pct / 100;
	u64 d = half - j / 2 + (j ? rnd(s) % (j + 1) : 0);

	d += rnd_exp(s, half / 20);
	if (s->cfg->delay_pct && rnd(s) % 100 < s->cfg->delay_pct)
		d += rnd(s) % (s->cfg->delay_max + 1);
	return d;
}

/* ---- trace ---- */

static const char *const what_name[] = {
	"?", "post", "exec", "cqe", "rx", "timer", "start", "release",
	"crash", "pause", "resume", "GRANT", "FAIL", "NOTICE", "DONE",
	"restart", "join",
};

static void tr(struct sim *s, u32 node, u8 what, u32 word, u64 a, u64 b)
{
	struct trace_rec *r = &s->trace[s->ntrace++ % TRACE_N];

	r->t = s->now;
	r->node = node;
	r->what = what;
	r->word = word;
	r->a = a;
	r->b = b;
}

static void dump_trace(struct sim *s)
{
	u64 i = s->ntrace > TRACE_N ? s->ntrace - TRACE_N : 0;

	fprintf(stderr, "# last events (time ns, node, event, word, a, b):\n");
	for (; i < s->ntrace; i++) {
		struct trace_rec *r = &s->trace[i % TRACE_N];

		fprintf(stderr, "#  %10llu n%-2u %-7s w%-4u %#llx %#llx\n",
			(unsigned long long)r->t, r->node,
			r->what < ARRAY_SIZE(what_name) ? what_name[r->what] : "?",
			r->word, (unsigned long long)r->a,
			(unsigned long long)r->b);
	}
}

static void violation(struct sim *s, bool fifo, const char *fmt, u32 a, u32 b,
		      u32 word)
{
	struct sim_result *res = s->res;

	if (fifo)
		res->fifo_violations++;
	else
		res->violations++;
	if (res->violations + res->fifo_violations > 1)
		return;
	snprintf(res->first_violation, sizeof(res->first_violation),
		 "%s violation at t=%llu ns on word %u: %s (req n%u vs n%u), seed %llu",
		 fifo ? "FIFO" : "safety", (unsigned long long)s->now, word, fmt,
		 a, b, (unsigned long long)s->cfg->seed);
	if (!s->cfg->quiet) {
		fprintf(stderr, "# %s\n", res->first_violation);
		dump_trace(s);
	}
}

/* ---- event heap ---- */

static struct ev *ev_new(struct sim *s, u8 type, u64 t, u32 node)
{
	struct ev *e = s->free_ev;

	if (e)
		s->free_ev = e->next_free;
	else
		e = malloc(sizeof(*e));
	if (!e)
		abort();
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->t = t < s->now ? s->now : t;
	e->node = node;
	e->inc = s->nodes[node].incarn;
	return e;
}

static bool ev_before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *s, struct ev *e)
{
	u64 i;

	if (!e->seq)
		e->seq = ++s->seq;
	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? s->capheap * 2 : 1024;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	i = s->nheap++;
	while (i && ev_before(e, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct ev *ev_pop(struct sim *s)
{
	struct ev *top, *last;
	u64 i = 0, c;

	if (!s->nheap)
		return NULL;
	top = s->heap[0];
	last = s->heap[--s->nheap];
	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && ev_before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!ev_before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static void ev_free(struct sim *s, struct ev *e)
{
	e->next_free = s->free_ev;
	s->free_ev = e;
}

/* ---- checker ---- */

static u32 word_of(const struct sim *s, u32 node, u32 slot)
{
	return slot * s->cfg->nodes + node;
}

static void w_add(struct sim *s, struct sreq *r)
{
	struct sreq **h = &s->wactive[r->word];

	r->wnext = *h;
	if (*h)
		(*h)->wprev = &r->wnext;
	r->wprev = h;
	*h = r;
}

static void w_del(struct sreq *r)
{
	if (!r->wprev)
		return;
	*r->wprev = r->wnext;
	if (r->wnext)
		r->wnext->wprev = r->wprev;
	r->wprev = NULL;
	r->wnext = NULL;
}

static bool compat(u8 a, u8 b)
{
	/* phases: 0 shared, 1 update (reading), 2 exclusive */
	return (a == 0 && b == 0) || (a == 0 && b == 1) || (a == 1 && b == 0);
}

/* does a request of mode @later have to wait for an earlier @earlier? */
static bool waits_for(u8 later, u8 earlier)
{
	if (later == RDLM_MODE_EX || earlier == RDLM_MODE_EX)
		return true;
	if (earlier == RDLM_MODE_UP)
		return true;
	return false;
}

/* range workloads: do the two requests' ranges meet? */
static bool overlap(const struct sim *s, const struct sreq *a,
		    const struct sreq *b)
{
	return !s->cfg->range_units ||
	       (a->rstart <= b->rend && b->rstart <= a->rend);
}

/*
 * A holder counts until it releases or is told LOST: the lock manager's
 * users stop on that notice, not at the lease end the engine announced,
 * so a second grant before it is unsafe. Nor does a holder on a crashed
 * node count, or one on a paused node past its lease end: that CPU runs
 * nothing, its users included, and lease_check() holds the engine to
 * telling it within LOST_DELAY of running again.
 */
static bool counts(struct sim *s, struct sreq *h)
{
	const struct node *n = &s->nodes[h->node];

	if (h->state != SR_HELD || h->told_lost || n->crashed)
		return false;
	return !n->paused || s->now < h->lease_end;
}

static void check_holders(struct sim *s, struct sreq *r)
{
	struct sreq *h;

	for (h = s->wactive[r->word]; h; h = h->wnext) {
		if (h == r || !counts(s, h) || !overlap(s, h, r))
			continue;
		if (!compat(h->phase, r->phase))
			violation(s, false, "incompatible holders", r->node,
				  h->node, r->word);
	}
}

static void check_fifo(struct sim *s, struct sreq *r)
{
	struct sreq *a;

	if (!s->cfg->fifo_check || !r->enq)
		return;
	for (a = s->wactive[r->word]; a; a = a->wnext) {
		if (a == r || a->state != SR_WAIT || !a->enq || a->skipped ||
		    a->served ||
		    s->nodes[a->node].crashed || a->enq_seq > r->enq_seq ||
		    !overlap(s, a, r))
			continue;
		if (s->cfg->fifo_prefix || waits_for(r->mode, a->mode))
			violation(s, true, "granted before an earlier waiter",
				  r->node, a->node, r->word);
	}
}

/* ---- fabric ---- */

static u64 *pair(struct sim *s, u64 *arr, u32 a, u32 b)
{
	return &arr[(u64)a * s->cfg->nodes + b];
}

static u8 *pair8(struct sim *s, u8 *arr, u32 a, u32 b)
{
	return &arr[(u64)a * s->cfg->nodes + b];
}

static u64 qp_time(struct sim *s, u64 *arr, u32 a, u32 b, u64 t)
{
	u64 *last = pair(s, arr, a, b);

	if (t <= *last)
		t = *last + 1;
	*last = t;
	return t;
}

/* a verb between @a and @b posted at generation @gen reaches its end */
static u32 link_gen(struct sim *s, u32 a, u32 b)
{
	return s->nodes[a].cut_gen + s->nodes[b].cut_gen + 1;
}

static bool link_up(struct sim *s, u32 a, u32 b)
{
	return !s->nodes[a].cuts && !s->nodes[b].cuts;
}

static void send_cqe(struct sim *s, u32 req_node, u32 req_inc, u32 home,
		     const struct rdlm_verb *v, int status, u64 value, u64 t)
{
	struct ev *e = ev_new(s, EV_CQE, 0, req_node);

	e->inc = req_inc;	/* the poster's incarnation, maybe gone */

	/* a success still has to come back over the link */
	e->gen = status ? 0 : s->verb_gen;
	e->src = home;

	e->t = qp_time(s, s->cq_last, req_node, home, t);
	e->cqe.req = v->req;
	e->cqe.cookie = v->cookie;
	e->cqe.kind = v->kind;
	e->cqe.status = status;
	e->cqe.value = value;
	ev_push(s, e);
}

static bool cpu_path(struct sim *s, const struct rdlm_verb *v)
{
	return v->kind == RDLM_VERB_SEND || v->kind == RDLM_VERB_WRITE_IMM ||
	       s->cfg->ep.atomic_mode == RDLM_ATOMIC_CPU;
}

static void post_verb(struct sim *s, u32 src, const struct rdlm_verb *v)
{
	struct node *dst;
	struct ev *e;
	u64 rtt;

	s->res->wire_msgs++;
	if (v->node >= s->cfg->nodes) {
		send_cqe(s, src, s->nodes[src].incarn, src, v, -EINVAL, 0,
			 s->now + 1);
		return;
	}
	dst = &s->nodes[v->node];
	if (!link_up(s, src, v->node)) {
		send_cqe(s, src, s->nodes[src].incarn, v->node, v, -EIO, 0,
			 s->now + s->cfg->err_timeout);
		return;
	}
	if (*pair8(s, s->conn_down, src, v->node)) {
		/* not reconnected yet: the fabric refuses the post */
		send_cqe(s, src, s->nodes[src].incarn, v->node, v, -ENOTCONN,
			 0, s->now + 1);
		return;
	}
	rtt = cpu_path(s, v) ? s->cfg->rtt_send :
	      v->kind == RDLM_VERB_READ && s->cfg->rtt_read ? s->cfg->rtt_read :
	      s->cfg->rtt_atomic;
	e = ev_new(s, EV_ARRIVE, 0, v->node);
	e->src = src;
	e->src_inc = s->nodes[src].incarn;
	e->gen = link_gen(s, src, v->node);
	e->verb = *v;
	e->t = qp_time(s, s->qp_last, src, v->node, s->now + one_way(s, rtt));
	ev_push(s, e);
	(void)dst;
}

static void apply_exec(struct sim *s, struct ev *e)
{
	struct node *home = &s->nodes[e->node];
	const struct rdlm_verb *v = &e->verb;
	u64 old = home->table[v->slot], rtt;
	struct sreq *r = v->req ? (struct sreq *)(uintptr_t)v->req->user : NULL;
	u32 w = word_of(s, e->node, v->slot);

	home->table[v->slot] = rdlm_word_apply(old, v->kind, v->arg0, v->arg1);
	tr(s, e->node, 2, w, old, home->table[v->slot]);
	if ((v->flags & RDLM_VF_ENQUEUE) && r) {
		r->enq = true;
		r->enq_seq = ++s->enq_seq;
	}
	if ((v->flags & RDLM_VF_RESET) && v->kind == RDLM_VERB_CAS &&
	    old == v->arg0 && old != v->arg1) {
		struct sreq *a;

		if (getenv("SIM_DEBUG")) {
			fprintf(stderr, "reset t=%llu w=%u by n%u old=%#llx new=%#llx\n",
				(unsigned long long)s->now, w, e->src,
				(unsigned long long)old, (unsigned long long)v->arg1);
			for (a = s->wactive[w]; a; a = a->wnext)
				fprintf(stderr, "  n%u st%d mode%d k%u start=%llu lease_end=%llu enq=%d\n",
					a->node, a->state, a->mode, a->req->slots,
					(unsigned long long)a->start,
					(unsigned long long)a->lease_end, a->enq);
		}
		for (a = s->wactive[w]; a; a = a->wnext)
			if (a->state == SR_WAIT && a->enq &&
			    (!v->arg1 || a == r ||
			     (r && a->enq_seq < r->enq_seq)))
				a->skipped = true;
	}
	if (s->cfg->ep.atomic_mode == RDLM_ATOMIC_CPU)
		s->res->wire_msgs++;	/* the reply */
	rtt = s->cfg->ep.atomic_mode == RDLM_ATOMIC_CPU ?
		s->cfg->rtt_send : v->kind == RDLM_VERB_READ &&
		s->cfg->rtt_read ? s->cfg->rtt_read : s->cfg->rtt_atomic;
	send_cqe(s, e->src, e->src_inc, e->node, v, 0, old,
		 s->now + one_way(s, rtt));
}

/* ---- engine glue ---- */

static void client_next(struct sim *s, u32 node, u32 ci, u64 delay);

static void client_release_at(struct sim *s, u32 nid, u32 ci,
			      struct rdlm_req *req, u64 delay)
{
	struct ev *e = ev_new(s, EV_RELEASE, s->now + delay, nid);

	e->client = ci;
	e->req = req;
	ev_push(s, e);
}

/* A grant of @mode to a client whose operation started at @start. */
static void count_grant(struct sim *s, u8 mode, u64 start)
{
	u64 wt = s->now - start;

	s->res->grants++;
	if (mode == RDLM_MODE_SH)
		s->res->reads++;
	if (s->res->nlat < s->lat_cap) {
		s->res->lat[s->res->nlat++] = wt;
		if (wt > s->res->max_wait)
			s->res->max_wait = wt;
	}
}

/* Hold caching: give @r's kept hold back at @t (cookie: its keep) */
static void uncache_at(struct sim *s, u32 nid, struct sreq *r, u64 t)
{
	struct ev *e = ev_new(s, EV_UNCACHE, t, nid);

	e->req = r->req;
	e->cookie = r->keep_seq;
	ev_push(s, e);
}

/*
 * How late a LOST notice may come after the lease end its grant announced.
 * The leased engines (bakery, central, rangecomb, rangeseg's segments) tell
 * it from the holder's own lease timer, armed for that lease end; the
 * simulator fires a timer at its time (it does not queue behind the CPU's
 * messages) and hands a notice over inside the engine call. So nothing may
 * be late: one tick only orders the check after what happens at the lease
 * end itself (central arms its timer after it emits the grant).
 */
#define LOST_DELAY 1

/* a grant announced @r's lease end: check at its end that @r is told */
static void lease_watch(struct sim *s, u32 nid, struct sreq *r)
{
	struct ev *e;

	if (r->lease_end == U64_MAX)
		return;
	e = ev_new(s, EV_LEASE, r->lease_end + LOST_DELAY, nid);
	e->req = r->req;
	e->cookie = r->lease_end;
	ev_push(s, e);
}

/* @req's hold with lease end @end: told LOST by now, or not held any more? */
static void lease_check(struct sim *s, u32 nid, struct rdlm_req *req, u64 end)
{
	struct node *n = &s->nodes[nid];
	struct sreq *r = &n->sreqs[req->idx];
	struct ev *e;

	/* released, another hold, or renewed (conversion): not this one */
	if (r->state != SR_HELD || r->lease_end != end || r->told_lost)
		return;
	if (s->now < n->resumed_at + LOST_DELAY) {
		/* paused meanwhile: its timer runs as the CPU does */
		e = ev_new(s, EV_LEASE, n->resumed_at + LOST_DELAY, nid);
		e->req = req;
		e->cookie = end;
		ev_push(s, e);
		return;
	}
	violation(s, false, "lease end passed without LOST", nid, nid, r->word);
}

static void on_action(struct rdlm_out *out, const struct rdlm_action *a)
{
	struct sim *s = out->priv;
	u32 nid = s->cur_node;
	struct node *n = &s->nodes[nid];
	struct sreq *r = a->req ? (struct sreq *)(uintptr_t)a->req->user : NULL;
	struct ev *e;

	switch (a->kind) {
	case RDLM_ACT_POST:
		tr(s, nid, 1, r ? r->word : 0, a->verb.kind, a->verb.arg0);
		if (r && (a->verb.flags & RDLM_VF_DEQUEUE))
			r->enq = false;
		if (!r && a->verb.kind == RDLM_VERB_SEND &&
		    ((a->verb.flags & RDLM_VF_DEQUEUE) ||
		     a->verb.msg.type == RDLM_MSG_BUSY ||
		     a->verb.msg.type == RDLM_MSG_GRANT) &&
		    a->verb.node < s->cfg->nodes) {
			/*
			 * A home's answer: the request it names is not queued
			 * (busy: central says so by the type alone; cancelled),
			 * or no longer waits there (granted;
			 * a grant that arrives too late or never is the
			 * requester's business, not a FIFO matter).
			 */
			struct node *rn = &s->nodes[a->verb.node];
			struct rdlm_req *q = rdlm_req_lookup(&rn->eng,
							     a->verb.msg.reqid);

			if (q && a->verb.msg.type == RDLM_MSG_GRANT)
				rn->sreqs[q->idx].served = true;
			else if (q)
				rn->sreqs[q->idx].enq = false;
		}
		post_verb(s, nid, &a->verb);
		break;
	case RDLM_ACT_TIMER:
		e = ev_new(s, EV_TIMER, s->now + a->delay_ns, nid);
		e->req = a->req;
		e->cookie = a->cookie;
		ev_push(s, e);
		break;
	case RDLM_ACT_GRANT:
		tr(s, nid, 11, r->word, a->mode, a->lease_end);
		if (r->state == SR_HELD &&
		    (r->conv == CV_WAIT || r->conv == CV_CANCEL) &&
		    a->mode == RDLM_MODE_EX) {
			/* converted in place: exclusive from now on */
			r->conv = CV_UP;
			r->phase = 2;
			r->lease_end = a->lease_end ?: U64_MAX;
			lease_watch(s, nid, r);
			if (counts(s, r))
				check_holders(s, r);
			s->res->converts++;
			client_release_at(s, nid, r->client, a->req,
					  n->clients[r->client].hold);
			break;
		}
		if (r->state != SR_WAIT) {
			violation(s, false, "grant of a request not waiting",
				  nid, nid, r->word);
			break;
		}
		r->state = SR_HELD;
		r->lease_end = a->lease_end ?: U64_MAX;	/* 0: no lease */
		r->granted_at = s->now;
		lease_watch(s, nid, r);
		r->phase = r->mode == RDLM_MODE_SH ? 0 :
			   r->mode == RDLM_MODE_UP ? 1 : 2;
		check_holders(s, r);
		check_fifo(s, r);
		count_grant(s, r->mode, n->clients[r->client].first_start);
		r->conv = CV_NONE;
		client_release_at(s, nid, r->client, a->req,
				  n->clients[r->client].hold);
		break;
	case RDLM_ACT_FAIL:
		tr(s, nid, 12, r->word, (u64)(-a->err), 0);
		if (getenv("SIM_DEBUG"))
			fprintf(stderr, "fail t=%llu n%u w%u err %d mode %d k %u\n",
				(unsigned long long)s->now, nid, r->word, a->err,
				r->mode, a->req->slots);
		s->res->fails++;
		if (r->state != SR_WAIT)
			violation(s, false, "fail of a request not waiting",
				  nid, nid, r->word);
		r->state = SR_IDLE;
		w_del(r);
		n->clients[r->client].cur = NULL;
		if (a->err == -EIO)	/* home gone: choose another word */
			n->clients[r->client].first_start = 0;
		client_next(s, nid, r->client, 1000 + rnd(s) % 5000);
		break;
	case RDLM_ACT_NOTICE:
		tr(s, nid, 13, r->word, a->notice, 0);
		if (a->notice == RDLM_NOTICE_LOST) {
			r->told_lost = true;
			s->res->lost++;
		} else if (a->notice == RDLM_NOTICE_UNCONVERTED) {
			r->conv = CV_DONE;
			s->res->unconverted++;
			client_release_at(s, nid, r->client, a->req, 1);
		} else if (a->notice == RDLM_NOTICE_UPGRADED &&
			   r->state == SR_HELD) {
			r->phase = 2;
			if (counts(s, r))
				check_holders(s, r);
		} else if (a->notice == RDLM_NOTICE_BLOCKING ||
			   a->notice == RDLM_NOTICE_TRIED) {
			r->blocked = true;
		}
		/* a kept hold goes at once (not from inside the engine) */
		if (r->kept && (r->blocked || r->told_lost)) {
			if (r->blocked)
				s->res->cache_revoked++;
			uncache_at(s, nid, r, s->now);
		}
		break;
	case RDLM_ACT_DONE:
		tr(s, nid, 14, r->word, 0, 0);
		w_del(r);
		r->state = SR_IDLE;
		rdlm_req_free(&n->eng, a->req);
		break;
	default:
		break;
	}
}

static struct rdlm_out mkout(struct sim *s, u32 node)
{
	struct rdlm_out o = { .now = s->now, .emit = on_action, .priv = s };

	s->cur_node = node;
	return o;
}

/* ---- workload ---- */

static u32 pick_word(struct sim *s)
{
	double u = rndf(s);
	u32 lo = 0, hi = s->cfg->nlocks - 1;

	while (lo < hi) {
		u32 mid = (lo + hi) / 2;

		if (s->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* spread popular locks over the homes */
	return lo;
}

static void client_next(struct sim *s, u32 node, u32 ci, u64 delay)
{
	struct ev *e;

	if (s->res->grants >= s->cfg->nops)
		return;
	e = ev_new(s, EV_START, s->now + delay, node);
	e->client = ci;
	ev_push(s, e);
}

/* Filebench-OLTP-like roles: 39/48 readers, one log writer, writers */
static u8 oltp_role(const struct sim_cfg *cfg, u32 ci)
{
	if (ci == cfg->clients - 1 && cfg->clients > 1)
		return 2;
	return ci < cfg->clients * 39 / 48 ? 0 : 1;
}

/*
 * OLTP pacing: each writer does 100 writes per 1000 reads, the log writer
 * one per 3200 reads; readers run freely.
 */
static bool oltp_may_start(struct sim *s, struct client *c)
{
	if (c->role == 1)
		return c->writes * 10 <= s->res->reads;
	if (c->role == 2)
		return c->writes * 3200 <= s->res->reads;
	return true;
}

/* the range of the next op of @c (range workloads) */
static void pick_range(struct sim *s, struct client *c)
{
	const struct sim_cfg *cfg = s->cfg;
	u64 units = cfg->range_units, len, lo, hi, seg, flen;

	if (cfg->oltp) {
		flen = units / 9;	/* 8 data files, 1 log file */
		len = c->role == 2 ? 2048 : 64;
		if (len > flen)
			len = flen;
		lo = c->role == 2 ? 8 : c->role == 1 ? c->writes % 8 :
		     rnd(s) % 8;
		c->mode = c->role ? RDLM_MODE_EX : RDLM_MODE_SH;
		if (c->role)
			c->writes++;
		c->rstart = lo * flen + rnd(s) % (flen - len + 1);
		c->rend = c->rstart + len - 1;
		return;
	}
	lo = cfg->range_len_min ? cfg->range_len_min : 1;
	hi = cfg->range_len_max ? cfg->range_len_max : units;
	if (hi > units)
		hi = units;
	if (lo > hi)
		lo = hi;
	len = lo + rnd(s) % (hi - lo + 1);
	c->rstart = rnd(s) % (units - len + 1);
	c->rend = c->rstart + len - 1;
	if (cfg->range_max_segs) {
		seg = cfg->ep.seg_units ? cfg->ep.seg_units : 256;
		hi = (c->rstart / seg + cfg->range_max_segs) * seg - 1;
		if (c->rend > hi)
			c->rend = hi;
	}
}

/* @r's engine request is released */
static void sreq_release(struct sim *s, u32 nid, struct sreq *r)
{
	struct node *n = &s->nodes[nid];
	struct rdlm_out out;

	r->state = SR_REL;
	s->res->releases++;
	out = mkout(s, nid);
	if (n->eng.ops->unlock(&n->eng, r->req, &out))
		violation(s, false, "unlock refused", nid, nid, r->word);
	/*
	 * a hold that outlived its lease must hear of it, from its unlock at
	 * the latest: a paused holder's release may come before its timer
	 */
	if (s->now >= r->lease_end && !r->told_lost)
		violation(s, false, "released after its lease end without LOST",
			  nid, nid, r->word);
}

/* give a kept hold back */
static void kept_release(struct sim *s, u32 nid, struct sreq *r)
{
	r->kept = false;
	sreq_release(s, nid, r);
}

static void on_uncache(struct sim *s, u32 nid, struct rdlm_req *req,
		       u64 seq)
{
	struct sreq *r = (struct sreq *)(uintptr_t)req->user;

	if (req->busy && r->req == req && r->kept && r->keep_seq == seq)
		kept_release(s, nid, r);
}

/*
 * Hold caching: client @ci's request is granted from a hold its node
 * kept on the word, without the engine, when the hold's mode covers it;
 * a kept hold too weak for it is given back first. True when granted.
 */
static bool cache_take(struct sim *s, u32 nid, u32 ci)
{
	struct client *c = &s->nodes[nid].clients[ci];
	u32 w = word_of(s, c->word % s->cfg->nodes, c->word / s->cfg->nodes);
	struct sreq *r;

	for (r = s->wactive[w]; r; r = r->wnext) {
		if (r->node != nid || !r->kept || r->blocked || r->told_lost)
			continue;
		if (c->mode == RDLM_MODE_UP ||
		    (c->mode == RDLM_MODE_EX && r->phase != 2)) {
			kept_release(s, nid, r);
			return false;
		}
		r->kept = false;
		r->client = ci;
		c->cur = r;
		s->res->cache_hits++;
		count_grant(s, c->mode, c->first_start);
		client_release_at(s, nid, ci, r->req, c->hold);
		return true;
	}
	return false;
}

/* Hold caching: keep @r's hold for the node's next request. */
static bool cache_keep(struct sim *s, u32 nid, struct sreq *r)
{
	u64 until = s->now + s->cfg->cache_ns;

	if (!s->cfg->cache_ns || r->blocked || r->told_lost ||
	    r->mode == RDLM_MODE_UP || s->cfg->range_units)
		return false;
	if (r->lease_end && r->lease_end != U64_MAX &&
	    r->lease_end > r->granted_at &&
	    r->granted_at + (r->lease_end - r->granted_at) / 2 < until)
		until = r->granted_at + (r->lease_end - r->granted_at) / 2;
	if (until <= s->now)
		return false;
	r->kept = true;
	r->keep_seq++;
	s->res->cache_kept++;
	uncache_at(s, nid, r, until);
	return true;
}

static void client_start(struct sim *s, u32 nid, u32 ci)
{
	struct node *n = &s->nodes[nid];
	struct client *c = &n->clients[ci];
	struct rdlm_req *req;
	struct rdlm_out out;
	struct sreq *r;
	double u;
	u32 lock;
	int ret;

	if (c->cur || s->res->grants >= s->cfg->nops)
		return;
	if (!c->first_start) {
		if (s->cfg->oltp && !oltp_may_start(s, c)) {
			client_next(s, nid, ci, 2000);
			return;
		}
		lock = s->cfg->fixed_word ?
		       (nid * s->cfg->clients + ci) % s->cfg->nlocks :
		       pick_word(s);
		c->word = lock;
		u = rndf(s);
		c->mode = u < s->cfg->rho ? RDLM_MODE_SH :
			  u < s->cfg->rho + s->cfg->upd ? RDLM_MODE_UP :
			  RDLM_MODE_EX;
		c->k = 1;
		c->hold = rnd_exp(s, s->cfg->hold);
		if (s->cfg->long_ratio > 0 && rndf(s) < s->cfg->long_ratio) {
			c->hold = s->cfg->long_hold;
			c->k = s->cfg->long_k;
		}
		if (s->cfg->cascade_hold && !nid && !ci) {
			c->mode = RDLM_MODE_EX;
			c->hold = s->cfg->cascade_hold;
		}
		if (s->cfg->range_units)
			pick_range(s, c);
		c->first_start = s->now;
	}
	if (s->cfg->cache_ns && cache_take(s, nid, ci))
		return;
	if (s->cfg->node_queue) {
		/*
		 * The lock manager asks the engine once per node and word and
		 * grants its local waiters from that hold; here they wait.
		 */
		u32 w = word_of(s, c->word % s->cfg->nodes,
				c->word / s->cfg->nodes);

		for (r = s->wactive[w]; r; r = r->wnext) {
			if (r->node == nid) {
				client_next(s, nid, ci, 1000);
				return;
			}
		}
	}
	req = rdlm_req_alloc(&n->eng);
	if (!req) {
		client_next(s, nid, ci, 1000);
		return;
	}
	r = &n->sreqs[req->idx];
	memset(r, 0, sizeof(*r));
	r->node = nid;
	r->client = ci;
	r->req = req;
	req->node = c->word % s->cfg->nodes;
	req->slot = c->word / s->cfg->nodes * s->stride;
	req->mode = c->mode;
	req->slots = c->k;
	req->start = c->rstart;
	req->end = c->rend;
	req->user = (u64)(uintptr_t)r;
	r->word = word_of(s, req->node, req->slot / s->stride);
	r->rstart = c->rstart;
	r->rend = c->rend;
	r->mode = c->mode;
	r->state = SR_WAIT;
	r->start = s->now;
	out = mkout(s, nid);
	ret = n->eng.ops->lock(&n->eng, req, &out);
	if (ret) {
		rdlm_req_free(&n->eng, req);
		c->first_start = 0;
		client_next(s, nid, ci, 1000);
		return;
	}
	c->cur = r;
	w_add(s, r);
	tr(s, nid, 6, r->word, c->mode, req->idx);
}

/*
 * Engines with ->convert: a shared hold is sometimes converted to
 * exclusive first (with NODLCKWT or not), cancelled if that takes too
 * long, and sometimes converted back down before its release. True when
 * the release waits for that.
 */
static bool client_convert(struct sim *s, u32 nid, u32 ci, struct sreq *r,
			   struct rdlm_req *req)
{
	struct node *n = &s->nodes[nid];
	struct rdlm_out out;
	u8 flags;

	if (!s->cfg->convert_pct || !rdlm_engine_converts(&n->eng) ||
	    r->told_lost)
		return false;
	switch (r->conv) {
	case CV_NONE:
		if (r->phase || rnd(s) % 100 >= s->cfg->convert_pct)
			return false;
		flags = rnd(s) & 1 ? RDLM_RF_NODLCKWT : 0;
		out = mkout(s, nid);
		if (n->eng.ops->convert(&n->eng, req, RDLM_MODE_EX, flags,
					&out))
			return false;
		r->conv = CV_WAIT;
		/* patience: then cancel (the next release event) */
		client_release_at(s, nid, ci, req,
				  4 * n->clients[ci].hold + 20 * s->cfg->rtt_send);
		return true;
	case CV_WAIT:
		out = mkout(s, nid);
		if (!n->eng.ops->convert(&n->eng, req, RDLM_MODE_SH, 0, &out))
			r->conv = CV_CANCEL;
		return true;
	case CV_CANCEL:
		return true;
	case CV_UP:
		r->conv = CV_DONE;
		if (rnd(s) & 1)
			return false;
		/* shared again at once: others may come in from now on */
		r->phase = 0;
		out = mkout(s, nid);
		if (n->eng.ops->convert(&n->eng, req, RDLM_MODE_SH, 0, &out))
			violation(s, false, "down-conversion refused", nid,
				  nid, r->word);
		client_release_at(s, nid, ci, req, n->clients[ci].hold);
		return true;
	default:
		return false;
	}
}

static void client_release(struct sim *s, u32 nid, u32 ci, struct rdlm_req *req)
{
	struct node *n = &s->nodes[nid];
	struct sreq *r = (struct sreq *)(uintptr_t)req->user;
	struct client *c = &n->clients[ci];

	if (c->cur != r || r->state != SR_HELD)
		return;
	if (client_convert(s, nid, ci, r, req))
		return;
	tr(s, nid, 7, r->word, 0, 0);
	if (s->cfg->cascade_hold && !nid && !ci && !s->res->cascade_t0)
		s->res->cascade_t0 = s->now;
	if (!cache_keep(s, nid, r))
		sreq_release(s, nid, r);
	c->cur = NULL;
	c->first_start = 0;
	client_next(s, nid, ci, rnd_exp(s, s->cfg->think) + 1);
}

/* ---- main loop ---- */

static bool cpu_event(struct ev *e)
{
	return e->type != EV_EXEC && e->type != EV_CRASH &&
	       e->type != EV_RESUME && e->type != EV_PAUSE &&
	       e->type != EV_LINK_DOWN && e->type != EV_LINK_UP;
}

static void defer(struct sim *s, struct node *n, struct ev *e)
{
	if (n->ndeferred == n->cap_deferred) {
		n->cap_deferred = n->cap_deferred ? n->cap_deferred * 2 : 64;
		n->deferred = realloc(n->deferred,
				      n->cap_deferred * sizeof(*n->deferred));
		if (!n->deferred)
			abort();
	}
	n->deferred[n->ndeferred++] = e;
}

static void add_stats(struct sim_result *res, struct rdlm_engine *eng)
{
	u32 j;

	for (j = 0; j < RDLM_VERB_NR; j++)
		res->verbs[j] += rdlm_stat_read(&eng->stats.verbs[j]);
	res->resets += rdlm_stat_read(&eng->stats.resets);
	res->zero_resets += rdlm_stat_read(&eng->stats.zero_resets);
	res->overflows += rdlm_stat_read(&eng->stats.overflows);
	res->cas_failed += rdlm_stat_read(&eng->stats.cas_failed);
}

static void node_params(struct sim *s, u32 i, struct rdlm_engine_params *p)
{
	const struct sim_cfg *cfg = s->cfg;

	*p = cfg->ep;
	p->node = i;
	p->nr_nodes = cfg->nodes;
	p->nr_slots = cfg->slots;
	p->nr_reqs = cfg->req_pool ? cfg->req_pool : cfg->clients * 4;
	p->home_entries = cfg->ep.home_entries ?: p->nr_reqs * cfg->nodes;
	p->seed = cfg->seed * 1000003ULL + i + ((u64)s->nodes[i].incarn << 32);
}

/* a client's first lock, at most 10 us from now */
static void client_first(struct sim *s, u32 nid, u32 ci)
{
	struct ev *e = ev_new(s, EV_START, s->now + rnd(s) % 10000, nid);

	e->client = ci;
	ev_push(s, e);
}

/* a restarted node's clients begin once every live member let it in */
static void maybe_start(struct sim *s, u32 d)
{
	struct node *n = &s->nodes[d];
	u32 i;

	if (!n->await_join || n->crashed)
		return;
	for (i = 0; i < s->cfg->nodes; i++)
		if (i != d && !s->nodes[i].crashed && *pair8(s, s->gone, i, d))
			return;
	n->await_join = false;
	if (s->cfg->server_node0 && !d)
		return;
	for (i = 0; i < s->cfg->clients; i++)
		client_first(s, d, i);
}

/* is @e a verb, completion or message from or to crashed node @d? */
static bool in_flight_with(const struct ev *e, u32 d)
{
	switch (e->type) {
	case EV_ARRIVE:
	case EV_EXEC:
		return e->node == d || e->src == d;
	case EV_CQE:
	case EV_RX:
		return e->node != d && e->src == d;
	default:
		return false;
	}
}

/*
 * As the kernel's fencing: every survivor has recovered from @d (its
 * ->member_down ran, a while ago: a rejoin takes at least a heartbeat),
 * nothing @d posted or was posted to is in flight any more, and the
 * survivors' connections with it stay down until each lets the new
 * incarnation in.
 */
static bool restart_ready(struct sim *s, u32 d)
{
	u32 i, j;
	u64 k;

	for (i = 0; i < s->cfg->nodes; i++)
		if (i != d && !s->nodes[i].crashed && !*pair8(s, s->gone, i, d))
			return false;
	if (s->now < s->down_at[d] + s->cfg->err_timeout)
		return false;
	for (i = 0; i < s->cfg->nodes; i++) {
		*pair8(s, s->conn_down, i, d) = i != d;
		*pair8(s, s->conn_down, d, i) = i != d;
	}
	for (k = 0; k < s->nheap; k++)
		if (in_flight_with(s->heap[k], d))
			return false;
	for (i = 0; i < s->cfg->nodes; i++)
		for (j = 0; j < s->nodes[i].ndeferred; j++)
			if (in_flight_with(s->nodes[i].deferred[j], d))
				return false;
	return true;
}

/* crashed node @d comes back: fresh engine, table, mailbox and clients */
static void node_restart(struct sim *s, u32 d)
{
	const struct sim_cfg *cfg = s->cfg;
	struct node *n = &s->nodes[d];
	struct rdlm_engine_params p;
	struct rdlm_out out;
	struct ev *e;
	u32 i;

	if (!n->crashed)
		return;
	if (!restart_ready(s, d)) {
		e = ev_new(s, EV_RESTART, s->now + cfg->err_timeout, d);
		e->inc = INC_ANY;
		ev_push(s, e);
		return;
	}
	tr(s, d, 15, 0, n->incarn + 1, 0);
	s->res->restarts++;
	/* its old requests no longer hold or wait, for the checker */
	for (i = 0; i < n->eng.p.nr_reqs; i++)
		w_del(&n->sreqs[i]);
	memset(n->sreqs, 0, n->eng.p.nr_reqs * sizeof(*n->sreqs));
	add_stats(s->res, &n->eng);
	rdlm_engine_fini(&n->eng);
	n->incarn++;
	node_params(s, d, &p);
	if (rdlm_engine_init(&n->eng, cfg->ops, &p))
		abort();
	memset(n->table, 0, cfg->slots * sizeof(*n->table));
	memset(n->mbox, 0, n->nr_mbox * sizeof(*n->mbox));
	for (i = 0; i < cfg->clients; i++) {
		u8 role = n->clients[i].role;

		memset(&n->clients[i], 0, sizeof(n->clients[i]));
		n->clients[i].role = role;
	}
	n->crashed = false;
	n->paused = false;
	n->cuts = 0;
	if (n->cpu_busy < s->now)
		n->cpu_busy = s->now;
	n->await_join = true;
	for (i = 0; i < cfg->nodes; i++) {
		if (i == d)
			continue;
		if (s->nodes[i].crashed) {
			/* departed in the membership it starts from */
			*pair8(s, s->gone, d, i) = 1;
			if (n->eng.ops->member_down) {
				out = mkout(s, d);
				n->eng.ops->member_down(&n->eng, i, ++s->epoch,
							&out);
			}
			continue;
		}
		*pair8(s, s->gone, d, i) = 0;
		e = ev_new(s, EV_JOIN, s->now, i);
		e->src = d;
		e->src_inc = n->incarn;
		ev_push(s, e);
	}
	maybe_start(s, d);
}

static void handle(struct sim *s, struct ev *e)
{
	struct node *n = &s->nodes[e->node];
	struct rdlm_out out;
	u64 t;
	u32 i;

	if (e->type == EV_RESTART) {
		node_restart(s, e->node);
		ev_free(s, e);
		return;
	}
	if (e->inc != INC_ANY && e->inc != n->incarn) {
		/* for an incarnation that is gone (restart waited for verbs) */
		ev_free(s, e);
		return;
	}
	if (n->crashed && e->type == EV_EXEC) {
		send_cqe(s, e->src, e->src_inc, e->node, &e->verb, -EIO, 0,
			 s->now + s->cfg->err_timeout);
		ev_free(s, e);
		return;
	}
	if (n->crashed && e->type != EV_ARRIVE) {
		ev_free(s, e);
		return;
	}
	if (n->paused && cpu_event(e) &&
	    !(e->type == EV_ARRIVE && !cpu_path(s, &e->verb))) {
		defer(s, n, e);
		return;
	}
	s->verb_gen = e->type == EV_ARRIVE || e->type == EV_EXEC ? e->gen : 0;
	switch (e->type) {
	case EV_ARRIVE:
		if (n->crashed || e->gen != link_gen(s, e->src, e->node)) {
			/* the link failed under it: never executed */
			send_cqe(s, e->src, e->src_inc, e->node, &e->verb,
				 -EIO, 0, s->now + s->cfg->err_timeout);
			break;
		}
		if (e->verb.kind == RDLM_VERB_SEND ||
		    e->verb.kind == RDLM_VERB_WRITE_IMM) {
			struct ev *r = ev_new(s, EV_RX, 0, e->node);

			t = s->now > n->cpu_busy ? s->now : n->cpu_busy;
			n->cpu_busy = t + s->cfg->cpu_msg;
			r->t = n->cpu_busy;
			r->src = e->src;
			r->src_inc = e->src_inc;
			r->verb = e->verb;
			r->rx.kind = e->verb.kind;
			r->rx.src = e->src;
			r->rx.slot = e->verb.slot;
			r->rx.imm = e->verb.imm;
			r->rx.value = e->verb.arg0;
			r->rx.msg = e->verb.msg;
			if (e->verb.kind == RDLM_VERB_WRITE_IMM) {
				struct sim_mbox *m;

				if (e->verb.slot >= n->nr_mbox) {
					s->res->mbox_errors++;
					ev_free(s, r);
					send_cqe(s, e->src, e->src_inc,
						 e->node, &e->verb, -EINVAL, 0,
						 s->now + 1);
					break;
				}
				m = &n->mbox[e->verb.slot];
				m->value = e->verb.arg0;
				m->imm = e->verb.imm;
				m->src = e->src;
			}
			ev_push(s, r);
			/* sender completion: ack back */
			send_cqe(s, e->src, e->src_inc, e->node, &e->verb, 0, 0,
				 s->now + one_way(s, s->cfg->rtt_send));
			break;
		}
		if (e->verb.slot >= s->cfg->slots) {
			send_cqe(s, e->src, e->src_inc, e->node, &e->verb,
				 -EINVAL, 0, s->now + 1);
			break;
		}
		if (s->cfg->ep.atomic_mode == RDLM_ATOMIC_CPU) {
			t = s->now > n->cpu_busy ? s->now : n->cpu_busy;
			n->cpu_busy = t + s->cfg->cpu_msg;
			t = n->cpu_busy;
		} else if (e->verb.kind == RDLM_VERB_READ) {
			t = s->now;
		} else {
			u64 *b = &n->busy_until[e->verb.slot];

			t = s->now > *b ? s->now : *b;
			*b = t + s->cfg->nic_atomic;
		}
		if (s->cfg->ep.atomic_mode != RDLM_ATOMIC_CPU &&
		    s->cfg->nic_verb) {
			if (t < n->nic_busy)
				t = n->nic_busy;
			n->nic_busy = t + s->cfg->nic_verb;
		}
		{
			struct ev *x = ev_new(s, EV_EXEC, t, e->node);

			x->src = e->src;
			x->src_inc = e->src_inc;
			x->gen = e->gen;
			x->verb = e->verb;
			ev_push(s, x);
		}
		break;
	case EV_EXEC:
		apply_exec(s, e);
		break;
	case EV_RX:
		tr(s, e->node, 4, word_of(s, e->node, e->rx.msg.slot),
		   e->rx.msg.type, e->rx.msg.reqid);
		if (e->rx.kind == RDLM_VERB_SEND &&
		    (e->verb.flags & RDLM_VF_ENQUEUE)) {
			struct node *rn = &s->nodes[e->src];
			struct rdlm_req *q = rdlm_req_lookup(&rn->eng,
							     e->rx.msg.reqid);

			if (q) {
				struct sreq *r = &rn->sreqs[q->idx];

				r->enq = true;
				r->served = false;
				r->enq_seq = ++s->enq_seq;
			}
		}
		if (e->rx.kind == RDLM_VERB_WRITE_IMM) {
			/* what the entry holds now, as the fabric reads it */
			const struct sim_mbox *m = &n->mbox[e->rx.slot];

			if (m->src != e->src) {
				s->res->mbox_lost++;
				break;
			}
			if (m->value != e->rx.value || m->imm != e->rx.imm) {
				s->res->mbox_lost++;
				if (getenv("SIM_DEBUG"))
					fprintf(stderr, "t=%llu mbox lost: n%u<-n%u imm %08x value %016llx, entry now imm %08x value %016llx\n",
						(unsigned long long)s->now, e->node, e->src, e->rx.imm,
						(unsigned long long)e->rx.value, m->imm,
						(unsigned long long)m->value);
			}
			e->rx.value = m->value;
			e->rx.imm = m->imm;
		}
		if (n->eng.ops->recv) {
			out = mkout(s, e->node);
			n->eng.ops->recv(&n->eng, &e->rx, &out);
		}
		break;
	case EV_CQE:
		if (e->gen && e->gen != link_gen(s, e->node, e->src))
			e->cqe.status = -EIO;	/* executed, answer lost */
		tr(s, e->node, 3, e->cqe.req ?
		   ((struct sreq *)(uintptr_t)e->cqe.req->user)->word : 0,
		   e->cqe.cookie, e->cqe.value);
		out = mkout(s, e->node);
		n->eng.ops->complete(&n->eng, &e->cqe, &out);
		break;
	case EV_TIMER:
		out = mkout(s, e->node);
		n->eng.ops->timer(&n->eng, e->req, e->cookie, &out);
		break;
	case EV_START:
		client_start(s, e->node, e->client);
		break;
	case EV_RELEASE:
		client_release(s, e->node, e->client, e->req);
		break;
	case EV_UNCACHE:
		on_uncache(s, e->node, e->req, e->cookie);
		break;
	case EV_LEASE:
		lease_check(s, e->node, e->req, e->cookie);
		break;
	case EV_CRASH:
		if (n->crashed)
			break;
		tr(s, e->node, 8, 0, 0, 0);
		n->crashed = true;
		n->paused = false;	/* verbs to it fail, none wait */
		/*
		 * What its CPU had not got to yet: verbs that arrived while
		 * it was paused fail at their posters, as those to a dead
		 * node (handle() below); the rest is gone with it.
		 */
		for (i = 0; i < n->ndeferred; i++) {
			struct ev *x = n->deferred[i];

			if (x->type == EV_ARRIVE || x->type == EV_EXEC) {
				x->t = s->now;
				ev_push(s, x);
			} else {
				ev_free(s, x);
			}
		}
		n->ndeferred = 0;
		/* heartbeats tell the others after the error timeout */
		for (i = 0; i < s->cfg->nodes; i++) {
			struct ev *d;

			if (i == e->node)
				continue;
			d = ev_new(s, EV_PEER_DOWN, s->now + s->cfg->err_timeout,
				   i);
			d->src = e->node;
			d->cookie = ++s->epoch;
			ev_push(s, d);
		}
		if (s->cfg->restart_delay) {
			struct ev *r = ev_new(s, EV_RESTART, s->now +
					      s->cfg->restart_delay, e->node);

			r->inc = INC_ANY;
			ev_push(s, r);
		}
		/* it no longer holds up a restarted node's clients */
		for (i = 0; i < s->cfg->nodes; i++)
			maybe_start(s, i);
		break;
	case EV_PEER_DOWN:
		*pair8(s, s->gone, e->node, e->src) = 1;
		s->down_at[e->src] = s->now;
		if (n->eng.ops->member_down) {
			out = mkout(s, e->node);
			n->eng.ops->member_down(&n->eng, e->src,
						(u32)e->cookie, &out);
		}
		break;
	case EV_JOIN:
		if (s->nodes[e->src].crashed ||
		    s->nodes[e->src].incarn != e->src_inc)
			break;	/* it died again */
		tr(s, e->node, 16, 0, e->src, e->src_inc);
		if (n->eng.ops->member_join) {
			out = mkout(s, e->node);
			n->eng.ops->member_join(&n->eng, e->src, &out);
		}
		*pair8(s, s->gone, e->node, e->src) = 0;
		*pair8(s, s->conn_down, e->node, e->src) = 0;
		*pair8(s, s->conn_down, e->src, e->node) = 0;
		{
			/*
			 * The new incarnation's fabric sees its connection to
			 * us come up: ->member_up() there (what it sent us
			 * before failed), when its CPU gets to it.
			 */
			struct ev *u = ev_new(s, EV_PEER_UP, s->now, e->src);

			u->src = e->node;
			u->src_inc = n->incarn;
			ev_push(s, u);
		}
		maybe_start(s, e->src);
		break;
	case EV_LINK_DOWN:
		n->cuts++;
		n->cut_gen++;
		/* every connection from and to it fails, until reconnected */
		for (i = 0; i < s->cfg->nodes; i++) {
			*pair8(s, s->conn_down, i, e->node) = 1;
			*pair8(s, s->conn_down, e->node, i) = 1;
		}
		break;
	case EV_LINK_UP:
		if (!n->cuts || --n->cuts)	/* !cuts: cut before a restart */
			break;
		/*
		 * After every verb of the old links has failed; each
		 * connection (one per direction) comes back on its own.
		 */
		t = s->now + 2 * s->cfg->err_timeout + s->cfg->delay_max +
		    s->cfg->rtt_send;
		for (i = 0; i < s->cfg->nodes; i++) {
			struct ev *u;

			u = ev_new(s, EV_PEER_UP, t + rnd(s) %
				   (2 * s->cfg->err_timeout + 1), i);
			u->src = e->node;
			u->src_inc = n->incarn;
			ev_push(s, u);
			if (i == e->node)
				continue;
			u = ev_new(s, EV_PEER_UP, t + rnd(s) %
				   (2 * s->cfg->err_timeout + 1), e->node);
			u->src = i;
			u->src_inc = s->nodes[i].incarn;
			ev_push(s, u);
		}
		break;
	case EV_PEER_UP:
		if (!link_up(s, e->node, e->src))
			break;	/* the other end is still cut: not yet */
		if (s->nodes[e->src].incarn != e->src_inc ||
		    *pair8(s, s->gone, e->node, e->src) ||
		    *pair8(s, s->gone, e->src, e->node))
			break;	/* a departure: ->member_join lets it in */
		*pair8(s, s->conn_down, e->node, e->src) = 0;
		if (n->eng.ops->member_up) {
			out = mkout(s, e->node);
			n->eng.ops->member_up(&n->eng, e->src, &out);
		}
		break;
	case EV_PAUSE:
		tr(s, e->node, 9, 0, 0, 0);
		n->paused = true;
		break;
	case EV_RESUME:
		tr(s, e->node, 10, 0, 0, 0);
		n->paused = false;
		n->resumed_at = s->now;
		/* replay what the CPU missed, in original order */
		for (i = 0; i < n->ndeferred; i++) {
			n->deferred[i]->t = s->now;
			ev_push(s, n->deferred[i]);
		}
		n->ndeferred = 0;
		if (n->cpu_busy < s->now)
			n->cpu_busy = s->now;
		break;
	default:
		break;
	}
	ev_free(s, e);
}

void sim_default_cfg(struct sim_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ops = &rdlm_bakery_ops;
	cfg->nodes = 16;
	cfg->clients = 4;
	cfg->nlocks = 1024;
	cfg->slots = 1024;
	cfg->seed = 1;
	rdlm_engine_default_params(&cfg->ep);
	cfg->rtt_atomic = 2500;
	cfg->rtt_send = 1500;
	cfg->nic_atomic = 400;
	cfg->cpu_msg = 300;
	cfg->err_timeout = 100000;
	cfg->jitter_pct = 20;
	cfg->nops = 100000;
	cfg->alpha = 2.0;
	cfg->rho = 0.5;
	cfg->hold = 2000;
	cfg->think = 1000;
	cfg->long_k = 1;
	cfg->pause_len = 50000000;
	cfg->delay_max = 20000;
	cfg->fault_window = 50000000;
	cfg->max_events = 400000000ULL;
}

static int build_cdf(struct sim *s)
{
	u32 i, n = s->cfg->nlocks;
	double sum = 0;

	s->cdf = calloc(n, sizeof(double));
	if (!s->cdf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sum += pow((double)(i + 1), -s->cfg->alpha);
		s->cdf[i] = sum;
	}
	for (i = 0; i < n; i++)
		s->cdf[i] /= sum;
	return 0;
}

/* A fault of a random node, at a random time, for about @len */
static void push_fault(struct sim *s, enum ev_type begin, enum ev_type end,
		       u64 len)
{
	u64 t = rnd(s) % s->cfg->fault_window;
	u32 nd = rnd(s) % s->cfg->nodes;
	struct ev *b = ev_new(s, begin, t, nd);
	struct ev *e = ev_new(s, end, t + len / 2 + rnd(s) % (len + 1), nd);

	/* faults hit whichever incarnation the node is in */
	b->inc = INC_ANY;
	e->inc = INC_ANY;
	ev_push(s, b);
	ev_push(s, e);
}

/* SIM_DEBUG: what a stuck client waits for, and its word's home side */
static void dump_stuck(struct sim *s, u32 nid, struct client *c)
{
	struct node *n = &s->nodes[nid];
	struct sreq *r;
	char buf[256];
	u32 i;

	fprintf(stderr, "stuck: n%u word %u mode %u since %llu\n", nid,
		c->word, c->mode, (unsigned long long)c->first_start);
	for (r = s->wactive[c->word]; r; r = r->wnext)
		fprintf(stderr, "  on the word: n%u mode %u state %u%s%s%s since %llu\n",
			r->node, r->mode, r->state, r->kept ? " kept" : "",
			r->blocked ? " told" : "",
			s->nodes[r->node].crashed ? " crashed" : "",
			(unsigned long long)r->start);
	if (!n->eng.ops->describe)
		return;
	for (i = 0; i < n->eng.p.nr_reqs; i++) {
		if (!n->eng.reqs[i].busy)
			continue;
		n->eng.ops->describe(&n->eng, &n->eng.reqs[i], buf, sizeof(buf));
		fprintf(stderr, "  req %u home %u slot %u: %s\n", i,
			n->eng.reqs[i].node, n->eng.reqs[i].slot, buf);
	}
	for (i = 0; i < s->cfg->nodes; i++) {
		s->nodes[i].eng.ops->describe(&s->nodes[i].eng, NULL, buf,
					      sizeof(buf));
		fprintf(stderr, "  home n%u: %s\n", i, buf);
	}
}

int sim_run(const struct sim_cfg *cfg, struct sim_result *res)
{
	struct sim sim, *s = &sim;
	u32 i, j, total = cfg->nodes * cfg->nodes;
	struct ev *e;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->res = res;
	s->rng = cfg->seed * 0x2545f4914f6cdd1dULL + 1;
	s->lat_cap = cfg->nops + 16;
	res->lat = calloc(s->lat_cap, sizeof(u64));
	s->nodes = calloc(cfg->nodes, sizeof(*s->nodes));
	s->qp_last = calloc(total, sizeof(u64));
	s->conn_down = calloc(total, 1);
	s->gone = calloc(total, 1);
	s->down_at = calloc(cfg->nodes, sizeof(u64));
	s->cq_last = calloc(total, sizeof(u64));
	s->wactive = calloc((size_t)cfg->nodes * cfg->slots, sizeof(*s->wactive));
	s->stride = 1;
	if (cfg->range_units && cfg->ops == &rdlm_rangeseg_ops) {
		u64 seg = cfg->ep.seg_units ? cfg->ep.seg_units : 256;

		s->stride = (u32)((cfg->range_units + seg - 1) / seg);
	}
	if ((u64)(cfg->nlocks + cfg->nodes - 1) / cfg->nodes * s->stride >
	    cfg->slots)
		return -EINVAL;
	if (!res->lat || !s->nodes || !s->qp_last || !s->conn_down ||
	    !s->gone || !s->down_at || !s->cq_last ||
	    !s->wactive || build_cdf(s) || cfg->nlocks > cfg->nodes * cfg->slots)
		return -ENOMEM;
	for (i = 0; i < cfg->nodes; i++) {
		struct node *n = &s->nodes[i];
		struct rdlm_engine_params p;

		node_params(s, i, &p);
		ret = rdlm_engine_init(&n->eng, cfg->ops, &p);
		if (ret)
			return ret;
		n->table = calloc(cfg->slots, sizeof(u64));
		n->busy_until = calloc(cfg->slots, sizeof(u64));
		n->nr_mbox = rdlm_engine_mbox_slots(cfg->ops, &p) ?: 1;
		n->mbox = calloc(n->nr_mbox, sizeof(*n->mbox));
		n->clients = calloc(cfg->clients, sizeof(*n->clients));
		n->sreqs = calloc(p.nr_reqs, sizeof(*n->sreqs));
		if (!n->table || !n->busy_until || !n->mbox || !n->clients ||
		    !n->sreqs)
			return -ENOMEM;
		for (j = 0; j < cfg->clients; j++) {
			u64 t0 = rnd(s) % 10000;

			n->clients[j].role = cfg->oltp ? oltp_role(cfg, j) : 0;
			if (cfg->server_node0 && !i)
				continue;

			if (cfg->cascade_hold)	/* queue behind node 0 client 0 */
				t0 = i || j ? cfg->cascade_hold / 4 +
				     rnd(s) % (cfg->cascade_hold / 4 + 1) : 0;
			e = ev_new(s, EV_START, t0, i);
			e->client = j;
			ev_push(s, e);
		}
	}
	for (i = 0; i < cfg->crashes; i++) {
		e = ev_new(s, EV_CRASH, rnd(s) % cfg->fault_window,
			   rnd(s) % cfg->nodes);
		e->inc = INC_ANY;
		ev_push(s, e);
	}
	for (i = 0; i < cfg->pauses; i++)
		push_fault(s, EV_PAUSE, EV_RESUME, cfg->pause_len);
	for (i = 0; i < cfg->flaps; i++)
		push_fault(s, EV_LINK_DOWN, EV_LINK_UP, cfg->flap_len);
	while ((e = ev_pop(s))) {
		s->now = e->t;
		res->events++;
		handle(s, e);
		if (res->grants >= cfg->nops || res->events >= cfg->max_events)
			break;
	}
	res->sim_time = s->now;
	/* starvation: live clients still waiting for very long */
	for (i = 0; i < cfg->nodes; i++) {
		struct node *n = &s->nodes[i];

		for (j = 0; j < cfg->clients; j++) {
			struct client *c = &n->clients[j];

			if (n->crashed || n->paused || !c->first_start)
				continue;
			if (getenv("SIM_DEBUG") && res->grants < cfg->nops) {
				fprintf(stderr, "ended waiting: ");
				dump_stuck(s, i, c);
			}
			if (s->now - c->first_start > 100 * cfg->ep.lease_ns) {
				res->stuck++;
				if (getenv("SIM_DEBUG"))
					dump_stuck(s, i, c);
			}
		}
		add_stats(res, &n->eng);
	}
	if (res->events >= cfg->max_events)
		res->stuck++;
	/* free everything */
	for (i = 0; i < s->nheap; i++)
		free(s->heap[i]);
	while ((e = s->free_ev)) {
		s->free_ev = e->next_free;
		free(e);
	}
	for (i = 0; i < cfg->nodes; i++) {
		struct node *n = &s->nodes[i];

		for (j = 0; j < n->ndeferred; j++)
			free(n->deferred[j]);
		free(n->deferred);
		rdlm_engine_fini(&n->eng);
		free(n->table);
		free(n->busy_until);
		free(n->mbox);
		free(n->clients);
		free(n->sreqs);
	}
	free(s->heap);
	free(s->nodes);
	free(s->qp_last);
	free(s->conn_down);
	free(s->gone);
	free(s->down_at);
	free(s->cq_last);
	free(s->wactive);
	free(s->cdf);
	return 0;
}

void sim_result_free(struct sim_result *res)
{
	free(res->lat);
	res->lat = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

u64 sim_percentile(struct sim_result *res, double p)
{
	u64 i;

	if (!res->nlat)
		return 0;
	qsort(res->lat, res->nlat, sizeof(u64), cmp_u64);
	i = (u64)(p * (double)(res->nlat - 1));
	return res->lat[i];
}
