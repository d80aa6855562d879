/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm fabric internals: devices, connections, lockspace tables, the wire.
 *
 * Connections. Every node opens one RC connection (the "active" one) to each
 * node that shares an enabled lockspace with it, itself included, and posts
 * all its own verbs there. It accepts the peers' connections on its listener
 * ("passive" ones) and serves them: their atomics and READs hit its tables,
 * their SENDs and WRITE_WITH_IMMs consume its receive buffers, and its
 * replies (table descriptions, CPU-atomic results, credits) go back on them.
 * So a node pair has two QPs, one per direction, and loopback is no special
 * case. Only active connections reconnect (with backoff) and send heartbeats.
 *
 * Flow control. Active -> passive SENDs and WRITE_WITH_IMMs spend a credit,
 * one receive buffer at the peer; the passive side reposts at once and
 * returns credits in the header of its next message or in a CREDIT message.
 * Passive -> active traffic is bounded by what the active side asked for.
 * Work that finds no credit or send queue slot waits on the backlog.
 *
 * Locking: struct rdlm_fabric (the module's one fabric) says what its
 * mutex and lists protect; conn->lock (BH) protects a connection's data path.
 */
#ifndef RDLM_FABRIC_PRIV_H
#define RDLM_FABRIC_PRIV_H

#include <linux/bitmap.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "../rdlm.h"
#include "fabric.h"

#define RDLM_SQ_DEPTH		128
#define RDLM_RQ_DEPTH		128
#define RDLM_CREDITS		64	/* active side's initial send credits */
#define RDLM_CREDIT_BATCH	16	/* passive returns credits this often */
#define RDLM_MSG_MAX		128	/* receive buffer size */
#define RDLM_LAT_BUCKETS	24	/* log2(us) latency histogram */
#define RDLM_MAX_CHUNKS		64	/* MRs per table */

#define RDLM_WIRE_MAGIC		0x4d4c4452	/* "RDLM" */
#define RDLM_WIRE_VERSION	6

/* ---- wire format: little endian, every field checked on receipt ---- */

enum rdlm_wire_type {
	RDLM_W_TABLE = 1,	/* passive -> active: a table/mailbox chunk */
	RDLM_W_TABLE_REQ,	/* active -> passive: send me your tables */
	RDLM_W_WITHDRAW,	/* passive -> active: table gone */
	RDLM_W_ENGINE,		/* active -> passive: engine message */
	RDLM_W_AREQ,		/* active -> passive: CPU-atomic request */
	RDLM_W_ARESP,		/* passive -> active: CPU-atomic result */
	RDLM_W_HEARTBEAT,	/* active -> passive: idle keepalive */
	RDLM_W_CREDIT,		/* passive -> active: credits only */
	RDLM_W_WITHDRAWN,	/* active -> passive: WITHDRAW seen, keys unused */
	RDLM_W_GONE,		/* passive -> active: your incarnation departed */
	RDLM_W_NR
};

struct rdlm_wire_hdr {
	__le32 magic;
	u8 version;
	u8 type;
	__le16 len;		/* whole message */
	__le16 credits;		/* credits returned (passive -> active) */
	__le16 rsvd;
	__le32 src;		/* sender node id */
	__le32 lsid;		/* lockspace wire id, 0 = none */
};

/*
 * Who sends a table or asks for one: its lockspace's incarnation, drawn at
 * every enable, and what every member must agree on (fs/dlm's
 * check_rcom_config()).
 */
struct rdlm_wire_ident {
	__le64 incarnation;	/* never 0 */
	__le32 nr_slots;
	__le32 nr_mbox;
	__le32 lease_us;
	__le16 lvb_len;
	u8 atomic_mode;
	u8 rsvd;
	char engine[RDLM_ENGINE_NAME_MAX];	/* NUL-padded */
};

struct rdlm_wire_table_req {
	struct rdlm_wire_hdr hdr;
	struct rdlm_wire_ident id;
};

struct rdlm_wire_withdraw {
	struct rdlm_wire_hdr hdr;
	__le64 incarnation;	/* the sender's, that ends */
};

struct rdlm_wire_gone {
	struct rdlm_wire_hdr hdr;
	__le64 incarnation;	/* the receiver's, that departed */
};

struct rdlm_wire_table {
	struct rdlm_wire_hdr hdr;
	struct rdlm_wire_ident id;
	__le32 ls_index;	/* sender's index, goes into WRITE_IMM */
	__le16 rsvd;
	__le16 chunk;		/* this chunk of the table */
	__le16 nr_chunks;	/* 0 in CPU-atomic mode */
	__le16 record_pages;	/* of the chunks' pages, the records' (last) */
	__le32 chunk_slots;	/* slots per chunk */
	__le64 addr;
	__le32 rkey;
	__le32 mbox_rkey;
	__le64 mbox_addr;
};

struct rdlm_wire_engine {
	struct rdlm_wire_hdr hdr;
	__le16 type;
	u8 mode;
	u8 flags;
	__le32 src;
	__le32 slot;
	__le32 part;
	__le64 reqid;
	__le64 token;
	__le64 arg;
	__le64 arg2;
};

struct rdlm_wire_areq {
	struct rdlm_wire_hdr hdr;
	u8 kind;
	u8 rsvd[3];
	__le32 slot;
	__le64 tag;
	__le64 arg0;
	__le64 arg1;
};

struct rdlm_wire_aresp {
	struct rdlm_wire_hdr hdr;
	__le32 status;		/* 0 or a positive errno */
	__le32 rsvd;
	__le64 tag;
	__le64 value;
};

/* One mailbox slot, written by a peer's WRITE_WITH_IMM. */
struct rdlm_mbox_entry {
	__le64 value;
	__le32 imm;
	__le32 src;
};

/* ---- devices ---- */

enum {
	RDLM_DEV_LINK_DOWN,	/* from NETDEV_GOING_DOWN / IB_EVENT_PORT_ERR */
	RDLM_DEV_CM_RISK,	/* a CM message may have gone out while down */
	RDLM_DEV_CM_WARNED,	/* the rxe QP1 message was printed */
};

/*
 * @flags: RDLM_DEV_* bits, set from the netdev notifier and the IB event
 * handler (found under RCU through the client data), read anywhere.
 * The device is freed after a grace period.
 */
struct rdlm_device {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct list_head entry;
	unsigned long flags;
	unsigned long link_up_at;	/* jiffies of the last link up */
	u32 link_downs;
	struct ib_event_handler event_handler;
	struct work_struct link_work;
};

/* ---- lockspaces ---- */

/* What a member told us about its table (valid when @ready). */
struct rdlm_remote {
	bool ready;
	u32 ls_index;
	u32 chunk_slots;
	u32 nr_chunks;
	u32 nr_records;		/* its records we may READ, 0: none */
	DECLARE_BITMAP(have, RDLM_MAX_CHUNKS);	/* chunks received */
	u64 addr[RDLM_MAX_CHUNKS];
	u32 rkey[RDLM_MAX_CHUNKS];
	u64 mbox_addr;
	u32 mbox_rkey;
};

/*
 * Incarnations (under ls->lock): @inc is what the member presented last,
 * @admitted the one we took tables from and gave ours to, @gone the one
 * fencing declared departed (never admitted again). @asked: the passive
 * connection on which @inc asked for our table (we export only then, so
 * its incarnation is known before any verb of it can reach our table).
 */
struct rdlm_member {
	struct rdlm_node_cfg cfg;
	struct rdlm_conn *conn;		/* our active connection to it */
	struct rdlm_remote remote;	/* under ls->lock */
	u32 gen;			/* bumped when @remote is forgotten */
	bool fenced;			/* rdlm_fabric_ls_fence() */
	u64 inc;
	u64 admitted;
	u64 gone;
	u64 refused;			/* incarnation whose config we refused */
	struct rdlm_conn *asked;	/* compared only, never dereferenced */
	atomic_t inflight;		/* our verbs to it, not completed */
	/* self-test receive accounting (no user attached) */
	u32 rx_imm;
	u32 rx_send;
	u32 rx_bad;
};

enum {
	RDLM_LS_CLAIMED,	/* received traffic goes to the self-test */
	RDLM_LS_USER_POSTED,	/* the lock manager posted: no claim */
};

struct rdlm_fabric_ls {
	struct kref ref;
	struct list_head entry;		/* rdlm_fabric.lockspaces */
	char name[RDLM_LS_NAME_MAX];
	u32 lsid;
	u32 index;			/* slot in rdlm_fabric.ls_index */
	u32 local;
	u8 atomic_mode;
	u64 incarnation;		/* drawn at creation, never 0 */
	u32 lease_us;			/* agreed with every member */
	u32 lvb_len;
	char engine[RDLM_ENGINE_NAME_MAX];
	bool dead;			/* posts refused (quiesce started) */
	bool quiesced;			/* no callback runs any more */
	unsigned long flags;		/* RDLM_LS_* bits */
	u32 nr_slots;
	u32 nr_mbox;
	u32 nr_pages;
	struct page **pages;		/* the lock table, then the records */
	u32 nr_records;
	u32 nr_record_pages;		/* the last of @pages */
	u32 nr_mbox_pages;
	struct page **mbox_pages;	/* the receive area */
	spinlock_t lock;		/* remote infos, CPU atomics, stats */
	const struct rdlm_fabric_ls_ops *ops;
	void *priv;
	atomic_t inflight;		/* posted, not completed */
	atomic_t inflight_self;		/* ... of them to this node */
	atomic64_t local_atomics;	/* applied here without a verb */
	atomic64_t local_msgs;		/* delivered here without a verb */
	struct list_head local_ops;	/* verbs to this node the CPU runs */
	struct work_struct local_work;	/* runs them */
	wait_queue_head_t wait;
	u32 nr_members;
	struct rdlm_member members[];
};

/* ---- connections ---- */

enum rdlm_conn_state {
	RDLM_CONN_IDLE = 0,	/* no resources, maybe a reconnect pending */
	RDLM_CONN_CONNECTING,
	RDLM_CONN_LIVE,
	RDLM_CONN_ERROR,	/* teardown queued */
};

/* Bits of &rdlm_conn.flags. */
enum {
	RDLM_CONN_F_ESTABLISHED,	/* &rdlm_conn.cm_id reached ESTABLISHED */
	RDLM_CONN_F_QP_USED,		/* sends may be posted: drain the QP */
	RDLM_CONN_F_DEAD,		/* unlisted, being freed: works return */
};

struct rdlm_conn_stats {
	atomic64_t verbs[RDLM_VERB_NR];
	atomic64_t errors;		/* completion errors */
	atomic64_t proto;		/* bad messages */
	atomic64_t msgs_in;
	atomic64_t msgs_out;
	atomic64_t lat[RDLM_VERB_NR][RDLM_LAT_BUCKETS];
};

struct rdlm_rxbuf {
	struct ib_cqe cqe;
	struct rdlm_conn *conn;
	u64 dma;
	u8 data[RDLM_MSG_MAX] ____cacheline_aligned;
};

/* An MR over part of a table or mailbox, for one passive connection. */
struct rdlm_mrchunk {
	struct ib_mr *mr;
	struct sg_table sgt;
	int nents;
};

struct rdlm_export {
	struct list_head entry;
	struct rdlm_fabric_ls *ls;
	u32 chunk_slots;
	u32 nr_chunks;
	struct rdlm_mrchunk *chunks;
	struct rdlm_mrchunk mbox;
	atomic_t regs;		/* REG_MR work requests not completed */
	bool withdrawn;		/* WITHDRAW sent: the lockspace is going */
	bool acked;		/* WITHDRAWN came: the MRs may go */
};

struct rdlm_conn {
	bool passive;
	u32 node;
	u32 local;			/* our node id, the src of our messages */
	struct sockaddr_storage addr;	/* peer (active) */
	struct sockaddr_storage src;	/* local address (active) */
	struct rdma_cm_id *cm_id;	/* parked: kept while the link is down */
	struct rdlm_device *dev;	/* of the QP */
	struct rdlm_device *id_dev;	/* of @cm_id, once resolved */
	unsigned long flags;		/* RDLM_CONN_F_* */
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct rdlm_rxbuf *rx;
	u32 nr_rx;

	spinlock_t lock;		/* below, BH */
	enum rdlm_conn_state state;
	int credits;
	int to_return;
	int sq_free;
	struct list_head backlog;
	u32 backlog_len;
	struct list_head exports;	/* passive; also under fabric mutex */

	struct xarray pending;		/* CPU-atomic ops by tag */
	u32 next_tag;

	struct list_head entry;		/* rdlm_fabric.conns */
	unsigned int users;		/* active: lockspaces */
	struct delayed_work connect_work;
	struct delayed_work err_work;
	struct work_struct up_work;
	struct delayed_work hb_work;	/* watch_wq: never blocked */
	struct delayed_work timeout_work;	/* connect timeout, watch_wq */
	struct delayed_work unexport_work;	/* frees acked exports */
	struct work_struct free_work;	/* a passive conn that failed */
	unsigned long backoff_ms;
	unsigned long connect_start;	/* jiffies */
	unsigned long last_alive;	/* jiffies of the last completion */
	unsigned long last_msg_out;	/* jiffies of the last SEND/IMM */
	unsigned long reask_at;		/* active: re-ask missing tables then */
	u32 reconnects;
	u32 rejects;
	int last_event;			/* last failing CM event, -1 none */
	int last_status;		/* its status, or a setup errno */
	struct rdlm_conn_stats stats;
};

/* ---- work requests (fabric_wr.c) ---- */

enum rdlm_op_type {
	RDLM_OP_VERB,		/* one-sided FA, CAS, READ, WRITE_IMM */
	RDLM_OP_MSG,		/* SEND of a wire message */
	RDLM_OP_AREQ,		/* SEND of a CPU-atomic request */
	RDLM_OP_REG,		/* REG_MR of an exported table chunk */
};

/**
 * struct rdlm_op - one work request and what to do when it completes
 * @cqe: completion dispatch
 * @entry: link in the connection's backlog
 * @conn: connection it is posted on
 * @ls: lockspace whose user posted it (NULL for fabric messages)
 * @m: the member it targets, counted in its inflight
 * @exp: export being registered (REG)
 * @done: user's completion callback
 * @ctx: its argument
 * @res: the completion handed to @done
 * @type: &enum rdlm_op_type
 * @credit: spends a send credit
 * @refs: CPU-atomic requests: send completion + result
 * @tag: CPU-atomic request tag
 * @raddr: remote address (one-sided verbs)
 * @rkey: remote key
 * @imm: immediate data (WRITE_IMM), big endian on the wire
 * @arg0: FA addend, CAS compare value
 * @arg1: CAS swap value
 * @mr: MR to register (REG)
 * @access: its access flags
 * @len: bytes of @buf in use
 * @dir: DMA direction of @buf
 * @dma: DMA address of @buf while posted
 * @t0: post time, for the latency histogram
 * @gen: the member's &rdlm_member.gen when posted (one-sided verbs)
 * @to_self: posted to this node, counted in &rdlm_fabric_ls.inflight_self
 * @record: a record READ: @buf is its result
 * @buf: atomic/READ result, WRITE_IMM payload or message
 */
struct rdlm_op {
	struct ib_cqe cqe;
	struct list_head entry;
	struct rdlm_conn *conn;
	struct rdlm_fabric_ls *ls;
	struct rdlm_member *m;
	struct rdlm_export *exp;
	rdlm_fabric_done_t done;
	void *ctx;
	struct rdlm_cqe res;
	u8 type;
	bool credit;
	atomic_t refs;
	u32 tag;
	u64 raddr;
	u32 rkey;
	u32 imm;
	u64 arg0;
	u64 arg1;
	struct ib_mr *mr;
	int access;
	u32 len;
	enum dma_data_direction dir;
	u64 dma;
	ktime_t t0;
	u32 gen;
	bool to_self;
	bool record;
	u8 buf[RDLM_MSG_MAX] ____cacheline_aligned;
};

/* a record READ lands in @buf; records never cross a page */
static_assert(RDLM_MSG_MAX >= RDLM_RECORD_SIZE);
static_assert(!(PAGE_SIZE % RDLM_RECORD_SIZE));

/* ---- the fabric: one per module, owns everything above ---- */

/*
 * @mutex serialises all control work (lockspace create and destroy,
 * connection setup and teardown, device add and remove); it is never taken
 * by the CM handler or in completion context, so teardown may call
 * rdma_destroy_id() under it.
 * @wq is ordered: a connection's connect, error and up works never race.
 * @watch_wq runs the heartbeat and connect-timeout works, which must not
 * wait behind @wq; WQ_MEM_RECLAIM like @wq, so that a work of @wq may
 * cancel them synchronously (rdlm_conn_free()).
 * @conns: changed under @mutex and @conn_lock, except that the CM handler
 * adds accepted connections under @conn_lock only (it cannot take the
 * mutex). So a walker holds @conn_lock, or @mutex and walks with RCU list
 * primitives (entries may appear, none goes away): rdlm_for_each_conn().
 * @lockspaces and @ls_index: RCU readers, changed under @mutex.
 * @devices, @listener, @listen_port: under @mutex.
 */
struct rdlm_fabric {
	struct mutex mutex;		/* control work */
	struct workqueue_struct *wq;
	struct workqueue_struct *watch_wq;
	spinlock_t conn_lock;		/* @conns, with @mutex */
	struct list_head conns;
	struct list_head lockspaces;
	struct rdlm_fabric_ls __rcu *ls_index[RDLM_MAX_LOCKSPACES];
	struct list_head devices;
	struct rdma_cm_id *listener;
	u16 listen_port;
	atomic64_t rejected;		/* connection requests refused */
};

/* fabric.c */
extern struct rdlm_fabric rdlm_fabric;
extern struct ib_client rdlm_ib_client;
extern unsigned int rdlm_heartbeat_ms;
extern unsigned int rdlm_heartbeat_miss;
extern unsigned int rdlm_connect_timeout_ms;
extern unsigned int rdlm_ack_timeout;

/* see struct rdlm_fabric */
#define rdlm_for_each_conn(conn) \
	list_for_each_entry_rcu(conn, &rdlm_fabric.conns, entry, \
				lockdep_is_held(&rdlm_fabric.mutex))

struct rdlm_fabric_ls *rdlm_fabric_ls_by_lsid(u32 lsid);
struct rdlm_fabric_ls *rdlm_fabric_ls_by_index(u32 index);
struct rdlm_member *rdlm_fabric_ls_member(struct rdlm_fabric_ls *ls, u32 node);
bool rdlm_fabric_ls_admits(struct rdlm_fabric_ls *ls, u32 node);
u64 *rdlm_fabric_ls_word_ptr(struct rdlm_fabric_ls *ls, u32 slot);
struct rdlm_mbox_entry *rdlm_fabric_ls_mbox_ptr(struct rdlm_fabric_ls *ls, u32 slot);
int rdlm_fabric_ls_post(struct rdlm_fabric_ls *ls, const struct rdlm_verb *v,
			rdlm_fabric_done_t done, void *ctx);
int rdlm_fabric_ls_claim(struct rdlm_fabric_ls *ls);
void rdlm_fabric_ls_deliver(struct rdlm_fabric_ls *ls, const struct rdlm_rx *rx);
void rdlm_fabric_ls_peer_event(struct rdlm_fabric_ls *ls, u32 node, bool up);
void rdlm_fabric_ls_self_idle(struct rdlm_fabric_ls *ls);
void rdlm_fabric_ls_self_down(struct rdlm_fabric_ls *ls);
bool rdlm_node_allowed(u32 node, const struct sockaddr *addr);
void rdlm_kick_active(u32 node);
bool rdlm_dev_link_down(struct rdlm_device *dev);
void rdlm_dev_cm_risk(struct rdlm_device *dev, const char *why, u32 node);

/* fabric_wr.c */
struct rdlm_op *rdlm_op_alloc(struct rdlm_conn *conn, u8 type);
void rdlm_op_put(struct rdlm_op *op);
void rdlm_op_complete(struct rdlm_op *op, int status, u64 value);
int rdlm_op_submit(struct rdlm_conn *conn, struct rdlm_op *op);
void rdlm_fail_list(struct list_head *list, int status);
struct rdlm_op *rdlm_msg_alloc(struct rdlm_conn *conn, u8 type, u16 len,
			       u32 src, u32 lsid);
int rdlm_msg_send(struct rdlm_op *op);
u32 rdlm_local_node(void);
int rdlm_post_recv(struct rdlm_conn *conn, struct rdlm_rxbuf *rxb);
void rdlm_proto_error(struct rdlm_conn *conn, const char *why);
int rdlm_conn_post(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
		   const struct rdlm_verb *v, rdlm_fabric_done_t done,
		   void *ctx);
int rdlm_op_cache_init(void);
void rdlm_op_cache_exit(void);

/* fabric_conn.c */
struct rdlm_conn *rdlm_conn_alloc(bool passive, u32 node, u32 local);
void rdlm_conn_free(struct rdlm_conn *conn);
void rdlm_conn_teardown(struct rdlm_conn *conn);
void rdlm_conn_unlist(struct rdlm_conn *conn, struct list_head *dead);
void rdlm_conn_error(struct rdlm_conn *conn);
void rdlm_conn_reset_node(u32 node);
void rdlm_conn_link_event(struct rdlm_conn *conn, bool down);
int rdlm_conn_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
const char *rdlm_conn_state_name(enum rdlm_conn_state state);

/* fabric_export.c */
int rdlm_conn_export(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls);
void rdlm_conn_unexport(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls);
void rdlm_conn_request_tables(struct rdlm_conn *conn,
			      struct rdlm_fabric_ls *ls);
struct rdlm_export *rdlm_conn_find_export(struct rdlm_conn *conn,
					  struct rdlm_fabric_ls *ls);
void rdlm_export_free(struct rdlm_conn *conn, struct rdlm_export *exp);
void rdlm_conn_withdrawn(struct rdlm_conn *conn, u32 lsid);
void rdlm_conn_unexport_work(struct work_struct *work);

/* fabric_selftest.c */
void rdlm_selftest_rx(struct rdlm_fabric_ls *ls, const struct rdlm_rx *rx);
void rdlm_selftest_init(void);

#endif /* RDLM_FABRIC_PRIV_H */
