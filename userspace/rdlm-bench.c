// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm-bench: a mixed lock workload through librdlm, for the demo and for
 * measurements.
 *
 * usage: rdlm-bench -L LOCKSPACE [-t SECS | -n OPS] [-P PROCS] [-k NAMES]
 *                   [-x PCT] [-p PREFIX]
 *        rdlm-bench -L LOCKSPACE -r NAMES [-p PREFIX]
 *        rdlm-bench -L LOCKSPACE -m MODE [-n N] [-p NAME] [-M MODE] [-I ID]
 *                   [-R FILE] [-V]
 *
 * PROCS processes (default 2) each repeat, for SECS seconds or OPS times:
 * pick one of NAMES resource names (PREFIX0, PREFIX1, ...) at random, lock
 * it in EX with probability PCT% (default 25) and in PR otherwise, and
 * unlock it. An EX holder increments a counter kept in the name's lock
 * value block, so a later -r can check that no increment was lost.
 * One line of results: operations, EX operations, mean / p50 / p99 lock +
 * unlock latency (us), verbs this node posted in the lockspace meanwhile,
 * and the EX increments per name. -r prints each name's counter instead.
 * With RDLM_CS_DIR set (in the test cluster), every hold is checked against
 * every other node's without the lock manager's help
 * (selftests/rdlm/cs_check.h): a violation is reported and fails the run.
 *
 * -m runs one row of tools/bench-dlm instead, one process, one name at a
 * time, the rows dlm-bench (fs/dlm) runs too:
 *   hold      lock NAME0..NAME<N-1> (NAME alone if N is 1) in -M mode,
 *             create FILE (-R) and keep them until SIGTERM or SIGINT
 *   cold      for each of NAME0..NAME<N-1>, never locked before: lock EX
 *             (timed: "cold") and unlock
 *   pair      lock NAME in -M mode and unlock it, once untimed, then N
 *             times: "reacq" (the lock), "unlock", and the pair
 *             ("pair-ex" or "pair-pr"); with -V every lock reads the value
 *             block (RDLM_LKF_VALBLK; unlocks write nothing): the pair
 *             only, "pair-lvb"
 *   pingpong  hand NAME over in EX to and fro with a second rdlm-bench
 *             -m pingpong on another node, N grants each: the holder
 *             unlocks when the other's request reaches it (a blocking
 *             notice; at its last grant at once), the waiter blocks in its
 *             lock request and requests again right after its unlock. Each
 *             grant from this node's third on is timed from its previous
 *             grant: two hand-overs ("handover", halved).
 *   home      print NAME's home node id, read from debugfs while held
 * Each sample is a line "S ROW WHERE USEC", each row ends with "C ROW WHERE
 * OPS VERBS" (verbs this node posted in the lockspace during the row).
 * WHERE is "local" or "remote": where NAME's home is, read from debugfs
 * (/sys/kernel/debug/rdlm/ls/LOCKSPACE) while it is held, compared with
 * -I ID (this node's id); "-" without -I.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"
#include "cs_check.h"

#define MAX_NAMES	64
#define MAX_SAMPLES	(1 << 20)
#define MAX_HOLD	4096
#define BAST_WAIT_MS	10000	/* the other side of a ping-pong starts late */
#define ROW_LOCK_TIMEOUT_MS	30000	/* a row's request that hangs fails */

struct shared {
	unsigned long long incs[MAX_NAMES];
	unsigned long nr;
	int failed;
	unsigned int lat_us[MAX_SAMPLES];
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long lvb_counter(const char *lvb)
{
	unsigned long long v;

	memcpy(&v, lvb, sizeof(v));
	return v;
}

static int worker(struct shared *sh, const char *ls, const char *prefix,
		  int names, int pct_ex, double secs, long ops, unsigned int seed)
{
	unsigned long long end = now_ns() + (unsigned long long)(secs * 1e9);
	char name[RDLM_NAME_MAX + 1], lvb[RDLM_LVB_MAX];
	struct cs_hold cs;
	int fd, ret, bad;
	long i;

	fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rdlm-bench: join %s: %s\n", ls, strerror(-fd));
		return 1;
	}
	for (i = 0; ops ? i < ops : now_ns() < end; i++) {
		int n = rand_r(&seed) % names;
		int ex = (int)(rand_r(&seed) % 100) < pct_ex;
		unsigned long long t0 = now_ns(), v;
		uint32_t lkid;
		unsigned long slot;

		snprintf(name, sizeof(name), "%s%d", prefix, n);
		ret = rdlm_lock(fd, ex ? RDLM_LOCK_EX : RDLM_LOCK_PR, name,
				strlen(name), ex ? RDLM_LKF_VALBLK : 0, 0, &lkid,
				lvb);
		if (ret) {
			fprintf(stderr, "rdlm-bench: lock %s: %s\n", name,
				strerror(-ret));
			return 1;
		}
		bad = cs_enter(&cs, ls, name, ex);
		if (ex) {
			v = lvb_counter(lvb) + 1;
			memset(lvb, 0, sizeof(lvb));
			memcpy(lvb, &v, sizeof(v));
		}
		if (cs_leave(&cs) || bad)
			__atomic_store_n(&sh->failed, 1, __ATOMIC_RELAXED);
		ret = rdlm_unlock(fd, lkid, ex ? lvb : NULL);
		if (ret) {
			fprintf(stderr, "rdlm-bench: unlock %s: %s\n", name,
				strerror(-ret));
			return 1;
		}
		slot = __atomic_fetch_add(&sh->nr, 1, __ATOMIC_RELAXED);
		if (slot < MAX_SAMPLES)
			sh->lat_us[slot] = (now_ns() - t0) / 1000;
		if (ex)
			__atomic_fetch_add(&sh->incs[n], 1, __ATOMIC_RELAXED);
	}
	rdlm_close(fd);
	return 0;
}

static unsigned long long verbs_now(const char *ls)
{
	struct rdlm_ls_stats st;
	unsigned long long sum = 0;
	int fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC), v;

	if (fd < 0 || rdlm_ls_stats(fd, &st))
		return 0;
	rdlm_close(fd);
	for (v = 0; v < RDLM_STAT_VERBS; v++)
		sum += st.verbs[v];
	return sum;
}

static int read_counters(const char *ls, const char *prefix, int names)
{
	char name[RDLM_NAME_MAX + 1], lvb[RDLM_LVB_MAX];
	uint32_t lkid;
	int fd, n, ret;

	fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rdlm-bench: join %s: %s\n", ls, strerror(-fd));
		return 1;
	}
	printf("counters");
	for (n = 0; n < names; n++) {
		snprintf(name, sizeof(name), "%s%d", prefix, n);
		ret = rdlm_lock(fd, RDLM_LOCK_PR, name, strlen(name),
				RDLM_LKF_VALBLK, 0, &lkid, lvb);
		if (ret) {
			fprintf(stderr, "rdlm-bench: lock %s: %s\n", name,
				strerror(-ret));
			return 1;
		}
		printf(" %llu", lvb_counter(lvb));
		rdlm_unlock(fd, lkid, NULL);
	}
	printf("\n");
	return 0;
}

/* -m: the rows of tools/bench-dlm */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * NAME's home node id, from the lock dump in debugfs ("lock ... home N ...
 * name HEX"), while this node holds or waits for it; -1 if not found.
 */
static int home_of(const char *ls, const char *name)
{
	char path[128], hex[2 * RDLM_NAME_MAX + 1], line[512], *p;
	int home = -1, h;
	size_t i, len;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdlm/ls/%s", ls);
	for (i = 0; name[i] && i < RDLM_NAME_MAX; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)name[i]);
	hex[2 * i] = 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		len = strcspn(line, "\n");
		line[len] = 0;
		p = strstr(line, " name ");
		if (strncmp(line, "lock ", 5) || !p || strcmp(p + 6, hex))
			continue;
		p = strstr(line, " home ");
		if (p && sscanf(p, " home %d", &h) == 1) {
			home = h;
			break;
		}
	}
	fclose(f);
	return home;
}

struct row_ctx {
	const char *ls;
	int fd;
	int me;			/* this node's id, -1: unknown */
	bool valblk;		/* pair: -V */
};

static const char *where(struct row_ctx *rc, const char *name)
{
	int home;

	if (rc->me < 0)
		return "-";
	home = home_of(rc->ls, name);
	if (home < 0)
		return "-";
	return home == rc->me ? "local" : "remote";
}

static unsigned long long verbs_fd(int fd)
{
	struct rdlm_ls_stats st;
	unsigned long long sum = 0;
	int v;

	if (rdlm_ls_stats(fd, &st))
		return 0;
	for (v = 0; v < RDLM_STAT_VERBS; v++)
		sum += st.verbs[v];
	return sum;
}

static void sample(const char *row, const char *w, unsigned long long ns)
{
	printf("S %s %s %.1f\n", row, w, ns / 1000.0);
}

static int lock_one(struct row_ctx *rc, int mode, const char *name,
		    uint32_t flags, uint32_t *lkid, void *lvb)
{
	int ret = rdlm_lock(rc->fd, mode, name, strlen(name), flags,
			    ROW_LOCK_TIMEOUT_MS, lkid, lvb);

	if (ret)
		fprintf(stderr, "rdlm-bench: lock %s: %s\n", name,
			strerror(-ret));
	return ret;
}

static int unlock_one(struct row_ctx *rc, const char *name, uint32_t lkid,
		      const void *lvb)
{
	int ret = rdlm_unlock(rc->fd, lkid, lvb);

	if (ret)
		fprintf(stderr, "rdlm-bench: unlock %s: %s\n", name,
			strerror(-ret));
	return ret;
}

static int row_hold(struct row_ctx *rc, const char *prefix, int n, int mode,
		    const char *ready)
{
	static uint32_t lkid[MAX_HOLD];
	char name[RDLM_NAME_MAX + 1];
	struct rdlm_event ev;
	int i, fd;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), n > 1 ? "%s%d" : "%s", prefix, i);
		if (lock_one(rc, mode, name, 0, &lkid[i], NULL))
			return 1;
	}
	if (ready) {
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(ready);
			return 1;
		}
		close(fd);
	}
	while (!stop) {
		struct pollfd pfd = { .fd = rc->fd, .events = POLLIN };

		/* blocking notices of the held locks are read and dropped */
		if (poll(&pfd, 1, 200) > 0)
			rdlm_read_event(rc->fd, &ev);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), n > 1 ? "%s%d" : "%s", prefix, i);
		if (unlock_one(rc, name, lkid[i], NULL))
			return 1;
	}
	return 0;
}

static int row_cold(struct row_ctx *rc, const char *prefix, int n)
{
	unsigned long long t0, t1, v0, verbs[2] = { 0, 0 };
	char name[RDLM_NAME_MAX + 1];
	int i, l, ops[2] = { 0, 0 };
	const char *w[2] = { "remote", "local" }, *wn;
	uint32_t lkid;

	if (rc->me < 0)
		w[0] = "-";
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		v0 = verbs_fd(rc->fd);
		t0 = now_ns();
		if (lock_one(rc, RDLM_LOCK_EX, name, 0, &lkid, NULL))
			return 1;
		t1 = now_ns();
		wn = where(rc, name);
		l = !strcmp(wn, "local");
		sample("cold", w[l], t1 - t0);
		if (unlock_one(rc, name, lkid, NULL))
			return 1;
		/* the unlock's verbs too: half of a cold pair's */
		verbs[l] += verbs_fd(rc->fd) - v0;
		ops[l]++;
	}
	for (l = 0; l < 2; l++)
		if (ops[l])
			printf("C cold %s %d %llu\n", w[l], ops[l], verbs[l]);
	return 0;
}

static int row_pair(struct row_ctx *rc, const char *name, int n, int mode)
{
	bool valblk = rc->valblk;
	const char *row = mode == RDLM_LOCK_PR ? "pair-pr" : "pair-ex", *w;
	uint32_t flags = valblk ? RDLM_LKF_VALBLK : 0;
	unsigned long long v0, t0, t1, t2;
	char lvb[RDLM_LVB_MAX];
	uint32_t lkid;
	int i;

	if (valblk)
		row = "pair-lvb";
	/* warm-up, and where the home is */
	if (lock_one(rc, mode, name, flags, &lkid, lvb))
		return 1;
	w = where(rc, name);
	if (unlock_one(rc, name, lkid, NULL))
		return 1;
	v0 = verbs_fd(rc->fd);
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		if (lock_one(rc, mode, name, flags, &lkid, lvb))
			return 1;
		t1 = now_ns();
		if (unlock_one(rc, name, lkid, NULL))
			return 1;
		t2 = now_ns();
		sample(row, w, t2 - t0);
		if (mode == RDLM_LOCK_EX && !valblk) {
			sample("reacq", w, t1 - t0);
			sample("unlock", w, t2 - t1);
		}
	}
	printf("C %s %s %d %llu\n", row, w, n, verbs_fd(rc->fd) - v0);
	return 0;
}

/* wait for a blocking notice of the held lock @lkid; 0 if it came */
static int wait_blocking(struct row_ctx *rc, uint32_t lkid)
{
	unsigned long long end = now_ns() + BAST_WAIT_MS * 1000000ULL;
	struct pollfd pfd = { .fd = rc->fd, .events = POLLIN };
	struct rdlm_event ev;

	while (now_ns() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdlm_read_event(rc->fd, &ev))
			return -1;
		if (ev.type == RDLM_EV_BLOCKING && ev.lkid == lkid)
			return 0;
	}
	return -1;
}

static int row_pingpong(struct row_ctx *rc, const char *name, int n)
{
	unsigned long long v0 = verbs_fd(rc->fd), prev = 0, t;
	uint32_t lkid;
	int i;

	for (i = 0; i < n; i++) {
		if (lock_one(rc, RDLM_LOCK_EX, name, 0, &lkid, NULL))
			return 1;
		t = now_ns();
		/* the first round includes the other's start: not timed */
		if (i >= 2)
			sample("handover", "-", (t - prev) / 2);
		prev = t;
		/* this node's last grant waits for nobody */
		if (i < n - 1 && wait_blocking(rc, lkid)) {
			fprintf(stderr, "rdlm-bench: %s: no blocking notice in %d s (grant %d)\n",
				name, BAST_WAIT_MS / 1000, i + 1);
			return 1;
		}
		if (unlock_one(rc, name, lkid, NULL))
			return 1;
	}
	printf("C handover - %d %llu\n", n, verbs_fd(rc->fd) - v0);
	return 0;
}

static int row_home(struct row_ctx *rc, const char *name)
{
	uint32_t lkid;
	int home;

	if (lock_one(rc, RDLM_LOCK_PR, name, 0, &lkid, NULL))
		return 1;
	home = home_of(rc->ls, name);
	if (unlock_one(rc, name, lkid, NULL))
		return 1;
	printf("%d\n", home);
	return home < 0;
}

static int run_row(const char *ls, const char *row, const char *name, int n,
		   int mode, int me, const char *ready, bool valblk)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct row_ctx rc = { .ls = ls, .me = me, .valblk = valblk };
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	rc.fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC);
	if (rc.fd < 0) {
		fprintf(stderr, "rdlm-bench: join %s: %s\n", ls,
			strerror(-rc.fd));
		return 1;
	}
	if (!strcmp(row, "hold"))
		ret = row_hold(&rc, name, n, mode, ready);
	else if (!strcmp(row, "cold"))
		ret = row_cold(&rc, name, n);
	else if (!strcmp(row, "pair"))
		ret = row_pair(&rc, name, n, mode);
	else if (!strcmp(row, "pingpong"))
		ret = row_pingpong(&rc, name, n);
	else if (!strcmp(row, "home"))
		ret = row_home(&rc, name);
	else
		ret = 2;
	rdlm_close(rc.fd);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: rdlm-bench -L LOCKSPACE [-t SECS | -n OPS] [-P PROCS] [-k NAMES]\n"
"                  [-x PCT] [-p PREFIX]\n"
"       rdlm-bench -L LOCKSPACE -r NAMES [-p PREFIX]\n"
"       rdlm-bench -L LOCKSPACE -m MODE [-n N] [-p NAME] [-M MODE] [-I ID]\n"
"                  [-R FILE]\n"
"\n"
"Run a mixed lock workload through /dev/rdlm and print one line of results:\n"
"  ops N ex N mean_us X p50_us X p99_us X verbs N incs I0,I1,...\n"
"\n"
" -L LOCKSPACE  lockspace to join\n"
" -t SECS       run for SECS seconds (default 5)\n"
" -n OPS        run OPS lock+unlock pairs per process instead\n"
" -P PROCS      processes (default 2)\n"
" -k NAMES      resource names PREFIX0..PREFIX<NAMES-1> (default 4, max %d)\n"
" -x PCT        percentage of EX requests, the rest is PR (default 25)\n"
" -p PREFIX     resource name prefix (default \"bench-\")\n"
" -r NAMES      print the LVB counters of NAMES names and exit\n"
" -m MODE       one row of tools/bench-dlm: hold, cold, pair, pingpong, home\n"
"               (see the source's header); -n is its count, -p its name\n"
" -M MODE       hold and pair: NL CR CW PR PW EX (default EX)\n"
" -V            pair: read the value block at every lock (\"pair-lvb\")\n"
" -I ID         this node's id: rows tell a local home from a remote one\n"
" -R FILE       hold: created once the locks are held\n"
" -h            this help\n", MAX_NAMES);
}

int main(int argc, char **argv)
{
	const char *ls = NULL, *prefix = "bench-", *row = NULL, *ready = NULL;
	int lkmode = RDLM_LOCK_EX, me = -1;
	bool valblk = false;
	int procs = 2, names = 4, pct_ex = 25, read_names = 0, c, p, status;
	unsigned long long v0, v1, sum = 0;
	double secs = 5;
	struct shared *sh;
	unsigned long nr, i;
	long ops = 0;

	while ((c = getopt(argc, argv, "L:t:n:P:k:x:p:r:m:M:I:R:Vh")) != -1) {
		switch (c) {
		case 'L': ls = optarg; break;
		case 't': secs = atof(optarg); break;
		case 'n': ops = atol(optarg); break;
		case 'P': procs = atoi(optarg); break;
		case 'k': names = atoi(optarg); break;
		case 'x': pct_ex = atoi(optarg); break;
		case 'p': prefix = optarg; break;
		case 'r': read_names = atoi(optarg); break;
		case 'm': row = optarg; break;
		case 'M': lkmode = rdlm_mode_parse(optarg); break;
		case 'I': me = atoi(optarg); break;
		case 'R': ready = optarg; break;
		case 'V': valblk = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!ls || procs < 1 || names < 1 || names > MAX_NAMES ||
	    read_names > MAX_NAMES || pct_ex < 0 || pct_ex > 100 ||
	    strlen(prefix) > RDLM_NAME_MAX - 3) {
		usage(stderr);
		return 2;
	}
	if (read_names)
		return read_counters(ls, prefix, read_names);
	if (row) {
		if (lkmode < 0 || (!strcmp(row, "hold") && ops > MAX_HOLD)) {
			usage(stderr);
			return 2;
		}
		c = run_row(ls, row, prefix, ops ? ops : 100, lkmode, me, ready,
			    valblk);
		if (c == 2)
			usage(stderr);
		return c;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	v0 = verbs_now(ls);
	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(worker(sh, ls, prefix, names, pct_ex, secs, ops,
				     getpid() ^ (unsigned int)now_ns()));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			sh->failed = 1;
	v1 = verbs_now(ls);
	nr = sh->nr < MAX_SAMPLES ? sh->nr : MAX_SAMPLES;
	qsort(sh->lat_us, nr, sizeof(sh->lat_us[0]), cmp_uint);
	for (i = 0; i < nr; i++)
		sum += sh->lat_us[i];
	printf("ops %lu ex ", sh->nr);
	for (i = 0, c = 0; (int)i < names; i++)
		c += sh->incs[i];
	printf("%d mean_us %llu p50_us %u p99_us %u verbs %llu incs", c,
	       nr ? sum / nr : 0, nr ? sh->lat_us[nr / 2] : 0,
	       nr ? sh->lat_us[nr * 99 / 100] : 0, v1 - v0);
	for (i = 0; (int)i < names; i++)
		printf("%c%llu", i ? ',' : ' ', sh->incs[i]);
	printf("\n");
	return sh->failed;
}
