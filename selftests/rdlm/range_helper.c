// SPDX-License-Identifier: GPL-2.0
/*
 * range_helper: range locks through /dev/rdlm, for range_lock.sh.
 *
 * usage: range_helper stress LS NAME SECS CELLS CELL_UNITS MAXLEN DEV OFFSET
 *        range_helper hold LS NAME MODE START END FILE
 *
 * stress repeats for SECS seconds: lock a random run of 1..MAXLEN of
 * CELLS cells of NAME (cell c is the units [c * CELL_UNITS, (c + 1) *
 * CELL_UNITS - 1]) in PR or EX, check it, unlock. The check needs no help
 * from the lock manager: every cell owns one 4 KiB block of the block device
 * DEV at OFFSET, which every node reaches uncached (the test cluster's
 * shared disk, O_DIRECT). Whole blocks: the disk is a sparse file on the
 * host, and two guests writing 512-byte pieces of one block not yet
 * allocated there undo each other's writes (a fresh image showed that as
 * violations on both engines). An EX holder writes a token of its own
 * into its cells' sectors, waits, reads them back (another writer's token
 * there is a violation) and writes a second token before it unlocks; a PR
 * holder reads its cells at the start and at the end of its hold (a change
 * is a writer inside with it). With RDLM_CS_DIR set, each cell is also a
 * critical section in the nodes' shared memory (cs_check.h). It prints
 *
 *   ops N pr N ex N errors N violations N
 *
 * and exits 0 only with no error and no violation.
 *
 * hold locks START..END of NAME in MODE (PR or EX, waiting up to 60 s),
 * creates FILE and waits for SIGTERM, then unlocks; killed, its lock goes
 * with its descriptor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"
#include "cs_check.h"

#define CELL	4096

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned long long arg_ull(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s) {
		fprintf(stderr, "range_helper: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static int open_ls(const char *ls)
{
	int fd = rdlm_open(ls, 0);

	if (fd < 0) {
		fprintf(stderr, "range_helper: %s: %s\n", ls, strerror(-fd));
		exit(1);
	}
	return fd;
}

/* the first cell of @buf whose sector does not carry @token, or -1 */
static int other_token(const char *buf, unsigned int n, uint64_t token,
		       uint64_t *found)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memcpy(found, buf + (size_t)i * CELL, sizeof(*found));
		if (*found != token)
			return i;
	}
	return -1;
}

static void fill_token(char *buf, unsigned int n, uint64_t token)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		memcpy(buf + (size_t)i * CELL, &token, sizeof(token));
}

static int io(int dev, int write, void *buf, size_t len, off_t off)
{
	ssize_t r = write ? pwrite(dev, buf, len, off) : pread(dev, buf, len, off);

	if (r != (ssize_t)len) {
		fprintf(stderr, "range_helper: %s at %lld: %s\n",
			write ? "write" : "read", (long long)off,
			r < 0 ? strerror(errno) : "short");
		return -1;
	}
	return 0;
}

static int stress(char **argv)
{
	const char *name = argv[1];
	uint64_t secs = arg_ull(argv[2], "SECS");
	unsigned int cells = arg_ull(argv[3], "CELLS");
	uint64_t cu = arg_ull(argv[4], "CELL_UNITS");
	unsigned int maxlen = arg_ull(argv[5], "MAXLEN");
	off_t base = arg_ull(argv[7], "OFFSET");
	uint64_t ops = 0, pr = 0, ex = 0, errors = 0, violations = 0, end;
	uint64_t node = arg_ull(getenv("RDLM_NODE_ID") ?: "0", "RDLM_NODE_ID");
	char cname[RDLM_NAME_MAX + 16];
	struct cs_hold *cs;
	uint32_t seq = 0;
	unsigned int c;
	char *a, *b;
	int fd, dev;

	if (!cells || !cu || !maxlen || maxlen > cells) {
		fprintf(stderr, "range_helper: need 1 <= MAXLEN <= CELLS, CELL_UNITS > 0\n");
		return 2;
	}
	fd = open_ls(argv[0]);
	dev = open(argv[6], O_RDWR | O_DIRECT);
	if (dev < 0) {
		fprintf(stderr, "range_helper: %s: %s\n", argv[6], strerror(errno));
		return 1;
	}
	cs = calloc(cells, sizeof(*cs));
	if (!cs || posix_memalign((void **)&a, 4096, (size_t)cells * CELL) ||
	    posix_memalign((void **)&b, 4096, (size_t)cells * CELL))
		return 1;
	srandom(getpid() ^ time(NULL));
	end = now_ms() + secs * 1000;
	while (now_ms() < end) {
		unsigned int first = random() % cells;
		unsigned int n = 1 + random() % maxlen;
		int mode = random() % 2 ? RDLM_LOCK_EX : RDLM_LOCK_PR;
		off_t off = base + (off_t)first * CELL;
		uint64_t token, seen;
		uint32_t lkid;
		size_t len;
		int ret, bad;

		if (first + n > cells)
			n = cells - first;
		len = (size_t)n * CELL;
		ops++;
		ret = rdlm_range_lock(fd, mode, name, strlen(name), first * cu,
				      (first + n) * cu - 1, 0, 30000, 0, &lkid);
		if (ret) {
			fprintf(stderr, "range_helper: lock %u+%u %s: %s\n",
				first, n, rdlm_mode_name(mode), strerror(-ret));
			errors++;
			continue;
		}
		/* and each cell in the nodes' shared memory (cs_check.h) */
		for (c = 0; c < n; c++) {
			snprintf(cname, sizeof(cname), "%s/%u", name, first + c);
			if (cs_enter(&cs[c], argv[0], cname,
				     mode == RDLM_LOCK_EX))
				violations++;
		}
		token = node << 56 | (uint64_t)getpid() << 32 | ++seq;
		if (mode == RDLM_LOCK_EX) {
			ex++;
			fill_token(a, n, token);
			if (io(dev, 1, a, len, off))
				errors++;
			usleep(random() % 2000);
			if (io(dev, 0, b, len, off))
				errors++;
			else if ((bad = other_token(b, n, token, &seen)) >= 0) {
				fprintf(stderr, "VIOLATION: EX cells %u+%u: cell %u has node %u pid %u seq %u's token, not node %u pid %u seq %u's\n",
					first, n, first + bad,
					(unsigned int)(seen >> 56),
					(unsigned int)(seen >> 32) & 0xffffff,
					(unsigned int)seen, (unsigned int)node,
					(unsigned int)getpid(), seq);
				violations++;
			}
			fill_token(a, n, token | 1ULL << 31);
			if (io(dev, 1, a, len, off))
				errors++;
		} else {
			pr++;
			if (io(dev, 0, a, len, off))
				errors++;
			usleep(random() % 2000);
			if (io(dev, 0, b, len, off))
				errors++;
			else if (memcmp(a, b, len)) {
				fprintf(stderr, "VIOLATION: PR cells %u+%u changed under a reader\n",
					first, n);
				violations++;
			}
		}
		for (c = 0; c < n; c++)
			if (cs_leave(&cs[c]))
				violations++;
		ret = rdlm_unlock(fd, lkid, NULL);
		if (ret) {
			fprintf(stderr, "range_helper: unlock: %s\n", strerror(-ret));
			errors++;
		}
	}
	printf("ops %" PRIu64 " pr %" PRIu64 " ex %" PRIu64 " errors %" PRIu64
	       " violations %" PRIu64 "\n", ops, pr, ex, errors, violations);
	return errors || violations ? 1 : 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int hold(char **argv)
{
	const char *name = argv[1];
	int mode = rdlm_mode_parse(argv[2]);
	uint64_t start = arg_ull(argv[3], "START"), last = arg_ull(argv[4], "END");
	sigset_t mask, old;
	uint32_t lkid;
	int fd, ret;
	FILE *f;

	fd = open_ls(argv[0]);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGTERM, on_term);
	ret = rdlm_range_lock(fd, mode, name, strlen(name), start, last, 0,
			      60000, 0, &lkid);
	if (ret) {
		fprintf(stderr, "range_helper: hold %s %s: %s\n", name, argv[2],
			strerror(-ret));
		return 1;
	}
	f = fopen(argv[5], "w");
	if (!f || fclose(f))
		return 1;
	while (!stop)
		sigsuspend(&old);
	ret = rdlm_unlock(fd, lkid, NULL);
	if (ret)
		fprintf(stderr, "range_helper: unlock: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 10 && !strcmp(argv[1], "stress"))
		return stress(argv + 2);
	if (argc == 8 && !strcmp(argv[1], "hold"))
		return hold(argv + 2);
	fprintf(stderr,
		"usage: range_helper stress LS NAME SECS CELLS CELL_UNITS MAXLEN DEV OFFSET\n"
		"       range_helper hold LS NAME MODE START END FILE\n");
	return 2;
}
