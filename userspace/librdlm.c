// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librdlm: a thin layer over the /dev/rdlm ioctls (see librdlm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "librdlm.h"

static int rdlm_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR && cmd != RDLM_IOC_LOCK);
	return ret < 0 ? -errno : ret;
}

int rdlm_open(const char *lockspace, unsigned int flags)
{
	struct rdlm_join join;
	int fd, ret, oflags = O_RDWR;
	int saved = errno;

	if (!lockspace)
		return -EINVAL;
	if (strlen(lockspace) >= sizeof(join.name))
		return -E2BIG;
	if (flags & ~(RDLM_OPEN_CLOEXEC | RDLM_OPEN_NONBLOCK |
		      RDLM_OPEN_RECOVERY))
		return -EINVAL;
	if (flags & RDLM_OPEN_CLOEXEC)
		oflags |= O_CLOEXEC;
	if (flags & RDLM_OPEN_NONBLOCK)
		oflags |= O_NONBLOCK;
	fd = open(RDLM_DEVICE, oflags);
	if (fd < 0) {
		ret = -errno;
		errno = saved;
		return ret;
	}
	memset(&join, 0, sizeof(join));
	join.size = sizeof(join);
	if (flags & RDLM_OPEN_RECOVERY)
		join.flags = RDLM_JOIN_RECOVERY;
	strcpy(join.name, lockspace);
	ret = rdlm_ioctl(fd, RDLM_IOC_JOIN, &join);
	if (ret < 0) {
		close(fd);
		errno = saved;
		return ret;
	}
	errno = saved;
	return fd;
}

int rdlm_close(int fd)
{
	int saved = errno, ret;

	ret = close(fd) < 0 ? -errno : 0;
	errno = saved;
	return ret;
}

int rdlm_abi_version(int fd)
{
	struct rdlm_version ver;
	int saved = errno, ret;

	memset(&ver, 0, sizeof(ver));
	ver.size = sizeof(ver);
	ret = rdlm_ioctl(fd, RDLM_IOC_VERSION, &ver);
	errno = saved;
	return ret < 0 ? ret : (int)ver.abi;
}

static int rdlm_lock_call(int fd, struct rdlm_lock_req *req, uint32_t *lkid,
			  void *lvb)
{
	int saved = errno, ret;

	if ((req->flags & RDLM_LKF_VALBLK) && !lvb)
		return -EINVAL;
	if (lvb && (req->flags & RDLM_LKF_VALBLK))
		memcpy(req->lvb, lvb, RDLM_LVB_MAX);
	ret = rdlm_ioctl(fd, RDLM_IOC_LOCK, req);
	errno = saved;
	if (lkid && !(req->flags & RDLM_LKF_CONVERT))
		*lkid = ret < 0 ? 0 : req->lkid;
	if (!ret && lvb && (req->flags & RDLM_LKF_VALBLK) &&
	    !(req->flags & RDLM_LKF_ASYNC))
		memcpy(lvb, req->lvb, RDLM_LVB_MAX);
	return ret;
}

static int rdlm_fill_name(struct rdlm_lock_req *req, const void *name,
			  size_t namelen)
{
	if (!name || !namelen)
		return -EINVAL;
	if (namelen > RDLM_NAME_MAX)
		return -E2BIG;
	memcpy(req->name, name, namelen);
	req->namelen = namelen;
	return 0;
}

/*
 * Lock @name in @mode and wait until granted (0), refused (-EAGAIN with
 * RDLM_LKF_NOQUEUE), timed out (-ETIMEDOUT, @timeout_ms > 0) or interrupted
 * by a signal (-EINTR: the request was cancelled). With RDLM_LKF_VALBLK,
 * @lvb (RDLM_LVB_MAX bytes) receives the lock value block.
 */
int rdlm_lock(int fd, int mode, const void *name, size_t namelen,
	      uint32_t flags, uint32_t timeout_ms, uint32_t *lkid, void *lvb)
{
	return rdlm_lock_sb(fd, mode, name, namelen, flags, timeout_ms, lkid,
			    lvb, NULL);
}

/*
 * rdlm_lock(), and @sb_flags (if not NULL) receives the completion's
 * RDLM_SBF_* flags, e.g. RDLM_SBF_VALNOTVALID: the LVB is not valid.
 */
int rdlm_lock_sb(int fd, int mode, const void *name, size_t namelen,
		 uint32_t flags, uint32_t timeout_ms, uint32_t *lkid,
		 void *lvb, uint32_t *sb_flags)
{
	struct rdlm_lock_req req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.mode = mode;
	req.flags = flags & ~(RDLM_LKF_ASYNC | RDLM_LKF_CONVERT);
	req.timeout_ms = timeout_ms;
	ret = rdlm_fill_name(&req, name, namelen);
	if (ret)
		return ret;
	ret = rdlm_lock_call(fd, &req, lkid, lvb);
	if (sb_flags)
		*sb_flags = req.sb_flags;
	return ret;
}

/*
 * Queue a lock request and return at once; its completion is an event
 * (rdlm_read_event()) carrying @user.
 */
int rdlm_lock_async(int fd, int mode, const void *name, size_t namelen,
		    uint32_t flags, uint32_t timeout_ms, uint64_t user,
		    uint32_t *lkid)
{
	struct rdlm_lock_req req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.mode = mode;
	req.flags = (flags & ~RDLM_LKF_CONVERT) | RDLM_LKF_ASYNC;
	req.timeout_ms = timeout_ms;
	req.user = user;
	ret = rdlm_fill_name(&req, name, namelen);
	if (ret)
		return ret;
	return rdlm_lock_call(fd, &req, lkid, NULL);
}

/*
 * Lock the units [@start, @end] of @name in @mode (RDLM_LOCK_PR or _EX),
 * on a lockspace whose engine locks ranges (rangeseg, rangecomb): PR ranges
 * share, an EX range excludes every range it overlaps. As rdlm_lock(), with
 * RDLM_LKF_NOQUEUE; with RDLM_LKF_ASYNC as rdlm_lock_async() (@user is the
 * events' cookie). Released by rdlm_unlock(@lkid, NULL), cancelled by
 * rdlm_cancel(); no LVB, no conversion.
 */
int rdlm_range_lock(int fd, int mode, const void *name, size_t namelen,
		    uint64_t start, uint64_t end, uint32_t flags,
		    uint32_t timeout_ms, uint64_t user, uint32_t *lkid)
{
	struct rdlm_lock_req req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.mode = mode;
	req.flags = flags | RDLM_LKF_RANGE;
	req.timeout_ms = timeout_ms;
	req.user = user;
	req.start = start;
	req.end = end;
	ret = rdlm_fill_name(&req, name, namelen);
	if (ret)
		return ret;
	return rdlm_lock_call(fd, &req, lkid, NULL);
}

/*
 * Convert lock @lkid to @mode; as rdlm_lock(), or asynchronous with
 * RDLM_LKF_ASYNC. With RDLM_LKF_VALBLK, @lvb is written when the lock
 * leaves PW/EX and read back on grant.
 */
int rdlm_convert(int fd, uint32_t lkid, int mode, uint32_t flags,
		 uint32_t timeout_ms, void *lvb)
{
	struct rdlm_lock_req req;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.mode = mode;
	req.flags = flags | RDLM_LKF_CONVERT;
	req.timeout_ms = timeout_ms;
	req.lkid = lkid;
	return rdlm_lock_call(fd, &req, NULL, lvb);
}

static int rdlm_unlock_call(int fd, uint32_t lkid, uint32_t flags,
			    const void *lvb)
{
	struct rdlm_unlock_req req;
	int saved = errno, ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.lkid = lkid;
	req.flags = flags;
	if (lvb) {
		req.flags |= RDLM_LKF_VALBLK;
		memcpy(req.lvb, lvb, RDLM_LVB_MAX);
	}
	ret = rdlm_ioctl(fd, RDLM_IOC_UNLOCK, &req);
	errno = saved;
	return ret;
}

/* Release lock @lkid, writing @lvb as its value block unless NULL. */
int rdlm_unlock(int fd, uint32_t lkid, const void *lvb)
{
	return rdlm_unlock_call(fd, lkid, 0, lvb);
}

/* Release lock @lkid; the completion (-RDLM_EUNLOCK) is an event. */
int rdlm_unlock_async(int fd, uint32_t lkid, const void *lvb)
{
	return rdlm_unlock_call(fd, lkid, RDLM_LKF_ASYNC, lvb);
}

/* Cancel the waiting request of @lkid; its completion tells the outcome. */
int rdlm_cancel(int fd, uint32_t lkid)
{
	return rdlm_unlock_call(fd, lkid, RDLM_LKF_CANCEL, NULL);
}

/* Read one event; waits unless the handle was opened RDLM_OPEN_NONBLOCK. */
int rdlm_read_event(int fd, struct rdlm_event *ev)
{
	int saved = errno;
	ssize_t n;

	do {
		n = read(fd, ev, sizeof(*ev));
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		n = -errno;
		errno = saved;
		return (int)n;
	}
	return n == sizeof(*ev) ? 0 : -EIO;
}

int rdlm_lock_info(int fd, uint32_t lkid, struct rdlm_lock_info *info)
{
	int saved = errno, ret;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->lkid = lkid;
	ret = rdlm_ioctl(fd, RDLM_IOC_LOCK_INFO, info);
	errno = saved;
	return ret;
}

int rdlm_ls_stats(int fd, struct rdlm_ls_stats *stats)
{
	int saved = errno, ret;

	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
	ret = rdlm_ioctl(fd, RDLM_IOC_LS_STATS, stats);
	errno = saved;
	return ret;
}

static const char *const rdlm_mode_names[RDLM_LOCK_NR] = {
	[RDLM_LOCK_NL] = "NL",
	[RDLM_LOCK_CR] = "CR",
	[RDLM_LOCK_CW] = "CW",
	[RDLM_LOCK_PR] = "PR",
	[RDLM_LOCK_PW] = "PW",
	[RDLM_LOCK_EX] = "EX",
};

const char *rdlm_mode_name(int mode)
{
	if (mode < 0 || mode >= RDLM_LOCK_NR)
		return "??";
	return rdlm_mode_names[mode];
}

/* "NL", "CR", "CW", "PR", "PW", "EX" (any case) to RDLM_LOCK_*, or -EINVAL. */
int rdlm_mode_parse(const char *name)
{
	int mode;

	for (mode = 0; mode < RDLM_LOCK_NR; mode++)
		if (!strcasecmp(name, rdlm_mode_names[mode]))
			return mode;
	return -EINVAL;
}
