/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm: internal declarations shared by the module's files.
 */
#ifndef RDLM_H
#define RDLM_H

#include <linux/bits.h>
#include <linux/debugfs.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include "engine/engine.h"

struct rdlm_lksb;

/* Root of /sys/kernel/debug/rdlm, or an error pointer when debugfs is off. */
extern struct dentry *rdlm_debugfs_root;

#define RDLM_MAX_NODEID		1024	/* node ids are 1..RDLM_MAX_NODEID */
#define RDLM_MAX_MEMBERS	64	/* members of one lockspace */
#define RDLM_LVB_CHUNK		16	/* LVB bytes one message carries */
#define RDLM_MAX_SLOTS		BIT(20)		/* lock words per table */
#define RDLM_MAX_MBOX		65536	/* mailbox slots per lockspace (1 MiB) */
#define RDLM_RECORD_SIZE	128	/* bytes of a record peers READ */
#define RDLM_MAX_RECORDS	8192	/* records per lockspace (1 MiB) */
#define RDLM_LS_NAME_MAX	64

int rdlm_chardev_init(void);
void rdlm_chardev_exit(void);

int rdlm_configfs_init(void);
void rdlm_configfs_exit(void);

void rdlm_debugfs_init(void);
void rdlm_debugfs_exit(void);

/*
 * Lock manager internals used by chardev.c (the exported API is in
 * include/linux/rdlm.h).
 */
struct rdlm_lockspace;

/**
 * struct rdlm_lockspace_stats - counters of one lockspace on this node
 * @requests: lock and convert requests accepted
 * @grants: requests granted
 * @local_grants: granted from a slot this node already owned (no RDMA)
 * @fails: requests completed with an error (incl. -EAGAIN, -ETIMEDOUT)
 * @cancels: requests cancelled
 * @unlocks: locks released
 * @basts: blocking callbacks delivered
 * @asts_queued: completions delivered through the callback work
 * @asts_direct: synchronous callers woken where their request completed
 * @asts_inline: of @asts_queued, run by the caller of rdlm_lock_inline() or
 *	rdlm_unlock_inline() (/dev/rdlm's blocking requests) before it returned
 * @retakes: words taken again while their release was still under way
 * @lvb_peeks: grants whose LVB came with the word's first round trip
 * @lvb_reads: peeks answered by an RDMA READ of the home's record rather
 *	than by a message (a grant by a later verb drops the answer)
 * @lvb_read_misses: such READs that found no usable record (another name's,
 *	none, a writer of record, a record being written): the grantee asks
 *	the home
 * @upgrades: shared holds of a word made exclusive in place
 * @downgrades: exclusive holds of a word made shared in place
 * @cache_kept: holds of a word kept after its last local lock went
 *	(hold caching, configfs cache_us)
 * @cache_hits: locks granted from such a kept hold, without a verb
 * @cache_revoked: kept holds given back because another node waits
 * @lost: locks lost (lease expired, member down)
 * @lvb_invalidated: as a home, LVBs marked invalid because their PW/EX
 *	holder's node went away, or its lock was broken, before writing back
 * @lvbs: LVBs kept here as a home
 * @lvb_evicted: as a home, LVBs dropped beyond max_lvbs
 * @lvb_lost: LVB writes (unlock, down-conversion) that failed with -EIO:
 *	the home did not confirm them
 * @verbs: verbs posted by this node's engine, by &enum rdlm_verb_kind
 * @locks: locks currently known (granted or waiting)
 */
struct rdlm_lockspace_stats {
	u64 requests;
	u64 grants;
	u64 local_grants;
	u64 fails;
	u64 cancels;
	u64 unlocks;
	u64 basts;
	u64 asts_queued;
	u64 asts_direct;
	u64 asts_inline;
	u64 retakes;
	u64 lvb_peeks;
	u64 lvb_reads;
	u64 lvb_read_misses;
	u64 upgrades;
	u64 downgrades;
	u64 cache_kept;
	u64 cache_hits;
	u64 cache_revoked;
	u64 lost;
	u64 lvb_invalidated;
	u64 lvb_lost;
	u64 lvbs;
	u64 lvb_evicted;
	u64 verbs[RDLM_VERB_NR];
	u64 locks;
};

/**
 * struct rdlm_lockspace_cfg - what configfs hands the lock manager
 * @name: lockspace name; its fabric lockspace is enabled already
 * @ops: protocol engine
 * @params: engine parameters (node ids and sizes are filled in)
 * @local: this node's id
 * @nr_members: entries in @members
 * @members: member node ids
 * @nr_slots: lock words per member table
 * @local_grants_max: local takeovers of a held word before it is given
 *	back, so that remote waiters are not starved; 0 = no bound
 * @cache_us: how long a word no local lock uses any more is kept for the
 *	next one (at most half its lease); 0 = given back at the last unlock
 * @max_locks: locks (granted or waiting) on this node, all users
 * @max_locks_per_file: locks of one /dev/rdlm file, and its completion
 *	events not read yet
 * @max_lvbs: LVBs this node keeps as a home; the least recently used one
 *	goes beyond that, and reads of its slot's names see it invalid
 * @lvb_len: bytes of a lock value block, a multiple of RDLM_LVB_CHUNK
 * @lvb_read: peek at a remote home's LVB by RDMA READ of its record where
 *	the fabric has records (NIC-atomic mode), not by message
 * @uid: owner of the lockspace for /dev/rdlm users
 * @gid: group
 * @mode: permission bits (rw for owner, group, others) to join
 * @recovery_grace_ms: how long after a member departed the others wait
 *	before they recover from it, without @fencing
 * @fencing: a departed member is recovered from only once its fencing is
 *	acknowledged (fence_ack: rdlm_controld runs the fence agent), not
 *	after @recovery_grace_ms (Documentation/membership.rst)
 * @managed: configfs lockspace, whose membership rdlm_controld writes if
 *	it runs: enabled while it runs, it grants nothing before its first
 *	membership (a kernel caller's lockspace is not, nor one configured
 *	"managed" 0: false)
 */
struct rdlm_lockspace_cfg {
	const char *name;
	const struct rdlm_engine_ops *ops;
	struct rdlm_engine_params params;
	u32 local;
	u32 nr_members;
	u32 members[RDLM_MAX_MEMBERS];
	u32 nr_slots;
	u32 local_grants_max;
	u32 cache_us;
	u32 max_locks;
	u32 max_locks_per_file;
	u32 max_lvbs;
	u32 lvb_len;
	u32 lvb_read;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	u32 recovery_grace_ms;
	bool fencing;
	bool managed;
};

int rdlm_lockspace_create(const struct rdlm_lockspace_cfg *cfg,
			  struct rdlm_lockspace **lsp);
void rdlm_lockspace_stop(struct rdlm_lockspace *ls);
bool rdlm_lockspace_busy(struct rdlm_lockspace *ls);
void rdlm_lockspace_destroy(struct rdlm_lockspace *ls);
int rdlm_lockspace_init(void);
void rdlm_lockspace_exit(void);

/* the membership daemon's /dev/rdlm file opens (true) or closes (false) */
void rdlm_lockspaces_controld(bool attach);
/* 0 if the current task may join @ls (configfs uid/gid/mode), or -EPERM. */
int rdlm_lockspace_may_join(struct rdlm_lockspace *ls);
void rdlm_lockspace_get_stats(struct rdlm_lockspace *ls,
			      struct rdlm_lockspace_stats *st);
const char *rdlm_lockspace_name(struct rdlm_lockspace *ls);
u32 rdlm_lockspace_max_file_locks(struct rdlm_lockspace *ls);
/* a synchronous caller's spin before it sleeps (lock.c) */
void rdlm_spin_wait(bool (*done)(void *arg), void *arg);
/* rdlm_lock() and rdlm_unlock() that run the callbacks due at once (lock.c) */
int rdlm_lock_inline(struct rdlm_lockspace *ls, int mode,
		     struct rdlm_lksb *lksb, u32 flags, const void *name,
		     unsigned int namelen, unsigned int timeout_ms,
		     void (*ast)(void *arg), void *arg,
		     void (*bast)(void *arg, int mode));
int rdlm_unlock_inline(struct rdlm_lockspace *ls, u32 lkid, u32 flags,
		       void *arg);
int rdlm_lockspace_set_membership(struct rdlm_lockspace *ls, const char *buf);
int rdlm_lockspace_fence_ack(struct rdlm_lockspace *ls, u32 nodeid);
int rdlm_lockspace_show_membership(struct rdlm_lockspace *ls, char *buf,
				   size_t size);

#endif /* RDLM_H */
