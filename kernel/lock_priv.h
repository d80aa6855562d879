/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm: the lock manager's private structures (kernel/lockspace.c,
 * kernel/lock.c).
 *
 * A lockspace on this node is one engine instance bound to one fabric
 * lockspace. Resource names hash to a (home, slot) lock word. This node
 * takes a slot once, through one engine request, for all its local locks on
 * the names that hash there (struct rdlm_slot); each name keeps its own
 * granted list and FIFO of waiting requests (struct rdlm_res), so that two
 * names sharing a slot only share the node's hold of the word.
 *
 * Locking: ls->lock (a BH spinlock) protects every slot, resource and lock
 * of the lockspace and serialises every engine call. Verb completions may
 * arrive synchronously from inside rdlm_fabric_post(), that is under
 * ls->lock, so they are queued on ls->cqes (lock-free) and run by whoever
 * holds or next takes the lock (rdlm_ls_unlock()).
 */
#ifndef RDLM_LOCK_PRIV_H
#define RDLM_LOCK_PRIV_H

#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/mempool.h>
#include <linux/rdlm.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "rdlm.h"
#include "fabric/fabric.h"

#define RDLM_RES_HASH_BITS	10
#define RDLM_LKB_HASH_BITS	10
#define RDLM_RH_LOST_MAX	16	/* then every LVB not stored is unknown */

/* A node's hold of one lock word. */
enum rdlm_peek_state {
	RDLM_PEEK_NONE,
	RDLM_PEEK_SENT,
	RDLM_PEEK_ANSWERED,
};

enum rdlm_slot_state {
	RDLM_SLOT_IDLE,		/* no engine request */
	RDLM_SLOT_ACQUIRING,	/* engine request waiting */
	RDLM_SLOT_OWNED,	/* engine granted own_mode */
	RDLM_SLOT_RELEASING,	/* engine request released or cancelled */
};

struct rdlm_slot {
	struct hlist_node hash;
	u32 home;		/* engine node index of the home */
	u32 slot;
	u8 state;		/* enum rdlm_slot_state */
	u8 own_mode;		/* engine mode asked for or owned */
	bool trying;		/* acquisition started for a NOQUEUE request */
	bool remote_waiting;	/* the engine said someone waits behind us */
	bool lost;		/* the lease expired */
	bool pinned;		/* held for names that moved: until the thaw */
	bool link_wait;		/* failed on a lost link: until it is back */
	/* the shared hold asked to become exclusive in place (->convert) */
	bool upgrading;
	bool upgrade_trying;	/* ... for a NOQUEUE request */
	bool upgrade_cancel;	/* ... and asked to stop that */
	bool upgrade_refused;	/* not again until the hold or a request changes */
	struct rdlm_req *req;	/* engine request, NULL when IDLE */
	struct rdlm_req *retiring;	/* a released one still in the engine */
	/* the LVB read sent behind the acquisition's first verb (lvb.c) */
	u8 peek;			/* enum rdlm_peek_state */
	u8 peek_got;			/* chunks of its answer so far */
	bool peek_invalid;
	u8 answers;			/* engine completions of @req so far */
	bool grant_first;		/* granted by the first of them */
	u64 peek_seq;			/* &rdlm_lockspace.peek_seq of it */
	struct rdlm_res *peek_res;
	u8 peek_lvb[RDLM_LVB_MAX];
	u32 local_grants;	/* grants since own: the takeover bound */
	/* hold caching: owned, no local lock, kept until cache_until */
	bool cached;
	bool tried;		/* a refused trylock of another node met it */
	u64 cache_until;	/* ktime_get_ns() */
	u64 kept_since;		/* first kept since the grant; 0: not yet */
	u64 keep_end;		/* half the grant's lease; U64_MAX: none */
	u32 lvb_puts;		/* LVB writes not yet acknowledged by home */
	u32 puts_sent;		/* LVB writes and DONEs sent, ever */
	u32 puts_acked;		/* ... acknowledged (or given up) */
	struct list_head put_waiters;	/* locks waiting for their write's ack */
	struct list_head resources;
};

struct rdlm_res {
	struct hlist_node hash;
	struct list_head slot_entry;
	struct rdlm_slot *slot;
	u64 key;		/* 64-bit hash of the name: the LVB's key */
	struct list_head granted;
	struct list_head waiting;	/* FIFO */
	u32 nr_lkbs;		/* locks of this name, until freed */
	bool lvb_cached;	/* lvb is the home's copy, slot owned */
	bool lvb_invalid;
	bool lvb_writer;	/* the home knows us as its PW/EX holder */
	bool frozen;		/* its home moved: no grant until the thaw */
	bool rh_told;		/* the new home heard of its LVB */
	bool lvb_no_record;	/* its home had no record of it: peek by message */
	u8 lvb[RDLM_LVB_MAX];
	u8 namelen;
	u8 name[RDLM_NAME_MAX];
};

enum rdlm_lkb_state {
	RDLM_LKB_NEW,		/* first request waiting */
	RDLM_LKB_GRANTED,
	RDLM_LKB_CONVERTING,
	RDLM_LKB_DEAD,		/* final completion queued; lkid gone */
};

/* Pending user callbacks of a lock. */
#define RDLM_CB_AST	0x1
#define RDLM_CB_BAST	0x2
#define RDLM_CB_FREE	0x4	/* free the lock after its callbacks */
#define RDLM_MAX_ASTS	4	/* completions queued before the ast ran */

struct rdlm_lkb {
	struct rdlm_lockspace *ls;
	struct rdlm_res *res;
	u32 lkid;
	struct hlist_node hash;	/* &rdlm_lockspace.lkbs */
	u8 state;		/* enum rdlm_lkb_state */
	s8 grmode;		/* granted RDLM_LOCK_*, -1 none */
	s8 rqmode;		/* waiting RDLM_LOCK_*, -1 none */
	u32 flags;		/* RDLM_LKF_* of the waiting request */
	bool lvb_wait;		/* granted, waiting for the LVB from home */
	bool put_wait;		/* unlocked or down-converted, LVB write unacked */
	s8 prev_grmode;		/* granted mode before the waiting request */
	u32 put_seq;		/* &rdlm_slot.puts_sent of its write */
	struct list_head put_entry;	/* &rdlm_slot.put_waiters */
	u8 lvb_got;		/* chunks of the LVB arrived */
	bool lvb_on_peek;	/* ... waits for its word's peek instead */
	s8 bast_mode;		/* strongest told since granted, or -1 */
	u8 bast_due;		/* 1 + mode of a bast due after the AST, or 0 */
	bool lost;
	struct list_head gr_entry;	/* res->granted, while grmode >= 0 */
	struct list_head wt_entry;	/* res->waiting, while rqmode >= 0 */
	bool demoted;		/* up-conversion demoted to NL while waiting */
	bool altmode;		/* granted in its ALTPR/ALTCW mode */
	void *bast_arg;
	u8 lvb_snap[RDLM_LVB_MAX];	/* LVB read for the pending grant */
	struct rdlm_lksb *lksb;
	void (*ast)(void *arg);
	void (*bast)(void *arg, int mode);
	void *arg;
	struct timer_list timeout;
	unsigned long timeout_at;	/* jiffies; 0: no timeout armed */
	u64 wait_start;
	/* callbacks, under ls->lock */
	struct list_head cb_entry;	/* ls->cb_list, if cb_flags */
	u8 cb_flags;
	bool cb_caller;		/* its caller runs them (rdlm_lock_inline()) */
	u8 nr_asts;
	struct {
		int status;
		u32 sbflags;
		bool lvb;	/* copy lvb_snap to lksb->lvb first */
		void (*ast)(void *arg);	/* as when it was queued */
		void *arg;
		struct rdlm_lksb *lksb;
	} asts[RDLM_MAX_ASTS];
	int cb_bast_mode;
	void (*cb_bast)(void *arg, int mode);
	void *cb_bast_arg;
	/* a range lock (range.c): no @res, an engine request of its own */
	struct rdlm_req *rreq;	/* until the engine is DONE with it */
	u64 start;
	u64 end;
};

/* The timer of one engine request, with the way back to its lockspace. */
struct rdlm_req_timer {
	struct hrtimer timer;
	struct rdlm_lockspace *ls;
	u64 cookie;
};

struct rdlm_lockspace {
	struct kref ref;
	struct list_head entry;		/* rdlm_lockspaces */
	char name[RDLM_LS_NAME_MAX];
	struct rdlm_fabric_ls *fls;
	struct rdlm_engine eng;
	u32 nr_members;
	u32 members[RDLM_MAX_MEMBERS];	/* node ids, ascending */
	u32 self;			/* engine index of this node */
	u32 nr_slots;
	u32 local_grants_max;
	u64 cache_ns;			/* configfs cache_us; 0: no caching */
	/* keep no hold: the lockspace stops, or kept ones are given back */
	bool cache_off;
	bool cache_shrink;		/* no engine request left: give back */
	u32 max_locks;
	u32 max_locks_per_file;
	u32 max_lvbs;
	u32 lvb_len;			/* bytes of its LVBs */
	kuid_t uid;
	kgid_t gid;
	umode_t mode;

	spinlock_t lock;		/* see the top of this file */
	bool dead;
	bool starved;			/* a slot found no engine request */
	struct llist_head cqes;		/* completions waiting for ls->lock */
	mempool_t *cqe_pool;		/* what they are queued in */
	DECLARE_HASHTABLE(slots, RDLM_RES_HASH_BITS);
	DECLARE_HASHTABLE(res, RDLM_RES_HASH_BITS);
	DECLARE_HASHTABLE(lkbs, RDLM_LKB_HASH_BITS);	/* by lkid */
	u32 next_lkid;
	struct rdlm_req_timer *req_timers;	/* one per engine request */
	struct hrtimer home_timer;
	struct hrtimer cache_timer;	/* the first kept hold to give back */
	u64 home_cookie;
	struct rdlm_lockspace_stats st;

	/* LVBs this node keeps as a home, by resource key */
	struct xarray lvbs;
	struct list_head lvb_lru;	/* least recently used first */
	u32 nr_lvbs;
	unsigned long *lvb_evicted;	/* slots an LVB was dropped from */
	struct rdlm_lvb_stage *stage;	/* first halves, per sender */
	u32 nr_records;			/* LVB records peers READ (lvb.c) */
	bool lvb_read;			/* and we READ theirs */

	struct list_head cb_list;	/* locks with callbacks to run */
	struct rdlm_lkb *cb_cur;	/* the lock cb_work delivers to now */
	struct rdlm_req *completing;	/* ->complete() of its completion runs */
	/* peeks sent: a message answer never matches twice, a READ's not in 2^26 */
	u64 peek_seq;
	struct work_struct cb_work;
	struct workqueue_struct *wq;
	struct work_struct free_work;	/* after the last reference */
	atomic_t nr_lkbs;
	wait_queue_head_t wait;
	struct dentry *debugfs;

	/* agreed membership (membership.c); bits are engine node indexes */
	struct mutex memb_mutex;
	u32 memb_epoch;			/* 0: static, nobody departs */
	bool memb_quorate;
	bool memb_stopped;		/* quorum lost: a fresh lockspace needed */
	u64 memb_in;			/* in the last membership */
	u64 memb_departed;		/* left it, fenced until they rejoin */
	u64 memb_pending;		/* departed, not recovered from yet */
	u64 memb_fresh;			/* showed a new incarnation (ls->lock) */
	u64 memb_withdrawn;		/* took theirs down (ls->lock) */
	u64 memb_wdown;			/* static: recovered from at that (ls->lock) */
	bool memb_gone;			/* a peer fenced ours (ls->lock) */
	unsigned long memb_due[RDLM_MAX_MEMBERS];	/* jiffies: grace ends */
	u32 memb_grace_ms;
	bool memb_fencing;		/* no grace: recovery at fence_ack */
	u32 memb_recoveries;
	struct delayed_work memb_work;	/* recovery when a grace ends */
	struct list_head watchers;	/* &struct rdlm_watch */
	u32 memb_done_gen;		/* slot table recover_done reported */

	/* names' homes (rehome.c), under ls->lock; bits are node indexes */
	u64 rh_map;			/* the homes now: memb_in, or all */
	u64 rh_stable;			/* at the last thaw; 0: none yet */
	bool rh_active;			/* names moved: frozen until the thaw */
	bool rh_self_done;		/* our holds of moved names reclaimed */
	bool rh_pending;		/* a departed node waits for recovery */
	u32 rh_epoch;			/* the membership that moved them */
	u64 rh_got;			/* members done with it, as we asked */
	u64 rh_view;			/* whom we asked: rdlm_rh_view() */
	u64 rh_gone;			/* homes that left since the last thaw */
	u64 rh_stale;			/* homes left, not recovered from yet */
	u64 rh_ask_map[RDLM_MAX_MEMBERS];	/* what each member asked */
	u32 rh_ask_epoch[RDLM_MAX_MEMBERS];
	u64 rh_ask_view[RDLM_MAX_MEMBERS];
	u32 rh_rounds;			/* re-homings completed */
	/* each member's slot claim in this round (ours: at the apply) */
	u32 rh_claim_slot[RDLM_MAX_MEMBERS];
	u32 rh_claim_gen[RDLM_MAX_MEMBERS];
	/* the slot table agreed at the last thaw (engine/slots.c) */
	u32 slot_of[RDLM_MAX_MEMBERS];	/* 0: none */
	u32 slot_gen;			/* 0: no table yet */
	u64 slot_map;			/* the members it is for */
	/* homes that left with their LVBs: a name homed on one is unknown */
	struct {
		u64 map;
		u64 gone;
	} rh_lost[RDLM_RH_LOST_MAX];
	u32 nr_rh_lost;
	struct delayed_work rh_work;	/* asks again until the thaw */
	/* POSIX locks (plock.c) */
	struct list_head pl_ops;	/* ours not answered, in the order sent */
	u32 pl_next_op;
	wait_queue_head_t pl_wq;
	struct delayed_work pl_retry;	/* asks pl_ops again until answered */
	struct xarray pl_files;		/* as a home: number -> its locks */
	struct list_head pl_waiters;	/* as a home: F_SETLKW, as they came */
	u32 pl_ranges;			/* as a home: ranges kept */
	u32 pl_nr_waiters;
};

/* Lock manager messages (SEND, struct rdlm_msg.type), next to the engines'. */
#define RDLM_LM_MSG_FIRST	0x100
/*
 * An LVB travels in chunks of RDLM_LVB_CHUNK bytes, lvb_len / CHUNK
 * messages on one connection: type X0 with the chunk's index in part, then
 * the last chunk as type X1 (with the flags).
 */
#define RDLM_LM_LVB_PUT0	0x100	/* holder -> home: LVB chunk */
#define RDLM_LM_LVB_PUT1	0x101	/* the last chunk, then home acks */
/* ACK's arg echoes the write's sequence number: PUT's mode, DONE's arg */
#define RDLM_LM_LVB_ACK		0x102	/* home -> holder: stored */
#define RDLM_LM_LVB_GET		0x103	/* grantee -> home: send the LVB */
#define RDLM_LM_LVB_VAL0	0x104	/* home -> grantee: chunk */
#define RDLM_LM_LVB_VAL1	0x105	/* the last chunk */
#define RDLM_LM_LVB_HOLD	0x106	/* grantee -> home: PW/EX, LVB cached */
#define RDLM_LM_LVB_DONE	0x107	/* holder -> home: not written back */
/* re-homing barrier: reqid is the map of homes, arg the asker's epoch */
#define RDLM_LM_RH_ASK		0x108	/* done with this map? */
#define RDLM_LM_RH_DONE		0x109	/* yes: holds of moved names reclaimed */
#define RDLM_LM_RH_LOST		0x10a	/* reqid map, arg the homes that left it */
#define RDLM_LM_LVB_MOVE0	0x10b	/* old home -> new home: chunk */
#define RDLM_LM_LVB_MOVE1	0x10c	/* the last chunk; flags: invalid */
/*
 * POSIX locks (plock.c): reqid the file's number, slot the requester's
 * request id, token..arg the range, mode the type, arg2 the owner, part
 * the pid (ANSWER: -errno; of F_GETLK: the holder, arg2 node << 32 | pid)
 */
#define RDLM_LM_PL_SET		0x110	/* set or unlock a range */
#define RDLM_LM_PL_GET		0x111	/* F_GETLK */
#define RDLM_LM_PL_CANCEL	0x112	/* the SET named by slot waits no more */
#define RDLM_LM_PL_ANSWER	0x113	/* home -> requester */
#define RDLM_LM_F_INVALID	0x01	/* the LVB is not valid */
#define RDLM_LM_F_WRITER	0x02	/* GET: the grantee holds PW/EX */
#define RDLM_LM_F_REFUSED	0x04	/* ACK: the write was not stored */
#define RDLM_LM_F_PEEK		0x08	/* GET: a read before the grant */
#define RDLM_LM_F_BUSY		0x10	/* VAL of a peek: another writer */
#define RDLM_LM_F_RECORD	0x20	/* VAL: the home's record holds the name */

/* How long an LVB write waits for the home's ack before it fails. */
#define RDLM_LVB_ACK_TIMEOUT	(10 * HZ)

/* Cookies of lock manager messages, handed back when one fails. */
#define RDLM_LM_CK_PUT		BIT_ULL(62)	/* | home << 32 | slot */
#define RDLM_LM_CK_GET		BIT_ULL(63)	/* | lkid */
#define RDLM_LM_CK_PEEK		(RDLM_LM_CK_PUT | RDLM_LM_CK_GET) /* as PUT */
/* reqid of a peek and of its answer; a GET's is the lock id (31 bits) */
#define RDLM_LM_PEEK_ID		BIT_ULL(62)	/* | seq */

/* lockspace.c */
void rdlm_ls_unlock(struct rdlm_lockspace *ls) __releases(&ls->lock);
void rdlm_ls_verb_done(void *ctx, const struct rdlm_cqe *cqe);
void rdlm_ls_lm_done(void *ctx, const struct rdlm_cqe *cqe);
void rdlm_ls_record_done(void *ctx, const struct rdlm_cqe *cqe);
void rdlm_ls_fail_cqe(struct rdlm_lockspace *ls, const struct rdlm_verb *v,
		      int status);
u32 rdlm_ls_node_index(struct rdlm_lockspace *ls, u32 nodeid);
void rdlm_ls_arm(struct rdlm_lockspace *ls, struct rdlm_req *req,
		 u64 delay_ns, u64 cookie);

/* lvb.c */
int rdlm_lvb_init(struct rdlm_lockspace *ls);
void rdlm_lvb_fini(struct rdlm_lockspace *ls);
void rdlm_lm_send_lvb(struct rdlm_lockspace *ls, u32 node, u16 type, u32 slot,
		      u8 flags, u8 seq, u64 reqid, const u8 *lvb, u64 cookie);
void rdlm_lm_send_msg(struct rdlm_lockspace *ls, u32 node, u16 type, u32 slot,
		      u8 flags, u64 reqid, u64 arg, u64 cookie);
void rdlm_lm_send_token(struct rdlm_lockspace *ls, u32 node, u16 type,
			u32 slot, u64 reqid, u64 token, u64 arg);
void rdlm_home_lvb_node_down(struct rdlm_lockspace *ls, u32 node);
void rdlm_home_lvb_rehome(struct rdlm_lockspace *ls, u64 old_map,
			  u64 departed);
void rdlm_home_lvb_lost(struct rdlm_lockspace *ls, u64 map, u64 gone);
void rdlm_lm_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx);

void rdlm_plock_init(struct rdlm_lockspace *ls);
void rdlm_plock_fini(struct rdlm_lockspace *ls);
void rdlm_plock_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx);
void rdlm_plock_member_up(struct rdlm_lockspace *ls, u32 node);
void rdlm_plock_member_down(struct rdlm_lockspace *ls, u32 node);
void rdlm_plock_fail_all(struct rdlm_lockspace *ls);
void rdlm_plock_dump(struct rdlm_lockspace *ls, struct seq_file *m);
void rdlm_lm_send_failed(struct rdlm_lockspace *ls,
			 const struct rdlm_cqe *cqe);
int rdlm_lvb_put(struct rdlm_lockspace *ls, struct rdlm_res *res, bool write,
		 const u8 *lvb, bool invalid);
void rdlm_lkb_put_wait(struct rdlm_lkb *lkb, struct rdlm_slot *s);
void rdlm_lkb_put_done(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		       bool ok);
void rdlm_slot_puts_failed(struct rdlm_lockspace *ls, struct rdlm_slot *s);
void rdlm_lkb_lvb_unreachable(struct rdlm_lockspace *ls,
			      struct rdlm_lkb *lkb);
void rdlm_lvb_get(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		  unsigned long timeout_at);
void rdlm_lvb_peek(struct rdlm_lockspace *ls, struct rdlm_slot *s);
bool rdlm_lvb_peek_take(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			unsigned long timeout_at);
void rdlm_lvb_peek_drop(struct rdlm_lockspace *ls, struct rdlm_slot *s);
void rdlm_lvb_peek_settle(struct rdlm_lockspace *ls, struct rdlm_slot *s);
void rdlm_lvb_record_read(struct rdlm_lockspace *ls,
			  const struct rdlm_cqe *cqe);

/* membership.c */
void rdlm_memb_init(struct rdlm_lockspace *ls, u32 grace_ms, bool fencing);
void rdlm_memb_restart(struct rdlm_lockspace *ls, u32 idx);
void rdlm_memb_gone(struct rdlm_lockspace *ls, u32 idx);
void rdlm_memb_withdrawn(struct rdlm_lockspace *ls, u32 idx);
void rdlm_memb_orphan(struct rdlm_lockspace *ls);
void rdlm_memb_stop(struct rdlm_lockspace *ls);

/* rehome.c */
u32 rdlm_home_of(struct rdlm_lockspace *ls, u64 map, u64 key);
void rdlm_rehome_node_down(struct rdlm_lockspace *ls, u32 node);
bool rdlm_rehome_frozen(struct rdlm_lockspace *ls, u64 key);
void rdlm_rehome_init(struct rdlm_lockspace *ls);
void rdlm_rehome_apply(struct rdlm_lockspace *ls, u32 epoch, u64 map,
		       u64 departed);
void rdlm_rehome_check(struct rdlm_lockspace *ls);
void rdlm_rehome_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx);
bool rdlm_home_here(struct rdlm_lockspace *ls, u64 key);

/* range.c */
int rdlm_range_unlock_check(struct rdlm_lkb *lkb, u32 flags);
void rdlm_range_unlock_lkb(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			   u32 flags);
void rdlm_range_timeout(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb);
void rdlm_range_act(struct rdlm_lockspace *ls, const struct rdlm_action *act);

/* lock.c */
struct rdlm_out rdlm_ls_out(struct rdlm_lockspace *ls);
u64 rdlm_name_key(const void *name, unsigned int namelen);
int rdlm_check_ls(struct rdlm_lockspace *ls, u32 home);
int rdlm_ls_may_add(struct rdlm_lockspace *ls);
struct rdlm_lkb *rdlm_lkb_find(struct rdlm_lockspace *ls, u32 lkid);
void rdlm_lkb_add(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb);
int rdlm_engine_errno(int err);
struct rdlm_lkb *rdlm_lkb_alloc(struct rdlm_lockspace *ls,
				struct rdlm_lksb *lksb, void (*ast)(void *arg),
				void *arg, void (*bast)(void *arg, int mode),
				void *bast_arg);
void rdlm_lkb_unwait(struct rdlm_lkb *lkb);
void rdlm_queue_bast(struct rdlm_lkb *lkb, int mode);
struct rdlm_slot *rdlm_slot_get(struct rdlm_lockspace *ls, u32 home,
				u32 slot);
void rdlm_res_move(struct rdlm_lockspace *ls, struct rdlm_res *res,
		   struct rdlm_slot *to);
bool rdlm_res_reclaimed(struct rdlm_lockspace *ls, struct rdlm_res *res);
void rdlm_ls_pass_all(struct rdlm_lockspace *ls);
void rdlm_ls_cache_expire(struct rdlm_lockspace *ls, bool all);
void rdlm_ls_cache_shrink(struct rdlm_lockspace *ls);
void rdlm_ls_call_member_down(struct rdlm_lockspace *ls, u32 node, u32 epoch);
void rdlm_ls_call_member_join(struct rdlm_lockspace *ls, u32 node);
void rdlm_ls_call_complete(struct rdlm_lockspace *ls,
			   const struct rdlm_cqe *cqe);
void rdlm_ls_call_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx);
void rdlm_ls_call_member_up(struct rdlm_lockspace *ls, u32 node);
void rdlm_ls_call_timer(struct rdlm_lockspace *ls, struct rdlm_req *req,
			u64 cookie);
void rdlm_lm_home_down(struct rdlm_lockspace *ls, u32 node);
struct rdlm_slot *rdlm_slot_find(struct rdlm_lockspace *ls, u32 home,
				 u32 slot);
void rdlm_slot_pass(struct rdlm_lockspace *ls, struct rdlm_slot *s);
void rdlm_queue_ast(struct rdlm_lkb *lkb, int status, u32 sbflags, bool lvb);
void rdlm_lkb_kill(struct rdlm_lkb *lkb, int status, u32 sbflags);
void rdlm_lkb_granted(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		      bool lvb);
void rdlm_lkb_ungrant(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		      int status);
void rdlm_ls_cb_work(struct work_struct *work);
void rdlm_ls_fail_all(struct rdlm_lockspace *ls);
void rdlm_ls_free_slots(struct rdlm_lockspace *ls);
void rdlm_ls_dump_locks(struct rdlm_lockspace *ls, struct seq_file *m);

#endif /* RDLM_LOCK_PRIV_H */
