// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the configfs namespace, the administrators' way in.
 *
 *   /sys/kernel/config/rdlm/
 *	nodes/<name>/nodeid	cluster members, one directory each
 *	lockspaces/		lockspaces (filled in with the lock manager)
 *
 * configfs files are root-owned, but a root without CAP_SYS_ADMIN (a
 * container, a capability-dropping service) must not reconfigure the
 * cluster either, so every change checks the capability explicitly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/configfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "rdlm.h"

#define RDLM_MAX_NODEID	1024

struct rdlm_node {
	struct config_item item;
	u32 nodeid;
};

static struct rdlm_node *to_rdlm_node(struct config_item *item)
{
	return container_of(item, struct rdlm_node, item);
}

static ssize_t rdlm_node_nodeid_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%u\n", to_rdlm_node(item)->nodeid);
}

static ssize_t rdlm_node_nodeid_store(struct config_item *item,
				      const char *page, size_t len)
{
	u32 nodeid;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtou32(page, 0, &nodeid);
	if (ret)
		return ret;
	if (nodeid == 0 || nodeid > RDLM_MAX_NODEID)
		return -ERANGE;

	to_rdlm_node(item)->nodeid = nodeid;
	return len;
}

CONFIGFS_ATTR(rdlm_node_, nodeid);

static struct configfs_attribute *rdlm_node_attrs[] = {
	&rdlm_node_attr_nodeid,
	NULL,
};

static void rdlm_node_release(struct config_item *item)
{
	kfree(to_rdlm_node(item));
}

static struct configfs_item_operations rdlm_node_item_ops = {
	.release	= rdlm_node_release,
};

static const struct config_item_type rdlm_node_type = {
	.ct_item_ops	= &rdlm_node_item_ops,
	.ct_attrs	= rdlm_node_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_item *rdlm_nodes_make_item(struct config_group *group,
						const char *name)
{
	struct rdlm_node *node;

	if (!capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);

	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	config_item_init_type_name(&node->item, name, &rdlm_node_type);
	return &node->item;
}

static struct configfs_group_operations rdlm_nodes_group_ops = {
	.make_item	= rdlm_nodes_make_item,
};

static const struct config_item_type rdlm_nodes_type = {
	.ct_group_ops	= &rdlm_nodes_group_ops,
	.ct_owner	= THIS_MODULE,
};

static const struct config_item_type rdlm_lockspaces_type = {
	.ct_owner	= THIS_MODULE,
};

static const struct config_item_type rdlm_root_type = {
	.ct_owner	= THIS_MODULE,
};

static struct config_group rdlm_nodes_group;
static struct config_group rdlm_lockspaces_group;

static struct configfs_subsystem rdlm_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf	= "rdlm",
			.ci_type	= &rdlm_root_type,
		},
	},
};

int rdlm_configfs_init(void)
{
	int ret;

	config_group_init(&rdlm_subsys.su_group);
	mutex_init(&rdlm_subsys.su_mutex);

	config_group_init_type_name(&rdlm_nodes_group, "nodes",
				    &rdlm_nodes_type);
	configfs_add_default_group(&rdlm_nodes_group, &rdlm_subsys.su_group);
	config_group_init_type_name(&rdlm_lockspaces_group, "lockspaces",
				    &rdlm_lockspaces_type);
	configfs_add_default_group(&rdlm_lockspaces_group,
				   &rdlm_subsys.su_group);

	ret = configfs_register_subsystem(&rdlm_subsys);
	if (ret)
		pr_err("cannot register configfs subsystem: %d\n", ret);
	return ret;
}

void rdlm_configfs_exit(void)
{
	configfs_unregister_subsystem(&rdlm_subsys);
}
