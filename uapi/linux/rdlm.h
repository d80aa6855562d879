/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdlm: the ioctl ABI of /dev/rdlm.
 *
 * Every structure passed through an ioctl starts with its own size so that
 * the ABI can grow at the end; reserved fields must be zero. The ABI version
 * is bumped on every incompatible change.
 */
#ifndef _UAPI_LINUX_RDLM_H
#define _UAPI_LINUX_RDLM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define RDLM_ABI_VERSION	1

/*
 * Lock modes, shared by the kernel API (<linux/rdlm.h>) and /dev/rdlm.
 * NL holds nothing and only keeps the lock around for conversions; PR is
 * shared; PW is the protected (update) mode: compatible with PR holders
 * that were granted before it, exclusive against other PW and EX, and
 * mapped to the bakery's update lock where the engine has one; EX is
 * exclusive.
 */
#define RDLM_LOCK_NL		0
#define RDLM_LOCK_PR		1
#define RDLM_LOCK_PW		2
#define RDLM_LOCK_EX		3
#define RDLM_LOCK_NR		4

/* Request flags (rdlm_lock(), rdlm_unlock(), the lock ioctls). */
#define RDLM_LKF_NOQUEUE	0x0001	/* not grantable now: -EAGAIN */
#define RDLM_LKF_CONVERT	0x0002	/* change the mode of lksb->lkid */
#define RDLM_LKF_VALBLK		0x0004	/* read the LVB on grant, write on release */
#define RDLM_LKF_IVVALBLK	0x0008	/* mark the LVB invalid on release */
#define RDLM_LKF_CANCEL		0x0010	/* unlock: cancel a waiting request */
#define RDLM_LKF_NOQUEUEBAST	0x0020	/* NOQUEUE failure sends blocking callbacks */
#define RDLM_LKF_ALL		0x003f

/* Status-block flags (lksb->flags). */
#define RDLM_SBF_VALNOTVALID	0x01	/* LVB content invalid (a holder died) */
#define RDLM_SBF_LOST		0x02	/* lease expired: the lock was lost */

/* Completion status of unlock and cancel, as in fs/dlm. */
#define RDLM_EUNLOCK		0x10002
#define RDLM_ECANCEL		0x10001

#define RDLM_NAME_MAX		64	/* resource name bytes */
#define RDLM_LVB_MAX		32	/* lock value block bytes */

/**
 * struct rdlm_version - answer of RDLM_IOC_VERSION
 * @size: set by the caller to sizeof(struct rdlm_version)
 * @abi: ABI version implemented by the module (RDLM_ABI_VERSION)
 * @reserved: must be zero
 */
struct rdlm_version {
	__u32 size;
	__u32 abi;
	__u64 reserved;
};

#define RDLM_IOC_MAGIC		0xd1
#define RDLM_IOC_VERSION	_IOWR(RDLM_IOC_MAGIC, 0x00, struct rdlm_version)

#endif /* _UAPI_LINUX_RDLM_H */
