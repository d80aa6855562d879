// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm-bench: a mixed lock workload through librdlm, for the demo and for
 * measurements.
 *
 * usage: rdlm-bench -L LOCKSPACE [-t SECS | -n OPS] [-P PROCS] [-k NAMES]
 *                   [-x PCT] [-p PREFIX]
 *        rdlm-bench -L LOCKSPACE -r NAMES [-p PREFIX]
 *
 * PROCS processes (default 2) each repeat, for SECS seconds or OPS times:
 * pick one of NAMES resource names (PREFIX0, PREFIX1, ...) at random, lock
 * it in EX with probability PCT% (default 25) and in PR otherwise, and
 * unlock it. An EX holder increments a counter kept in the name's lock
 * value block, so a later -r can check that no increment was lost.
 * One line of results: operations, EX operations, mean / p50 / p99 lock +
 * unlock latency (us), verbs this node posted in the lockspace meanwhile,
 * and the EX increments per name. -r prints each name's counter instead.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "librdlm.h"

#define MAX_NAMES	64
#define MAX_SAMPLES	(1 << 20)

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
	int fd, ret;
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
		if (ex) {
			v = lvb_counter(lvb) + 1;
			memset(lvb, 0, sizeof(lvb));
			memcpy(lvb, &v, sizeof(v));
		}
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

static void usage(FILE *out)
{
	fprintf(out,
"Usage: rdlm-bench -L LOCKSPACE [-t SECS | -n OPS] [-P PROCS] [-k NAMES]\n"
"                  [-x PCT] [-p PREFIX]\n"
"       rdlm-bench -L LOCKSPACE -r NAMES [-p PREFIX]\n"
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
" -h            this help\n", MAX_NAMES);
}

int main(int argc, char **argv)
{
	const char *ls = NULL, *prefix = "bench-";
	int procs = 2, names = 4, pct_ex = 25, read_names = 0, c, p, status;
	unsigned long long v0, v1, sum = 0;
	double secs = 5;
	struct shared *sh;
	unsigned long nr, i;
	long ops = 0;

	while ((c = getopt(argc, argv, "L:t:n:P:k:x:p:r:h")) != -1) {
		switch (c) {
		case 'L': ls = optarg; break;
		case 't': secs = atof(optarg); break;
		case 'n': ops = atol(optarg); break;
		case 'P': procs = atoi(optarg); break;
		case 'k': names = atoi(optarg); break;
		case 'x': pct_ex = atoi(optarg); break;
		case 'p': prefix = optarg; break;
		case 'r': read_names = atoi(optarg); break;
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
