// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: which node is a name's home, and moving names when the members
 * change.
 *
 * A name's home is chosen by rendezvous hashing over the map of homes:
 * every member scores the name's key and the highest score wins. While the
 * membership is static the map is every configured member; once the
 * cluster manages it, the map is the agreed membership. A member leaving
 * moves only the names it was home of, a member coming back takes back
 * only the names it wins.
 *
 * A membership that changes the map is applied in three steps, as fs/dlm
 * recovers (stop, rebuild, resume):
 *
 *  1. Freeze. Every name whose home changed is frozen on this node: no
 *     request of it is granted (a NOQUEUE one answers -EAGAIN) and none
 *     takes a lock word. Its local state moves to the word at the new home.
 *     A hold of the old word stays (the slot is pinned) so that a node that
 *     has not applied the membership yet is not granted the name there,
 *     until the thaw or until the old home, departed, is recovered from.
 *  2. Reclaim. The holders of a frozen name take the new word again, in
 *     the mode they hold: nobody else may take it before the thaw, so
 *     these are granted without waiting (unless the word is shared with
 *     another name, see rdlm_slot_pass()). Each tells the new home of the
 *     name's LVB: a PW/EX holder that it is its writer, a holder with a
 *     valid copy its value. A live old home hands its LVBs over; those of
 *     a home that left are lost, and read as invalid at the new home.
 *  3. Thaw. When this node has reclaimed, has recovered from every member
 *     that departed, and every member said the same for the same map, in
 *     answer to a question this node asked after applying it, frozen names
 *     are granted again and pinned words released.
 *
 * The answers echo the asker's epoch, so an answer given for an earlier
 * identical map never counts, and its view: the map with the incarnation
 * of each home admitted there. A member answers only for the view it has
 * itself, so one that has not applied a home's departure and return yet
 * (A->B->A while it lagged: the same map, but it still admits A's old
 * incarnation) does not answer for the map A returned in. Questions are
 * asked again every second until the thaw, so a lost message only delays
 * it.
 *
 * A node's first membership freezes every name until the first thaw: it
 * does not know what moved before it joined. Everything here runs under
 * ls->lock.
 */
#include <linux/bitops.h>
#include <linux/jiffies.h>

#include "lock_priv.h"
#include "engine/slots.h"

#define RDLM_RH_ASK_AGAIN	HZ

/* A good 64-bit mix (the finalizer of MurmurHash3). */
static u64 rdlm_mix64(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/**
 * rdlm_home_of() - the home of a name in a map of homes
 * @ls: lockspace
 * @map: the homes, bits of engine node indexes (0: every member)
 * @key: the name's key (&rdlm_res.key)
 *
 * Return: the engine node index of the home.
 */
u32 rdlm_home_of(struct rdlm_lockspace *ls, u64 map, u64 key)
{
	u64 score, best = 0;
	u32 i, home = 0;

	for (i = 0; i < ls->nr_members; i++) {
		if (map && !(map & BIT_ULL(i)))
			continue;
		/* by node id: the same on every node whatever it configured */
		score = rdlm_mix64(key ^ rdlm_mix64(ls->members[i]));
		if (score >= best) {
			best = score;
			home = i;
		}
	}
	return home;
}

/**
 * rdlm_home_here() - is this node the home of a key in its map now?
 * @ls: lockspace (locked)
 * @key: a name's key
 *
 * Return: true if so.
 */
bool rdlm_home_here(struct rdlm_lockspace *ls, u64 key)
{
	return rdlm_home_of(ls, ls->rh_map, key) == ls->self;
}

/**
 * rdlm_rehome_frozen() - is a name new on this node frozen?
 * @ls: lockspace (locked)
 * @key: its key
 *
 * Return: true while its home moved and the move is not over.
 */
bool rdlm_rehome_frozen(struct rdlm_lockspace *ls, u64 key)
{
	u32 home;

	if (!ls->rh_active)
		return false;
	if (!ls->rh_stable)
		return true;
	home = rdlm_home_of(ls, ls->rh_map, key);
	/* a home that left and came back since holds a fresh word */
	return home != rdlm_home_of(ls, ls->rh_stable, key) ||
	       (ls->rh_gone & BIT_ULL(home));
}

/*
 * The round's view: the map with the incarnation of each home admitted
 * here (ours for us). Members with the same view applied the same
 * departures and returns of the map's homes.
 */
static u64 rdlm_rh_view(struct rdlm_lockspace *ls)
{
	u64 inc, view = rdlm_mix64(ls->rh_map);
	u32 i;

	for (i = 0; i < ls->nr_members; i++) {
		if (!(ls->rh_map & BIT_ULL(i)))
			continue;
		inc = i == ls->self ? rdlm_fabric_ls_incarnation(ls->fls) :
		      rdlm_fabric_ls_admitted(ls->fls, ls->members[i]);
		view = rdlm_mix64(view ^ rdlm_mix64(inc + ls->members[i]));
	}
	return view;
}

/* The answers counted were for another view: ask again. */
static void rdlm_rh_review(struct rdlm_lockspace *ls)
{
	u64 view = rdlm_rh_view(ls);

	if (view != ls->rh_view) {
		ls->rh_view = view;
		ls->rh_got = 0;
	}
}

static void rdlm_rh_send(struct rdlm_lockspace *ls, u32 node, u16 type,
			 u64 map, u32 epoch, u64 view)
{
	u32 i;

	if (type == RDLM_LM_RH_ASK) {
		rdlm_lm_send_token(ls, node, type, 0, map, view, epoch);
		return;
	}
	/* a node that joins learns which homes left with their LVBs */
	for (i = 0; i < ls->nr_rh_lost; i++)
		rdlm_lm_send_msg(ls, node, RDLM_LM_RH_LOST, 0, 0,
				 ls->rh_lost[i].map, ls->rh_lost[i].gone, 0);
	/* the answer carries our slot claim: slot, generation above epoch */
	rdlm_lm_send_token(ls, node, type, ls->rh_claim_slot[ls->self], map,
			   view,
			   epoch | (u64)ls->rh_claim_gen[ls->self] << 32);
}

/* Ask every member that has not answered for the map in force. */
static void rdlm_rh_ask(struct rdlm_lockspace *ls)
{
	u32 i;

	rdlm_rh_review(ls);
	for (i = 0; i < ls->nr_members; i++)
		if (i != ls->self && (ls->rh_map & BIT_ULL(i)) &&
		    !(ls->rh_got & BIT_ULL(i)))
			rdlm_rh_send(ls, i, RDLM_LM_RH_ASK, ls->rh_map,
				     ls->rh_epoch, ls->rh_view);
}

/* Does a granted lock of @res need a hold of its word? */
static bool rdlm_rh_held(const struct rdlm_res *res)
{
	const struct rdlm_lkb *lkb;

	list_for_each_entry(lkb, &res->granted, gr_entry)
		if (lkb->grmode > RDLM_LOCK_NL && !lkb->lost)
			return true;
	return false;
}

/*
 * Move @res's local state to its home in the map now. False: not now (no
 * memory, or the word there is not free for it yet), tried again by
 * rdlm_rehome_check() and at the thaw.
 */
static bool rdlm_rh_move(struct rdlm_lockspace *ls, struct rdlm_res *res)
{
	u32 home = rdlm_home_of(ls, ls->rh_map, res->key);
	struct rdlm_slot *to;

	if (home == res->slot->home)
		return true;
	to = rdlm_slot_get(ls, home, res->slot->slot);
	if (!to)
		return false;
	/*
	 * Its home left and came back (A->B->A): a hold there is of the
	 * incarnation that left until this node recovered from it, then
	 * lost and given back; a holder must reclaim on a fresh one.
	 */
	if (((ls->rh_stale & BIT_ULL(home)) && to->state != RDLM_SLOT_IDLE) ||
	    (to->lost && rdlm_rh_held(res)))
		return false;
	rdlm_res_move(ls, res, to);
	return true;
}

/**
 * rdlm_rehome_node_down() - a member was recovered from: its words are gone
 * @ls: lockspace (locked)
 * @node: its engine index
 *
 * Holds of its words kept for names that moved away protect nothing any
 * more (nobody is granted anything there again): they are given back, and
 * a name that moved back to it since (it left and came back) moves onto a
 * fresh word once they are (rdlm_rehome_check()).
 */
void rdlm_rehome_node_down(struct rdlm_lockspace *ls, u32 node)
{
	struct rdlm_slot *s;
	int bkt;

	ls->rh_stale &= ~BIT_ULL(node);
	hash_for_each(ls->slots, bkt, s, hash)
		if (s->home == node)
			s->pinned = false;
}

static void rdlm_rh_work(struct work_struct *work)
{
	struct rdlm_lockspace *ls = container_of(to_delayed_work(work),
						 struct rdlm_lockspace,
						 rh_work);

	spin_lock_bh(&ls->lock);
	if (ls->rh_active && !ls->dead)
		rdlm_rehome_check(ls);	/* a move that had to wait */
	if (ls->rh_active && !ls->dead) {
		rdlm_rh_ask(ls);
		mod_delayed_work(ls->wq, &ls->rh_work, RDLM_RH_ASK_AGAIN);
	}
	rdlm_ls_unlock(ls);
}

/**
 * rdlm_rehome_init() - a new lockspace: every member is a home
 * @ls: lockspace being created (members set)
 */
void rdlm_rehome_init(struct rdlm_lockspace *ls)
{
	ls->rh_map = ls->nr_members == 64 ? ~0ULL :
		     BIT_ULL(ls->nr_members) - 1;
	ls->rh_stable = ls->rh_map;
	INIT_DELAYED_WORK(&ls->rh_work, rdlm_rh_work);
}

/**
 * rdlm_rehome_apply() - an agreed membership: freeze what moved, reclaim
 * @ls: lockspace (locked), membership in force
 * @epoch: its epoch on this node
 * @map: its members, the homes from now on
 * @departed: the members of the last membership not in this one
 *
 * Called for every membership that changes the map, and for the first.
 */
void rdlm_rehome_apply(struct rdlm_lockspace *ls, u32 epoch, u64 map,
		       u64 departed)
{
	u64 old_map = ls->rh_map;
	struct hlist_node *tmp;
	struct rdlm_res *res;
	u32 i;
	int bkt;

	ls->rh_map = map;
	ls->rh_active = true;
	ls->rh_self_done = false;
	ls->rh_epoch = epoch;
	ls->rh_got = 0;
	ls->rh_gone |= departed;
	ls->rh_stale |= departed;
	/* claims are heard anew each round; ours is our slot in the last */
	memset(ls->rh_claim_slot, 0, sizeof(ls->rh_claim_slot));
	memset(ls->rh_claim_gen, 0, sizeof(ls->rh_claim_gen));
	if (ls->slot_map & BIT_ULL(ls->self)) {
		ls->rh_claim_slot[ls->self] = ls->slot_of[ls->self];
		ls->rh_claim_gen[ls->self] = ls->slot_gen;
	}
	hash_for_each_safe(ls->res, bkt, tmp, res, hash) {
		if (rdlm_rehome_frozen(ls, res->key))
			res->frozen = true;
		/* not now (no memory, its word not free): tried again */
		rdlm_rh_move(ls, res);
	}
	rdlm_home_lvb_rehome(ls, old_map, departed);
	/* answer what was asked for this map before we applied it */
	for (i = 0; i < ls->nr_members; i++)
		if (ls->rh_ask_map[i] != map)
			ls->rh_ask_epoch[i] = 0;
	rdlm_rh_ask(ls);
	mod_delayed_work(ls->wq, &ls->rh_work, RDLM_RH_ASK_AGAIN);
	rdlm_ls_pass_all(ls);
}

/*
 * The slot table of the map every member answered for: the same on every
 * member, since each computes it from the same claims (each member's own,
 * fixed when it applied the map).
 */
static noinline_for_stack void rdlm_rh_slots(struct rdlm_lockspace *ls)
{
	u32 id[RDLM_MAX_MEMBERS], slot[RDLM_MAX_MEMBERS];
	u32 gen[RDLM_MAX_MEMBERS];
	u32 i, n = 0;

	for (i = 0; i < ls->nr_members; i++) {
		if (!(ls->rh_map & BIT_ULL(i)))
			continue;
		id[n] = ls->members[i];
		slot[n] = ls->rh_claim_slot[i];
		gen[n++] = ls->rh_claim_gen[i];
	}
	ls->slot_gen = rdlm_slots_assign(id, slot, gen, n);
	ls->slot_map = ls->rh_map;
	memset(ls->slot_of, 0, sizeof(ls->slot_of));
	for (i = 0, n = 0; i < ls->nr_members; i++)
		if (ls->rh_map & BIT_ULL(i))
			ls->slot_of[i] = slot[n++];
}

/* Every member answered for our map, and we are done: resume. */
static void rdlm_rh_thaw(struct rdlm_lockspace *ls)
{
	struct hlist_node *tmp;
	struct rdlm_slot *s;
	struct rdlm_res *res;
	int bkt;

	ls->rh_active = false;
	ls->rh_stable = ls->rh_map;
	ls->rh_gone = 0;
	ls->rh_rounds++;
	rdlm_rh_slots(ls);
	hash_for_each_safe(ls->res, bkt, tmp, res, hash) {
		res->frozen = false;
		if (!rdlm_rh_move(ls, res))
			res->frozen = true;	/* until the next membership */
	}
	hash_for_each(ls->slots, bkt, s, hash)
		s->pinned = false;
	rdlm_ls_pass_all(ls);
	/* the table's recover_done, from the membership work */
	mod_delayed_work(ls->wq, &ls->memb_work, 0);
}

/* Tell the new homes of reclaimed names what we know of their LVBs. */
static void rdlm_rh_tell_lvbs(struct rdlm_lockspace *ls)
{
	struct rdlm_res *res;
	struct rdlm_slot *s;
	int bkt;

	hash_for_each(ls->res, bkt, res, hash) {
		s = res->slot;
		if (!res->frozen || res->rh_told ||
		    s->state != RDLM_SLOT_OWNED || s->lost)
			continue;
		res->rh_told = true;
		if (res->lvb_writer)
			rdlm_lm_send_msg(ls, s->home, RDLM_LM_LVB_HOLD, s->slot,
					 0, res->key, 0, 0);
		else if (res->lvb_cached && !res->lvb_invalid)
			rdlm_lvb_put(ls, res, true, res->lvb, false);
	}
}

/**
 * rdlm_rehome_check() - after anything that may finish a reclaim
 * @ls: lockspace (locked)
 */
void rdlm_rehome_check(struct rdlm_lockspace *ls)
{
	struct rdlm_res *res;
	u32 i;
	int bkt;

	/* frozen at its creation: only a membership's round thaws it */
	if (!ls->rh_active || ls->dead || !ls->rh_epoch)
		return;
	if (!ls->rh_self_done) {
		if (ls->rh_pending)
			return;
		hash_for_each(ls->res, bkt, res, hash) {
			if (!res->frozen || rdlm_res_reclaimed(ls, res))
				continue;
			/* a move refused before (rdlm_rh_move()): again */
			if (res->slot->home !=
			    rdlm_home_of(ls, ls->rh_map, res->key) &&
			    rdlm_rh_move(ls, res))
				rdlm_slot_pass(ls, res->slot);
			return;
		}
		ls->rh_self_done = true;
		rdlm_rh_tell_lvbs(ls);
		rdlm_rh_review(ls);
		for (i = 0; i < ls->nr_members; i++)
			if (ls->rh_ask_epoch[i] &&
			    ls->rh_ask_map[i] == ls->rh_map &&
			    ls->rh_ask_view[i] == ls->rh_view)
				rdlm_rh_send(ls, i, RDLM_LM_RH_DONE, ls->rh_map,
					     ls->rh_ask_epoch[i], ls->rh_view);
	}
	rdlm_rh_review(ls);
	if ((ls->rh_got | BIT_ULL(ls->self)) == ls->rh_map)
		rdlm_rh_thaw(ls);
}

/**
 * rdlm_rehome_recv() - a question or answer of the re-homing barrier
 * @ls: lockspace (locked)
 * @rx: RDLM_LM_RH_ASK or RDLM_LM_RH_DONE, src an engine index
 */
void rdlm_rehome_recv(struct rdlm_lockspace *ls, const struct rdlm_rx *rx)
{
	u64 map = rx->msg.reqid, view = rx->msg.token;
	u32 epoch = rx->msg.arg;

	if (rx->src >= ls->nr_members || rx->src == ls->self || ls->dead)
		return;
	if (rx->msg.type == RDLM_LM_RH_ASK) {
		ls->rh_ask_map[rx->src] = map;
		ls->rh_ask_epoch[rx->src] = epoch;
		ls->rh_ask_view[rx->src] = view;
		/* only for a map applied here (a first line sets rh_epoch) */
		if (map == ls->rh_map && ls->rh_epoch &&
		    (!ls->rh_active || ls->rh_self_done) &&
		    view == rdlm_rh_view(ls))
			rdlm_rh_send(ls, rx->src, RDLM_LM_RH_DONE, map, epoch,
				     view);
		return;
	}
	if (ls->rh_active && map == ls->rh_map && epoch == ls->rh_epoch) {
		rdlm_rh_review(ls);
		if (view != ls->rh_view)
			return;
		ls->rh_got |= BIT_ULL(rx->src);
		ls->rh_claim_slot[rx->src] = rx->msg.slot;
		ls->rh_claim_gen[rx->src] = rx->msg.arg >> 32;
		rdlm_rehome_check(ls);
	}
}
