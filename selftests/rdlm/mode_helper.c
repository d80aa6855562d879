// SPDX-License-Identifier: GPL-2.0
/*
 * mode_helper: the steps of lock_modes.sh, fs/dlm's modes and request
 * flags through /dev/rdlm.
 *
 * usage: mode_helper hold LS NAME MODE FILE
 *        mode_helper told LS NAME MODE FILE
 *        mode_helper try LS NAME MODE=WANT...
 *        mode_helper flags LS PREFIX SHARED
 *        mode_helper upconv LS NAME a|b DIR [queue]
 *
 * hold takes NAME in MODE (waiting up to 60 s), creates FILE and waits to
 * be killed. told takes NAME in MODE, creates FILE, waits up to 120 s
 * for a blocking notice, then unlocks and prints "told, MODE waited for"
 * (exit 0), or "not told" (exit 1). try makes one NOQUEUE request per MODE=WANT argument, in the
 * order given, and prints MODE=G (granted, then unlocked) or MODE=- (-EAGAIN)
 * for each, on one line. WANT is what the test expects (G or -): a "-"
 * where G was wanted is asked again for up to 5 s, because this node may
 * still be giving the lock word of the last grant back (a NOQUEUE request
 * fails while it does); a G is never asked again, so a wrong grant shows.
 *
 * flags checks, on names PREFIX-*: ALTPR (an EX request that would wait is
 * granted PR with RDLM_SBF_ALTMODE), NOORDER, HEADQUE and EXPEDITE (queue
 * order), and the up-conversion rules: with SHARED=1 (the engine takes the
 * word shared for PR) PR to EX is refused with -EDEADLK, stays PR, and
 * waits demoted with CONVDEADLK; with SHARED=0 two PR holders converting
 * up block each other: the second is refused with -EDEADLK, or waits with
 * NODLCKWT, and both are told; cancelling one lets the other in once it
 * goes down; with SHARED=2 (the engine converts a shared word in place)
 * as with 0. Exit 0 when every answer was right.
 *
 * upconv is fs/dlm's up-conversion across two nodes, one side each (an
 * engine that converts a word in place): both hold NAME in PR (DIR/held).
 * After DIR/go, a converts to EX, which waits (DIR/waiting). After DIR/go
 * on its node, b, told of a's conversion, converts too: -EDEADLK, still
 * PR; with NODLCKWT it waits and a is told; b cancels (still PR) and goes
 * down to NL; a gets EX, not demoted. With "queue" (N-CoSED, the bakery:
 * a's conversion is queued in the word and cannot give way) a is not told
 * of b's.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"

static int failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "mode_helper:%d: %s: ", __LINE__, #cond);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failed = 1;						\
	}								\
} while (0)

static int open_ls(const char *ls)
{
	int fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "mode_helper: join %s: %s\n", ls,
			strerror(-fd));
		exit(1);
	}
	return fd;
}

static int mode_of(const char *s)
{
	int mode = rdlm_mode_parse(s);

	if (mode < 0) {
		fprintf(stderr, "mode_helper: bad mode %s\n", s);
		exit(2);
	}
	return mode;
}

/* The next event of @fd within 30 s; its type, or 0 when none came. */
static unsigned int event(int fd, struct rdlm_event *ev)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	memset(ev, 0, sizeof(*ev));
	if (poll(&p, 1, 30000) != 1 || rdlm_read_event(fd, ev))
		return 0;
	return ev->type;
}

/* The next completion of @fd within 30 s (blocking notices skipped). */
static unsigned int completion(int fd, struct rdlm_event *ev)
{
	unsigned int type;

	while ((type = event(fd, ev)) == RDLM_EV_BLOCKING)
		;
	return type;
}

/* No completion on @fd for 0.3 s. */
static int quiet(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct rdlm_event ev;

	while (poll(&p, 1, 300) == 1)
		if (rdlm_read_event(fd, &ev) || ev.type != RDLM_EV_BLOCKING)
			return 0;
	return 1;
}

/* Take @name in @mode through a new file of @ls, create @file; the fd. */
static int take_and_tell(const char *ls, const char *name, int mode,
			 const char *file, uint32_t *lkid)
{
	int fd = open_ls(ls), ret;
	FILE *f;

	ret = rdlm_lock(fd, mode, name, strlen(name), 0, 60000, lkid, NULL);
	if (ret) {
		fprintf(stderr, "mode_helper: %s in %s: %s\n", name,
			rdlm_mode_name(mode), strerror(-ret));
		exit(1);
	}
	f = fopen(file, "w");
	if (!f)
		exit(1);
	fclose(f);
	return fd;
}

static int do_hold(const char *ls, const char *name, int mode,
		   const char *file)
{
	uint32_t lkid;

	take_and_tell(ls, name, mode, file, &lkid);
	pause();
	return 0;
}

static int do_told(const char *ls, const char *name, int mode,
		   const char *file)
{
	uint32_t lkid;
	int fd = take_and_tell(ls, name, mode, file, &lkid);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct rdlm_event ev;

	while (poll(&p, 1, 120000) == 1 && !rdlm_read_event(fd, &ev)) {
		if (ev.type == RDLM_EV_BLOCKING) {
			printf("told, %s waited for\n", rdlm_mode_name(ev.mode));
			rdlm_unlock(fd, lkid, NULL);
			return 0;
		}
	}
	printf("not told\n");
	return 1;
}

static void do_try(const char *ls, const char *name, int argc, char **argv)
{
	int fd = open_ls(ls), i;

	for (i = 0; i < argc; i++) {
		char *want = strchr(argv[i], '=');
		int mode, ret, tries = 0;
		uint32_t lkid;

		if (!want) {
			fprintf(stderr, "mode_helper: MODE=WANT, not %s\n",
				argv[i]);
			exit(2);
		}
		*want++ = '\0';
		mode = mode_of(argv[i]);
		for (;;) {
			ret = rdlm_lock(fd, mode, name, strlen(name),
					RDLM_LKF_NOQUEUE, 0, &lkid, NULL);
			if (ret != -EAGAIN || *want != 'G' || ++tries > 100)
				break;
			usleep(50000);
		}
		if (!ret)
			CHECK(!rdlm_unlock(fd, lkid, NULL), "unlock");
		else
			CHECK(ret == -EAGAIN, "%s: %s", argv[i],
			      strerror(-ret));
		printf("%s%s=%s", i ? " " : "", argv[i], ret ? "-" : "G");
	}
	putchar('\n');
	rdlm_close(fd);
}

static uint32_t lock_now(int fd, const char *name, int mode, uint32_t flags)
{
	uint32_t lkid = 0;
	int ret;

	ret = rdlm_lock(fd, mode, name, strlen(name), flags, 30000, &lkid,
			NULL);
	CHECK(!ret, "%s in %s: %s", name, rdlm_mode_name(mode),
	      strerror(-ret));
	return lkid;
}

static uint32_t lock_async(int fd, const char *name, int mode,
			   uint32_t flags, uint64_t user)
{
	uint32_t lkid = 0;
	int ret;

	ret = rdlm_lock_async(fd, mode, name, strlen(name), flags, 0, user,
			      &lkid);
	CHECK(!ret, "async %s in %s: %s", name, rdlm_mode_name(mode),
	      strerror(-ret));
	return lkid;
}

/* ALTPR: PR instead of an EX that would wait, said by RDLM_SBF_ALTMODE */
static void flag_altpr(const char *ls, const char *name)
{
	int a = open_ls(ls), b = open_ls(ls);
	struct rdlm_lock_info info;
	uint32_t sbf = 0, lkid = 0;
	int ret;

	lock_now(a, name, RDLM_LOCK_PR, 0);
	ret = rdlm_lock_sb(b, RDLM_LOCK_EX, name, strlen(name),
			   RDLM_LKF_ALTPR, 30000, &lkid, NULL, &sbf);
	CHECK(!ret && (sbf & RDLM_SBF_ALTMODE), "ALTPR: %d sb_flags %#x",
	      ret, sbf);
	CHECK(!rdlm_lock_info(b, lkid, &info) && info.mode == RDLM_LOCK_PR,
	      "ALTPR: mode %u", info.mode);
	/* without the flag it waits: NOQUEUE says so */
	ret = rdlm_lock(b, RDLM_LOCK_EX, name, strlen(name), RDLM_LKF_NOQUEUE,
			0, &lkid, NULL);
	CHECK(ret == -EAGAIN, "EX next to PR: %d", ret);
	/* both ALT flags: -EINVAL, as fs/dlm */
	ret = rdlm_lock(b, RDLM_LOCK_EX, name, strlen(name),
			RDLM_LKF_ALTPR | RDLM_LKF_ALTCW, 0, &lkid, NULL);
	CHECK(ret == -EINVAL, "ALTPR|ALTCW: %d", ret);
	rdlm_close(b);
	rdlm_close(a);
}

/*
 * Queue order: behind a waiting EX, a PR waits although the PR holder
 * would let it in, unless NOORDER; an NL waits too, unless EXPEDITE; a
 * HEADQUE request is granted before an earlier one.
 */
static void flag_order(const char *ls, const char *name)
{
	int a = open_ls(ls), b = open_ls(ls), c = open_ls(ls);
	struct rdlm_event ev;
	uint32_t held, lkid = 0;
	int ret;

	held = lock_now(a, name, RDLM_LOCK_PR, 0);
	lock_async(b, name, RDLM_LOCK_EX, 0, 1);
	CHECK(quiet(b), "EX next to PR granted");
	ret = rdlm_lock(c, RDLM_LOCK_PR, name, strlen(name), RDLM_LKF_NOQUEUE,
			0, &lkid, NULL);
	CHECK(ret == -EAGAIN, "PR behind a waiting EX: %d", ret);
	ret = rdlm_lock(c, RDLM_LOCK_PR, name, strlen(name),
			RDLM_LKF_NOQUEUE | RDLM_LKF_NOORDER, 0, &lkid, NULL);
	CHECK(!ret, "PR with NOORDER behind a waiting EX: %d", ret);
	if (!ret)
		rdlm_unlock(c, lkid, NULL);
	ret = rdlm_lock(c, RDLM_LOCK_NL, name, strlen(name),
			RDLM_LKF_EXPEDITE, 5000, &lkid, NULL);
	CHECK(!ret, "NL with EXPEDITE behind a waiting EX: %d", ret);
	if (!ret)
		rdlm_unlock(c, lkid, NULL);
	ret = rdlm_lock(c, RDLM_LOCK_PR, name, strlen(name),
			RDLM_LKF_EXPEDITE, 0, &lkid, NULL);
	CHECK(ret == -EINVAL, "EXPEDITE of PR: %d", ret);
	/* HEADQUE: c's EX goes before b's */
	lock_async(c, name, RDLM_LOCK_EX, RDLM_LKF_HEADQUE, 2);
	CHECK(!rdlm_unlock(a, held, NULL), "unlock");
	CHECK(completion(c, &ev) == RDLM_EV_COMPLETION && !ev.status,
	      "HEADQUE request: type %u status %d", ev.type, ev.status);
	CHECK(quiet(b), "the earlier request granted next to HEADQUE's");
	rdlm_close(c);
	CHECK(completion(b, &ev) == RDLM_EV_COMPLETION && !ev.status,
	      "earlier request: type %u status %d", ev.type, ev.status);
	rdlm_close(b);
	rdlm_close(a);
}

/* Two files of @ls, each holding @name in PR. */
static void two_readers(const char *ls, const char *name, int *a, int *b,
			uint32_t *la, uint32_t *lb)
{
	*a = open_ls(ls);
	*b = open_ls(ls);
	*la = lock_now(*a, name, RDLM_LOCK_PR, 0);
	*lb = lock_now(*b, name, RDLM_LOCK_PR, 0);
}

/* A word held shared: PR to EX is -EDEADLK, or waits demoted. */
static void flag_convdeadlk(const char *ls, const char *name)
{
	struct rdlm_lock_info info;
	struct rdlm_event ev;
	uint32_t lkid, other;
	int a, b, ret;

	two_readers(ls, name, &a, &b, &lkid, &other);
	ret = rdlm_convert(a, lkid, RDLM_LOCK_EX, 0, 0, NULL);
	CHECK(ret == -EDEADLK, "PR to EX on a shared word: %d", ret);
	CHECK(!rdlm_lock_info(a, lkid, &info) &&
	      info.state == RDLM_LKS_GRANTED && info.mode == RDLM_LOCK_PR,
	      "after -EDEADLK: state %u mode %u", info.state, info.mode);
	ret = rdlm_convert(a, lkid, RDLM_LOCK_EX,
			   RDLM_LKF_CONVDEADLK | RDLM_LKF_NOQUEUE, 0, NULL);
	CHECK(ret == -EINVAL, "CONVDEADLK with NOQUEUE: %d", ret);
	ret = rdlm_convert(a, lkid, RDLM_LOCK_EX,
			   RDLM_LKF_CONVDEADLK | RDLM_LKF_ASYNC, 0, NULL);
	CHECK(!ret, "PR to EX with CONVDEADLK: %d", ret);
	/* demoted: the other PR holder hears of it, then lets go */
	CHECK(event(b, &ev) == RDLM_EV_BLOCKING && ev.mode == RDLM_LOCK_EX,
	      "blocking notice: type %u mode %u", ev.type, ev.mode);
	CHECK(!rdlm_unlock(b, other, NULL), "unlock");
	CHECK(completion(a, &ev) == RDLM_EV_COMPLETION && !ev.status &&
	      (ev.sb_flags & RDLM_SBF_DEMOTED) && ev.mode == RDLM_LOCK_EX,
	      "demoted conversion: type %u status %d flags %#x mode %u",
	      ev.type, ev.status, ev.sb_flags, ev.mode);
	rdlm_close(b);
	rdlm_close(a);
}

/* A word held exclusive: two up-conversions, -EDEADLK or NODLCKWT. */
static void flag_nodlckwt(const char *ls, const char *name)
{
	struct rdlm_lock_info info;
	struct rdlm_event ev;
	uint32_t la, lb;
	int a, b, ret;

	two_readers(ls, name, &a, &b, &la, &lb);
	ret = rdlm_convert(a, la, RDLM_LOCK_EX, RDLM_LKF_ASYNC, 0, NULL);
	CHECK(!ret, "first up-conversion: %d", ret);
	CHECK(event(b, &ev) == RDLM_EV_BLOCKING && ev.mode == RDLM_LOCK_EX,
	      "b told: type %u mode %u", ev.type, ev.mode);
	ret = rdlm_convert(b, lb, RDLM_LOCK_EX, 0, 0, NULL);
	CHECK(ret == -EDEADLK, "second up-conversion: %d", ret);
	ret = rdlm_convert(b, lb, RDLM_LOCK_EX,
			   RDLM_LKF_NODLCKWT | RDLM_LKF_ASYNC, 0, NULL);
	CHECK(!ret, "second up-conversion with NODLCKWT: %d", ret);
	CHECK(event(a, &ev) == RDLM_EV_BLOCKING && ev.mode == RDLM_LOCK_EX,
	      "a told: type %u mode %u", ev.type, ev.mode);
	/* b gives way: cancels, goes down to NL; a gets EX */
	CHECK(!rdlm_cancel(b, lb), "cancel");
	CHECK(completion(b, &ev) == RDLM_EV_COMPLETION &&
	      ev.status == -RDLM_ECANCEL && ev.mode == RDLM_LOCK_PR,
	      "cancelled: type %u status %d mode %u", ev.type, ev.status,
	      ev.mode);
	CHECK(quiet(a), "EX granted next to PR");
	CHECK(!rdlm_convert(b, lb, RDLM_LOCK_NL, 0, 0, NULL), "down to NL");
	CHECK(completion(a, &ev) == RDLM_EV_COMPLETION && !ev.status &&
	      ev.mode == RDLM_LOCK_EX, "a: type %u status %d mode %u",
	      ev.type, ev.status, ev.mode);
	CHECK(!rdlm_lock_info(b, lb, &info) && info.mode == RDLM_LOCK_NL,
	      "b: mode %u", info.mode);
	rdlm_close(b);
	rdlm_close(a);
}

static void touch(const char *dir, const char *file)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f)
		exit(1);
	fclose(f);
}

/* Wait up to 60 s for @dir/@file. */
static void wait_for(const char *dir, const char *file)
{
	char path[256];
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
	if (access(path, F_OK)) {
		fprintf(stderr, "mode_helper: %s did not appear\n", path);
		exit(1);
	}
}

static void upconv_a(int fd, uint32_t lkid, const char *dir, bool queue)
{
	struct rdlm_event ev;

	CHECK(!rdlm_convert(fd, lkid, RDLM_LOCK_EX, RDLM_LKF_ASYNC, 0, NULL),
	      "a: PR to EX");
	CHECK(quiet(fd), "a: EX granted next to b's PR");
	touch(dir, "waiting");
	if (!queue)
		CHECK(event(fd, &ev) == RDLM_EV_BLOCKING &&
		      ev.mode == RDLM_LOCK_EX,
		      "a told of b's conversion: type %u mode %u", ev.type,
		      ev.mode);
	CHECK(completion(fd, &ev) == RDLM_EV_COMPLETION && !ev.status &&
	      ev.mode == RDLM_LOCK_EX && !(ev.sb_flags & RDLM_SBF_DEMOTED),
	      "a: type %u status %d mode %u flags %#x", ev.type, ev.status,
	      ev.mode, ev.sb_flags);
}

static void upconv_b(int fd, uint32_t lkid)
{
	struct rdlm_lock_info info;
	struct rdlm_event ev;
	int ret;

	CHECK(event(fd, &ev) == RDLM_EV_BLOCKING && ev.mode == RDLM_LOCK_EX,
	      "b told of a's conversion: type %u mode %u", ev.type, ev.mode);
	ret = rdlm_convert(fd, lkid, RDLM_LOCK_EX, 0, 0, NULL);
	CHECK(ret == -EDEADLK, "b: PR to EX while a's waits: %d", ret);
	CHECK(!rdlm_lock_info(fd, lkid, &info) &&
	      info.state == RDLM_LKS_GRANTED && info.mode == RDLM_LOCK_PR,
	      "b after -EDEADLK: state %u mode %u", info.state, info.mode);
	CHECK(!rdlm_convert(fd, lkid, RDLM_LOCK_EX,
			    RDLM_LKF_NODLCKWT | RDLM_LKF_ASYNC, 0, NULL),
	      "b: PR to EX with NODLCKWT");
	CHECK(quiet(fd), "b: EX granted next to a's PR");
	CHECK(!rdlm_cancel(fd, lkid), "b: cancel");
	CHECK(completion(fd, &ev) == RDLM_EV_COMPLETION &&
	      ev.status == -RDLM_ECANCEL && ev.mode == RDLM_LOCK_PR,
	      "b cancelled: type %u status %d mode %u", ev.type, ev.status,
	      ev.mode);
	CHECK(!rdlm_convert(fd, lkid, RDLM_LOCK_NL, 0, 0, NULL), "b: to NL");
}

static int do_upconv(const char *ls, const char *name, const char *role,
		     const char *dir, bool queue)
{
	int fd = open_ls(ls);
	uint32_t lkid = lock_now(fd, name, RDLM_LOCK_PR, 0);

	touch(dir, "held");
	wait_for(dir, "go");
	if (!strcmp(role, "a"))
		upconv_a(fd, lkid, dir, queue);
	else
		upconv_b(fd, lkid);
	rdlm_close(fd);
	return failed;
}

static void do_flags(const char *ls, const char *prefix, int shared)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-alt", prefix);
	flag_altpr(ls, name);
	snprintf(name, sizeof(name), "%s-order", prefix);
	flag_order(ls, name);
	snprintf(name, sizeof(name), "%s-convert", prefix);
	if (shared == 1)
		flag_convdeadlk(ls, name);
	else
		flag_nodlckwt(ls, name);
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], argv[3], mode_of(argv[4]), argv[5]);
	if (argc == 6 && !strcmp(argv[1], "told"))
		return do_told(argv[2], argv[3], mode_of(argv[4]), argv[5]);
	if (argc >= 5 && !strcmp(argv[1], "try")) {
		do_try(argv[2], argv[3], argc - 4, argv + 4);
		return failed;
	}
	if ((argc == 6 || (argc == 7 && !strcmp(argv[6], "queue"))) &&
	    !strcmp(argv[1], "upconv"))
		return do_upconv(argv[2], argv[3], argv[4], argv[5], argc == 7);
	if (argc == 5 && !strcmp(argv[1], "flags")) {
		do_flags(argv[2], argv[3], atoi(argv[4]));
		return failed;
	}
	fprintf(stderr, "usage: mode_helper hold|told LS NAME MODE FILE\n"
		"       mode_helper try LS NAME MODE=WANT...\n"
		"       mode_helper flags LS PREFIX SHARED\n"
		"       mode_helper upconv LS NAME a|b DIR [queue]\n");
	return 2;
}
