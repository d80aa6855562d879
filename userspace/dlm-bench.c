// SPDX-License-Identifier: GPL-2.0
/*
 * dlm-bench: latency of Linux's own DLM (fs/dlm) through libdlm, one
 * thread, one resource name at a time, for tools/bench-dlm (which runs the
 * same rows through rdlm-bench -m on rdlm).
 *
 * usage: dlm-bench -L LOCKSPACE -m MODE [-n N] [-p NAME] [-M MODE]
 *                  [-w WHERE] [-R FILE]
 *
 * Modes:
 *   join      create (join) LOCKSPACE and leave it in the kernel
 *   leave     release LOCKSPACE (forced: other openers' locks go too)
 *   hold      lock NAME0..NAME<N-1> (NAME alone if N is 1) in -M mode
 *             (NL, PR, EX), create FILE (-R) and keep them until SIGTERM or SIGINT
 *   cold      for each of NAME0..NAME<N-1>, never locked by this node:
 *             lock EX (timed: "cold") and unlock
 *   pair      N times: lock NAME in -M mode (timed: "reacq", after the
 *             first) and unlock it (timed: "unlock"); the pair is
 *             "pair-ex" or "pair-pr"
 *   pingpong  hand NAME over in EX to and fro with a second dlm-bench
 *             -m pingpong on another node, N grants each: the holder
 *             unlocks when the other's request reaches it (its blocking
 *             AST; at its last grant at once), the waiter blocks in
 *             dlm_ls_lock_wait() and requests again right after its
 *             unlock. Each grant from this node's third on is timed from its
 *             previous grant: two hand-overs ("handover", halved), on this
 *             node's clock alone.
 *
 * Output, one line per sample and one per row, tagged -w WHERE ("remote",
 * "local", "-"):
 *   S ROW WHERE USEC
 *   C ROW WHERE OPS MSGS
 * MSGS: data segments this node sent on fs/dlm's TCP connections (port
 * 21064, read with ss) during the row, i.e. the DLM messages it sent.
 *
 * Link with -ldlm_lt: the ASTs are dispatched in this thread, by
 * dlm_ls_lock_wait() itself and by dlm_dispatch() while holding.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libdlm.h>

#define MAX_NAMES	4096
#define BAST_WAIT_MS	10000	/* the other side of a ping-pong starts late */

static volatile sig_atomic_t stop;
static int bast_seen;		/* set by on_bast(), in this thread */
static const char *where = "-";

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* data segments sent so far on fs/dlm's connections, from ss(8) */
static unsigned long long dlm_segs_out(void)
{
	unsigned long long sum = 0, v;
	char buf[4096], *p;
	FILE *f;

	f = popen("ss -tniH state established '( sport = :21064 or dport = :21064 )' 2>/dev/null",
		  "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		p = strstr(buf, "data_segs_out:");
		if (p && sscanf(p, "data_segs_out:%llu", &v) == 1)
			sum += v;
	}
	pclose(f);
	return sum;
}

static void sample(const char *row, unsigned long long ns)
{
	printf("S %s %s %.1f\n", row, where, ns / 1000.0);
}

static void count(const char *row, long ops, unsigned long long msgs)
{
	printf("C %s %s %ld %llu\n", row, where, ops, msgs);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_bast(void *arg)
{
	(void)arg;
	bast_seen = 1;
}

static int mode_parse(const char *s)
{
	if (!strcmp(s, "NL"))
		return LKM_NLMODE;
	if (!strcmp(s, "PR"))
		return LKM_PRMODE;
	if (!strcmp(s, "EX"))
		return LKM_EXMODE;
	return -1;
}

static int bench_lock(dlm_lshandle_t ls, int mode, const char *name,
		struct dlm_lksb *lksb, uint32_t flags)
{
	if (dlm_ls_lock_wait(ls, mode, lksb, flags, name, strlen(name), 0,
			     NULL, on_bast, NULL) < 0) {
		fprintf(stderr, "dlm-bench: lock %s: %s\n", name,
			strerror(errno));
		return -1;
	}
	if (lksb->sb_status) {
		fprintf(stderr, "dlm-bench: lock %s: status %d\n", name,
			lksb->sb_status);
		return -1;
	}
	return 0;
}

static int bench_unlock(dlm_lshandle_t ls, const char *name, struct dlm_lksb *lksb,
		  uint32_t flags)
{
	if (dlm_ls_unlock_wait(ls, lksb->sb_lkid, flags, lksb) < 0 ||
	    lksb->sb_status != EUNLOCK) {
		fprintf(stderr, "dlm-bench: unlock %s: %s (status %d)\n", name,
			strerror(errno), lksb->sb_status);
		return -1;
	}
	return 0;
}

static int do_hold(dlm_lshandle_t ls, const char *prefix, int n, int mode,
		   const char *ready)
{
	static struct dlm_lksb lksb[MAX_NAMES];
	char name[DLM_RESNAME_MAXLEN + 1];
	int i, fd;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), n > 1 ? "%s%d" : "%s", prefix, i);
		if (bench_lock(ls, mode, name, &lksb[i], 0))
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
		struct pollfd pfd = { .fd = dlm_ls_get_fd(ls), .events = POLLIN };

		/* basts of the held locks are read and dropped */
		if (poll(&pfd, 1, 200) > 0)
			dlm_dispatch(pfd.fd);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), n > 1 ? "%s%d" : "%s", prefix, i);
		if (bench_unlock(ls, name, &lksb[i], 0))
			return 1;
	}
	return 0;
}

static int do_cold(dlm_lshandle_t ls, const char *prefix, int n)
{
	char name[DLM_RESNAME_MAXLEN + 1];
	unsigned long long m0 = dlm_segs_out(), t0;
	struct dlm_lksb lksb;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		memset(&lksb, 0, sizeof(lksb));
		t0 = now_ns();
		if (bench_lock(ls, LKM_EXMODE, name, &lksb, 0))
			return 1;
		sample("cold", now_ns() - t0);
		if (bench_unlock(ls, name, &lksb, 0))
			return 1;
	}
	/* the unlocks' messages are in: half of a cold pair's */
	count("cold", n, dlm_segs_out() - m0);
	return 0;
}

static int do_pair(dlm_lshandle_t ls, const char *name, int n, int mode)
{
	const char *row = mode == LKM_PRMODE ? "pair-pr" : "pair-ex";
	unsigned long long m0, t0, t1, t2;
	struct dlm_lksb lksb;
	int i;

	/* the first round only warms up: this node knows the master after */
	memset(&lksb, 0, sizeof(lksb));
	if (bench_lock(ls, mode, name, &lksb, 0) || bench_unlock(ls, name, &lksb, 0))
		return 1;
	m0 = dlm_segs_out();
	for (i = 0; i < n; i++) {
		memset(&lksb, 0, sizeof(lksb));
		t0 = now_ns();
		if (bench_lock(ls, mode, name, &lksb, 0))
			return 1;
		t1 = now_ns();
		if (bench_unlock(ls, name, &lksb, 0))
			return 1;
		t2 = now_ns();
		sample(row, t2 - t0);
		if (mode == LKM_EXMODE) {
			sample("reacq", t1 - t0);
			sample("unlock", t2 - t1);
		}
	}
	count(row, n, dlm_segs_out() - m0);
	return 0;
}

/* wait for a blocking AST on the held lock; 0 if it came */
static int wait_bast(dlm_lshandle_t ls)
{
	unsigned long long end = now_ns() + BAST_WAIT_MS * 1000000ULL;
	struct pollfd pfd = { .fd = dlm_ls_get_fd(ls), .events = POLLIN };

	while (!bast_seen && now_ns() < end)
		if (poll(&pfd, 1, 100) > 0)
			dlm_dispatch(pfd.fd);
	return bast_seen ? 0 : -1;
}

static int do_pingpong(dlm_lshandle_t ls, const char *name, int n)
{
	unsigned long long m0 = dlm_segs_out(), prev = 0, t;
	struct dlm_lksb lksb;
	int i;

	for (i = 0; i < n; i++) {
		memset(&lksb, 0, sizeof(lksb));
		bast_seen = 0;
		if (bench_lock(ls, LKM_EXMODE, name, &lksb, 0))
			return 1;
		t = now_ns();
		/* the first round includes the other's start: not timed */
		if (i >= 2)
			sample("handover", (t - prev) / 2);
		prev = t;
		/* this node's last grant waits for nobody */
		if (i < n - 1 && wait_bast(ls)) {
			fprintf(stderr, "dlm-bench: %s: no blocking AST in %d s (grant %d)\n",
				name, BAST_WAIT_MS / 1000, i + 1);
			return 1;
		}
		if (bench_unlock(ls, name, &lksb, 0))
			return 1;
	}
	count("handover", n, dlm_segs_out() - m0);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: dlm-bench -L LOCKSPACE -m MODE [-n N] [-p NAME] [-M MODE] [-w WHERE]\n"
"                 [-R FILE]\n"
"Modes: join, leave, hold, cold, pair, pingpong (see the source's header).\n"
" -n N       names (hold, cold), pairs (pair) or grants (pingpong)\n"
" -p NAME    resource name, or prefix of NAME0..NAME<N-1> (default bench)\n"
" -M MODE    NL, PR or EX (hold, pair; default EX)\n"
" -w WHERE   tag of the output lines (remote, local; default -)\n"
" -R FILE    hold: created once the locks are held\n");
}

int main(int argc, char **argv)
{
	const char *lsname = NULL, *mode = NULL, *name = "bench", *ready = NULL;
	int n = 100, lkmode = LKM_EXMODE, c, ret;
	struct sigaction sa = { .sa_handler = on_signal };
	dlm_lshandle_t ls;

	while ((c = getopt(argc, argv, "L:m:n:p:M:w:R:h")) != -1) {
		switch (c) {
		case 'L':
			lsname = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'p':
			name = optarg;
			break;
		case 'M':
			lkmode = mode_parse(optarg);
			break;
		case 'w':
			where = optarg;
			break;
		case 'R':
			ready = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!lsname || !mode || n < 1 || n > MAX_NAMES || lkmode < 0 ||
	    strlen(name) > DLM_RESNAME_MAXLEN - 5) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (!strcmp(mode, "join")) {
		ls = dlm_create_lockspace(lsname, 0600);
		if (!ls) {
			fprintf(stderr, "dlm-bench: create %s: %s\n", lsname,
				strerror(errno));
			return 1;
		}
		dlm_close_lockspace(ls);
		return 0;
	}
	ls = dlm_open_lockspace(lsname);
	if (!ls) {
		fprintf(stderr, "dlm-bench: open %s: %s\n", lsname,
			strerror(errno));
		return 1;
	}
	if (!strcmp(mode, "leave"))
		return dlm_release_lockspace(lsname, ls, 1) ? 1 : 0;
	if (!strcmp(mode, "hold"))
		ret = do_hold(ls, name, n, lkmode, ready);
	else if (!strcmp(mode, "cold"))
		ret = do_cold(ls, name, n);
	else if (!strcmp(mode, "pair"))
		ret = do_pair(ls, name, n, lkmode);
	else if (!strcmp(mode, "pingpong"))
		ret = do_pingpong(ls, name, n);
	else
		ret = 2;
	if (ret == 2)
		usage(stderr);
	dlm_close_lockspace(ls);
	return ret;
}
