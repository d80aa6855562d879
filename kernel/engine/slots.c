// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm slots: every member of an agreed membership computes the same slot
 * table from the same claims (each member's slot in the last table it
 * agreed, carried in the re-homing barrier's answers, kernel/rehome.c).
 */
#include "slots.h"

/**
 * rdlm_slots_assign() - the slot table of a membership
 * @nodeid: the members' node ids, each once, in any order
 * @slot: in: each member's claim (0: none, a new member); out: its slot
 * @gen: the generation of the table each claim comes from
 * @n: the number of members, at most %RDLM_SLOTS_MAX
 *
 * A member keeps the slot it claims; of two claiming one slot (tables
 * agreed apart, as after a partition) the lower node id keeps it. Every
 * other member takes the lowest free slot, in ascending node id order,
 * as fs/dlm's dlm_slots_assign() does for members that have none.
 *
 * Return: the new table's generation, above every claim's (never 0).
 */
u32 rdlm_slots_assign(const u32 *nodeid, u32 *slot, const u32 *gen, u32 n)
{
	u64 used = 0;
	u32 i, j, g = 0, next = 0;

	for (i = 0; i < n; i++) {
		g = max_t(u32, g, gen[i]);
		if (slot[i] > RDLM_SLOTS_MAX)
			slot[i] = 0;
	}
	/* a claim stands unless a lower node id claims the same slot */
	for (i = 0; i < n; i++) {
		for (j = 0; slot[i] && j < n; j++)
			if (j != i && slot[j] == slot[i] && nodeid[j] < nodeid[i])
				slot[i] = 0;
	}
	for (i = 0; i < n; i++)
		if (slot[i])
			used |= BIT_ULL(slot[i] - 1);
	/* the rest by ascending node id: pick the lowest unslotted each time */
	for (;;) {
		u32 low = U32_MAX;

		for (i = 0; i < n; i++)
			if (!slot[i] && (low == U32_MAX || nodeid[i] < nodeid[low]))
				low = i;
		if (low == U32_MAX)
			break;
		while (next < RDLM_SLOTS_MAX && (used & BIT_ULL(next)))
			next++;
		if (next == RDLM_SLOTS_MAX)
			break;		/* n <= RDLM_SLOTS_MAX: not reached */
		used |= BIT_ULL(next);
		slot[low] = ++next;
	}
	return g == U32_MAX ? 1 : g + 1;
}
