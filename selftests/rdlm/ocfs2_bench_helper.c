// SPDX-License-Identifier: GPL-2.0
/*
 * ocfs2_bench_helper: the timed parts of ocfs2_bench.sh, in C so that what
 * is timed is the file system and its lock manager, not the shell's forks.
 *
 * usage: ocfs2_bench_helper pingpong DIR ME ROUNDS WARMUP
 *        ocfs2_bench_helper workload DIR ME FILES
 *        ocfs2_bench_helper check DIR NODE FILES
 *
 * pingpong, run by nodes 1 and 2 at once on the same DIR of a cluster file
 * system: in round r (0, 1, ...) node 1 (r even) or node 2 (r odd) creates
 * the empty file DIR/r<r>, and the other node stats that name until it
 * exists, then creates the next one: every step takes a lock the other
 * node holds (the directory's, the new inode's). Per round after the first
 * WARMUP, on stdout, in microseconds of CLOCK_MONOTONIC:
 *   "S create US"  open(O_CREAT | O_EXCL) and close of the round's file;
 *   "S stat US"    the stat() call that first found the other's file;
 *   "S rtt US"     from the start of this node's create to the stat that
 *                  found the other node's answer (a round trip: two
 *                  creates, each seen by the other node).
 * A name still missing 60 s after the stat loop began fails the run.
 *
 * workload: the concurrent workload of ocfs2.sh, in DIR/conc (shared by
 * every node) and DIR/cown<ME> (this node's): per directory FILES files
 * n<ME>.new<i> written (a line, then the numbers i to 40 i), appended to
 * (a line), renamed to n<ME>.f<i>, every third one deleted; then the
 * directory listed with an lstat of every name (a name another node
 * renamed or deleted meanwhile is no error). Prints "W MS", its time.
 *
 * check: what node NODE's workload left in DIR/conc and DIR/cown<NODE>,
 * read here: every kept file with its exact content, the deleted and
 * renamed names gone. Exits 1 at the first difference.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WAIT_NS (60LL * 1000000000LL)

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ocfs2_bench_helper: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long num(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0)
		die("%s: not a number: %s", what, s);
	return v;
}

static void enter(const char *dir)
{
	if (chdir(dir))
		die("chdir %s: %s", dir, strerror(errno));
}

static void pingpong(const char *dir, int me, long rounds, long warmup)
{
	char name[64];
	long long t0, t1, mine = -1;
	long r;
	int fd;

	enter(dir);
	for (r = 0; r < warmup + rounds; r++) {
		int measured = r >= warmup;

		snprintf(name, sizeof(name), "r%ld", r);
		if ((r % 2 == 0) == (me == 1)) {
			t0 = now_ns();
			fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0)
				die("create %s: %s", name, strerror(errno));
			close(fd);
			t1 = now_ns();
			if (measured)
				printf("S create %.1f\n", (t1 - t0) / 1000.0);
			mine = r >= warmup ? t0 : -1;
		} else {
			long long start = now_ns();
			struct stat st;

			for (;;) {
				t0 = now_ns();
				if (stat(name, &st) == 0)
					break;
				if (errno != ENOENT)
					die("stat %s: %s", name, strerror(errno));
				if (t0 - start > WAIT_NS)
					die("%s: not there after 60 s", name);
				sched_yield();
			}
			t1 = now_ns();
			if (measured)
				printf("S stat %.1f\n", (t1 - t0) / 1000.0);
			if (mine >= 0)
				printf("S rtt %.1f\n", (t1 - mine) / 1000.0);
		}
	}
}

/* content NODE I: what ocfs2.sh's content() prints, into buf */
static size_t content(char *buf, size_t size, int node, long i, int appended)
{
	size_t n;
	long k;

	n = snprintf(buf, size, "node%d file %ld\n", node, i);
	for (k = i; k <= 40 * i && n < size; k++)
		n += snprintf(buf + n, size - n, "%ld\n", k);
	if (appended && n < size)
		n += snprintf(buf + n, size - n, "appended by node%d\n", node);
	if (n >= size)
		die("file %ld: its content does not fit", i);
	return n;
}

static void write_file(const char *path, int flags, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | flags, 0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	if (write(fd, buf, len) != (ssize_t)len)
		die("write %s: %s", path, strerror(errno));
	if (close(fd))
		die("close %s: %s", path, strerror(errno));
}

/* list: readdir and lstat of every name of the working directory */
static void list(void)
{
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(".");

	if (!d)
		die("opendir: %s", strerror(errno));
	while ((de = readdir(d)))
		if (lstat(de->d_name, &st) && errno != ENOENT)
			die("lstat %s: %s", de->d_name, strerror(errno));
	closedir(d);
}

static void workload(const char *top, int me, long files)
{
	static char buf[1 << 20];
	char dirs[2][64], from[64], to[64];
	long long t0 = now_ns();
	size_t len, head;
	long i;
	int d;

	snprintf(dirs[0], sizeof(dirs[0]), "conc");
	snprintf(dirs[1], sizeof(dirs[1]), "cown%d", me);
	enter(top);
	for (d = 0; d < 2; d++) {
		if (mkdir(dirs[d], 0755) && errno != EEXIST)
			die("mkdir %s: %s", dirs[d], strerror(errno));
		enter(dirs[d]);
		for (i = 1; i <= files; i++) {
			snprintf(from, sizeof(from), "n%d.new%ld", me, i);
			snprintf(to, sizeof(to), "n%d.f%ld", me, i);
			head = content(buf, sizeof(buf), me, i, 0);
			len = content(buf, sizeof(buf), me, i, 1);
			write_file(from, O_CREAT | O_TRUNC, buf, head);
			write_file(from, O_APPEND, buf + head, len - head);
			if (rename(from, to))
				die("rename %s: %s", from, strerror(errno));
			if (i % 3 == 0 && unlink(to))
				die("unlink %s: %s", to, strerror(errno));
		}
		list();
		enter("..");
	}
	printf("W %lld\n", (now_ns() - t0) / 1000000);
}

static void check(const char *top, int node, long files)
{
	static char want[1 << 20], got[1 << 20];
	char dir[64], path[64];
	struct stat st;
	size_t len;
	ssize_t n;
	long i;
	int d, fd;

	enter(top);
	for (d = 0; d < 2; d++) {
		if (d == 0)
			snprintf(dir, sizeof(dir), "conc");
		else
			snprintf(dir, sizeof(dir), "cown%d", node);
		enter(dir);
		for (i = 1; i <= files; i++) {
			snprintf(path, sizeof(path), "n%d.f%ld", node, i);
			if (i % 3 == 0) {
				if (stat(path, &st) == 0)
					die("%s/%s: deleted by node%d, still here", dir, path, node);
				continue;
			}
			len = content(want, sizeof(want), node, i, 1);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				die("open %s/%s: %s", dir, path, strerror(errno));
			n = read(fd, got, sizeof(got));
			close(fd);
			if (n != (ssize_t)len || memcmp(want, got, len))
				die("%s/%s: %zd bytes, not the %zu node%d wrote",
				    dir, path, n, len, node);
		}
		snprintf(path, sizeof(path), "n%d.new1", node);
		if (stat(path, &st) == 0)
			die("%s/%s: renamed by node%d, still here", dir, path, node);
		enter("..");
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "pingpong")) {
		int me = num(argv[3], "ME");

		if (me != 1 && me != 2)
			die("pingpong: ME is 1 or 2");
		pingpong(argv[2], me, num(argv[4], "ROUNDS"), num(argv[5], "WARMUP"));
	} else if (argc == 5 && !strcmp(argv[1], "workload")) {
		workload(argv[2], num(argv[3], "ME"), num(argv[4], "FILES"));
	} else if (argc == 5 && !strcmp(argv[1], "check")) {
		check(argv[2], num(argv[3], "NODE"), num(argv[4], "FILES"));
	} else {
		fprintf(stderr, "usage: %s pingpong DIR ME ROUNDS WARMUP\n"
			"       %s workload DIR ME FILES\n"
			"       %s check DIR NODE FILES\n", argv[0], argv[0], argv[0]);
		return 2;
	}
	return 0;
}
