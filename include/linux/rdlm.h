/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm: the exported kernel API of the RDMA distributed lock manager.
 *
 * The model is fs/dlm's (include/linux/dlm.h): a lockspace is found by
 * name, a lock on a resource name is requested asynchronously with a
 * status block (struct rdlm_lksb) and a completion callback (ast), holders
 * are told by a blocking callback (bast) that someone waits for a mode
 * their lock blocks, and a lock value block (16-64 bytes, per lockspace)
 * travels with EX/PW releases to the next grantee. Modes, request flags and status flags
 * have fs/dlm's names (RDLM_ for DLM_) and numbers. Lockspaces are created
 * by the administrator in configfs (/sys/kernel/config/rdlm/lockspaces/NAME),
 * or by a kernel caller with rdlm_new_lockspace() from such a template.
 *
 * Context rules:
 *  - rdlm_lockspace_find(), rdlm_lock_wait() and rdlm_unlock_wait() may
 *    sleep; rdlm_lock(), rdlm_unlock() and rdlm_lockspace_put() do not and
 *    may be called from any context except hard interrupts.
 *  - ast and bast run in process context (the lockspace's work queue),
 *    one at a time per lock, never with rdlm locks held: they may call
 *    rdlm_lock()/rdlm_unlock() but must not wait for their completion.
 *  - Blocking callbacks are coalesced as in fs/dlm: one per lock until it
 *    is converted or released, carrying the most restrictive mode waited for.
 *
 * A lockspace whose engine locks ranges (rangeseg, rangecomb) serves
 * rdlm_range_lock() instead of rdlm_lock(): shared or exclusive locks on
 * the units [start, end] of a name (Documentation/range-locks.rst).
 *
 * Every lockspace serves POSIX byte-range locks for a file system's
 * ->lock(), as fs/dlm's dlm_posix_lock() does: rdlm_posix_lock(),
 * rdlm_posix_unlock(), rdlm_posix_get(), or rdlm_posix_fcntl() for all
 * of ->lock() at once.
 *
 * Differences from fs/dlm are listed in Documentation/lock-manager.rst.
 */
#ifndef _LINUX_RDLM_H
#define _LINUX_RDLM_H

#include <linux/list.h>
#include <linux/types.h>
#include <uapi/linux/rdlm.h>

struct rdlm_lockspace;
struct file;
struct file_lock;

/**
 * struct rdlm_lksb - status block of one lock, owned by the caller
 * @status: result of the last completed request: 0 (granted), -EAGAIN
 *	(NOQUEUE and not grantable), -ETIMEDOUT, -RDLM_ECANCEL, -RDLM_EUNLOCK,
 *	-ENOLCK (the lease expired or the lockspace went away), -ENOTCONN
 *	(the resource's home node is unreachable), other -errno
 * @lkid: lock id, set by rdlm_lock() before it returns; names the lock in
 *	rdlm_unlock() and conversions
 * @flags: RDLM_SBF_* of the last completion
 * @lvb: NULL or a caller buffer of rdlm_lockspace_lvb_len() bytes (at most
 *	RDLM_LVB_MAX), read on grant and written on release when
 *	RDLM_LKF_VALBLK is given
 */
struct rdlm_lksb {
	int status;
	u32 lkid;
	u32 flags;
	char *lvb;
};

/**
 * struct rdlm_member_slot - one member's slot (fs/dlm's struct dlm_slot)
 * @nodeid: the member
 * @slot: its slot, 1..64
 */
struct rdlm_member_slot {
	u32 nodeid;
	u32 slot;
};

/**
 * struct rdlm_lockspace_ops - membership events of a lockspace, for a
 *	cluster file system (the shape of fs/dlm's dlm_lockspace_ops)
 * @recover_prep: the membership changes and some node departed, or this
 *	node lost quorum (then its locks are reported lost and the lockspace
 *	stops): what depends on other nodes' locks waits
 * @recover_slot: node @nodeid departed: none of its locks has gone to
 *	another node yet; they do once it is fenced (after the recovery
 *	grace, or a fence acknowledgment). Replay its journal (under its
 *	journal's lock, granted then). @slot: its slot (0: it had none yet)
 * @recover_done: a membership is in force, no departed node waits for
 *	recovery, and every member agreed its slot table: @slots (@nr of
 *	them, ascending node id), this node's slot @our_slot, the table's
 *	@generation (increasing; each table is told once)
 *
 * Every member may be NULL. They are called in process context, one at a
 * time per lockspace, and may sleep, but must not watch or unwatch.
 * Slots are 1..64, cluster-wide per lockspace, as fs/dlm's: a member
 * keeps its slot while it stays, a node that joins takes the lowest free
 * one (Documentation/membership.rst).
 */
struct rdlm_lockspace_ops {
	void (*recover_prep)(void *arg);
	void (*recover_slot)(void *arg, u32 nodeid, u32 slot);
	void (*recover_done)(void *arg, const struct rdlm_member_slot *slots,
			     u32 nr, u32 our_slot, u32 generation);
};

/**
 * struct rdlm_watch - one registration of rdlm_lockspace_watch(), caller
 *	memory, opaque
 * @entry: in the lockspace's list
 * @ops: the callbacks
 * @arg: their first argument
 */
struct rdlm_watch {
	struct list_head entry;
	const struct rdlm_lockspace_ops *ops;
	void *arg;
};

/* rdlm_new_lockspace() flags */
#define RDLM_NEWLS_EXCL		0x1	/* -EEXIST if it exists (DLM_LSFL_NEWEXCL) */

int rdlm_new_lockspace(const char *name, const char *template, u32 flags,
		       struct rdlm_lockspace **lsp);
int rdlm_release_lockspace(struct rdlm_lockspace *ls, bool force);
int rdlm_lockspace_find(const char *name, struct rdlm_lockspace **lsp);
void rdlm_lockspace_put(struct rdlm_lockspace *ls);
u32 rdlm_lockspace_lvb_len(struct rdlm_lockspace *ls);
u32 rdlm_lockspace_this_node(struct rdlm_lockspace *ls);
void rdlm_lockspace_watch(struct rdlm_lockspace *ls, struct rdlm_watch *w,
			  const struct rdlm_lockspace_ops *ops, void *arg);
void rdlm_lockspace_unwatch(struct rdlm_lockspace *ls, struct rdlm_watch *w);

int rdlm_lock(struct rdlm_lockspace *ls, int mode, struct rdlm_lksb *lksb,
	      u32 flags, const void *name, unsigned int namelen,
	      unsigned int timeout_ms, void (*ast)(void *arg), void *arg,
	      void (*bast)(void *arg, int mode));
int rdlm_unlock(struct rdlm_lockspace *ls, u32 lkid, u32 flags,
		struct rdlm_lksb *lksb, void *arg);

int rdlm_range_lock(struct rdlm_lockspace *ls, int mode,
		    struct rdlm_lksb *lksb, u32 flags, const void *name,
		    unsigned int namelen, u64 start, u64 end,
		    unsigned int timeout_ms, void (*ast)(void *arg), void *arg,
		    void (*bast)(void *arg, int mode));

int rdlm_posix_lock(struct rdlm_lockspace *ls, u64 number, struct file *file,
		    int cmd, struct file_lock *fl);
int rdlm_posix_unlock(struct rdlm_lockspace *ls, u64 number, struct file *file,
		      struct file_lock *fl);
int rdlm_posix_get(struct rdlm_lockspace *ls, u64 number, struct file *file,
		   struct file_lock *fl);
int rdlm_posix_fcntl(struct rdlm_lockspace *ls, u64 number, struct file *file,
		     int cmd, struct file_lock *fl);

/**
 * rdlm_range_unlock() - release a range lock, or cancel its request
 * @ls: lockspace
 * @lkid: the lock (&rdlm_lksb.lkid of rdlm_range_lock())
 * @flags: 0, or RDLM_LKF_CANCEL
 * @lksb: NULL, or a status block replacing the lock's
 * @arg: the lock's ast is called with this argument from now on
 *
 * rdlm_unlock() under the name of the range API; rdlm_unlock_wait() waits
 * for a range lock's release too.
 *
 * Return: as rdlm_unlock().
 */
static inline int rdlm_range_unlock(struct rdlm_lockspace *ls, u32 lkid,
				    u32 flags, struct rdlm_lksb *lksb,
				    void *arg)
{
	return rdlm_unlock(ls, lkid, flags, lksb, arg);
}

int rdlm_lock_wait(struct rdlm_lockspace *ls, int mode,
		   struct rdlm_lksb *lksb, u32 flags, const void *name,
		   unsigned int namelen, unsigned int timeout_ms,
		   void (*bast)(void *arg, int mode), void *arg);
int rdlm_unlock_wait(struct rdlm_lockspace *ls, struct rdlm_lksb *lksb,
		     u32 flags);

#endif /* _LINUX_RDLM_H */
