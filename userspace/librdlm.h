/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librdlm: cluster locks from programs, over /dev/rdlm.
 *
 * A handle is a file descriptor of /dev/rdlm that joined one lockspace; the
 * locks taken through it belong to it and go away when it is closed or the
 * process dies. Every function returns 0 (or a non-negative value) on
 * success and a negative errno on failure; errno is left alone.
 *
 *	int fd = rdlm_open("mylockspace", 0);
 *	uint32_t lkid;
 *
 *	if (fd < 0) ...
 *	if (rdlm_lock(fd, RDLM_LOCK_EX, "res", 3, 0, 0, &lkid, NULL) == 0) {
 *		... critical section ...
 *		rdlm_unlock(fd, lkid, NULL);
 *	}
 *	rdlm_close(fd);
 */
#ifndef LIBRDLM_H
#define LIBRDLM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/rdlm.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDLM_DEVICE	"/dev/rdlm"

/* rdlm_open() flags */
#define RDLM_OPEN_CLOEXEC	0x1	/* O_CLOEXEC on the descriptor */
#define RDLM_OPEN_NONBLOCK	0x2	/* O_NONBLOCK: rdlm_read_event() never waits */
#define RDLM_OPEN_RECOVERY	0x4	/* read membership events (RDLM_EV_RECOVER_*) too */

int rdlm_open(const char *lockspace, unsigned int flags);
int rdlm_close(int fd);
int rdlm_abi_version(int fd);

int rdlm_lock(int fd, int mode, const void *name, size_t namelen,
	      uint32_t flags, uint32_t timeout_ms, uint32_t *lkid, void *lvb);
int rdlm_lock_sb(int fd, int mode, const void *name, size_t namelen,
		 uint32_t flags, uint32_t timeout_ms, uint32_t *lkid,
		 void *lvb, uint32_t *sb_flags);
int rdlm_lock_async(int fd, int mode, const void *name, size_t namelen,
		    uint32_t flags, uint32_t timeout_ms, uint64_t user,
		    uint32_t *lkid);
int rdlm_range_lock(int fd, int mode, const void *name, size_t namelen,
		    uint64_t start, uint64_t end, uint32_t flags,
		    uint32_t timeout_ms, uint64_t user, uint32_t *lkid);
int rdlm_convert(int fd, uint32_t lkid, int mode, uint32_t flags,
		 uint32_t timeout_ms, void *lvb);
int rdlm_unlock(int fd, uint32_t lkid, const void *lvb);
int rdlm_unlock_async(int fd, uint32_t lkid, const void *lvb);
int rdlm_cancel(int fd, uint32_t lkid);

int rdlm_read_event(int fd, struct rdlm_event *ev);
int rdlm_lock_info(int fd, uint32_t lkid, struct rdlm_lock_info *info);
int rdlm_ls_stats(int fd, struct rdlm_ls_stats *stats);

const char *rdlm_mode_name(int mode);
int rdlm_mode_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* LIBRDLM_H */
