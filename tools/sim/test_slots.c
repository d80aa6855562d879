// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the slot table (kernel/engine/slots.c).  Included by
 * check.c after its harness (CHECK); not built on its own.
 *
 * The randomized test keeps a cluster of up to 8 nodes through random
 * joins and departures, and partitions whose halves agree tables apart
 * and merge: after every change every member computes the table from the
 * claims in its own order of the members, and all must agree, slots are
 * distinct, and a member that stays keeps its slot unless a lower node
 * id claimed it (a fresh node joined each half of a partition).
 */
#include "slots.h"

static void t_slots_assign(void)
{
	u32 id[4] = { 3, 1, 2, 4 }, sl[4] = { 0 }, gen[4] = { 0 };

	/* a new lockspace: by ascending node id */
	CHECK(rdlm_slots_assign(id, sl, gen, 4) == 1);
	CHECK(sl[0] == 3 && sl[1] == 1 && sl[2] == 2 && sl[3] == 4);
	/* node 1 left, node 5 joins: 2, 3, 4 keep theirs, 5 takes 1 */
	{
		u32 id2[4] = { 2, 3, 4, 5 }, s2[4] = { 2, 3, 4, 0 };
		u32 g2[4] = { 1, 1, 1, 0 };

		CHECK(rdlm_slots_assign(id2, s2, g2, 4) == 2);
		CHECK(s2[0] == 2 && s2[1] == 3 && s2[2] == 4 && s2[3] == 1);
	}
	/* a conflict after a merge: the lower node id keeps slot 1 */
	{
		u32 id3[3] = { 7, 4, 9 }, s3[3] = { 1, 1, 2 };
		u32 g3[3] = { 5, 8, 5 };

		CHECK(rdlm_slots_assign(id3, s3, g3, 3) == 9);
		CHECK(s3[1] == 1 && s3[2] == 2 && s3[0] == 3);
	}
	/* a claim beyond the table is none */
	{
		u32 id4[2] = { 1, 2 }, s4[2] = { 65, 0 }, g4[2] = { 0, 0 };

		rdlm_slots_assign(id4, s4, g4, 2);
		CHECK(s4[0] == 1 && s4[1] == 2);
	}
}

#define SL_NODES	8

static u32 sl_rand(u32 *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

/* every member of @in computes the table from its claims, in its own order */
static void sl_agree(u64 in, u32 *slot, u32 *gen, u32 *seed)
{
	u32 id[SL_NODES], s[SL_NODES], g[SL_NODES], n = 0, i, k, r;
	u32 ref[SL_NODES + 1] = { 0 }, refgen = 0, t;
	u64 used = 0;

	for (k = 0; k < SL_NODES; k++) {
		if (!(in & BIT_ULL(k)))
			continue;
		/* a different order on every member */
		for (n = 0, i = 0; i < SL_NODES; i++)
			if (in & BIT_ULL(i))
				id[n++] = i + 1;
		for (i = n - 1; i > 0; i--) {
			r = sl_rand(seed) % (i + 1);
			t = id[i];
			id[i] = id[r];
			id[r] = t;
		}
		for (i = 0; i < n; i++) {
			s[i] = slot[id[i] - 1];
			g[i] = gen[id[i] - 1];
		}
		t = rdlm_slots_assign(id, s, g, n);
		if (!refgen)
			refgen = t;
		CHECK(t == refgen);
		for (i = 0; i < n; i++) {
			if (!ref[id[i]])
				ref[id[i]] = s[i];
			CHECK(ref[id[i]] == s[i]);	/* members disagree */
		}
	}
	for (k = 0; k < SL_NODES; k++) {
		if (!(in & BIT_ULL(k)))
			continue;
		CHECK(ref[k + 1] >= 1 && ref[k + 1] <= RDLM_SLOTS_MAX);
		CHECK(!(used & BIT_ULL(ref[k + 1] - 1)));	/* twice */
		used |= BIT_ULL(ref[k + 1] - 1);
		/* a kept claim stays unless a lower node id had it */
		if (slot[k]) {
			bool lower = false;

			for (i = 0; i < k; i++)
				if ((in & BIT_ULL(i)) && slot[i] == slot[k])
					lower = true;
			CHECK(lower || ref[k + 1] == slot[k]);
		}
	}
	for (k = 0; k < SL_NODES; k++)
		if (in & BIT_ULL(k)) {
			slot[k] = ref[k + 1];
			gen[k] = refgen;
		}
}

static void t_slots_random(void)
{
	u32 slot[SL_NODES] = { 0 }, gen[SL_NODES] = { 0 }, seed = 4242;
	u64 in = 1, half;
	u32 i, j, k, merges = 0, conflicts = 0;

	sl_agree(in, slot, gen, &seed);
	CHECK(slot[0] == 1);
	for (i = 0; i < 20000; i++) {
		k = sl_rand(&seed) % SL_NODES;
		switch (sl_rand(&seed) % 4) {
		case 0:		/* a departure: its claim goes with it */
			if ((in & ~BIT_ULL(k)) == 0)
				break;
			in &= ~BIT_ULL(k);
			slot[k] = gen[k] = 0;
			sl_agree(in, slot, gen, &seed);
			break;
		case 1:
		case 2:		/* a fresh member joins */
			if (in & BIT_ULL(k))
				break;
			in |= BIT_ULL(k);
			slot[k] = gen[k] = 0;
			sl_agree(in, slot, gen, &seed);
			break;
		default:	/* halves agree apart, then merge */
			half = in & sl_rand(&seed);
			if (!half || half == in)
				break;
			/* a fresh node joins each half: the same free slot */
			for (k = 0; k < SL_NODES; k++)
				if (!(in & BIT_ULL(k))) {
					slot[k] = gen[k] = 0;
					half |= BIT_ULL(k);
					break;
				}
			for (k = SL_NODES; k-- > 0;)
				if (!(in & BIT_ULL(k)) && !(half & BIT_ULL(k))) {
					slot[k] = gen[k] = 0;
					in |= BIT_ULL(k);
					break;
				}
			in |= half;
			sl_agree(half, slot, gen, &seed);
			sl_agree(in & ~half, slot, gen, &seed);
			for (k = 0; k < SL_NODES; k++)
				for (j = k + 1; j < SL_NODES; j++)
					if ((in & BIT_ULL(k)) && (in & BIT_ULL(j)) &&
					    slot[k] == slot[j])
						conflicts++;
			sl_agree(in, slot, gen, &seed);
			merges++;
			break;
		}
	}
	CHECK(merges > 100 && conflicts > 100);
}
