/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm protocol engine interface: I/O-free lock protocol state machines.
 *
 * An engine implements one lock protocol (bakery = DSLR, central = lock
 * server, later the queue engines).  It does no I/O, never sleeps and never
 * allocates in its fast path.  The same .c files are built into rdlm.ko and
 * into the userspace simulator (tools/sim); they include "engine_env.h" for
 * types, locks and helpers, and nothing else from the outside world.
 *
 * Inputs.  The caller (lock manager core + fabric in the kernel, the event
 * loop in the simulator) drives an engine instance (one per node and
 * lockspace) through its &struct rdlm_engine_ops:
 *  ->lock()     a request for the lock word at (home node, slot) in a mode;
 *  ->unlock()   release of a granted request, or cancel of a pending one;
 *  ->complete() the completion of a verb the engine asked for, carrying the
 *               cookie it chose and, for FA/CAS/READ, the original word value;
 *  ->timer()    expiry of a timer the engine armed (cookie checked inside);
 *  ->recv()     a SEND message or WRITE_WITH_IMM notice from a peer engine.
 * Every call gets a &struct rdlm_out carrying the current time (ns, any
 * monotonic clock) and an emit() callback.
 *
 * Outputs.  The engine answers only through out->emit(), with actions:
 * POST a verb (FA, CAS, READ on a lock word; WRITE_WITH_IMM into a peer's
 * mailbox slot; SEND of a typed &struct rdlm_msg), arm a TIMER (one per
 * request, re-arming replaces it; req == NULL for a home-side timer), GRANT,
 * FAIL (with -errno), NOTICE (lease lost, someone blocked behind you, update
 * lock upgraded to write) and DONE (the engine no longer references the
 * request: the caller may free it).  emit() must not call back into the
 * engine; completions and timers are delivered later, from a fresh call.
 *
 * Atomic modes.  A lockspace uses either NIC atomics (the fabric posts
 * one-sided FA/CAS/READ) or CPU atomics (the fabric SENDs the operation to
 * the home node, whose CPU applies it with rdlm_word_apply() and replies).
 * Engines post the same verbs in both modes and see the same completions;
 * only the fabric differs.  Never mix the two modes on one table.
 *
 * Ranges.  The range engines (rangeseg, rangecomb) lock the units
 * [&rdlm_req.start, &rdlm_req.end] of the resource at (home node, slot)
 * rather than a whole word; readers (SH) do not exclude each other, writers
 * (EX) exclude every overlapping request.  Word engines ignore the range.
 *
 * Requests.  Request state is preallocated per engine instance
 * (rdlm_req_alloc()/rdlm_req_free()); each carries a generation so that
 * messages naming a stale request (rdlm_req_id()) are recognised.  The
 * caller serialises calls that concern one request; home-side state of an
 * engine is protected by the engine's own lock.  Every verb posted is
 * counted by kind in &struct rdlm_engine_stats.
 *
 * Concurrency and ordering assumed from the fabric: verbs between a pair of
 * nodes are executed in posting order (one RC QP; their completions may come
 * in another order: CPU-atomic verbs on the node's own table complete
 * without the QP), atomics on one word are
 * serialised at its home, and a verb is either executed within the lease or
 * completed with an error (connection torn down).
 */
#ifndef RDLM_ENGINE_H
#define RDLM_ENGINE_H

#include "engine_env.h"

/* Lock modes.  UPDATE is DSLR's update lock (read first, write later). */
enum rdlm_mode {
	RDLM_MODE_SH = 0,
	RDLM_MODE_EX = 1,
	RDLM_MODE_UP = 2,
	RDLM_MODE_NR
};

enum rdlm_atomic_mode {
	RDLM_ATOMIC_NIC = 0,	/* one-sided RDMA atomics */
	RDLM_ATOMIC_CPU = 1,	/* SEND to home, home CPU applies */
};

enum rdlm_verb_kind {
	RDLM_VERB_FA = 0,
	RDLM_VERB_CAS,
	RDLM_VERB_READ,
	RDLM_VERB_WRITE_IMM,
	RDLM_VERB_SEND,
	RDLM_VERB_NR
};

/* Hints on a posted verb, for checkers and tracing only (but RECORD). */
#define RDLM_VF_ENQUEUE	0x01	/* places the request in the lock's queue */
/* takes it out again (undo); on a home's SEND: the request is not queued */
#define RDLM_VF_DEQUEUE	0x02
#define RDLM_VF_RESET	0x04	/* CAS that resets a lock word */
/*
 * Not a hint: a READ of the home's record @slot (the fabric's
 * rdlm_fabric_ls_record(), RDLM_RECORD_SIZE bytes) instead of a lock word.
 * Only the lock manager posts it, never an engine.
 */
#define RDLM_VF_RECORD	0x08

/* Typed message carried by SEND (and handed to ->recv()). */
enum rdlm_msg_type {
	RDLM_MSG_LOCK = 1,	/* requester -> home: queue me */
	RDLM_MSG_UNLOCK,	/* requester -> home: release token */
	RDLM_MSG_GRANT,		/* home -> requester */
	RDLM_MSG_BLOCKING,	/* home -> holder: someone waits */
	RDLM_MSG_BUSY,		/* home -> requester: no room, retry */
	RDLM_MSG_ENGINE = 32,	/* first type free for engine-private use */
};

/**
 * struct rdlm_msg - a typed message between engine instances
 * @type: &enum rdlm_msg_type or engine-private type
 * @mode: lock mode concerned
 * @flags: engine-private flags
 * @src: sending node (filled by the engine)
 * @slot: lock word slot at the home node
 * @part: index of a part of a longer message (the lock manager's LVB
 *	chunks); zero in the engines'
 * @reqid: requester's rdlm_req_id(), echoed in replies
 * @token: grant token (engine defined)
 * @arg: engine-private argument
 * @arg2: a second one (the lock manager's POSIX locks: the owner)
 */
struct rdlm_msg {
	u16 type;
	u8 mode;
	u8 flags;
	u32 src;
	u32 slot;
	u32 part;
	u64 reqid;
	u64 token;
	u64 arg;
	u64 arg2;
};

struct rdlm_req;

/**
 * struct rdlm_verb - one RDMA operation an engine asks the fabric to post
 * @kind: &enum rdlm_verb_kind
 * @flags: RDLM_VF_* hints
 * @pad: zero
 * @node: target node
 * @slot: lock word slot (FA, CAS, READ) or mailbox slot (WRITE_IMM)
 * @imm: immediate data of WRITE_IMM
 * @arg0: FA addend, CAS compare value, WRITE_IMM payload
 * @arg1: CAS swap value
 * @msg: SEND payload
 * @req: owning request, NULL for home-side sends
 * @cookie: engine value handed back in the completion
 */
struct rdlm_verb {
	u8 kind;
	u8 flags;
	u16 pad;
	u32 node;
	u32 slot;
	u32 imm;
	u64 arg0;
	u64 arg1;
	struct rdlm_msg msg;
	struct rdlm_req *req;
	u64 cookie;
};

/**
 * struct rdlm_cqe - completion of a posted verb
 * @req: request that posted it (NULL for home-side sends)
 * @cookie: &rdlm_verb.cookie
 * @kind: &enum rdlm_verb_kind
 * @status: 0 or -errno (e.g. -EIO when the connection failed)
 * @value: original word value for FA, CAS, READ
 * @data: the bytes a record READ (RDLM_VF_RECORD) read, valid during the
 *	completion callback only; NULL for every other verb and on failure
 */
struct rdlm_cqe {
	struct rdlm_req *req;
	u64 cookie;
	u8 kind;
	int status;
	u64 value;
	const void *data;
};

/**
 * struct rdlm_rx - an incoming SEND or WRITE_WITH_IMM
 * @kind: RDLM_VERB_SEND or RDLM_VERB_WRITE_IMM
 * @src: sending node
 * @slot: mailbox slot written (WRITE_IMM)
 * @imm: immediate data (WRITE_IMM)
 * @value: payload written (WRITE_IMM)
 * @msg: message (SEND)
 */
struct rdlm_rx {
	u8 kind;
	u32 src;
	u32 slot;
	u32 imm;
	u64 value;
	struct rdlm_msg msg;
};

enum rdlm_act_kind {
	RDLM_ACT_POST = 1,	/* post @verb */
	RDLM_ACT_TIMER,		/* arm timer @delay_ns, call ->timer(@req, @cookie) */
	RDLM_ACT_GRANT,		/* @req granted @mode until @lease_end */
	RDLM_ACT_FAIL,		/* @req not granted: @err */
	RDLM_ACT_NOTICE,	/* @notice about @req */
	RDLM_ACT_DONE,		/* engine let go of @req */
};

enum rdlm_notice {
	RDLM_NOTICE_LOST = 1,	/* lease expired: lock is no longer held */
	RDLM_NOTICE_BLOCKING,	/* someone waits behind this holder */
	RDLM_NOTICE_UPGRADED,	/* update lock now grants write access */
	RDLM_NOTICE_UNCONVERTED, /* ->convert() not done, @err says why */
	/*
	 * a request that could not wait (NOQUEUE) was refused because of
	 * this hold: nobody waits, but a holder that only keeps the word for
	 * later locks (hold caching) gives it back
	 */
	RDLM_NOTICE_TRIED,
};

/**
 * struct rdlm_action - one output of an engine step
 * @kind: &enum rdlm_act_kind
 * @req: request concerned (NULL for home-side posts and timers)
 * @verb: verb to post (POST)
 * @delay_ns: timer delay from &rdlm_out.now (TIMER)
 * @cookie: timer cookie (TIMER)
 * @mode: granted mode (GRANT)
 * @lease_end: time at which the grant lapses, 0 = never (GRANT)
 * @err: negative errno (FAIL, NOTICE_UNCONVERTED)
 * @notice: &enum rdlm_notice (NOTICE)
 */
struct rdlm_action {
	u8 kind;
	struct rdlm_req *req;
	struct rdlm_verb verb;
	u64 delay_ns;
	u64 cookie;
	u8 mode;
	u64 lease_end;
	int err;
	u8 notice;
};

/**
 * struct rdlm_out - context of one engine call
 * @now: current time in ns
 * @emit: action sink; must not re-enter the engine
 * @priv: caller data for @emit
 */
struct rdlm_out {
	u64 now;
	void (*emit)(struct rdlm_out *out, const struct rdlm_action *act);
	void *priv;
};

/* Request flags (struct rdlm_req.flags). */
/*
 * Fail with -EAGAIN instead of waiting, where the engine can tell at once
 * (central: the home answers busy). Others ignore it: the lock manager
 * cancels after the first answer of the word.
 */
#define RDLM_RF_NOQUEUE	0x01
/*
 * ->convert(): an up-conversion that would deadlock with another one on
 * the word waits too, instead of being refused with -EDEADLK.
 */
#define RDLM_RF_NODLCKWT	0x02

#define RDLM_REQ_PRIV_WORDS	24

/**
 * struct rdlm_req - one lock request, preallocated per engine
 * @node: home node of the lock word (set by caller)
 * @slot: slot of the lock word in the home's table (set by caller)
 * @mode: &enum rdlm_mode (set by caller)
 * @flags: RDLM_RF_* (set by caller)
 * @slots: lease slots k for long holders, 0 or 1 = normal (set by caller)
 * @start: range engines: first unit of the range to lock, inclusive (set by
 *	caller); ignored by the word engines
 * @end: range engines: last unit of the range, inclusive, @start <= @end
 *	(set by caller); ignored by the word engines
 * @user: caller cookie, untouched by engines (a range engine that drives
 *	child requests of its own copies it into them, see rangeseg.c)
 * @idx: index in the engine's pool
 * @gen: generation, bumped on every allocation
 * @busy: allocated
 * @timer_cookie: cookie of the timer currently armed for this request
 * @priv: engine-private state
 */
struct rdlm_req {
	u32 node;
	u32 slot;
	u8 mode;
	u8 flags;
	u16 slots;
	u64 start;
	u64 end;
	u64 user;
	u32 idx;
	u32 gen;
	bool busy;
	u64 timer_cookie;
	u64 priv[RDLM_REQ_PRIV_WORDS];
};

/**
 * struct rdlm_engine_params - per-lockspace engine configuration
 * @node: this node's id
 * @nr_nodes: nodes in the lockspace
 * @nr_slots: lock words in each node's table
 * @nr_reqs: requests preallocated on this node
 * @home_entries: central: queue entries preallocated at the home
 * @atomic_mode: &enum rdlm_atomic_mode (informational for engines)
 * @update_locks: bakery: six-counter layout with update locks
 * @lease_ns: lease of a holder (DSLR default 10 ms)
 * @omega_ns: polling unit per waiter ahead (DSLR default 5 us)
 * @backoff_r_ns: backoff base R (default 10 us)
 * @backoff_l_ns: backoff cap L (default 10 ms)
 * @kmax: largest lease slot count a request may take (default 1)
 * @count_max: counter limit, 0 = half the field range
 * @seed: seed of the engine's pseudo-random generator
 * @seg_units: rangeseg: units per segment (0 = 256, the paper's 2^8)
 * @no_lease: holds last until released: a dead holder's go only at
 *	->member_down() (engines whose protocol rests on leases refuse it)
 */
struct rdlm_engine_params {
	u32 node;
	u32 nr_nodes;
	u32 nr_slots;
	u32 nr_reqs;
	u32 home_entries;
	u8 atomic_mode;
	u8 update_locks;
	u64 lease_ns;
	u64 omega_ns;
	u64 backoff_r_ns;
	u64 backoff_l_ns;
	u32 kmax;
	u32 count_max;
	u64 seed;
	u32 seg_units;
	u8 no_lease;
};

/**
 * struct rdlm_engine_stats - counters of one engine instance
 * @verbs: verbs posted, by &enum rdlm_verb_kind
 * @grants: GRANT actions
 * @fails: FAIL actions
 * @lost: leases lost by holders
 * @resets: successful lease/deadlock reset CAS
 * @zero_resets: lock words reset to zero (overflow)
 * @overflows: FA that met a counter at COUNT_MAX (undone)
 * @stale: messages or timers for stale requests ignored
 * @busy: home queue full answers
 * @cas_failed: CAS whose compare value did not match (queue engines' retry
 *	storm, DQNL section 4.4 / figure 5)
 * @recovers: queue engines: words this node asked their home to recover
 * @fences: queue engines: recoveries this home began fencing (ahead of
 *	@resets while one waits for acknowledgments)
 */
struct rdlm_engine_stats {
	rdlm_stat_t verbs[RDLM_VERB_NR];
	rdlm_stat_t grants;
	rdlm_stat_t fails;
	rdlm_stat_t lost;
	rdlm_stat_t resets;
	rdlm_stat_t zero_resets;
	rdlm_stat_t overflows;
	rdlm_stat_t stale;
	rdlm_stat_t busy;
	rdlm_stat_t cas_failed;
	rdlm_stat_t recovers;
	rdlm_stat_t fences;
};

struct rdlm_engine;

/* The words of an &rdlm_engine_ops.any_slot engine: 31 bits. */
#define RDLM_ANY_SLOT_MAX	0x7fffffffU

/**
 * struct rdlm_engine_ops - one lock protocol
 * @name: "bakery", "central", ...
 * @mbox_kinds: mailbox entries the engine writes per (request, sending
 *	node), 0 if it writes no WRITE_WITH_IMM notices
 * @many_per_word: one node may have several requests on one word at once
 *	(the lock manager then takes a word again while its release is under
 *	way); the queue engines allow one request per node and word
 * @grant_on_first: the engine may grant a request on the completion of its
 *	first verb (which goes to the word's home), and only when the word
 *	was free for it when that verb executed there
 * @exclusive_only: shared requests are served as exclusive (the lock
 *	manager then asks for exclusive, so that its hold covers every mode)
 * @try_answers: completions of a request's verbs after which one not
 *	granted yet would have to wait (a trylock gives up then); 0 means 1
 * @needs_lease: the protocol cannot do without leases (&rdlm_engine_params
 *	.no_lease is refused)
 * @any_slot: a word is any number up to %RDLM_ANY_SLOT_MAX, not an index
 *	into the table (the engine only sends messages): the lock manager
 *	spreads names over all of them, so that two rarely share one
 * @ranges: a request locks the units [&rdlm_req.start, &rdlm_req.end] of
 *	the resource at (node, slot), not a word (rangeseg, rangecomb): the
 *	lock manager serves range locks only (kernel/range.c)
 * @convert_no_lease: @convert works only with &rdlm_engine_params.no_lease
 *	(the bakery: a conversion may wait in the queue longer than a lease);
 *	see rdlm_engine_converts()
 * @init: set up engine-private state (may sleep, may allocate)
 * @fini: free engine-private state
 * @lock: start acquiring @req; returns 0 or -errno (then nothing emitted)
 * @unlock: release a granted @req, or cancel a pending one
 * @convert: optional; change the mode of the granted @req in place, with
 *	RDLM_RF_NOQUEUE or RDLM_RF_NODLCKWT in @flags. The hold stays while
 *	an up-conversion waits; it ends with GRANT in the new mode, or with
 *	NOTICE_UNCONVERTED and the hold as it was (-EDEADLK: another
 *	up-conversion waits, or on a queue engine an exclusive request
 *	queued before it, and no NODLCKWT, -EAGAIN: NOQUEUE and it would
 *	wait, -ECANCELED, -ENOLCK: the home no longer knows the hold).
 *	Converting to the held mode while an up-conversion waits cancels it;
 *	a down-conversion takes effect at once and emits nothing but verbs.
 *	Returns 0 or -errno (then nothing emitted)
 * @complete: a verb posted by this engine completed
 * @timer: a timer armed by this engine fired
 * @recv: a message or notice from a peer arrived
 * @member_down: optional; the cluster declared @node dead and moved to
 *	membership @epoch (strictly increasing).  Called on every surviving
 *	member, only after the fabric has flushed every verb from and to
 *	@node (none of them executes or lands later), and only once @node
 *	can no longer believe it holds a lock (it is dead, or fenced, or it
 *	stopped on losing quorum within the recovery grace): its holds may
 *	be given to others at once.
 * @member_up: optional; the connection to @node failed and is up again,
 *	and the cluster did not declare @node dead meanwhile.  Called on both
 *	ends, only after every verb posted to @node before the failure has
 *	completed (none of them executes or lands later).  A verb that failed
 *	may still have executed: the engine repairs what that may have broken.
 * @member_join: optional; @node, declared dead by ->member_down() before,
 *	is a member again with fresh state (it restarted its lockspace):
 *	requests may reach its words again.  Called on every member, only
 *	after ->member_down() for @node has run, and before any verb of the
 *	new incarnation reaches this node.
 * @describe: optional, for debugfs: one line of engine state of @req (its
 *	phase and neighbours), or of the home side with @req NULL; returns
 *	what snprintf() returns
 */
struct rdlm_engine_ops {
	const char *name;
	u32 mbox_kinds;
	bool many_per_word;
	bool grant_on_first;
	bool exclusive_only;
	u8 try_answers;
	bool needs_lease;
	bool any_slot;
	bool ranges;
	bool convert_no_lease;
	int (*init)(struct rdlm_engine *eng);
	void (*fini)(struct rdlm_engine *eng);
	int (*lock)(struct rdlm_engine *eng, struct rdlm_req *req,
		    struct rdlm_out *out);
	int (*unlock)(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out);
	int (*convert)(struct rdlm_engine *eng, struct rdlm_req *req, u8 mode,
		       u8 flags, struct rdlm_out *out);
	void (*complete)(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			 struct rdlm_out *out);
	void (*timer)(struct rdlm_engine *eng, struct rdlm_req *req,
		      u64 cookie, struct rdlm_out *out);
	void (*recv)(struct rdlm_engine *eng, const struct rdlm_rx *rx,
		     struct rdlm_out *out);
	void (*member_down)(struct rdlm_engine *eng, u32 node, u32 epoch,
			    struct rdlm_out *out);
	void (*member_up)(struct rdlm_engine *eng, u32 node,
			  struct rdlm_out *out);
	void (*member_join)(struct rdlm_engine *eng, u32 node,
			    struct rdlm_out *out);
	int (*describe)(struct rdlm_engine *eng, struct rdlm_req *req,
			char *buf, size_t len);
};

/**
 * struct rdlm_engine - one engine instance (one node, one lockspace)
 * @ops: protocol
 * @p: parameters (defaults filled in by rdlm_engine_init())
 * @lock: protects the request pool and home-side state
 * @stats: counters
 * @reqs: preallocated requests
 * @free_head: first free request index, or U32_MAX
 * @next_free: free list links
 * @rng: pseudo-random generator state
 * @down: members declared dead by ->member_down() and not back by
 *	->member_join() since, bit n for node n (kept by engines that need it
 *	and have no private state: the bakery)
 * @priv: engine-private state
 */
struct rdlm_engine {
	const struct rdlm_engine_ops *ops;
	struct rdlm_engine_params p;
	rdlm_spinlock_t lock;
	struct rdlm_engine_stats stats;
	struct rdlm_req *reqs;
	u32 free_head;
	u32 *next_free;
	u64 rng;
	u64 down;
	void *priv;
};

extern const struct rdlm_engine_ops rdlm_bakery_ops;
extern const struct rdlm_engine_ops rdlm_central_ops;
extern const struct rdlm_engine_ops rdlm_dqnl_ops;
extern const struct rdlm_engine_ops rdlm_dqnl_sf_ops;
extern const struct rdlm_engine_ops rdlm_ncosed_ops;
/* Range engines (Documentation/range-locks.rst) */
extern const struct rdlm_engine_ops rdlm_rangeseg_ops;
extern const struct rdlm_engine_ops rdlm_rangecomb_ops;

/**
 * rdlm_engine_find() - look up an engine by name
 * @name: "bakery", "central", "dqnl", "dqnl-sf", "ncosed", "rangeseg" or
 *	"rangecomb"
 *
 * Return: the ops table, or NULL.
 */
const struct rdlm_engine_ops *rdlm_engine_find(const char *name);

/**
 * rdlm_engine_converts() - does this instance convert holds in place?
 * @eng: instance
 *
 * Return: true when &rdlm_engine_ops.convert may be called.
 */
static inline bool rdlm_engine_converts(const struct rdlm_engine *eng)
{
	return eng->ops->convert &&
	       (!eng->ops->convert_no_lease || eng->p.no_lease);
}

/**
 * rdlm_engine_default_params() - fill @p with the DSLR paper's defaults
 * @p: parameters to fill; node ids and sizes are left to the caller
 */
void rdlm_engine_default_params(struct rdlm_engine_params *p);

/**
 * rdlm_engine_mbox_slots() - mailbox entries an engine may write to
 * @ops: protocol
 * @p: parameters with nr_nodes and nr_reqs set
 *
 * Return: the receive area every member must have, in entries.
 */
static inline u32 rdlm_engine_mbox_slots(const struct rdlm_engine_ops *ops,
					 const struct rdlm_engine_params *p)
{
	return p->nr_reqs * p->nr_nodes * ops->mbox_kinds;
}

/**
 * rdlm_engine_init() - set up an engine instance
 * @eng: instance to initialise (caller memory)
 * @ops: protocol
 * @p: parameters; zero timing fields take the defaults
 *
 * Allocates the request pool and the engine's private state. May sleep.
 *
 * Return: 0 or -errno.
 */
int rdlm_engine_init(struct rdlm_engine *eng, const struct rdlm_engine_ops *ops,
		     const struct rdlm_engine_params *p);

/**
 * rdlm_engine_fini() - free what rdlm_engine_init() allocated
 * @eng: instance
 */
void rdlm_engine_fini(struct rdlm_engine *eng);

/**
 * rdlm_req_alloc() - take a request from the preallocated pool
 * @eng: instance
 *
 * Never sleeps.  The caller fills node, slot, mode, flags, slots, user.
 *
 * Return: the request, or NULL when the pool is empty.
 */
struct rdlm_req *rdlm_req_alloc(struct rdlm_engine *eng);

/**
 * rdlm_req_free() - give a request back after its DONE action
 * @eng: instance
 * @req: request
 */
void rdlm_req_free(struct rdlm_engine *eng, struct rdlm_req *req);

/**
 * rdlm_req_id() - wire identity of a request (index and generation)
 * @req: request
 *
 * Return: 64-bit id to put in messages.
 */
u64 rdlm_req_id(const struct rdlm_req *req);

/**
 * rdlm_req_lookup() - find the live request named by a wire id
 * @eng: instance
 * @id: value from rdlm_req_id()
 *
 * Return: the request, or NULL if the id is stale or out of range.
 */
struct rdlm_req *rdlm_req_lookup(struct rdlm_engine *eng, u64 id);

/**
 * rdlm_word_apply() - apply a lock word verb with the CPU (CPU-atomic mode)
 * @old: current value of the word
 * @kind: RDLM_VERB_FA or RDLM_VERB_CAS (READ returns @old)
 * @arg0: addend or compare value
 * @arg1: swap value
 *
 * The caller provides atomicity (one lock per table, or cmpxchg loop).
 *
 * Return: the new value of the word; the reply carries @old.
 */
u64 rdlm_word_apply(u64 old, u8 kind, u64 arg0, u64 arg1);

/**
 * rdlm_engine_random() - next value of the engine's seeded generator
 * @eng: instance
 *
 * Return: 32 pseudo-random bits.
 */
u32 rdlm_engine_random(struct rdlm_engine *eng);

/**
 * rdlm_engine_post() - emit a POST action and count the verb
 * @eng: instance
 * @out: call context
 * @v: verb
 */
void rdlm_engine_post(struct rdlm_engine *eng, struct rdlm_out *out,
		      const struct rdlm_verb *v);

/**
 * rdlm_engine_emit() - emit a non-POST action, counting grants and fails
 * @eng: instance
 * @out: call context
 * @kind: &enum rdlm_act_kind
 * @req: request
 * @arg: delay (TIMER), lease end (GRANT), -errno (FAIL), notice (NOTICE)
 * @cookie: timer cookie (TIMER), mode (GRANT) or -errno (NOTICE)
 */
void rdlm_engine_emit(struct rdlm_engine *eng, struct rdlm_out *out, u8 kind,
		      struct rdlm_req *req, s64 arg, u64 cookie);

/**
 * rdlm_engine_arm() - arm the request's timer with a fresh cookie
 * @eng: instance
 * @out: call context
 * @req: request
 * @delay_ns: delay
 */
void rdlm_engine_arm(struct rdlm_engine *eng, struct rdlm_out *out,
		     struct rdlm_req *req, u64 delay_ns);

/**
 * rdlm_engine_backoff() - truncated binary exponential random backoff
 * @eng: instance
 * @attempt: consecutive failures c (>= 1)
 *
 * Return: a delay drawn uniformly from [0, min(R * 2^(c-1), L)].
 */
u64 rdlm_engine_backoff(struct rdlm_engine *eng, u32 attempt);

#endif /* RDLM_ENGINE_H */
