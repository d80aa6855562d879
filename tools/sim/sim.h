/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deterministic discrete-event simulator for the rdlm protocol engines.
 */
#ifndef RDLM_SIM_H
#define RDLM_SIM_H

#include "engine.h"

struct sim_cfg {
	const struct rdlm_engine_ops *ops;
	u32 nodes;
	u32 clients;		/* concurrent clients per node */
	u32 nlocks;		/* distinct lock words used by the workload */
	u32 slots;		/* lock table size per node */
	u64 seed;
	struct rdlm_engine_params ep;

	/* fabric model (ns) */
	u64 rtt_atomic;		/* FA/CAS/READ round trip */
	u64 rtt_read;		/* READ round trip, 0 = rtt_atomic */
	u64 rtt_send;		/* SEND one way x 2 */
	u64 nic_atomic;		/* per-address atomic service at the home NIC */
	u64 nic_verb;		/* service of every one-sided verb (FA, CAS,
				 * READ) at the home NIC, all addresses
				 * together: the NIC's verb rate, 0 = none */
	u64 cpu_msg;		/* CPU service per received message */
	u64 err_timeout;	/* verb to a dead node fails after this */
	u32 jitter_pct;		/* spread of latencies */

	/* workload */
	u64 nops;		/* stop after this many grants */
	double alpha;		/* power law exponent of lock popularity */
	double rho;		/* share of shared requests */
	double upd;		/* share of update requests (bakery six-counter) */
	u64 hold;		/* mean hold time */
	u64 think;		/* mean think time between ops */
	double long_ratio;	/* share of long holders (6.5) */
	u64 long_hold;
	u16 long_k;		/* lease slots of long holders */

	/* faults */
	u32 crashes;
	u64 restart_delay;	/* a crashed node restarts this long after its
				 * crash (later if recovery is not done) with a
				 * fresh engine, table and clients; 0 = never */
	u32 pauses;
	u64 pause_len;
	u32 flaps;		/* link flaps: a node's connections fail */
	u64 flap_len;		/* mean flap length */
	u32 delay_pct;		/* % of verbs/messages delayed */
	u64 delay_max;
	u64 fault_window;	/* faults happen in [0, window) */

	bool fifo_check;
	bool fifo_prefix;	/* FIFO among all requests, not only the
				 * conflicting ones: the engine grants a
				 * prefix of its queue (central) */
	bool quiet;
	u64 max_events;

	/* scripted workloads (queue-engine experiments) */
	bool node_queue;	/* one request per node and word, as the core */
	bool fixed_word;	/* client g (global index) always locks g % nlocks */
	u64 cascade_hold;	/* node 0 client 0 locks first (exclusive) and
				 * holds this long; the others start after it
				 * and queue behind it (unlock cascade) */

	/* range workloads (range engines): 0 = whole words */
	u64 range_units;	/* units of each resource (word) */
	u64 range_len_min;	/* length uniform in [min, max], 0 = 1 */
	u64 range_len_max;	/* 0 = range_units */
	u32 range_max_segs;	/* clip a range to this many segments of
				 * ep.seg_units (the paper's 8), 0 = no clip */
	bool oltp;		/* Filebench-OLTP-like mix (bench.c) */
	bool server_node0;	/* node 0 serves only: no clients */
	u32 req_pool;		/* engine requests per node, 0 = 4 x clients */
	u32 convert_pct;	/* engines with ->convert: % of shared holds
				 * converted to exclusive before release */
	/*
	 * hold caching, as the lock manager's configfs cache_us: a released
	 * hold is kept by its node this long (at most half its lease) for
	 * the node's next request on the word, unless the engine says that
	 * someone waits (BLOCKING) or tried (TRIED); 0 = none
	 */
	u64 cache_ns;
};

struct sim_result {
	u64 grants;
	u64 fails;
	u64 lost;
	u64 releases;
	u64 violations;
	u64 fifo_violations;
	u64 stuck;		/* live waiters still waiting far too long at the end */
	u64 sim_time;
	u64 events;
	u64 verbs[RDLM_VERB_NR];
	u64 wire_msgs;
	u64 resets;
	u64 zero_resets;
	u64 overflows;
	u64 *lat;		/* per grant: wait from first request, ns */
	u64 nlat;
	u64 max_wait;
	char first_violation[256];
	u64 cas_failed;		/* engines' stats.cas_failed */
	u64 mbox_lost;		/* notices overwritten before they were read */
	u64 mbox_errors;	/* notices outside the receiver's mailbox */
	u64 cascade_t0;		/* cascade: when the first holder released */
	u64 reads;		/* grants of shared requests */
	u64 restarts;		/* crashed nodes that came back */
	u64 converts;		/* shared holds converted to exclusive */
	u64 unconverted;	/* conversions refused or cancelled */
	u64 cache_kept;		/* holds kept after their release */
	u64 cache_hits;		/* grants from a kept hold, no verb */
	u64 cache_revoked;	/* kept holds given back to a waiter */
};

void sim_default_cfg(struct sim_cfg *cfg);
int sim_run(const struct sim_cfg *cfg, struct sim_result *res);
void sim_result_free(struct sim_result *res);
u64 sim_percentile(struct sim_result *res, double p);

#endif
