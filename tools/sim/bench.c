// SPDX-License-Identifier: GPL-2.0
/*
 * Simulator benchmark: the DSLR appendix A.4 microbenchmark (power-law
 * skew alpha, shared ratio rho, lease, think time) and the long-holder
 * scenario of section 6.5, bakery and central side by side.
 *
 *   sim-bench [--nodes N] [--clients C] [--locks L] [--alpha A] [--rho R]
 *             [--ops N] [--think-us T] [--hold-us H] [--lease-us L]
 *             [--rtt-atomic-us X] [--rtt-send-us Y] [--cpu-us Z]
 *             [--omega-us W] [--seed S] [--cache-us K]
 *             [--long-ratio P --long-hold-us H --long-k K]
 *   sim-bench --experiment cascade|contention|all [latency model options]
 *   sim-bench --experiment ranges [--ops N] [--cpu-us Z] [--seed S] ...
 *
 * The experiments are the queue-engine papers' (DQNL fig. 4-6, N-CoSED
 * fig. 7): unlock cascade and throughput versus contention, all engines;
 * and the range-lock paper's ("Range locks with server-side combination",
 * section 5.2): static segmentation (rangeseg) against the server-side
 * combiner (rangecomb) on its micro-benchmark and its Filebench-OLTP-like
 * mix, with its Table 5 latencies unless given on the command line.
 */
#include <stdio.h>
#include "sim.h"
#include "dqueue.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: sim-bench [--nodes N] [--clients C] [--locks L] [--alpha A] [--rho R]\n"
		"                 [--ops N] [--think-us T] [--hold-us H] [--lease-us L]\n"
		"                 [--rtt-atomic-us X] [--rtt-read-us R] [--rtt-send-us Y] [--cpu-us Z]\n"
		"                 [--nic-verb-us V]\n"
		"                 [--omega-us W] [--seed S] [--cache-us K]\n"
		"                 [--long-ratio P] [--long-hold-us H] [--long-k K]\n"
		"       sim-bench --experiment cascade|contention|all|ranges [options]\n");
	exit(2);
}

struct row {
	const char *name;
	const struct rdlm_engine_ops *ops;
	u8 atomic_mode;
	u32 kmax;
	u16 long_k;
};

static void run_row(const struct sim_cfg *base, const struct row *rw)
{
	struct sim_cfg c = *base;
	struct sim_result r;
	double secs, g, mean = 0;
	u64 i;

	c.ops = rw->ops;
	c.ep.atomic_mode = rw->atomic_mode;
	c.ep.kmax = rw->kmax;
	c.long_k = rw->long_k;
	c.fifo_check = rw->ops == &rdlm_bakery_ops;
	/* the queue engines need the core's one request per node and word */
	c.node_queue = !rw->ops->many_per_word;
	c.quiet = true;
	if (sim_run(&c, &r)) {
		printf("%-24s simulator setup failed\n", rw->name);
		return;
	}
	secs = (double)r.sim_time / 1e9;
	g = (double)(r.grants ? r.grants : 1);
	for (i = 0; i < r.nlat; i++)
		mean += (double)r.lat[i];
	mean /= (double)(r.nlat ? r.nlat : 1);
	printf("%-24s %9.0f %8.1f %8.1f %9.1f %6.2f %5.2f %5.2f %5.2f %5.2f %5.1f %6llu %6llu %5llu\n",
	       rw->name, (double)r.grants / secs, mean / 1000.0,
	       (double)sim_percentile(&r, 0.99) / 1000.0,
	       (double)sim_percentile(&r, 0.999) / 1000.0,
	       (double)r.verbs[RDLM_VERB_FA] / g,
	       (double)r.verbs[RDLM_VERB_READ] / g,
	       (double)r.verbs[RDLM_VERB_CAS] / g,
	       (double)r.verbs[RDLM_VERB_SEND] / g,
	       (double)r.wire_msgs / g, 100.0 * (double)r.cache_hits / g,
	       (unsigned long long)r.fails, (unsigned long long)r.lost,
	       (unsigned long long)(r.violations + r.fifo_violations));
	sim_result_free(&r);
}

/* ---- queue-engine experiments: DQNL fig. 4-6, N-CoSED fig. 7 ---- */

static const struct {
	const char *name;
	const struct rdlm_engine_ops *ops;
} xeng[] = {
	{ "central", &rdlm_central_ops },
	{ "bakery", &rdlm_bakery_ops },
	{ "dqnl", &rdlm_dqnl_ops },
	{ "dqnl-sf", &rdlm_dqnl_sf_ops },
	{ "ncosed", &rdlm_ncosed_ops },
};

/* one client per node, client i on lock i % locks */
static int xrun(const struct sim_cfg *base, const struct rdlm_engine_ops *ops,
		u32 clients, u32 locks, struct sim_result *r)
{
	struct sim_cfg c = *base;

	c.ops = ops;
	c.nodes = clients;
	c.clients = 1;
	c.nlocks = locks;
	c.slots = (locks + clients - 1) / clients;
	c.fixed_word = true;
	c.quiet = true;
	return sim_run(&c, r);
}

static void cascade(const struct sim_cfg *base)
{
	static const u32 waiters[] = { 1, 2, 4, 8, 16, 31 };
	struct sim_cfg c = *base;
	struct sim_result r;
	size_t i, e;
	int shared;

	c.cascade_hold = 1000000;	/* waiters queue up during 1 ms */
	c.hold = 0;
	c.think = 1000000000ULL;	/* each client locks once */
	for (shared = 0; shared <= 1; shared++) {
		c.rho = shared;
		printf("\n# unlock cascade, %s waiters (%s): us from the first holder's release to the last grant\n",
		       shared ? "shared" : "exclusive",
		       shared ? "N-CoSED fig. 7a" : "DQNL fig. 4, N-CoSED fig. 7b");
		printf("%-8s", "waiters");
		for (e = 0; e < ARRAY_SIZE(xeng); e++)
			printf(" %10s", xeng[e].name);
		printf("\n");
		for (i = 0; i < ARRAY_SIZE(waiters); i++) {
			printf("%-8u", waiters[i]);
			for (e = 0; e < ARRAY_SIZE(xeng); e++) {
				c.nops = waiters[i] + 1;
				if (xrun(&c, xeng[e].ops, waiters[i] + 1, 1, &r) ||
				    r.grants < c.nops || !r.cascade_t0) {
					printf(" %10s", "-");
					continue;
				}
				printf(" %10.1f",
				       (double)(r.sim_time - r.cascade_t0) / 1000.0);
				sim_result_free(&r);
			}
			printf("\n");
		}
	}
}

static void contention_row(const struct sim_cfg *c, u32 n, u32 locks,
			   const char *label)
{
	struct sim_result r;
	double secs, g;
	size_t e;

	printf("%-14s", label);
	for (e = 0; e < ARRAY_SIZE(xeng); e++) {
		if (xrun(c, xeng[e].ops, n, locks, &r)) {
			printf(" %22s", "-");
			continue;
		}
		secs = (double)r.sim_time / 1e9;
		g = (double)(r.grants ? r.grants : 1);
		printf(" %8.0f %4.2f %3.1f%s", (double)r.grants / secs / 1000.0,
		       (double)(r.verbs[RDLM_VERB_FA] + r.verbs[RDLM_VERB_CAS] +
				r.verbs[RDLM_VERB_READ]) / g,
		       (double)r.cas_failed / g,
		       r.violations || r.grants < c->nops ? "!" : " ");
		sim_result_free(&r);
	}
	printf("\n");
}

static void contention_head(const char *what)
{
	size_t e;

	printf("\n# %s\n# per engine: kops/s, atomics (FA+CAS+READ) per lock+unlock, failed CAS per op; ! = violation or short run\n%-14s",
	       what, "");
	for (e = 0; e < ARRAY_SIZE(xeng); e++)
		printf(" %22s", xeng[e].name);
	printf("\n");
}

static void contention(const struct sim_cfg *base)
{
	static const u32 clients[] = { 1, 2, 4, 8, 16, 32 };
	static const u32 locks31[] = { 31, 16, 8, 4, 2, 1 };
	struct sim_cfg c = *base;
	char label[96];
	size_t i;
	int pct;

	c.think = 0;
	c.hold = 0;
	c.rho = 0;		/* exclusive, as in the DQNL paper */
	c.nops = 20000;
	for (pct = 0; pct <= 100; pct += 50) {
		snprintf(label, sizeof(label), "contention %d%%, no hold (DQNL fig. 5): clients", pct);
		contention_head(label);
		for (i = 0; i < ARRAY_SIZE(clients); i++) {
			u32 n = clients[i];
			u32 l = pct == 0 ? n : pct == 50 ? (n + 1) / 2 : 1;

			snprintf(label, sizeof(label), "N=%u L=%u", n, l);
			contention_row(&c, n, l, label);
		}
	}
	for (i = 0; i < 2; i++) {
		c.hold = i ? 270000 : 0;	/* the paper's ~270 us hold-up */
		c.nops = i ? 4000 : 20000;
		snprintf(label, sizeof(label), "31 clients, hold %u us (DQNL fig. 6): locks", i ? 270 : 0);
		contention_head(label);
		for (pct = 0; pct < (int)ARRAY_SIZE(locks31); pct++) {
			u32 l = locks31[pct];

			snprintf(label, sizeof(label), "L=%u (%u%%)", l,
				 100 - 100 * l / 31);
			contention_row(&c, 31, l, label);
		}
	}
}

/* ---- range locks: the combiner paper's section 5.2 ---- */

static const struct {
	const char *name;
	const struct rdlm_engine_ops *ops;
} reng[] = {
	{ "rangeseg", &rdlm_rangeseg_ops },
	{ "rangecomb", &rdlm_rangecomb_ops },
};

/* node 0 is the server (home of the one resource), node 1 the clients */
static void range_base(struct sim_cfg *c, const struct rdlm_engine_ops *ops,
		       u32 clients)
{
	c->ops = ops;
	c->nodes = 2;
	c->server_node0 = true;
	c->clients = clients;
	c->nlocks = 1;
	c->alpha = 0;
	c->range_units = 65536;
	c->ep.seg_units = 256;
	c->slots = 65536 / 256;
	c->req_pool = clients * (2 + 32);
	c->fifo_check = ops == &rdlm_rangecomb_ops;
	c->quiet = true;
}

static double range_row(const struct sim_cfg *c, const char *eng,
			const char *conf)
{
	struct sim_result r;
	double secs, g, tput;

	if (sim_run(c, &r)) {
		printf("%-10s %-22s simulator setup failed\n", eng, conf);
		return 0;
	}
	secs = (double)r.sim_time / 1e9;
	g = (double)(r.grants ? r.grants : 1);
	tput = (double)r.grants / secs;
	printf("%-10s %-22s %9.0f %8.1f %8.1f %7.2f %7.2f %6llu %4llu%s\n",
	       eng, conf, tput,
	       (double)sim_percentile(&r, 0.50) / 1000.0,
	       (double)sim_percentile(&r, 0.99) / 1000.0,
	       (double)(r.verbs[RDLM_VERB_FA] + r.verbs[RDLM_VERB_CAS] +
			r.verbs[RDLM_VERB_READ]) / g,
	       (double)(r.verbs[RDLM_VERB_SEND] +
			r.verbs[RDLM_VERB_WRITE_IMM]) / g,
	       (unsigned long long)r.fails,
	       (unsigned long long)(r.violations + r.fifo_violations),
	       r.grants < c->nops || r.stuck ? " short" : "");
	sim_result_free(&r);
	return tput;
}

static void range_head(const char *what)
{
	printf("\n# %s\n%-10s %-22s %9s %8s %8s %7s %7s %6s %4s\n", what,
	       "engine", "configuration", "ops/s", "p50 us", "p99 us",
	       "verbs", "msgs", "fails", "viol");
}

static void ranges(const struct sim_cfg *base)
{
	static const u32 clients[] = { 1, 2, 4, 8, 16, 32, 48, 64, 96 };
	static const u32 writes[] = { 0, 1, 20, 100 };
	static const u32 segs[] = { 1, 2, 4, 8, 16, 32 };
	static const u64 cpus[] = { 250, 500, 1000, 1750, 2000, 4000 };
	static const u64 nics[] = { 0, 100, 250, 500, 1000, 2000, 2500 };
	struct sim_cfg c;
	double t[2], tn[ARRAY_SIZE(nics)], tc[ARRAY_SIZE(cpus)];
	char conf[128];
	size_t w, i, e;

	printf("# latency = wait from lock request to grant; verbs = one-sided FA+CAS+READ per op (lock+unlock); msgs = SEND+WRITE_IMM per op\n");
	printf("# one server (node 0, home of one resource of 2^16 units, segments of 2^8 units), clients on node 1; hold %.1f us, think %.1f us; server NIC %.2f us per one-sided verb\n",
	       base->hold / 1000.0, base->think / 1000.0,
	       base->nic_verb / 1000.0);

	/* Filebench OLTP (section 5.2.3, Table 6): 48 clients */
	range_head("Filebench-OLTP-like mix, 48 clients (39 readers, 8 writers, 1 log writer): paper Table 6, combiner/segmentation = 1.76");
	for (e = 0; e < ARRAY_SIZE(reng); e++) {
		c = *base;
		range_base(&c, reng[e].ops, 48);
		c.oltp = true;
		t[e] = range_row(&c, reng[e].name, "oltp");
	}
	printf("# rangecomb / rangeseg throughput: %.2f\n",
	       t[0] > 0 ? t[1] / t[0] : 0);

	/*
	 * What bounds each: segmentation the server NIC's verb rate, the
	 * combiner its CPU per message.  Their ratio decides.
	 */
	range_head("OLTP mix, 48 clients: rangeseg by server NIC service per one-sided verb (--nic-verb-us), rangecomb by combiner CPU per message (--cpu-us)");
	for (i = 0; i < ARRAY_SIZE(nics); i++) {
		c = *base;
		range_base(&c, &rdlm_rangeseg_ops, 48);
		c.oltp = true;
		c.nic_verb = nics[i];
		snprintf(conf, sizeof(conf), "oltp nic %.2f us", nics[i] / 1000.0);
		tn[i] = range_row(&c, "rangeseg", conf);
	}
	for (i = 0; i < ARRAY_SIZE(cpus); i++) {
		c = *base;
		range_base(&c, &rdlm_rangecomb_ops, 48);
		c.oltp = true;
		c.cpu_msg = cpus[i];
		snprintf(conf, sizeof(conf), "oltp cpu %.2f us", cpus[i] / 1000.0);
		tc[i] = range_row(&c, "rangecomb", conf);
	}
	printf("\n# OLTP mix: rangecomb / rangeseg throughput by server NIC us per verb (rows) and combiner CPU us per message (columns)\n%-10s", "nic \\ cpu");
	for (i = 0; i < ARRAY_SIZE(cpus); i++)
		printf(" %7.2f", cpus[i] / 1000.0);
	printf("\n");
	for (w = 0; w < ARRAY_SIZE(nics); w++) {
		printf("%-10.2f", nics[w] / 1000.0);
		for (i = 0; i < ARRAY_SIZE(cpus); i++)
			printf(" %7.2f", tn[w] > 0 ? tc[i] / tn[w] : 0);
		printf("\n");
	}

	/* micro-benchmark (section 5.2.2, figures 5-8) */
	for (w = 0; w < ARRAY_SIZE(writes); w++) {
		snprintf(conf, sizeof(conf),
			 "micro-benchmark, %u%% writes, ranges of 1..2048 units (at most 8 segments): figure %zu",
			 writes[w], 5 + w);
		range_head(conf);
		for (i = 0; i < ARRAY_SIZE(clients); i++) {
			for (e = 0; e < ARRAY_SIZE(reng); e++) {
				c = *base;
				range_base(&c, reng[e].ops, clients[i]);
				c.rho = 1.0 - writes[w] / 100.0;
				c.range_len_max = 2048;
				c.range_max_segs = 8;
				snprintf(conf, sizeof(conf), "w%u%% clients %u",
					 writes[w], clients[i]);
				range_row(&c, reng[e].name, conf);
			}
		}
	}

	/* where segmentation stops: segments per range */
	range_head("micro-benchmark, 20% writes, 48 clients, ranges of 1..segs x 256 units");
	for (i = 0; i < ARRAY_SIZE(segs); i++) {
		for (e = 0; e < ARRAY_SIZE(reng); e++) {
			c = *base;
			range_base(&c, reng[e].ops, 48);
			c.rho = 0.8;
			c.range_len_max = segs[i] * 256ULL;
			c.range_max_segs = segs[i];
			snprintf(conf, sizeof(conf), "w20%% segs <= %u", segs[i]);
			range_row(&c, reng[e].name, conf);
		}
	}
}

static int queue_experiments(const struct sim_cfg *c, const char *which)
{
	bool all = !strcmp(which, "all");

	printf("# latency model: atomic RTT %.2f us, READ RTT %.2f us, SEND/WRITE_IMM RTT %.2f us, NIC atomic %.2f us/address, CPU %.2f us/message, seed %llu\n",
	       c->rtt_atomic / 1000.0,
	       (c->rtt_read ? c->rtt_read : c->rtt_atomic) / 1000.0,
	       c->rtt_send / 1000.0,
	       c->nic_atomic / 1000.0, c->cpu_msg / 1000.0,
	       (unsigned long long)c->seed);
	if (!strcmp(which, "ranges")) {
		ranges(c);
		return 0;
	}
	if (all || !strcmp(which, "cascade"))
		cascade(c);
	else if (strcmp(which, "contention"))
		usage();
	if (all || !strcmp(which, "contention"))
		contention(c);
	return 0;
}

static u64 us(const char *v)
{
	return (u64)(atof(v) * 1000.0);
}

int main(int argc, char **argv)
{
	static const struct row rows[] = {
		{ "bakery (NIC atomics)", &rdlm_bakery_ops, RDLM_ATOMIC_NIC, 1, 1 },
		{ "bakery (CPU atomics)", &rdlm_bakery_ops, RDLM_ATOMIC_CPU, 1, 1 },
		{ "central (lock server)", &rdlm_central_ops, RDLM_ATOMIC_NIC, 1, 1 },
		{ "dqnl", &rdlm_dqnl_ops, RDLM_ATOMIC_NIC, 1, 1 },
		{ "dqnl-sf", &rdlm_dqnl_sf_ops, RDLM_ATOMIC_NIC, 1, 1 },
		{ "ncosed", &rdlm_ncosed_ops, RDLM_ATOMIC_NIC, 1, 1 },
	};
	const char *experiment = NULL;
	struct sim_cfg c;
	u16 long_k = 0;
	size_t j;
	int i;

	sim_default_cfg(&c);
	c.nlocks = 4096;
	c.slots = 4096;
	c.hold = 0;
	c.think = 0;
	for (i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--experiment") &&
		    !strcmp(argv[i + 1], "ranges")) {
			/* the range-lock paper's Table 5 (50th percentiles) */
			c.rtt_atomic = 2790;
			c.rtt_read = 2740;
			c.rtt_send = 3520;
			c.cpu_msg = 1000;
			/* not in the paper: an assumed NIC verb rate */
			c.nic_verb = 250;
			c.nops = 20000;
		}
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--nodes"))
			c.nodes = atoi(v);
		else if (!strcmp(a, "--clients"))
			c.clients = atoi(v);
		else if (!strcmp(a, "--locks"))
			c.nlocks = c.slots = atoi(v);
		else if (!strcmp(a, "--alpha"))
			c.alpha = atof(v);
		else if (!strcmp(a, "--rho"))
			c.rho = atof(v);
		else if (!strcmp(a, "--ops"))
			c.nops = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--think-us"))
			c.think = us(v);
		else if (!strcmp(a, "--hold-us"))
			c.hold = us(v);
		else if (!strcmp(a, "--lease-us"))
			c.ep.lease_ns = us(v);
		else if (!strcmp(a, "--rtt-atomic-us"))
			c.rtt_atomic = us(v);
		else if (!strcmp(a, "--nic-verb-us"))
			c.nic_verb = us(v);
		else if (!strcmp(a, "--rtt-read-us"))
			c.rtt_read = us(v);
		else if (!strcmp(a, "--rtt-send-us"))
			c.rtt_send = us(v);
		else if (!strcmp(a, "--cpu-us"))
			c.cpu_msg = us(v);
		else if (!strcmp(a, "--omega-us"))
			c.ep.omega_ns = us(v);
		else if (!strcmp(a, "--seed"))
			c.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--cache-us"))
			c.cache_ns = us(v);
		else if (!strcmp(a, "--long-ratio"))
			c.long_ratio = atof(v);
		else if (!strcmp(a, "--long-hold-us"))
			c.long_hold = us(v);
		else if (!strcmp(a, "--long-k"))
			long_k = (u16)atoi(v);
		else if (!strcmp(a, "--experiment"))
			experiment = v;
		else
			usage();
	}
	if (experiment) {
		printf("# command:");
		for (i = 0; i < argc; i++)
			printf(" %s", argv[i]);
		printf("\n");
		return queue_experiments(&c, experiment);
	}
	if (!c.nodes || !c.clients || c.nlocks < c.nodes)
		usage();
	c.slots = (c.nlocks + c.nodes - 1) / c.nodes;
	printf("# command:");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n# %u nodes x %u clients, %u locks, alpha %.2f, rho %.2f, hold %.1f us, think %.1f us, lease %.0f us\n",
	       c.nodes, c.clients, c.nlocks, c.alpha, c.rho, c.hold / 1000.0,
	       c.think / 1000.0, c.ep.lease_ns / 1000.0);
	printf("# latency model: atomic/READ RTT %.2f us, SEND RTT %.2f us, NIC atomic %.2f us/address, CPU %.2f us/message; %llu lock ops per engine, seed %llu\n",
	       c.rtt_atomic / 1000.0, c.rtt_send / 1000.0, c.nic_atomic / 1000.0,
	       c.cpu_msg / 1000.0, (unsigned long long)c.nops,
	       (unsigned long long)c.seed);
	printf("# latency = wait from lock request to grant (us); verbs per lock+unlock by kind; wire = messages on the wire per op\n");
	printf("# dqnl, dqnl-sf, ncosed: a node's clients on one word queue at the node (one engine request per node and word, as in the lock manager)\n");
	printf("# hold caching: %.1f us (kept%%: grants from a hold its node kept)\n",
	       c.cache_ns / 1000.0);
	printf("%-24s %9s %8s %8s %9s %6s %5s %5s %5s %5s %5s %6s %6s %5s\n",
	       "engine", "ops/s", "mean", "p99", "p99.9", "FA", "READ", "CAS",
	       "SEND", "wire", "kept%", "fails", "lost", "viol");
	for (j = 0; j < ARRAY_SIZE(rows); j++)
		run_row(&c, &rows[j]);
	if (c.long_ratio > 0) {
		struct row fixed = { "bakery fixed lease", &rdlm_bakery_ops,
				     RDLM_ATOMIC_NIC, 1, 1 };
		struct row multi = { "bakery multi-slot", &rdlm_bakery_ops,
				     RDLM_ATOMIC_NIC, long_k ? long_k : 4,
				     long_k ? long_k : 4 };

		printf("# long holders (section 6.5): %.3f of requests hold %.0f us\n",
		       c.long_ratio, c.long_hold / 1000.0);
		run_row(&c, &fixed);
		run_row(&c, &multi);
	}
	return 0;
}
