/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdlm: the ioctl ABI of /dev/rdlm.
 *
 * Every structure passed through an ioctl or read() starts with its own
 * size, which must equal the size the caller was compiled with, so that the
 * ABI can grow at the end; reserved fields and unused bytes of name buffers
 * must be zero (-EINVAL), fields the kernel only writes are ignored on input.
 * The ABI version is bumped on every incompatible change.
 *
 * An open file joins one lockspace (RDLM_IOC_JOIN) and then owns the locks
 * it takes there: close() or the death of the process releases them all.
 * A lock request either blocks until it completes (interruptible by
 * signals, which cancel it) or, with RDLM_LKF_ASYNC, returns at once; its
 * completion, and blocking notices for held locks, are then read() from the
 * file as struct rdlm_event records, and poll() reports them.
 */
#ifndef _UAPI_LINUX_RDLM_H
#define _UAPI_LINUX_RDLM_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* 3: RECOVER_DONE carries the slot table's generation and our slot */
#define RDLM_ABI_VERSION	3

/*
 * Lock modes, shared by the kernel API (<linux/rdlm.h>) and /dev/rdlm, with
 * fs/dlm's numbers and compatibility matrix (Documentation/lock-manager.rst):
 * NL holds nothing; CR (concurrent read) conflicts with EX only; CW
 * (concurrent write) is shared with CR and CW; PR is shared with CR and PR;
 * PW (protected write) is shared with CR only; EX is exclusive.
 */
#define RDLM_LOCK_NL		0
#define RDLM_LOCK_CR		1
#define RDLM_LOCK_CW		2
#define RDLM_LOCK_PR		3
#define RDLM_LOCK_PW		4
#define RDLM_LOCK_EX		5
#define RDLM_LOCK_NR		6

/*
 * Request flags (rdlm_lock(), rdlm_unlock(), the lock ioctls), with fs/dlm's
 * values; the fs/dlm flags without an rdlm meaning are not defined.
 */
#define RDLM_LKF_NOQUEUE	0x00000001	/* not grantable now: -EAGAIN */
#define RDLM_LKF_CANCEL		0x00000002	/* unlock: cancel a waiting request */
#define RDLM_LKF_CONVERT	0x00000004	/* change the mode of lksb->lkid */
#define RDLM_LKF_VALBLK		0x00000008	/* read the LVB on grant, write on release */
#define RDLM_LKF_QUECVT		0x00000010	/* conversion waits its turn in the queue */
#define RDLM_LKF_IVVALBLK	0x00000020	/* mark the LVB invalid on release */
#define RDLM_LKF_CONVDEADLK	0x00000040	/* up-conversion may wait demoted to NL */
#define RDLM_LKF_NODLCKWT	0x00000100	/* conversion deadlocks are left to the caller */
#define RDLM_LKF_EXPEDITE	0x00000400	/* NL request: granted before waiters */
#define RDLM_LKF_NOQUEUEBAST	0x00000800	/* NOQUEUE failure sends blocking callbacks */
#define RDLM_LKF_HEADQUE	0x00001000	/* new request waits first in its queue */
#define RDLM_LKF_NOORDER	0x00002000	/* new request granted past waiters */
#define RDLM_LKF_ALTPR		0x00008000	/* grant PR instead if that is free now */
#define RDLM_LKF_ALTCW		0x00010000	/* grant CW instead if that is free now */
#define RDLM_LKF_ALL		0x0001bd7f

/* /dev/rdlm only: return at once, the completion is read() from the file. */
#define RDLM_LKF_ASYNC		0x00400000
/*
 * /dev/rdlm only: lock the units [start, end] of the name (a lockspace
 * whose engine locks ranges: rangeseg, rangecomb); PR or EX, NOQUEUE.
 */
#define RDLM_LKF_RANGE		0x00800000

/* Status-block flags (lksb->flags), fs/dlm's values and one of rdlm's. */
#define RDLM_SBF_DEMOTED	0x01	/* up-conversion waited in NL */
#define RDLM_SBF_VALNOTVALID	0x02	/* LVB content invalid (a holder died) */
#define RDLM_SBF_ALTMODE	0x04	/* granted the ALTPR/ALTCW mode */
#define RDLM_SBF_LOST		0x08	/* lease expired: the lock was lost */

/* Completion status of unlock and cancel, as in fs/dlm. */
#define RDLM_EUNLOCK		0x10002
#define RDLM_ECANCEL		0x10001

#define RDLM_NAME_MAX		64	/* resource name bytes */
/* a lockspace's LVBs are lvb_len bytes (configfs): the rest reads zero */
#define RDLM_LVB_MAX		64	/* lock value block bytes, at most */
#define RDLM_LSNAME_MAX		64	/* lockspace name buffer, NUL included */

/**
 * struct rdlm_version - answer of RDLM_IOC_VERSION
 * @size: set by the caller to sizeof(struct rdlm_version)
 * @abi: ABI version implemented by the module (RDLM_ABI_VERSION)
 * @reserved: must be zero
 */
struct rdlm_version {
	__u32 size;
	__u32 abi;
	__u64 reserved;
};

/* RDLM_IOC_JOIN flags */
#define RDLM_JOIN_RECOVERY	0x1	/* read membership events too */

/**
 * struct rdlm_join - argument of RDLM_IOC_JOIN
 * @size: sizeof(struct rdlm_join)
 * @flags: 0, or RDLM_JOIN_RECOVERY: the file also reads the lockspace's
 *	membership events (RDLM_EV_RECOVER_*)
 * @reserved: must be zero
 * @name: lockspace name as configured in configfs, NUL-terminated, the rest
 *	of the buffer zero; a name that does not fit is -E2BIG
 *
 * Errors: -EISCONN (this file joined already), -ENOENT (no lockspace of
 * that name is enabled on this node: configured but disabled is the same),
 * -EPERM (its uid/gid/mode do not let the caller in).
 */
struct rdlm_join {
	__u32 size;
	__u32 flags;
	__u64 reserved;
	char name[RDLM_LSNAME_MAX];
};

/**
 * struct rdlm_lock_req - argument of RDLM_IOC_LOCK: lock or convert
 * @size: sizeof(struct rdlm_lock_req)
 * @mode: RDLM_LOCK_NL .. RDLM_LOCK_EX
 * @flags: RDLM_LKF_* of rdlm_lock() (not _CANCEL or _IVVALBLK), _ASYNC
 * @timeout_ms: give up with -ETIMEDOUT after this long waiting; 0: never
 * @lkid: out: id of the new lock in this file (0 if it failed); in: the
 *	lock to convert, with RDLM_LKF_CONVERT
 * @namelen: bytes of @name, 1..RDLM_NAME_MAX (0 with RDLM_LKF_CONVERT)
 * @user: cookie copied into this lock's events
 * @name: resource name (binary); bytes past @namelen must be zero
 * @lvb: with RDLM_LKF_VALBLK: in, written when a conversion releases PW/EX;
 *	out, the lock value block read on grant; ignored without it
 * @status: out: 0, or the -errno the call returns
 * @sb_flags: out: RDLM_SBF_* of the completion
 * @start: with RDLM_LKF_RANGE: first unit of the range; else zero
 * @end: with RDLM_LKF_RANGE: last unit, inclusive, @start <= @end; else zero
 *
 * A range lock (RDLM_LKF_RANGE; not with _CONVERT, _VALBLK or flags other
 * than _NOQUEUE and _ASYNC) is released with RDLM_IOC_UNLOCK, and its
 * unlock completes once the home has the release. A range lock on a
 * lockspace without a range engine is -EOPNOTSUPP, as a lock without
 * RDLM_LKF_RANGE is on one with.
 *
 * Without RDLM_LKF_ASYNC the call returns when the request completed: 0
 * when granted, -EAGAIN (NOQUEUE, not grantable), -ETIMEDOUT, -EINTR (a
 * signal came first and the request was cancelled; a conversion leaves the
 * lock in its old mode, or in NL if RDLM_SBF_DEMOTED), -EDEADLK, -ENOLCK,
 * -ENOTCONN, -EIO (a down-conversion from PW/EX done, but the home did not
 * confirm its LVB write: the LVB is invalid), -EAGAIN also when the
 * lockspace's max_locks (this node) or max_locks_per_file (this file: locks
 * and unread events) is reached; @sb_flags is set either way. With RDLM_LKF_ASYNC it returns
 * 0 once the request is queued, @lkid set; the completion is an event.
 */
struct rdlm_lock_req {
	__u32 size;
	__u32 mode;
	__u32 flags;
	__u32 timeout_ms;
	__u32 lkid;
	__u32 namelen;
	__u64 user;
	__u8 name[RDLM_NAME_MAX];
	__u8 lvb[RDLM_LVB_MAX];
	__s32 status;
	__u32 sb_flags;
	__u64 start;
	__u64 end;
};

/**
 * struct rdlm_unlock_req - argument of RDLM_IOC_UNLOCK: unlock or cancel
 * @size: sizeof(struct rdlm_unlock_req)
 * @lkid: the lock
 * @flags: RDLM_LKF_VALBLK (write @lvb), _IVVALBLK, _CANCEL (cancel the
 *	lock's waiting request instead), _ASYNC
 * @reserved0: must be zero
 * @lvb: lock value block written with RDLM_LKF_VALBLK from PW/EX
 * @reserved: must be zero
 *
 * Errors: -ENOENT (no such lock in this file), -EBUSY (unlock while a
 * request of the lock is waiting: cancel it first), -EALREADY (cancel with
 * nothing waiting, or the lock is being unlocked already), -EIO (the lock
 * is gone, but it released PW/EX and the home did not confirm the LVB
 * write or the notice that nothing was written: the LVB is invalid).
 */
struct rdlm_unlock_req {
	__u32 size;
	__u32 lkid;
	__u32 flags;
	__u32 reserved0;
	__u8 lvb[RDLM_LVB_MAX];
	__u64 reserved[2];
};

/* Lock states in struct rdlm_lock_info. */
#define RDLM_LKS_WAITING	1	/* first request not granted yet */
#define RDLM_LKS_GRANTED	2
#define RDLM_LKS_CONVERTING	3	/* granted, conversion waiting */
#define RDLM_LKS_UNLOCKING	4

/**
 * struct rdlm_lock_info - argument of RDLM_IOC_LOCK_INFO: one lock's state
 * @size: sizeof(struct rdlm_lock_info)
 * @lkid: in: the lock
 * @state: RDLM_LKS_*
 * @mode: granted mode (RDLM_LOCK_NL before the first grant)
 * @req_mode: mode of the waiting request, if any
 * @namelen: bytes of @name
 * @name: resource name
 * @grants: requests of this lock granted
 * @fails: requests of this lock that failed or were cancelled
 * @basts: blocking notices received
 * @wait_ns: total time its requests waited, in nanoseconds
 * @reserved: zero
 */
struct rdlm_lock_info {
	__u32 size;
	__u32 lkid;
	__u32 state;
	__u32 mode;
	__u32 req_mode;
	__u32 namelen;
	__u8 name[RDLM_NAME_MAX];
	__u64 grants;
	__u64 fails;
	__u64 basts;
	__u64 wait_ns;
	__u64 reserved[2];
};

/* Verb kinds counted in struct rdlm_ls_stats.verbs[]. */
#define RDLM_STAT_VERB_FA		0
#define RDLM_STAT_VERB_CAS		1
#define RDLM_STAT_VERB_READ		2
#define RDLM_STAT_VERB_WRITE_IMM	3
#define RDLM_STAT_VERB_SEND		4
#define RDLM_STAT_VERBS			8

/**
 * struct rdlm_ls_stats - argument of RDLM_IOC_LS_STATS
 * @size: sizeof(struct rdlm_ls_stats)
 * @file_locks: locks this file holds or waits for
 * @name: the lockspace this file joined
 * @requests: lock and convert requests accepted on this node
 * @grants: requests granted
 * @local_grants: granted from a lock word this node owned already
 * @fails: requests completed with an error
 * @cancels: requests cancelled
 * @unlocks: locks released
 * @basts: blocking notices delivered
 * @lost: locks lost (lease expired, member down)
 * @locks: locks known on this node, all users
 * @verbs: verbs posted by this node for the lockspace, RDLM_STAT_VERB_*
 * @reserved: zero
 *
 * The counters are those of this node for the whole lockspace, all users.
 */
struct rdlm_ls_stats {
	__u32 size;
	__u32 file_locks;
	char name[RDLM_LSNAME_MAX];
	__u64 requests;
	__u64 grants;
	__u64 local_grants;
	__u64 fails;
	__u64 cancels;
	__u64 unlocks;
	__u64 basts;
	__u64 lost;
	__u64 locks;
	__u64 verbs[RDLM_STAT_VERBS];
	__u64 reserved[4];
};

/* Event types read() from the file. */
#define RDLM_EV_COMPLETION	1	/* a request completed: @status */
#define RDLM_EV_BLOCKING	2	/* a request waits for a mode you block */
/* Membership events, with RDLM_JOIN_RECOVERY (Documentation/membership.rst) */
#define RDLM_EV_RECOVER_PREP	3	/* a node departed, or quorum lost */
#define RDLM_EV_RECOVER_SLOT	4	/* node @user, slot @lkid, departed */
#define RDLM_EV_RECOVER_DONE	5	/* slot table @user, @mode members */

/**
 * struct rdlm_event - one record read() from /dev/rdlm
 * @size: sizeof(struct rdlm_event), set by the kernel
 * @type: RDLM_EV_*
 * @lkid: the lock; RECOVER_SLOT: the departed node's slot (0: none);
 *	RECOVER_DONE: this node's slot; 0 in other membership events
 * @status: completion: 0 (granted), -EAGAIN, -ETIMEDOUT, -RDLM_ECANCEL,
 *	-RDLM_EUNLOCK, -ENOLCK, -ENOTCONN, -EDEADLK, -EIO (an unlock or
 *	down-conversion whose LVB write the home did not confirm)
 * @mode: completion: the lock's mode now; blocking: the mode waited for;
 *	RECOVER_DONE: the number of members
 * @sb_flags: completion: RDLM_SBF_*
 * @user: the lock's cookie (struct rdlm_lock_req.user); RECOVER_SLOT: the
 *	departed node's id; RECOVER_DONE: the slot table's generation
 * @lvb: completion of a grant with RDLM_LKF_VALBLK: the lock value block
 * @reserved: zero
 *
 * read() returns as many whole records as fit (-EINVAL if not even one
 * does), blocks unless O_NONBLOCK (-EAGAIN), and is interrupted by signals.
 * A lock's blocking notices are coalesced until it is converted or released.
 * Membership events beyond the lockspace's max_locks_per_file unread
 * events are dropped.
 */
struct rdlm_event {
	__u32 size;
	__u32 type;
	__u32 lkid;
	__s32 status;
	__u32 mode;
	__u32 sb_flags;
	__u64 user;
	__u8 lvb[RDLM_LVB_MAX];
	__u64 reserved[2];
};

#define RDLM_IOC_MAGIC		0xd1
#define RDLM_IOC_VERSION	_IOWR(RDLM_IOC_MAGIC, 0x00, struct rdlm_version)
#define RDLM_IOC_JOIN		_IOW(RDLM_IOC_MAGIC, 0x01, struct rdlm_join)
#define RDLM_IOC_LOCK		_IOWR(RDLM_IOC_MAGIC, 0x02, struct rdlm_lock_req)
#define RDLM_IOC_UNLOCK		_IOW(RDLM_IOC_MAGIC, 0x03, struct rdlm_unlock_req)
#define RDLM_IOC_LOCK_INFO	_IOWR(RDLM_IOC_MAGIC, 0x04, struct rdlm_lock_info)
#define RDLM_IOC_LS_STATS	_IOWR(RDLM_IOC_MAGIC, 0x05, struct rdlm_ls_stats)
/*
 * The membership daemon's file (rdlm_controld, CAP_SYS_ADMIN, a file that
 * joined no lockspace; -EINVAL otherwise). When the last such file closes,
 * because the daemon exited or was killed, every lockspace whose membership
 * it wrote stops as on a quorum loss: its locks are reported lost, since
 * the other nodes see this one leave and recover from it.
 */
#define RDLM_IOC_CONTROLD	_IO(RDLM_IOC_MAGIC, 0x06)

#endif /* _UAPI_LINUX_RDLM_H */
