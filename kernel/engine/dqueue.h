/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm distributed-queue engines (DQNL, DQNL-SF, N-CoSED): state and
 * helpers shared by kernel/engine/dqnl.c and kernel/engine/ncosed.c.
 * Private to the engines; see Documentation/queue-engines.rst.
 */
#ifndef RDLM_DQUEUE_H
#define RDLM_DQUEUE_H

#include "engine.h"

/*
 * Queue member identity (32 bits): [node + 1 : 10 | request index : 14 |
 * incarnation : 8].  Zero means "nobody"; DQ_FROZEN marks a word under
 * recovery.  The incarnation changes on every (re-)enqueue of a request, so
 * that notices meant for an earlier enqueue are recognised and dropped.
 */
#define DQ_IDX_BITS	14
#define DQ_MAX_NODES	1022
#define DQ_MAX_REQS	16384U		/* 2^DQ_IDX_BITS */
#define DQ_FROZEN	0xffffffffU

static inline u32 dq_mkid(u32 node, u32 idx, u32 inc)
{
	return (node + 1) << 22 | idx << 8 | (inc & 0xff);
}

static inline u32 dq_id_node(u32 id)
{
	return (id >> 22) - 1;
}

static inline u32 dq_id_idx(u32 id)
{
	return (id >> 8) & (DQ_MAX_REQS - 1);
}

/* WRITE_WITH_IMM notices: value = [kind:8 | arg:24 | sender id:32] */
enum dq_notice {
	DQ_N_SUCC = 1,	/* exclusive successor: "I wait behind you" (arg: count) */
	DQ_N_GRANT,	/* predecessor hands the lock over */
	DQ_N_SHREQ,	/* N-CoSED: shared request queued behind an exclusive */
	DQ_N_SHGRANT,	/* N-CoSED: exclusive releases its shared waiters */
};

/*
 * Mailbox entries a request has per sending node: one per notice kind, so
 * that two notices of different kinds from one node (a handover, then a
 * new request queueing behind the one it handed to) never share an entry.
 */
#define DQ_MBOX_KINDS	DQ_N_SHGRANT

static inline u64 dq_note(u8 kind, u32 arg, u32 sender)
{
	return (u64)kind << 56 | (u64)(arg & 0xffffff) << 32 | sender;
}

/* SEND messages between queue engines */
enum dq_msg {
	DQ_M_RECOVER = RDLM_MSG_ENGINE,	/* member -> home: word looks broken */
	DQ_M_FENCE,			/* home -> all: drop claims on the word */
	DQ_M_ACK,			/* all -> home: claims dropped */
	DQ_M_EXWAIT,			/* N-CoSED: ex waits for @arg releases */
	DQ_M_SHREL,			/* N-CoSED: shared release */
	DQ_M_SHHOLD,			/* N-CoSED: shared grant, to the home */
	DQ_M_SHBLOCK,			/* N-CoSED: home -> shared holder */
};

/* request phases */
enum dq_phase {
	DQ_IDLE = 0,
	DQ_ACQ,		/* acquire atomic(s) in progress */
	DQ_BACKOFF,	/* word frozen: retry after a timer */
	DQ_WAIT,	/* queued, waiting for a handover or a home grant */
	DQ_HELD,
	DQ_REL,		/* release CAS in flight */
	DQ_RELWAIT,	/* released, waiting for successor notices */
	DQ_FINISH,	/* DONE once all verbs completed */
};

/* verb cookies of requests: op | id << 32 */
enum dq_op {
	DQ_OP_ENQ = 1,	/* CAS into the tail (DQNL, N-CoSED exclusive) */
	DQ_OP_TICKET,	/* DQNL-SF: FA on the ticket counter */
	DQ_OP_SWAP,	/* DQNL-SF: CAS of the next ticket into the tail */
	DQ_OP_PROBE,	/* DQNL-SF: CAS that only reads (not our turn) */
	DQ_OP_SHFA,	/* N-CoSED shared FA */
	DQ_OP_REL,	/* release CAS */
	DQ_OP_NOTE,	/* WRITE_WITH_IMM (cookie bits 8..15: notice kind) */
	DQ_OP_SEND,
	DQ_OP_UPG,	/* N-CoSED: CAS of a shared holder into the tail */
	DQ_OP_DOWN,	/* N-CoSED: CAS of an exclusive holder going shared */
};

/* N-CoSED: where an in-place up-conversion of a shared hold is */
enum dq_upg {
	DQ_UPG_NONE = 0,
	DQ_UPG_CAS,	/* its CAS into the tail in flight */
	DQ_UPG_QUEUED,	/* the tail: waiting for the home's GRANT */
	DQ_UPG_PENDING,	/* asked for during a down-conversion: starts after */
	DQ_UPG_POLL,	/* an exclusive queued (NODLCKWT): CAS again later */
};

/**
 * struct dq_req - per-request state of a queue engine (in rdlm_req.priv)
 * @phase: &enum dq_phase
 * @cancel: unlock() called before the grant, or (N-CoSED) during a
 *	conversion that must settle first
 * @lost: fenced by recovery while held
 * @restart: fenced while an atomic was in flight: its result is void
 * @ainf: an acquire/release atomic is in flight
 * @failio: the home was declared dead: fail when the atomic completes
 * @blocked: BLOCKING notice emitted for this grant
 * @has_succ: @succ is valid
 * @homewait: N-CoSED: waiting for the home's GRANT (shared releases)
 * @turnwait: DQNL-SF: holds a ticket, waiting for its turn
 * @upg: N-CoSED: &enum dq_upg
 * @upg_flags: N-CoSED: RDLM_RF_* of that up-conversion
 * @upg_cancel: N-CoSED: converted back to shared while it waits
 * @down: N-CoSED: a down-conversion still holds the tail: the hold is
 *	shared, the word not yet
 * @kept: kept its hold through a recovery of its word: a release (or
 *	N-CoSED down-conversion) that meets the word still frozen retries
 *	after a backoff
 * @relretry: such a release waits for its backoff
 * @outstanding: verbs posted and not completed
 * @id: current queue identity (dq_mkid())
 * @pred: predecessor identity or 0
 * @succ: exclusive successor identity
 * @succ_arg: N-CoSED: shared requests queued between us and @succ
 * @ticket: DQNL-SF ticket
 * @need: N-CoSED: shared releases the home must count before our grant
 * @nsh: N-CoSED: shared requests that queued behind us (notices received)
 * @sh_head: N-CoSED: list of those not granted yet
 * @tries: consecutive backoffs
 * @deaths: engine death count when this enqueue began
 * @expect: compare value of the next CAS (last observed word)
 * @turn_since: DQNL-SF: when the turn last moved while we waited (0: unset)
 */
struct dq_req {
	u8 phase;
	u8 cancel;
	u8 lost;
	u8 restart;
	u8 ainf;
	u8 failio;
	u8 blocked;
	u8 has_succ;
	u8 homewait;
	u8 turnwait;
	u8 upg;
	u8 upg_flags;
	u8 upg_cancel;
	u8 down;
	u8 kept;
	u8 relretry;
	u32 outstanding;
	u32 id;
	u32 pred;
	u32 succ;
	u32 succ_arg;
	u32 ticket;
	u32 need;
	u32 nsh;
	u32 sh_head;
	u32 tries;
	u32 deaths;
	u64 expect;
	u64 turn_since;
};

static_assert(sizeof(struct dq_req) <= sizeof(((struct rdlm_req *)0)->priv));

/* home-side recovery state of a slot */
enum dq_rec {
	DQ_REC_NONE = 0,
	DQ_REC_PENDING,	/* requested, another slot is being recovered */
	DQ_REC_FREEZE,	/* CAS of the word to frozen in flight */
	DQ_REC_FENCE,	/* waiting for every live member's ACK */
	DQ_REC_THAW,	/* CAS of the word to its reset value in flight */
};

/**
 * struct dq_slot - home-side state of one lock word
 * @rec: &enum dq_rec
 * @rec_again: recovery asked for while the thaw was in flight, or by a
 *	member after its ACK: recover again
 * @reset_busy: N-CoSED: shared-count reset CAS in flight
 * @ex_pending: N-CoSED: an exclusive waits for shared releases
 * @rel: N-CoSED: shared releases counted and not consumed
 * @reset_r: N-CoSED: releases the reset CAS in flight would consume
 * @ex_need: N-CoSED: releases the waiting exclusive needs
 * @ex_node: N-CoSED: its node
 * @ex_id: N-CoSED: its queue identity
 * @group_deaths: N-CoSED: death count when the current shared group began
 * @ex_reqid: N-CoSED: its rdlm_req_id()
 * @sh_holders: N-CoSED: members that said they hold the word shared
 *	(SHHOLD, until their SHREL), told when an exclusive waits for them
 * @word: recovery: last observed value of the word
 * @keep: recovery: the holder a member's ACK said keeps the lock (0: none)
 */
struct dq_slot {
	u8 rec;
	u8 rec_again;
	u8 reset_busy;
	u8 ex_pending;
	u32 rel;
	u32 reset_r;
	u32 ex_need;
	u32 ex_node;
	u32 ex_id;
	u32 group_deaths;
	u64 ex_reqid;
	u64 sh_holders;
	u64 word;
	u32 keep;
};

struct dq_eng;

/**
 * struct dq_proto - what differs between the queue engines
 * @start: begin (or restart) acquiring @req; d->id is fresh
 * @atomic_done: an acquire/release atomic of @req completed
 * @notice: a WRITE_WITH_IMM notice for @req arrived
 * @release: release a held, not lost, @req
 * @home_msg: an engine-specific SEND arrived at the home (may be NULL)
 * @home_cqe: a home-side verb other than freeze/thaw completed
 * @tail: identity of the queue's tail in the word @v (0: none)
 * @frozen: value of the word @v with its tail replaced by DQ_FROZEN
 * @thawed: reset value of the frozen word @v
 * @thawed_held: reset value of the frozen word @v held by the exclusive
 *	@holder or by @shared shared holders (never both), which keep their
 *	locks through the recovery (NULL: holders lose them)
 * @rel_retry: a kept hold's release or down-conversion met the frozen
 *	word and waited: try again (NULL: @release)
 * @fence: drop engine-specific state of @req (shared lists)
 * @home_down: home side of a member death (may be NULL)
 * @held_atomic: an atomic of a held request completed, with its status
 *	(N-CoSED's conversions; may be NULL)
 * @held_timer: a timer of a held request fired (may be NULL)
 */
struct dq_proto {
	void (*start)(struct rdlm_engine *eng, struct rdlm_req *req,
		      struct rdlm_out *out);
	void (*atomic_done)(struct rdlm_engine *eng, struct rdlm_req *req,
			    u8 op, u64 old, struct rdlm_out *out);
	void (*notice)(struct rdlm_engine *eng, struct rdlm_req *req, u8 kind,
		       u32 arg, u32 sender, struct rdlm_out *out);
	void (*release)(struct rdlm_engine *eng, struct rdlm_req *req,
			struct rdlm_out *out);
	void (*home_msg)(struct rdlm_engine *eng, const struct rdlm_rx *rx,
			 struct rdlm_out *out);
	void (*home_cqe)(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
			 struct rdlm_out *out);
	u32 (*tail)(u64 v);
	u64 (*frozen)(u64 v);
	u64 (*thawed)(u64 v);
	u64 (*thawed_held)(u64 v, u32 holder, u32 shared);
	void (*rel_retry)(struct rdlm_engine *eng, struct rdlm_req *req,
			  struct rdlm_out *out);
	void (*fence)(struct rdlm_engine *eng, struct rdlm_req *req);
	void (*home_down)(struct rdlm_engine *eng, struct rdlm_out *out);
	void (*held_atomic)(struct rdlm_engine *eng, struct rdlm_req *req,
			    u8 op, int status, u64 old, struct rdlm_out *out);
	void (*held_timer)(struct rdlm_engine *eng, struct rdlm_req *req,
			   struct rdlm_out *out);
};

/**
 * struct dq_ack - the last ACK a member sent to one home
 * @seq: the fence's sequence number (0: none sent)
 * @slot: the word
 * @kept: our request it named as keeping the lock (0: none)
 * @lost: its connection failed under it
 *
 * Both ends must see the fence through: the home fences again when its
 * connection to the member is back, the member acknowledges again when
 * its own connection to the home is back (the two come back one by one).
 */
struct dq_ack {
	u64 seq;
	u32 slot;
	u32 kept;
	u8 lost;
};

/**
 * struct dq_eng - engine-private state of a queue engine instance
 * @proto: engine hooks
 * @inc: next incarnation per request index
 * @dead: nodes declared dead
 * @acked: recovery: nodes that acknowledged the current fence
 * @keep_sh: recovery, N-CoSED: shared holds each node's ACK said it keeps,
 *	less the releases it sent after that ACK
 * @slots: home-side state per lock word
 * @sh_next: N-CoSED shared-waiter pool: next links
 * @sh_id: N-CoSED shared-waiter pool: identities
 * @sh_free: N-CoSED shared-waiter pool: free list
 * @nr_sh: size of the pool
 * @deaths: members declared dead so far
 * @rec_slot: slot being recovered, or U32_MAX
 * @rec_wait: ACKs still expected
 * @rec_seq: fence sequence number
 * @broken: member side, one bit per (home, slot): a verb on the word or to
 *	its home failed without the home being declared dead, so the queue
 *	may be broken; the home is asked to recover it once it is reachable
 * @rec_cas_lost: home side: a freeze/thaw CAS on the word under recovery
 *	failed (our own connection broke); reposted by dq_member_up()
 * @acks: member side, per home: the last fence acknowledged to it, sent
 *	again by dq_member_up() if the ACK was lost
 * @probe_next: home side: next word the sweep after a departure reads
 *	(nr_slots: no sweep; dq_probe_more())
 * @probe_out: its READs in flight
 */
struct dq_eng {
	const struct dq_proto *proto;
	u8 *inc;
	u8 *dead;
	u8 *acked;
	u32 *keep_sh;
	struct dq_slot *slots;
	u32 *sh_next;
	u32 *sh_id;
	u32 sh_free;
	u32 nr_sh;
	u32 deaths;
	u32 rec_slot;
	u32 rec_wait;
	u64 rec_seq;
	u8 *broken;
	u8 rec_cas_lost;
	struct dq_ack *acks;
	u32 probe_next;
	u32 probe_out;
};

#define DQ_NONE	U32_MAX

/* the ops table of a queue engine: everything but its init is shared */
#define DQ_ENGINE_OPS(_name, _init, _first, _tries, _excl, _convert) {	\
	.name = _name,				\
	.grant_on_first = _first,		\
	.try_answers = _tries,			\
	.exclusive_only = _excl,		\
	.mbox_kinds = DQ_MBOX_KINDS,		\
	.init = _init,				\
	.fini = dq_fini,			\
	.lock = dq_lock,			\
	.unlock = dq_unlock,			\
	.convert = _convert,			\
	.complete = dq_complete,		\
	.timer = dq_timer,			\
	.recv = dq_recv,			\
	.member_down = dq_member_down,		\
	.member_up = dq_member_up,		\
	.member_join = dq_member_join,		\
	.describe = dq_describe,		\
}

/*
 * Home-side cookies: kind << 32 | slot; a message sent without a request
 * (DQ_HC_MSG) also carries its type (bits 40-47) and destination (48-63).
 * A probe (DQ_HC_PROBE) reads a word of this home after a departure.
 */
#define DQ_HC_FREEZE	1ULL
#define DQ_HC_THAW	2ULL
#define DQ_HC_RESET	3ULL
#define DQ_HC_MSG	4ULL
#define DQ_HC_PROBE	5ULL

#define DQ_PROBE_BATCH	32	/* probe READs in flight at once */

static inline struct dq_req *dq(struct rdlm_req *req)
{
	return (struct dq_req *)req->priv;
}

static inline struct dq_eng *dqe(struct rdlm_engine *eng)
{
	return eng->priv;
}

/* A new queue identity for @req: notices to its old ones are stale. */
static inline u32 dq_new_id(struct rdlm_engine *eng, struct rdlm_req *req)
{
	return dq_mkid(eng->p.node, req->idx, dqe(eng)->inc[req->idx]++);
}

static inline u64 dq_cookie(struct dq_req *d, u8 op)
{
	return (u64)d->id << 32 | op;
}

int dq_init(struct rdlm_engine *eng, const struct dq_proto *proto,
	    bool shared_pool);
void dq_fini(struct rdlm_engine *eng);
int dq_lock(struct rdlm_engine *eng, struct rdlm_req *req,
	    struct rdlm_out *out);
int dq_unlock(struct rdlm_engine *eng, struct rdlm_req *req,
	      struct rdlm_out *out);
void dq_complete(struct rdlm_engine *eng, const struct rdlm_cqe *cqe,
		 struct rdlm_out *out);
void dq_timer(struct rdlm_engine *eng, struct rdlm_req *req, u64 cookie,
	      struct rdlm_out *out);
void dq_recv(struct rdlm_engine *eng, const struct rdlm_rx *rx,
	     struct rdlm_out *out);
void dq_member_down(struct rdlm_engine *eng, u32 node, u32 epoch,
		    struct rdlm_out *out);
void dq_member_up(struct rdlm_engine *eng, u32 node, struct rdlm_out *out);
void dq_member_join(struct rdlm_engine *eng, u32 node, struct rdlm_out *out);
int dq_describe(struct rdlm_engine *eng, struct rdlm_req *req, char *buf,
		size_t len);

void dq_atomic(struct rdlm_engine *eng, struct rdlm_out *out,
	       struct rdlm_req *req, u8 kind, u8 op, u64 arg0, u64 arg1);
void dq_home_cas(struct rdlm_engine *eng, struct rdlm_out *out, u32 slot,
		 u64 kind, u64 cmp, u64 swap);
void dq_notify(struct rdlm_engine *eng, struct rdlm_out *out,
	       struct rdlm_req *req, u32 target, u8 kind, u32 arg);
void dq_send(struct rdlm_engine *eng, struct rdlm_out *out,
	     struct rdlm_req *req, u32 node, u16 type, u32 slot, u64 reqid,
	     u64 token, u64 arg);
void dq_grant(struct rdlm_engine *eng, struct rdlm_req *req,
	      struct rdlm_out *out);
void dq_blocking(struct rdlm_engine *eng, struct rdlm_req *req,
		 struct rdlm_out *out);
void dq_finish(struct rdlm_engine *eng, struct rdlm_req *req,
	       struct rdlm_out *out);
bool dq_rel_frozen(struct rdlm_engine *eng, struct rdlm_req *req, u64 old,
		   struct rdlm_out *out);
void dq_backoff(struct rdlm_engine *eng, struct rdlm_req *req,
		struct rdlm_out *out);
void dq_recover(struct rdlm_engine *eng, struct rdlm_req *req,
		struct rdlm_out *out);
void dq_home_recover(struct rdlm_engine *eng, u32 slot, struct rdlm_out *out);
void dq_upg_again(struct rdlm_engine *eng, struct rdlm_req *req,
		  struct rdlm_out *out);
void dq_lose(struct rdlm_engine *eng, struct rdlm_req *req,
	     struct rdlm_out *out);
bool dq_dead_since(struct rdlm_engine *eng, struct rdlm_req *req);

#endif /* RDLM_DQUEUE_H */
