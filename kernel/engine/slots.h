/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm slots: the cluster-wide slot numbers of a lockspace's members, as
 * fs/dlm's dlm_slots_assign() gives them (GFS2's journal ids, OCFS2's node
 * slots, md-cluster's bitmaps are keyed on them).
 *
 * I/O-free like the engines, built into the simulator too
 * (tools/sim/test_slots.c).
 */
#ifndef RDLM_SLOTS_H
#define RDLM_SLOTS_H

#include "engine_env.h"

/* Slots are 1..RDLM_SLOTS_MAX; 0 is none. */
#define RDLM_SLOTS_MAX	64

u32 rdlm_slots_assign(const u32 *nodeid, u32 *slot, const u32 *gen, u32 n);

#endif
