// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm fabric: the connection state machine.
 *
 * See fabric_priv.h for the connection model. The CM handler only builds
 * the QP and drives the handshake; anything that may destroy a cm_id runs
 * from a work item under rdlm_fabric.mutex (teardown), so no handler ever
 * destroys its own id. Teardown goes: disconnect, drain the QP (every
 * posted work request completes, in error), destroy the QP and the cm_id,
 * then fail what never reached the QP (backlog) and what waits for an
 * answer (CPU-atomic requests).
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
#define RDLM_REASK_PERIODS	3	/* heartbeats before asking again */

/* Private data of a connection request. */
struct rdlm_cm_priv {
	__le32 magic;
	u8 version;
	u8 rsvd[3];
	__le32 nodeid;
	__le32 rsvd2;
};

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
		if (test_bit(RDLM_CONN_F_QP_USED, &conn->flags))
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
	clear_bit(RDLM_CONN_F_QP_USED, &conn->flags);
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

	list_for_each_entry(ls, &rdlm_fabric.lockspaces, entry) {
		m = rdlm_fabric_ls_member(ls, conn->node);
		if (!m || m->conn != conn)
			continue;
		spin_lock_bh(&ls->lock);
		was = m->remote.ready;
		memset(&m->remote, 0, sizeof(m->remote));
		WRITE_ONCE(m->gen, m->gen + 1);
		spin_unlock_bh(&ls->lock);
		if (conn->node == ls->local)
			rdlm_fabric_ls_self_down(ls);
		if (was)
			rdlm_fabric_ls_peer_event(ls, conn->node, false);
	}
}

/* A passive connection's requests for our tables go with it. */
static void rdlm_conn_forget_asked(struct rdlm_conn *conn)
{
	struct rdlm_fabric_ls *ls;
	struct rdlm_member *m;

	list_for_each_entry(ls, &rdlm_fabric.lockspaces, entry) {
		m = rdlm_fabric_ls_member(ls, conn->node);
		if (!m || m->asked != conn)
			continue;
		spin_lock_bh(&ls->lock);
		m->asked = NULL;
		spin_unlock_bh(&ls->lock);
	}
}

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

	lockdep_assert_held(&rdlm_fabric.mutex);
	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_ERROR;
	established = test_bit(RDLM_CONN_F_ESTABLISHED, &conn->flags);
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
		if (conn->qp && test_bit(RDLM_CONN_F_QP_USED, &conn->flags)) {
			ib_drain_qp(conn->qp);
			clear_bit(RDLM_CONN_F_QP_USED, &conn->flags);
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
		clear_bit(RDLM_CONN_F_ESTABLISHED, &conn->flags);
	}

	rdlm_conn_fail_waiting(conn);
	if (!conn->passive)
		rdlm_conn_forget_remote(conn);
	else
		rdlm_conn_forget_asked(conn);

	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_IDLE;
	spin_unlock_bh(&conn->lock);
}

/**
 * rdlm_conn_teardown() - release a connection's QP and cm_id, fail its work
 * @conn: connection, in any state
 *
 * See rdlm_conn_stop(); the cm_id is always destroyed (device removal,
 * connection no longer used). Context: process, rdlm_fabric.mutex held.
 */
void rdlm_conn_teardown(struct rdlm_conn *conn)
{
	rdlm_conn_stop(conn, false);
}

/**
 * rdlm_conn_unlist() - take a connection off rdlm_fabric.conns for freeing
 * @conn: connection, torn down
 * @dead: list to put it on; free it with rdlm_conn_free() without the mutex
 *
 * Context: rdlm_fabric.mutex held (so no walker holding only the mutex
 * runs), takes rdlm_fabric.conn_lock (so no walker holding only that runs).
 */
void rdlm_conn_unlist(struct rdlm_conn *conn, struct list_head *dead)
{
	lockdep_assert_held(&rdlm_fabric.mutex);
	spin_lock(&rdlm_fabric.conn_lock);
	list_move(&conn->entry, dead);
	spin_unlock(&rdlm_fabric.conn_lock);
	set_bit(RDLM_CONN_F_DEAD, &conn->flags);
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
		queue_delayed_work(rdlm_fabric.wq, &conn->err_work, 0);
	}
	spin_unlock_bh(&conn->lock);
}

static void rdlm_conn_schedule(struct rdlm_conn *conn)
{
	queue_delayed_work(rdlm_fabric.wq, &conn->connect_work,
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
 * try at once. Context: rdlm_fabric.mutex held.
 */
void rdlm_conn_link_event(struct rdlm_conn *conn, bool down)
{
	lockdep_assert_held(&rdlm_fabric.mutex);
	if (test_bit(RDLM_CONN_F_DEAD, &conn->flags))
		return;
	if (down) {
		spin_lock_bh(&conn->lock);
		if (conn->state == RDLM_CONN_CONNECTING &&
		    test_bit(RDLM_CONN_F_QP_USED, &conn->flags))
			rdlm_dev_cm_risk(conn->id_dev,
					 "link down during a connection handshake",
					 conn->node);
		spin_unlock_bh(&conn->lock);
		rdlm_conn_error(conn);
		return;
	}
	conn->backoff_ms = 0;
	if (conn->cm_id && READ_ONCE(conn->state) == RDLM_CONN_IDLE)
		mod_delayed_work(rdlm_fabric.wq, &conn->err_work, 0);
	else if (!conn->passive && conn->users)
		mod_delayed_work(rdlm_fabric.wq, &conn->connect_work, 0);
}

/*
 * Tear @conn down now and see what comes next: a parked one is polled, an
 * active one reconnects. Returns true for a passive one, unlisted: the
 * caller queues its free_work (rdlm_conn_free() waits for err_work).
 */
static bool rdlm_conn_reset(struct rdlm_conn *conn)
{
	lockdep_assert_held(&rdlm_fabric.mutex);
	/* an established connection lost */
	if (test_bit(RDLM_CONN_F_ESTABLISHED, &conn->flags) &&
	    READ_ONCE(conn->state) != RDLM_CONN_IDLE)
		conn->reconnects++;
	rdlm_conn_stop(conn, true);
	if (conn->cm_id) {
		/* parked until the link is back (and polled, to be sure) */
		queue_delayed_work(rdlm_fabric.wq, &conn->err_work,
				   msecs_to_jiffies(RDLM_PARK_POLL_MS));
	} else if (conn->passive) {
		spin_lock(&rdlm_fabric.conn_lock);
		list_del(&conn->entry);
		spin_unlock(&rdlm_fabric.conn_lock);
		set_bit(RDLM_CONN_F_DEAD, &conn->flags);
		return true;
	} else if (conn->users) {
		rdlm_conn_schedule(conn);
	}
	return false;
}

static void rdlm_conn_err_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, err_work);
	bool gone = false;

	mutex_lock(&rdlm_fabric.mutex);
	if (!test_bit(RDLM_CONN_F_DEAD, &conn->flags))
		gone = rdlm_conn_reset(conn);
	mutex_unlock(&rdlm_fabric.mutex);
	/* not from here: rdlm_conn_free() waits for this work */
	if (gone)
		queue_work(rdlm_fabric.wq, &conn->free_work);
}

/**
 * rdlm_conn_reset_node() - tear down every connection with @node now
 * @node: peer node id
 *
 * When it returns, every work request posted on them has completed (the
 * QPs are drained or destroyed), so nothing sent either way lands later;
 * active connections reconnect as after any failure.
 * Context: process, rdlm_fabric.mutex held.
 */
void rdlm_conn_reset_node(u32 node)
{
	struct rdlm_conn *conn;
	bool again = true;

	lockdep_assert_held(&rdlm_fabric.mutex);
	/* a reset may unlist a connection: walk again from the start */
	while (again) {
		again = false;
		rdlm_for_each_conn(conn) {
			if (conn->node != node ||
			    test_bit(RDLM_CONN_F_DEAD, &conn->flags) ||
			    READ_ONCE(conn->state) == RDLM_CONN_IDLE)
				continue;
			if (rdlm_conn_reset(conn))
				queue_work(rdlm_fabric.wq, &conn->free_work);
			again = true;
			break;
		}
	}
}

static void rdlm_conn_free_work(struct work_struct *work)
{
	rdlm_conn_free(container_of(work, struct rdlm_conn, free_work));
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
		queue_delayed_work(rdlm_fabric.wq, &conn->err_work, 0);
	}
	spin_unlock_bh(&conn->lock);
}

static void rdlm_conn_connect_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(to_delayed_work(work),
					      struct rdlm_conn, connect_work);
	struct rdma_cm_id *cm_id;
	int ret;

	mutex_lock(&rdlm_fabric.mutex);
	if (test_bit(RDLM_CONN_F_DEAD, &conn->flags) || !conn->users ||
	    conn->state != RDLM_CONN_IDLE)
		goto out;
	if (conn->cm_id) {
		/* parked: gone only once the link is back */
		rdlm_conn_stop(conn, true);
		if (conn->cm_id) {
			queue_delayed_work(rdlm_fabric.wq, &conn->connect_work,
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
	clear_bit(RDLM_CONN_F_ESTABLISHED, &conn->flags);
	spin_lock_bh(&conn->lock);
	conn->state = RDLM_CONN_CONNECTING;
	conn->connect_start = jiffies;
	spin_unlock_bh(&conn->lock);
	mod_delayed_work(rdlm_fabric.watch_wq, &conn->timeout_work,
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
	mutex_unlock(&rdlm_fabric.mutex);
}

/*
 * Connection is up, or the peer asked for our tables: exchange tables for
 * every lockspace it serves. An export that exists is described again with
 * the same keys, never re-registered: the peer may already be posting with
 * them, and a verb on an invalidated key fails its whole connection.
 */
static void rdlm_conn_up_work(struct work_struct *work)
{
	struct rdlm_conn *conn = container_of(work, struct rdlm_conn, up_work);
	struct rdlm_fabric_ls *ls;

	mutex_lock(&rdlm_fabric.mutex);
	if (test_bit(RDLM_CONN_F_DEAD, &conn->flags) ||
	    READ_ONCE(conn->state) != RDLM_CONN_LIVE)
		goto out;
	list_for_each_entry(ls, &rdlm_fabric.lockspaces, entry) {
		/* a fenced member learns nothing of the lockspace */
		if (ls->dead || !rdlm_fabric_ls_admits(ls, conn->node))
			continue;
		if (!conn->passive) {
			rdlm_conn_request_tables(conn, ls);
			continue;
		}
		/* only to an incarnation that asked here (its TABLE_REQ) */
		if (READ_ONCE(rdlm_fabric_ls_member(ls, conn->node)->asked) ==
		    conn)
			rdlm_conn_export(conn, ls);
	}
out:
	mutex_unlock(&rdlm_fabric.mutex);
}

/*
 * An admitted member whose table never came is asked again: a request or
 * its answer (a TABLE, or GONE that tells a fenced incarnation to stop)
 * can be lost with a connection that fails in between, and nothing else
 * asks again while this one stays up.
 */
static void rdlm_conn_reask_tables(struct rdlm_conn *conn)
{
	struct rdlm_fabric_ls *ls;
	struct rdlm_member *m;

	rcu_read_lock();
	list_for_each_entry_rcu(ls, &rdlm_fabric.lockspaces, entry) {
		if (READ_ONCE(ls->dead) || !rdlm_fabric_ls_admits(ls, conn->node))
			continue;
		m = rdlm_fabric_ls_member(ls, conn->node);
		if (m && !READ_ONCE(m->remote.ready))
			rdlm_conn_request_tables(conn, ls);
	}
	rcu_read_unlock();
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
	if (!conn->passive && !time_before(jiffies, conn->reask_at)) {
		conn->reask_at = jiffies + RDLM_REASK_PERIODS * period;
		rdlm_conn_reask_tables(conn);
	}
	if (!conn->passive &&
	    !time_before(jiffies, READ_ONCE(conn->last_msg_out) + period)) {
		op = rdlm_msg_alloc(conn, RDLM_W_HEARTBEAT,
				    sizeof(struct rdlm_wire_hdr),
				    conn->local, 0);
		if (op)
			rdlm_msg_send(op);
	}
	/* credits a failed allocation in rdlm_recv_done() did not return */
	if (conn->passive && READ_ONCE(conn->to_return) >= RDLM_CREDIT_BATCH) {
		op = rdlm_msg_alloc(conn, RDLM_W_CREDIT,
				    sizeof(struct rdlm_wire_hdr),
				    conn->local, 0);
		if (op)
			rdlm_msg_send(op);
	}
	queue_delayed_work(rdlm_fabric.watch_wq, &conn->hb_work, period);
}

/**
 * rdlm_conn_alloc() - allocate an idle connection
 * @passive: accepted (true) or initiated (false)
 * @node: peer node id
 * @local: our node id
 *
 * Return: the connection or NULL.
 */
struct rdlm_conn *rdlm_conn_alloc(bool passive, u32 node, u32 local)
{
	struct rdlm_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	conn->passive = passive;
	conn->node = node;
	conn->local = local;
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
	INIT_DELAYED_WORK(&conn->unexport_work, rdlm_conn_unexport_work);
	INIT_WORK(&conn->free_work, rdlm_conn_free_work);
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
 * Context: process, rdlm_fabric.mutex NOT held (its works take it).
 */
void rdlm_conn_free(struct rdlm_conn *conn)
{
	cancel_delayed_work_sync(&conn->connect_work);
	cancel_delayed_work_sync(&conn->err_work);
	cancel_work_sync(&conn->up_work);
	cancel_delayed_work_sync(&conn->hb_work);
	cancel_delayed_work_sync(&conn->timeout_work);
	cancel_delayed_work_sync(&conn->unexport_work);
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
	u32 node, local;
	int ret;

	if (!p || ev->param.conn.private_data_len < sizeof(*p) ||
	    le32_to_cpu(p->magic) != RDLM_WIRE_MAGIC ||
	    p->version != RDLM_WIRE_VERSION) {
		atomic64_inc(&rdlm_fabric.rejected);
		pr_info_ratelimited("refused connection from %pISc: not rdlm\n",
				    peer);
		goto reject;
	}
	node = le32_to_cpu(p->nodeid);
	if (!rdlm_node_allowed(node, peer)) {
		atomic64_inc(&rdlm_fabric.rejected);
		pr_info_ratelimited("refused connection from %pISc: not a configured node %u\n",
				    peer, node);
		goto reject;
	}
	local = rdlm_local_node();
	if (!local)
		goto reject;	/* our last lockspace is going */
	conn = rdlm_conn_alloc(true, node, local);
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
	set_bit(RDLM_CONN_F_QP_USED, &conn->flags);
	spin_unlock_bh(&conn->lock);
	spin_lock(&rdlm_fabric.conn_lock);
	/* a reconnecting peer replaces its previous connection */
	list_for_each_entry(old, &rdlm_fabric.conns, entry)
		if (old->passive && old->node == node)
			rdlm_conn_error(old);
	/* walkers holding only rdlm_fabric.mutex may see it appear */
	list_add_tail_rcu(&conn->entry, &rdlm_fabric.conns);
	spin_unlock(&rdlm_fabric.conn_lock);
	return 0;

free:
	cm_id->context = NULL;
	clear_bit(RDLM_CONN_F_QP_USED, &conn->flags);
	if (conn->dev)
		rdlm_conn_free_ib(conn, cm_id);
	/* never listed, no work queued: not rdlm_conn_free() in a handler */
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
		.nodeid = cpu_to_le32(conn->local),
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
			set_bit(RDLM_CONN_F_ESTABLISHED, &conn->flags);
			set_bit(RDLM_CONN_F_QP_USED, &conn->flags);
			conn->backoff_ms = RDLM_BACKOFF_MIN_MS;
			conn->last_alive = jiffies;
			conn->last_msg_out = jiffies;
			conn->reask_at = jiffies + RDLM_REASK_PERIODS *
				msecs_to_jiffies(max(rdlm_heartbeat_ms, 10U));
		}
		spin_unlock_bh(&conn->lock);
		queue_work(rdlm_fabric.wq, &conn->up_work);
		mod_delayed_work(rdlm_fabric.watch_wq, &conn->hb_work,
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

