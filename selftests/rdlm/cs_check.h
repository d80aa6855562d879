/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cs_check: mutual exclusion checked without the lock manager's help, in
 * memory that every node of the test cluster shares.
 *
 * tools/cluster/run gives every guest the same ivshmem device (one host
 * file, zeroed for each run). A holder that was granted a name enters its
 * critical section (cs_enter()) and leaves it (cs_leave()) before it
 * unlocks, when the lock is reported lost, or from its SIGTERM handler
 * (cs_leave_all()). Each name has a cell there with one word per node,
 * counting that node's EX and PR holders, written by that node only: the
 * guests' atomics are not atomic between guests under TCG, a word that
 * only one guest writes needs none. Entering and leaving read every
 * node's word: another node's EX (or PR, entering EX) is a violation,
 * as is a second holder on the own node where modes conflict. A section
 * lasts at least RDLM_CS_DWELL_US microseconds (default 500), so that
 * overlapping grants are seen even when the holder does little.
 *
 * The check is on when RDLM_CS_DIR names the cluster's output directory;
 * a holder whose VM the harness switched off since (RDLM_CS_DIR/node<N>.rc
 * "killed", or node<N>.boots past the boot its word was written in,
 * RDLM_BOOT) is out of its sections. Names are kept apart per test by
 * RDLM_CS_SCOPE (lib.sh: the test's name).
 */
#ifndef RDLM_SELFTEST_CS_CHECK_H
#define RDLM_SELFTEST_CS_CHECK_H

#include <stdint.h>

struct cs_hold {
	uint64_t *word;		/* this node's word of the name's cell */
	uint64_t *cell;
	unsigned long long t0;	/* entered, CLOCK_MONOTONIC us */
	int ex;
	char what[160];		/* "LS NAME", for the messages */
};

/* Is the check on (RDLM_CS_DIR set)? Exits 2 if on but not usable. */
int cs_on(void);

/*
 * Enter @name's section of lockspace @ls in EX (@ex) or PR: 0, or -1 if
 * another holder is inside (reported on stderr as "VIOLATION"; entered
 * anyway, leave it as usual). Does nothing and returns 0 when the check is
 * off.
 */
int cs_enter(struct cs_hold *h, const char *ls, const char *name, int ex);

/* Leave: 0, or -1 if another holder came in meanwhile (reported). */
int cs_leave(struct cs_hold *h);

/* Leave every section this process is in; async-signal-safe. */
void cs_leave_all(void);

#endif
