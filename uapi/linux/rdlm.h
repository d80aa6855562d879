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
