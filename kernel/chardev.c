// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the /dev/rdlm character device, the programs' way in.
 *
 * Every open file is a struct rdlm_file. RDLM_IOC_JOIN binds it to one
 * lockspace, found through the exported API (rdlm_lockspace_find()), if
 * rdlm_lockspace_may_join() lets the caller in. Every lock the file takes
 * is a struct rdlm_ulock in the file's hash table, under an id of its own (the
 * lkid programs see); it holds the lock's status block and LVB for the
 * exported API, the program's cookie and the lock's counters.
 *
 * Every request goes to the lock manager through rdlm_lock() and
 * rdlm_unlock(); its completion comes back as rdlm_dev_ast() in the
 * lockspace's work queue. A blocking request uses rdlm_lock_inline() and
 * rdlm_unlock_inline(): a completion that comes before the call returns
 * (a kept hold, a CPU-atomic word at home) runs in the caller's context,
 * which then need not sleep. A lock has at most one request in flight, and its
 * state (RDLM_LKS_*) tells which one: the ast learns from it what completed.
 * The completion then goes to one of three places:
 *
 *  - a caller blocked in the ioctl (sync): @result and @done, then a wake-up;
 *  - the file's event queue (RDLM_LKF_ASYNC): an event allocated when the
 *    request was made, so that no completion is ever lost to a failed
 *    allocation and the memory is charged to the program;
 *  - nowhere, while the file is being closed.
 *
 * Blocking callbacks become RDLM_EV_BLOCKING events; each lock has one
 * embedded blocking event, queued at most once: later notices for the same
 * lock only raise its mode until the program read it.
 *
 * A blocking request that a signal interrupts is cancelled and the caller
 * waits (uninterruptibly, but without counting as a hung task) for its
 * final completion. If the request was granted before the cancel took
 * effect, a first request is unlocked again and the call returns -EINTR as
 * if it had been cancelled, so that -EINTR always means "no new lock"; a
 * conversion stays granted and the call returns 0, because undoing it
 * would be a conversion back that may itself have to wait.
 *
 * close() (and so the death of the process) cancels every waiting request,
 * unlocks every lock, including those granted while it does so (the ast
 * unlocks them), waits until the last one is gone and only then drops the
 * lockspace reference.
 *
 * Locking: @mutex serialises the ioctls that create, look up or submit, so
 * that no lock is visible before its first request is accepted; it is
 * never held while waiting for a completion. @lock (a spinlock) protects
 * the lock states, the hash table's contents and the event queue against the
 * ast and bast, which take nothing else. A lock's memory is reference
 * counted: one reference for the hash table while it lives, one for the
 * request in flight, one for a caller waiting for it.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rdlm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rdlm.h"

/* Flags a program may give RDLM_IOC_LOCK and RDLM_IOC_UNLOCK. */
#define RDLM_DEV_LOCK_FLAGS	((RDLM_LKF_ALL & ~(RDLM_LKF_CANCEL | \
						   RDLM_LKF_IVVALBLK)) | \
				 RDLM_LKF_ASYNC | RDLM_LKF_RANGE)
#define RDLM_DEV_RANGE_FLAGS	(RDLM_LKF_NOQUEUE | RDLM_LKF_ASYNC | \
				 RDLM_LKF_RANGE)
#define RDLM_DEV_UNLOCK_FLAGS	(RDLM_LKF_VALBLK | RDLM_LKF_IVVALBLK | \
				 RDLM_LKF_CANCEL | RDLM_LKF_ASYNC)

/* A file's locks by id: 16 a bucket at the default max_locks_per_file. */
#define RDLM_FILE_HASH_BITS	8

/* Lock state of a lock whose last request completed (not in the file). */
#define RDLM_LKS_DEAD		0

/* Objects alive, for debugfs and the leak checks of the selftests. */
static atomic_t rdlm_dev_nr_files = ATOMIC_INIT(0);
static atomic_t rdlm_dev_nr_locks = ATOMIC_INIT(0);
static atomic_t rdlm_dev_nr_events = ATOMIC_INIT(0);
static struct dentry *rdlm_dev_debugfs;

struct rdlm_file;

/**
 * struct rdlm_uevent - an event waiting to be read()
 * @node: in &rdlm_file.events
 * @rf: the file it is counted in (completion events), NULL if embedded
 * @embedded: part of its lock (blocking and lost notices), not allocated
 * @queued: an embedded event is in the queue
 * @ev: the record
 */
struct rdlm_uevent {
	struct list_head node;
	struct rdlm_file *rf;
	bool embedded;
	bool queued;
	struct rdlm_event ev;
};

/**
 * struct rdlm_file - one open /dev/rdlm
 * @ref: references: the open file, and each of its locks
 * @mutex: serialises join, lock creation, lookups and submissions
 * @lock: protects lock states, @locks' contents, @nr_locks, @events, @closing
 * @ls: the joined lockspace (a reference), NULL before RDLM_IOC_JOIN
 * @locks: the file's locks by id
 * @next_id: next id to try (ids are handed out cyclically from 1)
 * @nr_locks: the file's locks: in @locks, or taken out by its release
 * @nr_events: completion events allocated (requests in flight, unread)
 * @events: queued &struct rdlm_uevent, oldest first
 * @wait: read()/poll(), blocked callers, close()
 * @closing: release() runs: completions unlock whatever they grant
 * @watch: membership events of @ls (RDLM_JOIN_RECOVERY)
 * @watching: @watch is registered
 * @controld: the membership daemon's file (RDLM_IOC_CONTROLD, under @mutex)
 */
struct rdlm_file {
	struct kref ref;
	struct mutex mutex;	/* see above */
	spinlock_t lock;	/* see above */
	struct rdlm_lockspace *ls;
	DECLARE_HASHTABLE(locks, RDLM_FILE_HASH_BITS);
	u32 next_id;
	u32 nr_locks;
	atomic_t nr_events;
	struct list_head events;
	wait_queue_head_t wait;
	bool closing;
	struct rdlm_watch watch;
	bool watching;
	bool controld;
};

/**
 * struct rdlm_ulock - one lock of an open file
 * @ref: references: @locks entry, request in flight, waiting caller
 * @rf: the file
 * @id: the lock's id in the file (the lkid programs see)
 * @hash: its entry in @rf->locks
 * @lksb: status block of the exported API; @lksb.lvb points to @lvb
 * @lvb: the lock value block
 * @user: the program's cookie, copied into events
 * @name: resource name
 * @namelen: bytes of @name
 * @state: RDLM_LKS_*: which request is in flight, if any
 * @mode: granted mode
 * @req_mode: mode of the last lock or convert request
 * @req_flags: RDLM_LKF_* of the request in flight
 * @sync: a caller sleeps in the ioctl for the request in flight
 * @abandoned: that caller left (fatal signal) before the completion: a
 *	first request granted then is unlocked again
 * @done: the request of the sleeping caller completed with @result
 * @result: its status
 * @result_flags: its RDLM_SBF_* flags
 * @lost: the lock manager reported the lock lost (it must still be unlocked)
 * @cev: completion event of an asynchronous request in flight
 * @bev: the lock's blocking notice
 * @lev: the lock's lost notice
 * @wait_start: when the request in flight was made
 * @grants: requests granted
 * @fails: requests failed or cancelled
 * @basts: blocking callbacks received
 * @wait_ns: time lock and convert requests waited
 */
struct rdlm_ulock {
	struct kref ref;
	struct rdlm_file *rf;
	u32 id;
	struct hlist_node hash;
	struct rdlm_lksb lksb;
	char lvb[RDLM_LVB_MAX];
	u64 user;
	u8 name[RDLM_NAME_MAX];
	u32 namelen;
	u32 state;
	u32 mode;
	u32 req_mode;
	u32 req_flags;
	bool sync;
	bool abandoned;
	bool done;
	int result;
	u32 result_flags;
	bool lost;
	struct rdlm_uevent *cev;
	struct rdlm_uevent bev;
	struct rdlm_uevent lev;
	ktime_t wait_start;
	u64 grants;
	u64 fails;
	u64 basts;
	u64 wait_ns;
};

/*
 * A completion event for an asynchronous request of @rf, or -EAGAIN when
 * the file has max_locks_per_file of them (in flight or unread) already.
 */
static int rdlm_uevent_alloc(struct rdlm_file *rf, struct rdlm_uevent **uevp)
{
	struct rdlm_lockspace *ls = READ_ONCE(rf->ls);
	struct rdlm_uevent *uev;

	if (ls && atomic_read(&rf->nr_events) >=
		  rdlm_lockspace_max_file_locks(ls))
		return -EAGAIN;
	uev = kzalloc(sizeof(*uev), GFP_KERNEL_ACCOUNT);
	if (!uev)
		return -ENOMEM;
	uev->rf = rf;
	atomic_inc(&rf->nr_events);
	atomic_inc(&rdlm_dev_nr_events);
	*uevp = uev;
	return 0;
}

/* Free a completion event (NULL is fine); blocking ones are in their lock. */
static void rdlm_uevent_free(struct rdlm_uevent *uev)
{
	if (!uev)
		return;
	atomic_dec(&uev->rf->nr_events);
	kfree(uev);
	atomic_dec(&rdlm_dev_nr_events);
}

/*
 * The last reference to an open file: its release, or the last of its
 * locks, whose completion may come after close() returned.
 */
static void rdlm_file_free(struct kref *ref)
{
	struct rdlm_file *rf = container_of(ref, struct rdlm_file, ref);
	struct rdlm_uevent *uev, *tmp;

	/* may run in an ast: the put does not sleep */
	if (rf->ls)
		rdlm_lockspace_put(rf->ls);
	/* only allocated events are left: embedded ones died with their lock */
	list_for_each_entry_safe(uev, tmp, &rf->events, node) {
		list_del(&uev->node);
		rdlm_uevent_free(uev);
	}
	mutex_destroy(&rf->mutex);
	kfree(rf);
	atomic_dec(&rdlm_dev_nr_files);
}

static void rdlm_ulock_free(struct kref *ref)
{
	struct rdlm_ulock *ul = container_of(ref, struct rdlm_ulock, ref);
	struct rdlm_file *rf = ul->rf;

	rdlm_uevent_free(ul->cev);
	kfree(ul);
	atomic_dec(&rdlm_dev_nr_locks);
	kref_put(&rf->ref, rdlm_file_free);
}

static void rdlm_ulock_put(struct rdlm_ulock *ul)
{
	kref_put(&ul->ref, rdlm_ulock_free);
}

/* Forget a dead lock: the caller holds rf->lock and drops @locks' ref. */
static void rdlm_ulock_unlink(struct rdlm_file *rf, struct rdlm_ulock *ul)
{
	lockdep_assert_held(&rf->lock);
	ul->state = RDLM_LKS_DEAD;
	/* notices about a lock that is gone would only confuse */
	if (ul->bev.queued) {
		list_del(&ul->bev.node);
		ul->bev.queued = false;
	}
	if (ul->lev.queued) {
		list_del(&ul->lev.node);
		ul->lev.queued = false;
	}
	hash_del(&ul->hash);
	rf->nr_locks--;
	wake_up_all(&rf->wait);
}

static void rdlm_dev_queue_event(struct rdlm_file *rf, struct rdlm_uevent *uev)
{
	list_add_tail(&uev->node, &rf->events);
	wake_up_all(&rf->wait);
}

/* Queue an embedded notice of @ul, unless it waits in the queue already. */
static void rdlm_dev_queue_notice(struct rdlm_file *rf, struct rdlm_ulock *ul,
				  struct rdlm_uevent *uev, u32 type, int status,
				  u32 mode, u32 sb_flags)
{
	if (uev->queued || rf->closing)
		return;
	memset(&uev->ev, 0, sizeof(uev->ev));
	uev->ev.size = sizeof(uev->ev);
	uev->ev.type = type;
	uev->ev.lkid = ul->id;
	uev->ev.status = status;
	uev->ev.mode = mode;
	uev->ev.sb_flags = sb_flags;
	uev->ev.user = ul->user;
	uev->queued = true;
	rdlm_dev_queue_event(rf, uev);
}

/*
 * The lock manager reported a granted lock lost (its lease expired): tell
 * the program with an event like the kernel API's ast, -ENOLCK and
 * RDLM_SBF_LOST. The lock stays until it is unlocked.
 */
static void rdlm_dev_lost(struct rdlm_file *rf, struct rdlm_ulock *ul)
{
	lockdep_assert_held(&rf->lock);
	ul->lost = true;
	rdlm_dev_queue_notice(rf, ul, &ul->lev, RDLM_EV_COMPLETION, -ENOLCK,
			      ul->mode, RDLM_SBF_LOST);
}

/*
 * Completion of a lock's request in flight (the exported API's ast):
 * process context, never with rdlm's locks held. Besides the completion of
 * the request in flight, a lock can get one more ast: -ENOLCK with
 * RDLM_SBF_LOST when its lease was lost (it stays granted) or when the
 * lockspace went away (it is gone).
 */
static void rdlm_dev_ast(void *arg)
{
	struct rdlm_ulock *ul = arg;
	struct rdlm_file *rf = ul->rf;
	struct rdlm_uevent *cev;
	bool dead = false, unlock = false, lost;
	u32 sb_flags;
	int status, ret;

	spin_lock(&rf->lock);
	status = ul->lksb.status;
	sb_flags = ul->lksb.flags;
	lost = status == -ENOLCK && (sb_flags & RDLM_SBF_LOST);
	switch (ul->state) {
	case RDLM_LKS_WAITING:
	case RDLM_LKS_CONVERTING:
		if (lost) {
			/*
			 * Granted but still waiting for the LVB, or converting,
			 * when the lease was lost; or killed with the
			 * lockspace? A cancel tells (-ENOENT: killed), and ends
			 * a conversion of a lock that is lost anyway.
			 */
			ret = rdlm_unlock(rf->ls, ul->lksb.lkid,
					  RDLM_LKF_CANCEL, NULL, ul);
			if (ret != -ENOENT) {
				rdlm_dev_lost(rf, ul);
				spin_unlock(&rf->lock);
				return;
			}
		}
		ul->wait_ns += ktime_to_ns(ktime_sub(ktime_get(), ul->wait_start));
		if (!status) {
			ul->mode = ul->req_mode;
			if (sb_flags & RDLM_SBF_ALTMODE)
				ul->mode = ul->req_flags & RDLM_LKF_ALTPR ?
					   RDLM_LOCK_PR : RDLM_LOCK_CW;
			ul->grants++;
		} else {
			ul->fails++;
			/* an up-conversion waited in NL: it stays there */
			if (sb_flags & RDLM_SBF_DEMOTED)
				ul->mode = RDLM_LOCK_NL;
			/* a down-conversion done, its LVB write lost */
			if (status == -EIO)
				ul->mode = ul->req_mode;
		}
		/* a first request granted after its caller left is undone */
		if (!status && ul->abandoned && ul->state == RDLM_LKS_WAITING)
			unlock = true;
		ul->abandoned = false;
		/* a failed first request leaves no lock behind */
		dead = status && (ul->state == RDLM_LKS_WAITING || lost);
		ul->state = RDLM_LKS_GRANTED;
		break;
	case RDLM_LKS_UNLOCKING:
		/* -EIO: gone, but the home did not confirm its LVB write */
		if (status == -RDLM_EUNLOCK || status == -EIO) {
			dead = true;
			break;
		}
		/* a lost notice queued before the unlock: it is gone anyway */
		spin_unlock(&rf->lock);
		return;
	case RDLM_LKS_GRANTED:
		/*
		 * Lost, or killed with the lockspace (then unlocking it
		 * finds nothing and forgets it).
		 */
		if (lost)
			rdlm_dev_lost(rf, ul);
		spin_unlock(&rf->lock);
		return;
	default:
		spin_unlock(&rf->lock);
		return;
	}
	if (dead)
		ul->mode = RDLM_LOCK_NL;

	cev = ul->cev;
	ul->cev = NULL;
	if (cev) {
		struct rdlm_event *ev = &cev->ev;

		ev->size = sizeof(*ev);
		ev->type = RDLM_EV_COMPLETION;
		ev->lkid = ul->id;
		ev->status = status;
		ev->mode = ul->mode;
		ev->sb_flags = sb_flags;
		ev->user = ul->user;
		if (!status && (ul->req_flags & RDLM_LKF_VALBLK))
			memcpy(ev->lvb, ul->lvb, RDLM_LVB_MAX);
		rdlm_dev_queue_event(rf, cev);
	} else if (ul->sync) {
		ul->result = status;
		ul->result_flags = sb_flags;
		ul->done = true;
		ul->sync = false;
	}

	if (dead) {
		rdlm_ulock_unlink(rf, ul);
	} else if (rf->closing || unlock) {
		/* granted (or left granted) while the file closes */
		unlock = true;
		ul->state = RDLM_LKS_UNLOCKING;
		ul->req_flags = 0;
		kref_get(&ul->ref);
	}
	wake_up_all(&rf->wait);
	spin_unlock(&rf->lock);

	if (unlock) {
		ret = rdlm_unlock(rf->ls, ul->lksb.lkid, 0, NULL, ul);
		if (ret) {
			/* no completion will come: the lock is gone already */
			spin_lock(&rf->lock);
			rdlm_ulock_unlink(rf, ul);
			spin_unlock(&rf->lock);
			rdlm_ulock_put(ul);	/* the unlock's */
			dead = true;
		}
	}
	if (dead)
		rdlm_ulock_put(ul);		/* @locks' */
	rdlm_ulock_put(ul);			/* the request's */
}

/* Blocking callback: someone waits for @mode, which this lock blocks. */
static void rdlm_dev_bast(void *arg, int mode)
{
	struct rdlm_ulock *ul = arg;
	struct rdlm_file *rf = ul->rf;

	spin_lock(&rf->lock);
	if (ul->state == RDLM_LKS_GRANTED || ul->state == RDLM_LKS_CONVERTING) {
		ul->basts++;
		/* not read yet: one notice, the most restrictive mode */
		if (ul->bev.queued)
			ul->bev.ev.mode = max_t(u32, ul->bev.ev.mode, mode);
		else
			rdlm_dev_queue_notice(rf, ul, &ul->bev, RDLM_EV_BLOCKING,
					      0, mode, 0);
	}
	spin_unlock(&rf->lock);
}

/* The lock @id of @rf (locked), or NULL. */
static struct rdlm_ulock *rdlm_ulock_find(struct rdlm_file *rf, u32 id)
{
	struct rdlm_ulock *ul;

	lockdep_assert_held(&rf->lock);
	hash_for_each_possible(rf->locks, ul, hash, id)
		if (ul->id == id)
			return ul;
	return NULL;
}

/*
 * Give @ul the next unused id of @rf (locked) and add it. Ids go round, so
 * that a program's stale lkid names no newer lock for a long time; in a
 * hash table, as the lock manager's (rdlm_lkb_add()).
 */
static void rdlm_ulock_add(struct rdlm_file *rf, struct rdlm_ulock *ul)
{
	lockdep_assert_held(&rf->lock);
	do {
		ul->id = rf->next_id++;
	} while (!ul->id || rdlm_ulock_find(rf, ul->id));
	hash_add(rf->locks, &ul->hash, ul->id);
	rf->nr_locks++;
}

/* Look up lock @id of @rf and take a reference; NULL if there is none. */
static struct rdlm_ulock *rdlm_ulock_get(struct rdlm_file *rf, u32 id)
{
	struct rdlm_ulock *ul;

	spin_lock(&rf->lock);
	ul = rdlm_ulock_find(rf, id);
	if (ul)
		kref_get(&ul->ref);
	spin_unlock(&rf->lock);
	return ul;
}

/* A program's LVB: the lockspace's lvb_len bytes of it, the rest zero. */
static void rdlm_dev_lvb_in(struct rdlm_file *rf, struct rdlm_ulock *ul,
			    const u8 *lvb)
{
	u32 len = rdlm_lockspace_lvb_len(rf->ls);

	memcpy(ul->lvb, lvb, len);
	memset(ul->lvb + len, 0, RDLM_LVB_MAX - len);
}

/*
 * Start the unlock of a granted lock. On success the request holds a
 * reference and, with @sync, the caller must wait for @done.
 */
static int rdlm_ulock_start_unlock(struct rdlm_file *rf, struct rdlm_ulock *ul,
				   u32 flags, const u8 *lvb,
				   struct rdlm_uevent **cev, bool sync)
{
	int ret;

	spin_lock(&rf->lock);
	if (ul->state == RDLM_LKS_DEAD) {
		spin_unlock(&rf->lock);
		return -ENOENT;
	}
	if (ul->state == RDLM_LKS_UNLOCKING) {
		spin_unlock(&rf->lock);
		return -EALREADY;
	}
	if (ul->state != RDLM_LKS_GRANTED) {
		spin_unlock(&rf->lock);
		return -EBUSY;
	}
	if (lvb && (flags & RDLM_LKF_VALBLK))
		rdlm_dev_lvb_in(rf, ul, lvb);
	ul->state = RDLM_LKS_UNLOCKING;
	ul->req_flags = flags;
	ul->sync = sync;
	ul->done = false;
	ul->cev = cev ? *cev : NULL;
	kref_get(&ul->ref);
	spin_unlock(&rf->lock);

	if (sync)
		ret = rdlm_unlock_inline(rf->ls, ul->lksb.lkid, flags, ul);
	else
		ret = rdlm_unlock(rf->ls, ul->lksb.lkid, flags, NULL, ul);
	if (!ret) {
		if (cev)
			*cev = NULL;
		return 0;
	}

	spin_lock(&rf->lock);
	ul->state = RDLM_LKS_GRANTED;
	ul->sync = false;
	ul->cev = NULL;
	if (ret == -ENOENT) {
		/* the lock manager dropped it (lockspace going away) */
		rdlm_ulock_unlink(rf, ul);
		spin_unlock(&rf->lock);
		rdlm_ulock_put(ul);		/* @locks' */
	} else {
		spin_unlock(&rf->lock);
	}
	rdlm_ulock_put(ul);			/* the request's */
	return ret;
}

/* has the request a caller waits for completed? */
static bool rdlm_ulock_done(void *arg)
{
	struct rdlm_ulock *ul = arg;

	return READ_ONCE(ul->done);
}

/*
 * Wait for the completion a caller waits for; the caller holds a reference.
 * Returns its status, or -EINTR when a fatal signal came first: the request
 * then completes in the background (a first request granted meanwhile is
 * unlocked again), and the dying caller does not wait for the lock manager.
 */
static int rdlm_ulock_wait_done(struct rdlm_file *rf, struct rdlm_ulock *ul)
{
	int ret = 0;

	rdlm_spin_wait(rdlm_ulock_done, ul);
	if (wait_event_killable(rf->wait, READ_ONCE(ul->done))) {
		spin_lock(&rf->lock);
		if (!ul->done) {
			ul->sync = false;
			ul->abandoned = true;
			ret = -EINTR;
		}
		spin_unlock(&rf->lock);
		if (ret)
			return ret;
	}
	spin_lock(&rf->lock);
	spin_unlock(&rf->lock);
	return ul->result;
}

/*
 * A signal interrupted a blocking lock or convert request: cancel it and
 * wait for its completion. Returns what the ioctl returns (see the top of
 * this file).
 */
static int rdlm_ulock_interrupted(struct rdlm_file *rf, struct rdlm_ulock *ul,
				  bool convert)
{
	int status;

	/*
	 * Under rf->lock, so that the lock cannot complete (and its lkid die)
	 * in between; -EALREADY: the grant is on its way.
	 */
	spin_lock(&rf->lock);
	if (!ul->done && (ul->state == RDLM_LKS_WAITING ||
			  ul->state == RDLM_LKS_CONVERTING))
		rdlm_unlock(rf->ls, ul->lksb.lkid, RDLM_LKF_CANCEL, NULL, ul);
	spin_unlock(&rf->lock);
	status = rdlm_ulock_wait_done(rf, ul);
	if (status == -RDLM_ECANCEL || status == -EINTR)
		return -EINTR;
	if (status || convert)
		return status;

	/* a first request granted before the cancel: undo it */
	if (!rdlm_ulock_start_unlock(rf, ul, 0, NULL, NULL, true))
		rdlm_ulock_wait_done(rf, ul);
	return -EINTR;
}

/* What a blocking request's completion status makes of the ioctl. */
static int rdlm_dev_status_errno(int status)
{
	switch (status) {
	case -RDLM_ECANCEL:
		return -ECANCELED;	/* another thread cancelled it */
	case -RDLM_EUNLOCK:
		return 0;
	default:
		return status;
	}
}

static long rdlm_ioctl_version(struct rdlm_version __user *uarg)
{
	struct rdlm_version ver;

	if (copy_from_user(&ver, uarg, sizeof(ver)))
		return -EFAULT;
	if (ver.size != sizeof(ver))
		return -EINVAL;
	if (ver.reserved)
		return -EINVAL;

	ver.abi = RDLM_ABI_VERSION;
	if (copy_to_user(uarg, &ver, sizeof(ver)))
		return -EFAULT;
	return 0;
}

/* A membership event, allocated and counted like a completion event. */
static void rdlm_dev_recovery_event(struct rdlm_file *rf, u32 type, u64 user,
				    u32 mode, u32 lkid)
{
	struct rdlm_uevent *uev;

	if (rdlm_uevent_alloc(rf, &uev))
		return;		/* dropped, as uapi/linux/rdlm.h says */
	uev->ev.size = sizeof(uev->ev);
	uev->ev.type = type;
	uev->ev.user = user;
	uev->ev.mode = mode;
	uev->ev.lkid = lkid;
	spin_lock(&rf->lock);
	rdlm_dev_queue_event(rf, uev);
	spin_unlock(&rf->lock);
}

static void rdlm_dev_recover_prep(void *arg)
{
	rdlm_dev_recovery_event(arg, RDLM_EV_RECOVER_PREP, 0, 0, 0);
}

static void rdlm_dev_recover_slot(void *arg, u32 nodeid, u32 slot)
{
	rdlm_dev_recovery_event(arg, RDLM_EV_RECOVER_SLOT, nodeid, 0, slot);
}

static void rdlm_dev_recover_done(void *arg,
				  const struct rdlm_member_slot *slots, u32 nr,
				  u32 our_slot, u32 generation)
{
	rdlm_dev_recovery_event(arg, RDLM_EV_RECOVER_DONE, generation, nr,
				our_slot);
}

static const struct rdlm_lockspace_ops rdlm_dev_recovery_ops = {
	.recover_prep	= rdlm_dev_recover_prep,
	.recover_slot	= rdlm_dev_recover_slot,
	.recover_done	= rdlm_dev_recover_done,
};

static long rdlm_ioctl_join(struct rdlm_file *rf, struct rdlm_join __user *uarg)
{
	struct rdlm_lockspace *ls;
	struct rdlm_join join;
	size_t len;
	int ret;

	if (copy_from_user(&join, uarg, sizeof(join)))
		return -EFAULT;
	if (join.size != sizeof(join) || (join.flags & ~RDLM_JOIN_RECOVERY) ||
	    join.reserved)
		return -EINVAL;
	len = strnlen(join.name, sizeof(join.name));
	if (len == sizeof(join.name))
		return -E2BIG;
	if (!len || memchr_inv(join.name + len, 0, sizeof(join.name) - len))
		return -EINVAL;

	mutex_lock(&rf->mutex);
	if (rf->ls) {
		ret = -EISCONN;
		goto out;
	}
	ret = -EINVAL;
	if (rf->controld)
		goto out;	/* the daemon's file holds no locks */
	ret = rdlm_lockspace_find(join.name, &ls);
	if (ret)
		goto out;
	ret = rdlm_lockspace_may_join(ls);
	if (ret) {
		rdlm_lockspace_put(ls);
		goto out;
	}
	rf->ls = ls;
	if (join.flags & RDLM_JOIN_RECOVERY) {
		rdlm_lockspace_watch(ls, &rf->watch, &rdlm_dev_recovery_ops,
				     rf);
		rf->watching = true;
	}
out:
	mutex_unlock(&rf->mutex);
	return ret;
}

static int rdlm_check_lock_req(const struct rdlm_lock_req *req)
{
	if (req->size != sizeof(*req))
		return -EINVAL;
	if (req->mode > RDLM_LOCK_EX)
		return -EINVAL;
	if (req->flags & ~RDLM_DEV_LOCK_FLAGS)
		return -EINVAL;
	if (req->flags & RDLM_LKF_RANGE) {
		if ((req->flags & ~RDLM_DEV_RANGE_FLAGS) ||
		    req->start > req->end)
			return -EINVAL;
	} else if (req->start || req->end) {
		return -EINVAL;
	}
	if (req->flags & RDLM_LKF_CONVERT) {
		if (req->namelen)
			return -EINVAL;
	} else if (!req->namelen || req->namelen > RDLM_NAME_MAX) {
		return -EINVAL;
	}
	if (memchr_inv(req->name + req->namelen, 0,
		       RDLM_NAME_MAX - req->namelen))
		return -EINVAL;
	return 0;
}

/* A new lock of @rf for @req, its first request in flight; see rdlm_ioctl_lock(). */
static int rdlm_dev_new_lock(struct rdlm_file *rf, struct rdlm_lock_req *req,
			     struct rdlm_uevent **cev, bool sync,
			     struct rdlm_ulock **ulp)
{
	u32 kflags = req->flags & ~(RDLM_LKF_ASYNC | RDLM_LKF_RANGE);
	struct rdlm_ulock *ul;
	int ret;

	/* the lockspace's max_locks_per_file; waiting ones count too */
	if (READ_ONCE(rf->nr_locks) >= rdlm_lockspace_max_file_locks(rf->ls))
		return -EAGAIN;
	ul = kzalloc(sizeof(*ul), GFP_KERNEL_ACCOUNT);
	if (!ul)
		return -ENOMEM;
	atomic_inc(&rdlm_dev_nr_locks);
	kref_init(&ul->ref);			/* @locks' */
	kref_get(&rf->ref);			/* the lock's */
	ul->rf = rf;
	ul->lksb.lvb = ul->lvb;
	ul->bev.embedded = true;
	ul->lev.embedded = true;
	ul->user = req->user;
	memcpy(ul->name, req->name, req->namelen);
	ul->namelen = req->namelen;
	ul->state = RDLM_LKS_WAITING;
	ul->mode = RDLM_LOCK_NL;
	ul->req_mode = req->mode;
	ul->req_flags = kflags;
	ul->sync = sync;
	ul->cev = *cev;
	ul->wait_start = ktime_get();
	kref_get(&ul->ref);			/* the request's */
	if (sync)
		kref_get(&ul->ref);		/* the caller's */

	spin_lock(&rf->lock);
	rdlm_ulock_add(rf, ul);
	spin_unlock(&rf->lock);
	req->lkid = ul->id;

	if (req->flags & RDLM_LKF_RANGE)
		ret = rdlm_range_lock(rf->ls, req->mode, &ul->lksb, kflags,
				      req->name, req->namelen, req->start,
				      req->end, req->timeout_ms, rdlm_dev_ast,
				      ul, rdlm_dev_bast);
	else if (sync)
		ret = rdlm_lock_inline(rf->ls, req->mode, &ul->lksb, kflags,
				       req->name, req->namelen,
				       req->timeout_ms, rdlm_dev_ast, ul,
				       rdlm_dev_bast);
	else
		ret = rdlm_lock(rf->ls, req->mode, &ul->lksb, kflags,
				req->name, req->namelen, req->timeout_ms,
				rdlm_dev_ast, ul, rdlm_dev_bast);
	if (ret) {
		spin_lock(&rf->lock);
		ul->cev = NULL;
		rdlm_ulock_unlink(rf, ul);
		spin_unlock(&rf->lock);
		kref_put(&ul->ref, rdlm_ulock_free);
		kref_put(&ul->ref, rdlm_ulock_free);
		if (sync)
			kref_put(&ul->ref, rdlm_ulock_free);
		return ret;
	}
	/* without @sync, the ast may have freed @ul already */
	*cev = NULL;
	if (sync)
		*ulp = ul;
	return 0;
}

/* Convert lock @req->lkid, the request in flight; see rdlm_ioctl_lock(). */
static int rdlm_dev_convert(struct rdlm_file *rf, struct rdlm_lock_req *req,
			    struct rdlm_uevent **cev, bool sync,
			    struct rdlm_ulock **ulp)
{
	u32 kflags = req->flags & ~RDLM_LKF_ASYNC;
	struct rdlm_ulock *ul;
	u32 old_flags;
	int ret;

	ul = rdlm_ulock_get(rf, req->lkid);
	if (!ul)
		return -ENOENT;
	spin_lock(&rf->lock);
	if (ul->state != RDLM_LKS_GRANTED) {
		ret = ul->state == RDLM_LKS_DEAD ? -ENOENT : -EBUSY;
		spin_unlock(&rf->lock);
		rdlm_ulock_put(ul);
		return ret;
	}
	if (kflags & RDLM_LKF_VALBLK)
		rdlm_dev_lvb_in(rf, ul, req->lvb);
	old_flags = ul->req_flags;
	ul->state = RDLM_LKS_CONVERTING;
	ul->req_mode = req->mode;
	ul->req_flags = kflags;
	ul->sync = sync;
	ul->done = false;
	ul->cev = *cev;
	ul->wait_start = ktime_get();
	kref_get(&ul->ref);			/* the request's */
	spin_unlock(&rf->lock);

	if (sync)
		ret = rdlm_lock_inline(rf->ls, req->mode, &ul->lksb, kflags,
				       NULL, 0, req->timeout_ms, rdlm_dev_ast,
				       ul, rdlm_dev_bast);
	else
		ret = rdlm_lock(rf->ls, req->mode, &ul->lksb, kflags, NULL, 0,
				req->timeout_ms, rdlm_dev_ast, ul,
				rdlm_dev_bast);
	if (ret) {
		spin_lock(&rf->lock);
		ul->state = RDLM_LKS_GRANTED;
		ul->req_mode = ul->mode;
		ul->req_flags = old_flags;
		ul->sync = false;
		ul->cev = NULL;
		spin_unlock(&rf->lock);
		rdlm_ulock_put(ul);		/* the request's */
		rdlm_ulock_put(ul);		/* ours */
		return ret;
	}
	*cev = NULL;
	if (sync)
		*ulp = ul;			/* ours becomes the caller's */
	else
		rdlm_ulock_put(ul);
	return 0;
}

static long rdlm_ioctl_lock(struct rdlm_file *rf,
			    struct rdlm_lock_req __user *uarg)
{
	struct rdlm_uevent *cev = NULL;
	struct rdlm_ulock *ul = NULL;
	struct rdlm_lock_req req;
	bool convert, sync;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = rdlm_check_lock_req(&req);
	if (ret)
		return ret;
	/* the answer must fit where it goes before a lock is made */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	convert = req.flags & RDLM_LKF_CONVERT;
	sync = !(req.flags & RDLM_LKF_ASYNC);
	if (!sync) {
		ret = rdlm_uevent_alloc(rf, &cev);
		if (ret)
			goto out;
	}

	mutex_lock(&rf->mutex);
	if (!rf->ls)
		ret = -ENOTCONN;
	else if (convert)
		ret = rdlm_dev_convert(rf, &req, &cev, sync, &ul);
	else
		ret = rdlm_dev_new_lock(rf, &req, &cev, sync, &ul);
	mutex_unlock(&rf->mutex);
	rdlm_uevent_free(cev);
	if (ret)
		goto out;

	if (!sync) {
		req.status = 0;
		req.sb_flags = 0;
		goto copy;
	}

	rdlm_spin_wait(rdlm_ulock_done, ul);
	if (wait_event_interruptible(rf->wait, READ_ONCE(ul->done))) {
		ret = rdlm_ulock_interrupted(rf, ul, convert);
	} else {
		spin_lock(&rf->lock);
		ret = rdlm_dev_status_errno(ul->result);
		spin_unlock(&rf->lock);
	}
	spin_lock(&rf->lock);
	req.sb_flags = ul->result_flags;
	spin_unlock(&rf->lock);
	if (!ret && (req.flags & RDLM_LKF_VALBLK))
		memcpy(req.lvb, ul->lvb, RDLM_LVB_MAX);
	rdlm_ulock_put(ul);			/* the caller's */
out:
	if (ret && !convert)
		req.lkid = 0;
	req.status = ret;
copy:
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

static int rdlm_check_unlock_req(const struct rdlm_unlock_req *req)
{
	if (req->size != sizeof(*req))
		return -EINVAL;
	if (req->reserved0 || req->reserved[0] || req->reserved[1])
		return -EINVAL;
	if (req->flags & ~RDLM_DEV_UNLOCK_FLAGS)
		return -EINVAL;
	/* a cancel releases nothing, so it writes no value block */
	if ((req->flags & RDLM_LKF_CANCEL) &&
	    (req->flags & (RDLM_LKF_VALBLK | RDLM_LKF_IVVALBLK)))
		return -EINVAL;
	return 0;
}

/* Cancel the waiting request of @ul; its completion tells how it ended. */
static int rdlm_ulock_cancel(struct rdlm_file *rf, struct rdlm_ulock *ul)
{
	int ret;

	spin_lock(&rf->lock);
	switch (ul->state) {
	case RDLM_LKS_DEAD:
		ret = -ENOENT;
		break;
	case RDLM_LKS_WAITING:
	case RDLM_LKS_CONVERTING:
		/* under rf->lock: the lkid cannot die meanwhile */
		ret = rdlm_unlock(rf->ls, ul->lksb.lkid, RDLM_LKF_CANCEL, NULL,
				  ul);
		break;
	default:
		ret = -EALREADY;
		break;
	}
	spin_unlock(&rf->lock);
	return ret;
}

static long rdlm_ioctl_unlock(struct rdlm_file *rf,
			      struct rdlm_unlock_req __user *uarg)
{
	struct rdlm_uevent *cev = NULL;
	struct rdlm_ulock *ul = NULL;
	struct rdlm_unlock_req req;
	bool cancel, sync;
	u32 kflags;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = rdlm_check_unlock_req(&req);
	if (ret)
		return ret;
	kflags = req.flags & ~RDLM_LKF_ASYNC;
	cancel = req.flags & RDLM_LKF_CANCEL;
	sync = !(req.flags & RDLM_LKF_ASYNC);
	if (!sync && !cancel) {
		ret = rdlm_uevent_alloc(rf, &cev);
		if (ret)
			return ret;
	}

	mutex_lock(&rf->mutex);
	if (!rf->ls) {
		ret = -ENOTCONN;
	} else {
		ul = rdlm_ulock_get(rf, req.lkid);
		if (!ul)
			ret = -ENOENT;
		else if (cancel)
			ret = rdlm_ulock_cancel(rf, ul);
		else
			ret = rdlm_ulock_start_unlock(rf, ul, kflags, req.lvb,
						      &cev, sync && !cancel);
	}
	mutex_unlock(&rf->mutex);
	rdlm_uevent_free(cev);

	if (!ret && sync && !cancel)
		ret = rdlm_dev_status_errno(rdlm_ulock_wait_done(rf, ul));
	if (ul)
		rdlm_ulock_put(ul);
	return ret;
}

static long rdlm_ioctl_lock_info(struct rdlm_file *rf,
				 struct rdlm_lock_info __user *uarg)
{
	struct rdlm_lock_info info;
	struct rdlm_ulock *ul;
	u32 lkid;

	if (copy_from_user(&info, uarg, sizeof(info)))
		return -EFAULT;
	if (info.size != sizeof(info) || info.reserved[0] || info.reserved[1])
		return -EINVAL;
	if (!READ_ONCE(rf->ls))
		return -ENOTCONN;
	lkid = info.lkid;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.lkid = lkid;

	mutex_lock(&rf->mutex);
	spin_lock(&rf->lock);
	ul = rdlm_ulock_find(rf, lkid);
	if (ul) {
		info.state = ul->state;
		info.mode = ul->mode;
		info.req_mode = ul->req_mode;
		info.namelen = ul->namelen;
		memcpy(info.name, ul->name, ul->namelen);
		info.grants = ul->grants;
		info.fails = ul->fails;
		info.basts = ul->basts;
		info.wait_ns = ul->wait_ns;
	}
	spin_unlock(&rf->lock);
	mutex_unlock(&rf->mutex);
	if (!ul)
		return -ENOENT;
	if (copy_to_user(uarg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long rdlm_ioctl_ls_stats(struct rdlm_file *rf,
				struct rdlm_ls_stats __user *uarg)
{
	struct rdlm_lockspace_stats st = {};
	struct rdlm_lockspace *ls;
	struct rdlm_ls_stats out;

	if (copy_from_user(&out, uarg, sizeof(out)))
		return -EFAULT;
	if (out.size != sizeof(out) ||
	    memchr_inv(out.reserved, 0, sizeof(out.reserved)))
		return -EINVAL;
	ls = READ_ONCE(rf->ls);
	if (!ls)
		return -ENOTCONN;

	rdlm_lockspace_get_stats(ls, &st);
	memset(&out, 0, sizeof(out));
	out.size = sizeof(out);
	out.file_locks = READ_ONCE(rf->nr_locks);
	strscpy(out.name, rdlm_lockspace_name(ls), sizeof(out.name));
	out.requests = st.requests;
	out.grants = st.grants;
	out.local_grants = st.local_grants;
	out.fails = st.fails;
	out.cancels = st.cancels;
	out.unlocks = st.unlocks;
	out.basts = st.basts;
	out.lost = st.lost;
	out.locks = st.locks;
	out.verbs[RDLM_STAT_VERB_FA] = st.verbs[RDLM_VERB_FA];
	out.verbs[RDLM_STAT_VERB_CAS] = st.verbs[RDLM_VERB_CAS];
	out.verbs[RDLM_STAT_VERB_READ] = st.verbs[RDLM_VERB_READ];
	out.verbs[RDLM_STAT_VERB_WRITE_IMM] = st.verbs[RDLM_VERB_WRITE_IMM];
	out.verbs[RDLM_STAT_VERB_SEND] = st.verbs[RDLM_VERB_SEND];
	if (copy_to_user(uarg, &out, sizeof(out)))
		return -EFAULT;
	return 0;
}

/* RDLM_IOC_CONTROLD: see uapi/linux/rdlm.h */
static int rdlm_ioctl_controld(struct rdlm_file *rf)
{
	int ret = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&rf->mutex);
	if (rf->ls)
		ret = -EINVAL;
	else if (!rf->controld)
		rdlm_lockspaces_controld(true);
	if (!ret)
		rf->controld = true;
	mutex_unlock(&rf->mutex);
	return ret;
}

static long rdlm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct rdlm_file *rf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case RDLM_IOC_VERSION:
		return rdlm_ioctl_version(uarg);
	case RDLM_IOC_JOIN:
		return rdlm_ioctl_join(rf, uarg);
	case RDLM_IOC_LOCK:
		return rdlm_ioctl_lock(rf, uarg);
	case RDLM_IOC_UNLOCK:
		return rdlm_ioctl_unlock(rf, uarg);
	case RDLM_IOC_LOCK_INFO:
		return rdlm_ioctl_lock_info(rf, uarg);
	case RDLM_IOC_LS_STATS:
		return rdlm_ioctl_ls_stats(rf, uarg);
	case RDLM_IOC_CONTROLD:
		return rdlm_ioctl_controld(rf);
	default:
		return -ENOTTY;
	}
}

/* Take the oldest event off the queue into @ev; false if there is none. */
static bool rdlm_dev_pop_event(struct rdlm_file *rf, struct rdlm_event *ev)
{
	struct rdlm_uevent *uev;

	spin_lock(&rf->lock);
	uev = list_first_entry_or_null(&rf->events, struct rdlm_uevent, node);
	if (!uev) {
		spin_unlock(&rf->lock);
		return false;
	}
	list_del(&uev->node);
	*ev = uev->ev;
	if (uev->embedded) {
		uev->queued = false;
		uev = NULL;
	}
	spin_unlock(&rf->lock);
	rdlm_uevent_free(uev);
	return true;
}

static ssize_t rdlm_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct rdlm_file *rf = file->private_data;
	struct rdlm_event ev;
	size_t done = 0;

	if (count < sizeof(ev))
		return -EINVAL;
	if (!READ_ONCE(rf->ls))
		return -ENOTCONN;

	while (count - done >= sizeof(ev)) {
		/* fault the buffer in first: an event taken is never put back */
		if (clear_user(buf + done, sizeof(ev)))
			return done ? done : -EFAULT;
		if (!rdlm_dev_pop_event(rf, &ev)) {
			if (done)
				break;
			if (file->f_flags & O_NONBLOCK)
				return -EAGAIN;
			if (wait_event_interruptible(rf->wait,
						     !list_empty(&rf->events)))
				return -ERESTARTSYS;
			continue;
		}
		if (copy_to_user(buf + done, &ev, sizeof(ev)))
			return done ? done : -EFAULT;
		done += sizeof(ev);
	}
	return done;
}

static __poll_t rdlm_poll(struct file *file, poll_table *pt)
{
	struct rdlm_file *rf = file->private_data;

	poll_wait(file, &rf->wait, pt);
	return list_empty(&rf->events) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static int rdlm_open(struct inode *inode, struct file *file)
{
	struct rdlm_file *rf;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL_ACCOUNT);
	if (!rf)
		return -ENOMEM;
	kref_init(&rf->ref);
	mutex_init(&rf->mutex);
	spin_lock_init(&rf->lock);
	hash_init(rf->locks);
	INIT_LIST_HEAD(&rf->events);
	init_waitqueue_head(&rf->wait);
	atomic_set(&rf->nr_events, 0);
	file->private_data = rf;
	atomic_inc(&rdlm_dev_nr_files);
	return nonseekable_open(inode, file);
}

/*
 * Cancel or unlock @ul of a closing file (@rf locked; unlocked meanwhile):
 * its ast finishes the job.
 */
static void rdlm_ulock_close(struct rdlm_file *rf, struct rdlm_ulock *ul)
	__must_hold(&rf->lock)
{
	bool unlock = false;

	switch (ul->state) {
	case RDLM_LKS_WAITING:
	case RDLM_LKS_CONVERTING:
		/* if it is granted first, the ast unlocks it */
		rdlm_unlock(rf->ls, ul->lksb.lkid, RDLM_LKF_CANCEL, NULL, ul);
		break;
	case RDLM_LKS_GRANTED:
		ul->state = RDLM_LKS_UNLOCKING;
		ul->req_flags = 0;
		ul->sync = false;
		kref_get(&ul->ref);	/* the request's */
		unlock = true;
		break;
	}
	spin_unlock(&rf->lock);
	if (unlock && rdlm_unlock(rf->ls, ul->lksb.lkid, 0, NULL, ul)) {
		/* refused: no completion comes, the lock is gone */
		spin_lock(&rf->lock);
		rdlm_ulock_unlink(rf, ul);
		spin_unlock(&rf->lock);
		rdlm_ulock_put(ul);	/* the request's */
		rdlm_ulock_put(ul);	/* @locks' */
	}
	cond_resched();
	spin_lock(&rf->lock);
}

/*
 * Cancel or unlock every lock of a closing file. Each leaves the hash table
 * as it is handled: no ioctl looks a lock up now, and @nr_locks counts it
 * until it is gone. No lock is added meanwhile.
 */
static void rdlm_dev_release_locks(struct rdlm_file *rf)
{
	struct rdlm_ulock *ul;
	unsigned int bkt;

	spin_lock(&rf->lock);
	rf->closing = true;
	for (bkt = 0; bkt < HASH_SIZE(rf->locks); bkt++) {
		while ((ul = hlist_entry_safe(rf->locks[bkt].first,
					      struct rdlm_ulock, hash))) {
			hash_del(&ul->hash);
			rdlm_ulock_close(rf, ul);
		}
	}
	spin_unlock(&rf->lock);
}

/*
 * close() waits this long for the lock manager to confirm the cancels and
 * unlocks; what is left then (an unlock whose LVB write the home has not
 * acked yet) ends in the background, and the file goes with its last lock.
 * A killed process is gone within this bound.
 */
#define RDLM_CLOSE_WAIT		(HZ / 2)

static int rdlm_release(struct inode *inode, struct file *file)
{
	struct rdlm_file *rf = file->private_data;

	if (rf->controld)
		rdlm_lockspaces_controld(false);
	if (rf->watching)
		rdlm_lockspace_unwatch(rf->ls, &rf->watch);
	if (rf->ls) {
		rdlm_dev_release_locks(rf);
		wait_event_idle_timeout(rf->wait, !READ_ONCE(rf->nr_locks),
					RDLM_CLOSE_WAIT);
	}
	kref_put(&rf->ref, rdlm_file_free);
	return 0;
}

static const struct file_operations rdlm_fops = {
	.owner		= THIS_MODULE,
	.open		= rdlm_open,
	.release	= rdlm_release,
	.read		= rdlm_read,
	.poll		= rdlm_poll,
	.unlocked_ioctl	= rdlm_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

static struct miscdevice rdlm_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rdlm",
	.fops	= &rdlm_fops,
	.mode	= 0660,
};

static int rdlm_dev_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "files %d\nlocks %d\nevents %d\n",
		   atomic_read(&rdlm_dev_nr_files),
		   atomic_read(&rdlm_dev_nr_locks),
		   atomic_read(&rdlm_dev_nr_events));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_dev_stats);

int rdlm_chardev_init(void)
{
	int ret;

	ret = misc_register(&rdlm_miscdev);
	if (ret)
		return ret;
	/* open files, locks and events of /dev/rdlm, for leak checks */
	rdlm_dev_debugfs = debugfs_create_file("dev", 0400, rdlm_debugfs_root,
					       NULL, &rdlm_dev_stats_fops);
	return 0;
}

void rdlm_chardev_exit(void)
{
	debugfs_remove(rdlm_dev_debugfs);
	rdlm_dev_debugfs = NULL;
	misc_deregister(&rdlm_miscdev);
}
