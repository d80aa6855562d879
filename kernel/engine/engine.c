// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm protocol engines: helpers shared by all engines (request pool,
 * seeded random numbers, action emission, verb counting, backoff).
 * I/O-free; built into rdlm.ko and into the simulator.
 */
#include "engine.h"

static const struct rdlm_engine_ops *const rdlm_engines[] = {
	&rdlm_bakery_ops,
	&rdlm_central_ops,
	&rdlm_dqnl_ops,
	&rdlm_dqnl_sf_ops,
	&rdlm_ncosed_ops,
	&rdlm_rangeseg_ops,
	&rdlm_rangecomb_ops,
};

const struct rdlm_engine_ops *rdlm_engine_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rdlm_engines); i++)
		if (!strcmp(rdlm_engines[i]->name, name))
			return rdlm_engines[i];
	return NULL;
}

void rdlm_engine_default_params(struct rdlm_engine_params *p)
{
	p->lease_ns = 10000000ULL;	/* 10 ms */
	p->omega_ns = 5000ULL;		/* 5 us */
	p->backoff_r_ns = 10000ULL;	/* 10 us */
	p->backoff_l_ns = 10000000ULL;	/* 10 ms */
	p->kmax = 1;
	p->count_max = 0;
}

int rdlm_engine_init(struct rdlm_engine *eng, const struct rdlm_engine_ops *ops,
		     const struct rdlm_engine_params *p)
{
	struct rdlm_engine_params d;
	u32 i;
	int ret;

	if (!ops || !p || !p->nr_reqs || !p->nr_nodes || !p->nr_slots ||
	    p->node >= p->nr_nodes || p->nr_reqs >= U32_MAX)
		return -EINVAL;
	if (p->no_lease && ops->needs_lease)
		return -EINVAL;
	memset(eng, 0, sizeof(*eng));
	rdlm_engine_default_params(&d);
	eng->p = *p;
	if (!eng->p.lease_ns)
		eng->p.lease_ns = d.lease_ns;
	if (!eng->p.omega_ns)
		eng->p.omega_ns = d.omega_ns;
	if (!eng->p.backoff_r_ns)
		eng->p.backoff_r_ns = d.backoff_r_ns;
	if (!eng->p.backoff_l_ns)
		eng->p.backoff_l_ns = d.backoff_l_ns;
	if (!eng->p.kmax)
		eng->p.kmax = d.kmax;
	eng->ops = ops;
	rdlm_spin_lock_init(&eng->lock);
	eng->rng = p->seed ^ 0x9e3779b97f4a7c15ULL ^ ((u64)p->node << 32);
	eng->reqs = rdlm_zalloc(sizeof(*eng->reqs) * p->nr_reqs);
	eng->next_free = rdlm_zalloc(sizeof(*eng->next_free) * p->nr_reqs);
	if (!eng->reqs || !eng->next_free) {
		ret = -ENOMEM;
		goto err;
	}
	for (i = 0; i < p->nr_reqs; i++) {
		eng->reqs[i].idx = i;
		eng->next_free[i] = i + 1 < p->nr_reqs ? i + 1 : U32_MAX;
	}
	eng->free_head = 0;
	ret = ops->init ? ops->init(eng) : 0;
	if (ret)
		goto err;
	return 0;
err:
	rdlm_free(eng->reqs);
	rdlm_free(eng->next_free);
	eng->reqs = NULL;
	eng->next_free = NULL;
	return ret;
}

void rdlm_engine_fini(struct rdlm_engine *eng)
{
	if (eng->ops && eng->ops->fini)
		eng->ops->fini(eng);
	rdlm_free(eng->reqs);
	rdlm_free(eng->next_free);
	eng->reqs = NULL;
	eng->next_free = NULL;
}

struct rdlm_req *rdlm_req_alloc(struct rdlm_engine *eng)
{
	struct rdlm_req *req = NULL;
	unsigned long flags = 0;

	rdlm_spin_lock(&eng->lock, flags);
	if (eng->free_head != U32_MAX) {
		req = &eng->reqs[eng->free_head];
		eng->free_head = eng->next_free[req->idx];
		req->gen++;
		req->busy = true;
		req->node = 0;
		req->slot = 0;
		req->mode = 0;
		req->flags = 0;
		req->slots = 0;
		req->start = 0;
		req->end = 0;
		req->user = 0;
		memset(req->priv, 0, sizeof(req->priv));
	}
	rdlm_spin_unlock(&eng->lock, flags);
	return req;
}

void rdlm_req_free(struct rdlm_engine *eng, struct rdlm_req *req)
{
	unsigned long flags = 0;

	rdlm_spin_lock(&eng->lock, flags);
	if (req->busy) {
		req->busy = false;
		req->gen++;
		eng->next_free[req->idx] = eng->free_head;
		eng->free_head = req->idx;
	}
	rdlm_spin_unlock(&eng->lock, flags);
}

u64 rdlm_req_id(const struct rdlm_req *req)
{
	return ((u64)req->gen << 32) | req->idx;
}

struct rdlm_req *rdlm_req_lookup(struct rdlm_engine *eng, u64 id)
{
	u32 idx = (u32)id;
	struct rdlm_req *req;

	if (idx >= eng->p.nr_reqs)
		return NULL;
	req = &eng->reqs[idx];
	if (!req->busy || req->gen != (u32)(id >> 32))
		return NULL;
	return req;
}

u64 rdlm_word_apply(u64 old, u8 kind, u64 arg0, u64 arg1)
{
	switch (kind) {
	case RDLM_VERB_FA:
		return old + arg0;
	case RDLM_VERB_CAS:
		return old == arg0 ? arg1 : old;
	default:
		return old;
	}
}

u32 rdlm_engine_random(struct rdlm_engine *eng)
{
	/* splitmix64: small, seedable, identical in kernel and simulator */
	u64 z = (eng->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (u32)((z ^ (z >> 31)) >> 32);
}

void rdlm_engine_post(struct rdlm_engine *eng, struct rdlm_out *out,
		      const struct rdlm_verb *v)
{
	struct rdlm_action act;

	memset(&act, 0, sizeof(act));
	act.kind = RDLM_ACT_POST;
	act.req = v->req;
	act.verb = *v;
	if (v->kind == RDLM_VERB_SEND)
		act.verb.msg.src = eng->p.node;
	if (v->kind < RDLM_VERB_NR)
		rdlm_stat_inc(&eng->stats.verbs[v->kind]);
	out->emit(out, &act);
}

void rdlm_engine_emit(struct rdlm_engine *eng, struct rdlm_out *out, u8 kind,
		      struct rdlm_req *req, s64 arg, u64 cookie)
{
	struct rdlm_action act;

	memset(&act, 0, sizeof(act));
	act.kind = kind;
	act.req = req;
	switch (kind) {
	case RDLM_ACT_TIMER:
		act.delay_ns = (u64)arg;
		act.cookie = cookie;
		break;
	case RDLM_ACT_GRANT:
		act.lease_end = (u64)arg;
		act.mode = (u8)cookie;
		rdlm_stat_inc(&eng->stats.grants);
		break;
	case RDLM_ACT_FAIL:
		act.err = (int)arg;
		rdlm_stat_inc(&eng->stats.fails);
		break;
	case RDLM_ACT_NOTICE:
		act.notice = (u8)arg;
		act.err = (int)(s64)cookie;
		if (arg == RDLM_NOTICE_LOST)
			rdlm_stat_inc(&eng->stats.lost);
		break;
	default:
		break;
	}
	out->emit(out, &act);
}

void rdlm_engine_arm(struct rdlm_engine *eng, struct rdlm_out *out,
		     struct rdlm_req *req, u64 delay_ns)
{
	req->timer_cookie++;
	rdlm_engine_emit(eng, out, RDLM_ACT_TIMER, req, (s64)delay_ns,
			 req->timer_cookie);
}

u64 rdlm_engine_backoff(struct rdlm_engine *eng, u32 attempt)
{
	u64 cap = eng->p.backoff_r_ns;
	u32 c = attempt ? attempt - 1 : 0;

	while (c-- && cap < eng->p.backoff_l_ns)
		cap <<= 1;
	if (cap > eng->p.backoff_l_ns)
		cap = eng->p.backoff_l_ns;
	if (cap >= U32_MAX)
		cap = U32_MAX - 1;
	/* uniform in [0, cap] without a 64-bit division */
	return ((u64)rdlm_engine_random(eng) * (cap + 1)) >> 32;
}
