// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the lock value block protocol, both halves.
 *
 * The LVB of a name lives at the name's home, keyed by a 64-bit hash of the
 * name (struct rdlm_home_lvb): a node granted the name with RDLM_LKF_VALBLK
 * reads it with a message exchange (GET, answered by VAL0 + VAL1), a PW/EX
 * holder writes it back (PUT0 + PUT1) and waits for the home's ACK before
 * its hold of the lock word goes, so that the next holder anywhere reads
 * what was written. A PW/EX holder that will not write says so (DONE);
 * one that got the LVB from its own cache says it holds it (HOLD). The home
 * knows its current writer and invalidates the LVB when that writer goes
 * away or is passed over (its lease broken) before writing back.
 *
 * Messages are SENDs in the lockspace (struct rdlm_msg); a write or read
 * whose message or answer does not arrive completes with an error, never
 * with success: see rdlm_lm_send_failed() and rdlm_lm_home_down().
 * Everything here but rdlm_lvb_init() and rdlm_lvb_fini() runs under
 * ls->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/slab.h>

#include "lock_priv.h"

/*
 * @writer: engine index + 1 of the node holding the name in PW or EX that
 * has not written back yet, 0 for none. If that node goes away, or another
 * node is granted the name first (the writer's lease was broken), what it
 * may have changed is not in @data: the LVB becomes invalid, and no write
 * is taken (RDLM_LVB_FENCED) until the next writer is granted.
 * @stored: written at least once (else kept only while there is a writer)
 * @slot: the lock word of its name
 * @key: its resource key
 * @lru: in &rdlm_lockspace.lvb_lru
 *
 * A home cannot tell when no lock of a name exists anywhere any more (the
 * one-sided engines never tell it), so its LVBs are bounded instead: past
 * max_lvbs the least recently used one without a writer goes, and its
 * slot is marked, so that names of that slot without an LVB here read as
 * invalid rather than as a valid zero.
 */
struct rdlm_home_lvb {
	bool invalid;
	bool stored;
	u32 writer;
	u32 slot;
	u64 key;
	struct list_head lru;
	u8 data[RDLM_LVB_MAX];
};

#define RDLM_LVB_FENCED	U32_MAX

/*
 * LVB records. In NIC-atomic mode a home also publishes the LVBs of its
 * names in records (rdlm_fabric_ls_record()), in memory its peers READ: the
 * record of a name is number key % nr_records. A node starting to take a
 * word READs the record of the name it peeks at right behind the engine's
 * first verb instead of sending a peek message, and the home's CPU answers
 * nothing. A record holds one name at a time: one whose LVB the home keeps
 * (written each time it changes), or else one the home answered a GET for
 * as never written (a valid zero, until that changes: see
 * rdlm_lvb_records_prune()). A READ for another name misses, and the
 * grantee asks the home.
 *
 * The NIC reads while the home's CPU may write, so a record is written as a
 * seqlock: @seq and @seq_end made odd, then the body, then @seq_end and
 * @seq made even, one higher. A reader takes a record only if both are
 * equal and even. That is sound if the responder reads the record in
 * address order or a cache line at a time (a DMA read of coherent memory:
 * @seq is in its first line, @seq_end in its last). A CPU copy (rxe's
 * memcpy) need not keep either order, so the body also carries a CRC32
 * (@sum) the reader checks. A torn or busy record only misses.
 */
struct rdlm_lvb_record {
	__le64 seq;
	__le64 key;
	__le32 writer;		/* &rdlm_home_lvb.writer */
	__le32 flags;		/* RDLM_LVB_REC_* */
	u8 data[RDLM_LVB_MAX];
	__le32 slot;		/* the name's word */
	__le32 sum;		/* CRC32 of @key to @slot */
	u8 pad[RDLM_RECORD_SIZE - 40 - RDLM_LVB_MAX];
	__le64 seq_end;
};

#define RDLM_LVB_REC_BODY	(offsetof(struct rdlm_lvb_record, sum) - \
				 offsetof(struct rdlm_lvb_record, key))

static u32 rdlm_lvb_record_sum(const struct rdlm_lvb_record *rec)
{
	return crc32_le(~0, (const u8 *)&rec->key, RDLM_LVB_REC_BODY);
}

static_assert(sizeof(struct rdlm_lvb_record) == RDLM_RECORD_SIZE);

#define RDLM_LVB_REC_NAME	0x1	/* the LVB of @key is here */
#define RDLM_LVB_REC_INVALID	0x2

/* The chunks of an LVB from one sender before its last one, in order. */
struct rdlm_lvb_stage {
	u64 key;
	bool valid;
	u8 next;	/* index of the chunk expected next */
	u8 data[RDLM_LVB_MAX];
};

/**
 * rdlm_lvb_init() - the home's LVB table of a new lockspace
 * @ls: lockspace being created (nr_members, nr_slots set)
 *
 * Return: 0 or -ENOMEM; rdlm_lvb_fini() frees what was allocated either way.
 */
int rdlm_lvb_init(struct rdlm_lockspace *ls)
{
	xa_init(&ls->lvbs);
	INIT_LIST_HEAD(&ls->lvb_lru);
	ls->stage = kcalloc(ls->nr_members, sizeof(*ls->stage), GFP_KERNEL);
	ls->lvb_evicted = bitmap_zalloc(ls->nr_slots, GFP_KERNEL);
	return ls->stage && ls->lvb_evicted ? 0 : -ENOMEM;
}

/**
 * rdlm_lvb_fini() - free the home's LVB table
 * @ls: lockspace after rdlm_lvb_init(), no longer reachable
 */
void rdlm_lvb_fini(struct rdlm_lockspace *ls)
{
	struct rdlm_home_lvb *lvb;
	unsigned long key;

	xa_for_each(&ls->lvbs, key, lvb)
		kfree(lvb);
	xa_destroy(&ls->lvbs);
	kfree(ls->stage);
	bitmap_free(ls->lvb_evicted);
}

/* ---- messages ---------------------------------------------------------- */

static void rdlm_lm_send(struct rdlm_lockspace *ls, u32 node, u16 type,
			 u32 slot, u8 flags, u8 seq, u64 reqid, const u8 *data,
			 u32 chunk, u64 arg, u64 cookie)
{
	struct rdlm_verb v = {
		.kind = RDLM_VERB_SEND,
		.node = ls->members[node],
		.slot = slot,
		.cookie = cookie,
	};

	v.msg.type = type;
	v.msg.flags = flags;
	v.msg.mode = seq;
	v.msg.src = ls->self;
	v.msg.slot = slot;
	v.msg.reqid = reqid;
	v.msg.arg = arg;
	v.msg.part = chunk;
	if (data) {
		memcpy(&v.msg.token, data, 8);
		memcpy(&v.msg.arg, data + 8, 8);
	}
	ls->st.verbs[RDLM_VERB_SEND]++;
	if (rdlm_fabric_post(ls->fls, &v, rdlm_ls_lm_done, ls)) {
		struct rdlm_cqe cqe = {
			.cookie = cookie, .kind = RDLM_VERB_SEND,
			.status = -ENOTCONN,
		};

		rdlm_ls_lm_done(ls, &cqe);
	}
}

/**
 * rdlm_lm_send_lvb() - send a lock value block, one message per chunk
 * @ls: lockspace (locked)
 * @node: engine index of the receiver
 * @type: RDLM_LM_LVB_PUT0, _VAL0 or _MOVE0 (the last chunk's is type + 1)
 * @slot: lock word slot
 * @flags: RDLM_LM_F_* of the last message
 * @seq: PUT: the write's sequence number on its slot, echoed in the ack
 * @reqid: resource key (PUT) or lock id (VAL)
 * @lvb: the lockspace's lvb_len bytes
 * @cookie: handed back if the last message fails
 *
 * All go on one connection, so the receiver sees them in order.
 */
void rdlm_lm_send_lvb(struct rdlm_lockspace *ls, u32 node, u16 type, u32 slot,
		      u8 flags, u8 seq, u64 reqid, const u8 *lvb, u64 cookie)
{
	u32 i, last = ls->lvb_len / RDLM_LVB_CHUNK - 1;

	for (i = 0; i < last; i++)
		rdlm_lm_send(ls, node, type, slot, 0, seq, reqid,
			     lvb + i * RDLM_LVB_CHUNK, i, 0, 0);
	rdlm_lm_send(ls, node, type + 1, slot, flags, seq, reqid,
		     lvb + last * RDLM_LVB_CHUNK, last, 0, cookie);
}

/**
 * rdlm_lm_send_msg() - send a lock manager message without LVB
 * @ls: lockspace (locked)
 * @node: engine index of the receiver
 * @type: RDLM_LM_*
 * @slot: slot
 * @flags: RDLM_LM_F_*
 * @reqid: resource key
 * @arg: lock id (GET), the write's sequence number (DONE, ACK), or 0
 * @cookie: handed back on failure
 */
void rdlm_lm_send_msg(struct rdlm_lockspace *ls, u32 node, u16 type, u32 slot,
		      u8 flags, u64 reqid, u64 arg, u64 cookie)
{
	rdlm_lm_send(ls, node, type, slot, flags, 0, reqid, NULL, 0, arg,
		     cookie);
}

/**
 * rdlm_lm_send_token() - send a lock manager message with a token
 * @ls: lockspace (locked)
 * @node: engine index of the receiver
 * @type: RDLM_LM_*
 * @slot: lock word slot, or what the type says
 * @reqid: what the type says
 * @token: what the type says (&rdlm_msg.token)
 * @arg: what the type says
 */
void rdlm_lm_send_token(struct rdlm_lockspace *ls, u32 node, u16 type,
			u32 slot, u64 reqid, u64 token, u64 arg)
{
	u8 data[16];

	memcpy(data, &token, 8);
	memcpy(data + 8, &arg, 8);
	rdlm_lm_send(ls, node, type, slot, 0, 0, reqid, data, 0, arg, 0);
}

/* ---- home side --------------------------------------------------------- */

static void rdlm_lvb_chunk_copy(u8 *to, const struct rdlm_msg *m)
{
	memcpy(to, &m->token, 8);
	memcpy(to + 8, &m->arg, 8);
}

/* A chunk before the last of an LVB from a sender: staged, in order. */
static void rdlm_lvb_stage_chunk(struct rdlm_lvb_stage *st,
				 const struct rdlm_msg *m)
{
	if (!m->part) {
		st->key = m->reqid;
		st->valid = true;
		st->next = 0;
	}
	if (!st->valid || st->key != m->reqid || m->part != st->next ||
	    m->part >= RDLM_LVB_MAX / RDLM_LVB_CHUNK - 1) {
		st->valid = false;
		return;
	}
	rdlm_lvb_chunk_copy(st->data + m->part * RDLM_LVB_CHUNK, m);
	st->next++;
}

/*
 * The last chunk @m of an LVB: true, and the whole LVB in @to, if every
 * chunk before it was staged; false if one was lost. The stage is spent.
 */
static bool rdlm_lvb_stage_last(struct rdlm_lockspace *ls,
				struct rdlm_lvb_stage *st,
				const struct rdlm_msg *m, u8 *to)
{
	u32 last = ls->lvb_len / RDLM_LVB_CHUNK - 1;
	bool whole = !last || (st->valid && st->key == m->reqid &&
			       st->next == last && m->part == last);

	st->valid = false;
	if (!whole)
		return false;
	memcpy(to, st->data, last * RDLM_LVB_CHUNK);
	rdlm_lvb_chunk_copy(to + last * RDLM_LVB_CHUNK, m);
	return true;
}

static struct rdlm_lvb_record *rdlm_lvb_record(struct rdlm_lockspace *ls,
					       u64 key)
{
	if (!ls->nr_records)
		return NULL;
	return rdlm_fabric_ls_record(ls->fls, do_div(key, ls->nr_records));
}

/* Home side: write a record, as a seqlock (see struct rdlm_lvb_record). */
static void rdlm_lvb_record_write(struct rdlm_lvb_record *rec, u64 key,
				  u32 slot, u32 flags, u32 writer,
				  const u8 *data)
{
	u64 seq = le64_to_cpu(rec->seq) + 1;

	WRITE_ONCE(rec->seq, cpu_to_le64(seq));
	WRITE_ONCE(rec->seq_end, cpu_to_le64(seq));
	dma_wmb();
	rec->key = cpu_to_le64(key);
	rec->slot = cpu_to_le32(slot);
	rec->writer = cpu_to_le32(writer);
	rec->flags = cpu_to_le32(flags);
	memcpy(rec->data, data, RDLM_LVB_MAX);
	rec->sum = cpu_to_le32(rdlm_lvb_record_sum(rec));
	dma_wmb();
	WRITE_ONCE(rec->seq_end, cpu_to_le64(seq + 1));
	dma_wmb();
	WRITE_ONCE(rec->seq, cpu_to_le64(seq + 1));
}

static const u8 rdlm_lvb_zero[RDLM_LVB_MAX];

/*
 * Home side: @lvb changed, write it to its record. Called before any
 * message that lets a reader's grant follow the change.
 */
static void rdlm_home_lvb_publish(struct rdlm_lockspace *ls,
				  const struct rdlm_home_lvb *lvb)
{
	struct rdlm_lvb_record *rec = rdlm_lvb_record(ls, lvb->key);

	if (rec)
		rdlm_lvb_record_write(rec, lvb->key, lvb->slot,
				      RDLM_LVB_REC_NAME |
				      (lvb->invalid ? RDLM_LVB_REC_INVALID : 0),
				      lvb->writer, lvb->data);
}

/* Home side: clear @rec, which no reader may take any more. */
static void rdlm_lvb_record_clear(struct rdlm_lvb_record *rec)
{
	rdlm_lvb_record_write(rec, 0, 0, 0, 0, rdlm_lvb_zero);
}

/* Home side: does the record of @key hold @key? */
static bool rdlm_lvb_record_holds(struct rdlm_lockspace *ls, u64 key)
{
	struct rdlm_lvb_record *rec = rdlm_lvb_record(ls, key);

	return rec && (le32_to_cpu(rec->flags) & RDLM_LVB_REC_NAME) &&
	       le64_to_cpu(rec->key) == key;
}

/* Home side: @key has no LVB here any more: its record goes, if it has one. */
static void rdlm_home_lvb_unpublish(struct rdlm_lockspace *ls, u64 key)
{
	if (rdlm_lvb_record_holds(ls, key))
		rdlm_lvb_record_clear(rdlm_lvb_record(ls, key));
}

/*
 * Home side: a GET of @key, which has no LVB here, was answered as a valid
 * zero. Its record says so too, unless it holds a name whose LVB is kept.
 */
static void rdlm_home_lvb_publish_zero(struct rdlm_lockspace *ls, u64 key,
				       u32 slot)
{
	struct rdlm_lvb_record *rec = rdlm_lvb_record(ls, key);

	if (!rec)
		return;
	if ((le32_to_cpu(rec->flags) & RDLM_LVB_REC_NAME) &&
	    xa_load(&ls->lvbs, (unsigned long)le64_to_cpu(rec->key)))
		return;
	rdlm_lvb_record_write(rec, key, slot, RDLM_LVB_REC_NAME, 0,
			      rdlm_lvb_zero);
}

/**
 * rdlm_lvb_records_prune() - clear the records of names without an LVB here
 * @ls: lockspace (locked)
 * @slot: only those of this word (modulo the table), U32_MAX for all
 *
 * Such a record says "never written, valid zero", which stops being true
 * when an LVB of its word is dropped, or a home leaves with the LVBs of its
 * names, or the name is homed elsewhere now: it goes, the next GET answers.
 */
static void rdlm_lvb_records_prune(struct rdlm_lockspace *ls, u32 slot)
{
	struct rdlm_lvb_record *rec;
	u32 i;

	for (i = 0; i < ls->nr_records; i++) {
		rec = rdlm_fabric_ls_record(ls->fls, i);
		if (!(le32_to_cpu(rec->flags) & RDLM_LVB_REC_NAME) ||
		    (slot != U32_MAX &&
		     le32_to_cpu(rec->slot) % ls->nr_slots != slot) ||
		    xa_load(&ls->lvbs, (unsigned long)le64_to_cpu(rec->key)))
			continue;
		rdlm_lvb_record_clear(rec);
	}
}

static void rdlm_home_lvb_free(struct rdlm_lockspace *ls,
			       struct rdlm_home_lvb *lvb)
{
	xa_erase(&ls->lvbs, (unsigned long)lvb->key);
	rdlm_home_lvb_unpublish(ls, lvb->key);
	list_del(&lvb->lru);
	ls->nr_lvbs--;
	kfree(lvb);
}

/* Was an LVB of a name on @slot dropped here? Then its value is unknown. */
static bool rdlm_home_lvb_evicted(struct rdlm_lockspace *ls, u32 slot)
{
	return test_bit(slot % ls->nr_slots, ls->lvb_evicted);
}

/**
 * rdlm_home_lvb_lost() - homes left with the LVBs of their names
 * @ls: lockspace (locked)
 * @map: the map of homes they were in
 * @gone: those that left
 *
 * A name homed on one of them in @map, without an LVB here, reads as
 * invalid from now on: its value went with its home.
 */
void rdlm_home_lvb_lost(struct rdlm_lockspace *ls, u64 map, u64 gone)
{
	u32 i;

	for (i = 0; i < ls->nr_rh_lost; i++)
		if (ls->rh_lost[i].map == map && ls->rh_lost[i].gone == gone)
			return;
	if (ls->nr_rh_lost == RDLM_RH_LOST_MAX) {
		/* too much history: every LVB not stored is unknown */
		bitmap_fill(ls->lvb_evicted, ls->nr_slots);
	} else {
		ls->rh_lost[ls->nr_rh_lost].map = map;
		ls->rh_lost[ls->nr_rh_lost++].gone = gone;
	}
	rdlm_lvb_records_prune(ls, U32_MAX);
}

/* Did the LVB of @key go with a home that left? */
static bool rdlm_home_lvb_unknown(struct rdlm_lockspace *ls, u64 key,
				  u32 slot)
{
	u32 i;

	if (rdlm_home_lvb_evicted(ls, slot))
		return true;
	for (i = 0; i < ls->nr_rh_lost; i++)
		if (ls->rh_lost[i].gone &
		    BIT_ULL(rdlm_home_of(ls, ls->rh_lost[i].map, key)))
			return true;
	return false;
}

/* The LVB of @key, used now: NULL if there is none. */
static struct rdlm_home_lvb *rdlm_home_lvb_find(struct rdlm_lockspace *ls,
						u64 key)
{
	struct rdlm_home_lvb *lvb = xa_load(&ls->lvbs, (unsigned long)key);

	if (lvb)
		list_move_tail(&lvb->lru, &ls->lvb_lru);
	return lvb;
}

/* Make room for one more LVB: false if every one has a writer. */
static bool rdlm_home_lvb_evict(struct rdlm_lockspace *ls)
{
	struct rdlm_home_lvb *lvb;
	bool first;
	u32 slot;

	list_for_each_entry(lvb, &ls->lvb_lru, lru) {
		/* a fenced one refuses its broken writer's late write */
		if (lvb->writer)
			continue;
		/* words beyond the table (any_slot) share its bits */
		slot = lvb->slot % ls->nr_slots;
		first = !test_and_set_bit(slot, ls->lvb_evicted);
		ls->st.lvb_evicted++;
		rdlm_home_lvb_free(ls, lvb);
		/* no new never-written record of the word's names comes now */
		if (first)
			rdlm_lvb_records_prune(ls, slot);
		return true;
	}
	return false;
}

static struct rdlm_home_lvb *rdlm_home_lvb_get(struct rdlm_lockspace *ls,
					       u64 key, u32 slot)
{
	struct rdlm_home_lvb *lvb = rdlm_home_lvb_find(ls, key);

	if (lvb)
		return lvb;
	if (ls->nr_lvbs >= ls->max_lvbs && !rdlm_home_lvb_evict(ls))
		return NULL;
	/* kept for the whole cluster: charged to nobody in particular */
	lvb = kzalloc(sizeof(*lvb), GFP_ATOMIC);
	if (!lvb)
		return NULL;
	if (xa_err(xa_store(&ls->lvbs, (unsigned long)key, lvb, GFP_ATOMIC))) {
		kfree(lvb);
		return NULL;
	}
	lvb->key = key;
	lvb->slot = slot;
	/* a value dropped before, or gone with a home, is unknown */
	lvb->invalid = rdlm_home_lvb_unknown(ls, key, slot);
	list_add_tail(&lvb->lru, &ls->lvb_lru);
	ls->nr_lvbs++;
	rdlm_home_lvb_publish(ls, lvb);
	return lvb;
}

/* Home side: @lvb's writer will not write it back. */
static void rdlm_home_lvb_fence(struct rdlm_lockspace *ls,
				struct rdlm_home_lvb *lvb)
{
	lvb->invalid = true;
	lvb->writer = RDLM_LVB_FENCED;
	ls->st.lvb_invalidated++;
	rdlm_home_lvb_publish(ls, lvb);
}

/*
 * Home side: node @src was granted the LVB's name, in PW or EX if @writer.
 * Nobody else is granted the name while a writer holds PW/EX: a grant
 * elsewhere means the writer's lease was broken.
 */
static void rdlm_home_lvb_grant(struct rdlm_lockspace *ls,
				struct rdlm_home_lvb *lvb, u32 src, bool writer)
{
	if (lvb->writer && lvb->writer != RDLM_LVB_FENCED &&
	    lvb->writer != src + 1)
		rdlm_home_lvb_fence(ls, lvb);
	if (writer) {
		lvb->writer = src + 1;
		rdlm_home_lvb_publish(ls, lvb);
	}
}

/**
 * rdlm_home_lvb_node_down() - invalidate what a departed node was writing
 * @ls: lockspace (locked)
 * @node: engine index of the node that became unreachable
 */
void rdlm_home_lvb_node_down(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_home_lvb *lvb;
	unsigned long key;

	xa_for_each(&ls->lvbs, key, lvb)
		if (lvb->writer == node + 1)
			rdlm_home_lvb_fence(ls, lvb);
}

/**
 * rdlm_home_lvb_rehome() - the homes of names moved: hand over the LVBs
 *	of names homed elsewhere now
 * @ls: lockspace (locked), its new map of homes set
 * @old_map: the map before
 * @departed: the homes in it that left the membership (not those that were
 *	only not in this node's first one): their LVBs are lost
 *
 * A live home's LVBs go to the names' new homes before this node says it
 * is done with the move, so they are there before anyone reads them.
 */
void rdlm_home_lvb_rehome(struct rdlm_lockspace *ls, u64 old_map,
			  u64 departed)
{
	struct rdlm_home_lvb *lvb;
	unsigned long key;
	u32 home;

	if (departed & old_map)
		rdlm_home_lvb_lost(ls, old_map, departed & old_map);
	xa_for_each(&ls->lvbs, key, lvb) {
		home = rdlm_home_of(ls, ls->rh_map, lvb->key);
		if (home == ls->self)
			continue;
		if (lvb->stored || lvb->invalid)
			rdlm_lm_send_lvb(ls, home, RDLM_LM_LVB_MOVE0, lvb->slot,
					 lvb->invalid || lvb->writer ?
					 RDLM_LM_F_INVALID : 0, 0, lvb->key,
					 lvb->data, 0);
		rdlm_home_lvb_free(ls, lvb);
	}
	/* the never-written names homed here before may not be now */
	rdlm_lvb_records_prune(ls, U32_MAX);
}

/* Home side: an LVB handed over by the name's old home. */
static void rdlm_home_lvb_moved(struct rdlm_lockspace *ls,
				const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_lvb_stage *st = &ls->stage[rx->src];
	struct rdlm_home_lvb *lvb;

	u8 data[RDLM_LVB_MAX];

	if (m->type == RDLM_LM_LVB_MOVE0) {
		rdlm_lvb_stage_chunk(st, m);
		return;
	}
	/* one a holder told us of (reclaimed) is as new or newer */
	if (rdlm_lvb_stage_last(ls, st, m, data) &&
	    rdlm_home_here(ls, m->reqid) &&
	    !xa_load(&ls->lvbs, (unsigned long)m->reqid)) {
		lvb = rdlm_home_lvb_get(ls, m->reqid, m->slot);
		if (lvb) {
			memcpy(lvb->data, data, ls->lvb_len);
			lvb->invalid = m->flags & RDLM_LM_F_INVALID;
			lvb->stored = true;
			rdlm_home_lvb_publish(ls, lvb);
		}
	}
}

/* Home side: store an LVB written by a releasing holder, then ack. */
static void rdlm_home_lvb_put(struct rdlm_lockspace *ls,
			      const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_lvb_stage *st = &ls->stage[rx->src];
	struct rdlm_home_lvb *lvb;
	bool ours, stored = false;

	u8 data[RDLM_LVB_MAX];
	bool whole;

	if (m->type == RDLM_LM_LVB_PUT0) {
		rdlm_lvb_stage_chunk(st, m);
		return;
	}
	whole = rdlm_lvb_stage_last(ls, st, m, data);
	/* a name homed elsewhere now (the writer has not moved yet) */
	lvb = rdlm_home_here(ls, m->reqid) ?
	      rdlm_home_lvb_get(ls, m->reqid, m->slot) : NULL;
	/* not from a writer whose lock was broken: that write is not taken */
	ours = lvb && (!lvb->writer || lvb->writer == rx->src + 1);
	if (ours && !whole) {
		/* a chunk was lost: what was written is unknown */
		lvb->invalid = true;
		lvb->writer = 0;
	} else if (ours) {
		memcpy(lvb->data, data, ls->lvb_len);
		lvb->invalid = m->flags & RDLM_LM_F_INVALID;
		lvb->stored = true;
		lvb->writer = 0;
		stored = true;
	}
	if (ours)
		rdlm_home_lvb_publish(ls, lvb);
	/*
	 * Acked even without memory, so that the holder does not wait, but
	 * a write not stored is refused: its writer must not report success.
	 */
	rdlm_lm_send_msg(ls, rx->src, RDLM_LM_LVB_ACK, m->slot,
			 stored ? 0 : RDLM_LM_F_REFUSED, m->reqid, m->mode, 0);
}

/* Home side: a writer released PW/EX without writing the LVB back. */
static void rdlm_home_lvb_done(struct rdlm_lockspace *ls,
			       const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_home_lvb *lvb = rdlm_home_lvb_find(ls, m->reqid);

	if (lvb && lvb->writer == rx->src + 1) {
		lvb->writer = 0;
		/* kept only to know the writer */
		if (!lvb->stored && !lvb->invalid)
			rdlm_home_lvb_free(ls, lvb);
		else
			rdlm_home_lvb_publish(ls, lvb);
	}
	rdlm_lm_send_msg(ls, rx->src, RDLM_LM_LVB_ACK, m->slot, 0, m->reqid,
			 m->arg, 0);
}

/* Home side: answer a new grantee's LVB read. */
static void rdlm_home_lvb_read(struct rdlm_lockspace *ls,
			       const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	bool writer = m->flags & RDLM_LM_F_WRITER;
	bool peek = m->flags & RDLM_LM_F_PEEK;
	struct rdlm_home_lvb *lvb;
	u8 flags = 0;

	/*
	 * a writer's entry is made here, a reader's only read; none for a
	 * node that has not seen the name move: unknown here (below)
	 */
	if (!rdlm_home_here(ls, m->reqid))
		lvb = NULL;
	else if (writer)
		lvb = rdlm_home_lvb_get(ls, m->reqid, m->slot);
	else
		lvb = rdlm_home_lvb_find(ls, m->reqid);
	/* a peek is no grant: it fences no writer, it only tells of one */
	if (lvb && !peek)
		rdlm_home_lvb_grant(ls, lvb, rx->src, writer);
	/* none: never written, unless dropped (or no memory for a writer) */
	if (lvb ? lvb->invalid :
		  writer || rdlm_home_lvb_unknown(ls, m->reqid, m->slot))
		flags = RDLM_LM_F_INVALID;
	/* asked by a node that has not seen the name move: unknown here */
	if (!rdlm_home_here(ls, m->reqid))
		flags = RDLM_LM_F_INVALID;
	if (peek && lvb && lvb->writer && lvb->writer != rx->src + 1)
		flags |= RDLM_LM_F_BUSY;
	/* never written: the next READ of the name finds that out itself */
	if (!lvb && !flags)
		rdlm_home_lvb_publish_zero(ls, m->reqid, m->slot);
	if (rdlm_lvb_record_holds(ls, m->reqid))
		flags |= RDLM_LM_F_RECORD;
	rdlm_lm_send_lvb(ls, rx->src, RDLM_LM_LVB_VAL0, m->slot, flags, 0,
			 m->arg, lvb ? lvb->data : rdlm_lvb_zero, 0);
}

/* A lock manager message for this node as a home? Then it is handled. */
static bool rdlm_lm_home_recv(struct rdlm_lockspace *ls,
			      const struct rdlm_rx *rx)
{
	struct rdlm_home_lvb *lvb;

	switch (rx->msg.type) {
	case RDLM_LM_LVB_PUT0:
	case RDLM_LM_LVB_PUT1:
		rdlm_home_lvb_put(ls, rx);
		return true;
	case RDLM_LM_LVB_GET:
		rdlm_home_lvb_read(ls, rx);
		return true;
	case RDLM_LM_LVB_HOLD:
		if (!rdlm_home_here(ls, rx->msg.reqid))
			return true;
		lvb = rdlm_home_lvb_get(ls, rx->msg.reqid, rx->msg.slot);
		if (lvb)
			rdlm_home_lvb_grant(ls, lvb, rx->src, true);
		return true;
	case RDLM_LM_LVB_DONE:
		rdlm_home_lvb_done(ls, rx);
		return true;
	case RDLM_LM_LVB_MOVE0:
	case RDLM_LM_LVB_MOVE1:
		rdlm_home_lvb_moved(ls, rx);
		return true;
	case RDLM_LM_RH_LOST:
		rdlm_home_lvb_lost(ls, rx->msg.reqid, rx->msg.arg);
		return true;
	default:
		return false;
	}
}

/* ---- requester side -------------------------------------------------- */

/**
 * rdlm_lkb_lvb_unreachable() - the home's answer to an LVB read will not come
 * @ls: lockspace (locked)
 * @lkb: the lock, granted but waiting for the LVB
 *
 * A reader is granted with the LVB marked invalid; a PW/EX writer is not,
 * since the home may not know it as the writer and could not invalidate
 * what it fails to write back.
 */
void rdlm_lkb_lvb_unreachable(struct rdlm_lockspace *ls,
			      struct rdlm_lkb *lkb)
{
	if (lkb->grmode >= RDLM_LOCK_PW) {
		rdlm_lkb_ungrant(ls, lkb, -ENOTCONN);
		return;
	}
	lkb->res->lvb_invalid = true;
	rdlm_lkb_granted(ls, lkb, true);
}

/**
 * rdlm_lkb_put_wait() - wait for the home's ack of a lock's LVB write
 * @lkb: the lock whose release or down-conversion wrote the LVB
 * @s: its word, whose last write (&rdlm_slot.puts_sent) it was
 *
 * The ack (or its failure, or RDLM_LVB_ACK_TIMEOUT) completes the request.
 */
void rdlm_lkb_put_wait(struct rdlm_lkb *lkb, struct rdlm_slot *s)
{
	lkb->put_wait = true;
	lkb->put_seq = s->puts_sent;
	list_add_tail(&lkb->put_entry, &s->put_waiters);
	lkb->timeout_at = (jiffies + RDLM_LVB_ACK_TIMEOUT) ?: 1;
	mod_timer(&lkb->timeout, lkb->timeout_at);
}

/**
 * rdlm_lkb_put_done() - complete a lock's LVB write
 * @ls: lockspace (locked)
 * @lkb: the lock (unlock or down-conversion)
 * @ok: the home acked the write; else the request completes with -EIO
 */
void rdlm_lkb_put_done(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		       bool ok)
{
	list_del_init(&lkb->put_entry);
	lkb->put_wait = false;
	lkb->timeout_at = 0;
	if (timer_pending(&lkb->timeout))
		del_timer(&lkb->timeout);
	if (!ok)
		ls->st.lvb_lost++;
	if (lkb->state == RDLM_LKB_DEAD)
		rdlm_lkb_kill(lkb, ok ? -RDLM_EUNLOCK : -EIO, 0);
	else
		rdlm_queue_ast(lkb, ok ? 0 : -EIO, 0, false);
}

/* The home acked the oldest write of @s (@refused: it did not store it). */
static void rdlm_slot_put_acked(struct rdlm_lockspace *ls, struct rdlm_slot *s,
				bool refused)
{
	struct rdlm_lkb *lkb, *tmp;

	if (!s->lvb_puts)
		return;
	s->lvb_puts--;
	s->puts_acked++;
	list_for_each_entry_safe(lkb, tmp, &s->put_waiters, put_entry) {
		if ((s32)(lkb->put_seq - s->puts_acked) > 0)
			break;
		rdlm_lkb_put_done(ls, lkb, !refused ||
				  lkb->put_seq != s->puts_acked);
	}
}

/**
 * rdlm_slot_puts_failed() - a word's LVB writes will not be acked
 * @ls: lockspace (locked)
 * @s: the word
 *
 * They may not have reached the home: each completes with -EIO.
 */
void rdlm_slot_puts_failed(struct rdlm_lockspace *ls,
			   struct rdlm_slot *s)
{
	struct rdlm_lkb *lkb, *tmp;

	s->lvb_puts = 0;
	s->puts_acked = s->puts_sent;
	list_for_each_entry_safe(lkb, tmp, &s->put_waiters, put_entry)
		rdlm_lkb_put_done(ls, lkb, false);
}

/**
 * rdlm_lvb_get() - ask the home for the LVB of a grant
 * @ls: lockspace (locked)
 * @lkb: the lock, granted with RDLM_LKF_VALBLK, no current copy here
 * @timeout_at: its request's timeout (jiffies), 0 for none
 *
 * The grant completes with the home's answer; the request's timeout covers
 * the wait for it. A PW/EX grantee makes itself known as the writer.
 */
void rdlm_lvb_get(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
		  unsigned long timeout_at)
{
	struct rdlm_res *res = lkb->res;
	struct rdlm_slot *s = res->slot;
	bool writer = lkb->grmode >= RDLM_LOCK_PW;

	lkb->lvb_wait = true;
	lkb->lvb_on_peek = false;
	lkb->lvb_got = 0;
	if (timeout_at) {
		lkb->timeout_at = timeout_at;
		mod_timer(&lkb->timeout, timeout_at);
	}
	res->lvb_writer |= writer;
	rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_GET, s->slot,
			 writer ? RDLM_LM_F_WRITER : 0, res->key, lkb->lkid,
			 RDLM_LM_CK_GET | lkb->lkid);
}

/*
 * Peeks. A grant with VALBLK costs a second round trip to the home for the
 * LVB after the word's own. So when this node starts taking a word for a
 * name whose LVB a waiter wants, it sends the LVB read (a "peek") right
 * behind the engine's first verb, on the same connection to the home: the
 * home reads the LVB after that verb executed. When that very verb granted
 * the word (it was free: every earlier holder had released it, and a
 * writer releases only after the home acked its LVB write), nobody can
 * have written the LVB between the read and the grant, and the peek's
 * answer is the grant's LVB. Otherwise (the grant came later, another
 * node is the home's writer of record, the name moved, the message failed)
 * the answer is dropped and the grantee asks the home as before.
 */

/* A READ's cookie: peek_seq << 38 | home << 32 | slot (home < 64) */
#define RDLM_LVB_READ_SEQ	(BIT_ULL(26) - 1)
static_assert(RDLM_MAX_MEMBERS <= 64);

/*
 * The peek as a READ of the home's record of @s: true if posted. Not to
 * this node (its CPU answers the message without the network), nor for a
 * name whose record held another name, or whose home's last answer said
 * its record did not hold it (RDLM_LM_F_RECORD), until one says it does or
 * this node writes the LVB.
 */
static bool rdlm_lvb_peek_read(struct rdlm_lockspace *ls, struct rdlm_slot *s,
			       struct rdlm_res *res)
{
	u64 key = res->key;
	struct rdlm_verb v = {
		.kind = RDLM_VERB_READ,
		.flags = RDLM_VF_RECORD,
		.node = ls->members[s->home],
		.cookie = (s->peek_seq & RDLM_LVB_READ_SEQ) << 38 |
			  (u64)s->home << 32 | s->slot,
	};

	if (!ls->lvb_read || !ls->nr_records || s->home == ls->self ||
	    res->lvb_no_record)
		return false;
	v.slot = do_div(key, ls->nr_records);
	/* a home without records (-EOPNOTSUPP) is asked by message */
	if (rdlm_fabric_post(ls->fls, &v, rdlm_ls_record_done, ls))
		return false;
	ls->st.verbs[RDLM_VERB_READ]++;
	return true;
}

/**
 * rdlm_lvb_peek() - read the LVB behind a word's first verb
 * @ls: lockspace (locked)
 * @s: the word, whose acquisition the engine just started
 *
 * By RDMA READ of the home's record where it can, else by message.
 */
void rdlm_lvb_peek(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_res *res;
	struct rdlm_lkb *lkb;

	rdlm_lvb_peek_drop(ls, s);
	if (!ls->eng.ops->grant_on_first)
		return;
	list_for_each_entry(res, &s->resources, slot_entry) {
		if (res->lvb_cached || res->frozen)
			continue;
		lkb = list_first_entry_or_null(&res->waiting, struct rdlm_lkb,
					       wt_entry);
		if (!lkb || !(lkb->flags & RDLM_LKF_VALBLK) ||
		    lkb->rqmode <= RDLM_LOCK_NL)
			continue;
		s->peek = RDLM_PEEK_SENT;
		s->peek_res = res;
		s->peek_got = 0;
		/* a word's state may go and come back: number peeks per lockspace */
		s->peek_seq = ++ls->peek_seq & (RDLM_LM_PEEK_ID - 1);
		if (rdlm_lvb_peek_read(ls, s, res))
			return;
		rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_GET, s->slot,
				 RDLM_LM_F_PEEK, res->key,
				 RDLM_LM_PEEK_ID | s->peek_seq,
				 RDLM_LM_CK_PEEK | (u64)s->home << 32 | s->slot);
		return;
	}
}

/**
 * rdlm_lvb_peek_drop() - forget a word's peek; its waiters ask the home
 * @ls: lockspace (locked)
 * @s: the word
 */
void rdlm_lvb_peek_drop(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_lkb *lkb, *tmp;

	if (s->peek == RDLM_PEEK_NONE)
		return;
	list_for_each_entry_safe(lkb, tmp, &s->peek_res->granted, gr_entry)
		if (lkb->lvb_wait && lkb->lvb_on_peek)
			rdlm_lvb_get(ls, lkb, 0);
	s->peek = RDLM_PEEK_NONE;
	s->peek_res = NULL;
}

/**
 * rdlm_lvb_peek_settle() - after the pass of a grant: a peek that no grant
 *	of that pass waits for is dropped (later grants ask the home)
 * @ls: lockspace (locked)
 * @s: the word
 */
void rdlm_lvb_peek_settle(struct rdlm_lockspace *ls, struct rdlm_slot *s)
{
	struct rdlm_lkb *lkb;

	if (s->peek == RDLM_PEEK_NONE)
		return;
	list_for_each_entry(lkb, &s->peek_res->granted, gr_entry)
		if (lkb->lvb_wait && lkb->lvb_on_peek)
			return;
	rdlm_lvb_peek_drop(ls, s);
}

/* The peek's answer is the LVB of @s's name, as the home answers a GET. */
static void rdlm_lvb_peek_apply(struct rdlm_slot *s)
{
	struct rdlm_res *res = s->peek_res;

	memcpy(res->lvb, s->peek_lvb, RDLM_LVB_MAX);
	res->lvb_invalid = s->peek_invalid;
	res->lvb_cached = s->state == RDLM_SLOT_OWNED && !s->lost;
	s->peek = RDLM_PEEK_NONE;
	s->peek_res = NULL;
}

/**
 * rdlm_lvb_peek_take() - complete a grant with its word's peek, if it can
 * @ls: lockspace (locked)
 * @lkb: the lock, granted with RDLM_LKF_VALBLK, no current copy here
 * @timeout_at: its request's timeout (jiffies), 0 for none
 *
 * Return: true when the grant completed or waits for the peek's answer;
 * false when the caller must ask the home (the peek, if any, is dropped).
 */
bool rdlm_lvb_peek_take(struct rdlm_lockspace *ls, struct rdlm_lkb *lkb,
			unsigned long timeout_at)
{
	struct rdlm_res *res = lkb->res;
	struct rdlm_slot *s = res->slot;

	if (s->peek == RDLM_PEEK_NONE || s->peek_res != res ||
	    !s->grant_first) {
		rdlm_lvb_peek_drop(ls, s);
		return false;
	}
	if (lkb->grmode >= RDLM_LOCK_PW && !res->lvb_writer) {
		res->lvb_writer = true;
		rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_HOLD, s->slot, 0,
				 res->key, 0, 0);
	}
	if (s->peek == RDLM_PEEK_ANSWERED) {
		rdlm_lvb_peek_apply(s);
		ls->st.lvb_peeks++;
		rdlm_lkb_granted(ls, lkb, true);
		return true;
	}
	lkb->lvb_wait = true;
	lkb->lvb_on_peek = true;
	if (timeout_at) {
		lkb->timeout_at = timeout_at;
		mod_timer(&lkb->timeout, timeout_at);
	}
	return true;
}

/*
 * Copy a chunk of the home's answer into @lvb; @got counts the chunks in
 * order. Return: true when the last one completed it.
 */
static bool rdlm_lvb_chunk(struct rdlm_lockspace *ls,
			   const struct rdlm_msg *m, u8 *lvb, u8 *got)
{
	u32 last = ls->lvb_len / RDLM_LVB_CHUNK - 1;
	bool final = m->type == RDLM_LM_LVB_VAL1;
	bool is_last = m->part == last;

	if (!final && !m->part)
		*got = 0;
	/* in order, and only the last chunk is VAL1 */
	if (m->part != *got || m->part > last || final != is_last)
		return false;
	rdlm_lvb_chunk_copy(lvb + m->part * RDLM_LVB_CHUNK, m);
	(*got)++;
	return final;
}

/* The peek of @s has its answer in s->peek_lvb: complete its grants. */
static void rdlm_lvb_peek_answered(struct rdlm_lockspace *ls,
				   struct rdlm_slot *s)
{
	struct rdlm_res *res = s->peek_res;
	struct rdlm_lkb *lkb, *tmp;

	s->peek = RDLM_PEEK_ANSWERED;
	list_for_each_entry_safe(lkb, tmp, &res->granted, gr_entry) {
		if (!lkb->lvb_wait || !lkb->lvb_on_peek)
			continue;
		/* the first one takes it for the name: the rest find it cached */
		if (s->peek == RDLM_PEEK_ANSWERED)
			rdlm_lvb_peek_apply(s);
		ls->st.lvb_peeks++;
		rdlm_lkb_granted(ls, lkb, true);
	}
}

/* A half of a peek's answer arrived. */
static void rdlm_lvb_peek_answer(struct rdlm_lockspace *ls,
				 const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_slot *s = rdlm_slot_find(ls, rx->src, m->slot);

	if (!s || s->peek != RDLM_PEEK_SENT ||
	    m->reqid != (RDLM_LM_PEEK_ID | s->peek_seq) ||
	    !rdlm_lvb_chunk(ls, m, s->peek_lvb, &s->peek_got))
		return;
	if (m->flags & RDLM_LM_F_BUSY) {
		rdlm_lvb_peek_drop(ls, s);
		return;
	}
	s->peek_invalid = m->flags & RDLM_LM_F_INVALID;
	/* the home says whether a READ would have found the name */
	s->peek_res->lvb_no_record = !(m->flags & RDLM_LM_F_RECORD);
	rdlm_lvb_peek_answered(ls, s);
}

/**
 * rdlm_lvb_record_read() - the READ of a home's LVB record completed
 * @ls: lockspace (locked)
 * @cqe: its completion, the record in @cqe->data
 *
 * A record of the peek's name, not being written, with no other node as
 * the home's writer of record, is the peek's answer; anything else misses,
 * and the word's grantees ask the home.
 */
void rdlm_lvb_record_read(struct rdlm_lockspace *ls,
			  const struct rdlm_cqe *cqe)
{
	const struct rdlm_lvb_record *rec = cqe->data;
	u64 ck = cqe->cookie, seq;
	struct rdlm_slot *s;
	u32 flags, writer;

	s = rdlm_slot_find(ls, (ck >> 32) & (RDLM_MAX_MEMBERS - 1), (u32)ck);
	if (!s || s->peek != RDLM_PEEK_SENT ||
	    ck >> 38 != (s->peek_seq & RDLM_LVB_READ_SEQ))
		return;
	if (cqe->status || !rec) {
		/* only a speculation: its waiters ask the home instead */
		rdlm_lvb_peek_drop(ls, s);
		rdlm_slot_pass(ls, s);
		return;
	}
	seq = le64_to_cpu(rec->seq);
	flags = le32_to_cpu(rec->flags);
	writer = le32_to_cpu(rec->writer);
	if ((seq & 1) || seq != le64_to_cpu(rec->seq_end) ||
	    le32_to_cpu(rec->sum) != rdlm_lvb_record_sum(rec) ||
	    (writer && writer != ls->self + 1)) {
		ls->st.lvb_read_misses++;
		rdlm_lvb_peek_drop(ls, s);
		return;
	}
	if (!(flags & RDLM_LVB_REC_NAME) ||
	    le64_to_cpu(rec->key) != s->peek_res->key) {
		/* the next peeks of the name go by message */
		s->peek_res->lvb_no_record = true;
		ls->st.lvb_read_misses++;
		rdlm_lvb_peek_drop(ls, s);
		return;
	}
	memcpy(s->peek_lvb, rec->data, RDLM_LVB_MAX);
	s->peek_invalid = flags & RDLM_LVB_REC_INVALID;
	ls->st.lvb_reads++;
	rdlm_lvb_peek_answered(ls, s);
}

/**
 * rdlm_lm_recv() - a lock manager message arrived
 * @ls: lockspace (locked)
 * @rx: message, src translated to an engine index
 */
void rdlm_lm_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx)
{
	const struct rdlm_msg *m = &rx->msg;
	struct rdlm_lkb *lkb;
	struct rdlm_slot *s;
	struct rdlm_res *res;

	if (rdlm_lm_home_recv(ls, rx))
		return;
	switch (m->type) {
	case RDLM_LM_PL_SET ... RDLM_LM_PL_ANSWER:
		rdlm_plock_recv(ls, rx);
		break;
	case RDLM_LM_RH_ASK:
	case RDLM_LM_RH_DONE:
		rdlm_rehome_recv(ls, rx);
		break;
	case RDLM_LM_LVB_ACK:
		s = rdlm_slot_find(ls, rx->src, m->slot);
		/*
		 * Only the ack of the oldest write waiting: one the node gave
		 * up on (timeout) may still come, after newer writes went.
		 */
		if (s && s->lvb_puts && (u8)m->arg == (u8)(s->puts_acked + 1)) {
			rdlm_slot_put_acked(ls, s, m->flags & RDLM_LM_F_REFUSED);
			rdlm_slot_pass(ls, s);
		}
		break;
	case RDLM_LM_LVB_VAL0:
	case RDLM_LM_LVB_VAL1:
		if (m->reqid & RDLM_LM_PEEK_ID) {
			rdlm_lvb_peek_answer(ls, rx);
			break;
		}
		/* our lock ids fit in 32 bits: not ours otherwise */
		lkb = m->reqid > U32_MAX ? NULL : rdlm_lkb_find(ls, m->reqid);
		if (!lkb || !lkb->lvb_wait || lkb->state == RDLM_LKB_DEAD)
			break;
		res = lkb->res;
		if (rdlm_lvb_chunk(ls, m, res->lvb, &lkb->lvb_got)) {
			res->lvb_invalid = m->flags & RDLM_LM_F_INVALID;
			res->lvb_no_record = !(m->flags & RDLM_LM_F_RECORD);
			res->lvb_cached = res->slot->state == RDLM_SLOT_OWNED &&
					  !res->slot->lost;
			rdlm_lkb_granted(ls, lkb, true);
		}
		break;
	default:
		break;
	}
}

/**
 * rdlm_lm_send_failed() - a lock manager message could not be delivered
 * @ls: lockspace (locked)
 * @cqe: its completion
 */
void rdlm_lm_send_failed(struct rdlm_lockspace *ls, const struct rdlm_cqe *cqe)
{
	u64 ck = cqe->cookie;
	struct rdlm_lkb *lkb;
	struct rdlm_slot *s;

	if ((ck & RDLM_LM_CK_PEEK) == RDLM_LM_CK_PEEK) {
		s = rdlm_slot_find(ls, (ck >> 32) & 0xffff, (u32)ck);
		/* only a speculation: its waiters ask the home instead */
		if (s && s->peek == RDLM_PEEK_SENT) {
			rdlm_lvb_peek_drop(ls, s);
			rdlm_slot_pass(ls, s);
		}
	} else if ((ck & (RDLM_LM_CK_PUT | RDLM_LM_CK_GET)) == RDLM_LM_CK_PUT) {
		s = rdlm_slot_find(ls, (ck >> 32) & 0xffff, (u32)ck);
		if (s && s->lvb_puts) {
			rdlm_slot_puts_failed(ls, s);
			rdlm_slot_pass(ls, s);
		}
	} else if ((ck & (RDLM_LM_CK_PUT | RDLM_LM_CK_GET)) == RDLM_LM_CK_GET) {
		lkb = rdlm_lkb_find(ls, (u32)ck);
		if (lkb && lkb->lvb_wait && lkb->state != RDLM_LKB_DEAD) {
			s = lkb->res->slot;
			rdlm_lkb_lvb_unreachable(ls, lkb);
			rdlm_slot_pass(ls, s);
		}
	}
}

/**
 * rdlm_lvb_put() - a PW/EX lock of a name is going: hand its LVB to the home
 * @ls: lockspace (locked)
 * @res: the name
 * @write: write @lvb (or invalidate it); false: only tell a home that knows
 *	us as the LVB's writer that we are done without writing
 * @lvb: the value to write, NULL for zeroes
 * @invalid: mark the LVB invalid at the home instead
 *
 * The write reaches the home before the word goes.
 *
 * Return: 1 if a write went to the home (its ack, or its failure, completes
 * the request: rdlm_lkb_put_wait()), 0 if nothing was to be written, -EIO
 * if a write was asked for but the hold is lost (the next writer's grant
 * invalidates the LVB at the home).
 */
int rdlm_lvb_put(struct rdlm_lockspace *ls, struct rdlm_res *res,
		 bool write, const u8 *lvb, bool invalid)
{
	struct rdlm_slot *s = res->slot;
	bool writer = res->lvb_writer;

	res->lvb_writer = false;
	if (s->state != RDLM_SLOT_OWNED || s->lost)
		return write ? -EIO : 0;
	if (!write) {
		if (writer) {
			s->lvb_puts++;
			s->puts_sent++;
			rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_DONE, s->slot,
					 0, res->key, (u8)s->puts_sent,
					 RDLM_LM_CK_PUT |
					 (u64)s->home << 32 | s->slot);
		}
		return 0;
	}
	if (lvb && lvb != res->lvb)
		memcpy(res->lvb, lvb, ls->lvb_len);
	res->lvb_invalid = invalid;
	res->lvb_cached = true;
	/* the home keeps what we write: READs find it */
	res->lvb_no_record = false;
	s->lvb_puts++;
	s->puts_sent++;
	rdlm_lm_send_lvb(ls, s->home, RDLM_LM_LVB_PUT0, s->slot,
			 invalid ? RDLM_LM_F_INVALID : 0, (u8)s->puts_sent,
			 res->key, lvb ? res->lvb : rdlm_lvb_zero,
			 RDLM_LM_CK_PUT | (u64)s->home << 32 | s->slot);
	return 1;
}
