// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: a distributed lock manager over RDMA.
 *
 * Module entry points: bring the parts up in dependency order and take them
 * down in reverse. The fabric (its work queue, its ib_client) comes up
 * before configfs and /dev/rdlm, the only ways to reach it: no lockspace
 * exists before an administrator creates one, so devices reported early
 * find nothing to serve yet.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "rdlm.h"
#include "fabric/fabric.h"

static int __init rdlm_init(void)
{
	int ret;

	rdlm_debugfs_init();

	ret = rdlm_lockspace_init();
	if (ret)
		goto out_debugfs;

	/* the fabric's work queue before anything a user can reach */
	ret = rdlm_fabric_init();
	if (ret)
		goto out_lockspace;

	ret = rdlm_configfs_init();
	if (ret)
		goto out_fabric;

	ret = rdlm_chardev_init();
	if (ret)
		goto out_configfs;

	pr_info("loaded\n");
	return 0;

out_configfs:
	rdlm_configfs_exit();
out_fabric:
	rdlm_fabric_exit();
out_lockspace:
	rdlm_lockspace_exit();
out_debugfs:
	rdlm_debugfs_exit();
	return ret;
}

static void __exit rdlm_exit(void)
{
	rdlm_chardev_exit();
	rdlm_configfs_exit();
	rdlm_fabric_exit();
	rdlm_lockspace_exit();
	rdlm_debugfs_exit();
	pr_info("unloaded\n");
}

module_init(rdlm_init);
module_exit(rdlm_exit);

MODULE_AUTHOR("The rdlm developers");
MODULE_DESCRIPTION("Distributed lock manager over RDMA");
MODULE_LICENSE("GPL");
