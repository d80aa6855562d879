// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: lockspaces on this node, and their glue to engine and fabric.
 *
 * configfs enables a lockspace: the fabric side is created first, then
 * rdlm_lockspace_create() puts an engine instance on top of it and makes it
 * findable by name. Everything the engine hears (verb completions, messages,
 * timers) comes in here, is serialised by ls->lock and handed to the engine
 * through rdlm_ls_call_*() in lock.c. Disabling fails every waiting
 * request, reports every held lock lost, and waits for the callbacks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/mempool.h>
#include <linux/sort.h>

#include "lock_priv.h"

static DEFINE_MUTEX(rdlm_ls_mutex);
/* membership daemons' /dev/rdlm files, under rdlm_ls_mutex */
static unsigned int rdlm_controld_files;
static LIST_HEAD(rdlm_lockspaces);

/* ---- completions: queued, then run under ls->lock ------------------ */

enum rdlm_cqe_of {
	RDLM_CQE_ENGINE,	/* an engine verb */
	RDLM_CQE_LM,		/* a lock manager message that failed */
	RDLM_CQE_RECORD,	/* a READ of a home's LVB record */
};

struct rdlm_cqe_ev {
	struct llist_node node;
	struct rdlm_cqe cqe;
	u8 of;			/* enum rdlm_cqe_of */
	u8 record[RDLM_RECORD_SIZE];	/* what a record READ read */
};

static void rdlm_ls_run_cqes(struct rdlm_lockspace *ls)
{
	struct llist_node *list = llist_reverse_order(llist_del_all(&ls->cqes));
	struct rdlm_cqe_ev *ev, *tmp;

	llist_for_each_entry_safe(ev, tmp, list, node) {
		if (ls->dead)
			;	/* its requests are gone with the lockspace */
		else if (ev->of == RDLM_CQE_LM)
			rdlm_lm_send_failed(ls, &ev->cqe);
		else if (ev->of == RDLM_CQE_RECORD)
			rdlm_lvb_record_read(ls, &ev->cqe);
		else
			rdlm_ls_call_complete(ls, &ev->cqe);
		mempool_free(ev, ls->cqe_pool);
	}
}

/*
 * Run queued completions unless someone holds ls->lock: then the holder
 * runs them when it unlocks.
 */
static void rdlm_ls_drain(struct rdlm_lockspace *ls)
{
	while (!llist_empty(&ls->cqes) && spin_trylock_bh(&ls->lock)) {
		rdlm_ls_run_cqes(ls);
		rdlm_ls_cache_shrink(ls);
		spin_unlock_bh(&ls->lock);
		/* as in rdlm_ls_unlock() */
		smp_mb();
	}
}

/**
 * rdlm_ls_unlock() - drop ls->lock, then run completions that came meanwhile
 * @ls: lockspace
 *
 * A completion that found the lock taken was queued on ls->cqes; its poster
 * relies on the holder to run it.
 */
void rdlm_ls_unlock(struct rdlm_lockspace *ls)
	__releases(&ls->lock)
{
	rdlm_ls_cache_shrink(ls);
	spin_unlock_bh(&ls->lock);
	/* the unlock before the list check; pairs with llist_add() */
	smp_mb();
	rdlm_ls_drain(ls);
}

/*
 * Completions are few at a time (each is run at the next unlock of
 * ls->lock): when the slab has no memory, the lockspace's reserve carries
 * them, so that no request waits forever for a completion that was lost.
 */
#define RDLM_CQE_RESERVE	256

static void rdlm_ls_queue_cqe(struct rdlm_lockspace *ls,
			      const struct rdlm_cqe *cqe, u8 of)
{
	struct rdlm_cqe_ev *ev = mempool_alloc(ls->cqe_pool, GFP_ATOMIC);

	if (!ev) {
		/* more than the reserve waiting, and no memory */
		pr_err_ratelimited("lockspace %s: completion dropped\n",
				   ls->name);
		return;
	}
	ev->cqe = *cqe;
	ev->of = of;
	/* the fabric's buffer is gone when the completion runs */
	if (cqe->data) {
		memcpy(ev->record, cqe->data, RDLM_RECORD_SIZE);
		ev->cqe.data = ev->record;
	}
	llist_add(&ev->node, &ls->cqes);
	rdlm_ls_drain(ls);
}

/**
 * rdlm_ls_fail_cqe() - complete a verb that could not be posted
 * @ls: lockspace (locked)
 * @v: the verb
 * @status: -errno
 *
 * The engine hears of it after the current call, as of any completion.
 */
void rdlm_ls_fail_cqe(struct rdlm_lockspace *ls, const struct rdlm_verb *v,
		      int status)
{
	struct rdlm_cqe cqe = {
		.req = v->req, .cookie = v->cookie, .kind = v->kind,
		.status = status,
	};

	rdlm_ls_queue_cqe(ls, &cqe, RDLM_CQE_ENGINE);
}

/* rdlm_fabric_done_t of engine verbs: may run inside rdlm_fabric_post() */
void rdlm_ls_verb_done(void *ctx, const struct rdlm_cqe *cqe)
{
	rdlm_ls_queue_cqe(ctx, cqe, RDLM_CQE_ENGINE);
}

/* rdlm_fabric_done_t of the lock manager's own messages: only failures */
void rdlm_ls_lm_done(void *ctx, const struct rdlm_cqe *cqe)
{
	if (cqe->status)
		rdlm_ls_queue_cqe(ctx, cqe, RDLM_CQE_LM);
}

/* rdlm_fabric_done_t of the READs of a home's LVB record (lvb.c) */
void rdlm_ls_record_done(void *ctx, const struct rdlm_cqe *cqe)
{
	rdlm_ls_queue_cqe(ctx, cqe, RDLM_CQE_RECORD);
}

/* ---- fabric callbacks and timers ----------------------------------- */

/**
 * rdlm_ls_node_index() - engine index of a node id
 * @ls: lockspace
 * @nodeid: node id
 *
 * Return: the index, or U32_MAX for a node that is not a member.
 */
u32 rdlm_ls_node_index(struct rdlm_lockspace *ls, u32 nodeid)
{
	u32 i;

	for (i = 0; i < ls->nr_members; i++)
		if (ls->members[i] == nodeid)
			return i;
	return U32_MAX;
}

static void rdlm_ls_recv(void *priv, const struct rdlm_rx *rx)
{
	struct rdlm_lockspace *ls = priv;
	struct rdlm_rx r = *rx;

	r.src = rdlm_ls_node_index(ls, rx->src);
	if (r.src == U32_MAX)
		return;
	spin_lock_bh(&ls->lock);
	if (!ls->dead) {
		if (r.kind == RDLM_VERB_SEND && r.msg.type >= RDLM_LM_MSG_FIRST)
			rdlm_lm_recv(ls, &r);
		else
			rdlm_ls_call_recv(ls, &r);
	}
	rdlm_ls_unlock(ls);
}

static void rdlm_ls_peer(void *priv, u32 node, bool up)
{
	struct rdlm_lockspace *ls = priv;
	u32 idx = rdlm_ls_node_index(ls, node);

	pr_info("lockspace %s: node %u %s\n", ls->name, node,
		up ? "up" : "down");
	if (idx == U32_MAX)
		return;
	spin_lock_bh(&ls->lock);
	if (!ls->dead && up) {
		rdlm_ls_call_member_up(ls, idx);
	} else if (!ls->dead) {
		rdlm_home_lvb_node_down(ls, idx);
		rdlm_lm_home_down(ls, idx);
	}
	rdlm_ls_unlock(ls);
}

/* A member re-created the lockspace: the membership work lets it in. */
static bool rdlm_ls_restart(void *priv, u32 node)
{
	struct rdlm_lockspace *ls = priv;
	u32 idx = rdlm_ls_node_index(ls, node);
	bool admit = true;

	if (idx == U32_MAX)
		return true;
	spin_lock_bh(&ls->lock);
	if (!ls->dead) {
		rdlm_memb_restart(ls, idx);
		admit = false;
	}
	rdlm_ls_unlock(ls);
	return admit;
}

/* a fabric event about @node for the membership code, if it is a member */
static void rdlm_ls_memb_event(void *priv, u32 node,
			       void (*fn)(struct rdlm_lockspace *ls, u32 idx))
{
	struct rdlm_lockspace *ls = priv;
	u32 idx = rdlm_ls_node_index(ls, node);

	if (idx == U32_MAX)
		return;
	spin_lock_bh(&ls->lock);
	if (!ls->dead)
		fn(ls, idx);
	rdlm_ls_unlock(ls);
}

static void rdlm_ls_gone(void *priv, u32 node)
{
	rdlm_ls_memb_event(priv, node, rdlm_memb_gone);
}

static void rdlm_ls_withdrawn(void *priv, u32 node)
{
	rdlm_ls_memb_event(priv, node, rdlm_memb_withdrawn);
}

static const struct rdlm_fabric_ls_ops rdlm_ls_fabric_ops = {
	.recv		= rdlm_ls_recv,
	.peer		= rdlm_ls_peer,
	.restart	= rdlm_ls_restart,
	.gone		= rdlm_ls_gone,
	.withdrawn	= rdlm_ls_withdrawn,
};

static enum hrtimer_restart rdlm_ls_req_timer(struct hrtimer *t)
{
	struct rdlm_req_timer *rt = container_of(t, struct rdlm_req_timer,
						 timer);
	struct rdlm_lockspace *ls = rt->ls;

	spin_lock_bh(&ls->lock);
	if (!ls->dead)
		rdlm_ls_call_timer(ls, &ls->eng.reqs[rt - ls->req_timers],
				   rt->cookie);
	rdlm_ls_unlock(ls);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart rdlm_ls_cache_timer(struct hrtimer *t)
{
	struct rdlm_lockspace *ls = container_of(t, struct rdlm_lockspace,
						 cache_timer);

	spin_lock_bh(&ls->lock);
	if (!ls->dead)
		rdlm_ls_cache_expire(ls, false);
	rdlm_ls_unlock(ls);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart rdlm_ls_home_timer(struct hrtimer *t)
{
	struct rdlm_lockspace *ls = container_of(t, struct rdlm_lockspace,
						 home_timer);

	spin_lock_bh(&ls->lock);
	if (!ls->dead)
		rdlm_ls_call_timer(ls, NULL, ls->home_cookie);
	rdlm_ls_unlock(ls);
	return HRTIMER_NORESTART;
}

/**
 * rdlm_ls_arm() - arm the timer of an engine request (or the home's)
 * @ls: lockspace
 * @req: engine request, NULL for the home-side timer
 * @delay_ns: from now
 * @cookie: handed to the engine when it fires
 *
 * Re-arming replaces the expiry; the engine ignores stale cookies.
 */
void rdlm_ls_arm(struct rdlm_lockspace *ls, struct rdlm_req *req, u64 delay_ns,
		 u64 cookie)
{
	struct hrtimer *t;

	if (req) {
		t = &ls->req_timers[req->idx].timer;
		ls->req_timers[req->idx].cookie = cookie;
	} else {
		t = &ls->home_timer;
		ls->home_cookie = cookie;
	}
	hrtimer_start(t, ns_to_ktime(delay_ns), HRTIMER_MODE_REL_SOFT);
}

static int rdlm_ls_alloc_timers(struct rdlm_lockspace *ls, u32 nr)
{
	struct rdlm_req_timer *rt;
	u32 i;

	rt = kvcalloc(nr, sizeof(*rt), GFP_KERNEL);
	if (!rt)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		hrtimer_init(&rt[i].timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_SOFT);
		rt[i].timer.function = rdlm_ls_req_timer;
		rt[i].ls = ls;
	}
	ls->req_timers = rt;
	return 0;
}

/* ---- life cycle ---------------------------------------------------- */

static int rdlm_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Frees lockspaces whose last reference went; see rdlm_lockspace_put(). */
static struct workqueue_struct *rdlm_ls_free_wq;

static void rdlm_ls_free_work(struct work_struct *work)
{
	struct rdlm_lockspace *ls = container_of(work, struct rdlm_lockspace,
						 free_work);

	rdlm_lvb_fini(ls);
	rdlm_plock_fini(ls);
	rdlm_engine_fini(&ls->eng);
	kvfree(ls->req_timers);
	mempool_destroy(ls->cqe_pool);
	destroy_workqueue(ls->wq);
	rdlm_fabric_ls_put(ls->fls);
	kfree(ls);
	/* rdlm_lockspace_exit() drains this queue before the module goes */
	module_put(THIS_MODULE);
}

/*
 * The last reference may go in any context, an ast running on ls->wq
 * included: destroying that queue (or anything that sleeps) waits for a
 * work item of the module's own queue.
 */
static void rdlm_lockspace_release(struct kref *ref)
{
	struct rdlm_lockspace *ls = container_of(ref, struct rdlm_lockspace,
						 ref);

	queue_work(rdlm_ls_free_wq, &ls->free_work);
}

/**
 * rdlm_lockspace_init() - module init: the queue that frees lockspaces
 *
 * Return: 0 or -ENOMEM.
 */
int rdlm_lockspace_init(void)
{
	rdlm_ls_free_wq = alloc_workqueue("rdlm_ls_free", 0, 0);
	return rdlm_ls_free_wq ? 0 : -ENOMEM;
}

/**
 * rdlm_lockspace_exit() - module exit: wait until every lockspace is freed
 */
void rdlm_lockspace_exit(void)
{
	destroy_workqueue(rdlm_ls_free_wq);
}

static int rdlm_ls_debugfs_show(struct seq_file *m, void *unused);
DEFINE_SHOW_ATTRIBUTE(rdlm_ls_debugfs);

/**
 * rdlm_lockspace_create() - put the lock manager on an enabled fabric lockspace
 * @cfg: configuration (configfs)
 * @lsp: the new lockspace
 *
 * Takes its own reference on @cfg->fls. May sleep.
 *
 * Return: 0, -EEXIST (name in use), -EINVAL (engine parameters), -ENOMEM.
 */
int rdlm_lockspace_create(const struct rdlm_lockspace_cfg *cfg,
			  struct rdlm_lockspace **lsp)
{
	struct rdlm_engine_params p = cfg->params;
	struct rdlm_lockspace *ls, *o;
	int ret;

	if (!cfg->ops || !cfg->nr_members || cfg->nr_members > RDLM_MAX_MEMBERS)
		return -EINVAL;
	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return -ENOMEM;
	kref_init(&ls->ref);
	strscpy(ls->name, cfg->name, sizeof(ls->name));
	ls->nr_members = cfg->nr_members;
	memcpy(ls->members, cfg->members, cfg->nr_members * sizeof(u32));
	sort(ls->members, ls->nr_members, sizeof(u32), rdlm_u32_cmp, NULL);
	ls->self = rdlm_ls_node_index(ls, cfg->local);
	ls->nr_slots = cfg->nr_slots;
	ls->local_grants_max = cfg->local_grants_max;
	ls->cache_ns = (u64)cfg->cache_us * NSEC_PER_USEC;
	ls->max_locks = cfg->max_locks;
	ls->max_locks_per_file = cfg->max_locks_per_file;
	ls->max_lvbs = cfg->max_lvbs;
	ls->lvb_len = cfg->lvb_len;
	ls->lvb_read = cfg->lvb_read;
	ls->uid = cfg->uid;
	ls->gid = cfg->gid;
	ls->mode = cfg->mode;
	spin_lock_init(&ls->lock);
	init_llist_head(&ls->cqes);
	hash_init(ls->slots);
	hash_init(ls->res);
	hash_init(ls->lkbs);
	INIT_LIST_HEAD(&ls->cb_list);
	INIT_WORK(&ls->cb_work, rdlm_ls_cb_work);
	INIT_WORK(&ls->free_work, rdlm_ls_free_work);
	init_waitqueue_head(&ls->wait);
	hrtimer_init(&ls->home_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	ls->home_timer.function = rdlm_ls_home_timer;
	hrtimer_init(&ls->cache_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	ls->cache_timer.function = rdlm_ls_cache_timer;
	rdlm_memb_init(ls, cfg->recovery_grace_ms, cfg->fencing);
	rdlm_rehome_init(ls);

	rdlm_plock_init(ls);
	ret = rdlm_lvb_init(ls);
	if (ret)
		goto out_free;
	ret = -EINVAL;
	if (ls->self == U32_MAX)
		goto out_free;
	p.node = ls->self;
	p.nr_nodes = ls->nr_members;
	p.nr_slots = ls->nr_slots;
	ret = -ENOMEM;
	ls->cqe_pool = mempool_create_kmalloc_pool(RDLM_CQE_RESERVE,
						   sizeof(struct rdlm_cqe_ev));
	ls->wq = alloc_ordered_workqueue("rdlm_%s", WQ_MEM_RECLAIM, ls->name);
	if (!ls->cqe_pool || !ls->wq)
		goto out_free;
	ret = rdlm_engine_init(&ls->eng, cfg->ops, &p);
	if (ret)
		goto out_free;
	ret = rdlm_ls_alloc_timers(ls, ls->eng.p.nr_reqs);
	if (ret)
		goto out_engine;

	mutex_lock(&rdlm_ls_mutex);
	list_for_each_entry(o, &rdlm_lockspaces, entry) {
		if (!strcmp(o->name, ls->name)) {
			mutex_unlock(&rdlm_ls_mutex);
			ret = -EEXIST;
			goto out_timers;
		}
	}
	ls->fls = rdlm_fabric_ls_get(ls->name);
	if (!ls->fls) {
		mutex_unlock(&rdlm_ls_mutex);
		ret = -ENOENT;
		goto out_timers;
	}
	ls->nr_records = rdlm_fabric_ls_nr_records(ls->fls);
	if (cfg->managed && rdlm_controld_files) {
		/*
		 * Its members may hold its names from an earlier incarnation
		 * here: frozen until the first membership's barrier
		 */
		pr_info("lockspace %s: rdlm_controld runs: no grant before the first membership\n",
			ls->name);
		ls->rh_active = true;
		ls->rh_stable = 0;
	}
	__module_get(THIS_MODULE);
	rdlm_fabric_ls_set_ops(ls->fls, &rdlm_ls_fabric_ops, ls);
	list_add_tail(&ls->entry, &rdlm_lockspaces);
	mutex_unlock(&rdlm_ls_mutex);

	if (!IS_ERR_OR_NULL(rdlm_debugfs_root)) {
		struct dentry *dir = debugfs_lookup("ls", rdlm_debugfs_root);

		if (!dir)
			dir = debugfs_create_dir("ls", rdlm_debugfs_root);
		else
			dput(dir);
		ls->debugfs = debugfs_create_file(ls->name, 0400, dir, ls,
						  &rdlm_ls_debugfs_fops);
	}
	pr_info("lockspace %s: engine %s, node %u of %u members, %u slots\n",
		ls->name, cfg->ops->name, cfg->local, ls->nr_members,
		ls->nr_slots);
	*lsp = ls;
	return 0;

out_timers:
	kvfree(ls->req_timers);
out_engine:
	rdlm_engine_fini(&ls->eng);
out_free:
	if (ls->wq)
		destroy_workqueue(ls->wq);
	mempool_destroy(ls->cqe_pool);
	rdlm_lvb_fini(ls);
	rdlm_plock_fini(ls);
	kfree(ls);
	return ret;
}

/**
 * rdlm_lockspace_lvb_len() - bytes of a lockspace's lock value blocks
 * @ls: lockspace
 *
 * Callers pass LVB buffers of this size (configfs lvb_len: 16, 32, 48 or
 * 64 bytes, the same on every node; fs/dlm's lvblen).
 *
 * Context: any.
 * Return: the length in bytes.
 */
u32 rdlm_lockspace_lvb_len(struct rdlm_lockspace *ls)
{
	return ls->lvb_len;
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_lvb_len);

/* Does @ls have locks on this node (rdlm_release_lockspace())? */
bool rdlm_lockspace_busy(struct rdlm_lockspace *ls)
{
	return atomic_read(&ls->nr_lkbs);
}

/**
 * rdlm_lockspace_stop() - stop a lockspace's locks (configfs disable, step 1)
 * @ls: lockspace from rdlm_lockspace_create()
 *
 * It cannot be found any more, new requests fail with -ENOLCK, waiting
 * ones complete with -ENOLCK and held ones are reported lost. Returns once
 * every lock has gone through its last callback. The fabric callbacks stay
 * attached and find the lockspace dead: the caller destroys the fabric
 * lockspace next, which waits for the verbs in flight, and only then
 * rdlm_lockspace_destroy() frees what their completions touch.
 *
 * Context: process context, sleeps.
 */
void rdlm_lockspace_stop(struct rdlm_lockspace *ls)
{
	mutex_lock(&rdlm_ls_mutex);
	list_del_init(&ls->entry);
	mutex_unlock(&rdlm_ls_mutex);
	rdlm_memb_stop(ls);

	spin_lock_bh(&ls->lock);
	/* words kept for locks to come: their releases go out first */
	ls->cache_off = true;
	rdlm_ls_cache_expire(ls, true);
	ls->dead = true;
	rdlm_ls_fail_all(ls);
	rdlm_ls_unlock(ls);
	cancel_delayed_work_sync(&ls->rh_work);
	cancel_delayed_work_sync(&ls->pl_retry);

	/* every lock got its last callback queued: let them run */
	flush_workqueue(ls->wq);
	wait_event(ls->wait, !atomic_read(&ls->nr_lkbs));
}

/**
 * rdlm_lockspace_destroy() - take a stopped lockspace down (step 2)
 * @ls: lockspace after rdlm_lockspace_stop() and rdlm_fabric_ls_destroy()
 *
 * No verb of the lockspace is in flight any more: detach from the fabric,
 * stop the timers, forget the slots. The memory goes with the last
 * reference (rdlm_lockspace_put()); when this call drops it, the memory and
 * the lockspace's module reference are gone when it returns.
 *
 * Context: process context, sleeps.
 */
void rdlm_lockspace_destroy(struct rdlm_lockspace *ls)
{
	u32 i;

	rdlm_fabric_ls_set_ops(ls->fls, NULL, NULL);
	hrtimer_cancel(&ls->home_timer);
	hrtimer_cancel(&ls->cache_timer);
	for (i = 0; i < ls->eng.p.nr_reqs; i++)
		hrtimer_cancel(&ls->req_timers[i].timer);
	flush_workqueue(ls->wq);
	debugfs_remove(ls->debugfs);
	spin_lock_bh(&ls->lock);
	rdlm_ls_run_cqes(ls);
	rdlm_ls_free_slots(ls);
	spin_unlock_bh(&ls->lock);
	kref_put(&ls->ref, rdlm_lockspace_release);
	/*
	 * Most often that was the last reference: once its free work ran the
	 * lockspace holds no module reference, so "rdlm-configure down" then
	 * "rmmod rdlm" cannot find the module still in use.
	 */
	flush_workqueue(rdlm_ls_free_wq);
}

/**
 * rdlm_lockspaces_controld() - a membership daemon's file opens or closes
 * @attach: RDLM_IOC_CONTROLD on a file (true), or its release (false)
 *
 * When the last one closes, every lockspace whose membership was written
 * stops (rdlm_memb_orphan()).
 *
 * Context: process, sleeps.
 */
void rdlm_lockspaces_controld(bool attach)
{
	struct rdlm_lockspace *ls;

	mutex_lock(&rdlm_ls_mutex);
	if (attach)
		rdlm_controld_files++;
	else if (!--rdlm_controld_files)
		list_for_each_entry(ls, &rdlm_lockspaces, entry)
			rdlm_memb_orphan(ls);
	mutex_unlock(&rdlm_ls_mutex);
}

/**
 * rdlm_lockspace_find() - find an enabled lockspace by name
 * @name: lockspace name, as configured in /sys/kernel/config/rdlm/lockspaces
 * @lsp: the lockspace, referenced
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOENT if no such lockspace is enabled.
 */
int rdlm_lockspace_find(const char *name, struct rdlm_lockspace **lsp)
{
	struct rdlm_lockspace *ls;
	int ret = -ENOENT;

	mutex_lock(&rdlm_ls_mutex);
	list_for_each_entry(ls, &rdlm_lockspaces, entry) {
		if (!strcmp(ls->name, name)) {
			kref_get(&ls->ref);
			*lsp = ls;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&rdlm_ls_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_find);

/**
 * rdlm_lockspace_put() - drop the reference of rdlm_lockspace_find()
 * @ls: lockspace
 *
 * The caller must have released or cancelled its locks first (a disabled
 * lockspace reports them lost and waits for their unlock). The last
 * reference frees the lockspace from a work item, so this never sleeps and
 * may be called from an ast.
 *
 * Context: any context but hard interrupts.
 */
void rdlm_lockspace_put(struct rdlm_lockspace *ls)
{
	kref_put(&ls->ref, rdlm_lockspace_release);
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_put);

/**
 * rdlm_lockspace_this_node() - this node's id in a lockspace
 * @ls: lockspace from rdlm_lockspace_find()
 *
 * The id is the one configured for this node (configfs nodes/NAME/nodeid
 * with local set), the one membership events (&struct rdlm_lockspace_ops)
 * name other nodes by: a cluster file system uses it as its node number.
 *
 * Context: any context.
 * Return: the node id, 1..RDLM_MAX_NODEID.
 */
u32 rdlm_lockspace_this_node(struct rdlm_lockspace *ls)
{
	return ls->members[ls->self];
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_this_node);

/**
 * rdlm_lockspace_may_join() - may the current task use @ls through /dev/rdlm?
 * @ls: lockspace
 *
 * Return: 0 or -EPERM, by the lockspace's configfs uid, gid and mode;
 * CAP_SYS_ADMIN always may.
 */
int rdlm_lockspace_may_join(struct rdlm_lockspace *ls)
{
	umode_t mode = ls->mode;

	if (capable(CAP_SYS_ADMIN))
		return 0;
	if (uid_eq(current_fsuid(), ls->uid))
		mode >>= 6;
	else if (in_group_p(ls->gid))
		mode >>= 3;
	return (mode & 06) == 06 ? 0 : -EPERM;
}

/**
 * rdlm_lockspace_get_stats() - this node's counters of a lockspace
 * @ls: lockspace
 * @st: filled in
 */
void rdlm_lockspace_get_stats(struct rdlm_lockspace *ls,
			      struct rdlm_lockspace_stats *st)
{
	u32 i;

	spin_lock_bh(&ls->lock);
	*st = ls->st;
	st->lvbs = ls->nr_lvbs;
	rdlm_ls_unlock(ls);
	for (i = 0; i < RDLM_VERB_NR; i++)
		st->verbs[i] += rdlm_stat_read(&ls->eng.stats.verbs[i]);
	st->locks = atomic_read(&ls->nr_lkbs);
}

/**
 * rdlm_lockspace_max_file_locks() - the lockspace's max_locks_per_file
 * @ls: lockspace
 *
 * Return: how many locks (and unread completion events) one /dev/rdlm file
 * may have in @ls.
 */
u32 rdlm_lockspace_max_file_locks(struct rdlm_lockspace *ls)
{
	return ls->max_locks_per_file;
}

/**
 * rdlm_lockspace_name() - name of a lockspace
 * @ls: lockspace
 *
 * Return: the name, valid as long as the reference.
 */
const char *rdlm_lockspace_name(struct rdlm_lockspace *ls)
{
	return ls->name;
}

/* debugfs: what the engine says of its busy requests and its home side */
static void rdlm_ls_dump_engine(struct rdlm_lockspace *ls, struct seq_file *m)
{
	const struct rdlm_engine_ops *ops = ls->eng.ops;
	char buf[160];
	u32 i;

	if (!ops->describe)
		return;
	ops->describe(&ls->eng, NULL, buf, sizeof(buf));
	seq_printf(m, "home %s\n", buf);
	for (i = 0; i < ls->eng.p.nr_reqs; i++) {
		struct rdlm_req *req = &ls->eng.reqs[i];

		if (!req->busy)
			continue;
		ops->describe(&ls->eng, req, buf, sizeof(buf));
		seq_printf(m, "req %u home %u slot %u mode %u %s\n", i,
			   ls->members[req->node], req->slot, req->mode, buf);
	}
}

static int rdlm_ls_debugfs_show(struct seq_file *m, void *unused)
{
	struct rdlm_lockspace *ls = m->private;
	struct rdlm_lockspace_stats st;
	static const char *const verbs[] = { "fa", "cas", "read",
					     "write_imm", "send" };
	u32 i;

	rdlm_lockspace_get_stats(ls, &st);
	seq_printf(m, "lockspace %s engine %s node %u members",
		   ls->name, ls->eng.ops->name, ls->members[ls->self]);
	for (i = 0; i < ls->nr_members; i++)
		seq_printf(m, " %u", ls->members[i]);
	seq_printf(m, "\nrequests %llu grants %llu local_grants %llu fails %llu cancels %llu unlocks %llu basts %llu lost %llu lvb_invalidated %llu lvb_lost %llu lvbs %llu lvb_evicted %llu locks %llu\n",
		   st.requests, st.grants, st.local_grants, st.fails,
		   st.cancels, st.unlocks, st.basts, st.lost,
		   st.lvb_invalidated, st.lvb_lost, st.lvbs, st.lvb_evicted,
		   st.locks);
	seq_printf(m, "asts queued %llu direct %llu inline %llu retakes %llu lvb_peeks %llu lvb_reads %llu lvb_read_misses %llu upgrades %llu downgrades %llu\n",
		   st.asts_queued, st.asts_direct, st.asts_inline, st.retakes,
		   st.lvb_peeks, st.lvb_reads, st.lvb_read_misses,
		   st.upgrades, st.downgrades);
	seq_printf(m, "cache kept %llu hits %llu revoked %llu\n",
		   st.cache_kept, st.cache_hits, st.cache_revoked);
	seq_puts(m, "verbs");
	for (i = 0; i < RDLM_VERB_NR; i++)
		seq_printf(m, " %s %llu", verbs[i], st.verbs[i]);
	seq_printf(m, "\nengine grants %llu fails %llu lost %llu resets %llu cas_failed %llu busy %llu stale %llu recovers %llu fences %llu\n",
		   rdlm_stat_read(&ls->eng.stats.grants),
		   rdlm_stat_read(&ls->eng.stats.fails),
		   rdlm_stat_read(&ls->eng.stats.lost),
		   rdlm_stat_read(&ls->eng.stats.resets),
		   rdlm_stat_read(&ls->eng.stats.cas_failed),
		   rdlm_stat_read(&ls->eng.stats.busy),
		   rdlm_stat_read(&ls->eng.stats.stale),
		   rdlm_stat_read(&ls->eng.stats.recovers),
		   rdlm_stat_read(&ls->eng.stats.fences));
	spin_lock_bh(&ls->lock);
	rdlm_ls_dump_engine(ls, m);
	rdlm_ls_dump_locks(ls, m);
	rdlm_plock_dump(ls, m);
	rdlm_ls_unlock(ls);
	return 0;
}
