// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/rdlm: the node has the mode programs rely on, and the ioctls answer
 * malformed calls with precise errnos.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

TEST_HARNESS_MAIN
