// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the debugfs directory. Files below it are created by the parts they
 * describe; debugfs failures are never fatal, as debugfs is only for people.
 */
#include <linux/debugfs.h>

#include "rdlm.h"

struct dentry *rdlm_debugfs_root;

void rdlm_debugfs_init(void)
{
	rdlm_debugfs_root = debugfs_create_dir("rdlm", NULL);
}

void rdlm_debugfs_exit(void)
{
	debugfs_remove_recursive(rdlm_debugfs_root);
	rdlm_debugfs_root = NULL;
}
