// SPDX-License-Identifier: GPL-2.0
/*
 * cs_check: mutual exclusion checked in the test cluster's shared memory
 * (see cs_check.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cs_check.h"

#define CS_WORDS	16		/* a cell: its tag, nodes 1..15 */
#define CS_NODES	(CS_WORDS - 1)
#define CS_PROBES	256
#define CS_MAX_HELD	1024

/* a node's word: its boot, its EX holders, its PR holders */
#define W_BOOT(w)	((unsigned int)((w) >> 48))
#define W_EX(w)		((unsigned int)((w) >> 32) & 0xffff)
#define W_PR(w)		((unsigned int)(w))
#define W_ONE_EX	(1ULL << 32)

static uint64_t *cs_mem;
static size_t cs_cells;
static int cs_state;		/* 0 not looked, 1 on, -1 off */
static unsigned int cs_me, cs_boot, cs_dwell_us = 500;
static const char *cs_dir, *cs_scope = "";
static struct cs_hold *cs_held[CS_MAX_HELD];

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static void cs_fatal(const char *what, const char *detail)
{
	fprintf(stderr, "cs_check: %s: %s\n", what, detail);
	exit(2);
}

static int read_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return 0;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	return ok;
}

/* Map the ivshmem device's memory: BAR 2 of RDLM_CS_DEV (guest-init). */
static void cs_map(void)
{
	const char *dev = getenv("RDLM_CS_DEV");
	char path[512];
	struct stat st;
	int fd;

	if (!dev || !*dev)
		cs_fatal("no shared memory device", "not in the test cluster?");
	snprintf(path, sizeof(path), "%s/resource2", dev);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0)
		cs_fatal(path, strerror(errno));
	if (fstat(fd, &st) || st.st_size < 4096)
		cs_fatal(path, "no size");
	cs_mem = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0);
	if (cs_mem == MAP_FAILED)
		cs_fatal(path, strerror(errno));
	close(fd);
	cs_cells = st.st_size / (CS_WORDS * sizeof(uint64_t));
}

int cs_on(void)
{
	const char *s;

	if (cs_state)
		return cs_state > 0;
	cs_dir = getenv("RDLM_CS_DIR");
	if (!cs_dir) {
		cs_state = -1;
		return 0;
	}
	s = getenv("RDLM_NODE_ID");
	cs_me = s ? atoi(s) : 0;
	if (cs_me < 1 || cs_me > CS_NODES)
		cs_fatal("RDLM_NODE_ID", "not a node of the test cluster");
	s = getenv("RDLM_BOOT");
	cs_boot = s ? atoi(s) : 1;
	s = getenv("RDLM_CS_DWELL_US");
	if (s)
		cs_dwell_us = atoi(s);
	s = getenv("RDLM_CS_SCOPE");
	if (s)
		cs_scope = s;
	cs_map();
	cs_state = 1;
	return 1;
}

static uint64_t cs_hash(const char *ls, const char *name)
{
	const char *parts[3] = { cs_scope, ls, name };
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	const char *p;
	int i;

	for (i = 0; i < 3; i++) {
		for (p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h ? h : 1;
}

/* The cell of a name: its tag, found or claimed by linear probing. */
static uint64_t *cs_cell(uint64_t tag)
{
	size_t i = tag % cs_cells, n;
	uint64_t *c, t;

	for (n = 0; n < CS_PROBES; n++, i = (i + 1) % cs_cells) {
		c = cs_mem + i * CS_WORDS;
		t = __atomic_load_n(c, __ATOMIC_SEQ_CST);
		if (!t) {
			/* two guests claiming at once: one tag stays */
			__atomic_compare_exchange_n(c, &t, tag, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
			t = __atomic_load_n(c, __ATOMIC_SEQ_CST);
		}
		if (t == tag)
			return c;
	}
	cs_fatal("shared memory", "full");
	return NULL;
}

/* A number in a file of the harness's; -2 for "killed", -1 if none. */
static long cs_file_num(unsigned int node, const char *what)
{
	char path[4200], buf[32];

	snprintf(path, sizeof(path), "%s/node%u.%s", cs_dir, node, what);
	if (!read_str(path, buf, sizeof(buf)))
		return -1;
	return strcmp(buf, "killed\n") ? strtol(buf, NULL, 10) : -2;
}

/* Was node @node switched off since its boot @boot wrote its word? */
static int cs_gone(unsigned int node, unsigned int boot)
{
	long boots = cs_file_num(node, "boots");

	return boots > boot || (boots == boot && cs_file_num(node, "rc") == -2);
}

/* Is another holder inside @h's section? Reports it. */
static int cs_scan(struct cs_hold *h, const char *when)
{
	uint64_t w = __atomic_load_n(h->word, __ATOMIC_SEQ_CST);
	unsigned int n;
	int bad = 0;

	if (h->ex ? W_EX(w) != 1 || W_PR(w) : W_EX(w) != 0) {
		fprintf(stderr, "cs_check: VIOLATION: %s %s on node %u pid %d in %s while node %u itself has EX %u PR %u\n",
			h->what, when, cs_me, getpid(), h->ex ? "EX" : "PR",
			cs_me, W_EX(w), W_PR(w));
		bad = -1;
	}
	for (n = 1; n <= CS_NODES; n++) {
		if (n == cs_me)
			continue;
		w = __atomic_load_n(h->cell + n, __ATOMIC_SEQ_CST);
		if (!W_EX(w) && !(h->ex && W_PR(w)))
			continue;
		/* its holders were switched off inside */
		if (cs_gone(n, W_BOOT(w)))
			continue;
		fprintf(stderr, "cs_check: VIOLATION: %s %s on node %u pid %d in %s while node %u (boot %u) holds EX %u PR %u\n",
			h->what, when, cs_me, getpid(), h->ex ? "EX" : "PR",
			n, W_BOOT(w), W_EX(w), W_PR(w));
		bad = -1;
	}
	return bad;
}

static void cs_block_term(sigset_t *old)
{
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, old);
}

int cs_enter(struct cs_hold *h, const char *ls, const char *name, int ex)
{
	uint64_t w, fresh = (uint64_t)cs_boot << 48;
	sigset_t old;
	int i;

	h->word = NULL;
	if (!cs_on())
		return 0;
	snprintf(h->what, sizeof(h->what), "%s %s", ls, name);
	h->ex = ex;
	h->cell = cs_cell(cs_hash(ls, name));
	h->word = h->cell + cs_me;
	cs_block_term(&old);
	/* a word of an earlier boot of this node: its holders are gone */
	w = __atomic_load_n(h->word, __ATOMIC_SEQ_CST);
	while (W_BOOT(w) != cs_boot &&
	       !__atomic_compare_exchange_n(h->word, &w, fresh, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	__atomic_add_fetch(h->word, ex ? W_ONE_EX : 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < CS_MAX_HELD && cs_held[i]; i++)
		;
	if (i < CS_MAX_HELD)
		cs_held[i] = h;
	sigprocmask(SIG_SETMASK, &old, NULL);
	h->t0 = now_us();
	return cs_scan(h, "granted");
}

static void cs_out(struct cs_hold *h)
{
	__atomic_sub_fetch(h->word, h->ex ? W_ONE_EX : 1, __ATOMIC_SEQ_CST);
	h->word = NULL;
}

int cs_leave(struct cs_hold *h)
{
	unsigned long long dt;
	sigset_t old;
	int ret, i;

	if (!h->word)
		return 0;
	dt = now_us() - h->t0;
	if (dt < cs_dwell_us)
		usleep(cs_dwell_us - dt);
	ret = cs_scan(h, "entered meanwhile");
	cs_block_term(&old);
	for (i = 0; i < CS_MAX_HELD; i++)
		if (cs_held[i] == h)
			cs_held[i] = NULL;
	if (h->word)	/* not left by a signal handler meanwhile */
		cs_out(h);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void cs_leave_all(void)
{
	int i;

	for (i = 0; i < CS_MAX_HELD; i++) {
		if (cs_held[i] && cs_held[i]->word)
			cs_out(cs_held[i]);
		cs_held[i] = NULL;
	}
}
