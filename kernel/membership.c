// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: who is in a lockspace, as the cluster agreed, and recovery from
 * those who left.
 *
 * Until someone (rdlm_controld, from corosync's CPG and quorum) writes the
 * configfs file "membership", a lockspace's members are static and nobody
 * is ever declared dead. From the first write on, every write is one
 * agreed membership: an epoch (strictly increasing), whether this node's
 * partition has quorum, and the nodes in the lockspace's group.
 *
 * A member that was in the previous membership and is not in this one has
 * departed. It is fenced out of the lockspace at once (every connection
 * with it is reset and it gets no table again: nothing it sends lands any
 * more), and recovered from once it can no longer believe it holds a lock:
 * when its fencing is acknowledged (configfs "fence_ack": rdlm_controld
 * after its fence agent switched the node off, or an administrator with
 * rdlmctl fence-ack), or when it shows a new incarnation of the lockspace.
 * A lockspace with "fencing" 0 does not wait for that: it recovers after
 * its recovery grace, trusting the node to learn its departure within it.
 * Recovery is the engine's member_down() (it removes the departed node
 * from the queues and grants behind it) and the lock manager's (its LVB
 * writes become invalid). The names it was home of get new homes among
 * the members at once, and are granted there once every member has
 * recovered and reclaimed what it holds of them (rehome.c).
 *
 * A node whose partition lost quorum stops: its held locks are reported
 * lost and every request fails, since the majority recovers from it after
 * the grace. It takes part again only with a fresh lockspace (disable and
 * enable); the others let a departed node back when it appears in a
 * membership again (the engine's member_join()).
 *
 * Locking: ls->memb_mutex serialises membership changes, acknowledgments
 * and recovery; the engine is called under ls->lock as everywhere else.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lock_priv.h"

/* The watchers' callbacks (rdlm_lockspace_watch()). */
static void rdlm_memb_prep(struct rdlm_lockspace *ls)
{
	struct rdlm_watch *w;

	list_for_each_entry(w, &ls->watchers, entry)
		if (w->ops->recover_prep)
			w->ops->recover_prep(w->arg);
}

/* Member @idx departed; its slot in the last agreed table (0: none). */
static void rdlm_memb_slot(struct rdlm_lockspace *ls, u32 idx)
{
	struct rdlm_watch *w;
	u32 slot;

	spin_lock_bh(&ls->lock);
	slot = ls->slot_map & BIT_ULL(idx) ? ls->slot_of[idx] : 0;
	spin_unlock_bh(&ls->lock);
	list_for_each_entry(w, &ls->watchers, entry)
		if (w->ops->recover_slot)
			w->ops->recover_slot(w->arg, ls->members[idx], slot);
}

/*
 * The membership is in force once nobody waits for recovery and its
 * names' re-homing agreed a slot table for it (the thaw): told once per
 * table, as fs/dlm's recover_done follows each completed recovery.
 */
static void rdlm_memb_tell_done(struct rdlm_lockspace *ls,
				struct rdlm_watch *only)
{
	struct rdlm_member_slot slots[RDLM_MAX_MEMBERS];
	u32 nr = 0, i, gen, our = 0;
	struct rdlm_watch *w;
	bool told;

	lockdep_assert_held(&ls->memb_mutex);
	if (ls->memb_pending || ls->memb_stopped || !ls->memb_epoch)
		return;
	spin_lock_bh(&ls->lock);
	gen = ls->slot_gen;
	told = gen == ls->memb_done_gen;
	/* to @only: the table told already; to everyone: a table not told */
	if (ls->dead || ls->rh_active || !gen || told != !!only ||
	    ls->slot_map != ls->memb_in) {
		spin_unlock_bh(&ls->lock);
		return;
	}
	if (!only)
		ls->memb_done_gen = gen;
	for (i = 0; i < ls->nr_members; i++) {
		if (!(ls->slot_map & BIT_ULL(i)))
			continue;
		slots[nr].nodeid = ls->members[i];
		slots[nr++].slot = ls->slot_of[i];
		if (i == ls->self)
			our = ls->slot_of[i];
	}
	spin_unlock_bh(&ls->lock);
	list_for_each_entry(w, &ls->watchers, entry)
		if ((!only || w == only) && w->ops->recover_done)
			w->ops->recover_done(w->arg, slots, nr, our, gen);
}

static void rdlm_memb_done(struct rdlm_lockspace *ls)
{
	rdlm_memb_tell_done(ls, NULL);
}

/* A new watcher hears the table in force, as fs/dlm's first recover_done. */
static void rdlm_memb_done_one(struct rdlm_lockspace *ls, struct rdlm_watch *w)
{
	rdlm_memb_tell_done(ls, w);
}

/*
 * The others recover, or will recover, from this node: let go of
 * everything now. Every held lock is reported lost, every request fails;
 * only a fresh lockspace (disable, enable) takes part again.
 */
static void rdlm_memb_halt(struct rdlm_lockspace *ls)
{
	lockdep_assert_held(&ls->memb_mutex);
	ls->memb_stopped = true;
	rdlm_memb_prep(ls);
	spin_lock_bh(&ls->lock);
	ls->dead = true;
	rdlm_ls_fail_all(ls);
	rdlm_ls_unlock(ls);
}

/* Recover now from every departed member whose time has come. */
static void rdlm_memb_recover_due(struct rdlm_lockspace *ls, u64 force)
{
	unsigned long next = 0;
	bool rearm = false;
	u32 i;

	lockdep_assert_held(&ls->memb_mutex);
	for (i = 0; i < ls->nr_members; i++) {
		if (!(ls->memb_pending & BIT_ULL(i)))
			continue;
		if (!(force & BIT_ULL(i)) && ls->memb_fencing)
			continue;	/* until its fencing is acknowledged */
		if (!(force & BIT_ULL(i)) &&
		    time_before(jiffies, ls->memb_due[i])) {
			if (!rearm || time_before(ls->memb_due[i], next))
				next = ls->memb_due[i];
			rearm = true;
			continue;
		}
		ls->memb_pending &= ~BIT_ULL(i);
		pr_info("lockspace %s: recovering from node %u (epoch %u)\n",
			ls->name, ls->members[i], ls->memb_epoch);
		spin_lock_bh(&ls->lock);
		ls->rh_pending = !!ls->memb_pending;
		if (!ls->dead)
			rdlm_ls_call_member_down(ls, i, ls->memb_epoch);
		ls->memb_recoveries++;
		rdlm_ls_unlock(ls);
	}
	if (rearm)
		mod_delayed_work(ls->wq, &ls->memb_work,
				 max_t(long, next - jiffies, 0));
}

/* member_down() wants none of our verbs to @node's old table in flight */
static void rdlm_memb_drain(struct rdlm_lockspace *ls, u32 node)
{
	if (!rdlm_fabric_ls_drain(ls->fls, node, 30 * HZ)) {
		pr_info("lockspace %s: node %u: verbs to its old table still in flight after 30 s: resetting the connections\n",
			ls->name, node);
		rdlm_fabric_ls_fence(ls->fls, node, true);
	}
}

/*
 * Static: a member took its lockspace down (its WITHDRAW, of the
 * incarnation admitted here): its locks were released or reported lost
 * there before it went, so recover from it now, as fs/dlm purges a node
 * that left. It stays down in the engines until a new incarnation shows.
 */
static void rdlm_memb_withdraw_static(struct rdlm_lockspace *ls, u32 i)
{
	u64 bit = BIT_ULL(i);

	lockdep_assert_held(&ls->memb_mutex);
	rdlm_memb_drain(ls, ls->members[i]);
	spin_lock_bh(&ls->lock);
	ls->memb_withdrawn &= ~bit;
	if (!ls->dead && !(ls->memb_wdown & bit)) {
		pr_info("lockspace %s: node %u disabled it: recovering from it\n",
			ls->name, ls->members[i]);
		ls->memb_wdown |= bit;
		rdlm_ls_call_member_down(ls, i, 0);
	}
	rdlm_ls_unlock(ls);
}

/*
 * Static: recover from the old incarnation of a member that showed a new
 * one (unless its WITHDRAW did), once our verbs to the old one's table
 * have completed, then let the new one in.
 */
static void rdlm_memb_restart_static(struct rdlm_lockspace *ls, u32 i)
{
	u32 node = ls->members[i];
	u64 bit = BIT_ULL(i);

	lockdep_assert_held(&ls->memb_mutex);
	rdlm_memb_drain(ls, node);
	spin_lock_bh(&ls->lock);
	ls->memb_fresh &= ~bit;
	if (!ls->dead) {
		if (!(ls->memb_wdown & bit))
			rdlm_ls_call_member_down(ls, i, 0);
		ls->memb_wdown &= ~bit;
		rdlm_ls_call_member_join(ls, i);
	}
	rdlm_ls_unlock(ls);
	rdlm_fabric_ls_fence(ls->fls, node, false);
}

/*
 * A departed member the line counts in again is let back: recovered from
 * first if its grace had not ended, then the engines forget it was dead and
 * the fabric admits it. Not while it is still the incarnation that
 * departed (a node whose lockspace outlived its departure: a restarted
 * rdlm_controld, a paused VM): that one stays fenced and is told so, until
 * it restarts the lockspace (rdlm_controld does) and shows a new one.
 */
static void rdlm_memb_rejoin(struct rdlm_lockspace *ls, u32 i)
{
	u64 bit = BIT_ULL(i);

	lockdep_assert_held(&ls->memb_mutex);
	if (rdlm_fabric_ls_stale(ls->fls, ls->members[i])) {
		pr_warn("lockspace %s: node %u is in the membership again (epoch %u) with the lockspace that departed: it stays fenced until it restarts the lockspace\n",
			ls->name, ls->members[i], ls->memb_epoch);
		return;
	}
	rdlm_memb_recover_due(ls, bit);
	pr_info("lockspace %s: node %u rejoined (epoch %u)\n",
		ls->name, ls->members[i], ls->memb_epoch);
	ls->memb_departed &= ~bit;
	spin_lock_bh(&ls->lock);
	ls->memb_fresh &= ~bit;
	rdlm_ls_call_member_join(ls, i);
	rdlm_ls_unlock(ls);
	rdlm_fabric_ls_fence(ls->fls, ls->members[i], false);
}

static void rdlm_memb_work(struct work_struct *work)
{
	struct rdlm_lockspace *ls = container_of(to_delayed_work(work),
						 struct rdlm_lockspace,
						 memb_work);
	u64 fresh, withdrawn;
	bool gone;
	u32 i;

	mutex_lock(&ls->memb_mutex);
	spin_lock_bh(&ls->lock);
	fresh = ls->memb_fresh;
	withdrawn = ls->memb_withdrawn;
	/* managed: the membership says when it left */
	if (ls->memb_epoch)
		ls->memb_withdrawn = 0;
	gone = ls->memb_gone;
	spin_unlock_bh(&ls->lock);
	if (gone && !ls->memb_stopped)
		rdlm_memb_halt(ls);	/* failed all already, in softirq */
	for (i = 0; !ls->memb_epoch && i < ls->nr_members; i++) {
		if (withdrawn & BIT_ULL(i))
			rdlm_memb_withdraw_static(ls, i);
		if (fresh & BIT_ULL(i))
			rdlm_memb_restart_static(ls, i);
	}
	fresh &= ls->memb_departed;
	/* a new incarnation proves the old one holds nothing: no grace */
	if (ls->memb_pending & fresh)
		pr_info("lockspace %s: departed nodes restarted the lockspace: recovering from them now\n",
			ls->name);
	rdlm_memb_recover_due(ls, fresh);
	for (i = 0; i < ls->nr_members; i++)
		if (fresh & ls->memb_in & BIT_ULL(i))
			rdlm_memb_rejoin(ls, i);
	/* once per slot table: after a thaw, a recovery or a rejoin */
	rdlm_memb_done(ls);
	mutex_unlock(&ls->memb_mutex);
}

/**
 * rdlm_memb_restart() - a member presented a new incarnation of the lockspace
 * @ls: lockspace (locked)
 * @idx: the member's index
 *
 * Its old incarnation is gone: its lockspace was quiesced and taken down,
 * nothing of it is in flight from it (&rdlm_fabric_ls_ops.restart). The
 * new one is kept out for now. While the membership is static, the work
 * item recovers from the old one as from a departed member (its holds on
 * our words end, ours on its words are reported lost, its LVB writes
 * invalid) and then lets the new one in. Once the cluster manages the
 * membership, the membership says who is in: a departed member is
 * recovered from now (its grace waits for nothing any more) and admitted
 * at its rejoin; one the membership still counts in stays out until a
 * membership shows it left and came back (rdlm_controld leaves and joins
 * the group when the kernel lockspace was re-created).
 *
 * Context: softirq, before anything of the new incarnation is taken.
 */
void rdlm_memb_restart(struct rdlm_lockspace *ls, u32 idx)
{
	lockdep_assert_held(&ls->lock);
	pr_info("lockspace %s: node %u enabled it again: %s\n", ls->name,
		ls->members[idx], READ_ONCE(ls->memb_epoch) ?
		"kept out until the membership lets it back" :
		"recovering from its old incarnation first");
	ls->memb_fresh |= BIT_ULL(idx);
	/* the old one's WITHDRAW, if not read yet, is recovered from here */
	ls->memb_withdrawn &= ~BIT_ULL(idx);
	mod_delayed_work(ls->wq, &ls->memb_work, 0);
}

/**
 * rdlm_memb_withdrawn() - a member took down the incarnation admitted here
 * @ls: lockspace (locked)
 * @idx: the member's index
 *
 * While the membership is static, the work item recovers from it (once
 * our verbs to its table completed); a managed lockspace waits for the
 * membership to show it leave (rdlm_controld leaves the group).
 *
 * Context: softirq.
 */
void rdlm_memb_withdrawn(struct rdlm_lockspace *ls, u32 idx)
{
	lockdep_assert_held(&ls->lock);
	ls->memb_withdrawn |= BIT_ULL(idx);
	mod_delayed_work(ls->wq, &ls->memb_work, 0);
}

/**
 * rdlm_memb_gone() - a member fenced this node's incarnation of the lockspace
 * @ls: lockspace (locked)
 * @idx: the member that said so
 *
 * The others recovered, or will recover, from this node: every hold is
 * reported lost now, as on a quorum loss, and the lockspace stops until it
 * is restarted (rdlm_controld restarts a stopped lockspace).
 *
 * Context: softirq.
 */
void rdlm_memb_gone(struct rdlm_lockspace *ls, u32 idx)
{
	lockdep_assert_held(&ls->lock);
	if (ls->memb_gone)
		return;
	pr_warn("lockspace %s: node %u fenced this node out of it: locks are lost, restart the lockspace to take part again\n",
		ls->name, ls->members[idx]);
	ls->memb_gone = true;
	ls->dead = true;
	rdlm_ls_fail_all(ls);
	mod_delayed_work(ls->wq, &ls->memb_work, 0);
}

/* "EPOCH QUORATE NODEID..." into @epoch, @quorate and member bits @in. */
static int rdlm_memb_parse(struct rdlm_lockspace *ls, const char *buf,
			   u32 *epoch, bool *quorate, u64 *in)
{
	char *copy, *p, *tok;
	u32 v, idx, n = 0;
	int ret = 0;

	copy = kstrdup(buf, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	p = strim(copy);
	*in = 0;
	while (!ret && (tok = strsep(&p, " \t\n"))) {
		if (!*tok)
			continue;
		ret = kstrtou32(tok, 10, &v);
		if (ret)
			break;
		if (n == 0) {
			*epoch = v;
		} else if (n == 1) {
			if (v > 1)
				ret = -EINVAL;
			*quorate = v;
		} else {
			idx = rdlm_ls_node_index(ls, v);
			if (idx == U32_MAX || (*in & BIT_ULL(idx)))
				ret = -EINVAL;	/* not a member, or twice */
			else
				*in |= BIT_ULL(idx);
		}
		n++;
	}
	kfree(copy);
	if (!ret && (n < 2 || !*epoch))
		ret = -EINVAL;
	return ret;
}

/**
 * rdlm_lockspace_set_membership() - apply one agreed membership
 * @ls: lockspace
 * @buf: "EPOCH QUORATE NODEID...": the epoch, strictly above the last one;
 *	1 if this node's partition is quorate, else 0; the members in the
 *	lockspace's group, this node among them
 *
 * Context: process, sleeps (fencing resets connections).
 * Return: 0; -EINVAL (malformed, a node that is no configured member,
 * this node missing); -ESTALE (epoch not above the last one, or the
 * lockspace stopped on a quorum loss: disable and enable it to rejoin).
 */
int rdlm_lockspace_set_membership(struct rdlm_lockspace *ls, const char *buf)
{
	u64 in, departed, joined, bit, fresh;
	bool quorate, first;
	u32 epoch, i;
	int ret;

	ret = rdlm_memb_parse(ls, buf, &epoch, &quorate, &in);
	if (ret)
		return ret;
	if (!(in & BIT_ULL(ls->self)))
		return -EINVAL;
	mutex_lock(&ls->memb_mutex);
	ret = -ESTALE;
	if (epoch <= ls->memb_epoch || ls->memb_stopped)
		goto out;
	ret = 0;
	first = !ls->memb_epoch;
	ls->memb_epoch = epoch;
	ls->memb_quorate = quorate;
	if (!quorate) {
		ls->memb_in = in;	/* shown; nobody departs without quorum */
		pr_warn("lockspace %s: quorum lost (epoch %u), locks are lost\n",
			ls->name, epoch);
		rdlm_memb_halt(ls);
		goto out;
	}
	/* only who was in a membership can depart from one */
	departed = ls->memb_in & ~in;
	joined = in & ~ls->memb_in;
	ls->memb_in = in;
	if (departed)
		rdlm_memb_prep(ls);
	for (i = 0; i < ls->nr_members; i++) {
		bit = BIT_ULL(i);
		if (departed & bit) {
			if (ls->memb_fencing)
				pr_info("lockspace %s: node %u departed (epoch %u), recovery once it is fenced\n",
					ls->name, ls->members[i], epoch);
			else
				pr_info("lockspace %s: node %u departed (epoch %u), recovery in %u ms\n",
					ls->name, ls->members[i], epoch,
					ls->memb_grace_ms);
			rdlm_fabric_ls_fence(ls->fls, ls->members[i], true);
			/*
			 * Before any of its locks goes to another node, here
			 * or at a home whose grace ends first: what a journal
			 * covers must not be read before the replay (fs/dlm
			 * calls recover_slot before it grants again).
			 */
			rdlm_memb_slot(ls, i);
			ls->memb_departed |= bit;
			ls->memb_pending |= bit;
			ls->memb_due[i] = jiffies +
					  msecs_to_jiffies(ls->memb_grace_ms);
		} else if ((joined & bit) && (ls->memb_departed & bit)) {
			rdlm_memb_rejoin(ls, i);
		}
	}
	/* names move to their homes in this membership */
	spin_lock_bh(&ls->lock);
	ls->rh_pending = !!ls->memb_pending;
	if (first)
		ls->rh_stable = 0;	/* what moved before we came is unknown */
	if (!ls->dead && (first || departed || joined))
		rdlm_rehome_apply(ls, epoch, in, departed);
	/* departed with a new incarnation shown already: nothing to wait for */
	fresh = ls->memb_fresh & ls->memb_departed;
	rdlm_ls_unlock(ls);
	rdlm_memb_recover_due(ls, fresh);
	rdlm_memb_done(ls);
out:
	mutex_unlock(&ls->memb_mutex);
	return ret;
}

/**
 * rdlm_memb_orphan() - the membership daemon is gone
 * @ls: lockspace
 *
 * Nothing tells this node any more that the others have moved on without
 * it (they see it leave every group and recover from it): a lockspace
 * whose membership the daemon wrote stops at once, as on a quorum loss, so
 * that no hold outlives the others' recovery. The next daemon restarts it.
 * (fs/dlm's dlm_controld, started again, finds such lockspaces
 * "uncontrolled" and has the node removed from the cluster.)
 *
 * Context: process, sleeps.
 */
void rdlm_memb_orphan(struct rdlm_lockspace *ls)
{
	mutex_lock(&ls->memb_mutex);
	if (ls->memb_epoch && !ls->memb_stopped) {
		pr_warn("lockspace %s: the membership daemon went away, locks are lost\n",
			ls->name);
		rdlm_memb_halt(ls);
	}
	mutex_unlock(&ls->memb_mutex);
}

/**
 * rdlm_lockspace_fence_ack() - a departed node is known to hold nothing
 * @ls: lockspace
 * @nodeid: the node, fenced by an administrator (powered off, reset)
 *
 * Recovery from it runs now instead of after the grace.
 *
 * Context: process, sleeps.
 * Return: 0, or -ENOENT if @nodeid is no departed member waiting for
 * recovery.
 */
int rdlm_lockspace_fence_ack(struct rdlm_lockspace *ls, u32 nodeid)
{
	u32 idx = rdlm_ls_node_index(ls, nodeid);
	int ret = -ENOENT;

	mutex_lock(&ls->memb_mutex);
	if (idx != U32_MAX && (ls->memb_pending & BIT_ULL(idx))) {
		pr_info("lockspace %s: node %u fencing acknowledged\n",
			ls->name, nodeid);
		rdlm_memb_recover_due(ls, BIT_ULL(idx));
		rdlm_memb_done(ls);
		ret = 0;
	}
	mutex_unlock(&ls->memb_mutex);
	return ret;
}

static void rdlm_memb_print_set(struct rdlm_lockspace *ls, char *buf,
				size_t size, int *n, const char *what, u64 set)
{
	u32 i;

	*n += scnprintf(buf + *n, size - *n, "%s", what);
	for (i = 0; i < ls->nr_members; i++)
		if (set & BIT_ULL(i))
			*n += scnprintf(buf + *n, size - *n, " %u",
					ls->members[i]);
	*n += scnprintf(buf + *n, size - *n, "\n");
}

/**
 * rdlm_lockspace_show_membership() - the membership state, for configfs
 * @ls: lockspace
 * @buf: a page
 * @size: its size
 *
 * First line as written ("EPOCH QUORATE NODEID...", epoch 0 and every
 * configured member while the membership is static), then one line each:
 * "state static|running|stopped", "departed NODEID..." (fenced, until
 * they rejoin), "recovering NODEID..." (waiting for the grace or a fence
 * acknowledgment), "fencing NODEID..." (those of them that wait for the
 * acknowledgment: rdlm_controld fences them), "recoveries N", "homes
 * NODEID..." (the nodes names hash to), "rehoming frozen|done" (names
 * that moved wait for every member to reclaim them), "rehomed N" (moves
 * completed), "incarnation X" (this enable of the lockspace, 16 hex
 * digits: rdlm_controld tells a re-created lockspace by it), "generation
 * G" and "slots NODEID:SLOT..." (the slot table agreed at the last thaw,
 * 0 and none before the first).
 *
 * Return: bytes written.
 */
int rdlm_lockspace_show_membership(struct rdlm_lockspace *ls, char *buf,
				   size_t size)
{
	u64 all = ls->nr_members == 64 ? ~0ULL : BIT_ULL(ls->nr_members) - 1;
	u32 i;
	int n;

	mutex_lock(&ls->memb_mutex);
	n = scnprintf(buf, size, "%u %u", ls->memb_epoch,
		      ls->memb_epoch ? ls->memb_quorate : 1);
	rdlm_memb_print_set(ls, buf, size, &n, "",
			    ls->memb_epoch ? ls->memb_in : all);
	n += scnprintf(buf + n, size - n, "state %s\n",
		       ls->memb_stopped ? "stopped" :
		       ls->memb_epoch ? "running" : "static");
	rdlm_memb_print_set(ls, buf, size, &n, "departed", ls->memb_departed);
	rdlm_memb_print_set(ls, buf, size, &n, "recovering",
			    ls->memb_pending);
	rdlm_memb_print_set(ls, buf, size, &n, "fencing",
			    ls->memb_fencing ? ls->memb_pending : 0);
	n += scnprintf(buf + n, size - n, "recoveries %u\n",
		       ls->memb_recoveries);
	spin_lock_bh(&ls->lock);
	rdlm_memb_print_set(ls, buf, size, &n, "homes", ls->rh_map);
	n += scnprintf(buf + n, size - n, "rehoming %s\nrehomed %u\n",
		       ls->rh_active ? "frozen" : "done", ls->rh_rounds);
	rdlm_ls_unlock(ls);
	n += scnprintf(buf + n, size - n, "incarnation %016llx\n",
		       rdlm_fabric_ls_incarnation(ls->fls));
	/* last: the longest line, cut short if the page is full */
	spin_lock_bh(&ls->lock);
	n += scnprintf(buf + n, size - n, "generation %u\nslots",
		       ls->slot_gen);
	for (i = 0; i < ls->nr_members; i++)
		if (ls->slot_map & BIT_ULL(i))
			n += scnprintf(buf + n, size - n, " %u:%u",
				       ls->members[i], ls->slot_of[i]);
	n += scnprintf(buf + n, size - n, "\n");
	rdlm_ls_unlock(ls);
	mutex_unlock(&ls->memb_mutex);
	return n;
}

/**
 * rdlm_lockspace_watch() - be told of a lockspace's membership changes
 * @ls: lockspace from rdlm_lockspace_find()
 * @w: the registration, caller memory until rdlm_lockspace_unwatch()
 * @ops: callbacks (&struct rdlm_lockspace_ops)
 * @arg: their first argument
 *
 * A cluster file system uses it as fs/dlm's lockspace ops: to stop what
 * depends on a departed node, and to replay its journal once its locks
 * were recovered. Events come only while the lockspace's membership is
 * managed (rdlm_controld, Documentation/membership.rst). If a slot table
 * is in force already, @ops->recover_done is called with it before this
 * returns (the slots array is valid only during a call).
 *
 * Context: process, sleeps.
 */
void rdlm_lockspace_watch(struct rdlm_lockspace *ls, struct rdlm_watch *w,
			  const struct rdlm_lockspace_ops *ops, void *arg)
{
	w->ops = ops;
	w->arg = arg;
	mutex_lock(&ls->memb_mutex);
	list_add_tail(&w->entry, &ls->watchers);
	rdlm_memb_done_one(ls, w);
	mutex_unlock(&ls->memb_mutex);
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_watch);

/**
 * rdlm_lockspace_unwatch() - undo rdlm_lockspace_watch()
 * @ls: lockspace
 * @w: the registration
 *
 * When it returns, no callback of @w runs or will run.
 *
 * Context: process, sleeps; not from a callback of @ls.
 */
void rdlm_lockspace_unwatch(struct rdlm_lockspace *ls, struct rdlm_watch *w)
{
	mutex_lock(&ls->memb_mutex);
	list_del(&w->entry);
	mutex_unlock(&ls->memb_mutex);
}
EXPORT_SYMBOL_GPL(rdlm_lockspace_unwatch);

/**
 * rdlm_memb_init() - set up a new lockspace's membership: static
 * @ls: lockspace being created
 * @grace_ms: recovery grace, without @fencing
 * @fencing: recover from a departed member only at its fence_ack
 */
void rdlm_memb_init(struct rdlm_lockspace *ls, u32 grace_ms, bool fencing)
{
	mutex_init(&ls->memb_mutex);
	INIT_LIST_HEAD(&ls->watchers);
	INIT_DELAYED_WORK(&ls->memb_work, rdlm_memb_work);
	ls->memb_grace_ms = grace_ms;
	ls->memb_fencing = fencing;
}

/**
 * rdlm_memb_stop() - no recovery runs any more (lockspace going down)
 * @ls: lockspace
 */
void rdlm_memb_stop(struct rdlm_lockspace *ls)
{
	mutex_lock(&ls->memb_mutex);
	ls->memb_pending = 0;
	mutex_unlock(&ls->memb_mutex);
	cancel_delayed_work_sync(&ls->memb_work);
}
