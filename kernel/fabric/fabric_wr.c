// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm fabric: work requests, completions and messages.
 *
 * Every verb and message is a struct rdlm_op posted on a connection's QP,
 * or queued on its backlog while it has no credit or send queue slot.
 * Completions run in softirq (IB_POLL_SOFTIRQ) and are dispatched by their
 * struct ib_cqe; received messages are checked field by field before use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include <rdma/ib_cache.h>

#include "fabric_priv.h"

static struct kmem_cache *rdlm_op_cache;

/* ---- ops ------------------------------------------------------------ */

struct rdlm_op *rdlm_op_alloc(struct rdlm_conn *conn, u8 type)
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

void rdlm_op_put(struct rdlm_op *op)
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
void rdlm_op_complete(struct rdlm_op *op, int status, u64 value)
{
	struct rdlm_fabric_ls *ls = op->ls;
	struct rdlm_member *m;

	/*
	 * A one-sided verb that completes after the peer withdrew the table
	 * acted on memory of a lockspace that is gone there: a failure.
	 */
	if (ls && op->type == RDLM_OP_VERB && !status) {
		m = rdlm_fabric_ls_member(ls, op->conn->node);
		if (m && READ_ONCE(m->gen) != op->gen)
			status = -ECONNRESET;
	}
	op->res.status = status;
	op->res.value = value;
	op->res.data = op->record && !status ? op->buf : NULL;
	if (!status)
		rdlm_lat_account(op->conn, op->res.kind, op->t0);
	/* rdlm_fabric_ls_quiesce() waits for this section to end */
	rcu_read_lock();
	if (op->done)
		op->done(op->ctx, &op->res);
	if (ls && op->to_self && atomic_dec_and_test(&ls->inflight_self))
		rdlm_fabric_ls_self_idle(ls);
	if (op->m && atomic_dec_and_test(&op->m->inflight))
		wake_up(&ls->wait);
	if (ls && atomic_dec_and_test(&ls->inflight))
		wake_up(&ls->wait);
	rcu_read_unlock();
}

void rdlm_fail_list(struct list_head *list, int status)
{
	struct rdlm_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, list, entry) {
		list_del(&op->entry);
		if (op->type == RDLM_OP_REG && op->exp)
			atomic_dec(&op->exp->regs);
		rdlm_op_complete(op, status, 0);
		if (op->type == RDLM_OP_AREQ)
			rdlm_op_put(op);	/* no result will come */
		rdlm_op_put(op);
	}
}

static void rdlm_op_done(struct ib_cq *cq, struct ib_wc *wc);
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
				queue_delayed_work(rdlm_fabric.wq, &conn->err_work, 0);
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
int rdlm_op_submit(struct rdlm_conn *conn, struct rdlm_op *op)
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
struct rdlm_op *rdlm_msg_alloc(struct rdlm_conn *conn, u8 type, u16 len,
			       u32 src, u32 lsid)
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

int rdlm_msg_send(struct rdlm_op *op)
{
	int ret = rdlm_op_submit(op->conn, op);

	if (ret)
		rdlm_op_put(op);
	return ret;
}

/* The local node id, as every lockspace knows it. */
u32 rdlm_local_node(void)
{
	struct rdlm_fabric_ls *ls;
	u32 node = 0;

	rcu_read_lock();
	ls = list_first_or_null_rcu(&rdlm_fabric.lockspaces, struct rdlm_fabric_ls, entry);
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
 * A READ flagged RDLM_VF_RECORD reads record v->slot of the target's
 * records (the pages after its lock table) instead of a lock word.
 *
 * Never sleeps. Context: process or softirq, not hard irq.
 *
 * Return: 0, -ENOTCONN when the target is not connected or its table not
 * yet known, -EINVAL for a slot out of range (or a record READ that is not
 * a READ, or to this node), -EOPNOTSUPP for a record READ to a node that
 * has no records, -ENOMEM.
 */
int rdlm_conn_post(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
		   const struct rdlm_verb *v, rdlm_fabric_done_t done,
		   void *ctx)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, v->node);
	struct rdlm_remote *r = &m->remote;
	bool cpu = ls->atomic_mode == RDLM_ATOMIC_CPU;
	u8 type = RDLM_OP_VERB;
	struct rdlm_op *op;
	u32 chunk;
	int ret;

	if (v->flags & RDLM_VF_RECORD) {
		/* a node reads its own records with the CPU */
		if (v->kind != RDLM_VERB_READ || v->slot >= ls->nr_records ||
		    v->node == ls->local)
			return -EINVAL;
	}
	switch (v->kind) {
	case RDLM_VERB_FA:
	case RDLM_VERB_CAS:
	case RDLM_VERB_READ:
		if (v->flags & RDLM_VF_RECORD)
			break;
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
	op->gen = m->gen;
	if (v->flags & RDLM_VF_RECORD) {
		u64 off = (u64)(ls->nr_pages - ls->nr_record_pages) * PAGE_SIZE +
			  (u64)v->slot * RDLM_RECORD_SIZE;
		u64 chunk_bytes = (u64)r->chunk_slots * sizeof(u64);

		if (!r->nr_records) {
			spin_unlock_bh(&ls->lock);
			rdlm_op_put(op);
			return -EOPNOTSUPP;
		}
		/* a record never crosses a page, so never a chunk */
		chunk = div64_u64(off, chunk_bytes);
		op->raddr = r->addr[chunk] + off - chunk * chunk_bytes;
		op->rkey = r->rkey[chunk];
		op->len = RDLM_RECORD_SIZE;
		op->dir = DMA_FROM_DEVICE;
		op->record = true;
	} else if (type == RDLM_OP_VERB && v->kind == RDLM_VERB_WRITE_IMM) {
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
		msg->part = cpu_to_le32(v->msg.part);
		msg->reqid = cpu_to_le64(v->msg.reqid);
		msg->token = cpu_to_le64(v->msg.token);
		msg->arg = cpu_to_le64(v->msg.arg);
		msg->arg2 = cpu_to_le64(v->msg.arg2);
		op->len = sizeof(*msg);
		op->dir = DMA_TO_DEVICE;
		op->credit = true;
	}

	op->to_self = v->node == ls->local;
	if (op->to_self)
		atomic_inc(&ls->inflight_self);
	op->m = m;
	atomic_inc(&m->inflight);
	atomic_inc(&ls->inflight);
	ret = rdlm_op_submit(conn, op);
	if (ret) {
		/* the kick first: quiesce flushes the work once none is in flight */
		if (op->to_self && atomic_dec_and_test(&ls->inflight_self))
			rdlm_fabric_ls_self_idle(ls);
		atomic_dec(&m->inflight);
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
		atomic_dec(&op->exp->regs);
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

int rdlm_post_recv(struct rdlm_conn *conn, struct rdlm_rxbuf *rxb)
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

/**
 * rdlm_proto_error() - a peer broke the protocol: count it, reset @conn
 * @conn: connection the message came on
 * @why: what was wrong
 *
 * Context: any but hard irq.
 */
void rdlm_proto_error(struct rdlm_conn *conn, const char *why)
{
	atomic64_inc(&conn->stats.proto);
	pr_info_ratelimited("node %u: bad message (%s), reconnecting\n",
			    conn->node, why);
	rdlm_conn_error(conn);
}

static const u16 rdlm_wire_size[RDLM_W_NR] = {
	[RDLM_W_TABLE]		= sizeof(struct rdlm_wire_table),
	[RDLM_W_TABLE_REQ]	= sizeof(struct rdlm_wire_table_req),
	[RDLM_W_WITHDRAW]	= sizeof(struct rdlm_wire_withdraw),
	[RDLM_W_ENGINE]		= sizeof(struct rdlm_wire_engine),
	[RDLM_W_AREQ]		= sizeof(struct rdlm_wire_areq),
	[RDLM_W_ARESP]		= sizeof(struct rdlm_wire_aresp),
	[RDLM_W_HEARTBEAT]	= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_CREDIT]		= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_WITHDRAWN]	= sizeof(struct rdlm_wire_hdr),
	[RDLM_W_GONE]		= sizeof(struct rdlm_wire_gone),
};

/* Which side may receive each type: true = the passive (serving) side. */
static const bool rdlm_wire_to_passive[RDLM_W_NR] = {
	[RDLM_W_TABLE_REQ]	= true,
	[RDLM_W_ENGINE]		= true,
	[RDLM_W_AREQ]		= true,
	[RDLM_W_HEARTBEAT]	= true,
	[RDLM_W_WITHDRAWN]	= true,
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

/* Does @id agree with our configuration? If not, say which field (@say). */
static bool rdlm_ident_agrees(struct rdlm_fabric_ls *ls, u32 node,
			      const struct rdlm_wire_ident *id, bool say)
{
	static const char * const modes[] = { "nic", "cpu" };
	u64 theirs = 0, ours = 0;
	const char *what = NULL;

	if (le32_to_cpu(id->nr_slots) != ls->nr_slots) {
		what = "table_size";
		theirs = le32_to_cpu(id->nr_slots);
		ours = ls->nr_slots;
	} else if (le32_to_cpu(id->nr_mbox) != ls->nr_mbox) {
		what = "mailbox_slots";
		theirs = le32_to_cpu(id->nr_mbox);
		ours = ls->nr_mbox;
	} else if (le16_to_cpu(id->lvb_len) != ls->lvb_len) {
		what = "lvb_len";
		theirs = le16_to_cpu(id->lvb_len);
		ours = ls->lvb_len;
	} else if (le32_to_cpu(id->lease_us) != ls->lease_us) {
		what = "lease_us";
		theirs = le32_to_cpu(id->lease_us);
		ours = ls->lease_us;
	}
	if (what) {
		if (say)
			pr_warn("lockspace %s: node %u has %s %llu, this node %llu: not taking part with it\n",
				ls->name, node, what, theirs, ours);
		return false;
	}
	if (id->atomic_mode != ls->atomic_mode) {
		if (say)
			pr_warn("lockspace %s: node %u has atomic_mode %s, this node %s: not taking part with it\n",
				ls->name, node,
				id->atomic_mode < ARRAY_SIZE(modes) ?
				modes[id->atomic_mode] : "?",
				modes[ls->atomic_mode]);
		return false;
	}
	if (strncmp(id->engine, ls->engine, sizeof(id->engine))) {
		if (say)
			pr_warn("lockspace %s: node %u has engine %.*s, this node %s: not taking part with it\n",
				ls->name, node, (int)strnlen(id->engine,
							     sizeof(id->engine)),
				id->engine, ls->engine);
		return false;
	}
	return true;
}

static void rdlm_send_gone(struct rdlm_conn *passive, struct rdlm_fabric_ls *ls,
			   u64 inc)
{
	struct rdlm_op *op;

	op = rdlm_msg_alloc(passive, RDLM_W_GONE, sizeof(struct rdlm_wire_gone),
			    passive->local, ls->lsid);
	if (op) {
		((struct rdlm_wire_gone *)op->buf)->incarnation =
			cpu_to_le64(inc);
		if (!rdlm_msg_send(op))
			return;
	}
	/*
	 * The request can complete here before the connection's ESTABLISHED
	 * event made it live: the peer asks again (rdlm_conn_reask_tables()).
	 */
	pr_info_ratelimited("lockspace %s: node %u: could not tell it so yet\n",
			    ls->name, passive->node);
}

/*
 * @m's node presents its lockspace: @id, in a TABLE on our active
 * connection or in a TABLE_REQ on our passive connection @passive. Is it
 * admitted? A configuration that differs is refused (said once per
 * incarnation). The incarnation fencing declared gone is told so and never
 * admitted. A new incarnation is a restart: what we knew of the old one's
 * table is forgotten and the user hears of it before anything of the new
 * one is taken, since it comes first on the connection the new one's
 * messages and verbs use (@passive), or before its table is (a TABLE).
 * @ask_back: a TABLE_REQ of a new incarnation or on a new connection, to
 * be answered by asking for its table too.
 */
static bool rdlm_member_presents(struct rdlm_conn *conn,
				 struct rdlm_fabric_ls *ls,
				 struct rdlm_member *m,
				 const struct rdlm_wire_ident *id,
				 struct rdlm_conn *passive, bool *ask_back)
{
	const struct rdlm_fabric_ls_ops *ops;
	u64 inc = le64_to_cpu(id->incarnation);
	u32 node = m->cfg.nodeid;
	bool restart, ready, say;

	*ask_back = false;
	if (!inc) {
		rdlm_proto_error(conn, "incarnation 0");
		return false;
	}
	spin_lock_bh(&ls->lock);
	say = m->refused != inc;
	m->refused = inc;
	spin_unlock_bh(&ls->lock);
	if (!rdlm_ident_agrees(ls, node, id, say))
		return false;
	spin_lock_bh(&ls->lock);
	m->refused = 0;
	if (inc == m->gone) {
		spin_unlock_bh(&ls->lock);
		pr_info_ratelimited("lockspace %s: node %u is back with the incarnation that departed: told so, it stays fenced\n",
				    ls->name, node);
		if (passive)
			rdlm_send_gone(passive, ls, inc);
		return false;
	}
	restart = m->inc && m->inc != inc;
	m->inc = inc;
	if (passive) {
		*ask_back = restart || m->asked != passive;
		m->asked = passive;
	}
	ready = restart && m->remote.ready;
	if (restart) {
		memset(&m->remote, 0, sizeof(m->remote));
		WRITE_ONCE(m->gen, m->gen + 1);
	}
	spin_unlock_bh(&ls->lock);

	if (restart) {
		pr_info("lockspace %s: node %u enabled it again (incarnation %016llx)\n",
			ls->name, node, inc);
		if (ready)
			rdlm_fabric_ls_peer_event(ls, node, false);
		/* pairs with smp_store_release() in rdlm_fabric_ls_set_ops() */
		ops = smp_load_acquire(&ls->ops);
		if (ops && ops->restart && !ops->restart(ls->priv, node))
			WRITE_ONCE(m->fenced, true);
	}
	if (READ_ONCE(m->fenced))
		return false;
	spin_lock_bh(&ls->lock);
	WRITE_ONCE(m->admitted, inc);	/* rdlm_fabric_ls_admitted() */
	spin_unlock_bh(&ls->lock);
	return true;
}

static void rdlm_rx_table(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			  const struct rdlm_wire_table *t)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, conn->node);
	u32 nr_chunks = le16_to_cpu(t->nr_chunks);
	u32 chunk = le16_to_cpu(t->chunk);
	u32 cslots = le32_to_cpu(t->chunk_slots);
	u32 index = le32_to_cpu(t->ls_index);
	struct rdlm_remote *r;
	bool up = false, unused;

	if (!m || !rdlm_member_presents(conn, ls, m, &t->id, NULL, &unused))
		return;
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
		WRITE_ONCE(m->gen, m->gen + 1);
		r->ls_index = index;
		r->chunk_slots = cslots;
		r->nr_chunks = nr_chunks;
	}
	r->mbox_addr = le64_to_cpu(t->mbox_addr);
	r->mbox_rkey = le32_to_cpu(t->mbox_rkey);
	/*
	 * Its records, if laid out as ours and inside its chunks; else none
	 * (a module from before records sends 0 pages)
	 */
	r->nr_records = 0;
	if (le16_to_cpu(t->record_pages) == ls->nr_record_pages &&
	    (u64)cslots * nr_chunks * sizeof(u64) >=
	    (u64)ls->nr_pages * PAGE_SIZE)
		r->nr_records = ls->nr_records;
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
		rdlm_fabric_ls_peer_event(ls, conn->node, true);
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
		word = rdlm_fabric_ls_word_ptr(ls, slot);
		spin_lock_bh(&ls->lock);
		old = READ_ONCE(*word);
		WRITE_ONCE(*word, rdlm_word_apply(old, req->kind,
						  le64_to_cpu(req->arg0),
						  le64_to_cpu(req->arg1)));
		spin_unlock_bh(&ls->lock);
	}
	op = rdlm_msg_alloc(conn, RDLM_W_ARESP, sizeof(*resp),
			    conn->local, le32_to_cpu(req->hdr.lsid));
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
	rx.msg.part = le32_to_cpu(msg->part);
	rx.msg.reqid = le64_to_cpu(msg->reqid);
	rx.msg.token = le64_to_cpu(msg->token);
	rx.msg.arg = le64_to_cpu(msg->arg);
	rx.msg.arg2 = le64_to_cpu(msg->arg2);
	rdlm_fabric_ls_deliver(ls, &rx);
}

/*
 * The peer withdraws its table of @lsid (@ls: ours, if we have it): no
 * verb may use its keys from now on. The answer goes behind every verb
 * already queued or posted on this connection, which the peer executes
 * first: once it has the answer, it can deregister the MRs safely. The
 * user hears that the incarnation ended only if it is the one admitted
 * and the last one presented: the next one's TABLE_REQ travels on the
 * other connection and may have been taken first (a static lockspace
 * admits it only once it recovered from the old one, after that TABLE_REQ).
 */
static void rdlm_rx_withdraw(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			     const struct rdlm_wire_withdraw *w)
{
	u32 lsid = le32_to_cpu(w->hdr.lsid);
	const struct rdlm_fabric_ls_ops *ops;
	struct rdlm_op *op;
	bool ended;

	if (ls) {
		struct rdlm_member *m = rdlm_fabric_ls_member(ls, conn->node);

		spin_lock_bh(&ls->lock);
		/* the one admitted, and no newer one presented since */
		ended = m->admitted &&
			m->admitted == le64_to_cpu(w->incarnation) &&
			m->inc == m->admitted;
		/* its messages still on the other connection are void */
		if (ended)
			WRITE_ONCE(m->asked, NULL);
		memset(&m->remote, 0, sizeof(m->remote));
		WRITE_ONCE(m->gen, m->gen + 1);
		spin_unlock_bh(&ls->lock);
		rdlm_fabric_ls_peer_event(ls, conn->node, false);
		/* pairs with smp_store_release() in rdlm_fabric_ls_set_ops() */
		ops = smp_load_acquire(&ls->ops);
		if (ended && ops && ops->withdrawn)
			ops->withdrawn(ls->priv, conn->node);
	}
	op = rdlm_msg_alloc(conn, RDLM_W_WITHDRAWN,
			    sizeof(struct rdlm_wire_hdr), conn->local, lsid);
	if (!op || rdlm_msg_send(op))
		rdlm_conn_error(conn);	/* the peer frees it with the QP */
}

/*
 * What @conn's peer sends for @ls counts only once its incarnation asked
 * for our table there: anything an earlier exchange sent (before the peer
 * learned that we re-created the lockspace) comes before that request on
 * the connection, and was meant for a table that is gone.
 */
static bool rdlm_member_current(struct rdlm_fabric_ls *ls,
				struct rdlm_conn *conn)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, conn->node);

	return m && READ_ONCE(m->asked) == conn;
}

/* The peer asks for our table of @ls (NULL: we have none). */
static void rdlm_rx_table_req(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			      const struct rdlm_wire_table_req *req)
{
	struct rdlm_member *m = ls ? rdlm_fabric_ls_member(ls, conn->node) : NULL;
	bool ask_back;

	/* without the lockspace: our own TABLE_REQ makes it ask again */
	if (!m || !rdlm_member_presents(conn, ls, m, &req->id, conn, &ask_back))
		return;
	queue_work(rdlm_fabric.wq, &conn->up_work);
	/* one that enabled it after us has not asked for ours: it will now */
	if (ask_back && m->conn)
		queue_work(rdlm_fabric.wq, &m->conn->up_work);
}

/* The peer fenced our incarnation of @ls: our user stops it. */
static void rdlm_rx_gone(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls,
			 const struct rdlm_wire_gone *g)
{
	/* pairs with smp_store_release() in rdlm_fabric_ls_set_ops() */
	const struct rdlm_fabric_ls_ops *ops = smp_load_acquire(&ls->ops);

	if (le64_to_cpu(g->incarnation) != ls->incarnation)
		return;		/* about an earlier one of ours */
	if (ops && ops->gone)
		ops->gone(ls->priv, conn->node);
}

static void rdlm_rx_msg(struct rdlm_conn *conn, const u8 *buf, u32 len)
{
	const struct rdlm_wire_hdr *hdr = (const struct rdlm_wire_hdr *)buf;
	struct rdlm_fabric_ls *ls, *any;
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
		pr_info_ratelimited("node %u: message type %u length %u from %u on %s connection\n",
				    conn->node, type, len,
				    le32_to_cpu(hdr->src),
				    conn->passive ? "an incoming" : "an outgoing");
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
	/* tables and their requests decide for themselves who is admitted */
	any = rdlm_fabric_ls_by_lsid(le32_to_cpu(hdr->lsid));
	ls = any && rdlm_fabric_ls_admits(any, conn->node) ? any : NULL;
	if (ls && conn->passive && !rdlm_member_current(ls, conn))
		ls = NULL;
	switch (type) {
	case RDLM_W_TABLE:
		if (any)
			rdlm_rx_table(conn, any, (const void *)buf);
		break;
	case RDLM_W_WITHDRAW:
		rdlm_rx_withdraw(conn, ls, (const void *)buf);
		break;
	case RDLM_W_WITHDRAWN:
		rdlm_conn_withdrawn(conn, le32_to_cpu(hdr->lsid));
		break;
	case RDLM_W_TABLE_REQ:
		rdlm_rx_table_req(conn, any, (const void *)buf);
		break;
	case RDLM_W_GONE:
		if (any)
			rdlm_rx_gone(conn, any, (const void *)buf);
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
	ls = rdlm_fabric_ls_by_index(imm >> 24);
	if (ls && rdlm_fabric_ls_admits(ls, conn->node) &&
	    rdlm_member_current(ls, conn) && rx.slot < ls->nr_mbox) {
		e = rdlm_fabric_ls_mbox_ptr(ls, rx.slot);
		rdlm_mbox_sync(conn, ls, rx.slot);
		rx.value = le64_to_cpu(READ_ONCE(e->value));
		rx.imm = le32_to_cpu(READ_ONCE(e->imm));
		rx.src = le32_to_cpu(READ_ONCE(e->src));
		if (rx.src == conn->node)
			rdlm_fabric_ls_deliver(ls, &rx);
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
				    conn->local, 0);
		if (op)
			rdlm_msg_send(op);
	}
}

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
