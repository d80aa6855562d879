// SPDX-License-Identifier: GPL-2.0
/*
 * lock_helper: the steps of lock.sh that a shell cannot take through
 * rdlmctl: a signal interrupting a blocked request, cancelling one and a
 * conversion that waits for the holders of another node.
 *
 * usage: lock_helper eintr LS NAME
 *        lock_helper cancel LS NAME
 *        lock_helper convert LS NAME WAITING_FILE
 *        lock_helper stress LS OPS
 *        lock_helper lvb_set LS NAME VALUE
 *        lock_helper lvb_get LS NAME
 *        lock_helper lvb_hold LS NAME FILE
 *        lock_helper lvb_fill LS NAME SEED
 *        lock_helper lvb_dump LS NAME
 *        lock_helper fill LS PREFIX FILES
 *        lock_helper evfill LS NAME
 *        lock_helper wait LS NAME TIMEOUT_MS
 *
 * The first three expect NAME to be held elsewhere in a mode that blocks EX
 * (convert: held in PR, released once WAITING_FILE exists), check every
 * answer and exit 0 when all were right. stress makes OPS random requests
 * of every kind on four names through two descriptors, fails on any
 * answer that is not a documented errno for a one-node lockspace (EIO and
 * ENOTCONN are not) and when nothing was granted, and prints "stress:
 * grants G lost L answers ERRNO:COUNT,..." (L completions that reported
 * the lock lost). lvb_set writes VALUE into NAME's
 * lock value block under EX; lvb_get prints "value V valid" or "value V
 * invalid" as a PR grant reads it (RDLM_SBF_VALNOTVALID); lvb_hold takes
 * NAME in EX with the LVB, touches FILE and waits to be killed. lvb_fill
 * writes RDLM_LVB_MAX bytes SEED, SEED + 1, ... under EX; lvb_dump prints
 * the RDLM_LVB_MAX bytes a PR grant reads, in hex. The lvb_* locks time
 * out after LVB_TIMEOUT_MS (default 60000).
 *
 * fill opens FILES descriptors and, on each in turn, makes asynchronous EX
 * requests on new names PREFIX-<n> until one is refused, printing "file K:
 * N locks, then ERRNO" per file (the caps of max_locks_per_file and
 * max_locks). evfill makes asynchronous lock and unlock requests on NAME
 * without reading their completions until one is refused, printing
 * "N events, then ERRNO". wait makes one blocking EX request with
 * TIMEOUT_MS and prints "status ERRNO after MS ms".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"

static int failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "lock_helper:%d: %s: ", __LINE__, #cond);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failed = 1;						\
	}								\
} while (0)

static void on_alarm(int sig)
{
}

static int event(int fd, struct rdlm_event *ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	return rdlm_read_event(fd, ev);
}

/* a signal interrupts a blocked request: -EINTR, no lock left */
static void do_eintr(int fd, const char *name)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct rdlm_lock_info info;
	uint32_t lkid = 99;
	int ret;

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	ret = rdlm_lock(fd, RDLM_LOCK_EX, name, strlen(name), 0, 0, &lkid,
			NULL);
	CHECK(ret == -EINTR, "lock returned %d", ret);
	CHECK(lkid == 0, "lkid %u", lkid);
	CHECK(rdlm_lock_info(fd, 1, &info) == -ENOENT, "a lock was left");
	ret = rdlm_lock(fd, RDLM_LOCK_PR, name, strlen(name), RDLM_LKF_NOQUEUE,
			0, &lkid, NULL);
	CHECK(ret == -EAGAIN, "trylock returned %d: not held elsewhere?", ret);
}

/* a waiting request is cancelled: its completion says so, no lock left */
static void do_cancel(int fd, const char *name)
{
	struct rdlm_lock_info info;
	struct rdlm_event ev;
	uint32_t lkid;
	int ret;

	ret = rdlm_lock_async(fd, RDLM_LOCK_EX, name, strlen(name), 0, 0, 42,
			      &lkid);
	CHECK(!ret, "async lock returned %d", ret);
	if (ret)
		return;
	CHECK(event(fd, &ev, 300) == -ETIMEDOUT,
	      "completed at once: type %u status %d", ev.type, ev.status);
	ret = rdlm_cancel(fd, lkid);
	CHECK(!ret, "cancel returned %d", ret);
	ret = event(fd, &ev, 30000);
	CHECK(!ret, "no completion: %d", ret);
	CHECK(ev.type == RDLM_EV_COMPLETION && ev.lkid == lkid &&
	      ev.status == -RDLM_ECANCEL && ev.user == 42,
	      "event type %u lkid %u status %d user %llu", ev.type, ev.lkid,
	      ev.status, (unsigned long long)ev.user);
	CHECK(rdlm_lock_info(fd, lkid, &info) == -ENOENT, "lock left");
}

/*
 * Conversions against another node's PR holder: PR coexists, EX does not
 * (trylock -EAGAIN, timeout -ETIMEDOUT, the lock stays PR), then a waiting
 * conversion is granted once the holder leaves, and EX goes down to PR.
 */
static void do_convert(int fd, const char *name, const char *waiting)
{
	struct rdlm_lock_info info;
	struct rdlm_event ev;
	uint32_t lkid;
	int ret;

	ret = rdlm_lock(fd, RDLM_LOCK_PR, name, strlen(name), RDLM_LKF_NOQUEUE,
			0, &lkid, NULL);
	CHECK(!ret, "PR next to PR returned %d", ret);
	if (ret)
		return;
	ret = rdlm_convert(fd, lkid, RDLM_LOCK_EX, RDLM_LKF_NOQUEUE, 0, NULL);
	CHECK(ret == -EAGAIN, "NOQUEUE conversion to EX returned %d", ret);
	ret = rdlm_convert(fd, lkid, RDLM_LOCK_EX, RDLM_LKF_CONVDEADLK, 300,
			   NULL);
	CHECK(ret == -ETIMEDOUT, "conversion with timeout returned %d", ret);
	/* the old mode, or NL if the up-conversion waited demoted */
	ret = rdlm_lock_info(fd, lkid, &info);
	CHECK(!ret && info.state == RDLM_LKS_GRANTED &&
	      (info.mode == RDLM_LOCK_PR || info.mode == RDLM_LOCK_NL) &&
	      info.fails == 2, "after failed conversions: %d state %u mode %u fails %llu",
	      ret, info.state, info.mode, (unsigned long long)info.fails);
	ret = rdlm_convert(fd, lkid, RDLM_LOCK_EX,
			   RDLM_LKF_ASYNC | RDLM_LKF_CONVDEADLK, 0, NULL);
	CHECK(!ret, "async conversion returned %d", ret);
	if (ret)
		return;
	ret = rdlm_lock_info(fd, lkid, &info);
	CHECK(!ret && info.state == RDLM_LKS_CONVERTING,
	      "converting: %d state %u", ret, info.state);
	close(open(waiting, O_CREAT | O_WRONLY, 0644));
	ret = event(fd, &ev, 60000);
	CHECK(!ret && ev.type == RDLM_EV_COMPLETION && ev.status == 0 &&
	      ev.mode == RDLM_LOCK_EX, "conversion: %d type %u status %d mode %u",
	      ret, ev.type, ev.status, ev.mode);
	ret = rdlm_convert(fd, lkid, RDLM_LOCK_PR, 0, 0, NULL);
	CHECK(!ret, "down-conversion returned %d", ret);
	ret = rdlm_lock_info(fd, lkid, &info);
	CHECK(!ret && info.mode == RDLM_LOCK_PR, "mode %u", info.mode);
	CHECK(!rdlm_unlock(fd, lkid, NULL), "unlock");
}

/*
 * What a request may answer in a one-node lockspace whose leases expire
 * under it: no I/O error, no unreachable home.
 */
static int errno_ok(int e)
{
	switch (e) {
	case 0: case EINVAL: case ENOENT: case EBUSY: case EALREADY:
	case EAGAIN: case ETIMEDOUT: case EINTR: case ECANCELED: case ENOLCK:
	case EDEADLK:
		return 1;
	}
	return 0;
}

#define STRESS_ERRNOS	200

/* random requests of every kind; the lease may expire under them */
static void do_stress(const char *ls, long ops)
{
	static const char *const names[] = { "s0", "s1", "s2", "s3" };
	struct sigaction sa = { .sa_handler = on_alarm };
	char lvb[RDLM_LVB_MAX] = "stress";
	uint32_t lkids[16] = { 0 };
	unsigned int seed = getpid();
	unsigned long errs[STRESS_ERRNOS] = { 0 }, grants = 0, lost = 0;
	struct rdlm_event ev;
	int fds[2], ret = 0, e, sep;
	long i;

	sigaction(SIGALRM, &sa, NULL);
	fds[0] = rdlm_open(ls, RDLM_OPEN_NONBLOCK);
	fds[1] = rdlm_open(ls, 0);
	CHECK(fds[0] >= 0 && fds[1] >= 0, "join %s", ls);
	if (failed)
		return;
	for (i = 0; i < ops; i++) {
		int r = rand_r(&seed), fd = fds[r % 2], slot = (r >> 1) % 16;
		int mode = (r >> 5) % 4;
		const char *name = names[(r >> 7) % 4];

		switch ((r >> 9) % 8) {
		case 0:
			ualarm(20000, 0);
			ret = rdlm_lock(fd, mode, name, 2, RDLM_LKF_VALBLK,
					(r >> 12) % 20, &lkids[slot], lvb);
			ualarm(0, 0);
			break;
		case 1:
			ret = rdlm_lock_async(fd, mode, name, 2, 0, (r >> 12) % 20,
					      i, &lkids[slot]);
			break;
		case 2:
			ret = rdlm_lock(fd, mode, name, 2, RDLM_LKF_NOQUEUE, 0,
					&lkids[slot], NULL);
			break;
		case 3:
			ret = rdlm_convert(fd, lkids[slot], mode,
					   (r >> 12) % 2 ? RDLM_LKF_ASYNC :
					   RDLM_LKF_NOQUEUE, 0, NULL);
			break;
		case 4:
			ret = (r >> 12) % 2 ? rdlm_unlock(fd, lkids[slot], lvb) :
				rdlm_unlock_async(fd, lkids[slot], NULL);
			break;
		case 5:
			ret = rdlm_cancel(fd, lkids[slot]);
			break;
		case 6:
			ret = rdlm_read_event(fds[0], &ev);
			if (ret == -EAGAIN)
				ret = 0;
			else if (!ret && ev.type == RDLM_EV_COMPLETION) {
				grants += !ev.status;
				lost += !!(ev.sb_flags & RDLM_SBF_LOST);
			}
			break;
		default:
			usleep(r % 2000);
			ret = 0;
			break;
		}
		CHECK(errno_ok(-ret), "op %ld: %d", i, ret);
		if (failed)
			return;
		e = -ret < STRESS_ERRNOS ? -ret : 0;
		errs[e]++;
		/* a synchronous grant (the others come as events) */
		grants += !ret && ((r >> 9) % 8 == 0 || (r >> 9) % 8 == 2);
	}
	rdlm_close(fds[0]);
	rdlm_close(fds[1]);
	printf("stress: grants %lu lost %lu answers", grants, lost);
	for (e = 0, sep = ' '; e < STRESS_ERRNOS; e++) {
		if (errs[e]) {
			printf("%c%d:%lu", sep, e, errs[e]);
			sep = ',';
		}
	}
	printf("\n");
	CHECK(grants > 0, "no request was granted");
}

/* Take @name in @mode with the LVB, whose first 8 bytes are @value. */
static uint8_t lvb_read[RDLM_LVB_MAX];	/* the last one lvb_lock() read */

static int lvb_lock(int fd, const char *name, int mode, uint32_t *lkid,
		    uint64_t *value, uint32_t *sb_flags)
{
	uint8_t *lvb = lvb_read;
	int ret;

	const char *t = getenv("LVB_TIMEOUT_MS");

	ret = rdlm_lock_sb(fd, mode, name, strlen(name), RDLM_LKF_VALBLK,
			   t ? atoi(t) : 60000, lkid, lvb, sb_flags);
	if (!ret)
		memcpy(value, lvb, sizeof(*value));
	return ret;
}

static int do_lvb(int fd, const char *cmd, const char *name, const char *arg)
{
	uint8_t lvb[RDLM_LVB_MAX] = { 0 };
	uint32_t lkid = 0, sbf = 0;
	uint64_t v = 0;
	int ret;

	ret = lvb_lock(fd, name, strcmp(cmd, "lvb_get") &&
		       strcmp(cmd, "lvb_dump") ? RDLM_LOCK_EX : RDLM_LOCK_PR,
		       &lkid, &v, &sbf);
	CHECK(!ret, "%s %s: %s", cmd, name, strerror(-ret));
	if (ret)
		return 1;
	if (!strcmp(cmd, "lvb_get")) {
		printf("value %llu %s\n", (unsigned long long)v,
		       sbf & RDLM_SBF_VALNOTVALID ? "invalid" : "valid");
		return rdlm_unlock(fd, lkid, NULL) ? 1 : 0;
	}
	if (!strcmp(cmd, "lvb_dump")) {
		for (ret = 0; ret < RDLM_LVB_MAX; ret++)
			printf("%02x", lvb_read[ret]);
		putchar('\n');
		return rdlm_unlock(fd, lkid, NULL) ? 1 : 0;
	}
	if (!strcmp(cmd, "lvb_fill")) {
		for (ret = 0; ret < RDLM_LVB_MAX; ret++)
			lvb[ret] = (uint8_t)(strtoul(arg, NULL, 0) + ret);
		ret = rdlm_unlock(fd, lkid, lvb);
		CHECK(!ret, "unlock writing the LVB: %s", strerror(-ret));
		return failed;
	}
	if (!strcmp(cmd, "lvb_set")) {
		v = strtoull(arg, NULL, 0);
		memcpy(lvb, &v, sizeof(v));
		ret = rdlm_unlock(fd, lkid, lvb);
		CHECK(!ret, "unlock writing the LVB: %s", strerror(-ret));
		return failed;
	}
	ret = open(arg, O_CREAT | O_WRONLY, 0644);	/* lvb_hold */
	if (ret >= 0)
		close(ret);
	for (;;)
		pause();
}

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOTCONN: return "ENOTCONN";
	case ENOLCK: return "ENOLCK";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	default: return strerror(e);
	}
}

/* the caps: requests of FILES descriptors until each is refused */
static int do_fill(const char *ls, const char *prefix, int files)
{
	int fds[16], f, n, ret = 0;
	char name[64];
	uint32_t lkid;

	if (files < 1 || files > 16)
		return 2;
	for (f = 0; f < files; f++) {
		fds[f] = rdlm_open(ls, RDLM_OPEN_CLOEXEC);
		if (fds[f] < 0) {
			fprintf(stderr, "lock_helper: join %s: %s\n", ls,
				strerror(-fds[f]));
			return 1;
		}
		for (n = 0; n < 1000000; n++) {
			snprintf(name, sizeof(name), "%s-%d-%d", prefix, f, n);
			ret = rdlm_lock_async(fds[f], RDLM_LOCK_EX, name,
					      strlen(name), 0, 0, n, &lkid);
			if (ret)
				break;
		}
		printf("file %d: %d locks, then %s\n", f + 1, n,
		       errname(-ret));
	}
	fflush(stdout);
	for (f = 0; f < files; f++)
		rdlm_close(fds[f]);
	return 0;
}

/* the event cap: lock and unlock without reading the completions */
static int do_evfill(int fd, const char *name)
{
	struct rdlm_lock_info info;
	int n = 0, ret, i;
	uint32_t lkid;

	for (;;) {
		ret = rdlm_lock_async(fd, RDLM_LOCK_EX, name, strlen(name), 0,
				      0, n, &lkid);
		if (ret)
			break;
		n++;
		/* granted at once on a free name: wait for it to be */
		for (i = 0; i < 1000; i++) {
			if (rdlm_lock_info(fd, lkid, &info) ||
			    info.state == RDLM_LKS_GRANTED)
				break;
			usleep(1000);
		}
		ret = rdlm_unlock_async(fd, lkid, NULL);
		if (ret)
			break;
		n++;
		for (i = 0; i < 1000; i++) {
			if (rdlm_lock_info(fd, lkid, &info) == -ENOENT)
				break;
			usleep(1000);
		}
	}
	printf("%d events, then %s\n", n, errname(-ret));
	return 0;
}

/* one blocking request with a timeout, timed */
static int do_wait(int fd, const char *name, unsigned int timeout_ms)
{
	struct timespec a, b;
	uint32_t lkid;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = rdlm_lock(fd, RDLM_LOCK_EX, name, strlen(name), 0, timeout_ms,
			&lkid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("status %s after %ld ms\n", errname(-ret),
	       (long)((b.tv_sec - a.tv_sec) * 1000 +
		      (b.tv_nsec - a.tv_nsec) / 1000000));
	fflush(stdout);
	if (!ret)
		rdlm_unlock(fd, lkid, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: lock_helper eintr|cancel|convert LS NAME [FILE]\n"
			"       lock_helper stress LS OPS\n"
			"       lock_helper lvb_set|lvb_get|lvb_hold LS NAME [VALUE|FILE]\n");
		return 2;
	}
	if (!strcmp(argv[1], "stress")) {
		do_stress(argv[2], atol(argv[3]));
		return failed;
	}
	if (!strcmp(argv[1], "fill") && argc == 5)
		return do_fill(argv[2], argv[3], atoi(argv[4]));
	fd = rdlm_open(argv[2], RDLM_OPEN_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "lock_helper: join %s: %s\n", argv[2],
			strerror(-fd));
		return 1;
	}
	if (!strcmp(argv[1], "eintr"))
		do_eintr(fd, argv[3]);
	else if (!strcmp(argv[1], "cancel"))
		do_cancel(fd, argv[3]);
	else if (!strcmp(argv[1], "convert") && argc == 5)
		do_convert(fd, argv[3], argv[4]);
	else if (!strncmp(argv[1], "lvb_", 4))
		return do_lvb(fd, argv[1], argv[3], argc > 4 ? argv[4] : "0");
	else if (!strcmp(argv[1], "evfill"))
		return do_evfill(fd, argv[3]);
	else if (!strcmp(argv[1], "wait") && argc == 5)
		return do_wait(fd, argv[3], atoi(argv[4]));
	else
		return 2;
	rdlm_close(fd);
	return failed;
}
