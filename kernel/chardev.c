// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the /dev/rdlm character device, the programs' way in.
 *
 * For now it answers only RDLM_IOC_VERSION; the lock calls follow with the
 * lock manager. Every ioctl copies a size-prefixed structure, checks the
 * size and the reserved fields, and answers with a precise errno.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rdlm.h>
#include <linux/uaccess.h>

#include "rdlm.h"

static long rdlm_ioctl_version(struct rdlm_version __user *uarg)
{
	struct rdlm_version ver;

	if (copy_from_user(&ver, uarg, sizeof(ver)))
		return -EFAULT;
	if (ver.size != sizeof(ver))
		return -EINVAL;
	if (ver.reserved)
		return -EINVAL;

	ver.abi = RDLM_ABI_VERSION;
	if (copy_to_user(uarg, &ver, sizeof(ver)))
		return -EFAULT;
	return 0;
}

static long rdlm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case RDLM_IOC_VERSION:
		return rdlm_ioctl_version(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations rdlm_fops = {
	.owner		= THIS_MODULE,
	.open		= nonseekable_open,
	.unlocked_ioctl	= rdlm_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

static struct miscdevice rdlm_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rdlm",
	.fops	= &rdlm_fops,
	.mode	= 0660,
};

int rdlm_chardev_init(void)
{
	return misc_register(&rdlm_miscdev);
}

void rdlm_chardev_exit(void)
{
	misc_deregister(&rdlm_miscdev);
}
