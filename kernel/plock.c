// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: POSIX byte-range locks (fcntl F_SETLK, F_SETLKW, F_GETLK) across
 * nodes, for a file system's ->lock() (the OCFS2 stack plugin's plock).
 *
 * Every lockspace serves them, whatever its engine. A file (a 64-bit
 * number: the file system's inode number) has a home, chosen over every
 * configured member as range locks' homes are. The home keeps the file's
 * locks of every owner of every node in one table (engine/plock.h) and
 * applies each request to it as it arrives, as a server-side combiner
 * does: the owner's split, merge, upgrade and downgrade happen in one
 * place and at once, F_GETLK finds the holder and its pid there, and a
 * request that must wait (F_SETLKW) waits at the home, in arrival order,
 * until a change of the file lets it in. A request is one SEND and its
 * answer one SEND back; lock manager messages, RDLM_LM_PL_*.
 *
 * A range engine could not do this alone: an owner's own locks must not
 * block its next request on the same bytes, and an unlock of a middle
 * piece must not let anyone into the rest even for a moment; only a
 * table that knows owners can do both. rangeseg's bakery segments are
 * anonymous tickets.
 *
 * The requester keeps each request until it is answered (&rdlm_plock_op).
 * A connection that fails and comes back loses neither: every request
 * still unanswered is sent again, in its order, and setting or unlocking
 * a range twice leaves what setting it once did; a waiting request the
 * home has already is not queued twice. A node the cluster declares dead
 * loses its locks at every home; requests to a home declared dead fail
 * with -ENOLCK. What a dead home kept is gone (no re-homing, no reclaim:
 * Documentation/range-locks.rst).
 *
 * Deadlocks: a request that would wait for an owner that waits, at this
 * home, for the requester (over up to RDLM_PL_DEADLK_STEPS owners) fails
 * with -EDEADLK. Cycles through two homes are not seen (nor are they by
 * fs/dlm's dlm_controld): F_SETLKW is interruptible.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "lock_priv.h"
#include "engine/plock.h"

/* A home keeps at most this many ranges and waiting requests. */
#define RDLM_PL_MAX_RANGES	65536
#define RDLM_PL_MAX_WAITERS	4096
#define RDLM_PL_DEADLK_STEPS	10
/*
 * A request unanswered this long goes again. Each direction of a node pair
 * has its own connection: after a link failure the home's to us may come
 * back later than ours, which is all this node sees ("up"), and an answer
 * sent on it meanwhile is lost. The home takes a request twice as once.
 */
#define RDLM_PL_RETRY		(2 * HZ)

/* RDLM_LM_PL_SET flags */
#define RDLM_PL_F_WAIT		0x01

/**
 * struct rdlm_plock_op - a request of this node, until answered
 * @list: in &rdlm_lockspace.pl_ops, in the order sent
 * @msg: what went to the home (sent again after a link failure)
 * @home: engine index of the home
 * @sent: jiffies when @msg last went
 * @done: answered (or failed): @result and @answer are set
 * @cancel: the caller gave up waiting: CANCEL follows @msg
 * @abandoned: the caller is gone; whoever answers it frees it
 * @result: 0 or -errno
 * @answer: the home's answer (F_GETLK: the conflicting lock)
 */
struct rdlm_plock_op {
	struct list_head list;
	struct rdlm_msg msg;
	u32 home;
	unsigned long sent;
	bool done;
	bool cancel;
	bool abandoned;
	int result;
	struct rdlm_msg answer;
};

/* A file at its home: its locks and the requests waiting for them. */
struct rdlm_pl_home {
	struct rdlm_pl_file f;
	u64 key;
	struct list_head waiters;
};

struct rdlm_pl_waiter {
	struct list_head file_list;	/* &rdlm_pl_home.waiters */
	struct list_head all;		/* &rdlm_lockspace.pl_waiters */
	struct rdlm_pl_home *file;
	u32 src;
	struct rdlm_msg msg;
};

static void rdlm_pl_retry_work(struct work_struct *work);

/**
 * rdlm_plock_init() - POSIX lock state of a new lockspace
 * @ls: lockspace being created
 */
void rdlm_plock_init(struct rdlm_lockspace *ls)
{
	INIT_LIST_HEAD(&ls->pl_ops);
	init_waitqueue_head(&ls->pl_wq);
	INIT_DELAYED_WORK(&ls->pl_retry, rdlm_pl_retry_work);
	xa_init(&ls->pl_files);
	INIT_LIST_HEAD(&ls->pl_waiters);
}

static void rdlm_pl_file_free(struct rdlm_lockspace *ls, struct rdlm_pl_home *h)
{
	ls->pl_ranges -= h->f.nr;
	rdlm_pl_clear(&h->f);
	xa_erase(&ls->pl_files, (unsigned long)h->key);
	kfree(h);
}

static void rdlm_pl_waiter_free(struct rdlm_lockspace *ls,
				struct rdlm_pl_waiter *w)
{
	list_del(&w->file_list);
	list_del(&w->all);
	ls->pl_nr_waiters--;
	kfree(w);
}

/**
 * rdlm_plock_fini() - free what a lockspace kept of POSIX locks
 * @ls: lockspace no longer reachable
 */
void rdlm_plock_fini(struct rdlm_lockspace *ls)
{
	struct rdlm_plock_op *op, *tmp;
	struct rdlm_pl_home *h;
	unsigned long key;

	list_for_each_entry_safe(op, tmp, &ls->pl_ops, list) {
		list_del_init(&op->list);
		kfree(op);	/* abandoned: nobody waits on it any more */
	}
	xa_for_each(&ls->pl_files, key, h) {
		struct rdlm_pl_waiter *w, *wt;

		list_for_each_entry_safe(w, wt, &h->waiters, file_list)
			rdlm_pl_waiter_free(ls, w);
		rdlm_pl_file_free(ls, h);
	}
	xa_destroy(&ls->pl_files);
}

static void rdlm_pl_send(struct rdlm_lockspace *ls, u32 node,
			 const struct rdlm_msg *m)
{
	struct rdlm_verb v = {
		.kind = RDLM_VERB_SEND,
		.node = ls->members[node],
		.msg = *m,
	};

	v.msg.src = ls->self;
	ls->st.verbs[RDLM_VERB_SEND]++;
	/* a failure needs nothing: the request goes again when the link is */
	rdlm_fabric_post(ls->fls, &v, rdlm_ls_lm_done, ls);
}

/* ---- home side --------------------------------------------------------- */

static struct rdlm_pl_owner rdlm_pl_who(u32 src, const struct rdlm_msg *m)
{
	struct rdlm_pl_owner who = {
		.owner = m->arg2, .node = src, .pid = m->part,
	};

	return who;
}

static void rdlm_pl_answer(struct rdlm_lockspace *ls, u32 node,
			   const struct rdlm_msg *req, int err,
			   const struct rdlm_pl_range *c)
{
	struct rdlm_msg m = {
		.type = RDLM_LM_PL_ANSWER,
		.slot = req->slot,
		.reqid = req->reqid,
		.part = -err,
	};

	if (c) {
		m.mode = c->type;
		m.token = c->start;
		m.arg = c->end;
		m.arg2 = (u64)c->who.node << 32 | c->who.pid;
	}
	rdlm_pl_send(ls, node, &m);
}

/* Set a range of @src's owner: 0, -ENOLCK (home full) or -ENOMEM. */
static int rdlm_pl_apply(struct rdlm_lockspace *ls, struct rdlm_pl_home *h,
			 u32 src, const struct rdlm_msg *m)
{
	struct rdlm_pl_owner who = rdlm_pl_who(src, m);
	u32 before = h->f.nr;
	int ret;

	if (m->mode != RDLM_PL_UN && ls->pl_ranges + 2 > RDLM_PL_MAX_RANGES)
		return -ENOLCK;
	ret = rdlm_pl_set(&h->f, &who, m->token, m->arg, m->mode);
	if (!ret)
		ls->pl_ranges += h->f.nr - before;
	return ret;
}

/* Let in the file's waiters that no longer conflict, in arrival order. */
static void rdlm_pl_wake(struct rdlm_lockspace *ls, struct rdlm_pl_home *h)
{
	struct rdlm_pl_waiter *w, *tmp;
	bool again = true;

	while (again) {
		again = false;
		list_for_each_entry_safe(w, tmp, &h->waiters, file_list) {
			struct rdlm_pl_owner who = rdlm_pl_who(w->src, &w->msg);
			int ret;

			if (rdlm_pl_conflict(&h->f, &who, w->msg.token,
					     w->msg.arg, w->msg.mode))
				continue;
			ret = rdlm_pl_apply(ls, h, w->src, &w->msg);
			rdlm_pl_answer(ls, w->src, &w->msg, ret, NULL);
			rdlm_pl_waiter_free(ls, w);
			/* its own locks changed: an earlier one may go now */
			again = true;
			break;
		}
	}
}

static void rdlm_pl_file_done(struct rdlm_lockspace *ls,
			      struct rdlm_pl_home *h)
{
	rdlm_pl_wake(ls, h);
	if (!h->f.nr && list_empty(&h->waiters))
		rdlm_pl_file_free(ls, h);
}

static struct rdlm_pl_waiter *rdlm_pl_waiter_of(struct rdlm_lockspace *ls,
						const struct rdlm_pl_owner *o)
{
	struct rdlm_pl_waiter *w;

	list_for_each_entry(w, &ls->pl_waiters, all)
		if (w->src == o->node && w->msg.arg2 == o->owner)
			return w;
	return NULL;
}

/* Would @who, waiting for @c's owner, close a cycle of owners waiting here? */
static bool rdlm_pl_deadlock(struct rdlm_lockspace *ls,
			     const struct rdlm_pl_owner *who,
			     const struct rdlm_pl_range *c)
{
	struct rdlm_pl_owner o = c->who;
	int i;

	for (i = 0; i < RDLM_PL_DEADLK_STEPS; i++) {
		struct rdlm_pl_waiter *w;
		struct rdlm_pl_owner wo;

		if (o.node == who->node && o.owner == who->owner)
			return true;
		w = rdlm_pl_waiter_of(ls, &o);
		if (!w)
			return false;
		wo = rdlm_pl_who(w->src, &w->msg);
		c = rdlm_pl_conflict(&w->file->f, &wo, w->msg.token,
				     w->msg.arg, w->msg.mode);
		if (!c)
			return false;
		o = c->who;
	}
	return false;
}

static struct rdlm_pl_home *rdlm_pl_home_get(struct rdlm_lockspace *ls,
					     u64 key)
{
	struct rdlm_pl_home *h = xa_load(&ls->pl_files, (unsigned long)key);

	if (h)
		return h;
	/* kept for the whole cluster: charged to nobody in particular */
	h = kzalloc(sizeof(*h), GFP_ATOMIC);
	if (!h)
		return NULL;
	h->key = key;
	INIT_LIST_HEAD(&h->waiters);
	if (xa_err(xa_store(&ls->pl_files, (unsigned long)key, h,
			    GFP_ATOMIC))) {
		kfree(h);
		return NULL;
	}
	return h;
}

#define RDLM_PL_QUEUED	1

/* F_SETLKW that must wait, queued at the file: RDLM_PL_QUEUED or -ENOLCK */
static int rdlm_pl_queue(struct rdlm_lockspace *ls, struct rdlm_pl_home *h,
			 u32 src, const struct rdlm_msg *m)
{
	struct rdlm_pl_waiter *w;

	if (ls->pl_nr_waiters >= RDLM_PL_MAX_WAITERS)
		return -ENOLCK;
	w = kzalloc(sizeof(*w), GFP_ATOMIC);
	if (!w)
		return -ENOLCK;
	w->file = h;
	w->src = src;
	w->msg = *m;
	list_add_tail(&w->file_list, &h->waiters);
	list_add_tail(&w->all, &ls->pl_waiters);
	ls->pl_nr_waiters++;
	return RDLM_PL_QUEUED;
}

static void rdlm_pl_home_set(struct rdlm_lockspace *ls, u32 src,
			     const struct rdlm_msg *m)
{
	struct rdlm_pl_owner who = rdlm_pl_who(src, m);
	const struct rdlm_pl_range *c;
	struct rdlm_pl_waiter *w;
	struct rdlm_pl_home *h;
	int ret;

	h = rdlm_pl_home_get(ls, m->reqid);
	if (!h) {
		rdlm_pl_answer(ls, src, m, -ENOMEM, NULL);
		return;
	}
	/* sent again after a link failure, and waiting already */
	list_for_each_entry(w, &h->waiters, file_list)
		if (w->src == src && w->msg.slot == m->slot)
			return;
	c = rdlm_pl_conflict(&h->f, &who, m->token, m->arg, m->mode);
	if (!c)
		ret = rdlm_pl_apply(ls, h, src, m);
	else if (!(m->flags & RDLM_PL_F_WAIT))
		ret = -EAGAIN;
	else if (rdlm_pl_deadlock(ls, &who, c))
		ret = -EDEADLK;
	else
		ret = rdlm_pl_queue(ls, h, src, m);
	if (ret == RDLM_PL_QUEUED)
		return;		/* answered when it is let in */
	rdlm_pl_answer(ls, src, m, ret, NULL);
	rdlm_pl_file_done(ls, h);
}

static void rdlm_pl_home_get_lock(struct rdlm_lockspace *ls, u32 src,
				  const struct rdlm_msg *m)
{
	struct rdlm_pl_owner who = rdlm_pl_who(src, m);
	struct rdlm_pl_home *h = xa_load(&ls->pl_files, (unsigned long)m->reqid);
	const struct rdlm_pl_range *c = NULL;

	if (h)
		c = rdlm_pl_conflict(&h->f, &who, m->token, m->arg, m->mode);
	rdlm_pl_answer(ls, src, m, c ? -EAGAIN : 0, c);
}

static void rdlm_pl_home_cancel(struct rdlm_lockspace *ls, u32 src,
				const struct rdlm_msg *m)
{
	struct rdlm_pl_home *h = xa_load(&ls->pl_files, (unsigned long)m->reqid);
	struct rdlm_pl_waiter *w;

	if (!h)
		return;
	list_for_each_entry(w, &h->waiters, file_list) {
		if (w->src != src || w->msg.slot != m->slot)
			continue;
		rdlm_pl_answer(ls, src, &w->msg, -EINTR, NULL);
		rdlm_pl_waiter_free(ls, w);
		rdlm_pl_file_done(ls, h);
		return;
	}
	/* not waiting: its answer went before this arrived */
}

/* ---- requester side ---------------------------------------------------- */

/* Send @op (again): its request, and its cancel if the caller gave up. */
static void rdlm_pl_op_send(struct rdlm_lockspace *ls, struct rdlm_plock_op *op)
{
	rdlm_pl_send(ls, op->home, &op->msg);
	if (op->cancel) {
		struct rdlm_msg c = op->msg;

		c.type = RDLM_LM_PL_CANCEL;
		rdlm_pl_send(ls, op->home, &c);
	}
	op->sent = jiffies;
}

/* @op is in &rdlm_lockspace.pl_ops: asked again until answered. */
static void rdlm_pl_op_queued(struct rdlm_lockspace *ls,
			      struct rdlm_plock_op *op)
{
	op->sent = jiffies;
	queue_delayed_work(ls->wq, &ls->pl_retry, RDLM_PL_RETRY);
}

static void rdlm_pl_retry_work(struct work_struct *work)
{
	struct rdlm_lockspace *ls = container_of(to_delayed_work(work),
						 struct rdlm_lockspace,
						 pl_retry);
	struct rdlm_plock_op *op;

	spin_lock_bh(&ls->lock);
	if (!ls->dead) {
		list_for_each_entry(op, &ls->pl_ops, list)
			if (time_after_eq(jiffies, op->sent + RDLM_PL_RETRY) &&
			    rdlm_fabric_ls_ready(ls->fls,
						 ls->members[op->home]))
				rdlm_pl_op_send(ls, op);
		if (!list_empty(&ls->pl_ops))
			queue_delayed_work(ls->wq, &ls->pl_retry,
					   RDLM_PL_RETRY);
	}
	rdlm_ls_unlock(ls);
}

static void rdlm_pl_op_done(struct rdlm_lockspace *ls, struct rdlm_plock_op *op,
			    int result, const struct rdlm_msg *answer)
{
	list_del_init(&op->list);
	op->result = result;
	if (answer)
		op->answer = *answer;
	if (op->abandoned) {
		if (!result && op->msg.type == RDLM_LM_PL_SET &&
		    op->msg.mode != RDLM_PL_UN) {
			/*
			 * Granted after its caller was killed: the VFS does
			 * not know of it, so its close would not unlock it.
			 */
			op->msg.mode = RDLM_PL_UN;
			op->msg.flags = 0;
			op->msg.slot = ls->pl_next_op++;
			list_add_tail(&op->list, &ls->pl_ops);
			rdlm_pl_op_queued(ls, op);
			rdlm_pl_send(ls, op->home, &op->msg);
			return;
		}
		kfree(op);
		return;
	}
	/* release: the caller reads @result and @answer once it sees @done */
	smp_store_release(&op->done, true);
	wake_up_all(&ls->pl_wq);
}

static bool rdlm_pl_op_answered(struct rdlm_plock_op *op)
{
	/* pairs with rdlm_pl_op_done()'s release: @result, @answer are set */
	return smp_load_acquire(&op->done);
}

static void rdlm_pl_answered(struct rdlm_lockspace *ls, u32 src,
			     const struct rdlm_msg *m)
{
	struct rdlm_plock_op *op;
	int err = -(int)m->part;

	if (m->part > MAX_ERRNO)
		return;
	list_for_each_entry(op, &ls->pl_ops, list) {
		if (op->home == src && op->msg.slot == m->slot &&
		    op->msg.reqid == m->reqid) {
			rdlm_pl_op_done(ls, op, err, m);
			return;
		}
	}
	/* answered already, before a link failure sent it again */
}

/**
 * rdlm_plock_recv() - a POSIX lock message arrived
 * @ls: lockspace (locked)
 * @rx: message, src translated to an engine index
 */
void rdlm_plock_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	bool range_ok = m->token <= m->arg;

	switch (m->type) {
	case RDLM_LM_PL_SET:
		if (range_ok && m->mode <= RDLM_PL_UN &&
		    !(m->flags & ~RDLM_PL_F_WAIT))
			rdlm_pl_home_set(ls, rx->src, m);
		break;
	case RDLM_LM_PL_GET:
		if (range_ok && m->mode <= RDLM_PL_WR)
			rdlm_pl_home_get_lock(ls, rx->src, m);
		break;
	case RDLM_LM_PL_CANCEL:
		rdlm_pl_home_cancel(ls, rx->src, m);
		break;
	case RDLM_LM_PL_ANSWER:
		rdlm_pl_answered(ls, rx->src, m);
		break;
	default:
		break;
	}
}

/**
 * rdlm_plock_member_up() - the link to @node is back: ask again
 * @ls: lockspace (locked)
 * @node: engine index
 *
 * Every request to that home not answered yet may be lost, or its answer:
 * all go again, in the order they first went.
 */
void rdlm_plock_member_up(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_plock_op *op;

	list_for_each_entry(op, &ls->pl_ops, list)
		if (op->home == node)
			rdlm_pl_op_send(ls, op);
}

/**
 * rdlm_plock_member_down() - the cluster declared @node dead
 * @ls: lockspace (locked)
 * @node: engine index, fenced
 *
 * As a home: the node's locks and waiting requests go, and who waited for
 * them is let in. As a requester: what waits for its answer fails.
 */
void rdlm_plock_member_down(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_plock_op *op, *tmp;
	struct rdlm_pl_waiter *w, *wt;
	struct rdlm_pl_home *h;
	unsigned long key;

	list_for_each_entry_safe(w, wt, &ls->pl_waiters, all)
		if (w->src == node)
			rdlm_pl_waiter_free(ls, w);
	xa_for_each(&ls->pl_files, key, h) {
		ls->pl_ranges -= rdlm_pl_drop_node(&h->f, node);
		rdlm_pl_file_done(ls, h);
	}
	list_for_each_entry_safe(op, tmp, &ls->pl_ops, list)
		if (op->home == node)
			rdlm_pl_op_done(ls, op, -ENOLCK, NULL);
}

/**
 * rdlm_plock_fail_all() - the lockspace stops: nothing will be answered
 * @ls: lockspace (locked, dead)
 */
void rdlm_plock_fail_all(struct rdlm_lockspace *ls)
{
	struct rdlm_plock_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, &ls->pl_ops, list)
		rdlm_pl_op_done(ls, op, -ENOLCK, NULL);
}

/**
 * rdlm_plock_dump() - POSIX locks in the lockspace's debugfs file
 * @ls: lockspace (locked)
 * @m: the file
 *
 * As a home: "plock FILE TYPE START-END node N pid P" per lock and
 * "plock_wait ..." per waiting F_SETLKW, FILE the file's number in
 * decimal (OCFS2: the inode number), N a node id. As a requester:
 * "plock_ask FILE home N" per request not answered yet.
 */
void rdlm_plock_dump(struct rdlm_lockspace *ls, struct seq_file *m)
{
	static const char type[] = "rwu";
	const struct rdlm_pl_range *x;
	struct rdlm_pl_waiter *w;
	struct rdlm_plock_op *op;
	struct rdlm_pl_home *h;
	unsigned long key;

	xa_for_each(&ls->pl_files, key, h) {
		for (x = h->f.head; x; x = x->next)
			seq_printf(m, "plock %llu %c %llu-%llu node %u pid %u\n",
				   h->key, type[x->type], x->start, x->end,
				   ls->members[x->who.node], x->who.pid);
		list_for_each_entry(w, &h->waiters, file_list)
			seq_printf(m, "plock_wait %llu %c %llu-%llu node %u pid %u\n",
				   h->key, type[w->msg.mode], w->msg.token,
				   w->msg.arg, ls->members[w->src], w->msg.part);
	}
	list_for_each_entry(op, &ls->pl_ops, list)
		seq_printf(m, "plock_ask %llu home %u\n", op->msg.reqid,
			   ls->members[op->home]);
}

/* ---- the exported API -------------------------------------------------- */

static int rdlm_pl_type(const struct file_lock *fl)
{
	switch (fl->fl_type) {
	case F_RDLCK:
		return RDLM_PL_RD;
	case F_WRLCK:
		return RDLM_PL_WR;
	case F_UNLCK:
		return RDLM_PL_UN;
	default:
		return -EINVAL;
	}
}

/*
 * Ask the file's home and wait for the answer. @wait: F_SETLKW, whose
 * wait a signal ends (-ERESTARTSYS) unless the answer came first; other
 * requests are answered at once and only a fatal signal ends their wait.
 * A request to a home that is not connected fails with -ENOTCONN, but an
 * unlock is sent when the link is back and not waited for.
 */
static int rdlm_pl_ask(struct rdlm_lockspace *ls, u16 type, u64 number,
		       const struct file_lock *fl, u8 pltype, bool wait,
		       struct rdlm_msg *answer)
{
	struct rdlm_plock_op *op;
	bool connected;
	int ret;

	if (fl->fl_start < 0 || fl->fl_end < fl->fl_start)
		return -EINVAL;
	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op)
		return -ENOMEM;
	op->msg.type = type;
	op->msg.mode = pltype;
	op->msg.flags = wait ? RDLM_PL_F_WAIT : 0;
	op->msg.reqid = number;
	op->msg.token = fl->fl_start;
	op->msg.arg = fl->fl_end;
	op->msg.arg2 = (u64)(uintptr_t)fl->fl_owner;
	op->msg.part = fl->fl_pid;
	op->home = rdlm_home_of(ls, 0, number);

	spin_lock_bh(&ls->lock);
	ret = ls->dead ? -ENOLCK : 0;
	connected = rdlm_fabric_ls_ready(ls->fls, ls->members[op->home]);
	if (!ret && !connected && pltype != RDLM_PL_UN)
		ret = -ENOTCONN;
	if (ret) {
		rdlm_ls_unlock(ls);
		kfree(op);
		return ret;
	}
	op->msg.slot = ls->pl_next_op++;
	list_add_tail(&op->list, &ls->pl_ops);
	rdlm_pl_op_queued(ls, op);
	if (connected)
		rdlm_pl_send(ls, op->home, &op->msg);
	else
		op->abandoned = true;	/* an unlock for when the link is back */
	rdlm_ls_unlock(ls);
	if (!connected)
		return 0;

	if (wait && wait_event_interruptible(ls->pl_wq,
					     rdlm_pl_op_answered(op))) {
		spin_lock_bh(&ls->lock);
		if (!op->done && !op->cancel) {
			struct rdlm_msg c = op->msg;

			op->cancel = true;
			c.type = RDLM_LM_PL_CANCEL;
			rdlm_pl_send(ls, op->home, &c);
		}
		rdlm_ls_unlock(ls);
	}
	if (wait_event_killable(ls->pl_wq, rdlm_pl_op_answered(op))) {
		spin_lock_bh(&ls->lock);
		if (!op->done) {
			op->abandoned = true;	/* freed when answered */
			rdlm_ls_unlock(ls);
			return -EINTR;
		}
		rdlm_ls_unlock(ls);
	}
	ret = op->result;
	if (answer)
		*answer = op->answer;
	kfree(op);
	return ret == -EINTR ? -ERESTARTSYS : ret;
}

/**
 * rdlm_posix_lock() - set a POSIX lock on a file, across the cluster
 * @ls: lockspace
 * @number: the file (its inode number: the same on every node)
 * @file: the open file it is set through
 * @cmd: F_SETLK, F_SETLKW (or their 64-bit and OFD forms)
 * @fl: the lock: fl_type F_RDLCK or F_WRLCK, fl_start, fl_end, fl_owner,
 *	fl_pid as the VFS made them
 *
 * The replacement of fs/dlm's dlm_posix_lock() for a file system's
 * ->lock(): the owner's locks on the range become @fl's (split, merged,
 * upgraded or downgraded at the file's home in one step), and once the
 * home granted it the VFS records it too (locks_lock_file_wait()), so that
 * the file's close unlocks it (rdlm_posix_unlock()).
 *
 * Context: process context, sleeps.
 * Return: 0, -EAGAIN (F_SETLK: another owner holds a conflicting lock),
 * -EDEADLK (it would wait for an owner waiting for it at this home),
 * -ERESTARTSYS (F_SETLKW interrupted: nothing changed), -EINVAL, -ENOMEM,
 * -ENOLCK (home full or declared dead, lockspace stopped), -ENOTCONN
 * (home not connected).
 */
int rdlm_posix_lock(struct rdlm_lockspace *ls, u64 number, struct file *file,
		    int cmd, struct file_lock *fl)
{
	unsigned int flags = fl->fl_flags;
	int type = rdlm_pl_type(fl);
	int ret;

	if (type < 0)
		return type;
	if (type == RDLM_PL_UN)
		return rdlm_posix_unlock(ls, number, file, fl);
	ret = rdlm_pl_ask(ls, RDLM_LM_PL_SET, number, fl, type, IS_SETLKW(cmd),
			  NULL);
	if (ret)
		return ret;
	/*
	 * Granted cluster-wide. The VFS's record of another owner here may
	 * still show what the home has changed already (its downgrade is
	 * recorded after the home made it): wait for that, never fail on it.
	 */
	fl->fl_flags |= FL_SLEEP;
	ret = locks_lock_file_wait(file, fl);
	fl->fl_flags = flags;
	if (ret) {
		/* a signal, or the VFS's deadlock check: undone at the home */
		pr_warn("lockspace %s: file %llx: VFS lock error %d\n",
			ls->name, number, ret);
		rdlm_pl_ask(ls, RDLM_LM_PL_SET, number, fl, RDLM_PL_UN, false,
			    NULL);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(rdlm_posix_lock);

/**
 * rdlm_posix_unlock() - unlock a range of a POSIX lock owner's locks
 * @ls: lockspace
 * @number: the file
 * @file: the open file
 * @fl: the range, fl_owner; its fl_type is ignored (F_UNLCK)
 *
 * Unlocks the VFS's record first, then, if the owner had a lock there, at
 * the home (waiting for its answer while the home is connected).
 *
 * Context: process context, sleeps.
 * Return: 0 or -errno (-EINTR: a fatal signal; the unlock still reaches
 * the home).
 */
int rdlm_posix_unlock(struct rdlm_lockspace *ls, u64 number, struct file *file,
		      struct file_lock *fl)
{
	unsigned int flags = fl->fl_flags;
	int ret;

	fl->fl_flags |= FL_EXISTS;
	ret = locks_lock_file_wait(file, fl);
	fl->fl_flags = flags;
	if (ret == -ENOENT)
		return 0;	/* nothing of this owner there */
	if (ret)
		pr_err("lockspace %s: file %llx: VFS unlock error %d\n",
		       ls->name, number, ret);
	return rdlm_pl_ask(ls, RDLM_LM_PL_SET, number, fl, RDLM_PL_UN, false,
			   NULL);
}
EXPORT_SYMBOL_GPL(rdlm_posix_unlock);

/**
 * rdlm_posix_get() - F_GETLK across the cluster
 * @ls: lockspace
 * @number: the file
 * @file: the open file
 * @fl: the lock asked about; on return the first conflicting lock of
 *	another owner (fl_type, fl_start, fl_end, fl_pid: negative for a
 *	process of another node, as fs/dlm reports it), or fl_type F_UNLCK
 *
 * Context: process context, sleeps.
 * Return: 0 or -errno.
 */
int rdlm_posix_get(struct rdlm_lockspace *ls, u64 number, struct file *file,
		   struct file_lock *fl)
{
	int type = rdlm_pl_type(fl);
	struct rdlm_msg a;
	int ret;

	if (type < 0 || type == RDLM_PL_UN)
		return -EINVAL;
	ret = rdlm_pl_ask(ls, RDLM_LM_PL_GET, number, fl, type, false, &a);
	if (!ret) {
		fl->fl_type = F_UNLCK;
		return 0;
	}
	if (ret != -EAGAIN)
		return ret;
	fl->fl_type = a.mode == RDLM_PL_WR ? F_WRLCK : F_RDLCK;
	fl->fl_start = a.token;
	fl->fl_end = a.arg > OFFSET_MAX ? OFFSET_MAX : a.arg;
	fl->fl_pid = (u32)a.arg2;
	if ((u32)(a.arg2 >> 32) != ls->self)
		fl->fl_pid = -fl->fl_pid;
	return 0;
}
EXPORT_SYMBOL_GPL(rdlm_posix_get);

/**
 * rdlm_posix_fcntl() - a file system's ->lock(), all of it
 * @ls: lockspace
 * @number: the file, the same on every node (e.g. its inode number)
 * @file: the open file
 * @cmd: F_GETLK, F_SETLK, F_SETLKW or F_CANCELLK (and their 64-bit forms)
 * @fl: the lock, as the VFS passes it
 *
 * Sends each command where it belongs, as OCFS2's user stack does for
 * fs/dlm: F_GETLK to rdlm_posix_get(), F_UNLCK (and F_CANCELLK, taken as
 * an unlock) to rdlm_posix_unlock(), the rest to rdlm_posix_lock().
 *
 * Context: process context, sleeps.
 * Return: as the function it calls.
 */
int rdlm_posix_fcntl(struct rdlm_lockspace *ls, u64 number, struct file *file,
		     int cmd, struct file_lock *fl)
{
	if (cmd == F_CANCELLK) {
		cmd = F_SETLK;
		fl->fl_type = F_UNLCK;
	}
	if (IS_GETLK(cmd))
		return rdlm_posix_get(ls, number, file, fl);
	if (fl->fl_type == F_UNLCK)
		return rdlm_posix_unlock(ls, number, file, fl);
	return rdlm_posix_lock(ls, number, file, cmd, fl);
}
EXPORT_SYMBOL_GPL(rdlm_posix_fcntl);
