// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm fabric: connections, work requests, completions and messages.
 *
 * See fabric_priv.h for the connection model. The CM handler only builds
 * the QP and drives the handshake; anything that may destroy a cm_id runs
 * from a work item under rdlm_fabric_mutex (teardown), so no handler ever
 * destroys its own id. Completions run in softirq (IB_POLL_SOFTIRQ) and are
 * dispatched by their struct ib_cqe.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "fabric_priv.h"

#define RDLM_CM_TIMEOUT_MS	2000
#define RDLM_BACKOFF_MIN_MS	100
#define RDLM_BACKOFF_MAX_MS	2000	/* keeps reconnects within 5 s */
#define RDLM_PARK_POLL_MS	500	/* parked cm_id: look at the link */
#define RDLM_RD_ATOM		16	/* outstanding READs/atomics we ask for */

/* Private data of a connection request. */
struct rdlm_cm_priv {
	__le32 magic;
	u8 version;
	u8 rsvd[3];
	__le32 nodeid;
	__le32 rsvd2;
};

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
 * @buf: atomic/READ result, WRITE_IMM payload or message
 */
struct rdlm_op {
	struct ib_cqe cqe;
	struct list_head entry;
	struct rdlm_conn *conn;
	struct rdlm_fabric_ls *ls;
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
	u8 buf[RDLM_MSG_MAX] ____cacheline_aligned;
};

static struct kmem_cache *rdlm_op_cache;

static const char *const rdlm_state_names[] = {
	[RDLM_CONN_IDLE]	= "idle",
	[RDLM_CONN_CONNECTING]	= "connecting",
	[RDLM_CONN_LIVE]	= "live",
	[RDLM_CONN_ERROR]	= "error",
};

/**
 * rdlm_conn_state_name() - printable connection state
 * @state: &enum rdlm_conn_state
 *
 * Return: a static string.
 */
const char *rdlm_conn_state_name(enum rdlm_conn_state state)
{
	return state < ARRAY_SIZE(rdlm_state_names) ? rdlm_state_names[state] :
						      "?";
}

/* ---- ops ------------------------------------------------------------ */

static struct rdlm_op *rdlm_op_alloc(struct rdlm_conn *conn, u8 type)
{
	struct rdlm_op *op;

	op = kmem_cache_zalloc(rdlm_op_cache, GFP_ATOMIC);
	if (!op)
		return NULL;
	op->conn = conn;
	op->type = type;
	atomic_set(&op->refs, 1);
	op->res.kind = RDLM_VERB_NR;
	return op;
}

static void rdlm_op_put(struct rdlm_op *op)
{
	if (atomic_dec_and_test(&op->refs))
		kmem_cache_free(rdlm_op_cache, op);
}

static void rdlm_lat_account(struct rdlm_conn *conn, u8 kind, ktime_t t0)
{
	s64 us = ktime_us_delta(ktime_get(), t0);
	int b = us > 0 ? fls64(us) : 0;

	if (kind >= RDLM_VERB_NR)
		return;
	atomic64_inc(&conn->stats.lat[kind][min(b, RDLM_LAT_BUCKETS - 1)]);
}

/* Hand the result to the user, exactly once per op. */
static void rdlm_op_complete(struct rdlm_op *op, int status, u64 value)
{
	struct rdlm_fabric_ls *ls = op->ls;

	op->res.status = status;
	op->res.value = value;
	if (!status)
		rdlm_lat_account(op->conn, op->res.kind, op->t0);
	/* rdlm_fabric_ls_quiesce() waits for this section to end */
	rcu_read_lock();
	if (op->done)
		op->done(op->ctx, &op->res);
	if (ls && atomic_dec_and_test(&ls->inflight))
		wake_up(&ls->wait);
	rcu_read_unlock();
}

static void rdlm_fail_list(struct list_head *list, int status)
{
	struct rdlm_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, list, entry) {
		list_del(&op->entry);
		if (op->type == RDLM_OP_REG && op->exp &&
		    atomic_dec_and_test(&op->exp->regs))
			wake_up_all(&op->exp->ls->wait);
		rdlm_op_complete(op, status, 0);
		if (op->type == RDLM_OP_AREQ)
			rdlm_op_put(op);	/* no result will come */
		rdlm_op_put(op);
	}
}

static void rdlm_op_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdlm_export_free(struct rdlm_conn *conn, struct rdlm_export *exp);

static int rdlm_op_post_locked(struct rdlm_conn *conn, struct rdlm_op *op)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	struct ib_sge sge = {};
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr rwr = {};
	struct ib_reg_wr reg = {};
	struct ib_send_wr *wr;
	int ret;

	if (op->type == RDLM_OP_MSG || op->type == RDLM_OP_AREQ) {
		struct rdlm_wire_hdr *hdr = (struct rdlm_wire_hdr *)op->buf;

		if (conn->passive) {
			hdr->credits = cpu_to_le16(conn->to_return);
			conn->to_return = 0;
		}
	}
	if (op->type == RDLM_OP_AREQ) {
		struct rdlm_wire_areq *req = (struct rdlm_wire_areq *)op->buf;

		ret = xa_alloc_cyclic_bh(&conn->pending, &op->tag, op,
					 xa_limit_32b, &conn->next_tag,
					 GFP_ATOMIC);
		if (ret < 0)
			return ret;
		req->tag = cpu_to_le64(op->tag);
	}

	if (op->type != RDLM_OP_REG) {
		op->dma = ib_dma_map_single(ibdev, op->buf, op->len, op->dir);
		if (ib_dma_mapping_error(ibdev, op->dma)) {
			ret = -ENOMEM;
			goto out_tag;
		}
		sge.addr = op->dma;
		sge.length = op->len;
		sge.lkey = conn->dev->pd->local_dma_lkey;
	}

	switch (op->type) {
	case RDLM_OP_VERB:
		if (op->res.kind == RDLM_VERB_FA || op->res.kind == RDLM_VERB_CAS) {
			awr.wr.opcode = op->res.kind == RDLM_VERB_FA ?
					IB_WR_ATOMIC_FETCH_AND_ADD :
					IB_WR_ATOMIC_CMP_AND_SWP;
			awr.remote_addr = op->raddr;
			awr.rkey = op->rkey;
			awr.compare_add = op->arg0;
			awr.swap = op->arg1;
			wr = &awr.wr;
		} else {
			rwr.wr.opcode = op->res.kind == RDLM_VERB_READ ?
					IB_WR_RDMA_READ :
					IB_WR_RDMA_WRITE_WITH_IMM;
			rwr.wr.ex.imm_data = cpu_to_be32(op->imm);
			rwr.remote_addr = op->raddr;
			rwr.rkey = op->rkey;
			wr = &rwr.wr;
		}
		break;
	case RDLM_OP_REG:
		reg.wr.opcode = IB_WR_REG_MR;
		reg.mr = op->mr;
		reg.key = op->mr->rkey;
		reg.access = op->access;
		wr = &reg.wr;
		break;
	default:
		rwr.wr.opcode = IB_WR_SEND;
		wr = &rwr.wr;
		break;
	}
	op->cqe.done = rdlm_op_done;
	wr->wr_cqe = &op->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	if (op->type != RDLM_OP_REG) {
		wr->sg_list = &sge;
		wr->num_sge = 1;
	}
	op->t0 = ktime_get();
	ret = ib_post_send(conn->qp, wr, NULL);
	if (ret)
		goto out_unmap;
	if (op->res.kind < RDLM_VERB_NR)
		atomic64_inc(&conn->stats.verbs[op->res.kind]);
	if (op->type == RDLM_OP_MSG || op->type == RDLM_OP_AREQ)
		atomic64_inc(&conn->stats.msgs_out);
	if (op->credit)
		WRITE_ONCE(conn->last_msg_out, jiffies);
	return 0;

out_unmap:
	if (op->type != RDLM_OP_REG)
		ib_dma_unmap_single(ibdev, op->dma, op->len, op->dir);
out_tag:
	if (op->type == RDLM_OP_AREQ)
		xa_erase_bh(&conn->pending, op->tag);
	return ret;
}

/* Post what the credits and the send queue allow; failures go to @failed. */
static void rdlm_conn_kick_locked(struct rdlm_conn *conn,
				  struct list_head *failed)
{
	struct rdlm_op *op;

	while (!list_empty(&conn->backlog) && conn->state == RDLM_CONN_LIVE) {
		op = list_first_entry(&conn->backlog, struct rdlm_op, entry);
		if (!conn->sq_free || (op->credit && !conn->credits))
			break;
		/*
		 * rxe's retransmission restarts at the oldest unacknowledged
		 * work request and executes a completed-but-unreaped REG_MR
		 * after it again, which fails ("not free") and kills the QP.
		 * So a REG_MR goes out only on an empty send queue.
		 */
		if (op->type == RDLM_OP_REG && conn->sq_free != RDLM_SQ_DEPTH)
			break;
		list_del(&op->entry);
		conn->backlog_len--;
		conn->sq_free--;
		if (op->credit)
			conn->credits--;
		if (rdlm_op_post_locked(conn, op)) {
			conn->sq_free++;
			if (op->credit)
				conn->credits++;
			list_add_tail(&op->entry, failed);
			/* a QP that refuses work requests is broken */
			if (conn->state == RDLM_CONN_LIVE) {
				conn->state = RDLM_CONN_ERROR;
				queue_delayed_work(rdlm_wq, &conn->err_work, 0);
			}
		}
	}
}

static void rdlm_conn_kick(struct rdlm_conn *conn)
{
	LIST_HEAD(failed);

	spin_lock_bh(&conn->lock);
	rdlm_conn_kick_locked(conn, &failed);
	spin_unlock_bh(&conn->lock);
	rdlm_fail_list(&failed, -EIO);
}

/* Queue @op; on a connection that is not live it is not taken. */
static int rdlm_op_submit(struct rdlm_conn *conn, struct rdlm_op *op)
{
	LIST_HEAD(failed);

	spin_lock_bh(&conn->lock);
	if (conn->state != RDLM_CONN_LIVE) {
		spin_unlock_bh(&conn->lock);
		return -ENOTCONN;
	}
	list_add_tail(&op->entry, &conn->backlog);
	conn->backlog_len++;
	rdlm_conn_kick_locked(conn, &failed);
	spin_unlock_bh(&conn->lock);
	rdlm_fail_list(&failed, -EIO);
	return 0;
}

static void rdlm_wire_init(struct rdlm_wire_hdr *hdr, u8 type, u16 len,
			   u32 src, u32 lsid)
{
	hdr->magic = cpu_to_le32(RDLM_WIRE_MAGIC);
	hdr->version = RDLM_WIRE_VERSION;
	hdr->type = type;
	hdr->len = cpu_to_le16(len);
	hdr->src = cpu_to_le32(src);
	hdr->lsid = cpu_to_le32(lsid);
}

/* Allocate a fabric message op with an initialised header. */
static struct rdlm_op *rdlm_msg_alloc(struct rdlm_conn *conn, u8 type,
				      u16 len, u32 src, u32 lsid)
{
	struct rdlm_op *op = rdlm_op_alloc(conn, RDLM_OP_MSG);

	if (!op)
		return NULL;
	op->len = len;
	op->dir = DMA_TO_DEVICE;
	op->credit = !conn->passive;
	rdlm_wire_init((struct rdlm_wire_hdr *)op->buf, type, len, src, lsid);
	return op;
}

static int rdlm_msg_send(struct rdlm_op *op)
{
	int ret = rdlm_op_submit(op->conn, op);

	if (ret)
		rdlm_op_put(op);
	return ret;
}

/* The local node id, as every lockspace knows it. */
static u32 rdlm_local_node(void)
{
	struct rdlm_fabric_ls *ls;
	u32 node = 0;

	rcu_read_lock();
	ls = list_first_or_null_rcu(&rdlm_ls_list, struct rdlm_fabric_ls, entry);
	if (ls)
		node = ls->local;
	rcu_read_unlock();
	return node;
}

/**
 * rdlm_conn_post() - map one engine verb onto a connection
 * @conn: active connection to the verb's target node
 * @ls: lockspace the verb belongs to
 * @v: the verb
 * @done: completion callback, called once unless an error is returned
 * @ctx: its argument
 *
 * Never sleeps. Context: process or softirq, not hard irq.
 *
 * Return: 0, -ENOTCONN when the target is not connected or its table not
 * yet known, -EINVAL for a slot out of range, -ENOMEM.
 */
int rdlm_conn_post(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
		   const struct rdlm_verb *v, rdlm_fabric_done_t done,
		   void *ctx)
{
	struct rdlm_member *m = rdlm_ls_member(ls, v->node);
	struct rdlm_remote *r = &m->remote;
	bool cpu = ls->atomic_mode == RDLM_ATOMIC_CPU;
	u8 type = RDLM_OP_VERB;
	struct rdlm_op *op;
	u32 chunk;
	int ret;

	switch (v->kind) {
	case RDLM_VERB_FA:
	case RDLM_VERB_CAS:
	case RDLM_VERB_READ:
		if (v->slot >= ls->nr_slots)
			return -EINVAL;
		if (cpu)
			type = RDLM_OP_AREQ;
		break;
	case RDLM_VERB_WRITE_IMM:
		if (v->slot >= ls->nr_mbox)
			return -EINVAL;
		break;
	case RDLM_VERB_SEND:
		type = RDLM_OP_MSG;
		break;
	default:
		return -EINVAL;
	}
	op = rdlm_op_alloc(conn, type);
	if (!op)
		return -ENOMEM;
	op->ls = ls;
	op->done = done;
	op->ctx = ctx;
	op->res.req = v->req;
	op->res.cookie = v->cookie;
	op->res.kind = v->kind;
	op->arg0 = v->arg0;
	op->arg1 = v->arg1;

	spin_lock_bh(&ls->lock);
	if (!r->ready) {
		spin_unlock_bh(&ls->lock);
		rdlm_op_put(op);
		return -ENOTCONN;
	}
	if (type == RDLM_OP_VERB && v->kind == RDLM_VERB_WRITE_IMM) {
		struct rdlm_mbox_entry *e = (struct rdlm_mbox_entry *)op->buf;

		e->value = cpu_to_le64(v->arg0);
		e->imm = cpu_to_le32(v->imm);
		e->src = cpu_to_le32(ls->local);
		op->raddr = r->mbox_addr + (u64)v->slot * sizeof(*e);
		op->rkey = r->mbox_rkey;
		op->imm = r->ls_index << 24 | v->slot;
		op->len = sizeof(*e);
		op->dir = DMA_TO_DEVICE;
		op->credit = true;
	} else if (type == RDLM_OP_VERB) {
		chunk = v->slot / r->chunk_slots;
		op->raddr = r->addr[chunk] +
			    (u64)(v->slot % r->chunk_slots) * sizeof(u64);
		op->rkey = r->rkey[chunk];
		op->len = sizeof(u64);
		op->dir = DMA_FROM_DEVICE;
	}
	spin_unlock_bh(&ls->lock);

	if (type == RDLM_OP_AREQ) {
		struct rdlm_wire_areq *req = (struct rdlm_wire_areq *)op->buf;

		rdlm_wire_init(&req->hdr, RDLM_W_AREQ, sizeof(*req), ls->local,
			       ls->lsid);
		req->kind = v->kind;
		req->slot = cpu_to_le32(v->slot);
		req->arg0 = cpu_to_le64(v->arg0);
		req->arg1 = cpu_to_le64(v->arg1);
		op->len = sizeof(*req);
		op->dir = DMA_TO_DEVICE;
		op->credit = true;
		atomic_set(&op->refs, 2);	/* send completion + result */
	} else if (type == RDLM_OP_MSG) {
		struct rdlm_wire_engine *msg = (struct rdlm_wire_engine *)op->buf;

		rdlm_wire_init(&msg->hdr, RDLM_W_ENGINE, sizeof(*msg),
			       ls->local, ls->lsid);
		msg->type = cpu_to_le16(v->msg.type);
		msg->mode = v->msg.mode;
		msg->flags = v->msg.flags;
		msg->src = cpu_to_le32(v->msg.src);
		msg->slot = cpu_to_le32(v->msg.slot);
		msg->reqid = cpu_to_le64(v->msg.reqid);
		msg->token = cpu_to_le64(v->msg.token);
		msg->arg = cpu_to_le64(v->msg.arg);
		op->len = sizeof(*msg);
		op->dir = DMA_TO_DEVICE;
		op->credit = true;
	}

	atomic_inc(&ls->inflight);
	ret = rdlm_op_submit(conn, op);
	if (ret) {
		atomic_dec(&ls->inflight);
		atomic_set(&op->refs, 1);
		rdlm_op_put(op);
	}
	return ret;
}

static void rdlm_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlm_op *op = container_of(wc->wr_cqe, struct rdlm_op, cqe);
	struct rdlm_conn *conn = op->conn;
	int status = 0;

	if (op->type != RDLM_OP_REG)
		ib_dma_unmap_single(conn->dev->ibdev, op->dma, op->len,
				    op->dir);
	if (wc->status != IB_WC_SUCCESS) {
		status = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
		if (status == -EIO) {
			atomic64_inc(&conn->stats.errors);
			pr_info_ratelimited("node %u: %s failed: %s\n",
					    conn->node,
					    conn->passive ? "reply" : "verb",
					    ib_wc_status_msg(wc->status));
			rdlm_conn_error(conn);
		}
	} else {
		/* RC: a successful send completion was acknowledged */
		WRITE_ONCE(conn->last_alive, jiffies);
	}

	spin_lock_bh(&conn->lock);
	conn->sq_free++;
	spin_unlock_bh(&conn->lock);

	switch (op->type) {
	case RDLM_OP_VERB:
		rdlm_op_complete(op, status, status ? 0 : *(u64 *)op->buf);
		rdlm_op_put(op);
		break;
	case RDLM_OP_AREQ:
		/* the result completes it, or teardown does */
		if (status && xa_erase_bh(&conn->pending, op->tag) == op) {
			rdlm_op_complete(op, status, 0);
			rdlm_op_put(op);
		}
		rdlm_op_put(op);
		break;
	case RDLM_OP_REG:
		if (atomic_dec_and_test(&op->exp->regs))
			wake_up_all(&op->exp->ls->wait);
		rdlm_op_put(op);
		break;
	default:
		rdlm_op_complete(op, status, 0);
		rdlm_op_put(op);
		break;
	}
	rdlm_conn_kick(conn);
}

/* ---- receiving ------------------------------------------------------ */

static void rdlm_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static int rdlm_post_recv(struct rdlm_conn *conn, struct rdlm_rxbuf *rxb)
{
	struct ib_sge sge = {
		.addr	= rxb->dma,
		.length	= RDLM_MSG_MAX,
		.lkey	= conn->dev->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe	= &rxb->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	rxb->cqe.done = rdlm_recv_done;
	ib_dma_sync_single_for_device(conn->dev->ibdev, rxb->dma,
				      RDLM_MSG_MAX, DMA_FROM_DEVICE);
	return ib_post_recv(conn->qp, &wr, NULL);
}

static void rdlm_proto_error(struct rdlm_conn *conn, const char *why)
{
	atomic64_inc(&conn->stats.proto);
	pr_info_ratelimited("node %u: bad message (%s), reconnecting\n",
			    conn->node, why);
	rdlm_conn_error(conn);
}

static const u16 rdlm_wire_size[RDLM_W_NR] = {
	[RDLM_W_TABLE]		= sizeof(struct rdlm_wire_table),
	[RDLM_W_TABLE_REQ]	= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_WITHDRAW]	= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_ENGINE]		= sizeof(struct rdlm_wire_engine),
	[RDLM_W_AREQ]		= sizeof(struct rdlm_wire_areq),
	[RDLM_W_ARESP]		= sizeof(struct rdlm_wire_aresp),
	[RDLM_W_HEARTBEAT]	= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_CREDIT]		= sizeof(struct rdlm_wire_hdr),
};

/* Which side may receive each type: true = the passive (serving) side. */
static const bool rdlm_wire_to_passive[RDLM_W_NR] = {
	[RDLM_W_TABLE_REQ]	= true,
	[RDLM_W_ENGINE]		= true,
	[RDLM_W_AREQ]		= true,
	[RDLM_W_HEARTBEAT]	= true,
};

/*
 * Can @ibdev execute atomics that a kernel consumer posts? mlx5 refuses
 * them (-EOPNOTSUPP from its post_send), devices without atomics too.
 */
static bool rdlm_kernel_atomics(struct ib_device *ibdev)
{
	return ibdev->attrs.atomic_cap != IB_ATOMIC_NONE &&
	       ibdev->ops.driver_id != RDMA_DRIVER_MLX5;
}

static void rdlm_rx_table(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			  const struct rdlm_wire_table *t)
{
	struct rdlm_member *m = rdlm_ls_member(ls, conn->node);
	u32 nr_chunks = le16_to_cpu(t->nr_chunks);
	u32 chunk = le16_to_cpu(t->chunk);
	u32 cslots = le32_to_cpu(t->chunk_slots);
	u32 index = le32_to_cpu(t->ls_index);
	struct rdlm_remote *r;
	bool up = false;

	if (le32_to_cpu(t->nr_slots) != ls->nr_slots ||
	    le32_to_cpu(t->nr_mbox) != ls->nr_mbox ||
	    t->atomic_mode != ls->atomic_mode) {
		pr_info_ratelimited("lockspace %s: node %u has another table size or atomic mode\n",
				    ls->name, conn->node);
		return;
	}
	if (ls->atomic_mode == RDLM_ATOMIC_NIC &&
	    !rdlm_kernel_atomics(conn->dev->ibdev)) {
		pr_info_ratelimited("lockspace %s: %s cannot post atomics from the kernel, use atomic_mode=cpu\n",
				    ls->name, dev_name(&conn->dev->ibdev->dev));
		return;
	}
	if (index >= RDLM_MAX_LOCKSPACES || nr_chunks > RDLM_MAX_CHUNKS ||
	    (ls->atomic_mode == RDLM_ATOMIC_NIC &&
	     (!nr_chunks || chunk >= nr_chunks || !cslots ||
	      (u64)cslots * nr_chunks < ls->nr_slots)) ||
	    (ls->atomic_mode == RDLM_ATOMIC_CPU && (nr_chunks || chunk))) {
		rdlm_proto_error(conn, "table description");
		return;
	}
	r = &m->remote;
	spin_lock_bh(&ls->lock);
	if (r->ls_index != index || r->chunk_slots != cslots ||
	    r->nr_chunks != nr_chunks) {
		memset(r, 0, sizeof(*r));
		r->ls_index = index;
		r->chunk_slots = cslots;
		r->nr_chunks = nr_chunks;
	}
	r->mbox_addr = le64_to_cpu(t->mbox_addr);
	r->mbox_rkey = le32_to_cpu(t->mbox_rkey);
	if (nr_chunks) {
		r->addr[chunk] = le64_to_cpu(t->addr);
		r->rkey[chunk] = le32_to_cpu(t->rkey);
		set_bit(chunk, r->have);
	}
	if (!r->ready && bitmap_full(r->have, nr_chunks)) {
		r->ready = true;
		up = true;
	}
	spin_unlock_bh(&ls->lock);
	if (up)
		rdlm_ls_peer_event(ls, conn->node, true);
}

static void rdlm_rx_areq(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			 const struct rdlm_wire_areq *req)
{
	struct rdlm_wire_aresp *resp;
	u32 slot = le32_to_cpu(req->slot);
	struct rdlm_op *op;
	u32 status = 0;
	u64 old = 0;
	u64 *word;

	if (!ls)
		status = ENOENT;
	else if (ls->atomic_mode != RDLM_ATOMIC_CPU || slot >= ls->nr_slots ||
		 (req->kind != RDLM_VERB_FA && req->kind != RDLM_VERB_CAS &&
		  req->kind != RDLM_VERB_READ))
		status = EINVAL;
	if (!status) {
		word = rdlm_ls_word_ptr(ls, slot);
		spin_lock_bh(&ls->lock);
		old = READ_ONCE(*word);
		WRITE_ONCE(*word, rdlm_word_apply(old, req->kind,
						  le64_to_cpu(req->arg0),
						  le64_to_cpu(req->arg1)));
		spin_unlock_bh(&ls->lock);
	}
	op = rdlm_msg_alloc(conn, RDLM_W_ARESP, sizeof(*resp),
			    ls ? ls->local : 0, le32_to_cpu(req->hdr.lsid));
	if (!op) {
		/* the requester would wait forever: make it fail instead */
		rdlm_conn_error(conn);
		return;
	}
	resp = (struct rdlm_wire_aresp *)op->buf;
	resp->status = cpu_to_le32(status);
	resp->tag = req->tag;
	resp->value = cpu_to_le64(old);
	rdlm_msg_send(op);
}

static void rdlm_rx_aresp(struct rdlm_conn *conn,
			  const struct rdlm_wire_aresp *resp)
{
	u64 tag = le64_to_cpu(resp->tag);
	u32 status = le32_to_cpu(resp->status);
	struct rdlm_op *op;

	if (tag > U32_MAX || status > MAX_ERRNO) {
		rdlm_proto_error(conn, "atomic result");
		return;
	}
	op = xa_erase_bh(&conn->pending, tag);
	if (!op) {
		rdlm_proto_error(conn, "unknown atomic tag");
		return;
	}
	rdlm_op_complete(op, -(int)status, le64_to_cpu(resp->value));
	rdlm_op_put(op);
}

static void rdlm_rx_engine(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			   const struct rdlm_wire_engine *msg)
{
	struct rdlm_rx rx = {
		.kind = RDLM_VERB_SEND,
		.src = conn->node,
	};

	rx.msg.type = le16_to_cpu(msg->type);
	rx.msg.mode = msg->mode;
	rx.msg.flags = msg->flags;
	rx.msg.src = le32_to_cpu(msg->src);
	rx.msg.slot = le32_to_cpu(msg->slot);
	rx.msg.reqid = le64_to_cpu(msg->reqid);
	rx.msg.token = le64_to_cpu(msg->token);
	rx.msg.arg = le64_to_cpu(msg->arg);
	rdlm_ls_deliver(ls, &rx);
}

static void rdlm_rx_msg(struct rdlm_conn *conn, const u8 *buf, u32 len)
{
	const struct rdlm_wire_hdr *hdr = (const struct rdlm_wire_hdr *)buf;
	struct rdlm_fabric_ls *ls;
	u16 credits;
	u8 type;

	if (len < sizeof(*hdr) || le32_to_cpu(hdr->magic) != RDLM_WIRE_MAGIC ||
	    hdr->version != RDLM_WIRE_VERSION) {
		rdlm_proto_error(conn, "header");
		return;
	}
	type = hdr->type;
	if (!type || type >= RDLM_W_NR || le16_to_cpu(hdr->len) != len ||
	    rdlm_wire_size[type] != len ||
	    le32_to_cpu(hdr->src) != conn->node ||
	    rdlm_wire_to_passive[type] != conn->passive) {
		rdlm_proto_error(conn, "type or length");
		return;
	}
	credits = le16_to_cpu(hdr->credits);
	if (credits) {
		bool bad;

		spin_lock_bh(&conn->lock);
		bad = conn->passive || conn->credits + credits > RDLM_CREDITS;
		if (!bad)
			conn->credits += credits;
		spin_unlock_bh(&conn->lock);
		if (bad) {
			rdlm_proto_error(conn, "credits");
			return;
		}
		rdlm_conn_kick(conn);
	}

	rcu_read_lock();
	ls = rdlm_ls_by_lsid(le32_to_cpu(hdr->lsid));
	if (ls && !rdlm_ls_member(ls, conn->node))
		ls = NULL;
	switch (type) {
	case RDLM_W_TABLE:
		if (ls)
			rdlm_rx_table(conn, ls, (const void *)buf);
		break;
	case RDLM_W_WITHDRAW:
		if (ls) {
			spin_lock_bh(&ls->lock);
			memset(&rdlm_ls_member(ls, conn->node)->remote, 0,
			       sizeof(struct rdlm_remote));
			spin_unlock_bh(&ls->lock);
			rdlm_ls_peer_event(ls, conn->node, false);
		}
		break;
	case RDLM_W_TABLE_REQ:
		WRITE_ONCE(conn->table_req, true);
		queue_work(rdlm_wq, &conn->up_work);
		break;
	case RDLM_W_ENGINE:
		if (ls)
			rdlm_rx_engine(conn, ls, (const void *)buf);
		break;
	case RDLM_W_AREQ:
		rdlm_rx_areq(conn, ls, (const void *)buf);
		break;
	case RDLM_W_ARESP:
		rdlm_rx_aresp(conn, (const void *)buf);
		break;
	default:	/* HEARTBEAT, CREDIT: the header said it all */
		break;
	}
	rcu_read_unlock();
}

static struct rdlm_export *rdlm_conn_find_export(struct rdlm_conn *conn,
						 struct rdlm_fabric_ls *ls);

/*
 * The mailbox is a streaming DMA mapping (one per passive connection, the
 * peer writes through it): hand @slot to the CPU before reading it (a
 * no-op with rxe, a copy with swiotlb). Never back to the device: the CPU
 * does not write it, and a copy back could overwrite a newer write that
 * landed meanwhile.
 */
static void rdlm_mbox_sync(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			   u32 slot)
{
	size_t off = (size_t)slot * sizeof(struct rdlm_mbox_entry);
	struct ib_device *ibdev = conn->dev->ibdev;
	struct rdlm_export *exp;
	struct scatterlist *sg;
	int i;

	spin_lock(&conn->lock);
	exp = rdlm_conn_find_export(conn, ls);
	for_each_sg(exp ? exp->mbox.sgt.sgl : NULL, sg,
		    exp ? exp->mbox.nents : 0, i) {
		dma_addr_t a = sg_dma_address(sg) + off;
		size_t n = sizeof(struct rdlm_mbox_entry);

		if (off >= sg_dma_len(sg)) {
			off -= sg_dma_len(sg);
			continue;
		}
		ib_dma_sync_single_for_cpu(ibdev, a, n, DMA_BIDIRECTIONAL);
		break;
	}
	spin_unlock(&conn->lock);
}

static void rdlm_rx_imm(struct rdlm_conn *conn, u32 imm)
{
	struct rdlm_mbox_entry *e;
	struct rdlm_fabric_ls *ls;
	struct rdlm_rx rx = {
		.kind = RDLM_VERB_WRITE_IMM,
		.src = conn->node,
		.slot = imm & 0xffffff,
	};

	if (!conn->passive) {
		rdlm_proto_error(conn, "write to a requester");
		return;
	}
	rcu_read_lock();
	ls = rdlm_ls_by_index(imm >> 24);
	if (ls && rdlm_ls_member(ls, conn->node) && rx.slot < ls->nr_mbox) {
		e = rdlm_ls_mbox_ptr(ls, rx.slot);
		rdlm_mbox_sync(conn, ls, rx.slot);
		rx.value = le64_to_cpu(READ_ONCE(e->value));
		rx.imm = le32_to_cpu(READ_ONCE(e->imm));
		rx.src = le32_to_cpu(READ_ONCE(e->src));
		if (rx.src == conn->node)
			rdlm_ls_deliver(ls, &rx);
		else
			atomic64_inc(&conn->stats.proto);
	} else {
		/* a lockspace that just went away: drop it */
		atomic64_inc(&conn->stats.proto);
	}
	rcu_read_unlock();
}

static void rdlm_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdlm_rxbuf *rxb = container_of(wc->wr_cqe, struct rdlm_rxbuf,
					      cqe);
	struct rdlm_conn *conn = rxb->conn;
	u8 buf[RDLM_MSG_MAX];
	bool credit = false;
	u32 len = min_t(u32, wc->byte_len, RDLM_MSG_MAX);

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			atomic64_inc(&conn->stats.errors);
			pr_info_ratelimited("node %u: receive failed: %s\n",
					    conn->node,
					    ib_wc_status_msg(wc->status));
			rdlm_conn_error(conn);
		}
		return;
	}
	ib_dma_sync_single_for_cpu(conn->dev->ibdev, rxb->dma, RDLM_MSG_MAX,
				   DMA_FROM_DEVICE);
	memcpy(buf, rxb->data, len);
	if (rdlm_post_recv(conn, rxb)) {
		rdlm_conn_error(conn);
		return;
	}
	WRITE_ONCE(conn->last_alive, jiffies);
	atomic64_inc(&conn->stats.msgs_in);
	if (conn->passive) {
		spin_lock_bh(&conn->lock);
		credit = ++conn->to_return >= RDLM_CREDIT_BATCH;
		spin_unlock_bh(&conn->lock);
	}

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		rdlm_rx_imm(conn, be32_to_cpu(wc->ex.imm_data));
	else if (wc->byte_len > RDLM_MSG_MAX)
		rdlm_proto_error(conn, "oversized");
	else
		rdlm_rx_msg(conn, buf, len);

	if (credit) {
		struct rdlm_op *op;

		op = rdlm_msg_alloc(conn, RDLM_W_CREDIT,
				    sizeof(struct rdlm_wire_hdr),
				    rdlm_local_node(), 0);
		if (op)
			rdlm_msg_send(op);
	}
}

/* ---- queue pair setup and teardown ---------------------------------- */

/*
 * Drain and free the QP (through @cm_id when it still exists: the QP was
 * created with rdma_create_qp()), then the CQ, receive buffers and MRs.
 */
static void rdlm_conn_free_ib(struct rdlm_conn *conn, struct rdma_cm_id *cm_id)
{
	struct rdlm_export *exp, *tmp;
	u32 i;

	if (conn->qp) {
		/* completions of everything posted arrive during the drain */
		if (conn->qp_used)
			ib_drain_qp(conn->qp);
		if (cm_id && cm_id->qp == conn->qp)
			rdma_destroy_qp(cm_id);
		else
			ib_destroy_qp(conn->qp);
		conn->qp = NULL;
	}
	/* drained: no REG_MR is outstanding, nothing reaches the MRs */
	list_for_each_entry_safe(exp, tmp, &conn->exports, entry)
		rdlm_export_free(conn, exp);
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	for (i = 0; i < conn->nr_rx; i++)
		ib_dma_unmap_single(conn->dev->ibdev, conn->rx[i].dma,
				    RDLM_MSG_MAX, DMA_FROM_DEVICE);
	kfree(conn->rx);
	conn->rx = NULL;
	conn->nr_rx = 0;
	conn->qp_used = false;
	conn->dev = NULL;
}

static int rdlm_conn_create_qp(struct rdlm_conn *conn,
			       struct rdma_cm_id *cm_id)
{
	struct ib_qp_init_attr attr = {};
	struct rdlm_device *dev;
	struct ib_device *ibdev = cm_id->device;
	struct rdlm_rxbuf *rxb;
	u32 i;
	int ret;

	dev = ib_get_client_data(ibdev, &rdlm_ib_client);
	if (!dev)
		return -ENODEV;
	conn->dev = dev;
	conn->cq = ib_alloc_cq(ibdev, conn, RDLM_SQ_DEPTH + RDLM_RQ_DEPTH + 2,
			       0, IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.cap.max_send_wr = RDLM_SQ_DEPTH + 1;	/* + drain */
	attr.cap.max_recv_wr = RDLM_RQ_DEPTH + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.qp_context = conn;
	ret = rdma_create_qp(cm_id, dev->pd, &attr);
	if (ret)
		return ret;
	conn->qp = cm_id->qp;

	conn->rx = kcalloc(RDLM_RQ_DEPTH, sizeof(*conn->rx), GFP_KERNEL);
	if (!conn->rx)
		return -ENOMEM;
	for (i = 0; i < RDLM_RQ_DEPTH; i++) {
		rxb = &conn->rx[i];
		rxb->conn = conn;
		rxb->dma = ib_dma_map_single(ibdev, rxb->data, RDLM_MSG_MAX,
					     DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, rxb->dma))
			return -ENOMEM;
		conn->nr_rx++;
		ret = rdlm_post_recv(conn, rxb);
		if (ret)
			return ret;
	}
	spin_lock_bh(&conn->lock);
	conn->credits = RDLM_CREDITS;
	conn->to_return = 0;
	conn->sq_free = RDLM_SQ_DEPTH;
	spin_unlock_bh(&conn->lock);
	return 0;
}

static void rdlm_conn_forget_remote(struct rdlm_conn *conn)
{
	struct rdlm_fabric_ls *ls;
	struct rdlm_member *m;
	bool was;

	list_for_each_entry(ls, &rdlm_ls_list, entry) {
		m = rdlm_ls_member(ls, conn->node);
		if (!m || m->conn != conn)
			continue;
		spin_lock_bh(&ls->lock);
		was = m->remote.ready;
		memset(&m->remote, 0, sizeof(m->remote));
		spin_unlock_bh(&ls->lock);
		if (was)
			rdlm_ls_peer_event(ls, conn->node, false);
	}
}

/* Fail what waits for a send queue slot, a credit or a CPU-atomic result. */
/* Fail what was queued and never posted (no new work is queued then). */
static void rdlm_conn_fail_backlog(struct rdlm_conn *conn)
{
	LIST_HEAD(failed);

	spin_lock_bh(&conn->lock);
	list_splice_init(&conn->backlog, &failed);
	conn->backlog_len = 0;
	spin_unlock_bh(&conn->lock);
	rdlm_fail_list(&failed, -ECONNRESET);
}

static void rdlm_conn_fail_waiting(struct rdlm_conn *conn)
{
	unsigned long tag;
	struct rdlm_op *op;

	rdlm_conn_fail_backlog(conn);
	xa_for_each(&conn->pending, tag, op) {
		if (xa_erase_bh(&conn->pending, tag) == op) {
			rdlm_op_complete(op, -ECONNRESET, 0);
			rdlm_op_put(op);
		}
	}
}

/* The rdlm device of @cm_id once its address is resolved, or NULL. */
static struct rdlm_device *rdlm_id_dev(struct rdma_cm_id *cm_id)
{
	if (!cm_id || !cm_id->device)
		return NULL;
	return ib_get_client_data(cm_id->device, &rdlm_ib_client);
}

/*
 * Release a connection's QP and fail its work, in the order nvme-rdma
 * uses: disconnect (the DREQ moves the QP to the error state), fail what
 * was queued and never posted, drain the QP so that every posted work
 * request has completed, destroy the QP, then the cm_id (no handler runs
 * afterwards), free the CQ, receive buffers and MRs, and fail what waits
 * for a reply.
 *
 * While the link is down, an established cm_id (and its drained QP) is
 * parked instead of destroyed when @may_park: destroying it sends a DREQ,
 * disconnecting too, and a CM send that fails on a down link breaks rxe's
 * QP1 for good (see rdlm_dev_cm_risk()). An established cm_id sends
 * nothing on its own; a parked one is destroyed once the link is back, and
 * its handler meanwhile only records events. Returns with conn->cm_id set
 * if it was parked.
 */
static void rdlm_conn_stop(struct rdlm_conn *conn, bool may_park)
{
	struct rdma_cm_id *cm_id = conn->cm_id;
	struct rdlm_device *idev = conn->id_dev ?: rdlm_id_dev(cm_id);
	bool down = rdlm_dev_link_down(idev);
	bool established;

	lockdep_assert_held(&rdlm_fabric_mutex);
	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_ERROR;
	established = conn->established;
	spin_unlock_bh(&conn->lock);

	if (cm_id && !established) {
		/*
		 * In a handshake, handlers may still build the QP: the id
		 * goes first (it waits for them). Past the REQ it sends a
		 * REJ.
		 */
		if (down && conn->qp)
			rdlm_dev_cm_risk(idev, "connection attempt abandoned",
					 conn->node);
		rdma_destroy_id(cm_id);
		conn->cm_id = NULL;
		conn->id_dev = NULL;
		cm_id = NULL;
	}
	if (cm_id && !down && conn->dev)
		rdma_disconnect(cm_id);
	/* queued REG_MRs refer to exports, which go with the QP below */
	rdlm_conn_fail_backlog(conn);
	if (cm_id && down && may_park) {
		/*
		 * Parked with its QP: rxe (6.1) keeps references to a QP
		 * that sent while the link was down, and destroying it waits
		 * 50 s for them (then warns). The drain completes what was
		 * posted; the rest goes once the link is back.
		 */
		if (conn->qp && conn->qp_used) {
			ib_drain_qp(conn->qp);
			conn->qp_used = false;
		}
	} else if (conn->dev) {
		rdlm_conn_free_ib(conn, cm_id);
	}
	if (cm_id && down && may_park) {
		/* parked: rdlm_conn_link_event() brings it back here */
	} else if (cm_id) {
		/* established: this sends a DREQ */
		if (down)
			rdlm_dev_cm_risk(idev, "disconnect", conn->node);
		rdma_destroy_id(cm_id);
		conn->cm_id = NULL;
		conn->id_dev = NULL;
		conn->established = false;
	}

	rdlm_conn_fail_waiting(conn);
	if (!conn->passive)
		rdlm_conn_forget_remote(conn);

	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_IDLE;
	spin_unlock_bh(&conn->lock);
}

/**
 * rdlm_conn_teardown() - release a connection's QP and cm_id, fail its work
 * @conn: connection, in any state
 *
 * See rdlm_conn_stop(); the cm_id is always destroyed (device removal,
 * connection no longer used). Context: process, rdlm_fabric_mutex held.
 */
void rdlm_conn_teardown(struct rdlm_conn *conn)
{
	rdlm_conn_stop(conn, false);
}

/**
 * rdlm_conn_unlist() - take a connection off rdlm_conn_list for freeing
 * @conn: connection, torn down
 * @dead: list to put it on; free it with rdlm_conn_free() without the mutex
 *
 * Context: rdlm_fabric_mutex held (so no walker holding only the mutex
 * runs), takes rdlm_conn_list_lock (so no walker holding only that runs).
 */
void rdlm_conn_unlist(struct rdlm_conn *conn, struct list_head *dead)
{
	lockdep_assert_held(&rdlm_fabric_mutex);
	spin_lock(&rdlm_conn_list_lock);
	list_move(&conn->entry, dead);
	spin_unlock(&rdlm_conn_list_lock);
	conn->dead = true;
}

/**
 * rdlm_conn_error() - a connection failed: tear it down from a work item
 * @conn: connection
 *
 * Context: any but hard irq; idempotent.
 */
void rdlm_conn_error(struct rdlm_conn *conn)
{
	spin_lock_bh(&conn->lock);
	if (conn->state == RDLM_CONN_LIVE ||
	    conn->state == RDLM_CONN_CONNECTING) {
		conn->state = RDLM_CONN_ERROR;
		queue_delayed_work(rdlm_wq, &conn->err_work, 0);
	}
	spin_unlock_bh(&conn->lock);
}

static void rdlm_conn_schedule(struct rdlm_conn *conn)
{
	queue_delayed_work(rdlm_wq, &conn->connect_work,
			   msecs_to_jiffies(conn->backoff_ms));
	conn->backoff_ms = clamp(conn->backoff_ms * 2,
				 (unsigned long)RDLM_BACKOFF_MIN_MS,
				 (unsigned long)RDLM_BACKOFF_MAX_MS);
}

/**
 * rdlm_conn_link_event() - the link under @conn went down or came back
 * @conn: connection over the device whose link changed
 * @down: new state
 *
 * Down: the connection fails now (waiters fail, the lock manager hears of
 * it), its cm_id is parked. Up: parked cm_ids go, and active connections
 * try at once. Context: rdlm_fabric_mutex held.
 */
void rdlm_conn_link_event(struct rdlm_conn *conn, bool down)
{
	lockdep_assert_held(&rdlm_fabric_mutex);
	if (conn->dead)
		return;
	if (down) {
		spin_lock_bh(&conn->lock);
		if (conn->state == RDLM_CONN_CONNECTING && conn->qp_used)
			rdlm_dev_cm_risk(conn->id_dev,
					 "link down during a connection handshake",
					 conn->node);
		spin_unlock_bh(&conn->lock);
		rdlm_conn_error(conn);
		return;
	}
	conn->backoff_ms = 0;
	if (conn->cm_id && READ_ONCE(conn->state) == RDLM_CONN_IDLE)
		mod_delayed_work(rdlm_wq, &conn->err_work, 0);
	else if (!conn->passive && conn->users)
		mod_delayed_work(rdlm_wq, &conn->connect_work, 0);
}

static void rdlm_conn_err_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, err_work);
	bool gone = false;

	mutex_lock(&rdlm_fabric_mutex);
	if (conn->dead)
		goto out;
	if (conn->established && READ_ONCE(conn->state) != RDLM_CONN_IDLE)
		conn->reconnects++;	/* an established connection lost */
	rdlm_conn_stop(conn, true);
	if (conn->cm_id) {
		/* parked until the link is back (and polled, to be sure) */
		queue_delayed_work(rdlm_wq, &conn->err_work,
				   msecs_to_jiffies(RDLM_PARK_POLL_MS));
	} else if (conn->passive) {
		spin_lock(&rdlm_conn_list_lock);
		list_del(&conn->entry);
		spin_unlock(&rdlm_conn_list_lock);
		conn->dead = true;
		gone = true;
	} else if (conn->users) {
		rdlm_conn_schedule(conn);
	}
out:
	mutex_unlock(&rdlm_fabric_mutex);
	if (gone) {
		/* same ordered workqueue: none of these runs right now */
		cancel_work_sync(&conn->up_work);
		cancel_delayed_work(&conn->err_work);
		cancel_delayed_work_sync(&conn->hb_work);
		cancel_delayed_work_sync(&conn->timeout_work);
		xa_destroy(&conn->pending);
		kfree(conn);
	}
}

/* A connection attempt that hangs is abandoned (and retried). */
static void rdlm_conn_timeout_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, timeout_work);
	unsigned long limit = msecs_to_jiffies(rdlm_connect_timeout_ms);

	spin_lock_bh(&conn->lock);
	if (conn->state == RDLM_CONN_CONNECTING &&
	    time_after_eq(jiffies, conn->connect_start + limit)) {
		conn->last_event = RDMA_CM_EVENT_CONNECT_ERROR;
		conn->last_status = -ETIMEDOUT;
		conn->state = RDLM_CONN_ERROR;
		queue_delayed_work(rdlm_wq, &conn->err_work, 0);
	}
	spin_unlock_bh(&conn->lock);
}

static void rdlm_conn_connect_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, connect_work);
	struct rdma_cm_id *cm_id;
	int ret;

	mutex_lock(&rdlm_fabric_mutex);
	if (conn->dead || !conn->users || conn->state != RDLM_CONN_IDLE)
		goto out;
	if (conn->cm_id) {
		/* parked: gone only once the link is back */
		rdlm_conn_stop(conn, true);
		if (conn->cm_id) {
			queue_delayed_work(rdlm_wq, &conn->connect_work,
					   msecs_to_jiffies(RDLM_PARK_POLL_MS));
			goto out;
		}
	}
	cm_id = rdma_create_id(&init_net, rdlm_conn_cm_handler, conn,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		rdlm_conn_schedule(conn);
		goto out;
	}
	conn->cm_id = cm_id;
	conn->established = false;
	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_CONNECTING;
	conn->connect_start = jiffies;
	spin_unlock_bh(&conn->lock);
	mod_delayed_work(system_wq, &conn->timeout_work,
			 msecs_to_jiffies(rdlm_connect_timeout_ms) + 1);
	ret = rdma_resolve_addr(cm_id, (struct sockaddr *)&conn->src,
				(struct sockaddr *)&conn->addr,
				RDLM_CM_TIMEOUT_MS);
	if (ret) {
		conn->last_event = RDMA_CM_EVENT_ADDR_ERROR;
		conn->last_status = ret;
		rdlm_conn_teardown(conn);
		rdlm_conn_schedule(conn);
	}
out:
	mutex_unlock(&rdlm_fabric_mutex);
}

/* Connection is up: exchange tables for every lockspace it serves. */
static void rdlm_conn_up_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(work, struct rdlm_conn, up_work);
	struct rdlm_fabric_ls *ls;
	bool resend;

	mutex_lock(&rdlm_fabric_mutex);
	if (conn->dead || READ_ONCE(conn->state) != RDLM_CONN_LIVE)
		goto out;
	resend = xchg(&conn->table_req, false);
	list_for_each_entry(ls, &rdlm_ls_list, entry) {
		if (ls->dead || !rdlm_ls_member(ls, conn->node))
			continue;
		if (!conn->passive) {
			rdlm_conn_request_tables(conn, ls);
			continue;
		}
		if (resend)
			rdlm_conn_unexport(conn, ls, false);
		rdlm_conn_export(conn, ls);
	}
out:
	mutex_unlock(&rdlm_fabric_mutex);
}

/*
 * Both ends watch the peer: any successful completion (an RC send
 * completes only once the peer acknowledged it; a receive is the peer's
 * message) proves it alive. Silence for heartbeat_miss periods fails the
 * connection. The active side sends a heartbeat SEND when it has sent no
 * message for a period, so the passive side, which sends nothing unasked,
 * hears from it at least once a period and its ACK tells the active side.
 */
static void rdlm_conn_hb_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, hb_work);
	unsigned long period = msecs_to_jiffies(max(rdlm_heartbeat_ms, 10U));
	unsigned int miss = max(rdlm_heartbeat_miss, 2U);
	unsigned long silent;
	struct rdlm_op *op;

	if (READ_ONCE(conn->state) != RDLM_CONN_LIVE)
		return;		/* ESTABLISHED starts it again */
	silent = jiffies - READ_ONCE(conn->last_alive);
	if (silent > period * miss) {
		pr_info("node %u: %s connection silent for %u ms, dropping it\n",
			conn->node, conn->passive ? "incoming" : "outgoing",
			jiffies_to_msecs(silent));
		WRITE_ONCE(conn->last_event, RDMA_CM_EVENT_DISCONNECTED);
		WRITE_ONCE(conn->last_status, -ETIMEDOUT);
		rdlm_conn_error(conn);
		return;
	}
	if (!conn->passive &&
	    !time_before(jiffies, READ_ONCE(conn->last_msg_out) + period)) {
		op = rdlm_msg_alloc(conn, RDLM_W_HEARTBEAT,
				    sizeof(struct rdlm_wire_hdr),
				    rdlm_local_node(), 0);
		if (op)
			rdlm_msg_send(op);
	}
	/* credits a failed allocation in rdlm_recv_done() did not return */
	if (conn->passive && READ_ONCE(conn->to_return) >= RDLM_CREDIT_BATCH) {
		op = rdlm_msg_alloc(conn, RDLM_W_CREDIT,
				    sizeof(struct rdlm_wire_hdr),
				    rdlm_local_node(), 0);
		if (op)
			rdlm_msg_send(op);
	}
	queue_delayed_work(system_wq, &conn->hb_work, period);
}

/**
 * rdlm_conn_alloc() - allocate an idle connection
 * @passive: accepted (true) or initiated (false)
 * @node: peer node id
 *
 * Return: the connection or NULL.
 */
struct rdlm_conn *rdlm_conn_alloc(bool passive, u32 node)
{
	struct rdlm_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	conn->passive = passive;
	conn->node = node;
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->backlog);
	INIT_LIST_HEAD(&conn->exports);
	INIT_LIST_HEAD(&conn->entry);
	xa_init_flags(&conn->pending, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	INIT_DELAYED_WORK(&conn->connect_work, rdlm_conn_connect_work);
	INIT_DELAYED_WORK(&conn->err_work, rdlm_conn_err_work);
	INIT_WORK(&conn->up_work, rdlm_conn_up_work);
	INIT_DELAYED_WORK(&conn->hb_work, rdlm_conn_hb_work);
	INIT_DELAYED_WORK(&conn->timeout_work, rdlm_conn_timeout_work);
	conn->backoff_ms = RDLM_BACKOFF_MIN_MS;
	conn->last_alive = jiffies;
	conn->last_msg_out = jiffies;
	conn->last_event = -1;
	return conn;
}

/**
 * rdlm_conn_free() - free a torn-down connection nobody can find any more
 * @conn: connection, already marked dead and unlisted
 *
 * Context: process, rdlm_fabric_mutex NOT held (its works take it).
 */
void rdlm_conn_free(struct rdlm_conn *conn)
{
	cancel_delayed_work_sync(&conn->connect_work);
	cancel_delayed_work_sync(&conn->err_work);
	cancel_work_sync(&conn->up_work);
	cancel_delayed_work_sync(&conn->hb_work);
	cancel_delayed_work_sync(&conn->timeout_work);
	xa_destroy(&conn->pending);
	kfree(conn);
}

/* ---- connection manager events -------------------------------------- */

static void rdlm_conn_params(struct rdlm_conn *conn,
			     struct rdma_conn_param *param, u32 init_depth,
			     u32 resp_res)
{
	const struct ib_device_attr *a = &conn->dev->ibdev->attrs;

	/* both sides need both, or READ and atomics never get rights */
	param->initiator_depth = clamp_t(u32, init_depth, 1,
					 min(a->max_qp_init_rd_atom, 255));
	param->responder_resources = clamp_t(u32, resp_res, 1,
					     min(a->max_qp_rd_atom, 255));
	param->retry_count = 6;		/* rxe: 7 would retry forever */
	param->rnr_retry_count = 7;	/* receive buffers come back */
	param->flow_control = 1;
}

static int rdlm_conn_request(struct rdma_cm_id *cm_id,
			     struct rdma_cm_event *ev)
{
	const struct rdlm_cm_priv *p = ev->param.conn.private_data;
	struct sockaddr *peer = (struct sockaddr *)&cm_id->route.addr.dst_addr;
	struct rdma_conn_param param = {};
	struct rdlm_conn *conn, *old;
	u32 node;
	int ret;

	if (!p || ev->param.conn.private_data_len < sizeof(*p) ||
	    le32_to_cpu(p->magic) != RDLM_WIRE_MAGIC ||
	    p->version != RDLM_WIRE_VERSION) {
		atomic64_inc(&rdlm_rejected);
		pr_info_ratelimited("refused connection from %pISc: not rdlm\n",
				    peer);
		goto reject;
	}
	node = le32_to_cpu(p->nodeid);
	if (!rdlm_node_allowed(node, peer)) {
		atomic64_inc(&rdlm_rejected);
		pr_info_ratelimited("refused connection from %pISc: not a configured node %u\n",
				    peer, node);
		goto reject;
	}
	conn = rdlm_conn_alloc(true, node);
	if (!conn)
		goto reject;
	conn->cm_id = cm_id;
	conn->id_dev = rdlm_id_dev(cm_id);
	cm_id->context = conn;
	ret = rdlm_conn_create_qp(conn, cm_id);
	if (ret)
		goto free;
	rdlm_conn_params(conn, &param, ev->param.conn.responder_resources,
			 ev->param.conn.initiator_depth);
	rdma_set_ack_timeout(cm_id, rdlm_ack_timeout);
	ret = rdma_accept(cm_id, &param);
	if (ret)
		goto free;

	/* live at ESTABLISHED (the RTU, or the first packet) */
	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_CONNECTING;
	conn->qp_used = true;
	spin_unlock_bh(&conn->lock);
	spin_lock(&rdlm_conn_list_lock);
	/* a reconnecting peer replaces its previous connection */
	list_for_each_entry(old, &rdlm_conn_list, entry)
		if (old->passive && old->node == node)
			rdlm_conn_error(old);
	/* walkers holding only rdlm_fabric_mutex may see it appear */
	list_add_tail_rcu(&conn->entry, &rdlm_conn_list);
	spin_unlock(&rdlm_conn_list_lock);
	return 0;

free:
	cm_id->context = NULL;
	conn->qp_used = false;
	if (conn->dev)
		rdlm_conn_free_ib(conn, cm_id);
	xa_destroy(&conn->pending);
	kfree(conn);
reject:
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;	/* the CM destroys the new id */
}

static int rdlm_conn_addr_resolved(struct rdlm_conn *conn,
				   struct rdma_cm_id *cm_id)
{
	int ret;

	conn->id_dev = rdlm_id_dev(cm_id);
	if (rdlm_dev_link_down(conn->id_dev))
		return -ENETDOWN;	/* a REQ now would break QP1 */
	ret = rdlm_conn_create_qp(conn, cm_id);
	if (ret)
		return ret;
	rdma_set_ack_timeout(cm_id, rdlm_ack_timeout);
	return rdma_resolve_route(cm_id, RDLM_CM_TIMEOUT_MS);
}

static int rdlm_conn_route_resolved(struct rdlm_conn *conn,
				    struct rdma_cm_id *cm_id)
{
	struct rdlm_cm_priv priv = {
		.magic = cpu_to_le32(RDLM_WIRE_MAGIC),
		.version = RDLM_WIRE_VERSION,
		.nodeid = cpu_to_le32(rdlm_local_node()),
	};
	struct rdma_conn_param param = {
		.private_data = &priv,
		.private_data_len = sizeof(priv),
	};

	rdlm_conn_params(conn, &param, RDLM_RD_ATOM, RDLM_RD_ATOM);
	return rdma_connect_locked(cm_id, &param);
}

/**
 * rdlm_conn_cm_handler() - rdma_cm events of the listener and every conn
 * @cm_id: id the event is for
 * @ev: the event
 *
 * Return: non-zero only for a refused connection request (the CM then
 * destroys the new id); our own ids are destroyed by teardown.
 */
int rdlm_conn_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rdlm_conn *conn = cm_id->context;
	int ret = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rdlm_conn_request(cm_id, ev);
	if (!conn)
		return 0;	/* the listener */

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdlm_conn_addr_resolved(conn, cm_id);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rdlm_conn_route_resolved(conn, cm_id);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		spin_lock_bh(&conn->lock);
		if (conn->state == RDLM_CONN_CONNECTING &&
		    conn->cm_id == cm_id) {
			conn->state = RDLM_CONN_LIVE;
			conn->established = true;
			conn->qp_used = true;
			conn->backoff_ms = RDLM_BACKOFF_MIN_MS;
			conn->last_alive = jiffies;
			conn->last_msg_out = jiffies;
		}
		spin_unlock_bh(&conn->lock);
		queue_work(rdlm_wq, &conn->up_work);
		mod_delayed_work(system_wq, &conn->hb_work,
				 msecs_to_jiffies(rdlm_heartbeat_ms));
		/* the peer is back: our own connection to it need not wait */
		if (conn->passive)
			rdlm_kick_active(conn->node);
		break;
	case RDMA_CM_EVENT_REJECTED:
		conn->rejects++;
		ret = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:	/* errors, disconnect, device removal, address change */
		ret = -ECONNRESET;
		break;
	}
	if (ret && READ_ONCE(conn->cm_id) == cm_id) {
		WRITE_ONCE(conn->last_event, ev->event);
		WRITE_ONCE(conn->last_status, ev->status ?: ret);
		rdlm_conn_error(conn);
	}
	return 0;
}

/* ---- lock table export (passive side) -------------------------------- */

static void rdlm_mrchunk_free(struct rdlm_conn *conn, struct rdlm_mrchunk *c)
{
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->nents)
		ib_dma_unmap_sg(conn->dev->ibdev, c->sgt.sgl, c->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	sg_free_table(&c->sgt);
	memset(c, 0, sizeof(*c));
}

/* Register @n pages with FRWR on @conn's QP, for remote @access. */
static int rdlm_mrchunk_reg(struct rdlm_conn *conn, struct rdlm_export *exp,
			    struct rdlm_mrchunk *c, struct page **pages,
			    u32 n, int access)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	struct rdlm_op *op;
	int ret;

	ret = sg_alloc_table_from_pages(&c->sgt, pages, n, 0,
					(unsigned long)n << PAGE_SHIFT,
					GFP_KERNEL);
	if (ret)
		return ret;
	c->nents = ib_dma_map_sg(ibdev, c->sgt.sgl, c->sgt.orig_nents,
				 DMA_BIDIRECTIONAL);
	if (!c->nents)
		return -ENOMEM;
	c->mr = ib_alloc_mr(conn->dev->pd, IB_MR_TYPE_MEM_REG, n);
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		return ret;
	}
	ret = ib_map_mr_sg(c->mr, c->sgt.sgl, c->nents, NULL, PAGE_SIZE);
	if (ret != c->nents)
		return ret < 0 ? ret : -EINVAL;
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->rkey));

	op = rdlm_op_alloc(conn, RDLM_OP_REG);
	if (!op)
		return -ENOMEM;
	op->mr = c->mr;
	op->access = access;
	op->exp = exp;
	atomic_inc(&exp->regs);
	ret = rdlm_op_submit(conn, op);
	if (ret) {
		atomic_dec(&exp->regs);
		rdlm_op_put(op);
	}
	return ret;
}

static struct rdlm_export *rdlm_conn_find_export(struct rdlm_conn *conn,
						 struct rdlm_fabric_ls *ls)
{
	struct rdlm_export *exp;

	list_for_each_entry(exp, &conn->exports, entry)
		if (exp->ls == ls)
			return exp;
	return NULL;
}

static int rdlm_conn_send_tables(struct rdlm_conn *conn,
				 struct rdlm_export *exp)
{
	struct rdlm_fabric_ls *ls = exp->ls;
	struct rdlm_wire_table *t;
	struct rdlm_op *op;
	u32 i = 0;
	int ret;

	do {
		op = rdlm_msg_alloc(conn, RDLM_W_TABLE, sizeof(*t), ls->local,
				    ls->lsid);
		if (!op)
			return -ENOMEM;
		t = (struct rdlm_wire_table *)op->buf;
		t->ls_index = cpu_to_le32(ls->index);
		t->nr_slots = cpu_to_le32(ls->nr_slots);
		t->nr_mbox = cpu_to_le32(ls->nr_mbox);
		t->atomic_mode = ls->atomic_mode;
		t->nr_chunks = cpu_to_le16(exp->nr_chunks);
		t->chunk = cpu_to_le16(i);
		t->chunk_slots = cpu_to_le32(exp->chunk_slots);
		if (exp->nr_chunks) {
			t->addr = cpu_to_le64(exp->chunks[i].mr->iova);
			t->rkey = cpu_to_le32(exp->chunks[i].mr->rkey);
		}
		t->mbox_addr = cpu_to_le64(exp->mbox.mr->iova);
		t->mbox_rkey = cpu_to_le32(exp->mbox.mr->rkey);
		ret = rdlm_msg_send(op);
		if (ret)
			return ret;
	} while (++i < exp->nr_chunks);
	return 0;
}

/**
 * rdlm_conn_export() - register @ls's table and mailbox for @conn's peer
 * @conn: live passive connection
 * @ls: lockspace with the peer as a member
 *
 * NIC-atomic tables are registered in chunks of at most one MR's page list
 * with LOCAL_WRITE | REMOTE_READ | REMOTE_ATOMIC (never REMOTE_WRITE);
 * CPU-atomic tables are not registered at all. The mailbox takes
 * REMOTE_WRITE. Then the descriptions go out; already exported ones are
 * sent again. Context: process, rdlm_fabric_mutex held.
 *
 * Return: 0 or -errno (the connection is then reset).
 */
int rdlm_conn_export(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls)
{
	struct rdlm_export *exp = rdlm_conn_find_export(conn, ls);
	u32 chunk_pages, i, n;
	int ret;

	lockdep_assert_held(&rdlm_fabric_mutex);
	if (exp)
		return rdlm_conn_send_tables(conn, exp);

	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp)
		return -ENOMEM;
	exp->ls = ls;
	kref_get(&ls->ref);
	atomic_set(&exp->regs, 0);
	spin_lock_bh(&conn->lock);
	list_add_tail(&exp->entry, &conn->exports);
	spin_unlock_bh(&conn->lock);

	if (ls->atomic_mode == RDLM_ATOMIC_NIC) {
		chunk_pages = min(conn->dev->ibdev->attrs.max_fast_reg_page_list_len,
				  512U);
		exp->nr_chunks = DIV_ROUND_UP(ls->nr_pages, chunk_pages);
		exp->chunk_slots = chunk_pages * (PAGE_SIZE / sizeof(u64));
		ret = -EINVAL;
		if (!chunk_pages || exp->nr_chunks > RDLM_MAX_CHUNKS)
			goto err;
		ret = -ENOMEM;
		exp->chunks = kcalloc(exp->nr_chunks, sizeof(*exp->chunks),
				      GFP_KERNEL);
		if (!exp->chunks)
			goto err;
		for (i = 0; i < exp->nr_chunks; i++) {
			n = min(chunk_pages, ls->nr_pages - i * chunk_pages);
			ret = rdlm_mrchunk_reg(conn, exp, &exp->chunks[i],
					       ls->pages + i * chunk_pages, n,
					       IB_ACCESS_LOCAL_WRITE |
					       IB_ACCESS_REMOTE_READ |
					       IB_ACCESS_REMOTE_ATOMIC);
			if (ret)
				goto err;
		}
	}
	ret = rdlm_mrchunk_reg(conn, exp, &exp->mbox, ls->mbox_pages,
			       ls->nr_mbox_pages,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	if (ret)
		goto err;
	/* same send queue: the peer sees the keys only after REG_MR ran */
	ret = rdlm_conn_send_tables(conn, exp);
	if (ret)
		goto err;
	return 0;
err:
	pr_info("lockspace %s: cannot register table for node %u: %d\n",
		ls->name, conn->node, ret);
	rdlm_conn_error(conn);
	return ret;
}

/* Deregister and free @exp: no REG_MR of it may be outstanding. */
static void rdlm_export_free(struct rdlm_conn *conn, struct rdlm_export *exp)
{
	u32 i;

	spin_lock_bh(&conn->lock);
	list_del(&exp->entry);
	spin_unlock_bh(&conn->lock);
	for (i = 0; exp->chunks && i < exp->nr_chunks; i++)
		rdlm_mrchunk_free(conn, &exp->chunks[i]);
	rdlm_mrchunk_free(conn, &exp->mbox);
	kfree(exp->chunks);
	/* the pages outlive every MR over them */
	rdlm_fabric_ls_put(exp->ls);
	kfree(exp);
}

/**
 * rdlm_conn_unexport() - deregister @ls's MRs on @conn
 * @conn: passive connection
 * @ls: lockspace
 * @withdraw: tell the peer first (lockspace going away)
 *
 * Waits (at most 5 s) for outstanding REG_MR work requests before the MRs
 * are deregistered. A connection that does not complete them is reset
 * instead: its teardown drains the QP and frees the export then, and the
 * export holds a reference on @ls until that happens. Context: process,
 * rdlm_fabric_mutex held.
 */
void rdlm_conn_unexport(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			bool withdraw)
{
	struct rdlm_export *exp = rdlm_conn_find_export(conn, ls);
	struct rdlm_op *op;

	lockdep_assert_held(&rdlm_fabric_mutex);
	if (!exp)
		return;
	if (withdraw) {
		op = rdlm_msg_alloc(conn, RDLM_W_WITHDRAW,
				    sizeof(struct rdlm_wire_hdr), ls->local,
				    ls->lsid);
		if (op)
			rdlm_msg_send(op);
	}
	if (!wait_event_timeout(ls->wait, !atomic_read(&exp->regs), 5 * HZ)) {
		rdlm_conn_error(conn);
		return;
	}
	rdlm_export_free(conn, exp);
}

/**
 * rdlm_conn_request_tables() - ask the peer for @ls's table description
 * @conn: live active connection
 * @ls: lockspace
 */
void rdlm_conn_request_tables(struct rdlm_conn *conn,
			      struct rdlm_fabric_ls *ls)
{
	struct rdlm_op *op;

	op = rdlm_msg_alloc(conn, RDLM_W_TABLE_REQ,
			    sizeof(struct rdlm_wire_hdr), ls->local, ls->lsid);
	if (op)
		rdlm_msg_send(op);
}

/**
 * rdlm_op_cache_init() - create the work request cache
 *
 * Return: 0 or -ENOMEM.
 */
int rdlm_op_cache_init(void)
{
	rdlm_op_cache = KMEM_CACHE(rdlm_op, SLAB_HWCACHE_ALIGN);
	return rdlm_op_cache ? 0 : -ENOMEM;
}

/**
 * rdlm_op_cache_exit() - destroy the work request cache
 */
void rdlm_op_cache_exit(void)
{
	kmem_cache_destroy(rdlm_op_cache);
}
