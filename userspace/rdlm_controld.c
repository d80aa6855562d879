// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm_controld: cluster membership for rdlm from corosync, in the manner
 * of fs/dlm's dlm_controld. For every rdlm lockspace enabled on this node
 * it joins the CPG group "rdlm:<lockspace>" and, on every configuration
 * change of the group and every change of quorum, writes
 *
 *	EPOCH QUORATE NODEID [NODEID...]
 *
 * to the lockspace's configfs file "membership". See rdlm_controld(8).
 *
 * A lockspace told it is not quorate stops in the kernel (its locks are
 * lost: the others recover from this node) and leaves its group; once this
 * node is quorate again it is restarted (disabled and enabled, from a child
 * process: disabling waits until its users let go of their lost locks) and
 * joins as a new member. So does one the kernel stopped because the others
 * fenced it. One re-created in the kernel (a new incarnation) leaves its
 * group and joins again, so that the others see it go and come back.
 *
 * The daemon ties the managed lockspaces to its life (RDLM_IOC_CONTROLD on
 * /dev/rdlm): when it exits or dies, nothing would tell them the others
 * moved on, so the kernel stops them. It writes no membership until then.
 *
 * A departed node's locks go to others only once it is fenced: the kernel
 * lists it under "fencing" in the membership file until then, and this
 * daemon runs the fence agents configured for it (fence-agents convention,
 * arguments on stdin, action=off), retrying until one succeeds, and then
 * writes its id to the lockspaces' fence_ack.
 */
#define _GNU_SOURCE	/* ppoll */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <corosync/corotypes.h>
#include <corosync/cpg.h>
#include <corosync/quorum.h>

#include <linux/rdlm.h>

#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))

#define LSDIR		"/sys/kernel/config/rdlm/lockspaces"
#define DEVICE		"/dev/rdlm"
#define PIDFILE		"/run/rdlm_controld.pid"
#define GROUP_PREFIX	"rdlm:"
#define LS_NAME_MAX	(CPG_MAX_NAME_LENGTH - sizeof(GROUP_PREFIX))
#define MAX_EXCLUDE	64
#define MAX_LS		1024
#define LEAVE_TRIES	50	/* of 100 ms: cpg_leave while corosync syncs */
#define JOIN_WARN	10	/* scans of TRY_AGAIN before we say so */
#define STALE_WARN_S	5	/* a change waiting this long for quorum */
#define INC_LEN		24	/* a kernel lockspace's incarnation, as text */
#define CONF_FILE	"/etc/rdlm/rdlm_controld.conf"
#define MAX_DEVICES	16
#define MAX_CONNECTS	256
#define MAX_ARGS	16	/* key=value arguments of a device or connect */
#define MAX_VICTIMS	64	/* a lockspace's members at most */
#define FENCE_RETRY_S	5	/* after every device of a node failed */
#define FENCE_TIMEOUT_S	300	/* an agent running longer is killed */

static const char *prog = "rdlm_controld";

/*
 * One CPG connection per lockspace: a connection joins one group at most.
 * A lockspace stays on the list after it is disabled, to keep its epoch.
 */
struct ls {
	struct ls *next;
	char name[LS_NAME_MAX + 1];
	struct cpg_name group;
	cpg_handle_t cpg;	/* 0: no connection */
	int fd;
	bool joined;
	bool enabled;		/* enabled in configfs at the last scan */
	unsigned int join_tries;
	/* the group's members as of the last confchg, sorted, unique */
	uint32_t members[CPG_MEMBERS_MAX];
	unsigned int nmembers;
	bool have_members;
	struct cpg_ring_id ring;	/* from the totem confchg */
	bool pending;		/* a change not written yet */
	time_t pending_since;
	bool stale_logged;
	uint32_t epoch;		/* last written; kept across leave and join */
	int written_quorate;	/* -1: nothing written since the join */
	bool no_file_logged;
	bool refused_logged;
	bool stopped;		/* stopped in the kernel: restart, then join */
	pid_t restart_pid;	/* the child restarting it */
	char incarnation[INC_LEN];	/* the kernel's, when we joined */
	/*
	 * nodes that left since the last write: written without them once,
	 * if they were out of a ring we saw (left_out)
	 */
	uint32_t left[CPG_MEMBERS_MAX];
	bool left_out[CPG_MEMBERS_MAX];
	unsigned int nleft;
	/* of those, the ones that left cleanly: nothing to fence */
	uint32_t clean[CPG_MEMBERS_MAX];
	unsigned int nclean;
};

static struct ls *lockspaces;
static bool ls_fencing(const char *name, uint32_t *nodes, unsigned int *n);
static quorum_handle_t qhandle;
static int qfd = -1;
static int quorate = -1;	/* -1: not known yet */
static uint64_t quorum_seq;
static bool quorum_known;
static bool quorum_free;	/* no quorum provider: always quorate */
static bool debug, foreground;
static int dev_fd = -1;		/* /dev/rdlm, RDLM_IOC_CONTROLD */
static uint32_t our_nodeid;
static const char *exclude[MAX_EXCLUDE];
static unsigned int nexclude;

/* fence devices and how nodes connect to them, from the configuration */
struct fence_device {
	char *name;
	char *agent;
	char *args[MAX_ARGS];
	unsigned int nargs;
};

struct fence_connect {
	unsigned int device;
	uint32_t node;
	char *args[MAX_ARGS];
	unsigned int nargs;
};

/* a departed node some lockspace waits to see fenced */
struct victim {
	uint32_t node;
	bool fenced;		/* an agent succeeded */
	bool none_logged;	/* no device configured: said once */
	pid_t pid;		/* the agent running, 0 if none */
	unsigned int next;	/* index in connects[] to try next */
	time_t started;
	time_t next_try;
};

static struct fence_device devices[MAX_DEVICES];
static unsigned int ndevices;
static struct fence_connect connects[MAX_CONNECTS];
static unsigned int nconnects;
static struct victim victims[MAX_VICTIMS];
static unsigned int nvictims;
/* set only inside ppoll(), a call: no volatile needed to see it after */
static sig_atomic_t stop_signal;

static void vlog(int prio, const char *fmt, va_list ap)
{
	char msg[4096];
	struct timespec ts;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	syslog(prio, "%s", msg);
	if (foreground || debug) {
		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "%lld.%03ld %s: %s\n", (long long)ts.tv_sec,
			ts.tv_nsec / 1000000, prog, msg);
	}
}

__printf(1, 2)
static void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

__printf(1, 2)
static void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

__printf(1, 2)
static void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

/* End @v's fence agent and whatever it started (its process group). */
static void fence_kill(struct victim *v)
{
	kill(-v->pid, SIGKILL);
	waitpid(v->pid, NULL, 0);
	v->pid = 0;
}

/*
 * A fence agent still running when we exit would switch a node off after
 * the daemon that asked for it, and the next one, are past caring: end it.
 */
static void fence_stop_agents(void)
{
	unsigned int i;

	for (i = 0; i < nvictims; i++) {
		if (!victims[i].pid)
			continue;
		log_info("node %u: exiting: fence agent pid %d stopped",
			 victims[i].node, (int)victims[i].pid);
		fence_kill(&victims[i]);
	}
}

/* corosync went away under us: nothing we know is true any more */
static void __noreturn lost_corosync(const char *what,
						      cs_error_t err)
{
	log_err("%s: corosync error %d: lost the connection to corosync, exiting",
		what, err);
	fence_stop_agents();
	unlink(PIDFILE);
	exit(1);
}

static bool cs_gone(cs_error_t err)
{
	return err == CS_ERR_BAD_HANDLE || err == CS_ERR_LIBRARY;
}

static bool excluded(const char *name)
{
	unsigned int i;

	for (i = 0; i < nexclude; i++)
		if (!strcmp(exclude[i], name))
			return true;
	return false;
}

static struct ls *ls_find(const char *name)
{
	struct ls *ls;

	for (ls = lockspaces; ls; ls = ls->next)
		if (!strcmp(ls->name, name))
			return ls;
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Read a lockspace's configfs attribute into @buf; false if unreadable. */
static bool ls_read_attr(const char *name, const char *attr, char *buf,
			 size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), LSDIR "/%s/%s", name, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/*
 * The epoch must keep increasing for the kernel even when this daemon
 * restarts: continue after what the kernel last accepted, if it shows it.
 */
static void ls_epoch_init(struct ls *ls)
{
	char buf[64], *end;
	unsigned long e;

	if (!ls_read_attr(ls->name, "membership", buf, sizeof(buf)))
		return;
	e = strtoul(buf, &end, 10);
	if (end != buf && e > ls->epoch && e < UINT32_MAX)
		ls->epoch = e;
}

static bool in_list(const uint32_t *list, unsigned int n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

static void list_del_id(uint32_t *list, unsigned int *n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (list[i] == id)
			list[i--] = list[--*n];
}

/*
 * Tell a lockspace that @node holds nothing of it any more; false if the
 * kernel did not take it (ENOENT: it does not wait for @node).
 */
static bool ls_fence_ack(const char *name, uint32_t node)
{
	char path[PATH_MAX], line[16];
	int fd, len;
	bool ok;

	len = snprintf(line, sizeof(line), "%u\n", node);
	snprintf(path, sizeof(path), LSDIR "/%s/fence_ack", name);
	fd = open(path, O_WRONLY);
	ok = fd >= 0 && write(fd, line, len) == len;
	if (!ok && errno != ENOENT)
		log_err("%s: fence_ack %u: %s", name, node, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A node whose daemon left the group cleanly let go of the lockspace
 * first (it left because the lockspace was disabled, stopped or
 * re-created, or the daemon closed /dev/rdlm, which stops them, before it
 * left on SIGTERM), as dlm_controld fences no node that left a lockspace:
 * acknowledged as soon as the kernel saw it depart, unless it was waiting
 * for its fencing already. (A stopped lockspace has only told its users
 * that their locks are lost; a disabled one waited for their unlocks.)
 */
static void ls_ack_clean(struct ls *ls, const uint32_t *skip,
			 unsigned int nskip, const uint32_t *pending,
			 unsigned int npending)
{
	unsigned int i;

	for (i = 0; i < ls->nclean; i++) {
		uint32_t node = ls->clean[i];

		if (in_list(ls->members, ls->nmembers, node) &&
		    !in_list(skip, nskip, node))
			continue;	/* written in: not departed */
		/* a departure before, still to be fenced, stays so */
		if (in_list(pending, npending, node))
			continue;
		if (ls_fence_ack(ls->name, node))
			log_info("%s: node %u left the group cleanly: recovered from without fencing",
				 ls->name, node);
	}
}

/*
 * Write the lockspace's membership to the kernel, and log it: the group's
 * members, less those in @skip (nodes that left and came back since the
 * last write: the kernel must see them go, or it never recovers from
 * them).
 */
static void ls_write_one(struct ls *ls, const uint32_t *skip,
			 unsigned int nskip)
{
	char path[PATH_MAX], line[16 + 11 * CPG_MEMBERS_MAX];
	uint32_t pending[MAX_VICTIMS];
	unsigned int i, npending;
	int len, fd;
	ssize_t n;

	/* who waits for fencing before this line (a clean leave acks none) */
	if (!ls->nclean || !ls_fencing(ls->name, pending, &npending))
		npending = 0;
	ls->epoch++;
	len = snprintf(line, sizeof(line), "%u %d", ls->epoch, quorate);
	for (i = 0; i < ls->nmembers; i++)
		if (!in_list(skip, nskip, ls->members[i]))
			len += snprintf(line + len, sizeof(line) - len, " %u",
					ls->members[i]);
	log_info("%s: membership %s ring %x.%" PRIx64, ls->name, line,
		 ls->ring.nodeid, ls->ring.seq);
	line[len++] = '\n';
	ls->pending = false;
	ls->stale_logged = false;
	ls->written_quorate = quorate;

	snprintf(path, sizeof(path), LSDIR "/%s/membership", ls->name);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		if (!ls->no_file_logged)
			log_info("%s: cannot open %s: %s (kernel without membership support?); only logging",
				 ls->name, path, strerror(errno));
		ls->no_file_logged = true;
		return;
	}
	/* configfs takes an attribute in one write */
	n = write(fd, line, len);
	if (n < 0 && (errno == EOPNOTSUPP || errno == ENOENT)) {
		if (!ls->refused_logged)
			log_info("%s: the kernel takes no membership here (%s): no lock manager in this lockspace?",
				 ls->name, strerror(errno));
		ls->refused_logged = true;
	} else if (n < 0 && errno == ESTALE) {
		/* stopped by an earlier quorum loss (before we started?) */
		log_info("%s: stopped in the kernel: restart when quorate",
			 ls->name);
		ls->stopped = true;
	} else if (n < 0) {
		log_err("%s: writing membership %u: %s", ls->name, ls->epoch,
			strerror(errno));
	} else if (!quorate) {
		log_info("%s: stopped on the quorum loss: leaving the group, restart when quorate",
			 ls->name);
		ls->stopped = true;
	} else if (n != len) {
		log_err("%s: short write of membership %u", ls->name,
			ls->epoch);
	} else {
		ls_ack_clean(ls, skip, nskip, pending, npending);
	}
	close(fd);
}

/*
 * Write the changes since the last write, in order: never coalesced. A
 * node that left and is back was out of a ring we were in (or its daemon
 * restarted): written gone first. One whose leave and return came with
 * no ring without it (our own partition merging back: we were the one
 * paused or cut off) is not: that is for the quorate side to say, and it
 * tells our kernel at the first contact.
 */
static void ls_write(struct ls *ls)
{
	uint32_t back[CPG_MEMBERS_MAX];
	unsigned int i, n = 0;

	for (i = 0; i < ls->nleft; i++) {
		if (!in_list(ls->members, ls->nmembers, ls->left[i]))
			continue;
		if (ls->left_out[i])
			back[n++] = ls->left[i];
		else
			log_info("%s: node %u left and came back in one ring change (a merge): not written gone",
				 ls->name, ls->left[i]);
	}
	ls->nleft = 0;
	if (n) {
		log_info("%s: %u node(s) left and came back since the last change: writing them gone first",
			 ls->name, n);
		ls_write_one(ls, back, n);
		if (ls->stopped) {
			ls->nclean = 0;
			return;
		}
	}
	ls_write_one(ls, NULL, 0);
	ls->nclean = 0;
}

/*
 * What the kernel's membership file says of the lockspace: stopped
 * ("state stopped"), and its incarnation ("incarnation X", "" if none).
 * False if it is unreadable.
 */
static bool ls_kernel_state(const char *name, bool *stopped,
			    char inc[INC_LEN])
{
	char buf[4096], *p;

	inc[0] = '\0';
	if (!ls_read_attr(name, "membership", buf, sizeof(buf)))
		return false;
	*stopped = strstr(buf, "\nstate stopped\n");
	p = strstr(buf, "\nincarnation ");
	if (p && sscanf(p + strlen("\nincarnation "), "%23s", inc) != 1)
		inc[0] = '\0';
	return true;
}

/* Does the kernel say the lockspace stopped? */
static bool ls_kernel_stopped(const char *name)
{
	char inc[INC_LEN];
	bool stopped;

	return ls_kernel_state(name, &stopped, inc) && stopped;
}

/* The child that restarts a stopped lockspace: enable 0, then 1. */
static void __noreturn restart_child(const char *name)
{
	char path[PATH_MAX];
	int fd, i;

	/* not the daemon's tie: when it goes, the lockspaces must stop */
	if (dev_fd >= 0)
		close(dev_fd);
	snprintf(path, sizeof(path), LSDIR "/%s/enable", name);
	for (i = 0; i < 2; i++) {
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, i ? "1\n" : "0\n", 2) != 2)
			_exit(1);
		close(fd);
	}
	_exit(0);
}

/*
 * A stopped lockspace: once quorate, restart it; when the restart is done,
 * it joins its group again at the next scan.
 */
static void ls_restart(struct ls *ls)
{
	int status;
	pid_t pid;

	if (ls->restart_pid) {
		pid = waitpid(ls->restart_pid, &status, WNOHANG);
		if (pid == 0)
			return;
		ls->restart_pid = 0;
		if (pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status)) {
			log_info("%s: restarted", ls->name);
			ls->stopped = false;
		} else {
			log_err("%s: restart failed, trying again", ls->name);
		}
		return;
	}
	if (quorate != 1)
		return;
	log_info("%s: quorate again: restarting the lockspace (waits for its users to unlock)",
		 ls->name);
	pid = fork();
	if (pid < 0) {
		log_err("%s: fork: %s", ls->name, strerror(errno));
		return;
	}
	if (pid == 0)
		restart_child(ls->name);
	ls->restart_pid = pid;
}

/*
 * Tie the managed lockspaces to our life: the kernel stops them when the
 * file closes, as when we die. Until it is done, nothing is written.
 */
static bool attach_kernel(void)
{
	static bool logged;
	int fd;

	if (dev_fd >= 0)
		return true;
	fd = open(DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RDLM_IOC_CONTROLD) < 0) {
		if (!logged)
			log_err("%s: %s: cannot tie the lockspaces to this daemon, writing no membership until it can",
				DEVICE, strerror(errno));
		logged = true;
		if (fd >= 0)
			close(fd);
		return false;
	}
	log_info("%s: the kernel stops the managed lockspaces if this daemon goes",
		 DEVICE);
	dev_fd = fd;
	return true;
}

/*
 * Members and quorum reach us on two connections. A change is written only
 * once the quorum service has reported on the same totem ring as the CPG
 * group (as dlm_controld waits for it): otherwise a node cut off from the
 * others could write its new, smaller membership with the quorate flag of
 * the old ring.
 */
static void flush_changes(void)
{
	time_t now = time(NULL);
	struct ls *ls;

	if (!quorum_known || !attach_kernel())
		return;
	for (ls = lockspaces; ls; ls = ls->next) {
		if (!ls->joined || !ls->pending)
			continue;
		if (quorum_free || ls->ring.seq == quorum_seq) {
			ls_write(ls);
		} else if (!ls->stale_logged &&
			   now - ls->pending_since >= STALE_WARN_S) {
			log_info("%s: change waits for quorum of ring %" PRIx64 " (quorum has %" PRIx64 ")",
				 ls->name, ls->ring.seq, quorum_seq);
			ls->stale_logged = true;
		}
	}
}

static void ls_mark_pending(struct ls *ls)
{
	if (!ls->pending)
		ls->pending_since = time(NULL);
	ls->pending = true;
}

static void confchg_cb(cpg_handle_t handle, const struct cpg_name *group,
		       const struct cpg_address *members, size_t nmembers,
		       const struct cpg_address *left, size_t nleft,
		       const struct cpg_address *joined, size_t njoined)
{
	struct ls *ls = NULL;
	unsigned int i, k, n = 0;

	(void)group;
	if (cpg_context_get(handle, (void **)&ls) != CS_OK || !ls)
		return;
	for (i = 0; i < nmembers && i < CPG_MEMBERS_MAX; i++)
		ls->members[i] = members[i].nodeid;
	qsort(ls->members, i, sizeof(ls->members[0]), cmp_u32);
	/* one node, one member, however many processes it has in the group */
	for (nmembers = i, i = 0; i < nmembers; i++)
		if (!n || ls->members[n - 1] != ls->members[i])
			ls->members[n++] = ls->members[i];
	ls->nmembers = n;
	ls->have_members = true;
	for (i = 0; i < nleft; i++) {
		uint32_t node = left[i].nodeid;

		log_debug("%s: node %u pid %u left (reason %u)", ls->name,
			  node, left[i].pid, left[i].reason);
		if (node == our_nodeid)
			continue;
		/* a daemon that went: out, whatever the ring says */
		for (k = 0; k < ls->nleft && ls->left[k] != node; k++)
			;
		if (k == ls->nleft && k < CPG_MEMBERS_MAX) {
			ls->left_out[k] = false;
			ls->left[ls->nleft++] = node;
		}
		if (k < ls->nleft && left[i].reason != CPG_REASON_NODEDOWN)
			ls->left_out[k] = true;
		/* a daemon that died or a node that failed is fenced */
		list_del_id(ls->clean, &ls->nclean, node);
		if (left[i].reason == CPG_REASON_LEAVE &&
		    ls->nclean < CPG_MEMBERS_MAX)
			ls->clean[ls->nclean++] = node;
	}
	/* a clean leave says nothing of what joined since */
	for (i = 0; i < njoined; i++) {
		log_debug("%s: node %u pid %u joined", ls->name,
			  joined[i].nodeid, joined[i].pid);
		list_del_id(ls->clean, &ls->nclean, joined[i].nodeid);
	}
	ls_mark_pending(ls);
}

static void totem_cb(cpg_handle_t handle, struct cpg_ring_id ring,
		     uint32_t nmembers, const uint32_t *members)
{
	struct ls *ls = NULL;
	unsigned int i;

	if (cpg_context_get(handle, (void **)&ls) != CS_OK || !ls)
		return;
	log_debug("%s: totem ring %x.%" PRIx64 ", %u nodes", ls->name,
		  ring.nodeid, ring.seq, nmembers);
	ls->ring = ring;
	for (i = 0; i < ls->nleft; i++)
		if (!in_list(members, nmembers, ls->left[i]))
			ls->left_out[i] = true;
}

static void quorum_cb(quorum_handle_t handle, uint32_t q, uint64_t seq,
		      uint32_t nview, uint32_t *view)
{
	struct ls *ls;

	(void)handle;
	(void)view;
	log_debug("quorum: quorate %u ring %" PRIx64 ", %u nodes", q, seq,
		  nview);
	if (quorate != (int)!!q)
		log_info("quorum: %s (ring %" PRIx64 ", %u nodes)",
			 q ? "quorate" : "not quorate", seq, nview);
	quorate = !!q;
	quorum_seq = seq;
	quorum_known = true;
	for (ls = lockspaces; ls; ls = ls->next)
		if (ls->joined && ls->have_members &&
		    ls->written_quorate != quorate)
			ls_mark_pending(ls);
}

static void ls_close(struct ls *ls)
{
	if (ls->cpg)
		cpg_finalize(ls->cpg);
	ls->cpg = 0;
	ls->fd = -1;
	ls->joined = false;
	ls->have_members = false;
	ls->pending = false;
}

/* corosync is syncing: try again at the next scan */
static bool join_busy(struct ls *ls)
{
	if (++ls->join_tries == JOIN_WARN)
		log_info("%s: corosync still busy, retrying the join",
			 ls->name);
	return false;
}

/* Connect and join the lockspace's group; false: try again at the next scan */
static bool ls_join(struct ls *ls)
{
	cpg_model_v1_data_t model = {
		.model = CPG_MODEL_V1,
		.cpg_confchg_fn = confchg_cb,
		.cpg_totem_confchg_fn = totem_cb,
		.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF,
	};
	bool stopped;
	cs_error_t err;

	if (!ls->cpg) {
		err = cpg_model_initialize(&ls->cpg, CPG_MODEL_V1,
					   (cpg_model_data_t *)&model, ls);
		if (err == CS_ERR_LIBRARY)
			lost_corosync("cpg_model_initialize", err);
		if (err == CS_ERR_TRY_AGAIN) {
			ls->cpg = 0;
			return join_busy(ls);
		}
		if (err != CS_OK) {
			log_err("%s: cpg_model_initialize: corosync error %d",
				ls->name, err);
			ls->cpg = 0;
			return false;
		}
		/* our own node's leaves are other processes of ours */
		if (!our_nodeid && cpg_local_get(ls->cpg, &our_nodeid) != CS_OK)
			our_nodeid = 0;
		err = cpg_fd_get(ls->cpg, &ls->fd);
		if (err != CS_OK) {
			log_err("%s: cpg_fd_get: corosync error %d", ls->name,
				err);
			ls_close(ls);
			return false;
		}
	}
	err = cpg_join(ls->cpg, &ls->group);
	if (err == CS_ERR_TRY_AGAIN)
		return join_busy(ls);
	if (cs_gone(err))
		lost_corosync("cpg_join", err);
	if (err != CS_OK) {
		log_err("%s: cpg_join %s: corosync error %d", ls->name,
			ls->group.value, err);
		ls_close(ls);
		return false;
	}
	ls->joined = true;
	ls->join_tries = 0;
	ls->written_quorate = -1;
	ls->no_file_logged = false;
	ls->refused_logged = false;
	ls->nleft = 0;
	ls->nclean = 0;
	ls_epoch_init(ls);
	if (!ls_kernel_state(ls->name, &stopped, ls->incarnation))
		ls->incarnation[0] = '\0';
	log_info("%s: joined group %s", ls->name, ls->group.value);
	return true;
}

static void ls_leave(struct ls *ls)
{
	cs_error_t err = CS_OK;
	int i;

	if (ls->joined) {
		for (i = 0; i < LEAVE_TRIES; i++) {
			err = cpg_leave(ls->cpg, &ls->group);
			if (err != CS_ERR_TRY_AGAIN)
				break;
			usleep(100000);
		}
		if (err != CS_OK)
			log_err("%s: cpg_leave: corosync error %d", ls->name,
				err);
		log_info("%s: left group %s", ls->name, ls->group.value);
	}
	/* closing the connection leaves the group whatever cpg_leave said */
	ls_close(ls);
}

static bool ls_enabled(const char *name)
{
	char buf[16];

	return ls_read_attr(name, "enable", buf, sizeof(buf)) &&
	       buf[0] == '1';
}

/* configured static ("managed" 0): left alone, as with -x */
static bool ls_unmanaged(const char *name)
{
	char buf[16];

	return ls_read_attr(name, "managed", buf, sizeof(buf)) &&
	       buf[0] == '0';
}

static struct ls *ls_new(const char *name)
{
	struct ls *ls;

	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		log_err("out of memory");
		return NULL;
	}
	strcpy(ls->name, name);
	ls->group.length = snprintf(ls->group.value, sizeof(ls->group.value),
				    GROUP_PREFIX "%s", name);
	ls->fd = -1;
	ls->written_quorate = -1;
	ls->next = lockspaces;
	lockspaces = ls;
	return ls;
}

/*
 * A joined lockspace the kernel stopped (the others fenced it) restarts;
 * one the kernel re-created leaves its group now and joins again at the
 * next scan, so the others see its old incarnation go.
 */
static void ls_check_kernel(struct ls *ls)
{
	char inc[INC_LEN];
	bool stopped;

	if (!ls_kernel_state(ls->name, &stopped, inc))
		return;
	if (stopped) {
		log_info("%s: stopped in the kernel (fenced by the others?): restart when quorate",
			 ls->name);
		ls->stopped = true;
		return;
	}
	if (strcmp(inc, ls->incarnation)) {
		log_info("%s: re-created in the kernel (incarnation %s, was %s): leaving and joining its group again",
			 ls->name, inc, ls->incarnation);
		ls_leave(ls);
	}
}

/* ---- fencing ---- */

/* One configuration line's key=value words into @args; false if malformed. */
static bool conf_args(char **words, unsigned int nwords, char **args,
		      unsigned int *nargs, const char *file, unsigned int line)
{
	unsigned int i;

	*nargs = 0;
	for (i = 0; i < nwords; i++) {
		if (!strchr(words[i], '=') || words[i][0] == '=' ||
		    *nargs == MAX_ARGS) {
			fprintf(stderr, "%s: %s:%u: \"%s\": want key=value (at most %u)\n",
				prog, file, line, words[i], MAX_ARGS);
			return false;
		}
		args[(*nargs)++] = strdup(words[i]);
	}
	return true;
}

/*
 * The configuration, as dlm.conf's fencing lines:
 *
 *	device NAME AGENT [KEY=VALUE...]
 *	connect NAME node=NODEID [KEY=VALUE...]
 *
 * A node's devices are tried in the order of its connect lines. A missing
 * default file means no fence device (@must: the file was named).
 */
static bool conf_load(const char *file, bool must)
{
	char buf[4096], *words[3 + MAX_ARGS + 1], *p, *tok;	/* one spare */
	unsigned int line = 0, n, i;
	unsigned long node;
	FILE *f;

	f = fopen(file, "r");
	if (!f) {
		if (!must && errno == ENOENT)
			return true;
		fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(errno));
		return false;
	}
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		p = strchr(buf, '#');
		if (p)
			*p = '\0';
		n = 0;
		for (p = buf; (tok = strsep(&p, " \t\n"));)
			if (*tok && n < sizeof(words) / sizeof(words[0]))
				words[n++] = tok;
		if (!n)
			continue;
		if (n == sizeof(words) / sizeof(words[0])) {
			fprintf(stderr, "%s: %s:%u: more than %u key=value words\n",
				prog, file, line, MAX_ARGS);
			goto bad;
		}
		if (!strcmp(words[0], "device") && n >= 3 &&
		    ndevices < MAX_DEVICES) {
			struct fence_device *d = &devices[ndevices];

			if (words[2][0] != '/') {
				fprintf(stderr, "%s: %s:%u: the agent must be an absolute path\n",
					prog, file, line);
				goto bad;
			}
			d->name = strdup(words[1]);
			d->agent = strdup(words[2]);
			if (!conf_args(words + 3, n - 3, d->args, &d->nargs,
				       file, line))
				goto bad;
			ndevices++;
			continue;
		}
		if (!strcmp(words[0], "connect") && n >= 3 &&
		    nconnects < MAX_CONNECTS &&
		    !strncmp(words[2], "node=", 5)) {
			struct fence_connect *c = &connects[nconnects];

			for (i = 0; i < ndevices; i++)
				if (!strcmp(devices[i].name, words[1]))
					break;
			node = strtoul(words[2] + 5, &p, 10);
			if (i == ndevices || *p || !node || node >= UINT32_MAX) {
				fprintf(stderr, "%s: %s:%u: want a device defined above and node=NODEID\n",
					prog, file, line);
				goto bad;
			}
			c->device = i;
			c->node = node;
			if (!conf_args(words + 3, n - 3, c->args, &c->nargs,
				       file, line))
				goto bad;
			nconnects++;
			continue;
		}
		fprintf(stderr, "%s: %s:%u: want \"device NAME /AGENT [KEY=VALUE]...\" or \"connect NAME node=NODEID [KEY=VALUE]...\" (at most %u and %u)\n",
			prog, file, line, MAX_DEVICES, MAX_CONNECTS);
		goto bad;
	}
	fclose(f);
	return true;
bad:
	fclose(f);
	return false;
}

/*
 * The nodes a lockspace waits to see fenced: its membership file's line
 * "fencing NODEID...". False if it cannot be read.
 */
static bool ls_fencing(const char *name, uint32_t *nodes, unsigned int *n)
{
	char buf[4096], *p, *end;
	unsigned long v;

	*n = 0;
	if (!ls_read_attr(name, "membership", buf, sizeof(buf)))
		return false;
	p = strstr(buf, "\nfencing");
	if (!p)
		return true;
	for (p += strlen("\nfencing"); *p == ' ' && *n < MAX_VICTIMS; p = end) {
		v = strtoul(p, &end, 10);
		if (end == p)
			break;
		nodes[(*n)++] = v;
	}
	return true;
}

/* Fenced: every lockspace that waits for @node may recover from it now. */
static void fence_ack_all(uint32_t node)
{
	uint32_t nodes[MAX_VICTIMS];
	unsigned int n;
	struct ls *ls;

	for (ls = lockspaces; ls; ls = ls->next)
		if (ls->joined && !ls->stopped &&
		    ls_fencing(ls->name, nodes, &n) &&
		    in_list(nodes, n, node) && ls_fence_ack(ls->name, node))
			log_info("%s: node %u fenced: its locks are recovered",
				 ls->name, node);
}

/* Start connects[@i]'s agent for @v: "action=off" and the arguments on stdin. */
static void fence_start(struct victim *v, unsigned int i)
{
	const struct fence_connect *c = &connects[i];
	const struct fence_device *d = &devices[c->device];
	char args[8192];
	int pfd[2], len, k;
	pid_t pid;

	len = snprintf(args, sizeof(args), "action=off\n");
	for (k = 0; k < (int)d->nargs; k++)
		len += snprintf(args + len, sizeof(args) - len, "%s\n",
				d->args[k]);
	for (k = 0; k < (int)c->nargs; k++)
		len += snprintf(args + len, sizeof(args) - len, "%s\n",
				c->args[k]);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		log_err("node %u: pipe: %s", v->node, strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* its own process group: killed with whatever it started */
		setpgid(0, 0);
		/* its output goes to ours: our log */
		if (dup2(pfd[0], STDIN_FILENO) < 0 ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		closefrom(STDERR_FILENO + 1);
		execl(d->agent, d->agent, (char *)NULL);
		_exit(127);
	}
	close(pfd[0]);
	if (pid < 0) {
		log_err("node %u: fork: %s", v->node, strerror(errno));
		close(pfd[1]);
		return;
	}
	setpgid(pid, pid);	/* as the child does: whichever runs first */
	/* a pipe holds far more than a few lines: this never blocks */
	if (write(pfd[1], args, len) != len)
		log_err("node %u: writing to %s: %s", v->node, d->agent,
			strerror(errno));
	close(pfd[1]);
	log_info("node %u: fencing with device %s (%s)", v->node, d->name,
		 d->agent);
	v->pid = pid;
	v->next = i + 1;
	v->started = time(NULL);
}

/* The next of @v's devices at or after @from, or -1. */
static int fence_next(uint32_t node, unsigned int from)
{
	unsigned int i;

	for (i = from; i < nconnects; i++)
		if (connects[i].node == node)
			return i;
	return -1;
}

/* Drive @v's fencing on: reap the agent, try the next device, retry. */
static void fence_step(struct victim *v)
{
	time_t now = time(NULL);
	int status = -1, i;
	pid_t pid;

	if (v->pid) {
		pid = waitpid(v->pid, &status, WNOHANG);
		if (pid == 0 && now - v->started < FENCE_TIMEOUT_S)
			return;
		if (pid == 0) {
			log_err("node %u: fence agent still running after %d s: killed",
				v->node, FENCE_TIMEOUT_S);
			fence_kill(v);
		}
		v->pid = 0;
		if (pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status)) {
			log_info("node %u: fenced", v->node);
			v->fenced = true;
		} else {
			log_err("node %u: fence agent failed (%s %d)", v->node,
				pid > 0 && WIFEXITED(status) ? "exit" :
				"signal or timeout",
				pid > 0 && WIFEXITED(status) ?
				WEXITSTATUS(status) : status);
			if (fence_next(v->node, v->next) < 0) {
				v->next = 0;
				v->next_try = now + FENCE_RETRY_S;
			}
		}
	}
	if (v->fenced) {
		fence_ack_all(v->node);
		return;
	}
	/* only the quorate part of the cluster fences */
	if (quorate != 1 || now < v->next_try)
		return;
	i = fence_next(v->node, v->next);
	if (i < 0 && v->next == 0) {
		if (!v->none_logged)
			log_err("node %u: no fence device configured: its locks wait for \"rdlmctl fence-ack LOCKSPACE %u\"",
				v->node, v->node);
		v->none_logged = true;
		return;
	}
	if (i < 0) {
		v->next = 0;
		return;
	}
	fence_start(v, i);
}

/*
 * Every node some joined lockspace lists under "fencing" is fenced, once,
 * however many lockspaces wait for it; a node nobody waits for any more
 * (acknowledged by hand, or back with a new incarnation) is let go.
 */
static void fence_scan(void)
{
	uint32_t want[MAX_VICTIMS], nodes[MAX_VICTIMS];
	unsigned int nwant = 0, n, i, k;
	struct ls *ls;

	for (ls = lockspaces; ls; ls = ls->next) {
		if (!ls->joined || ls->stopped ||
		    !ls_fencing(ls->name, nodes, &n))
			continue;
		for (i = 0; i < n; i++)
			if (!in_list(want, nwant, nodes[i]) &&
			    nwant < MAX_VICTIMS)
				want[nwant++] = nodes[i];
	}
	for (i = 0; i < nvictims;) {
		struct victim *v = &victims[i];

		if (in_list(want, nwant, v->node)) {
			i++;
			continue;
		}
		if (v->pid)
			fence_kill(v);
		if (!v->fenced)
			log_info("node %u: no lockspace waits for its fencing any more",
				 v->node);
		*v = victims[--nvictims];
	}
	for (k = 0; k < nwant; k++) {
		for (i = 0; i < nvictims; i++)
			if (victims[i].node == want[k])
				break;
		if (i == nvictims) {
			memset(&victims[i], 0, sizeof(victims[i]));
			victims[i].node = want[k];
			nvictims++;
			log_info("node %u: departed, its locks wait for its fencing",
				 want[k]);
		}
		fence_step(&victims[i]);
	}
}

/*
 * configfs has no inotify (its directories and attributes change without
 * fsnotify events), so the lockspaces are found by reading the directory
 * once a second. A lockspace kept here after it is gone keeps its epoch.
 */
static void scan(void)
{
	static bool toolong_logged;
	struct dirent *de;
	unsigned int n = 0;
	struct ls *ls;
	DIR *dir;

	for (ls = lockspaces; ls; ls = ls->next) {
		ls->enabled = false;
		n++;
	}
	dir = opendir(LSDIR);
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || excluded(de->d_name))
			continue;
		if (strlen(de->d_name) > LS_NAME_MAX) {
			if (!toolong_logged)
				log_err("%s: name longer than %zu bytes, not managed",
					de->d_name, LS_NAME_MAX);
			toolong_logged = true;
			continue;
		}
		if (!ls_enabled(de->d_name) || ls_unmanaged(de->d_name))
			continue;
		ls = ls_find(de->d_name);
		if (!ls && n < MAX_LS) {
			ls = ls_new(de->d_name);
			n++;
		}
		if (ls)
			ls->enabled = true;
	}
	if (dir)
		closedir(dir);

	for (ls = lockspaces; ls; ls = ls->next) {
		if (ls->stopped && ls->cpg)
			ls_leave(ls);
		if (ls->restart_pid)
			ls_restart(ls);		/* done yet? */
		else if (ls->stopped && !ls->enabled)
			ls->stopped = false;	/* taken down meanwhile */
		else if (ls->stopped)
			ls_restart(ls);
		else if (ls->enabled && !ls->joined &&
			 ls_kernel_stopped(ls->name))
			ls->stopped = true;	/* restarted from the next scan */
		else if (ls->enabled && !ls->joined)
			ls_join(ls);
		else if (!ls->enabled && ls->cpg)
			ls_leave(ls);
		else if (ls->joined)
			ls_check_kernel(ls);
	}
	fence_scan();
}

static void quorum_start(void)
{
	quorum_callbacks_t cb = { .quorum_notify_fn = quorum_cb };
	uint32_t type;
	cs_error_t err;
	int q;

	err = quorum_initialize(&qhandle, &cb, &type);
	if (err != CS_OK) {
		log_err("quorum_initialize: corosync error %d: is corosync running?",
			err);
		exit(1);
	}
	if (type != QUORUM_SET) {
		log_info("corosync has no quorum provider: every node counts as quorate");
		quorum_free = true;
	}
	err = quorum_getquorate(qhandle, &q);
	if (err != CS_OK)
		lost_corosync("quorum_getquorate", err);
	log_info("quorum: %s at start", q ? "quorate" : "not quorate");
	if (quorum_free) {
		quorate = 1;
		quorum_known = true;
	}
	err = quorum_trackstart(qhandle, CS_TRACK_CURRENT | CS_TRACK_CHANGES);
	if (err != CS_OK)
		lost_corosync("quorum_trackstart", err);
	err = quorum_fd_get(qhandle, &qfd);
	if (err != CS_OK)
		lost_corosync("quorum_fd_get", err);
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int pidfile_open(void)
{
	char buf[32];
	int fd, len;

	fd = open(PIDFILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_err("%s: %s", PIDFILE, strerror(errno));
		return -1;
	}
	if (lockf(fd, F_TLOCK, 0) < 0) {
		log_err("%s is locked: is another rdlm_controld running?",
			PIDFILE);
		close(fd);
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", getpid());
	if (ftruncate(fd, 0) < 0 || write(fd, buf, len) != len) {
		log_err("%s: %s", PIDFILE, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;	/* held open: the lock lives as long as we do */
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: rdlm_controld [-f] [-D] [-c FILE] [-x LOCKSPACE]...\n"
"\n"
"Give the rdlm lockspaces of this node their cluster membership from\n"
"corosync: joins the CPG group rdlm:LOCKSPACE for every enabled lockspace\n"
"and writes \"EPOCH QUORATE NODEID...\" to its configfs file membership on\n"
"every change of the group's members or of quorum. A departed node is\n"
"fenced with the agents FILE configures before its locks are recovered.\n"
"\n"
" -c FILE       fence devices (default " CONF_FILE ", if it exists)\n"
" -f            stay in the foreground, log to stderr as well as syslog\n"
" -D            debug messages (to stderr)\n"
" -x LOCKSPACE  leave LOCKSPACE alone (repeatable)\n"
" -h            this help\n");
}

int main(int argc, char **argv)
{
	struct pollfd pfd[MAX_LS + 1];
	struct ls *map[MAX_LS + 1];
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec tick = { .tv_sec = 1 };
	sigset_t block, orig;
	time_t last_scan = 0;
	unsigned int n, i;
	cs_error_t err;
	struct ls *ls;
	const char *conf = NULL;
	int opt, pidfd;

	while ((opt = getopt(argc, argv, "fDc:x:h")) != -1) {
		switch (opt) {
		case 'c':
			conf = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'D':
			debug = true;
			break;
		case 'x':
			if (nexclude == MAX_EXCLUDE) {
				fprintf(stderr, "%s: too many -x\n", prog);
				return 2;
			}
			exclude[nexclude++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!conf_load(conf ? conf : CONF_FILE, conf))
		return 1;

	openlog(prog, LOG_PID, LOG_DAEMON);
	if (!foreground && daemon(0, debug) < 0) {
		log_err("daemon: %s", strerror(errno));
		return 1;
	}
	if (foreground)
		setvbuf(stderr, NULL, _IOLBF, 0);
	pidfd = pidfile_open();
	if (pidfd < 0)
		return 1;

	/* signals arrive only inside ppoll(): no wake-up is ever lost */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	quorum_start();
	if (nconnects)
		log_info("fencing: %u device(s), %u connection(s) to nodes",
			 ndevices, nconnects);
	else
		log_info("fencing: no device configured: a departed node's locks wait for rdlmctl fence-ack (in lockspaces with fencing 1)");
	log_info("started, pid %d", getpid());

	while (!stop_signal) {
		if (time(NULL) != last_scan) {
			scan();
			last_scan = time(NULL);
		}
		flush_changes();

		n = 0;
		pfd[n].fd = qfd;
		pfd[n].events = POLLIN;
		map[n++] = NULL;
		for (ls = lockspaces; ls; ls = ls->next) {
			if (!ls->cpg)
				continue;
			pfd[n].fd = ls->fd;
			pfd[n].events = POLLIN;
			map[n++] = ls;
		}
		if (ppoll(pfd, n, &tick, &orig) < 0) {
			if (errno == EINTR)
				continue;
			log_err("ppoll: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (!map[i]) {
				err = quorum_dispatch(qhandle, CS_DISPATCH_ALL);
				if (err != CS_OK && err != CS_ERR_TRY_AGAIN)
					lost_corosync("quorum_dispatch", err);
				continue;
			}
			err = cpg_dispatch(map[i]->cpg, CS_DISPATCH_ALL);
			if (err != CS_OK && err != CS_ERR_TRY_AGAIN)
				lost_corosync("cpg_dispatch", err);
		}
	}

	if (stop_signal)
		log_info("signal %d: leaving every group", (int)stop_signal);
	/*
	 * The kernel stops the managed lockspaces first: the others take our
	 * clean leave for a node that holds nothing any more.
	 */
	if (dev_fd >= 0)
		close(dev_fd);
	for (ls = lockspaces; ls; ls = ls->next)
		ls_leave(ls);
	fence_stop_agents();
	quorum_finalize(qhandle);
	unlink(PIDFILE);
	close(pidfd);
	log_info("stopped");
	return stop_signal ? 0 : 1;
}
