// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the RDMA fabric, the only part of rdlm that touches verbs.
 *
 * This file holds the devices (an ib_client; removal may come from module
 * unload or from the device going away under us, `rdma link delete`, so
 * remove frees everything tied to the device before it returns), the
 * lockspaces' tables, the listener and the debugfs view. The connection
 * state machine is in fabric_conn.c, work requests and completions in
 * fabric_wr.c, table export in fabric_export.c, the self-test in
 * fabric_selftest.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/netdevice.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>

#include "fabric_priv.h"

unsigned int rdlm_heartbeat_ms = 1000;
module_param_named(heartbeat_ms, rdlm_heartbeat_ms, uint, 0644);
MODULE_PARM_DESC(heartbeat_ms,
		 "Idle time before a heartbeat is sent to a peer (ms, default 1000)");

unsigned int rdlm_heartbeat_miss = 5;
module_param_named(heartbeat_miss, rdlm_heartbeat_miss, uint, 0644);
MODULE_PARM_DESC(heartbeat_miss,
		 "Heartbeat periods without a completion before a connection is declared lost (default 5)");

unsigned int rdlm_connect_timeout_ms = 3000;
module_param_named(connect_timeout_ms, rdlm_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "A connection attempt not established after this long is abandoned and retried (ms, default 3000)");

unsigned int rdlm_ack_timeout = 18;
module_param_named(ack_timeout, rdlm_ack_timeout, uint, 0444);
MODULE_PARM_DESC(ack_timeout,
		 "RC ACK timeout exponent: 4.096us << n, 6 retries (default 18 = 1.07 s: TCG guests stall)");

struct rdlm_fabric rdlm_fabric = {
	.mutex = __MUTEX_INITIALIZER(rdlm_fabric.mutex),
	.conn_lock = __SPIN_LOCK_UNLOCKED(rdlm_fabric.conn_lock),
	.conns = LIST_HEAD_INIT(rdlm_fabric.conns),
	.lockspaces = LIST_HEAD_INIT(rdlm_fabric.lockspaces),
	.devices = LIST_HEAD_INIT(rdlm_fabric.devices),
};

/* ---- devices -------------------------------------------------------- */

/**
 * rdlm_dev_link_down() - is the link under an RDMA device down?
 * @dev: device, or NULL
 *
 * Set from NETDEV_GOING_DOWN (before the netdev stops sending) or
 * IB_EVENT_PORT_ERR, cleared by NETDEV_UP / a carrier or IB_EVENT_PORT_ACTIVE.
 * While it is set no CM message may be sent: see rdlm_dev_cm_risk().
 *
 * Return: true if down.
 */
bool rdlm_dev_link_down(struct rdlm_device *dev)
{
	return dev && test_bit(RDLM_DEV_LINK_DOWN, &dev->flags);
}

/**
 * rdlm_dev_cm_risk() - a CM message may have been sent while the link was down
 * @dev: device
 * @why: what happened
 * @node: peer concerned
 *
 * rxe (6.1) fails such a send and moves QP1 into the error state; ib_mad
 * moves it back to RTS, but rxe leaves its responder in the error state,
 * so the device never receives a CM message again. Say so once.
 */
void rdlm_dev_cm_risk(struct rdlm_device *dev, const char *why, u32 node)
{
	if (!dev || test_and_set_bit(RDLM_DEV_CM_RISK, &dev->flags))
		return;
	pr_info("%s: %s (node %u) while the link was down: the device may have lost its CM queue pair (rxe 6.1); if connections over it do not come back, re-create it (rdma link delete/add)\n",
		dev_name(&dev->ibdev->dev), why, node);
}

static void rdlm_dev_set_link(struct rdlm_device *dev, bool down)
{
	if (down) {
		if (!test_and_set_bit(RDLM_DEV_LINK_DOWN, &dev->flags))
			queue_work(rdlm_fabric.wq, &dev->link_work);
	} else if (test_and_clear_bit(RDLM_DEV_LINK_DOWN, &dev->flags)) {
		WRITE_ONCE(dev->link_up_at, jiffies);
		queue_work(rdlm_fabric.wq, &dev->link_work);
	}
}

/* The link changed: fail connections at once, or bring them back now. */
static void rdlm_dev_link_work(struct work_struct *work)
{
	struct rdlm_device *dev = container_of(work, struct rdlm_device,
					       link_work);
	bool down = rdlm_dev_link_down(dev);
	struct rdlm_conn *conn;

	mutex_lock(&rdlm_fabric.mutex);
	if (down)
		dev->link_downs++;
	pr_info("%s: link %s\n", dev_name(&dev->ibdev->dev),
		down ? "down: connections over it fail now" :
		       "up: reconnecting");
	rdlm_for_each_conn(conn)
		if (conn->dev == dev || conn->id_dev == dev ||
		    (!down && !conn->passive && !conn->dev))
			rdlm_conn_link_event(conn, down);
	mutex_unlock(&rdlm_fabric.mutex);
}

static int rdlm_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct rdlm_device *dev;
	struct ib_device *ibdev;
	bool down;

	switch (event) {
	case NETDEV_GOING_DOWN:	/* before the device stops sending */
	case NETDEV_DOWN:
		down = true;
		break;
	case NETDEV_UP:
	case NETDEV_CHANGE:
		down = !netif_running(ndev) || !netif_carrier_ok(ndev);
		break;
	default:
		return NOTIFY_DONE;
	}
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return NOTIFY_DONE;
	rcu_read_lock();
	dev = ib_get_client_data(ibdev, &rdlm_ib_client);
	if (dev)
		rdlm_dev_set_link(dev, down);
	rcu_read_unlock();
	ib_device_put(ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block rdlm_netdev_nb = {
	.notifier_call = rdlm_netdev_event,
};

static void rdlm_ib_event(struct ib_event_handler *handler,
			  struct ib_event *ev)
{
	struct rdlm_device *dev = container_of(handler, struct rdlm_device,
					       event_handler);

	if (ev->event == IB_EVENT_PORT_ERR)
		rdlm_dev_set_link(dev, true);
	else if (ev->event == IB_EVENT_PORT_ACTIVE)
		rdlm_dev_set_link(dev, false);
}

static int rdlm_add_one(struct ib_device *ibdev)
{
	struct ib_port_attr attr;
	struct rdlm_device *dev;
	struct rdlm_conn *conn;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		int ret = PTR_ERR(dev->pd);

		kfree(dev);
		return ret;
	}
	INIT_WORK(&dev->link_work, rdlm_dev_link_work);
	dev->link_up_at = jiffies;
	if (!ib_query_port(ibdev, rdma_start_port(ibdev), &attr) &&
	    attr.state != IB_PORT_ACTIVE)
		set_bit(RDLM_DEV_LINK_DOWN, &dev->flags);
	INIT_IB_EVENT_HANDLER(&dev->event_handler, ibdev, rdlm_ib_event);
	ib_register_event_handler(&dev->event_handler);

	mutex_lock(&rdlm_fabric.mutex);
	list_add_tail(&dev->entry, &rdlm_fabric.devices);
	ib_set_client_data(ibdev, &rdlm_ib_client, dev);
	/* connections waiting for a device need not wait for their backoff */
	rdlm_for_each_conn(conn)
		if (!conn->passive && conn->users)
			mod_delayed_work(rdlm_fabric.wq, &conn->connect_work, 0);
	mutex_unlock(&rdlm_fabric.mutex);
	pr_info("added RDMA device %s\n", dev_name(&ibdev->dev));
	return 0;
}

static void rdlm_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rdlm_device *dev = client_data;
	struct rdlm_conn *conn, *tmp;
	LIST_HEAD(dead);

	ib_unregister_event_handler(&dev->event_handler);
	mutex_lock(&rdlm_fabric.mutex);
	list_for_each_entry_safe(conn, tmp, &rdlm_fabric.conns, entry) {
		if (conn->dev != dev && conn->id_dev != dev &&
		    !(conn->cm_id && !conn->id_dev))
			continue;
		rdlm_conn_teardown(conn);
		if (conn->passive) {
			rdlm_conn_unlist(conn, &dead);
		} else if (conn->users) {
			conn->reconnects++;
			mod_delayed_work(rdlm_fabric.wq, &conn->connect_work,
					 msecs_to_jiffies(conn->backoff_ms));
		}
	}
	ib_set_client_data(ibdev, &rdlm_ib_client, NULL);
	list_del(&dev->entry);
	mutex_unlock(&rdlm_fabric.mutex);
	/* the netdev notifier finds the device under RCU */
	synchronize_rcu();
	cancel_work_sync(&dev->link_work);

	list_for_each_entry_safe(conn, tmp, &dead, entry)
		rdlm_conn_free(conn);
	ib_dealloc_pd(dev->pd);
	pr_info("removed RDMA device %s\n", dev_name(&ibdev->dev));
	kfree(dev);
}

struct ib_client rdlm_ib_client = {
	.name	= "rdlm",
	.add	= rdlm_add_one,
	.remove	= rdlm_remove_one,
};

/* ---- lockspaces ----------------------------------------------------- */

/**
 * rdlm_fabric_ls_by_lsid() - find an enabled lockspace by wire id
 * @lsid: wire id
 *
 * Context: rcu_read_lock() or rdlm_fabric.mutex held.
 * Return: the lockspace or NULL.
 */
struct rdlm_fabric_ls *rdlm_fabric_ls_by_lsid(u32 lsid)
{
	struct rdlm_fabric_ls *ls;
	u32 i;

	for (i = 0; i < RDLM_MAX_LOCKSPACES; i++) {
		ls = rcu_dereference_check(rdlm_fabric.ls_index[i],
					   lockdep_is_held(&rdlm_fabric.mutex));
		if (ls && ls->lsid == lsid)
			return ls;
	}
	return NULL;
}

/**
 * rdlm_fabric_ls_by_index() - find an enabled lockspace by local index
 * @index: index carried in WRITE_WITH_IMM immediate data
 *
 * Context: rcu_read_lock().
 * Return: the lockspace or NULL.
 */
struct rdlm_fabric_ls *rdlm_fabric_ls_by_index(u32 index)
{
	if (index >= RDLM_MAX_LOCKSPACES)
		return NULL;
	return rcu_dereference(rdlm_fabric.ls_index[index]);
}

/**
 * rdlm_fabric_ls_member() - a lockspace's member entry for @node
 * @ls: lockspace
 * @node: node id
 *
 * Return: the member or NULL.
 */
struct rdlm_member *rdlm_fabric_ls_member(struct rdlm_fabric_ls *ls, u32 node)
{
	u32 i;

	for (i = 0; i < ls->nr_members; i++)
		if (ls->members[i].cfg.nodeid == node)
			return &ls->members[i];
	return NULL;
}

/**
 * rdlm_fabric_ls_admits() - may @node take part in @ls (a member, not fenced)?
 * @ls: lockspace
 * @node: node id
 *
 * Return: true if its messages and table are taken.
 */
bool rdlm_fabric_ls_admits(struct rdlm_fabric_ls *ls, u32 node)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);

	return m && !READ_ONCE(m->fenced);
}

/**
 * rdlm_fabric_ls_word_ptr() - CPU address of a lock word of the local table
 * @ls: lockspace
 * @slot: slot, < ls->nr_slots
 *
 * Return: the word.
 */
u64 *rdlm_fabric_ls_word_ptr(struct rdlm_fabric_ls *ls, u32 slot)
{
	const u32 per_page = PAGE_SIZE / sizeof(u64);

	return (u64 *)page_address(ls->pages[slot / per_page]) +
	       slot % per_page;
}

/**
 * rdlm_fabric_ls_mbox_ptr() - CPU address of a mailbox slot
 * @ls: lockspace
 * @slot: slot, < ls->nr_mbox
 *
 * Return: the entry.
 */
struct rdlm_mbox_entry *rdlm_fabric_ls_mbox_ptr(struct rdlm_fabric_ls *ls, u32 slot)
{
	const u32 per_page = PAGE_SIZE / sizeof(struct rdlm_mbox_entry);

	return (struct rdlm_mbox_entry *)page_address(ls->mbox_pages[slot / per_page]) +
	       slot % per_page;
}

/**
 * rdlm_fabric_ls_deliver() - hand an incoming message to the lockspace's user
 * @ls: lockspace
 * @rx: what arrived
 *
 * Without a user (no lock manager attached), or once the self-test claimed
 * the lockspace, the self-test accounts it.
 */
void rdlm_fabric_ls_deliver(struct rdlm_fabric_ls *ls, const struct rdlm_rx *rx)
{
	/* pairs with smp_store_release() in rdlm_fabric_ls_set_ops() */
	const struct rdlm_fabric_ls_ops *ops = smp_load_acquire(&ls->ops);

	if (ops && ops->recv && !test_bit(RDLM_LS_CLAIMED, &ls->flags))
		ops->recv(ls->priv, rx);
	else
		rdlm_selftest_rx(ls, rx);
}

/**
 * rdlm_fabric_ls_peer_event() - report a member's reachability to the user
 * @ls: lockspace
 * @node: member
 * @up: its table is known (true) or it became unreachable (false)
 */
void rdlm_fabric_ls_peer_event(struct rdlm_fabric_ls *ls, u32 node, bool up)
{
	/* pairs with smp_store_release() in rdlm_fabric_ls_set_ops() */
	const struct rdlm_fabric_ls_ops *ops = smp_load_acquire(&ls->ops);

	if (ops && ops->peer)
		ops->peer(ls->priv, node, up);
}

static bool rdlm_addr_same_host(const struct sockaddr *a,
				const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return false;
}

/**
 * rdlm_node_allowed() - may @addr connect to us claiming to be @node?
 * @node: node id from the connection request
 * @addr: source address of the request
 *
 * Only members of an enabled lockspace, from their configured address.
 * Return: true if so.
 */
bool rdlm_node_allowed(u32 node, const struct sockaddr *addr)
{
	struct rdlm_conn *conn;
	bool ok = false;

	spin_lock(&rdlm_fabric.conn_lock);
	list_for_each_entry(conn, &rdlm_fabric.conns, entry) {
		if (!conn->passive && conn->node == node && conn->users &&
		    rdlm_addr_same_host((struct sockaddr *)&conn->addr, addr)) {
			ok = true;
			break;
		}
	}
	spin_unlock(&rdlm_fabric.conn_lock);
	return ok;
}

/**
 * rdlm_kick_active() - our connection to @node should try now
 * @node: a peer whose connection to us just came up
 *
 * The peer is reachable again: if our own connection to it waits for its
 * backoff, it connects now; an attempt older than a second (its REQ may
 * have been lost while the peer was away, and the CM resends it only after
 * seconds) is abandoned and started again. Context: any but hard irq.
 */
void rdlm_kick_active(u32 node)
{
	struct rdlm_conn *conn;

	spin_lock(&rdlm_fabric.conn_lock);
	list_for_each_entry(conn, &rdlm_fabric.conns, entry) {
		if (conn->passive || conn->node != node || !conn->users)
			continue;
		spin_lock_bh(&conn->lock);
		if (conn->state == RDLM_CONN_IDLE) {
			conn->backoff_ms = 0;
			mod_delayed_work(rdlm_fabric.wq, &conn->connect_work, 0);
		} else if (conn->state == RDLM_CONN_CONNECTING &&
			   time_after(jiffies, conn->connect_start + HZ)) {
			conn->backoff_ms = 0;
			conn->state = RDLM_CONN_ERROR;
			queue_delayed_work(rdlm_fabric.wq, &conn->err_work, 0);
		}
		spin_unlock_bh(&conn->lock);
	}
	spin_unlock(&rdlm_fabric.conn_lock);
}

static struct rdlm_conn *rdlm_active_conn(u32 node)
{
	struct rdlm_conn *conn;

	rdlm_for_each_conn(conn)
		if (!conn->passive && conn->node == node)
			return conn;
	return NULL;
}

static int rdlm_listen(const struct sockaddr_storage *local)
{
	struct sockaddr_storage any = {};
	struct rdma_cm_id *id;
	u16 port;
	int ret;

	if (local->ss_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&any;

		s->sin6_family = AF_INET6;
		port = ntohs(((const struct sockaddr_in6 *)local)->sin6_port);
		s->sin6_port = htons(port);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&any;

		s->sin_family = AF_INET;
		port = ntohs(((const struct sockaddr_in *)local)->sin_port);
		s->sin_port = htons(port);
	}
	if (rdlm_fabric.listener)
		return port == rdlm_fabric.listen_port ? 0 : -EADDRINUSE;

	id = rdma_create_id(&init_net, rdlm_conn_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	/* any address: the CM keeps the listen across device remove/add */
	ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (!ret)
		ret = rdma_listen(id, 64);
	if (ret) {
		pr_info("cannot listen on port %u: %d\n", port, ret);
		rdma_destroy_id(id);
		return ret;
	}
	rdlm_fabric.listener = id;
	rdlm_fabric.listen_port = port;
	return 0;
}

static int rdlm_ls_alloc_pages(struct page ***pagesp, u32 nr)
{
	struct page **pages;
	u32 i;

	pages = kvcalloc(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	*pagesp = pages;
	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i])
			return -ENOMEM;
	}
	return 0;
}

static void rdlm_fabric_ls_free_pages(struct page **pages, u32 nr)
{
	u32 i;

	for (i = 0; pages && i < nr; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

static void rdlm_fabric_ls_release(struct kref *ref)
{
	struct rdlm_fabric_ls *ls = container_of(ref, struct rdlm_fabric_ls,
						 ref);

	rdlm_fabric_ls_free_pages(ls->pages, ls->nr_pages);
	rdlm_fabric_ls_free_pages(ls->mbox_pages, ls->nr_mbox_pages);
	kvfree(ls);
}

/* Drop @ls's hold on its members' connections; the unused ones go. */
static void rdlm_fabric_ls_drop_conns(struct rdlm_fabric_ls *ls,
				      struct list_head *dead)
{
	struct rdlm_conn *conn;
	u32 i;

	for (i = 0; i < ls->nr_members; i++) {
		conn = ls->members[i].conn;
		if (!conn || --conn->users)
			continue;
		rdlm_conn_teardown(conn);
		rdlm_conn_unlist(conn, dead);
	}
}

static int rdlm_ls_check_cfg(const struct rdlm_fabric_ls_cfg *cfg)
{
	bool self = false;
	u32 i;

	if (!cfg->nr_members || cfg->nr_members > RDLM_MAX_MEMBERS ||
	    !cfg->nr_slots || cfg->nr_slots > RDLM_MAX_SLOTS ||
	    !cfg->nr_mbox || cfg->nr_mbox > RDLM_MAX_MBOX ||
	    cfg->atomic_mode > RDLM_ATOMIC_CPU || !cfg->name[0] ||
	    cfg->nr_records > RDLM_MAX_RECORDS || cfg->lvb_len > U16_MAX ||
	    strnlen(cfg->engine, sizeof(cfg->engine)) == sizeof(cfg->engine) ||
	    !cfg->local.nodeid || cfg->local.nodeid > RDLM_MAX_NODEID)
		return -EINVAL;
	for (i = 0; i < cfg->nr_members; i++)
		self |= cfg->members[i].nodeid == cfg->local.nodeid;
	return self ? 0 : -EINVAL;
}

/*
 * Verbs to this node that its CPU carries out (rdlm_fabric_ls_post_self()),
 * queued in posting order on ls->local_ops. An entry stays on the queue
 * until it has been carried out, so that a later verb to this node sees it
 * and queues behind it.
 */
struct rdlm_local_op {
	struct list_head entry;
	struct rdlm_verb v;
	rdlm_fabric_done_t done;
	void *ctx;
	u32 gen;		/* this node's connection generation at the post */
	bool applied;		/* carried out, only the completion is left */
	bool busy;		/* the work item is carrying it out */
	struct rdlm_cqe res;
};

/* An FA, CAS or READ on a word of the table */
static bool rdlm_fabric_ls_table_verb(struct rdlm_fabric_ls *ls,
				      const struct rdlm_verb *v)
{
	return v->slot < ls->nr_slots && !(v->flags & RDLM_VF_RECORD) &&
	       (v->kind == RDLM_VERB_FA || v->kind == RDLM_VERB_CAS ||
		v->kind == RDLM_VERB_READ);
}

/* ... that this node's CPU applies to its own table */
static bool rdlm_fabric_ls_cpu_verb(struct rdlm_fabric_ls *ls,
				    const struct rdlm_verb *v)
{
	return ls->atomic_mode == RDLM_ATOMIC_CPU &&
	       rdlm_fabric_ls_table_verb(ls, v);
}

static bool rdlm_fabric_ls_msg_verb(struct rdlm_fabric_ls *ls,
				    const struct rdlm_verb *v)
{
	return v->kind == RDLM_VERB_SEND ||
	       (v->kind == RDLM_VERB_WRITE_IMM && v->slot < ls->nr_mbox);
}

/* Apply a CPU atomic to the local table. Caller holds ls->lock. */
static bool rdlm_fabric_ls_apply_locked(struct rdlm_fabric_ls *ls,
					struct rdlm_local_op *lo)
{
	u64 *word = rdlm_fabric_ls_word_ptr(ls, lo->v.slot);
	u64 new;

	lo->res.value = READ_ONCE(*word);
	new = rdlm_word_apply(lo->res.value, lo->v.kind, lo->v.arg0,
			      lo->v.arg1);
	WRITE_ONCE(*word, new);
	return new != lo->res.value;
}

/* Hand a SEND or WRITE_WITH_IMM to this node's receive path. */
static void rdlm_fabric_ls_deliver_self(struct rdlm_fabric_ls *ls,
					const struct rdlm_verb *v)
{
	struct rdlm_rx rx = {
		.kind = v->kind,
		.src = ls->local,
	};

	if (v->kind == RDLM_VERB_SEND) {
		rx.msg = v->msg;
	} else {
		rx.slot = v->slot;
		rx.value = v->arg0;
		rx.imm = v->imm;
	}
	/* as the receive path: quiesce and detaching wait for this section */
	rcu_read_lock();
	local_bh_disable();
	rdlm_fabric_ls_deliver(ls, &rx);
	local_bh_enable();
	rcu_read_unlock();
}

/* The entry's verb has been carried out: take it off and complete it. */
static void rdlm_fabric_ls_local_done(struct rdlm_fabric_ls *ls,
				      struct rdlm_local_op *lo)
{
	spin_lock_bh(&ls->lock);
	list_del(&lo->entry);
	spin_unlock_bh(&ls->lock);
	/* as rdlm_op_complete(): quiesce waits for this section */
	rcu_read_lock();
	if (lo->done)
		lo->done(lo->ctx, &lo->res);
	if (atomic_dec_and_test(&ls->inflight))
		wake_up(&ls->wait);
	rcu_read_unlock();
	kfree(lo);
}

/*
 * Carry out the queue in order. An entry not yet carried out waits while
 * a verb to this node is in flight on the network (one posted before it):
 * rdlm_fabric_ls_self_idle() runs the work again when the last completes.
 */
static void rdlm_fabric_ls_local_work(struct work_struct *work)
{
	struct rdlm_fabric_ls *ls = container_of(work, struct rdlm_fabric_ls,
						 local_work);
	struct rdlm_member *self = rdlm_fabric_ls_member(ls, ls->local);
	struct rdlm_local_op *lo;
	enum { APPLIED, DELIVER, POST } what;
	int ret;

	for (;;) {
		spin_lock_bh(&ls->lock);
		lo = list_first_entry_or_null(&ls->local_ops,
					      struct rdlm_local_op, entry);
		if (lo && !lo->applied && atomic_read(&ls->inflight_self))
			lo = NULL;
		if (!lo) {
			spin_unlock_bh(&ls->lock);
			return;
		}
		what = APPLIED;
		if (lo->applied) {
			/* only its completion was left */
		} else if (READ_ONCE(ls->dead) || !self->remote.ready ||
			   self->gen != lo->gen) {
			/* as a verb the network flushed */
			lo->res.status = -ECONNRESET;
		} else if (rdlm_fabric_ls_cpu_verb(ls, &lo->v)) {
			rdlm_fabric_ls_apply_locked(ls, lo);
		} else if (rdlm_fabric_ls_msg_verb(ls, &lo->v)) {
			what = DELIVER;
		} else {
			what = POST;
		}
		/* rdlm_fabric_ls_self_down() leaves it to us, and waits */
		lo->busy = true;
		spin_unlock_bh(&ls->lock);

		if (what == DELIVER) {
			rdlm_fabric_ls_deliver_self(ls, &lo->v);
		} else if (what == POST) {
			/* a NIC verb queued behind the others: its turn */
			ret = rdlm_fabric_ls_post(ls, &lo->v, lo->done, lo->ctx);
			if (!ret)
				lo->done = NULL;	/* the network completes it */
			lo->res.status = ret;
		}
		rdlm_fabric_ls_local_done(ls, lo);
		cond_resched();
	}
}

/**
 * rdlm_fabric_ls_self_down() - this node's own connection failed
 * @ls: lockspace, this node's member just forgotten (generation changed)
 *
 * What the queue has not carried out fails now, as the network fails what
 * it did not deliver, and an entry being carried out finishes first: the
 * user hears that this node is down only after all that.
 * Context: process, rdlm_fabric.mutex held, before the peer event.
 */
void rdlm_fabric_ls_self_down(struct rdlm_fabric_ls *ls)
{
	struct rdlm_local_op *lo, *tmp;
	LIST_HEAD(failed);

	spin_lock_bh(&ls->lock);
	list_for_each_entry_safe(lo, tmp, &ls->local_ops, entry)
		if (!lo->applied && !lo->busy)
			list_move_tail(&lo->entry, &failed);
	spin_unlock_bh(&ls->lock);
	list_for_each_entry_safe(lo, tmp, &failed, entry) {
		lo->res.status = -ECONNRESET;
		rdlm_fabric_ls_local_done(ls, lo);
	}
	flush_work(&ls->local_work);
}

/*
 * The last verb to this node in flight on the network completed: the
 * queue may go on. Pairs with the barrier in rdlm_fabric_ls_post_self().
 */
void rdlm_fabric_ls_self_idle(struct rdlm_fabric_ls *ls)
{
	if (!list_empty(&ls->local_ops))
		queue_work(system_highpri_wq, &ls->local_work);
}

/**
 * rdlm_fabric_ls_create() - bring up a lockspace's fabric side
 * @cfg: lockspace configuration
 * @lsp: the new lockspace, on success
 *
 * Allocates the local table and mailbox, starts the listener if needed and
 * opens (or shares) a connection to every member, this node included. The
 * members' tables become usable asynchronously: see rdlm_fabric_ls_ready()
 * and &rdlm_fabric_ls_ops.peer. Context: process, may sleep.
 *
 * Return: 0, -EINVAL for a bad configuration, -EEXIST if a lockspace with
 * that name (or wire id) exists, -ENOSPC, -EADDRINUSE, -ENOMEM.
 */
int rdlm_fabric_ls_create(const struct rdlm_fabric_ls_cfg *cfg,
			  struct rdlm_fabric_ls **lsp)
{
	struct rdlm_fabric_ls *ls, *other;
	struct rdlm_conn *conn;
	LIST_HEAD(dead);
	u32 i, index;
	int ret;

	ret = rdlm_ls_check_cfg(cfg);
	if (ret)
		return ret;
	ls = kvzalloc(struct_size(ls, members, cfg->nr_members), GFP_KERNEL);
	if (!ls)
		return -ENOMEM;
	kref_init(&ls->ref);
	strscpy(ls->name, cfg->name, sizeof(ls->name));
	ls->lsid = jhash(ls->name, strlen(ls->name), 0x52444c4d) | 1;
	ls->local = cfg->local.nodeid;
	ls->atomic_mode = cfg->atomic_mode;
	/* a node's lockspaces of one name never share one (1 in 2^63) */
	ls->incarnation = get_random_u64() | 1;
	ls->lease_us = cfg->lease_us;
	ls->lvb_len = cfg->lvb_len;
	strscpy(ls->engine, cfg->engine, sizeof(ls->engine));
	ls->nr_slots = cfg->nr_slots;
	ls->nr_mbox = cfg->nr_mbox;
	/* a peer READs records from an MR: none without one (CPU mode) */
	if (cfg->atomic_mode == RDLM_ATOMIC_NIC)
		ls->nr_records = cfg->nr_records;
	spin_lock_init(&ls->lock);
	init_waitqueue_head(&ls->wait);
	atomic_set(&ls->inflight, 0);
	atomic_set(&ls->inflight_self, 0);
	atomic64_set(&ls->local_atomics, 0);
	atomic64_set(&ls->local_msgs, 0);
	INIT_LIST_HEAD(&ls->local_ops);
	INIT_WORK(&ls->local_work, rdlm_fabric_ls_local_work);
	ls->nr_members = cfg->nr_members;
	for (i = 0; i < cfg->nr_members; i++)
		ls->members[i].cfg = cfg->members[i];
	ls->nr_record_pages = DIV_ROUND_UP(ls->nr_records * RDLM_RECORD_SIZE,
					   PAGE_SIZE);
	ls->nr_pages = DIV_ROUND_UP(ls->nr_slots * sizeof(u64), PAGE_SIZE) +
		       ls->nr_record_pages;
	ls->nr_mbox_pages = DIV_ROUND_UP(ls->nr_mbox *
					 sizeof(struct rdlm_mbox_entry),
					 PAGE_SIZE);
	ret = rdlm_ls_alloc_pages(&ls->pages, ls->nr_pages);
	if (!ret)
		ret = rdlm_ls_alloc_pages(&ls->mbox_pages, ls->nr_mbox_pages);
	if (ret)
		goto out_free;

	mutex_lock(&rdlm_fabric.mutex);
	ret = -EEXIST;
	list_for_each_entry(other, &rdlm_fabric.lockspaces, entry)
		if (other->lsid == ls->lsid || !strcmp(other->name, ls->name))
			goto out_unlock;
	ret = -ENOSPC;
	for (index = 0; index < RDLM_MAX_LOCKSPACES; index++)
		if (!rcu_access_pointer(rdlm_fabric.ls_index[index]))
			break;
	if (index == RDLM_MAX_LOCKSPACES)
		goto out_unlock;
	ls->index = index;
	ret = -EINVAL;
	other = list_first_entry_or_null(&rdlm_fabric.lockspaces, struct rdlm_fabric_ls,
					 entry);
	if (other && other->local != ls->local)
		goto out_unlock;	/* one node, one identity */
	ret = rdlm_listen(&cfg->local.addr);
	if (ret)
		goto out_unlock;

	for (i = 0; i < ls->nr_members; i++) {
		struct rdlm_member *m = &ls->members[i];

		conn = rdlm_active_conn(m->cfg.nodeid);
		if (conn && memcmp(&conn->addr, &m->cfg.addr,
				   sizeof(conn->addr))) {
			pr_info("lockspace %s: node %u has another address in a running lockspace\n",
				ls->name, m->cfg.nodeid);
			ret = -EINVAL;
			goto out_conns;
		}
		if (!conn) {
			conn = rdlm_conn_alloc(false, m->cfg.nodeid,
					       cfg->local.nodeid);
			if (!conn) {
				ret = -ENOMEM;
				goto out_conns;
			}
			conn->addr = m->cfg.addr;
			conn->src = cfg->local.addr;
			((struct sockaddr_in *)&conn->src)->sin_port = 0;
			spin_lock(&rdlm_fabric.conn_lock);
			list_add_tail_rcu(&conn->entry, &rdlm_fabric.conns);
			spin_unlock(&rdlm_fabric.conn_lock);
			queue_delayed_work(rdlm_fabric.wq, &conn->connect_work, 0);
		}
		conn->users++;
		m->conn = conn;
	}

	list_add_tail_rcu(&ls->entry, &rdlm_fabric.lockspaces);
	rcu_assign_pointer(rdlm_fabric.ls_index[index], ls);
	/* live connections exchange this lockspace's tables now */
	rdlm_for_each_conn(conn)
		if (rdlm_fabric_ls_member(ls, conn->node))
			queue_work(rdlm_fabric.wq, &conn->up_work);
	mutex_unlock(&rdlm_fabric.mutex);
	*lsp = ls;
	return 0;

out_conns:
	rdlm_fabric_ls_drop_conns(ls, &dead);
out_unlock:
	mutex_unlock(&rdlm_fabric.mutex);
	while ((conn = list_first_entry_or_null(&dead, struct rdlm_conn,
						entry))) {
		list_del(&conn->entry);
		rdlm_conn_free(conn);
	}
out_free:
	kref_put(&ls->ref, rdlm_fabric_ls_release);
	return ret;
}

/* Reset @ls's members' connections: the drain completes what they hold. */
static void rdlm_fabric_ls_reset_conns(struct rdlm_fabric_ls *ls)
{
	struct rdlm_conn *conn;
	u32 i;

	mutex_lock(&rdlm_fabric.mutex);
	for (i = 0; i < ls->nr_members; i++) {
		conn = ls->members[i].conn;
		if (conn)
			rdlm_conn_error(conn);
	}
	rdlm_for_each_conn(conn)
		if (conn->passive && rdlm_fabric_ls_member(ls, conn->node))
			rdlm_conn_error(conn);
	mutex_unlock(&rdlm_fabric.mutex);
}

/**
 * rdlm_fabric_ls_quiesce() - stop all traffic and callbacks of a lockspace
 * @ls: lockspace from rdlm_fabric_ls_create()
 *
 * From the call on, rdlm_fabric_post() on @ls fails with -ESHUTDOWN and no
 * message is delivered to it any more. Then it waits until every verb
 * posted before has completed, that is had its done callback called (with
 * an error for what the network did not deliver): connections that do not
 * deliver within 10 s are reset, which flushes them. Only then are members
 * told its table is gone (WITHDRAW, which a static lockspace's peers
 * recover from). When it returns, no done, recv or peer callback of @ls runs
 * or will ever run, so the user may free what they use; the fabric side
 * itself stays until rdlm_fabric_ls_destroy(). Idempotent.
 *
 * Context: process, may sleep; not under a lock a callback takes.
 */
void rdlm_fabric_ls_quiesce(struct rdlm_fabric_ls *ls)
{
	struct rdlm_conn *conn;
	bool withdraw;

	mutex_lock(&rdlm_fabric.mutex);
	if (ls->quiesced) {
		mutex_unlock(&rdlm_fabric.mutex);
		return;
	}
	withdraw = !ls->dead;
	if (!ls->dead) {
		WRITE_ONCE(ls->dead, true);
		list_del_rcu(&ls->entry);
		RCU_INIT_POINTER(rdlm_fabric.ls_index[ls->index], NULL);
	}
	mutex_unlock(&rdlm_fabric.mutex);
	/*
	 * Posts check ls->dead and count themselves in ls->inflight inside
	 * one RCU read section; deliveries and the peer events of incoming
	 * messages run inside one too; process-context peer events walk
	 * rdlm_fabric.lockspaces under the mutex, which no longer holds @ls.
	 */
	synchronize_rcu();

	if (!wait_event_timeout(ls->wait, !atomic_read(&ls->inflight),
				10 * HZ)) {
		pr_info("lockspace %s: verbs still in flight, resetting connections\n",
			ls->name);
		rdlm_fabric_ls_reset_conns(ls);
		wait_event(ls->wait, !atomic_read(&ls->inflight));
	}
	/* its last completion ran; the work may still be looking for more */
	flush_work(&ls->local_work);
	/* completions decrement and wake inside an RCU read section */
	synchronize_rcu();
	mutex_lock(&rdlm_fabric.mutex);
	/*
	 * Only now: every verb of ours has executed at its target (RC), so
	 * a peer that recovers from us at the WITHDRAW meets none later.
	 */
	if (withdraw)
		rdlm_for_each_conn(conn)
			if (conn->passive)
				rdlm_conn_unexport(conn, ls);
	ls->quiesced = true;
	WRITE_ONCE(ls->ops, NULL);
	mutex_unlock(&rdlm_fabric.mutex);
}

/**
 * rdlm_fabric_ls_destroy() - take a lockspace's fabric side down
 * @ls: lockspace from rdlm_fabric_ls_create()
 *
 * Quiesces @ls if that was not done (see rdlm_fabric_ls_quiesce()), then
 * closes the connections no other lockspace uses and frees the table.
 * Context: process, may sleep.
 */
void rdlm_fabric_ls_destroy(struct rdlm_fabric_ls *ls)
{
	struct rdlm_conn *conn, *tmp;
	LIST_HEAD(dead);

	rdlm_fabric_ls_quiesce(ls);

	mutex_lock(&rdlm_fabric.mutex);
	rdlm_fabric_ls_drop_conns(ls, &dead);
	if (list_empty(&rdlm_fabric.lockspaces)) {
		/* nobody left to serve: stop listening, drop the peers */
		if (rdlm_fabric.listener) {
			rdma_destroy_id(rdlm_fabric.listener);
			rdlm_fabric.listener = NULL;
		}
		list_for_each_entry_safe(conn, tmp, &rdlm_fabric.conns, entry) {
			if (!conn->passive)
				continue;
			rdlm_conn_teardown(conn);
			rdlm_conn_unlist(conn, &dead);
		}
	}
	mutex_unlock(&rdlm_fabric.mutex);
	list_for_each_entry_safe(conn, tmp, &dead, entry) {
		list_del(&conn->entry);
		rdlm_conn_free(conn);
	}
	kref_put(&ls->ref, rdlm_fabric_ls_release);
}

/**
 * rdlm_fabric_ls_set_ops() - attach the lockspace's user
 * @ls: lockspace
 * @ops: callbacks, NULL to detach
 * @priv: their first argument
 *
 * Attach before posting: messages arriving without a user go to the
 * fabric self-test's accounting. Detaching waits until no callback runs
 * any more: messages are delivered under rcu_read_lock(), reachability
 * changes under rdlm_fabric.mutex or rcu_read_lock(). After
 * rdlm_fabric_ls_quiesce() attaching does nothing.
 *
 * Context: process context, rdlm_fabric.mutex not held; may sleep.
 */
void rdlm_fabric_ls_set_ops(struct rdlm_fabric_ls *ls,
			    const struct rdlm_fabric_ls_ops *ops, void *priv)
{
	if (!ops) {
		WRITE_ONCE(ls->ops, NULL);
		synchronize_rcu();
		mutex_lock(&rdlm_fabric.mutex);
		mutex_unlock(&rdlm_fabric.mutex);
		WRITE_ONCE(ls->priv, NULL);
		return;
	}
	mutex_lock(&rdlm_fabric.mutex);
	if (!ls->quiesced) {
		WRITE_ONCE(ls->priv, priv);
		/* priv before ops: pairs with smp_load_acquire() of readers */
		smp_store_release(&ls->ops, ops);
	}
	mutex_unlock(&rdlm_fabric.mutex);
}

/**
 * rdlm_fabric_ls_get() - find an enabled lockspace by name, with a reference
 * @name: lockspace name
 *
 * Return: the lockspace (release with rdlm_fabric_ls_put()) or NULL.
 */
struct rdlm_fabric_ls *rdlm_fabric_ls_get(const char *name)
{
	struct rdlm_fabric_ls *ls, *found = NULL;

	mutex_lock(&rdlm_fabric.mutex);
	list_for_each_entry(ls, &rdlm_fabric.lockspaces, entry) {
		if (!strcmp(ls->name, name)) {
			kref_get(&ls->ref);
			found = ls;
			break;
		}
	}
	mutex_unlock(&rdlm_fabric.mutex);
	return found;
}

/**
 * rdlm_fabric_ls_put() - drop a reference from rdlm_fabric_ls_get()
 * @ls: lockspace
 */
void rdlm_fabric_ls_put(struct rdlm_fabric_ls *ls)
{
	kref_put(&ls->ref, rdlm_fabric_ls_release);
}

/**
 * rdlm_fabric_ls_ready() - can verbs be posted to @node's table?
 * @ls: lockspace
 * @node: member node id
 *
 * Return: true once the connection is up and the table description known.
 */
bool rdlm_fabric_ls_ready(struct rdlm_fabric_ls *ls, u32 node)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);

	return m && READ_ONCE(m->remote.ready);
}

/* Does @m still present the incarnation fencing declared gone? ls->lock */
static bool rdlm_member_stale(const struct rdlm_member *m)
{
	return m->gone && m->inc == m->gone;
}

/**
 * rdlm_fabric_ls_fence() - cut a member off a lockspace, or let it back
 * @ls: lockspace
 * @node: member node id, not this node
 * @fence: cut it off (true) or let it back (false)
 *
 * Fencing resets every connection with @node at once (other lockspaces see
 * a link flap): when it returns, no verb between the two nodes is in
 * flight or can land later (a peer down event has been reported if the
 * member was up). Until it is let back, its messages for @ls are dropped
 * and neither side learns the other's table of @ls again, so no verb of
 * @ls flows either way however the connections come and go. The
 * incarnation of @ls it had is declared gone: it is never admitted again,
 * and is told so (RDLM_W_GONE) when it asks for our table. Letting it
 * back exchanges the tables again; a peer up event follows.
 *
 * Context: process, sleeps. Return: 0, -EINVAL if @node is no member
 * or this node, -ESTALE (and it stays fenced) when letting back a member
 * whose last presented incarnation is the one declared gone.
 */
int rdlm_fabric_ls_fence(struct rdlm_fabric_ls *ls, u32 node, bool fence)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);
	struct rdlm_conn *conn;
	int ret = 0;

	if (!m || node == ls->local)
		return -EINVAL;
	mutex_lock(&rdlm_fabric.mutex);
	spin_lock_bh(&ls->lock);
	if (fence && m->admitted)
		m->gone = m->admitted;
	if (!fence && rdlm_member_stale(m))
		ret = -ESTALE;
	else
		WRITE_ONCE(m->fenced, fence);
	spin_unlock_bh(&ls->lock);
	if (fence) {
		rdlm_conn_reset_node(node);
	} else if (!ret) {
		rdlm_for_each_conn(conn)
			if (conn->node == node &&
			    READ_ONCE(conn->state) == RDLM_CONN_LIVE)
				queue_work(rdlm_fabric.wq, &conn->up_work);
	}
	mutex_unlock(&rdlm_fabric.mutex);
	return ret;
}

/**
 * rdlm_fabric_ls_incarnation() - this node's incarnation of a lockspace
 * @ls: lockspace
 *
 * Drawn at random when the lockspace was enabled: every enable has its own.
 *
 * Return: the incarnation, never 0.
 */
u64 rdlm_fabric_ls_incarnation(struct rdlm_fabric_ls *ls)
{
	return ls->incarnation;
}

/**
 * rdlm_fabric_ls_admitted() - the incarnation of a member admitted here
 * @ls: lockspace
 * @node: member node id, not this node
 *
 * The one whose table this node took and gave its own to last; it stays
 * the answer while that member is fenced, until a new one is admitted.
 *
 * Context: any (the lock manager calls it under its lockspace lock).
 * Return: the incarnation, 0 if none was ever admitted or @node is no
 * member.
 */
u64 rdlm_fabric_ls_admitted(struct rdlm_fabric_ls *ls, u32 node)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);

	return m ? READ_ONCE(m->admitted) : 0;
}

/**
 * rdlm_fabric_ls_drain() - wait until no verb of ours to a member is in flight
 * @ls: lockspace
 * @node: member node id, whose table we do not know (none can be posted)
 * @timeout: jiffies at most
 *
 * Context: process, sleeps.
 * Return: true once every verb posted to @node has completed, false on
 * timeout.
 */
bool rdlm_fabric_ls_drain(struct rdlm_fabric_ls *ls, u32 node,
			  unsigned long timeout)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);

	return !m || wait_event_timeout(ls->wait, !atomic_read(&m->inflight),
					timeout);
}

/**
 * rdlm_fabric_ls_stale() - is a fenced member still the incarnation fencing declared gone?
 * @ls: lockspace
 * @node: member node id
 *
 * Return: true if the incarnation it presented last is the one declared
 * gone (letting it back would fail with -ESTALE).
 */
bool rdlm_fabric_ls_stale(struct rdlm_fabric_ls *ls, u32 node)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, node);
	bool stale;

	if (!m)
		return false;
	spin_lock_bh(&ls->lock);
	stale = rdlm_member_stale(m);
	spin_unlock_bh(&ls->lock);
	return stale;
}

/**
 * rdlm_fabric_ls_word() - read a word of the local table with the CPU
 * @ls: lockspace
 * @slot: slot
 *
 * For debugging and tests: in NIC-atomic mode the value may be stale.
 * Return: the word, or 0 for a slot out of range.
 */
u64 rdlm_fabric_ls_word(struct rdlm_fabric_ls *ls, u32 slot)
{
	return slot < ls->nr_slots ? READ_ONCE(*rdlm_fabric_ls_word_ptr(ls, slot)) : 0;
}

/**
 * rdlm_fabric_ls_record() - this node's record @index, for its CPU to write
 * @ls: lockspace
 * @index: record, < &rdlm_fabric_ls_cfg.nr_records
 *
 * Records (RDLM_RECORD_SIZE bytes each) lie in the pages after the lock
 * table, registered with it for REMOTE_READ: a peer reads one with a READ
 * verb with RDLM_VF_RECORD whose slot is @index (never this node itself:
 * it reads here). What they hold, and how a reader tells a record read while
 * the CPU wrote it, is the user's business: the NIC reads without any lock.
 * A record never crosses a page.
 *
 * Return: its address, or NULL for an index out of range.
 */
void *rdlm_fabric_ls_record(struct rdlm_fabric_ls *ls, u32 index)
{
	const u32 per_page = PAGE_SIZE / RDLM_RECORD_SIZE;
	u32 first = ls->nr_pages - ls->nr_record_pages;

	if (index >= ls->nr_records)
		return NULL;
	return page_address(ls->pages[first + index / per_page]) +
	       (index % per_page) * RDLM_RECORD_SIZE;
}

/**
 * rdlm_fabric_ls_nr_records() - how many records this node's table has
 * @ls: lockspace
 *
 * Return: &rdlm_fabric_ls_cfg.nr_records, 0 in CPU-atomic mode.
 */
u32 rdlm_fabric_ls_nr_records(struct rdlm_fabric_ls *ls)
{
	return ls->nr_records;
}

/*
 * A verb to this node needs no network when its CPU can carry it out: in
 * CPU-atomic mode an FA, CAS or READ on its own table (applied here as the
 * receive path does for a peer's request), and in both modes a SEND or
 * WRITE_WITH_IMM (handed to the receive path from a work item, where the
 * loopback connection would have delivered it). Verbs to this node keep
 * their posting order (the caller serialises its posts of one lockspace):
 * they queue behind one another on ls->local_ops, and a verb posted to the
 * network before them goes first; a NIC atomic posted while the queue is
 * not empty queues too, the work item posts it when its turn comes. A CPU
 * atomic with nothing before it is applied at once: one that changed the
 * word completes before the post returns, a READ or a CAS that failed
 * completes from the work item, so that an engine polling its own word
 * yields between polls. Only while this node counts as reachable (its
 * loopback connection is up and its table known): a failure fails verbs to
 * it, as to any node.
 *
 * Return: 1 if the verb was taken here, 0 if it goes to the network (not to
 * this node, nothing queued before it, or invalid: the network path says
 * why), -ENOMEM.
 */
static int rdlm_fabric_ls_post_self(struct rdlm_fabric_ls *ls,
				    const struct rdlm_verb *v,
				    rdlm_fabric_done_t done, void *ctx)
{
	struct rdlm_member *self = rdlm_fabric_ls_member(ls, ls->local);
	bool cpu_verb, msg, now = false, queued = true;
	struct rdlm_local_op *lo;

	if (v->node != ls->local || !self)
		return 0;
	cpu_verb = rdlm_fabric_ls_cpu_verb(ls, v);
	msg = rdlm_fabric_ls_msg_verb(ls, v);
	/* only our own (serialised) posts fill the queue: no race here */
	if (!cpu_verb && !msg &&
	    (list_empty(&ls->local_ops) || !rdlm_fabric_ls_table_verb(ls, v)))
		return 0;
	lo = kmalloc(sizeof(*lo), GFP_ATOMIC);
	if (!lo)	/* the network would pass what is queued */
		return list_empty(&ls->local_ops) ? 0 : -ENOMEM;
	lo->v = *v;
	lo->done = done;
	lo->ctx = ctx;
	lo->applied = false;
	lo->busy = false;
	lo->res = (struct rdlm_cqe){
		.req = v->req, .cookie = v->cookie, .kind = v->kind,
	};
	/* as a post: rdlm_fabric_ls_quiesce() synchronizes with this */
	rcu_read_lock();
	spin_lock_bh(&ls->lock);
	if (READ_ONCE(ls->dead) || !self->remote.ready) {
		queued = false;
	} else if (cpu_verb && list_empty(&ls->local_ops) &&
		   !atomic_read(&ls->inflight_self)) {
		now = rdlm_fabric_ls_apply_locked(ls, lo) ||
		      v->kind == RDLM_VERB_FA;
		lo->applied = true;
		queued = !now;
	} else if (!cpu_verb && !msg && list_empty(&ls->local_ops)) {
		queued = false;		/* a NIC verb: straight to the network */
	}
	if (queued) {
		lo->gen = self->gen;
		atomic_inc(&ls->inflight);
		list_add_tail(&lo->entry, &ls->local_ops);
	}
	spin_unlock_bh(&ls->lock);
	if (cpu_verb && (now || queued))
		atomic64_inc(&ls->local_atomics);
	else if (msg && queued)
		atomic64_inc(&ls->local_msgs);
	if (queued) {
		/* pairs with atomic_dec_and_test() in rdlm_op_complete() */
		smp_mb();
		if (lo->applied || !atomic_read(&ls->inflight_self))
			queue_work(system_highpri_wq, &ls->local_work);
	} else if (now) {
		done(ctx, &lo->res);
	}
	rcu_read_unlock();
	if (!queued)
		kfree(lo);
	return now || queued;
}

/**
 * rdlm_fabric_post() - post one engine verb
 * @ls: lockspace
 * @v: the verb; v->node names the target member (this node included)
 * @done: called once with the result unless an error is returned here
 * @ctx: its first argument
 *
 * FA, CAS and READ hit lock word v->slot of v->node's table, as one-sided
 * NIC atomics or, in CPU-atomic mode, as a request the home's CPU applies;
 * the completion carries the word's original value. WRITE_IMM writes
 * v->arg0 and v->imm into mailbox slot v->slot; SEND carries v->msg. Verbs
 * to one node execute in posting order. To this node, what its CPU can do
 * takes no verb (rdlm_fabric_ls_post_self()): a CPU-atomic verb on its own
 * table with nothing before it is applied before this returns, and @done
 * called if it changed the word; SENDs and WRITE_IMMs reach ops->recv from
 * a work item. Never sleeps; not from hard irq.
 *
 * A READ flagged RDLM_VF_RECORD reads v->slot of v->node's records
 * (rdlm_fabric_ls_record()) instead of a lock word; the completion's data
 * points to the bytes read, valid during @done.
 *
 * Return: 0, -ESHUTDOWN (lockspace going away), -EINVAL (not a member, slot
 * out of range, unknown kind, a record READ to this node or in CPU mode),
 * -EOPNOTSUPP (a record READ to a node without records), -ENOTCONN (member
 * not connected yet), -EBUSY (the fabric self-test claimed the lockspace),
 * -ENOMEM.
 */
int rdlm_fabric_post(struct rdlm_fabric_ls *ls, const struct rdlm_verb *v,
		     rdlm_fabric_done_t done, void *ctx)
{
	int ret;

	/* pairs with rdlm_fabric_ls_claim(): one of the two sees the other */
	if (!test_bit(RDLM_LS_USER_POSTED, &ls->flags)) {
		set_bit(RDLM_LS_USER_POSTED, &ls->flags);
		smp_mb__after_atomic();	/* set, then test CLAIMED */
	}
	if (test_bit(RDLM_LS_CLAIMED, &ls->flags))
		return -EBUSY;
	ret = rdlm_fabric_ls_post_self(ls, v, done, ctx);
	if (ret)
		return ret < 0 ? ret : 0;
	return rdlm_fabric_ls_post(ls, v, done, ctx);
}

/**
 * rdlm_fabric_ls_post() - rdlm_fabric_post() for the fabric's own self-test
 * @ls: lockspace
 * @v: the verb
 * @done: completion callback
 * @ctx: its argument
 *
 * Return: as rdlm_fabric_post().
 */
int rdlm_fabric_ls_post(struct rdlm_fabric_ls *ls, const struct rdlm_verb *v,
			rdlm_fabric_done_t done, void *ctx)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, v->node);
	int ret;

	if (!m)
		return -EINVAL;
	/* rdlm_fabric_ls_quiesce() synchronizes with this section */
	rcu_read_lock();
	if (READ_ONCE(ls->dead))
		ret = -ESHUTDOWN;
	else
		ret = rdlm_conn_post(m->conn, ls, v, done, ctx);
	rcu_read_unlock();
	return ret;
}

/**
 * rdlm_fabric_ls_claim() - divert a lockspace's incoming messages to the self-test
 * @ls: lockspace
 *
 * Refused once the lockspace's user (the lock manager) has posted a verb:
 * its traffic must not be diverted; from a successful claim on, the user's
 * posts fail with -EBUSY.
 *
 * Return: 0 or -EBUSY.
 */
int rdlm_fabric_ls_claim(struct rdlm_fabric_ls *ls)
{
	if (test_and_set_bit(RDLM_LS_CLAIMED, &ls->flags))
		return 0;
	smp_mb__after_atomic();	/* set, then test USER_POSTED */
	if (test_bit(RDLM_LS_USER_POSTED, &ls->flags)) {
		clear_bit(RDLM_LS_CLAIMED, &ls->flags);
		return -EBUSY;
	}
	return 0;
}

/* ---- debugfs -------------------------------------------------------- */

/* debugfs "devices": one line per RDMA device, as the test cluster reads it */
static int rdlm_devices_show(struct seq_file *m, void *unused)
{
	struct rdlm_device *dev;

	mutex_lock(&rdlm_fabric.mutex);
	list_for_each_entry(dev, &rdlm_fabric.devices, entry)
		seq_printf(m, "%s\n", dev_name(&dev->ibdev->dev));
	mutex_unlock(&rdlm_fabric.mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_devices);

/* debugfs "links": link state of each device, and the rxe QP1 suspicion */
static int rdlm_links_show(struct seq_file *m, void *unused)
{
	struct rdlm_device *dev;

	mutex_lock(&rdlm_fabric.mutex);
	list_for_each_entry(dev, &rdlm_fabric.devices, entry)
		seq_printf(m, "%s link %s link_downs %u cm_suspect %d\n",
			   dev_name(&dev->ibdev->dev),
			   rdlm_dev_link_down(dev) ? "down" : "up",
			   dev->link_downs,
			   test_bit(RDLM_DEV_CM_RISK, &dev->flags));
	mutex_unlock(&rdlm_fabric.mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_links);

static const char *const rdlm_verb_names[RDLM_VERB_NR] = {
	"fa", "cas", "read", "imm", "send",
};

/* debugfs "peers": one block per connection */
static int rdlm_peers_show(struct seq_file *m, void *unused)
{
	struct rdlm_conn *conn;
	int k, b;

	mutex_lock(&rdlm_fabric.mutex);
	seq_printf(m, "rejected %lld\n",
		   (long long)atomic64_read(&rdlm_fabric.rejected));
	rdlm_for_each_conn(conn) {
		seq_printf(m, "node %u %s state %s reconnects %u rejects %u credits %d backlog %u errors %lld bad %lld in %lld out %lld\n",
			   conn->node, conn->passive ? "in" : "out",
			   rdlm_conn_state_name(READ_ONCE(conn->state)),
			   conn->reconnects, conn->rejects,
			   READ_ONCE(conn->credits),
			   READ_ONCE(conn->backlog_len),
			   (long long)atomic64_read(&conn->stats.errors),
			   (long long)atomic64_read(&conn->stats.proto),
			   (long long)atomic64_read(&conn->stats.msgs_in),
			   (long long)atomic64_read(&conn->stats.msgs_out));
		if (READ_ONCE(conn->last_event) >= 0)
			seq_printf(m, "  last_failure %s status %d\n",
				   rdma_event_msg(READ_ONCE(conn->last_event)),
				   READ_ONCE(conn->last_status));
		if (conn->passive)
			continue;
		for (k = 0; k < RDLM_VERB_NR; k++) {
			seq_printf(m, "  %s %lld lat_us_log2", rdlm_verb_names[k],
				   (long long)atomic64_read(&conn->stats.verbs[k]));
			for (b = 0; b < RDLM_LAT_BUCKETS; b++)
				seq_printf(m, " %lld", (long long)
					   atomic64_read(&conn->stats.lat[k][b]));
			seq_putc(m, '\n');
		}
	}
	mutex_unlock(&rdlm_fabric.mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_peers);

/* debugfs "lockspaces": each lockspace and its members' readiness */
static int rdlm_lockspaces_show(struct seq_file *m, void *unused)
{
	struct rdlm_fabric_ls *ls;
	u32 i;

	mutex_lock(&rdlm_fabric.mutex);
	list_for_each_entry(ls, &rdlm_fabric.lockspaces, entry) {
		seq_printf(m, "%s lsid %08x incarnation %016llx index %u mode %s slots %u mbox %u inflight %d local_atomics %lld local_msgs %lld members",
			   ls->name, ls->lsid, ls->incarnation, ls->index,
			   ls->atomic_mode == RDLM_ATOMIC_CPU ? "cpu" : "nic",
			   ls->nr_slots, ls->nr_mbox,
			   atomic_read(&ls->inflight),
			   (long long)atomic64_read(&ls->local_atomics),
			   (long long)atomic64_read(&ls->local_msgs));
		for (i = 0; i < ls->nr_members; i++)
			seq_printf(m, " %u:%s", ls->members[i].cfg.nodeid,
				   ls->members[i].fenced ? "fenced" :
				   ls->members[i].remote.ready ? "ready" :
								 "wait");
		seq_putc(m, '\n');
	}
	mutex_unlock(&rdlm_fabric.mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_lockspaces);

/**
 * rdlm_fabric_init() - start the fabric: caches, workqueue, ib_client
 *
 * Return: 0 or -errno.
 */
int rdlm_fabric_init(void)
{
	int ret;

	ret = rdlm_op_cache_init();
	if (ret)
		return ret;
	rdlm_fabric.wq = alloc_ordered_workqueue("rdlm", WQ_MEM_RECLAIM);
	if (!rdlm_fabric.wq) {
		ret = -ENOMEM;
		goto out_cache;
	}
	rdlm_fabric.watch_wq = alloc_workqueue("rdlm_watch", WQ_MEM_RECLAIM, 0);
	if (!rdlm_fabric.watch_wq) {
		ret = -ENOMEM;
		goto out_wq;
	}
	ret = ib_register_client(&rdlm_ib_client);
	if (ret) {
		pr_err("cannot register ib_client: %d\n", ret);
		goto out_wq;
	}
	ret = register_netdevice_notifier(&rdlm_netdev_nb);
	if (ret) {
		ib_unregister_client(&rdlm_ib_client);
		goto out_wq;
	}
	debugfs_create_file("devices", 0400, rdlm_debugfs_root, NULL,
			    &rdlm_devices_fops);
	debugfs_create_file("links", 0400, rdlm_debugfs_root, NULL,
			    &rdlm_links_fops);
	debugfs_create_file("peers", 0400, rdlm_debugfs_root, NULL,
			    &rdlm_peers_fops);
	debugfs_create_file("lockspaces", 0400, rdlm_debugfs_root, NULL,
			    &rdlm_lockspaces_fops);
	rdlm_selftest_init();
	return 0;

out_wq:
	if (rdlm_fabric.watch_wq)
		destroy_workqueue(rdlm_fabric.watch_wq);
	destroy_workqueue(rdlm_fabric.wq);
out_cache:
	rdlm_op_cache_exit();
	return ret;
}

/**
 * rdlm_fabric_exit() - stop the fabric
 *
 * configfs pins the module while a lockspace exists, so no lockspace or
 * listener is left here, and no connection but a failed passive one whose
 * free_work is still queued: destroying rdlm_fabric.wq runs it (it cancels
 * that connection's works on rdlm_fabric.watch_wq, which goes last).
 * ib_unregister_client is a full fence for the device callbacks.
 */
void rdlm_fabric_exit(void)
{
	unregister_netdevice_notifier(&rdlm_netdev_nb);
	ib_unregister_client(&rdlm_ib_client);
	destroy_workqueue(rdlm_fabric.wq);
	destroy_workqueue(rdlm_fabric.watch_wq);
	rdlm_op_cache_exit();
}
