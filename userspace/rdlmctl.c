// SPDX-License-Identifier: GPL-2.0
/*
 * rdlmctl: configure the rdlm lock manager and take cluster locks from
 * scripts. See rdlmctl(8) and `rdlmctl --help`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "librdlm.h"

#define CFS		"/sys/kernel/config/rdlm"
#define DBG		"/sys/kernel/debug/rdlm"
#define DEFAULT_CONF	"/etc/rdlm/cluster.conf"
#define MAX_ITEMS	1024
#define LINE_MAX_LEN	4096

static const char *prog = "rdlmctl";

static void usage(FILE *out)
{
	fprintf(out,
"Usage:\n"
" rdlmctl configure [-f FILE] [-l NODE] [-N MAXID] up|down\n"
" rdlmctl list\n"
" rdlmctl status [LOCKSPACE...]\n"
" rdlmctl dump LOCKSPACE\n"
" rdlmctl join LOCKSPACE [KEY=VALUE...]\n"
" rdlmctl leave LOCKSPACE\n"
" rdlmctl fence-ack LOCKSPACE NODEID\n"
" rdlmctl lock [options] [-L LOCKSPACE] NAME [--] COMMAND [ARG...]\n"
" rdlmctl version\n"
"\n"
"Configure the rdlm distributed lock manager on this node and run commands\n"
"under cluster-wide locks.\n"
"\n"
"Commands:\n"
" configure    create the nodes and lockspaces of a cluster description\n"
"              file in configfs and enable them (up), or take every\n"
"              lockspace down and remove the configuration (down)\n"
" list         list the lockspaces configured on this node\n"
" status       show configuration and counters of lockspaces\n"
" dump         print this node's counters and lock dump of a lockspace\n"
"              (" DBG "/ls/LOCKSPACE)\n"
" join         create and enable one lockspace on this node; KEY=VALUE\n"
"              pairs set its configfs attributes (members=1,2,3 engine=dqnl)\n"
" leave        disable and remove one lockspace on this node\n"
" fence-ack    tell the lockspace that a departed node is fenced (powered\n"
"              off or reset): recover its locks now (rdlm_controld does it\n"
"              after its fence agent succeeded; fencing 0: after the grace)\n"
" lock         hold a lock on resource NAME while COMMAND runs, like flock(1)\n"
" version      print the program's and the kernel's ABI versions\n"
"\n"
"Options of configure:\n"
" -f, --file FILE     cluster description (default " DEFAULT_CONF ")\n"
" -l, --local NODE    name of this node in FILE (default $RDLM_NODE_NAME,\n"
"                     else the host name)\n"
" -N, --max-id MAXID  ignore nodes with a larger id (default $RDLM_NODES)\n"
"\n"
"Options of lock:\n"
" -s, --shared          take a shared (PR) lock\n"
" -x, -e, --exclusive   take an exclusive (EX) lock (the default)\n"
" -m, --mode MODE       take MODE: NL, CR, CW, PR, PW or EX\n"
" -n, --nonblock        fail rather than wait if the lock is held\n"
" -w, --timeout SECS    fail if the lock is not granted within SECS\n"
"                       (fractions allowed; 0 is --nonblock)\n"
" -E, --conflict-exit-code CODE\n"
"                       exit status when -n or -w fail (default 1)\n"
" -o, --close           do not let COMMAND inherit the lock's descriptor\n"
" -r, --range START-END lock only the units START to END of NAME (PR or\n"
"                       EX, on a lockspace of engine rangeseg or rangecomb)\n"
" -L, --lockspace NAME  lockspace (default $RDLM_LOCKSPACE)\n"
"\n"
" -h, --help            display this help\n"
" -V, --version         display version\n"
"\n"
"The lock belongs to an open descriptor of /dev/rdlm: it is released when\n"
"COMMAND and rdlmctl have both exited (with -o: when rdlmctl has), however\n"
"they end. The exit status of lock is that of COMMAND (128+N if it was\n"
"killed by signal N).\n"
"\n"
"The cluster description has one entry per line ('#' starts a comment):\n"
"  node NAME NODEID ADDRESS [PORT]\n"
"  lockspace NAME KEY=VALUE...   (configfs attributes; members=all means\n"
"                                every node listed)\n"
"\n"
"See rdlmctl(8).\n");
}

static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Write one configfs attribute; loud on failure. */
static int put(const char *dir, const char *name, const char *attr,
	       const char *val)
{
	char path[PATH_MAX];
	int fd, len = strlen(val);

	snprintf(path, sizeof(path), CFS "/%s/%s/%s", dir, name, attr);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (write(fd, val, len) != len) {
		err("%s <- '%s' refused: %s", path, val, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int read_attr(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		buf[0] = '\0';
		return -1;
	}
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CFS "/%s/%s", dir, name);
	if (mkdir(path, 0755) && errno != EEXIST) {
		err("mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int need_configfs(void)
{
	if (access(CFS, F_OK)) {
		err(CFS " missing (is the rdlm module loaded?)");
		return -1;
	}
	return 0;
}

/* Apply KEY=VALUE pairs to lockspace @name and enable it. */
static int ls_up(const char *name, char **kvs, int n, const char *all)
{
	char key[256];
	int i;

	if (make_dir("lockspaces", name))
		return -1;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(kvs[i], '=');
		const char *val;

		if (!eq || eq == kvs[i] || eq - kvs[i] >= (int)sizeof(key)) {
			err("lockspace %s: '%s' is not KEY=VALUE", name, kvs[i]);
			return -1;
		}
		memcpy(key, kvs[i], eq - kvs[i]);
		key[eq - kvs[i]] = '\0';
		val = eq + 1;
		if (!strcmp(key, "members") && !strcmp(val, "all")) {
			if (!all) {
				err("lockspace %s: members=all needs a description file",
				    name);
				return -1;
			}
			val = all;
		}
		if (strchr(key, '/') || !strcmp(key, "enable")) {
			err("lockspace %s: bad attribute '%s'", name, key);
			return -1;
		}
		if (put("lockspaces", name, key, val))
			return -1;
	}
	return put("lockspaces", name, "enable", "1");
}

static int ls_down(const char *name)
{
	char path[PATH_MAX];
	int ret = 0;

	snprintf(path, sizeof(path), CFS "/lockspaces/%s", name);
	if (access(path, F_OK)) {
		err("no lockspace %s", name);
		return -1;
	}
	ret = put("lockspaces", name, "enable", "0");
	if (rmdir(path)) {
		err("rmdir %s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}

/* Names of the entries of a configfs or debugfs directory, sorted. */
static int list_dir(const char *path, char ***names)
{
	struct dirent **ents;
	int n, i, k = 0;

	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0)
		return -1;
	*names = calloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && *names)
			(*names)[k++] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return *names ? k : -1;
}

static void free_names(char **names, int n)
{
	while (n-- > 0)
		free(names[n]);
	free(names);
}

struct conf_node {
	char name[128];
	unsigned long id;
	char addr[64];
	char port[16];
};

static int cmd_configure(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "local", required_argument, NULL, 'l' },
		{ "max-id", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *file = DEFAULT_CONF, *local = getenv("RDLM_NODE_NAME");
	unsigned long maxid = ULONG_MAX;
	static struct conf_node nodes[MAX_ITEMS];
	static char *ls_lines[MAX_ITEMS];
	char host[256], line[LINE_MAX_LEN], all[LINE_MAX_LEN] = "";
	int nr_nodes = 0, nr_ls = 0, lineno = 0, c, i, ret = 0;
	FILE *f;

	if (getenv("RDLM_NODES"))
		maxid = strtoul(getenv("RDLM_NODES"), NULL, 10);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:l:N:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': file = optarg; break;
		case 'l': local = optarg; break;
		case 'N': maxid = strtoul(optarg, NULL, 10); break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind != argc - 1 ||
	    (strcmp(argv[optind], "up") && strcmp(argv[optind], "down"))) {
		err("configure: up or down?");
		return 2;
	}
	if (!local) {
		gethostname(host, sizeof(host));
		host[sizeof(host) - 1] = '\0';
		local = host;
	}
	if (need_configfs())
		return 1;

	if (!strcmp(argv[optind], "down")) {
		char **names;
		int n;

		n = list_dir(CFS "/lockspaces", &names);
		for (i = 0; i < n; i++)
			if (ls_down(names[i]))
				ret = 1;
		if (n > 0)
			free_names(names, n);
		n = list_dir(CFS "/nodes", &names);
		for (i = 0; i < n; i++) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), CFS "/nodes/%s", names[i]);
			if (rmdir(path)) {
				err("rmdir %s: %s", path, strerror(errno));
				ret = 1;
			}
		}
		if (n > 0)
			free_names(names, n);
		return ret;
	}

	f = fopen(file, "r");
	if (!f) {
		err("%s: %s", file, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char kind[32], name[128], rest[LINE_MAX_LEN];
		int n;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		rest[0] = '\0';
		n = sscanf(line, "%31s %127s %4095[^\n]", kind, name, rest);
		if (n <= 0)
			continue;
		if (!strcmp(kind, "node") && n == 3) {
			struct conf_node *nd = &nodes[nr_nodes];

			nd->port[0] = '\0';
			if (nr_nodes == MAX_ITEMS ||
			    sscanf(rest, "%lu %63s %15s", &nd->id, nd->addr,
				   nd->port) < 2)
				goto bad;
			snprintf(nd->name, sizeof(nd->name), "%s", name);
			if (nd->id > maxid)
				continue;
			nr_nodes++;
			snprintf(all + strlen(all), sizeof(all) - strlen(all),
				 "%s%lu", strlen(all) ? "," : "", nd->id);
		} else if (!strcmp(kind, "lockspace") && n >= 2 &&
			   nr_ls < MAX_ITEMS) {
			char *l = malloc(strlen(name) + strlen(rest) + 2);

			if (!l)
				goto bad;
			sprintf(l, "%s %s", name, rest);
			ls_lines[nr_ls++] = l;
		} else {
			goto bad;
		}
	}
	fclose(f);

	for (i = 0; i < nr_nodes && !ret; i++) {
		struct conf_node *nd = &nodes[i];
		char id[24];

		snprintf(id, sizeof(id), "%lu", nd->id);
		if (make_dir("nodes", nd->name) ||
		    put("nodes", nd->name, "nodeid", id) ||
		    put("nodes", nd->name, "address", nd->addr) ||
		    (nd->port[0] && put("nodes", nd->name, "port", nd->port)) ||
		    put("nodes", nd->name, "local",
			strcmp(nd->name, local) ? "0" : "1"))
			ret = 1;
	}
	for (i = 0; i < nr_ls; i++) {
		char *kvs[64], *save, *tok, *name;
		int n = 0;

		name = strtok_r(ls_lines[i], " \t", &save);
		while ((tok = strtok_r(NULL, " \t", &save)) && n < 64)
			kvs[n++] = tok;
		if (!ret && ls_up(name, kvs, n, all))
			ret = 1;
		free(ls_lines[i]);
	}
	return ret;
bad:
	fclose(f);
	err("%s:%d: bad line '%s'", file, lineno, line);
	for (i = 0; i < nr_ls; i++)
		free(ls_lines[i]);
	return 1;
}

static int cmd_list(void)
{
	static const char *const attrs[] = { "engine", "atomic_mode", "members",
					     "enable" };
	char **names, path[PATH_MAX], val[256];
	unsigned int a;
	int n, i;

	if (need_configfs())
		return 1;
	n = list_dir(CFS "/lockspaces", &names);
	if (n < 0) {
		err(CFS "/lockspaces: %s", strerror(errno));
		return 1;
	}
	printf("%-24s %-8s %-6s %-16s %s\n", "LOCKSPACE", "ENGINE", "ATOMIC",
	       "MEMBERS", "ENABLED");
	for (i = 0; i < n; i++) {
		printf("%-24s", names[i]);
		for (a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			snprintf(path, sizeof(path), CFS "/lockspaces/%s/%s",
				 names[i], attrs[a]);
			if (read_attr(path, val, sizeof(val)))
				snprintf(val, sizeof(val), "-");
			printf(" %-*s", a == 0 ? 8 : a == 1 ? 6 : a == 2 ? 16 : 0,
			       val);
		}
		putchar('\n');
	}
	free_names(names, n);
	return 0;
}

static void print_stats(const char *name)
{
	static const char *const verbs[] = { "FA", "CAS", "READ", "WRITE_IMM",
					     "SEND" };
	struct rdlm_ls_stats st;
	unsigned int v;
	int fd, ret;

	fd = rdlm_open(name, RDLM_OPEN_CLOEXEC);
	if (fd < 0) {
		printf("  counters:     unavailable (%s)\n", strerror(-fd));
		return;
	}
	ret = rdlm_ls_stats(fd, &st);
	rdlm_close(fd);
	if (ret) {
		printf("  counters:     unavailable (%s)\n", strerror(-ret));
		return;
	}
	printf("  requests:     %llu (granted %llu, locally %llu, failed %llu, cancelled %llu)\n",
	       (unsigned long long)st.requests, (unsigned long long)st.grants,
	       (unsigned long long)st.local_grants,
	       (unsigned long long)st.fails, (unsigned long long)st.cancels);
	printf("  unlocks:      %llu, blocking notices %llu, lost %llu, locks now %llu\n",
	       (unsigned long long)st.unlocks, (unsigned long long)st.basts,
	       (unsigned long long)st.lost, (unsigned long long)st.locks);
	printf("  verbs:       ");
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		printf(" %s %llu", verbs[v], (unsigned long long)st.verbs[v]);
	putchar('\n');
}

/*
 * The membership file: "EPOCH QUORATE NODEID..." as rdlm_controld wrote
 * it, then "state ...", "departed ...", "recovering ...", "recoveries N".
 */
static void print_membership(const char *name)
{
	char path[PATH_MAX], val[4096], *line, *save;
	unsigned int epoch, quorate;
	int off = 0;

	snprintf(path, sizeof(path), CFS "/lockspaces/%s/membership", name);
	if (read_attr(path, val, sizeof(val)) || !val[0])
		return;
	line = strtok_r(val, "\n", &save);
	if (line && sscanf(line, "%u %u %n", &epoch, &quorate, &off) == 2)
		printf("  %-13s %u, %s, members %s\n", "epoch:", epoch,
		       quorate ? "quorate" : "NOT QUORATE", line + off);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *sp = strchr(line, ' ');

		if (!sp)
			sp = line + strlen(line);
		printf("  %-13.*s %s\n", (int)(sp - line) + 1, line,
		       *sp ? sp + 1 : "-");
	}
}

/* Recovery from a departed node now: an administrator fenced it. */
static int cmd_fence_ack(int argc, char **argv)
{
	char path[PATH_MAX];
	FILE *f;
	int ret;

	if (argc != 3) {
		err("fence-ack: LOCKSPACE NODEID");
		return 2;
	}
	if (need_configfs())
		return 1;
	snprintf(path, sizeof(path), CFS "/lockspaces/%s/fence_ack", argv[1]);
	f = fopen(path, "w");
	if (!f) {
		err("%s: %s", path, strerror(errno));
		return 1;
	}
	ret = fprintf(f, "%s\n", argv[2]) < 0;
	if (fclose(f) || ret) {
		err("fence-ack %s %s: %s", argv[1], argv[2],
		    errno == ENOENT ? "no such departed node waiting for recovery" :
		    strerror(errno));
		return 1;
	}
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	char **names = NULL, path[PATH_MAX], val[4096];
	char **attrs;
	int n, i, a, na;

	if (need_configfs())
		return 1;
	if (argc > 1) {
		names = argv + 1;
		n = argc - 1;
	} else {
		n = list_dir(CFS "/lockspaces", &names);
		if (n < 0) {
			err(CFS "/lockspaces: %s", strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), CFS "/lockspaces/%s", names[i]);
		na = list_dir(path, &attrs);
		if (na < 0) {
			err("no lockspace %s", names[i]);
			return 1;
		}
		printf("lockspace %s\n", names[i]);
		for (a = 0; a < na; a++) {
			snprintf(path, sizeof(path), CFS "/lockspaces/%s/%s",
				 names[i], attrs[a]);
			if (!strcmp(attrs[a], "membership"))
				continue;	/* several lines: below */
			if (!read_attr(path, val, sizeof(val)))
				printf("  %-13s %s\n", strcat(attrs[a], ":"), val);
		}
		print_membership(names[i]);
		free_names(attrs, na);
		print_stats(names[i]);
	}
	if (argc <= 1)
		free_names(names, n);
	return 0;
}

/*
 * Print a lockspace's debugfs file, DBG/ls/NAME: its counters, its
 * engine's, and one line per lock this node knows.
 */
static int cmd_dump(int argc, char **argv)
{
	char path[PATH_MAX], buf[4096];
	size_t r;
	FILE *f;

	if (argc != 2) {
		err("dump: which lockspace?");
		return 2;
	}
	snprintf(path, sizeof(path), DBG "/ls/%s", argv[1]);
	f = fopen(path, "r");
	if (!f) {
		err("%s: %s (debugfs mounted, lockspace enabled?)", path,
		    strerror(errno));
		return 1;
	}
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, r, stdout);
	fclose(f);
	return 0;
}

static int cmd_join(int argc, char **argv)
{
	if (argc < 2) {
		err("join: which lockspace?");
		return 2;
	}
	if (need_configfs())
		return 1;
	return ls_up(argv[1], argv + 2, argc - 2, NULL) ? 1 : 0;
}

static int cmd_leave(int argc, char **argv)
{
	if (argc != 2) {
		err("leave: which lockspace?");
		return 2;
	}
	if (need_configfs())
		return 1;
	return ls_down(argv[1]) ? 1 : 0;
}

static int cmd_lock(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shared", no_argument, NULL, 's' },
		{ "exclusive", no_argument, NULL, 'x' },
		{ "mode", required_argument, NULL, 'm' },
		{ "nonblock", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "conflict-exit-code", required_argument, NULL, 'E' },
		{ "close", no_argument, NULL, 'o' },
		{ "range", required_argument, NULL, 'r' },
		{ "lockspace", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *ls = getenv("RDLM_LOCKSPACE"), *name;
	int mode = RDLM_LOCK_EX, conflict = 1, cloexec = 0, c, fd, ret, status;
	uint32_t flags = 0, timeout_ms = 0, lkid;
	unsigned long long first = 0, last = 0;
	int range = 0;
	char extra;
	double secs;
	char *end;
	pid_t pid;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+sxem:nw:E:or:L:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': mode = RDLM_LOCK_PR; break;
		case 'x': case 'e': mode = RDLM_LOCK_EX; break;
		case 'm':
			mode = rdlm_mode_parse(optarg);
			if (mode < 0) {
				err("lock: bad mode '%s' (NL, CR, CW, PR, PW or EX)", optarg);
				return 2;
			}
			break;
		case 'n': flags |= RDLM_LKF_NOQUEUE; break;
		case 'w':
			secs = strtod(optarg, &end);
			if (*end || secs < 0 || secs > 4000000) {
				err("lock: bad timeout '%s'", optarg);
				return 2;
			}
			timeout_ms = (uint32_t)(secs * 1000 + 0.5);
			if (!timeout_ms)
				flags |= RDLM_LKF_NOQUEUE;
			break;
		case 'E':
			conflict = strtol(optarg, &end, 10);
			if (*end || conflict < 0 || conflict > 255) {
				err("lock: bad exit code '%s'", optarg);
				return 2;
			}
			break;
		case 'o': cloexec = 1; break;
		case 'r':
			if (sscanf(optarg, "%llu-%llu%c", &first, &last,
				   &extra) != 2 || first > last) {
				err("lock: bad range '%s' (START-END, START <= END)", optarg);
				return 2;
			}
			range = 1;
			break;
		case 'L': ls = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind >= argc) {
		err("lock: no resource name");
		return 2;
	}
	name = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		err("lock: no command");
		return 2;
	}
	if (!ls) {
		err("lock: no lockspace (-L or $RDLM_LOCKSPACE)");
		return 2;
	}
	if (!*name || strlen(name) > RDLM_NAME_MAX) {
		err("lock: resource name must have 1 to %d bytes", RDLM_NAME_MAX);
		return 2;
	}
	fd = rdlm_open(ls, cloexec ? RDLM_OPEN_CLOEXEC : 0);
	if (fd < 0) {
		err("lockspace %s: %s", ls, strerror(-fd));
		return 1;
	}
	if (range)
		ret = rdlm_range_lock(fd, mode, name, strlen(name), first, last,
				      flags, timeout_ms, 0, &lkid);
	else
		ret = rdlm_lock(fd, mode, name, strlen(name), flags,
				timeout_ms, &lkid, NULL);
	if (ret == -EAGAIN || ret == -ETIMEDOUT) {
		err("%s: %s", name, ret == -EAGAIN ? "held elsewhere" :
		    "timed out waiting");
		return conflict;
	}
	if (ret) {
		err("%s: %s", name, strerror(-ret));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		err("fork: %s", strerror(errno));
		return 1;
	}
	if (!pid) {
		execvp(argv[optind], argv + optind);
		err("%s: %s", argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err("waitpid: %s", strerror(errno));
			return 1;
		}
	}
	rdlm_unlock(fd, lkid, NULL);
	rdlm_close(fd);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int cmd_version(void)
{
	int fd = open(RDLM_DEVICE, O_RDWR | O_CLOEXEC), abi;

	printf("rdlmctl %s, ABI %d", RDLMCTL_VERSION, RDLM_ABI_VERSION);
	if (fd < 0) {
		printf(", kernel: %s\n", strerror(errno));
		return 1;
	}
	abi = rdlm_abi_version(fd);
	close(fd);
	if (abi < 0)
		printf(", kernel: %s\n", strerror(-abi));
	else
		printf(", kernel ABI %d\n", abi);
	return abi == RDLM_ABI_VERSION ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version"))
		cmd = "version";
	argc--;
	argv++;
	if (!strcmp(cmd, "configure"))
		return cmd_configure(argc, argv);
	if (!strcmp(cmd, "list") || !strcmp(cmd, "ls"))
		return cmd_list();
	if (!strcmp(cmd, "status"))
		return cmd_status(argc, argv);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc, argv);
	if (!strcmp(cmd, "join"))
		return cmd_join(argc, argv);
	if (!strcmp(cmd, "leave"))
		return cmd_leave(argc, argv);
	if (!strcmp(cmd, "fence-ack"))
		return cmd_fence_ack(argc, argv);
	if (!strcmp(cmd, "lock"))
		return cmd_lock(argc, argv);
	if (!strcmp(cmd, "version"))
		return cmd_version();
	err("unknown command '%s' (see --help)", cmd);
	return 2;
}
