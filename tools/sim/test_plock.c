// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the POSIX lock table (kernel/engine/plock.c).  Included by
 * check.c after its harness (CHECK); not built on its own.
 *
 * The randomized test keeps a per-byte model of every owner's locks over a
 * small file and checks after every F_SETLK that the table holds exactly
 * the model, keeps its invariants (an owner's ranges do not overlap, two
 * of one type do not touch) and refuses exactly the conflicting requests.
 */
#include "plock.h"

#define PL_BYTES	40
#define PL_OWNERS	4	/* two per node */

static struct rdlm_pl_owner pl_who(int i)
{
	struct rdlm_pl_owner w = {
		.owner = 0x1000 + (i & 1), .node = i / 2, .pid = 100 + i,
	};

	return w;
}

/* the table, one byte of one owner: RDLM_PL_UN where it holds nothing */
static u8 pl_at(const struct rdlm_pl_file *f, int o, u64 b)
{
	struct rdlm_pl_owner w = pl_who(o);
	const struct rdlm_pl_range *x;
	u8 t = RDLM_PL_UN;

	for (x = f->head; x; x = x->next)
		if (x->who.node == w.node && x->who.owner == w.owner &&
		    x->start <= b && b <= x->end) {
			CHECK(t == RDLM_PL_UN);	/* an owner's ranges overlap */
			t = x->type;
		}
	return t;
}

static void pl_invariants(const struct rdlm_pl_file *f)
{
	const struct rdlm_pl_range *x, *y;
	u32 n = 0;

	for (x = f->head; x; x = x->next, n++) {
		CHECK(x->start <= x->end);
		CHECK(x->type == RDLM_PL_RD || x->type == RDLM_PL_WR);
		for (y = x->next; y; y = y->next) {
			if (x->who.node != y->who.node ||
			    x->who.owner != y->who.owner)
				continue;
			CHECK(x->end < y->start || y->end < x->start);
			if (x->type == y->type)
				CHECK(x->end + 1 != y->start &&
				      y->end + 1 != x->start);
		}
	}
	CHECK(n == f->nr);
}

static void t_pl_split_merge(void)
{
	struct rdlm_pl_file f = { 0 };
	struct rdlm_pl_owner a = pl_who(0), b = pl_who(2);
	const struct rdlm_pl_range *c;

	CHECK(!rdlm_pl_set(&f, &a, 0, 99, RDLM_PL_WR));
	CHECK(f.nr == 1);
	/* unlock the middle: two pieces stay */
	CHECK(!rdlm_pl_set(&f, &a, 40, 59, RDLM_PL_UN));
	CHECK(f.nr == 2);
	CHECK(!rdlm_pl_conflict(&f, &b, 40, 59, RDLM_PL_WR));
	c = rdlm_pl_conflict(&f, &b, 30, 70, RDLM_PL_RD);
	CHECK(c && c->start == 0 && c->end == 39 && c->who.pid == a.pid);
	/* lock it again: merged into one */
	CHECK(!rdlm_pl_set(&f, &a, 40, 59, RDLM_PL_WR));
	CHECK(f.nr == 1 && f.head->start == 0 && f.head->end == 99);
	/* downgrade a piece: three ranges, readers may share it */
	CHECK(!rdlm_pl_set(&f, &a, 10, 19, RDLM_PL_RD));
	CHECK(f.nr == 3);
	CHECK(!rdlm_pl_conflict(&f, &b, 10, 19, RDLM_PL_RD));
	CHECK(rdlm_pl_conflict(&f, &b, 10, 20, RDLM_PL_RD));
	CHECK(rdlm_pl_conflict(&f, &b, 10, 19, RDLM_PL_WR));
	/* the owner's own locks never conflict with it */
	CHECK(!rdlm_pl_conflict(&f, &a, 0, 99, RDLM_PL_WR));
	/* upgrade in place: one range again */
	CHECK(!rdlm_pl_set(&f, &a, 10, 19, RDLM_PL_WR));
	CHECK(f.nr == 1);
	/* to the end of the file, and all of it unlocked */
	CHECK(!rdlm_pl_set(&f, &a, 100, U64_MAX, RDLM_PL_WR));
	CHECK(f.nr == 1 && f.head->end == U64_MAX);
	CHECK(rdlm_pl_conflict(&f, &b, U64_MAX, U64_MAX, RDLM_PL_RD));
	CHECK(!rdlm_pl_set(&f, &a, 0, U64_MAX, RDLM_PL_UN));
	CHECK(f.nr == 0 && !f.head);
	pl_invariants(&f);
}

static void t_pl_drop_node(void)
{
	struct rdlm_pl_file f = { 0 };
	struct rdlm_pl_owner a = pl_who(0), a2 = pl_who(1), b = pl_who(2);

	CHECK(!rdlm_pl_set(&f, &a, 0, 9, RDLM_PL_RD));
	CHECK(!rdlm_pl_set(&f, &a2, 5, 15, RDLM_PL_RD));
	CHECK(!rdlm_pl_set(&f, &b, 20, 29, RDLM_PL_WR));
	CHECK(rdlm_pl_conflict(&f, &b, 0, 9, RDLM_PL_WR));
	CHECK(rdlm_pl_drop_node(&f, a.node) == 2);
	CHECK(f.nr == 1 && !rdlm_pl_conflict(&f, &b, 0, 19, RDLM_PL_WR));
	rdlm_pl_clear(&f);
	CHECK(f.nr == 0 && !f.head);
}

static void t_pl_random(void)
{
	static u8 model[PL_OWNERS][PL_BYTES];
	struct rdlm_pl_file f = { 0 };
	u32 seed = 12345, refused = 0;
	int i, o, p;
	u64 b;

	memset(model, RDLM_PL_UN, sizeof(model));
	for (i = 0; i < 20000; i++) {
		u64 s, e;
		u8 t;
		bool conflict = false;
		struct rdlm_pl_owner w;

		seed = seed * 1103515245 + 12345;
		o = (seed >> 8) % PL_OWNERS;
		s = (seed >> 12) % PL_BYTES;
		seed = seed * 1103515245 + 12345;
		e = s + (seed >> 8) % 8;
		if (e >= PL_BYTES)
			e = PL_BYTES - 1;
		t = (seed >> 16) % 3;
		w = pl_who(o);
		for (b = s; b <= e && t != RDLM_PL_UN; b++)
			for (p = 0; p < PL_OWNERS; p++)
				if (p != o && model[p][b] != RDLM_PL_UN &&
				    (model[p][b] == RDLM_PL_WR ||
				     t == RDLM_PL_WR))
					conflict = true;
		CHECK(!!rdlm_pl_conflict(&f, &w, s, e, t) == conflict);
		if (conflict) {
			refused++;
			continue;
		}
		CHECK(!rdlm_pl_set(&f, &w, s, e, t));
		for (b = s; b <= e; b++)
			model[o][b] = t;
		for (p = 0; p < PL_OWNERS; p++)
			for (b = 0; b < PL_BYTES; b++)
				CHECK(pl_at(&f, p, b) == model[p][b]);
		pl_invariants(&f);
		if (t_fail)
			break;
	}
	/* both outcomes were exercised */
	CHECK(refused > 1000 && refused < 19000);
	rdlm_pl_clear(&f);
}
