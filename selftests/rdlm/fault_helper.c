// SPDX-License-Identifier: GPL-2.0
/*
 * fault_helper: the lock workload of the fault tests, through /dev/rdlm.
 *
 * usage: fault_helper count LS PREFIX NAMES SECS TIMEOUT_MS
 *        fault_helper read LS PREFIX NAMES TIMEOUT_MS
 *        fault_helper hold LS NAME FILE
 *        fault_helper wait LS NAME TIMEOUT_MS
 *        fault_helper events LS FILE
 *        fault_helper control LS NAME SECS
 *
 * count repeats for SECS seconds (or until SIGTERM, which interrupts a
 * waiting request): take one of NAMES names (PREFIX0, ...)
 * in EX with the LVB and a timeout of TIMEOUT_MS, add one to the counter
 * in its LVB and unlock, writing it back. Failures are expected while a
 * fault lasts; what must hold is that every call returns, and that an
 * increment whose unlock succeeded reached the home. One line per name:
 *
 *   name N ok K werr W invalid I
 *
 * (K increments acknowledged, W unlocks that failed after writing the
 * LVB: their increment may or may not have landed; I grants that said
 * RDLM_SBF_VALNOTVALID), then "violations V" (see RDLM_CS_DIR below) and
 * one summary line:
 *
 *   calls C lockerr E max_lock_ms L max_unlock_ms U errors ERRNO:COUNT,...
 *
 * With RDLM_COUNT_LOG=FILE, count also logs every write it made (see
 * count()), for an exact check of the values across epochs.
 *
 * read takes every name in PR with the LVB and prints "name N value V
 * valid|invalid epoch E"; it exits non-zero if any lock fails.
 *
 * hold takes NAME in EX, creates FILE and waits to be killed; when the
 * lock is reported lost, it creates FILE.lost. wait asks for NAME in EX
 * with a timeout and the LVB, prints "status ERRNO ms T" (0 when granted;
 * T the milliseconds the call took) and, if granted, " lvb valid" or
 * " lvb invalid" (RDLM_SBF_VALNOTVALID), unlocks and exits 0 if it was
 * granted, 1 if not.
 *
 * control is the critical-section check's own check: for SECS seconds it
 * enters and leaves NAME's section in EX without taking any lock, and
 * prints "violations V"; run on two nodes at once it must find some.
 *
 * events joins LS for its membership events and appends one line per
 * event to FILE until killed: "prep", "slot NODEID", "done EPOCH MEMBERS".
 *
 * With RDLM_CS_DIR set (the test cluster's output directory), count, hold
 * and wait check mutual exclusion without the lock manager's help, in the
 * cluster's shared memory (cs_check.h): once granted they enter the name's
 * critical section and leave it before they unlock, when the lock is
 * reported lost or when SIGTERM ends them. Another holder inside is
 * reported on stderr ("VIOLATION") and the helper exits 3 (count at its
 * end, having counted them).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"
#include "cs_check.h"

#define MAX_NAMES	16
#define MAX_ERRNO	200

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * EX or PR on @name with the LVB, whose first 8 bytes are @value: a
 * counter, and the next 8 its epoch (count's).
 */
static int lvb_lock(int fd, const char *name, int mode, unsigned int ms,
		    uint32_t *lkid, uint64_t value[2], uint32_t *sb_flags)
{
	uint8_t lvb[RDLM_LVB_MAX];
	int ret;

	ret = rdlm_lock_sb(fd, mode, name, strlen(name), RDLM_LKF_VALBLK, ms,
			   lkid, lvb, sb_flags);
	if (!ret)
		memcpy(value, lvb, 2 * sizeof(*value));
	return ret;
}

/* the one critical section this process is in (cs_check.h) */
static struct cs_hold cs;

static volatile sig_atomic_t count_stop;

static void count_term(int sig)
{
	(void)sig;
	count_stop = 1;
}

static void hold_term(int sig)
{
	(void)sig;
	cs_leave_all();
	_exit(0);
}

/*
 * Lock and unlock random names in EX, counting in their LVBs; each grant
 * enters the name's critical section (RDLM_CS_DIR) until just before its
 * unlock: another holder inside is a violation, counted, and makes it
 * exit 3. A grant that says the LVB is not valid starts a new epoch of
 * the counter (a number no other writer draws, at 1); with @log, every
 * write is a line "ack|unc NAME EPOCH COUNT" there (unc: its unlock
 * failed, it may or may not have landed).
 */
static int count(int fd, const char *ls, const char *prefix, int names,
		 double secs, unsigned int ms, FILE *log)
{
	const char *node = getenv("RDLM_NODE_ID");
	uint64_t epoch_base = (uint64_t)(node ? atoi(node) : 0) << 56 |
			      (uint64_t)getpid() << 32, epochs = 0;
	unsigned long ok[MAX_NAMES] = { 0 }, werr[MAX_NAMES] = { 0 };
	unsigned long inval[MAX_NAMES] = { 0 }, errs[MAX_ERRNO] = { 0 };
	unsigned long lerr[MAX_NAMES] = { 0 };
	unsigned long long end = now_ms() + secs * 1000, t0, dt;
	unsigned long long max_lock = 0, max_unlock = 0;
	unsigned long calls = 0, lockerr = 0, violations = 0;
	unsigned int seed = getpid();
	char name[RDLM_NAME_MAX + 1];
	uint8_t lvb[RDLM_LVB_MAX];
	uint32_t lkid, sbf;
	uint64_t v[2];
	int n, ret, sep;

	while (now_ms() < end && !count_stop) {
		n = rand_r(&seed) % names;
		snprintf(name, sizeof(name), "%s%d", prefix, n);
		calls++;
		t0 = now_ms();
		ret = lvb_lock(fd, name, RDLM_LOCK_EX, ms, &lkid, v, &sbf);
		dt = now_ms() - t0;
		if (dt > max_lock)
			max_lock = dt;
		if (ret) {
			lockerr++;
			lerr[n]++;
			errs[-ret < MAX_ERRNO ? -ret : 0]++;
			usleep(50000);	/* an unreachable home answers at once */
			continue;
		}
		if (sbf & RDLM_SBF_VALNOTVALID) {
			inval[n]++;
			v[0] = 0;
			v[1] = epoch_base | ++epochs;
		}
		if (cs_enter(&cs, ls, name, 1))
			violations++;
		if (cs_leave(&cs))
			violations++;
		v[0]++;
		memset(lvb, 0, sizeof(lvb));
		memcpy(lvb, v, sizeof(v));
		t0 = now_ms();
		ret = rdlm_unlock(fd, lkid, lvb);
		dt = now_ms() - t0;
		if (dt > max_unlock)
			max_unlock = dt;
		if (ret) {
			werr[n]++;
			errs[-ret < MAX_ERRNO ? -ret : 0]++;
		} else {
			ok[n]++;
		}
		if (log)
			fprintf(log, "%s %d %llx %llu\n", ret ? "unc" : "ack", n,
				(unsigned long long)v[1],
				(unsigned long long)v[0]);
	}
	if (log)
		fclose(log);
	for (n = 0; n < names; n++)
		printf("name %d ok %lu werr %lu invalid %lu lerr %lu\n", n,
		       ok[n], werr[n], inval[n], lerr[n]);
	printf("violations %lu\n", violations);
	printf("calls %lu lockerr %lu max_lock_ms %llu max_unlock_ms %llu errors",
	       calls, lockerr, max_lock, max_unlock);
	for (n = 0, sep = ' '; n < MAX_ERRNO; n++) {
		if (errs[n]) {
			printf("%c%d:%lu", sep, n, errs[n]);
			sep = ',';
		}
	}
	printf("%s\n", sep == ' ' ? " none" : "");
	return violations ? 3 : 0;
}

static int read_all(int fd, const char *prefix, int names, unsigned int ms)
{
	char name[RDLM_NAME_MAX + 1];
	uint32_t lkid, sbf;
	uint64_t v[2];
	int n, ret, rc = 0;

	for (n = 0; n < names; n++) {
		snprintf(name, sizeof(name), "%s%d", prefix, n);
		ret = lvb_lock(fd, name, RDLM_LOCK_PR, ms, &lkid, v, &sbf);
		if (ret) {
			printf("name %d lock %s\n", n, strerror(-ret));
			rc = 1;
			continue;
		}
		printf("name %d value %llu %s epoch %llx\n", n,
		       (unsigned long long)v[0],
		       sbf & RDLM_SBF_VALNOTVALID ? "invalid" : "valid",
		       (unsigned long long)v[1]);
		ret = rdlm_unlock(fd, lkid, NULL);
		if (ret) {
			printf("name %d unlock %s\n", n, strerror(-ret));
			rc = 1;
		}
	}
	return rc;
}

static int hold(int fd, const char *ls, const char *name, const char *file)
{
	char lost[4200];
	struct rdlm_event ev;
	uint32_t lkid, sbf;
	uint64_t v[2];
	FILE *f;
	int ret;

	signal(SIGTERM, hold_term);
	ret = lvb_lock(fd, name, RDLM_LOCK_EX, 0, &lkid, v, &sbf);
	if (ret) {
		fprintf(stderr, "fault_helper: hold %s: %s\n", name,
			strerror(-ret));
		return 1;
	}
	if (cs_enter(&cs, ls, name, 1)) {
		cs_leave(&cs);
		return 3;
	}
	f = fopen(file, "w");
	if (!f)
		return 1;
	fclose(f);
	while (!rdlm_read_event(fd, &ev)) {
		if (ev.type != RDLM_EV_COMPLETION || ev.lkid != lkid ||
		    !(ev.sb_flags & RDLM_SBF_LOST))
			continue;
		if (cs_leave(&cs))
			return 3;
		snprintf(lost, sizeof(lost), "%s.lost", file);
		f = fopen(lost, "w");
		if (f)
			fclose(f);
	}
	for (;;)
		pause();
}

static int wait_lock(int fd, const char *ls, const char *name,
		     unsigned int ms)
{
	unsigned long long t0 = now_ms();
	uint32_t lkid, sbf;
	uint64_t v[2];
	int ret;

	ret = lvb_lock(fd, name, RDLM_LOCK_EX, ms, &lkid, v, &sbf);
	printf("status %d ms %llu%s\n", -ret, now_ms() - t0,
	       ret ? "" : sbf & RDLM_SBF_VALNOTVALID ? " lvb invalid" :
	       " lvb valid");
	fflush(stdout);
	if (ret)
		return 1;
	ret = cs_enter(&cs, ls, name, 1);
	if (cs_leave(&cs) || ret)
		return 3;
	return rdlm_unlock(fd, lkid, NULL) ? 1 : 0;
}

static int control(const char *ls, const char *name, double secs)
{
	unsigned long long end = now_ms() + secs * 1000;
	unsigned long violations = 0;

	if (!cs_on()) {
		fprintf(stderr, "fault_helper: control needs RDLM_CS_DIR\n");
		return 2;
	}
	while (now_ms() < end) {
		violations += !!cs_enter(&cs, ls, name, 1);
		violations += !!cs_leave(&cs);
	}
	printf("violations %lu\n", violations);
	return 0;
}

static int events(const char *ls, const char *file)
{
	struct rdlm_event ev;
	FILE *f;
	int fd;

	fd = rdlm_open(ls, RDLM_OPEN_CLOEXEC | RDLM_OPEN_RECOVERY);
	if (fd < 0) {
		fprintf(stderr, "fault_helper: join %s: %s\n", ls,
			strerror(-fd));
		return 1;
	}
	f = fopen(file, "a");
	if (!f)
		return 1;
	setvbuf(f, NULL, _IOLBF, 0);
	while (!rdlm_read_event(fd, &ev)) {
		if (ev.type == RDLM_EV_RECOVER_PREP)
			fprintf(f, "prep\n");
		else if (ev.type == RDLM_EV_RECOVER_SLOT)
			fprintf(f, "slot %llu %u\n",
				(unsigned long long)ev.user, ev.lkid);
		else if (ev.type == RDLM_EV_RECOVER_DONE)
			fprintf(f, "done %llu %u %u\n",
				(unsigned long long)ev.user, ev.mode, ev.lkid);
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct sigaction term = { .sa_handler = count_term };	/* no restart */
	int is_count = argc == 7 && !strcmp(argv[1], "count");
	int is_read = argc == 6 && !strcmp(argv[1], "read");
	int is_hold = argc == 5 && !strcmp(argv[1], "hold");
	int is_wait = argc == 5 && !strcmp(argv[1], "wait");
	int is_events = argc == 4 && !strcmp(argv[1], "events");
	const char *log_path;
	int fd, names = 1;
	FILE *log;

	if (is_events)
		return events(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "control"))
		return control(argv[2], argv[3], atof(argv[4]));
	if (!is_count && !is_read && !is_hold && !is_wait) {
		fprintf(stderr,
			"usage: fault_helper count LS PREFIX NAMES SECS TIMEOUT_MS\n"
			"       fault_helper read LS PREFIX NAMES TIMEOUT_MS\n"
			"       fault_helper hold LS NAME FILE\n"
			"       fault_helper wait LS NAME TIMEOUT_MS\n"
			"       fault_helper events LS FILE\n"
			"       fault_helper control LS NAME SECS\n");
		return 2;
	}
	if (is_count || is_read)
		names = atoi(argv[4]);
	if (names < 1 || names > MAX_NAMES ||
	    strlen(argv[3]) > RDLM_NAME_MAX - 3) {
		fprintf(stderr, "fault_helper: 1-%d names, short names\n",
			MAX_NAMES);
		return 2;
	}
	fd = rdlm_open(argv[2], RDLM_OPEN_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fault_helper: join %s: %s\n", argv[2],
			strerror(-fd));
		return 1;
	}
	if (is_hold)
		return hold(fd, argv[2], argv[3], argv[4]);
	if (is_wait)
		return wait_lock(fd, argv[2], argv[3], atoi(argv[4]));
	if (is_read)
		return read_all(fd, argv[3], names, atoi(argv[5]));
	/* SIGTERM ends it early, with its summary */
	sigaction(SIGTERM, &term, NULL);
	log_path = getenv("RDLM_COUNT_LOG");
	log = log_path ? fopen(log_path, "w") : NULL;
	if (log_path && !log) {
		fprintf(stderr, "fault_helper: %s: %s\n", log_path,
			strerror(errno));
		return 2;
	}
	return count(fd, argv[2], argv[3], names, atof(argv[5]),
		     atoi(argv[6]), log);
}
