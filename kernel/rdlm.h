/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdlm: internal declarations shared by the module's files.
 */
#ifndef RDLM_H
#define RDLM_H

#include <linux/debugfs.h>

/* Root of /sys/kernel/debug/rdlm, or an error pointer when debugfs is off. */
extern struct dentry *rdlm_debugfs_root;

int rdlm_chardev_init(void);
void rdlm_chardev_exit(void);

int rdlm_configfs_init(void);
void rdlm_configfs_exit(void);

void rdlm_debugfs_init(void);
void rdlm_debugfs_exit(void);

int rdlm_fabric_init(void);
void rdlm_fabric_exit(void);

#endif /* RDLM_H */
