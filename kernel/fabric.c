// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the RDMA fabric, the only part of rdlm that touches verbs.
 *
 * It tracks every RDMA device through an ib_client. Removal may come from
 * module unload or from the device going away under us (`rdma link delete`),
 * so remove frees everything tied to the device before it returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "rdlm.h"

/**
 * struct rdlm_device - an RDMA device rdlm may use
 * @ibdev: the verbs device
 * @entry: link in rdlm_device_list
 */
struct rdlm_device {
	struct ib_device *ibdev;
	struct list_head entry;
};

static LIST_HEAD(rdlm_device_list);
static DEFINE_MUTEX(rdlm_device_mutex);	/* protects rdlm_device_list */

static struct ib_client rdlm_ib_client;

static int rdlm_add_one(struct ib_device *ibdev)
{
	struct rdlm_device *dev;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;

	mutex_lock(&rdlm_device_mutex);
	list_add_tail(&dev->entry, &rdlm_device_list);
	mutex_unlock(&rdlm_device_mutex);

	ib_set_client_data(ibdev, &rdlm_ib_client, dev);
	pr_info("added RDMA device %s\n", dev_name(&ibdev->dev));
	return 0;
}

static void rdlm_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rdlm_device *dev = client_data;

	mutex_lock(&rdlm_device_mutex);
	list_del(&dev->entry);
	mutex_unlock(&rdlm_device_mutex);

	pr_info("removed RDMA device %s\n", dev_name(&ibdev->dev));
	kfree(dev);
}

static struct ib_client rdlm_ib_client = {
	.name	= "rdlm",
	.add	= rdlm_add_one,
	.remove	= rdlm_remove_one,
};

/* debugfs "devices": one line per RDMA device, as the test cluster reads it */
static int rdlm_devices_show(struct seq_file *m, void *unused)
{
	struct rdlm_device *dev;

	mutex_lock(&rdlm_device_mutex);
	list_for_each_entry(dev, &rdlm_device_list, entry)
		seq_printf(m, "%s\n", dev_name(&dev->ibdev->dev));
	mutex_unlock(&rdlm_device_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rdlm_devices);

int rdlm_fabric_init(void)
{
	int ret;

	ret = ib_register_client(&rdlm_ib_client);
	if (ret) {
		pr_err("cannot register ib_client: %d\n", ret);
		return ret;
	}
	debugfs_create_file("devices", 0400, rdlm_debugfs_root, NULL,
			    &rdlm_devices_fops);
	return 0;
}

void rdlm_fabric_exit(void)
{
	/* A full fence: every remove callback has returned afterwards. */
	ib_unregister_client(&rdlm_ib_client);
}
