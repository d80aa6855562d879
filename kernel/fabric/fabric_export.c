// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm fabric: exporting a lockspace's lock table and mailbox to a peer.
 *
 * On each passive connection, every lockspace the peer shares gets MRs over
 * its table (in chunks) and mailbox, registered with REG_MR work requests on
 * that connection's QP, and described to the peer in TABLE messages. They
 * are invalidated with the connection (its QP is drained first) or when the
 * lockspace goes (withdrawn with a WITHDRAW message, freed once the peer
 * answers that it will not use the keys any more).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>

#include "fabric_priv.h"

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

struct rdlm_export *rdlm_conn_find_export(struct rdlm_conn *conn,
					  struct rdlm_fabric_ls *ls)
{
	struct rdlm_export *exp;

	list_for_each_entry(exp, &conn->exports, entry)
		if (exp->ls == ls && !exp->withdrawn)
			return exp;
	return NULL;
}

/* Who we are, in a TABLE or TABLE_REQ of @ls. */
static void rdlm_ident_fill(struct rdlm_fabric_ls *ls,
			    struct rdlm_wire_ident *id)
{
	id->incarnation = cpu_to_le64(ls->incarnation);
	id->nr_slots = cpu_to_le32(ls->nr_slots);
	id->nr_mbox = cpu_to_le32(ls->nr_mbox);
	id->lease_us = cpu_to_le32(ls->lease_us);
	id->lvb_len = cpu_to_le16(ls->lvb_len);
	id->atomic_mode = ls->atomic_mode;
	strscpy_pad(id->engine, ls->engine, sizeof(id->engine));
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
		rdlm_ident_fill(ls, &t->id);
		t->ls_index = cpu_to_le32(ls->index);
		t->nr_chunks = cpu_to_le16(exp->nr_chunks);
		t->chunk = cpu_to_le16(i);
		t->chunk_slots = cpu_to_le32(exp->chunk_slots);
		t->record_pages = cpu_to_le16(ls->nr_record_pages);
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
 * NIC-atomic tables (and the records after them) are registered in chunks
 * of at most one MR's page list with LOCAL_WRITE | REMOTE_READ |
 * REMOTE_ATOMIC (never REMOTE_WRITE);
 * CPU-atomic tables are not registered at all. The mailbox takes
 * REMOTE_WRITE. Then the descriptions go out; already exported ones are
 * sent again. Context: process, rdlm_fabric.mutex held.
 *
 * Return: 0 or -errno (the connection is then reset).
 */
int rdlm_conn_export(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls)
{
	struct rdlm_export *exp = rdlm_conn_find_export(conn, ls);
	u32 chunk_pages, i, n;
	int ret;

	lockdep_assert_held(&rdlm_fabric.mutex);
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
void rdlm_export_free(struct rdlm_conn *conn, struct rdlm_export *exp)
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
 * rdlm_conn_unexport() - withdraw @ls's table from the peer of @conn
 * @conn: passive connection
 * @ls: lockspace going away
 *
 * Tells the peer (a WITHDRAW message). Its MRs stay valid until the peer
 * answers that it will not use their keys any more (WITHDRAWN, behind the
 * verbs it had posted with them): deregistering them earlier would fail a
 * verb already on its way, and with it the peer's whole connection. The
 * export holds a reference on @ls until then, or until the connection's
 * teardown frees it. Context: process, rdlm_fabric.mutex held.
 */
void rdlm_conn_unexport(struct rdlm_conn *conn, struct rdlm_fabric_ls *ls)
{
	struct rdlm_export *exp = rdlm_conn_find_export(conn, ls);
	struct rdlm_op *op;

	lockdep_assert_held(&rdlm_fabric.mutex);
	if (!exp)
		return;
	spin_lock_bh(&conn->lock);
	exp->withdrawn = true;
	spin_unlock_bh(&conn->lock);
	op = rdlm_msg_alloc(conn, RDLM_W_WITHDRAW,
			    sizeof(struct rdlm_wire_withdraw), ls->local,
			    ls->lsid);
	if (op)
		((struct rdlm_wire_withdraw *)op->buf)->incarnation =
			cpu_to_le64(ls->incarnation);
	if (!op || rdlm_msg_send(op))
		rdlm_conn_error(conn);	/* no answer will come */
}

/**
 * rdlm_conn_withdrawn() - the peer will not use a withdrawn table's keys
 * @conn: passive connection
 * @lsid: lockspace the table was for
 *
 * Answers come in the order of the WITHDRAWs: the oldest withdrawn export
 * of @lsid is the one answered. An answer to nothing is a protocol error.
 * Context: softirq (receive completion).
 */
void rdlm_conn_withdrawn(struct rdlm_conn *conn, u32 lsid)
{
	struct rdlm_export *exp;
	bool found = false;

	spin_lock(&conn->lock);
	list_for_each_entry(exp, &conn->exports, entry) {
		if (exp->withdrawn && !exp->acked && exp->ls->lsid == lsid) {
			exp->acked = true;
			found = true;
			break;
		}
	}
	spin_unlock(&conn->lock);
	if (!found) {
		rdlm_proto_error(conn, "answer to no withdrawal");
		return;
	}
	mod_delayed_work(rdlm_fabric.wq, &conn->unexport_work, 0);
}

/**
 * rdlm_conn_unexport_work() - free the exports the peer is done with
 * @work: &rdlm_conn.unexport_work
 *
 * A REG_MR still outstanding (posted before the WITHDRAW, completion not
 * yet reaped) is waited for by polling: it completes or the connection
 * fails, and its teardown frees every export.
 */
void rdlm_conn_unexport_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, unexport_work);
	struct rdlm_export *exp, *tmp;

	mutex_lock(&rdlm_fabric.mutex);
	if (test_bit(RDLM_CONN_F_DEAD, &conn->flags))
		goto out;
	list_for_each_entry_safe(exp, tmp, &conn->exports, entry) {
		if (!READ_ONCE(exp->acked))
			continue;
		if (atomic_read(&exp->regs)) {
			queue_delayed_work(rdlm_fabric.wq, &conn->unexport_work,
					   msecs_to_jiffies(10));
			continue;
		}
		rdlm_export_free(conn, exp);
	}
out:
	mutex_unlock(&rdlm_fabric.mutex);
}

/**
 * rdlm_conn_request_tables() - ask the peer for @ls's table description
 * @conn: live active connection
 * @ls: lockspace
 *
 * The request carries our incarnation and configuration: the peer exports
 * its table to us only once it has seen them (rdlm_member_presents()).
 */
void rdlm_conn_request_tables(struct rdlm_conn *conn,
			      struct rdlm_fabric_ls *ls)
{
	struct rdlm_op *op;

	op = rdlm_msg_alloc(conn, RDLM_W_TABLE_REQ,
			    sizeof(struct rdlm_wire_table_req), ls->local,
			    ls->lsid);
	if (!op)
		return;
	rdlm_ident_fill(ls, &((struct rdlm_wire_table_req *)op->buf)->id);
	rdlm_msg_send(op);
}

/**
 * rdlm_op_cache_init() - create the work request cache
 *
 * Return: 0 or -ENOMEM.
 */
