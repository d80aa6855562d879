/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm fabric: the RDMA transport's API to the lock manager.
 *
 * The fabric is the only code of rdlm that touches RDMA verbs (devices, the
 * connection manager, queue pairs, memory registration). The lock manager
 * above it maps its protocol engines' verbs onto it; the engines below the
 * lock manager stay pure: they name verbs (struct rdlm_verb, in
 * engine/engine.h) and never see the fabric. The fabric's internals are in
 * fabric_priv.h; Documentation/fabric.rst describes them.
 */
#ifndef RDLM_FABRIC_H
#define RDLM_FABRIC_H

#include <linux/socket.h>
#include <linux/types.h>

#include "../engine/engine.h"
#include "../rdlm.h"		/* RDLM_MAX_MEMBERS, RDLM_LS_NAME_MAX */

#define RDLM_MAX_LOCKSPACES	64	/* enabled at the same time */
#define RDLM_ENGINE_NAME_MAX	16	/* with its NUL */

int rdlm_fabric_init(void);
void rdlm_fabric_exit(void);

/*
 * The fabric API, the lock manager's only way to the network.
 *
 * A lockspace's fabric side (struct rdlm_fabric_ls) owns the local lock
 * table and mailbox and knows the members. rdlm_fabric_post() maps one
 * engine verb (struct rdlm_verb) to one operation on the connection to
 * verb->node (itself included: its loopback connection, or its own CPU
 * for what that can do, see rdlm_fabric_post()) and later
 * calls @done once with a struct rdlm_cqe: status 0 and, for FA, CAS and
 * READ, the word's original value (a record READ: its bytes, see
 * rdlm_fabric_ls_record()); or a negative errno. Incoming SENDs and
 * WRITE_WITH_IMMs are handed to ops->recv as struct rdlm_rx. All callbacks
 * may run in softirq context and must not sleep. ops->peer reports a member's
 * connection going up (tables known) or down (every verb to it failed).
 *
 * Teardown: rdlm_fabric_ls_quiesce() first (posts fail with -ESHUTDOWN from
 * then on; every verb posted before has had its @done called; when it
 * returns no done, recv or peer callback of the lockspace runs or will run),
 * then free what the callbacks use, then rdlm_fabric_ls_destroy().
 */

/**
 * struct rdlm_node_cfg - one configured cluster node
 * @nodeid: node id, 1..RDLM_MAX_NODEID
 * @addr: its RDMA address and port
 */
struct rdlm_node_cfg {
	u32 nodeid;
	struct sockaddr_storage addr;
};

/**
 * struct rdlm_fabric_ls_cfg - what the fabric needs to know of a lockspace
 * @name: lockspace name (hashed into the wire id)
 * @local: this node
 * @nr_members: entries in @members (this node is one of them)
 * @members: member nodes
 * @nr_slots: lock words in every member's table
 * @nr_mbox: mailbox slots in every member's receive area
 * @atomic_mode: &enum rdlm_atomic_mode
 * @nr_records: records of RDLM_RECORD_SIZE bytes each member publishes
 *	next to its table for the others to READ (rdlm_fabric_ls_record()),
 *	at most RDLM_MAX_RECORDS; NIC-atomic mode only, 0 for none
 * @engine: the lock manager's engine
 * @lvb_len: its LVB bytes
 * @lease_us: its lease
 *
 * @engine, @lvb_len, @lease_us, @nr_slots, @nr_mbox and @atomic_mode are
 * what every member must agree on (a member that differs is refused, both
 * ends say which field).
 */
struct rdlm_fabric_ls_cfg {
	char name[RDLM_LS_NAME_MAX];
	struct rdlm_node_cfg local;
	u32 nr_members;
	struct rdlm_node_cfg members[RDLM_MAX_MEMBERS];
	u32 nr_slots;
	u32 nr_mbox;
	u8 atomic_mode;
	u32 nr_records;
	char engine[RDLM_ENGINE_NAME_MAX];
	u32 lvb_len;
	u32 lease_us;
};

/**
 * struct rdlm_fabric_ls_ops - callbacks of the lockspace's user
 * @recv: a SEND or WRITE_WITH_IMM arrived (softirq, must not sleep)
 * @peer: connection to @node is up (verbs may flow) or down (process context)
 * @restart: @node presented a new incarnation of the lockspace: it was
 *	enabled there again, and nothing of the old one is in flight (it was
 *	quiesced before it went). Called before any message or verb of the
 *	new one reaches this node, and before its table is known (softirq).
 *	Return true to admit the new incarnation now, false to keep it out
 *	as if fenced (rdlm_fabric_ls_fence() with false lets it in)
 * @gone: @node says this node's incarnation was declared departed (it
 *	fenced it): nothing of ours is admitted there any more (softirq)
 * @withdrawn: @node took down the incarnation of the lockspace admitted
 *	here (its WITHDRAW): every lock of it was released or reported lost
 *	there first; our verbs to its table may still be completing (softirq)
 */
struct rdlm_fabric_ls_ops {
	void (*recv)(void *priv, const struct rdlm_rx *rx);
	void (*peer)(void *priv, u32 node, bool up);
	bool (*restart)(void *priv, u32 node);
	void (*gone)(void *priv, u32 node);
	void (*withdrawn)(void *priv, u32 node);
};

struct rdlm_fabric_ls;

/* Completion of rdlm_fabric_post(): called once, may run in softirq. */
typedef void (*rdlm_fabric_done_t)(void *ctx, const struct rdlm_cqe *cqe);

int rdlm_fabric_ls_create(const struct rdlm_fabric_ls_cfg *cfg,
			  struct rdlm_fabric_ls **lsp);
void rdlm_fabric_ls_quiesce(struct rdlm_fabric_ls *ls);
void rdlm_fabric_ls_destroy(struct rdlm_fabric_ls *ls);
void rdlm_fabric_ls_set_ops(struct rdlm_fabric_ls *ls,
			    const struct rdlm_fabric_ls_ops *ops, void *priv);
struct rdlm_fabric_ls *rdlm_fabric_ls_get(const char *name);
void rdlm_fabric_ls_put(struct rdlm_fabric_ls *ls);
bool rdlm_fabric_ls_ready(struct rdlm_fabric_ls *ls, u32 node);
int rdlm_fabric_ls_fence(struct rdlm_fabric_ls *ls, u32 node, bool fence);
u64 rdlm_fabric_ls_incarnation(struct rdlm_fabric_ls *ls);
u64 rdlm_fabric_ls_admitted(struct rdlm_fabric_ls *ls, u32 node);
bool rdlm_fabric_ls_stale(struct rdlm_fabric_ls *ls, u32 node);
bool rdlm_fabric_ls_drain(struct rdlm_fabric_ls *ls, u32 node,
			  unsigned long timeout);
u64 rdlm_fabric_ls_word(struct rdlm_fabric_ls *ls, u32 slot);
void *rdlm_fabric_ls_record(struct rdlm_fabric_ls *ls, u32 index);
u32 rdlm_fabric_ls_nr_records(struct rdlm_fabric_ls *ls);
int rdlm_fabric_post(struct rdlm_fabric_ls *ls, const struct rdlm_verb *v,
		     rdlm_fabric_done_t done, void *ctx);

#endif /* RDLM_FABRIC_H */
