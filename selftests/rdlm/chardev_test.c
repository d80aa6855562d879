// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/rdlm: the node has the mode programs rely on, the ioctls answer
 * malformed calls with precise errnos, locks, events and close() do what
 * uapi/linux/rdlm.h says, and 100,000 random ioctls get errnos only.
 *
 * The lock tests use the lockspace named by $RDLM_TEST_LS, which must live
 * on this node alone (chardev.sh creates one), and two descriptors of one
 * process to make one lock wait for another.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rdlm.h>

#include "kselftest_harness.h"

#define RDLM_DEV	"/dev/rdlm"
#define MISC_MAJOR	10

TEST(node_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(RDLM_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(MISC_MAJOR, major(st.st_rdev));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(RDLM_DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, version)
{
	struct rdlm_version ver = { .size = sizeof(ver) };

	ASSERT_EQ(0, ioctl(self->fd, RDLM_IOC_VERSION, &ver));
	EXPECT_EQ(RDLM_ABI_VERSION, ver.abi);
	EXPECT_EQ(sizeof(ver), ver.size);
}

TEST_F(dev, version_bad_size)
{
	struct rdlm_version ver = { .size = sizeof(ver) - 1 };

	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_VERSION, &ver));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ver.abi);
}

TEST_F(dev, version_reserved_set)
{
	struct rdlm_version ver = { .size = sizeof(ver), .reserved = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_VERSION, &ver));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, version_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_VERSION, (void *)16));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, unknown_ioctl)
{
	struct rdlm_version ver = { .size = sizeof(ver) };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(RDLM_IOC_MAGIC, 0x7f,
					     struct rdlm_version), &ver));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO('T', 1), 0));
	EXPECT_EQ(ENOTTY, errno);
}

static const char *test_ls(void)
{
	const char *ls = getenv("RDLM_TEST_LS");

	return ls ? ls : "rdlm-test";
}

static int join(int fd, const char *name)
{
	struct rdlm_join j = { .size = sizeof(j) };

	strncpy(j.name, name, sizeof(j.name) - 1);
	return ioctl(fd, RDLM_IOC_JOIN, &j) ? -errno : 0;
}

static int open_joined(void)
{
	int fd = open(RDLM_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (join(fd, test_ls())) {
		close(fd);
		return -1;
	}
	return fd;
}

static void lock_req_init(struct rdlm_lock_req *r, int mode, const char *name,
			  uint32_t flags)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->mode = mode;
	r->flags = flags;
	if (name) {
		r->namelen = strlen(name);
		memcpy(r->name, name, r->namelen);
	}
}

/* RDLM_IOC_LOCK; 0 or -errno, *lkid set on success of a new lock */
static int do_lock(int fd, int mode, const char *name, uint32_t flags,
		   uint32_t timeout_ms, uint32_t *lkid)
{
	struct rdlm_lock_req r;

	lock_req_init(&r, mode, name, flags);
	r.timeout_ms = timeout_ms;
	if (ioctl(fd, RDLM_IOC_LOCK, &r))
		return -errno;
	if (lkid)
		*lkid = r.lkid;
	return 0;
}

static int do_convert(int fd, uint32_t lkid, int mode, uint32_t flags)
{
	struct rdlm_lock_req r;

	lock_req_init(&r, mode, NULL, flags | RDLM_LKF_CONVERT);
	r.lkid = lkid;
	return ioctl(fd, RDLM_IOC_LOCK, &r) ? -errno : 0;
}

static int do_unlock(int fd, uint32_t lkid, uint32_t flags)
{
	struct rdlm_unlock_req u = { .size = sizeof(u), .lkid = lkid,
				     .flags = flags };

	return ioctl(fd, RDLM_IOC_UNLOCK, &u) ? -errno : 0;
}

static int lock_info(int fd, uint32_t lkid, struct rdlm_lock_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->lkid = lkid;
	return ioctl(fd, RDLM_IOC_LOCK_INFO, info) ? -errno : 0;
}

/* read one event, waiting at most @ms; 0 or -errno */
static int next_event(int fd, struct rdlm_event *ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	n = read(fd, ev, sizeof(*ev));
	if (n < 0)
		return -errno;
	return n == sizeof(*ev) ? 0 : -EIO;
}

/* a unique resource name per test and run */
static void res_name(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "%s-%d-%ld", what, getpid(), (long)time(NULL));
}

TEST_F(dev, lock_calls_need_join)
{
	struct rdlm_lock_req r;
	struct rdlm_unlock_req u = { .size = sizeof(u), .lkid = 1 };
	struct rdlm_lock_info info = { .size = sizeof(info), .lkid = 1 };
	struct rdlm_ls_stats st = { .size = sizeof(st) };
	struct rdlm_event ev;

	lock_req_init(&r, RDLM_LOCK_EX, "x", 0);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_UNLOCK, &u));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK_INFO, &info));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LS_STATS, &st));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(dev, join_bad_input)
{
	struct rdlm_join j;

	memset(&j, 0, sizeof(j));
	j.size = sizeof(j) + 1;
	strcpy(j.name, test_ls());
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(EINVAL, errno);
	j.size = sizeof(j);
	j.flags = RDLM_JOIN_RECOVERY << 1;	/* unknown flag */
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(EINVAL, errno);
	j.flags = 0;
	j.reserved = 1ULL << 63;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(EINVAL, errno);
	j.reserved = 0;
	/* a name that fills the buffer without its NUL does not fit */
	memset(j.name, 'a', sizeof(j.name));
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(E2BIG, errno);
	/* empty */
	memset(j.name, 0, sizeof(j.name));
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(EINVAL, errno);
	/* garbage after the NUL */
	strcpy(j.name, test_ls());
	j.name[sizeof(j.name) - 1] = 'x';
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(EINVAL, errno);
	/* 63 bytes is a fine name, of no lockspace */
	memset(j.name, 0, sizeof(j.name));
	memset(j.name, 'b', sizeof(j.name) - 1);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(ENOENT, errno);
	memset(j.name, 0, sizeof(j.name));
	strcpy(j.name, "no-such-lockspace");
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, &j));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_JOIN, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	/* none of it joined */
	EXPECT_EQ(0, join(self->fd, test_ls()));
	EXPECT_EQ(-EISCONN, join(self->fd, test_ls()));
	EXPECT_EQ(-EISCONN, join(self->fd, "no-such-lockspace"));
}

FIXTURE(ls) {
	int fd;
	int fd2;
	char res[64];
};

FIXTURE_SETUP(ls)
{
	self->fd = open_joined();
	ASSERT_LE(0, self->fd) TH_LOG("cannot join %s", test_ls());
	self->fd2 = open_joined();
	ASSERT_LE(0, self->fd2);
	res_name(self->res, sizeof(self->res), "res");
}

FIXTURE_TEARDOWN(ls)
{
	close(self->fd);
	close(self->fd2);
}

TEST_F(ls, lock_bad_input)
{
	struct rdlm_lock_req r;
	uint32_t lkid;
	void *ro;

	lock_req_init(&r, RDLM_LOCK_EX, self->res, 0);
	r.size--;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* a range without RDLM_LKF_RANGE */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, 0);
	r.end = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* range locks: reversed, with flags a range does not take */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_RANGE);
	r.start = 2;
	r.end = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, RDLM_LOCK_EX, self->res,
		      RDLM_LKF_RANGE | RDLM_LKF_VALBLK);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, RDLM_LOCK_EX, self->res,
		      RDLM_LKF_RANGE | RDLM_LKF_CONVERT);
	r.namelen = 0;
	memset(r.name, 0, sizeof(r.name));
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* a range on a lockspace of lock words */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_RANGE);
	r.end = 10;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, r.lkid);
	/* invalid modes */
	lock_req_init(&r, RDLM_LOCK_NR, self->res, 0);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, -1, self->res, 0);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* flags of unlock, unknown flags */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_IVVALBLK);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_CANCEL);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, RDLM_LOCK_EX, self->res, 0x80000000);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* names: empty, 65 bytes, bytes past namelen */
	lock_req_init(&r, RDLM_LOCK_EX, NULL, 0);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	lock_req_init(&r, RDLM_LOCK_EX, NULL, 0);
	memset(r.name, 'n', sizeof(r.name));
	r.namelen = RDLM_NAME_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	r.namelen = RDLM_NAME_MAX - 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	/* a conversion names its lock by lkid, not by name */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_CONVERT);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-ENOENT, do_convert(self->fd, 12345, RDLM_LOCK_PR, 0));
	EXPECT_EQ(-ENOENT, do_convert(self->fd, 0, RDLM_LOCK_PR, 0));
	/* bad pointers */
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, (void *)4096));
	EXPECT_EQ(EFAULT, errno);
	/* a read-only argument: nothing can be told, nothing is left */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	lock_req_init(ro, RDLM_LOCK_EX, self->res, RDLM_LKF_NOQUEUE);
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, ro));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, 4096);
	/* none of them left a lock: EX is free */
	EXPECT_EQ(0, do_lock(self->fd2, RDLM_LOCK_EX, self->res,
			     RDLM_LKF_NOQUEUE, 0, &lkid));
	EXPECT_EQ(0, do_unlock(self->fd2, lkid, 0));
}

TEST_F(ls, unlock_bad_input)
{
	struct rdlm_unlock_req u;
	uint32_t lkid;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &lkid));
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u) + 8;
	u.lkid = lkid;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_UNLOCK, &u));
	EXPECT_EQ(EINVAL, errno);
	u.size = sizeof(u);
	u.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_UNLOCK, &u));
	EXPECT_EQ(EINVAL, errno);
	u.reserved0 = 0;
	u.reserved[0] = 2;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_UNLOCK, &u));
	EXPECT_EQ(EINVAL, errno);
	u.reserved[0] = 0;
	EXPECT_EQ(-EINVAL, do_unlock(self->fd, lkid, RDLM_LKF_NOQUEUE));
	EXPECT_EQ(-EINVAL, do_unlock(self->fd, lkid, RDLM_LKF_CONVERT));
	EXPECT_EQ(-EINVAL, do_unlock(self->fd, lkid, 0x40000000));
	EXPECT_EQ(-EINVAL, do_unlock(self->fd, lkid,
				     RDLM_LKF_CANCEL | RDLM_LKF_VALBLK));
	EXPECT_EQ(-ENOENT, do_unlock(self->fd, lkid + 1000, 0));
	EXPECT_EQ(-ENOENT, do_unlock(self->fd, 0, 0));
	/* locks belong to their file */
	EXPECT_EQ(-ENOENT, do_unlock(self->fd2, lkid, 0));
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_UNLOCK, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* nothing waits: nothing to cancel */
	EXPECT_EQ(-EALREADY, do_unlock(self->fd, lkid, RDLM_LKF_CANCEL));
	/* still held, then released */
	EXPECT_EQ(-EAGAIN, do_lock(self->fd2, RDLM_LOCK_PR, self->res,
				   RDLM_LKF_NOQUEUE, 0, NULL));
	EXPECT_EQ(0, do_unlock(self->fd, lkid, 0));
	EXPECT_EQ(-ENOENT, do_unlock(self->fd, lkid, 0));
}

/* an unlocked lock's id names no later lock of the file */
TEST_F(ls, stale_lkid)
{
	uint32_t old, lkid;
	int i;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &old));
	ASSERT_EQ(0, do_unlock(self->fd, old, 0));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0,
				     &lkid));
		EXPECT_NE(old, lkid);
		EXPECT_EQ(-ENOENT, do_unlock(self->fd, old, 0));
		ASSERT_EQ(0, do_unlock(self->fd, lkid, 0));
		old = lkid;
	}
}

TEST_F(ls, info_and_stats)
{
	struct rdlm_lock_info info;
	struct rdlm_ls_stats st;
	uint32_t lkid;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_PR, self->res, 0, 0, &lkid));
	EXPECT_NE(0, lkid);
	ASSERT_EQ(0, lock_info(self->fd, lkid, &info));
	EXPECT_EQ(RDLM_LKS_GRANTED, info.state);
	EXPECT_EQ(RDLM_LOCK_PR, info.mode);
	EXPECT_EQ(strlen(self->res), info.namelen);
	EXPECT_EQ(0, memcmp(info.name, self->res, info.namelen));
	EXPECT_EQ(1, info.grants);
	EXPECT_EQ(0, info.fails);
	EXPECT_EQ(-ENOENT, lock_info(self->fd, lkid + 1, &info));
	EXPECT_EQ(-ENOENT, lock_info(self->fd2, lkid, &info));
	info.size = 4;
	info.lkid = lkid;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.lkid = lkid;
	info.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK_INFO, (void *)1));
	EXPECT_EQ(EFAULT, errno);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	ASSERT_EQ(0, ioctl(self->fd, RDLM_IOC_LS_STATS, &st));
	EXPECT_STREQ(test_ls(), st.name);
	EXPECT_EQ(1, st.file_locks);
	EXPECT_LE(1, st.grants);
	EXPECT_LE(1, st.locks);
	st.size = 0;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LS_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.reserved[3] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LS_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, do_unlock(self->fd, lkid, 0));
	EXPECT_EQ(-ENOENT, lock_info(self->fd, lkid, &info));
}

/* EX excludes, PR coexists; conversions; trylock; the LVB travels */
TEST_F(ls, modes_and_conversions)
{
	uint32_t a, b, c;
	struct rdlm_lock_req r;
	struct rdlm_unlock_req u;
	struct rdlm_lock_info info;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_PR, self->res, 0, 0, &a));
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_PR, self->res, 0, 0, &b));
	EXPECT_EQ(-EAGAIN, do_lock(self->fd2, RDLM_LOCK_EX, self->res,
				   RDLM_LKF_NOQUEUE, 0, NULL));
	lock_req_init(&r, RDLM_LOCK_EX, NULL, RDLM_LKF_CONVERT |
		      RDLM_LKF_NOQUEUE);
	r.lkid = a;
	EXPECT_EQ(-1, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-EAGAIN, r.status);
	EXPECT_EQ(a, r.lkid);
	/* a failed conversion leaves the old mode: NOQUEUE never demotes */
	ASSERT_EQ(0, lock_info(self->fd, a, &info));
	EXPECT_EQ(RDLM_LKS_GRANTED, info.state);
	EXPECT_EQ(0, r.sb_flags & RDLM_SBF_DEMOTED);
	EXPECT_EQ(RDLM_LOCK_PR, info.mode);
	EXPECT_EQ(1, info.fails);
	ASSERT_EQ(0, do_unlock(self->fd2, b, 0));
	/*
	 * alone now: up to EX. A word held shared cannot be upgraded in
	 * place: without CONVDEADLK that is -EDEADLK, the lock still PR.
	 */
	lock_req_init(&r, RDLM_LOCK_EX, NULL, RDLM_LKF_CONVERT);
	r.lkid = a;
	if (ioctl(self->fd, RDLM_IOC_LOCK, &r)) {
		EXPECT_EQ(EDEADLK, errno);
		ASSERT_EQ(0, lock_info(self->fd, a, &info));
		EXPECT_EQ(RDLM_LKS_GRANTED, info.state);
		EXPECT_EQ(RDLM_LOCK_PR, info.mode);
		ASSERT_EQ(0, do_convert(self->fd, a, RDLM_LOCK_EX,
					RDLM_LKF_CONVDEADLK));
	}
	/* write the LVB on the way down */
	ASSERT_EQ(0, lock_info(self->fd, a, &info));
	EXPECT_EQ(RDLM_LOCK_EX, info.mode);
	EXPECT_EQ(-EAGAIN, do_lock(self->fd2, RDLM_LOCK_PR, self->res,
				   RDLM_LKF_NOQUEUE, 0, NULL));
	lock_req_init(&r, RDLM_LOCK_NL, NULL, RDLM_LKF_CONVERT |
		      RDLM_LKF_VALBLK);
	r.lkid = a;
	memcpy(r.lvb, "value-block-1", 13);
	ASSERT_EQ(0, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(0, r.status);
	/*
	 * NL blocks nobody: the other file reads what was written (with a
	 * timeout, not NOQUEUE: this node may still be giving the word back)
	 */
	lock_req_init(&r, RDLM_LOCK_EX, self->res, RDLM_LKF_VALBLK);
	r.timeout_ms = 30000;
	ASSERT_EQ(0, ioctl(self->fd2, RDLM_IOC_LOCK, &r));
	c = r.lkid;
	EXPECT_EQ(0, memcmp(r.lvb, "value-block-1", 13));
	EXPECT_EQ(0, r.sb_flags & RDLM_SBF_VALNOTVALID);
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.lkid = c;
	u.flags = RDLM_LKF_VALBLK;
	memcpy(u.lvb, "value-block-2", 13);
	ASSERT_EQ(0, ioctl(self->fd2, RDLM_IOC_UNLOCK, &u));
	lock_req_init(&r, RDLM_LOCK_PR, NULL, RDLM_LKF_CONVERT |
		      RDLM_LKF_VALBLK);
	r.lkid = a;
	ASSERT_EQ(0, ioctl(self->fd, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(0, memcmp(r.lvb, "value-block-2", 13));
	EXPECT_EQ(0, do_unlock(self->fd, a, 0));
}

TEST_F(ls, timeout)
{
	uint32_t a, lkid = 77;
	struct rdlm_lock_req r;
	struct rdlm_lock_info info;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &a));
	lock_req_init(&r, RDLM_LOCK_PR, self->res, 0);
	r.timeout_ms = 300;
	r.lkid = lkid;
	EXPECT_EQ(-1, ioctl(self->fd2, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_EQ(-ETIMEDOUT, r.status);
	EXPECT_EQ(0, r.lkid);
	/* no lock left behind in fd2 */
	EXPECT_EQ(-ENOENT, lock_info(self->fd2, 1, &info));
	EXPECT_EQ(0, do_unlock(self->fd, a, 0));
}

/* asynchronous requests: completions and blocking notices are events */
TEST_F(ls, async_events)
{
	struct rdlm_event ev, evs[4];
	struct rdlm_lock_req r;
	struct rdlm_lock_info info;
	uint32_t a, b;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &a));
	lock_req_init(&r, RDLM_LOCK_PR, self->res, RDLM_LKF_ASYNC);
	r.user = 0x1234567890abcdefULL;
	ASSERT_EQ(0, ioctl(self->fd2, RDLM_IOC_LOCK, &r));
	b = r.lkid;
	EXPECT_NE(0, b);
	ASSERT_EQ(0, lock_info(self->fd2, b, &info));
	EXPECT_EQ(RDLM_LKS_WAITING, info.state);
	EXPECT_EQ(RDLM_LOCK_PR, info.req_mode);
	/* a waiting request cannot be unlocked, only cancelled */
	EXPECT_EQ(-EBUSY, do_unlock(self->fd2, b, 0));
	EXPECT_EQ(-EBUSY, do_convert(self->fd2, b, RDLM_LOCK_EX, 0));
	/* the holder hears that somebody waits for PR */
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(sizeof(ev), ev.size);
	EXPECT_EQ(RDLM_EV_BLOCKING, ev.type);
	EXPECT_EQ(a, ev.lkid);
	EXPECT_EQ(RDLM_LOCK_PR, ev.mode);
	/* nothing else yet, and too small a buffer is refused */
	EXPECT_EQ(-1, read(self->fd2, &ev, sizeof(ev) - 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, do_unlock(self->fd, a, 0));
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(RDLM_EV_COMPLETION, ev.type);
	EXPECT_EQ(b, ev.lkid);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(RDLM_LOCK_PR, ev.mode);
	EXPECT_EQ(0x1234567890abcdefULL, ev.user);
	/* asynchronous unlock: its completion is an event too */
	ASSERT_EQ(0, do_unlock(self->fd2, b, RDLM_LKF_ASYNC));
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(RDLM_EV_COMPLETION, ev.type);
	EXPECT_EQ(b, ev.lkid);
	EXPECT_EQ(-RDLM_EUNLOCK, ev.status);
	EXPECT_EQ(-ENOENT, lock_info(self->fd2, b, &info));
	/* several events in one read, O_NONBLOCK when there are none */
	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_PR, self->res, RDLM_LKF_ASYNC,
			     0, &a));
	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_NL, self->res, RDLM_LKF_ASYNC,
			     0, &b));
	usleep(200000);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	for (int n = 0, got = 0; got < 2 && n < 100; n++) {
		ssize_t k = read(self->fd, evs + got, sizeof(evs));

		if (k > 0)
			got += k / sizeof(ev);
		else
			usleep(100000);
		if (got == 2) {
			EXPECT_EQ(0, evs[0].status);
			EXPECT_EQ(0, evs[1].status);
		}
	}
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	/* an event is not lost to a bad buffer */
	ASSERT_EQ(0, do_unlock(self->fd, a, RDLM_LKF_ASYNC));
	usleep(200000);
	EXPECT_EQ(-1, read(self->fd, (void *)4096, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, next_event(self->fd, &ev, 10000));
	EXPECT_EQ(a, ev.lkid);
	EXPECT_EQ(-RDLM_EUNLOCK, ev.status);
}

TEST_F(ls, cancel)
{
	struct rdlm_event ev;
	struct rdlm_lock_info info;
	uint32_t a, b;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &a));
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_EX, self->res,
			     RDLM_LKF_ASYNC, 0, &b));
	EXPECT_EQ(0, do_unlock(self->fd2, b, RDLM_LKF_CANCEL));
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(RDLM_EV_COMPLETION, ev.type);
	EXPECT_EQ(b, ev.lkid);
	EXPECT_EQ(-RDLM_ECANCEL, ev.status);
	EXPECT_EQ(-ENOENT, lock_info(self->fd2, b, &info));
	EXPECT_EQ(-ENOENT, do_unlock(self->fd2, b, RDLM_LKF_CANCEL));
	/* a cancelled conversion keeps the old mode */
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_NL, self->res, 0, 0, &b));
	ASSERT_EQ(0, do_convert(self->fd2, b, RDLM_LOCK_PR, RDLM_LKF_ASYNC));
	ASSERT_EQ(0, lock_info(self->fd2, b, &info));
	EXPECT_EQ(RDLM_LKS_CONVERTING, info.state);
	EXPECT_EQ(0, do_unlock(self->fd2, b, RDLM_LKF_CANCEL));
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(-RDLM_ECANCEL, ev.status);
	EXPECT_EQ(RDLM_LOCK_NL, ev.mode);
	ASSERT_EQ(0, lock_info(self->fd2, b, &info));
	EXPECT_EQ(RDLM_LKS_GRANTED, info.state);
	EXPECT_EQ(RDLM_LOCK_NL, info.mode);
	EXPECT_EQ(0, do_unlock(self->fd, a, 0));
	EXPECT_EQ(0, do_unlock(self->fd2, b, 0));
}

static void on_alarm(int sig)
{
}

/* a signal interrupts a blocked request: -EINTR, and no lock is left */
TEST_F(ls, signal_interrupts)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct rdlm_lock_req r;
	struct rdlm_lock_info info;
	uint32_t a, b;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, self->res, 0, 0, &a));
	lock_req_init(&r, RDLM_LOCK_EX, self->res, 0);
	alarm(1);
	EXPECT_EQ(-1, ioctl(self->fd2, RDLM_IOC_LOCK, &r));
	EXPECT_EQ(EINTR, errno);
	EXPECT_EQ(-EINTR, r.status);
	EXPECT_EQ(0, r.lkid);
	EXPECT_EQ(-ENOENT, lock_info(self->fd2, 1, &info));
	/* an interrupted conversion keeps the old mode */
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_NL, self->res, 0, 0, &b));
	alarm(1);
	EXPECT_EQ(-EINTR, do_convert(self->fd2, b, RDLM_LOCK_EX, 0));
	ASSERT_EQ(0, lock_info(self->fd2, b, &info));
	EXPECT_EQ(RDLM_LKS_GRANTED, info.state);
	EXPECT_EQ(RDLM_LOCK_NL, info.mode);
	/* the holder still holds */
	ASSERT_EQ(0, lock_info(self->fd, a, &info));
	EXPECT_EQ(RDLM_LOCK_EX, info.mode);
	EXPECT_EQ(0, do_unlock(self->fd, a, 0));
	EXPECT_EQ(0, do_convert(self->fd2, b, RDLM_LOCK_EX, 0));
}

/* close() releases every lock of the file, a waiter then gets its grant */
TEST_F(ls, close_releases)
{
	struct rdlm_event ev;
	uint32_t a, b, c;
	int fd3 = open_joined();

	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, do_lock(fd3, RDLM_LOCK_EX, self->res, 0, 0, &a));
	ASSERT_EQ(0, do_lock(fd3, RDLM_LOCK_PR, "other", 0, 0, NULL));
	/* a waiting request of the closing file is cancelled, not granted */
	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, "third", 0, 0, &c));
	ASSERT_EQ(0, do_lock(fd3, RDLM_LOCK_EX, "third", RDLM_LKF_ASYNC, 0,
			     NULL));
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_EX, self->res,
			     RDLM_LKF_ASYNC, 0, &b));
	EXPECT_EQ(-ETIMEDOUT, next_event(self->fd2, &ev, 300));
	close(fd3);
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(b, ev.lkid);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(RDLM_LOCK_EX, ev.mode);
	EXPECT_EQ(0, do_unlock(self->fd, c, 0));
	EXPECT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, "other", RDLM_LKF_NOQUEUE,
			     0, NULL));
}

/* close() lets go of every lock of the file, however many */
TEST_F(ls, close_releases_many)
{
	char name[32];
	int i, fd3 = open_joined();

	ASSERT_LE(0, fd3);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "many-%d", i);
		ASSERT_EQ(0, do_lock(fd3, RDLM_LOCK_EX, name, 0, 0, NULL));
	}
	close(fd3);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "many-%d", i);
		ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, name,
				     RDLM_LKF_NOQUEUE, 0, NULL));
	}
}

/* kill -9 of a process blocked in a lock request and holding another */
TEST_F(ls, kill_releases)
{
	struct rdlm_event ev;
	uint32_t a, b;
	int pipefd[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, do_lock(self->fd, RDLM_LOCK_EX, "held-by-parent", 0, 0,
			     &a));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_joined();

		if (fd < 0 || do_lock(fd, RDLM_LOCK_EX, self->res, 0, 0, NULL))
			_exit(1);
		write(pipefd[1], "x", 1);
		do_lock(fd, RDLM_LOCK_EX, "held-by-parent", 0, 0, NULL);
		_exit(2);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(0, do_lock(self->fd2, RDLM_LOCK_EX, self->res,
			     RDLM_LKF_ASYNC, 0, &b));
	usleep(200000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(0, next_event(self->fd2, &ev, 10000));
	EXPECT_EQ(b, ev.lkid);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(0, do_unlock(self->fd, a, 0));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* a handful of random bytes, from a seeded generator */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static const unsigned int rdlm_cmds[] = {
	RDLM_IOC_VERSION, RDLM_IOC_JOIN, RDLM_IOC_LOCK, RDLM_IOC_UNLOCK,
	RDLM_IOC_LOCK_INFO, RDLM_IOC_LS_STATS,
};

static bool errno_ok(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case ENOTTY: case E2BIG: case ENOENT:
	case EPERM: case ENOTCONN: case EISCONN: case EBUSY: case EALREADY:
	case EAGAIN: case ETIMEDOUT: case EINTR: case ECANCELED: case ENOLCK:
	case EDEADLK: case EIO:
		return true;
	}
	return false;
}

/*
 * 100,000 ioctls with random numbers and random argument bytes, on joined
 * and unjoined files: only 0 or the documented errnos come back, and
 * nothing blocks for long (a SIGALRM would show as EINTR; requests that
 * pass validation carry NOQUEUE or a short timeout).
 */
TEST_F_TIMEOUT(dev, fuzz, 600)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int fds[3] = { self->fd, open_joined(), -1 };
	const unsigned long calls = 100000;
	unsigned long i, ok = 0, bad = 0;
	uint8_t *page, *arg;
	long pagesize = sysconf(_SC_PAGESIZE);

	ASSERT_LE(0, fds[1]);
	fds[2] = open(RDLM_DEV, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, fds[2]);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	rnd_state = getenv("RDLM_FUZZ_SEED") ?
		strtoull(getenv("RDLM_FUZZ_SEED"), NULL, 0) : time(NULL) | 1;
	TH_LOG("seed %#llx", (unsigned long long)rnd_state);
	/* the argument page is followed by an unmapped one */
	page = mmap(NULL, 2 * pagesize, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, munmap(page + pagesize, pagesize));

	for (i = 0; i < calls; i++) {
		uint64_t r = rnd();
		unsigned int cmd, size, k;
		int fd = fds[r % 3], ret;
		void *p;

		switch ((r >> 8) % 4) {
		case 0:		/* any number at all */
			cmd = rnd();
			break;
		case 1:		/* our magic, any number, direction, size */
			cmd = _IOC(rnd() % 4, RDLM_IOC_MAGIC, rnd() % 16,
				   rnd() % 512);
			break;
		default:	/* our commands */
			cmd = rdlm_cmds[rnd() % 6];
			break;
		}
		size = _IOC_SIZE(cmd) ? _IOC_SIZE(cmd) : 256;
		if (size > pagesize)
			size = pagesize;
		arg = page + pagesize - size;	/* ends at the hole */
		for (k = 0; k < size; k++)
			arg[k] = rnd();
		if ((r >> 16) % 4 && size >= 8) {
			/* mostly the right size field, often zero fields */
			*(uint32_t *)arg = size;
			if ((r >> 20) % 2)
				memset(arg + 4, 0, size - 4 > 60 ? 60 : size - 4);
			if ((r >> 21) % 2 && size > 64)
				memset(arg + 64, 0, size - 64);
			if (cmd == RDLM_IOC_LOCK) {
				struct rdlm_lock_req *lr = (void *)arg;

				lr->mode %= 5;
				lr->flags &= RDLM_LKF_ALL | RDLM_LKF_ASYNC;
				/* never block: trylock or a short timeout */
				if (!(lr->flags & RDLM_LKF_ASYNC) &&
				    !(lr->flags & RDLM_LKF_NOQUEUE))
					lr->timeout_ms = 1 + rnd() % 50;
				lr->namelen %= 4;
				lr->lkid %= 8;
			}
			if (cmd == RDLM_IOC_UNLOCK) {
				struct rdlm_unlock_req *ur = (void *)arg;

				ur->flags &= RDLM_LKF_ALL | RDLM_LKF_ASYNC;
				ur->lkid %= 8;
			}
			if (cmd == RDLM_IOC_JOIN && (r >> 22) % 2) {
				struct rdlm_join *jr = (void *)arg;

				memset(jr->name, 0, sizeof(jr->name));
				strcpy(jr->name, (r >> 23) % 2 ? test_ls() : "x");
			}
		}
		switch ((r >> 24) % 16) {
		case 0:
			p = NULL;
			break;
		case 1:
			p = (void *)(uintptr_t)(rnd() & 0xffff);
			break;
		case 2:
			p = (void *)0xffff888000000000ULL;	/* kernel */
			break;
		case 3:
			p = page + pagesize - size / 2;		/* runs into the hole */
			break;
		default:
			p = arg;
			break;
		}
		alarm(5);
		ret = ioctl(fd, cmd, p);
		alarm(0);
		if (ret == 0) {
			ok++;
		} else if (ret != -1 || !errno_ok(errno)) {
			bad++;
			TH_LOG("call %lu: ioctl(%#x) returned %d errno %d",
			       i, cmd, ret, errno);
		}
		if (!((r >> 40) % 64)) {
			/* drain events now and then, any size */
			char buf[512];

			ret = read(fds[2], buf, rnd() % sizeof(buf));
			if (ret < 0 && !errno_ok(errno)) {
				bad++;
				TH_LOG("read: errno %d", errno);
			}
		}
	}
	TH_LOG("%lu calls, %lu succeeded, %lu bad", calls, ok, bad);
	EXPECT_EQ(0, bad);
	close(fds[1]);
	close(fds[2]);
}

static void stress_child(unsigned int seed)
{
	static const char *const names[] = { "s0", "s1", "s2", "s3" };
	uint32_t lkids[16] = {};
	int fds[2], i, ret;

	rnd_state = seed | 1;
	fds[0] = open_joined();
	fds[1] = open_joined();
	if (fds[0] < 0 || fds[1] < 0)
		_exit(3);
	for (i = 0; i < 1500; i++) {
		uint64_t r = rnd();
		int f = r % 2, slot = (r >> 1) % 16;
		int mode = (r >> 40) % RDLM_LOCK_NR;
		const char *name = names[(r >> 7) % 4];
		uint32_t lkid = lkids[slot];
		char buf[sizeof(struct rdlm_event) * 3];

		switch ((r >> 9) % 9) {
		case 0:
			ret = do_lock(fds[f], mode, name, 0, 1 + (r >> 12) % 30,
				      &lkids[slot]);
			break;
		case 1:
			ret = do_lock(fds[f], mode, name, RDLM_LKF_ASYNC |
				      RDLM_LKF_VALBLK, (r >> 12) % 30,
				      &lkids[slot]);
			break;
		case 2:
			ret = do_lock(fds[f], mode, name, RDLM_LKF_NOQUEUE, 0,
				      &lkids[slot]);
			break;
		case 3:
			ret = do_convert(fds[f], lkid, mode,
					 (r >> 12) % 2 ? RDLM_LKF_ASYNC : 0);
			break;
		case 4:
			ret = do_unlock(fds[f], lkid, (r >> 12) % 2 ?
					RDLM_LKF_ASYNC : 0);
			break;
		case 5:
			ret = do_unlock(fds[f], lkid, RDLM_LKF_CANCEL);
			break;
		case 6:
			fcntl(fds[f], F_SETFL, O_NONBLOCK);
			ret = read(fds[f], buf, sizeof(buf)) < 0 ? -errno : 0;
			break;
		case 7:
			if ((r >> 12) % 8)
				continue;
			close(fds[f]);
			fds[f] = open_joined();
			if (fds[f] < 0)
				_exit(3);
			ret = 0;
			break;
		default:
			ret = do_lock(fds[f], mode, name, 0, 0, &lkids[slot]);
			break;
		}
		if (ret && !errno_ok(-ret))
			_exit(4);
	}
	_exit(0);
}

/*
 * Processes hammer four names with every request in random order while
 * signals fly and one of them is killed: only documented errnos, no hang
 * (a blocked request always ends: its holder moves on, or a signal comes),
 * and chardev.sh checks that nothing is left afterwards.
 */
TEST_F_TIMEOUT(dev, stress, 600)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	pid_t pids[4];
	int i, status, sig;

	/* before the fork: a loaded child may not run before the first one */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			stress_child(time(NULL) * (i + 1) + i);
	}
	for (i = 0; i < 200; i++) {
		usleep(20000);
		kill(pids[i % 4], SIGUSR1);
		if (i == 100)
			kill(pids[3], SIGKILL);
	}
	for (i = 0; i < 4; i++) {
		/* the rest must finish on their own; keep poking blocked ones */
		while (waitpid(pids[i], &status, WNOHANG) == 0) {
			kill(pids[i], SIGUSR1);
			usleep(50000);
		}
		sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		if (i == 3) {
			EXPECT_TRUE(sig == SIGKILL || (WIFEXITED(status) &&
						       !WEXITSTATUS(status)));
		} else {
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("child %d: status %#x", i, status);
		}
	}
}

TEST_HARNESS_MAIN
