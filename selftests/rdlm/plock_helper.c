// SPDX-License-Identifier: GPL-2.0
/*
 * plock_helper: fcntl() byte-range locks on a file of a cluster file
 * system (OCFS2 over rdlm), for ocfs2.sh.
 *
 * usage: plock_helper FILE OP...
 *        plock_helper stress FILE SECS CELLS MAXLEN [nolock]
 *
 * The OPs run in order on one descriptor of FILE, one line of output each:
 *   set:T:START:LEN   F_SETLK,  T r, w or u (unlock); LEN 0: to the end
 *   setw:T:START:LEN  F_SETLKW
 *   get:T:START:LEN   F_GETLK: "unlocked" or "T START LEN pid PID" (a
 *                     process of another node has a negative pid)
 *   alarm:SECS        SIGALRM in SECS seconds, without SA_RESTART: a
 *                     F_SETLKW waiting then ends with EINTR
 *   ready:PATH        create PATH (the locks before are set)
 *   wait:PATH         wait until PATH exists
 *   hold              wait for SIGTERM, then exit (the close unlocks)
 * set and setw print ok or the errno's name. The first line is "pid PID".
 *
 * stress repeats for SECS seconds: F_SETLKW a random run of 1..MAXLEN of
 * CELLS cells (4 KiB each: cell c is bytes c * 4096 ... c * 4096 + 4095 of
 * FILE) for reading or writing, check it, unlock. A writer writes a token
 * of its own into each cell, waits, reads them back (another token there
 * is a violation) and writes a second one; a reader reads its cells at
 * the start and at the end (a change is a writer inside with it). The
 * tokens go to the disk and back with O_DIRECT: the page cache, whose
 * coherence between nodes rests on the file system's own cluster locks,
 * does not carry them. With RDLM_CS_DIR set, each locked cell is also a
 * critical section in the nodes' shared memory (cs_check.h). With "nolock"
 * it takes no lock: the control, which must find violations. It prints
 * "ops N rd N wr N errors N violations N cs_violations N" (the tokens',
 * the shared memory's) and exits 0 only with no error and no violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cs_check.h"
#include <sys/random.h>

#define CELL	4096

static void on_alarm(int sig)
{
	(void)sig;
}

static void on_term(int sig)
{
	(void)sig;
	_exit(0);
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "ok";
	case EAGAIN: return "EAGAIN";
	case EACCES: return "EACCES";
	case EDEADLK: return "EDEADLK";
	case EINTR: return "EINTR";
	case ENOLCK: return "ENOLCK";
	case ENOTCONN: return "ENOTCONN";
	case EINVAL: return "EINVAL";
	default: return strerror(e);
	}
}

static int lk(int fd, int cmd, int type, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = type, .l_whence = SEEK_SET,
		.l_start = start, .l_len = len,
	};

	return fcntl(fd, cmd, &fl) ? errno : 0;
}

static int op(int fd, char *s)
{
	char what[16], t;
	long long start, len;
	struct flock fl;
	int type, cmd;

	if (!strcmp(s, "hold")) {
		for (;;)
			pause();
	}
	if (!strncmp(s, "alarm:", 6)) {
		alarm(atoi(s + 6));
		return 0;
	}
	if (!strncmp(s, "wait:", 5)) {
		while (access(s + 5, F_OK))
			usleep(50000);
		return 0;
	}
	if (!strncmp(s, "ready:", 6)) {
		int rfd = open(s + 6, O_CREAT | O_WRONLY, 0644);

		if (rfd < 0)
			return 1;
		close(rfd);
		return 0;
	}
	if (sscanf(s, "%15[a-z]:%c:%lld:%lld", what, &t, &start, &len) != 4)
		return 1;
	type = t == 'r' ? F_RDLCK : t == 'w' ? F_WRLCK : F_UNLCK;
	if (!strcmp(what, "get")) {
		memset(&fl, 0, sizeof(fl));
		fl.l_type = type;
		fl.l_whence = SEEK_SET;
		fl.l_start = start;
		fl.l_len = len;
		if (fcntl(fd, F_GETLK, &fl)) {
			printf("%s: %s\n", s, err_name(errno));
		} else if (fl.l_type == F_UNLCK) {
			printf("%s: unlocked\n", s);
		} else {
			printf("%s: %c %lld %lld pid %d\n", s,
			       fl.l_type == F_WRLCK ? 'w' : 'r',
			       (long long)fl.l_start, (long long)fl.l_len,
			       (int)fl.l_pid);
		}
		fflush(stdout);
		return 0;
	}
	if (!strcmp(what, "set"))
		cmd = F_SETLK;
	else if (!strcmp(what, "setw"))
		cmd = F_SETLKW;
	else
		return 1;
	printf("%s: %s\n", s, err_name(lk(fd, cmd, type, start, len)));
	fflush(stdout);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct token {
	uint64_t who;
	uint64_t seq;
};

/* a whole cell through @buf (CELL bytes, aligned for O_DIRECT) */
static int cell_read(int fd, int c, struct token *t, void *buf)
{
	if (pread(fd, buf, CELL, (off_t)c * CELL) != CELL)
		return -1;
	memcpy(t, buf, sizeof(*t));
	return 0;
}

static int cell_write(int fd, int c, const struct token *t, void *buf)
{
	memset(buf, 0, CELL);
	memcpy(buf, t, sizeof(*t));
	return pwrite(fd, buf, CELL, (off_t)c * CELL) == CELL ? 0 : -1;
}

static int stress(const char *file, int secs, int cells, int maxlen,
		  int nolock)
{
	unsigned long ops = 0, rd = 0, wr = 0, errors = 0, violations = 0;
	unsigned long cs_violations = 0;
	struct token mine = { 0 };
	struct token seen[64];
	bool unread[64];
	struct cs_hold cs[64];
	uint64_t end = now_ms() + secs * 1000ULL;
	char cname[32];
	void *buf;
	int fd, c, e;

	if (cells < 1 || cells > 64 || maxlen < 1 || maxlen > cells)
		return 2;
	if (posix_memalign(&buf, CELL, CELL))
		return 2;
	fd = open(file, O_RDWR | O_DIRECT);
	if (fd < 0) {
		perror(file);
		return 2;
	}
	/* the guests' pids repeat: a random token tells processes apart */
	if (getrandom(&mine.who, sizeof(mine.who), 0) != sizeof(mine.who))
		return 2;
	srand(mine.who);
	while (now_ms() < end) {
		int len = 1 + rand() % maxlen;
		int first = rand() % (cells - len + 1);
		int write = rand() % 2;
		off_t s = (off_t)first * CELL, l = (off_t)len * CELL;

		e = nolock ? 0 : lk(fd, F_SETLKW, write ? F_WRLCK : F_RDLCK,
				   s, l);
		if (e) {
			fprintf(stderr, "lock %d+%d: %s\n", first, len,
				err_name(e));
			errors++;
			continue;
		}
		for (c = first; c < first + len; c++) {
			snprintf(cname, sizeof(cname), "cell%d", c);
			if (cs_enter(&cs[c], file, cname, write))
				cs_violations++;
		}
		if (write) {
			mine.seq++;
			for (c = first; c < first + len; c++)
				errors += !!cell_write(fd, c, &mine, buf);
			usleep(1000);
			for (c = first; c < first + len; c++) {
				struct token t;

				if (cell_read(fd, c, &t, buf))
					errors++;
				else if (t.who != mine.who ||
					 t.seq != mine.seq)
					violations++;
			}
			mine.seq++;
			for (c = first; c < first + len; c++)
				errors += !!cell_write(fd, c, &mine, buf);
			wr++;
		} else {
			for (c = first; c < first + len; c++) {
				unread[c] = cell_read(fd, c, &seen[c], buf);
				errors += unread[c];
			}
			usleep(1000);
			for (c = first; c < first + len; c++) {
				struct token t;

				/* a failed read is an error, never a violation */
				if (cell_read(fd, c, &t, buf))
					errors++;
				else if (!unread[c] &&
					 memcmp(&t, &seen[c], sizeof(t)))
					violations++;
			}
			rd++;
		}
		for (c = first; c < first + len; c++)
			if (cs_leave(&cs[c]))
				cs_violations++;
		e = nolock ? 0 : lk(fd, F_SETLK, F_UNLCK, s, l);
		if (e) {
			fprintf(stderr, "unlock: %s\n", err_name(e));
			errors++;
		}
		ops++;
	}
	close(fd);
	free(buf);
	printf("ops %lu rd %lu wr %lu errors %lu violations %lu cs_violations %lu\n",
	       ops, rd, wr, errors, violations, cs_violations);
	return errors || violations || cs_violations;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	int fd, i;

	if (argc >= 6 && !strcmp(argv[1], "stress"))
		return stress(argv[2], atoi(argv[3]), atoi(argv[4]),
			      atoi(argv[5]),
			      argc > 6 && !strcmp(argv[6], "nolock"));
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE OP...\n", argv[0]);
		return 2;
	}
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (i = 2; i < argc; i++) {
		if (op(fd, argv[i])) {
			fprintf(stderr, "bad op %s\n", argv[i]);
			return 2;
		}
	}
	return 0;
}
