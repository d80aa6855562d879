// SPDX-License-Identifier: GPL-2.0
/*
 * ocfs2_stack_rdlm: an OCFS2 cluster stack plugin over rdlm's kernel API.
 *
 * OCFS2's stack glue (fs/ocfs2/stackglue.c) asks for the plugin named
 * "o2cb" when the file system's cluster stack is "o2cb" and for the one
 * named "user" for every other stack label: this plugin registers as
 * "user" (ocfs2_stack_user.ko must not be loaded with it) and serves the
 * stack label the administrator writes to /sys/fs/ocfs2/cluster_stack and
 * mkfs.ocfs2 writes to the disk ("rdlm" in our documentation).
 *
 * connect() finds the rdlm lockspace named after the file system's UUID
 * (OCFS2's group name, 32 hex digits) or, failing that, after its cluster
 * name; the administrator creates it in configfs before mounting.
 * Documentation/ocfs2.rst tells what maps to what and the limits.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/rdlm.h>

#include "stackglue.h"

/*
 * The status block of one OCFS2 lock, in the space OCFS2 reserves for
 * fs/dlm's (struct fsdlm_lksb_plus_lvb): rdlm's status block and the
 * 64-byte LVB buffer OCFS2 reads and writes. rdlm carries the first
 * RDLM_LVB_MAX bytes of it.
 */
struct o2rdlm_lksb {
	struct rdlm_lksb sb;
	char lvb[DLM_LVB_LEN];
};

/* one mounted file system */
struct o2rdlm_conn {
	struct rdlm_lockspace *ls;
	struct rdlm_watch watch;
	struct ocfs2_cluster_connection *conn;
};

/*
 * The ast's argument is the OCFS2 status block, its low bits telling
 * what the last request of the lock was (the block is pointer aligned).
 */
#define O2RDLM_ARG_UNLOCK	1UL
#define O2RDLM_ARG_CANCEL	2UL
#define O2RDLM_ARG_MASK		3UL

static struct o2rdlm_lksb *o2rdlm_sb(struct ocfs2_dlm_lksb *lksb)
{
	BUILD_BUG_ON(sizeof(struct o2rdlm_lksb) >
		     sizeof(struct fsdlm_lksb_plus_lvb));
	return (struct o2rdlm_lksb *)&lksb->padding;
}

static struct ocfs2_dlm_lksb *o2rdlm_arg_lksb(void *arg, unsigned long *tag)
{
	*tag = (unsigned long)arg & O2RDLM_ARG_MASK;
	return (struct ocfs2_dlm_lksb *)((unsigned long)arg & ~O2RDLM_ARG_MASK);
}

static int o2rdlm_mode(int dlm_mode)
{
	switch (dlm_mode) {
	case DLM_LOCK_NL:
		return RDLM_LOCK_NL;
	case DLM_LOCK_PR:
		return RDLM_LOCK_PR;
	case DLM_LOCK_PW:
		return RDLM_LOCK_PW;
	case DLM_LOCK_EX:
		return RDLM_LOCK_EX;
	default:
		return -EINVAL;	/* CR, CW: OCFS2 does not use them */
	}
}

static int o2rdlm_dlm_mode(int mode)
{
	static const int dlm_modes[RDLM_LOCK_NR] = {
		[RDLM_LOCK_NL] = DLM_LOCK_NL,
		[RDLM_LOCK_PR] = DLM_LOCK_PR,
		[RDLM_LOCK_PW] = DLM_LOCK_PW,
		[RDLM_LOCK_EX] = DLM_LOCK_EX,
	};

	return mode >= 0 && mode < RDLM_LOCK_NR ? dlm_modes[mode] : DLM_LOCK_EX;
}

/*
 * rdlm carries RDLM_LVB_MAX bytes, OCFS2 writes up to DLM_LVB_LEN. An LVB
 * whose tail is not zero (only the inode LVB, struct ocfs2_meta_lvb, is
 * longer than 32 bytes) is not sent: its first byte, the version every
 * OCFS2 LVB starts with, is cleared first, so the next grantee finds an
 * LVB no OCFS2 reader trusts and reads the inode from the disk. Readers
 * get the first RDLM_LVB_MAX bytes and a zero tail.
 */
static void o2rdlm_lvb_out(struct o2rdlm_lksb *rl)
{
	if (memchr_inv(rl->lvb + RDLM_LVB_MAX, 0, DLM_LVB_LEN - RDLM_LVB_MAX))
		rl->lvb[0] = 0;
	rl->sb.lvb = rl->lvb;
}

static void o2rdlm_ast(void *arg)
{
	unsigned long tag;
	struct ocfs2_dlm_lksb *lksb = o2rdlm_arg_lksb(arg, &tag);
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);
	struct ocfs2_locking_protocol *proto = lksb->lksb_conn->cc_proto;
	int status = rl->sb.status;

	if (status == -RDLM_ECANCEL ||
	    (tag & O2RDLM_ARG_UNLOCK &&
	     (status == -RDLM_EUNLOCK || status == -EIO))) {
		/*
		 * An unlock whose LVB write the home did not confirm (-EIO)
		 * released the lock all the same.
		 */
		proto->lp_unlock_ast(lksb, 0);
		return;
	}
	if (status == -EIO) {
		/* a down-conversion that is done; its LVB write is not */
		rl->sb.status = 0;
		rl->sb.flags |= RDLM_SBF_VALNOTVALID;
	}
	memset(rl->lvb + RDLM_LVB_MAX, 0, DLM_LVB_LEN - RDLM_LVB_MAX);
	proto->lp_lock_ast(lksb);
}

static void o2rdlm_bast(void *arg, int mode)
{
	unsigned long tag;
	struct ocfs2_dlm_lksb *lksb = o2rdlm_arg_lksb(arg, &tag);

	lksb->lksb_conn->cc_proto->lp_blocking_ast(lksb, o2rdlm_dlm_mode(mode));
}

static int o2rdlm_lock(struct ocfs2_cluster_connection *conn, int mode,
		       struct ocfs2_dlm_lksb *lksb, u32 flags, void *name,
		       unsigned int namelen)
{
	struct o2rdlm_conn *c = conn->cc_private;
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);
	int rmode = o2rdlm_mode(mode);
	u32 rflags = 0;

	/*
	 * DLM_LKF_LOCAL is o2dlm's, DLM_LKF_NODLCKWT fs/dlm's (no deadlock
	 * timeout): neither means anything to rdlm.
	 */
	flags &= ~(DLM_LKF_LOCAL | DLM_LKF_NODLCKWT);
	if (flags & DLM_LKF_NOQUEUE)
		rflags |= RDLM_LKF_NOQUEUE;
	if (flags & DLM_LKF_CONVERT)
		rflags |= RDLM_LKF_CONVERT;
	if (flags & DLM_LKF_VALBLK)
		rflags |= RDLM_LKF_VALBLK;
	flags &= ~(DLM_LKF_NOQUEUE | DLM_LKF_CONVERT | DLM_LKF_VALBLK);
	if (flags || rmode < 0)
		return -EINVAL;
	o2rdlm_lvb_out(rl);
	return rdlm_lock(c->ls, rmode, &rl->sb, rflags, name, namelen, 0,
			 o2rdlm_ast, lksb, o2rdlm_bast);
}

static int o2rdlm_unlock(struct ocfs2_cluster_connection *conn,
			 struct ocfs2_dlm_lksb *lksb, u32 flags)
{
	struct o2rdlm_conn *c = conn->cc_private;
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);
	unsigned long tag = O2RDLM_ARG_UNLOCK;
	u32 rflags = 0;
	int ret;

	flags &= ~(DLM_LKF_LOCAL | DLM_LKF_NODLCKWT);
	if (flags & DLM_LKF_CANCEL) {
		rflags |= RDLM_LKF_CANCEL;
		tag = O2RDLM_ARG_CANCEL;
	}
	if (flags & DLM_LKF_VALBLK)
		rflags |= RDLM_LKF_VALBLK;
	if (flags & DLM_LKF_IVVALBLK)
		rflags |= RDLM_LKF_IVVALBLK;
	flags &= ~(DLM_LKF_CANCEL | DLM_LKF_VALBLK | DLM_LKF_IVVALBLK);
	if (flags)
		return -EINVAL;
	if (!(rflags & RDLM_LKF_CANCEL))
		o2rdlm_lvb_out(rl);
	ret = rdlm_unlock(c->ls, rl->sb.lkid, rflags, &rl->sb,
			  (void *)((unsigned long)lksb | tag));
	/*
	 * Nothing waits to be cancelled: the request was granted or failed
	 * and its ast comes or came. fs/dlm answers 0 then, and dlmglue
	 * expects that.
	 */
	if (ret == -EALREADY && (rflags & RDLM_LKF_CANCEL))
		ret = 0;
	return ret;
}

static int o2rdlm_lock_status(struct ocfs2_dlm_lksb *lksb)
{
	return o2rdlm_sb(lksb)->sb.status;
}

static int o2rdlm_lvb_valid(struct ocfs2_dlm_lksb *lksb)
{
	return !(o2rdlm_sb(lksb)->sb.flags & RDLM_SBF_VALNOTVALID);
}

static void *o2rdlm_lock_lvb(struct ocfs2_dlm_lksb *lksb)
{
	return o2rdlm_sb(lksb)->lvb;
}

static void o2rdlm_dump_lksb(struct ocfs2_dlm_lksb *lksb)
{
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);

	pr_info("ocfs2_stack_rdlm: lksb status %d lkid %u flags 0x%x\n",
		rl->sb.status, rl->sb.lkid, rl->sb.flags);
}

static void o2rdlm_recover_slot(void *arg, u32 nodeid)
{
	struct o2rdlm_conn *c = arg;

	c->conn->cc_recovery_handler(nodeid, c->conn->cc_recovery_data);
}

static const struct rdlm_lockspace_ops o2rdlm_ls_ops = {
	.recover_slot = o2rdlm_recover_slot,
};

static int o2rdlm_connect(struct ocfs2_cluster_connection *conn)
{
	struct o2rdlm_conn *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->conn = conn;
	ret = rdlm_lockspace_find(conn->cc_name, &c->ls);
	if (ret == -ENOENT && conn->cc_cluster_name_len)
		ret = rdlm_lockspace_find(conn->cc_cluster_name, &c->ls);
	if (ret) {
		pr_err("ocfs2_stack_rdlm: no rdlm lockspace %s%s%s: create it in configfs first\n",
		       conn->cc_name, conn->cc_cluster_name_len ? " or " : "",
		       conn->cc_cluster_name);
		kfree(c);
		return ret;
	}
	conn->cc_private = c;
	conn->cc_lockspace = c->ls;
	rdlm_lockspace_watch(c->ls, &c->watch, &o2rdlm_ls_ops, c);
	return 0;
}

static int o2rdlm_disconnect(struct ocfs2_cluster_connection *conn)
{
	struct o2rdlm_conn *c = conn->cc_private;

	rdlm_lockspace_unwatch(c->ls, &c->watch);
	rdlm_lockspace_put(c->ls);
	conn->cc_private = NULL;
	conn->cc_lockspace = NULL;
	kfree(c);
	return 0;
}

static int o2rdlm_this_node(struct ocfs2_cluster_connection *conn,
			    unsigned int *node)
{
	struct o2rdlm_conn *c = conn->cc_private;

	*node = rdlm_lockspace_this_node(c->ls);
	return 0;
}

static struct ocfs2_stack_operations o2rdlm_ops = {
	.connect	= o2rdlm_connect,
	.disconnect	= o2rdlm_disconnect,
	.this_node	= o2rdlm_this_node,
	.dlm_lock	= o2rdlm_lock,
	.dlm_unlock	= o2rdlm_unlock,
	.lock_status	= o2rdlm_lock_status,
	.lvb_valid	= o2rdlm_lvb_valid,
	.lock_lvb	= o2rdlm_lock_lvb,
	.dump_lksb	= o2rdlm_dump_lksb,
};

/* stackglue asks for "user" for any stack label other than "o2cb" */
static struct ocfs2_stack_plugin o2rdlm_plugin = {
	.sp_name	= "user",
	.sp_ops		= &o2rdlm_ops,
	.sp_owner	= THIS_MODULE,
};

static int __init o2rdlm_init(void)
{
	int ret = ocfs2_stack_glue_register(&o2rdlm_plugin);

	if (ret == -EEXIST)
		pr_err("ocfs2_stack_rdlm: another \"user\" stack plugin is loaded (ocfs2_stack_user?)\n");
	return ret;
}

static void __exit o2rdlm_exit(void)
{
	ocfs2_stack_glue_unregister(&o2rdlm_plugin);
}

module_init(o2rdlm_init);
module_exit(o2rdlm_exit);

MODULE_AUTHOR("rdlm");
MODULE_DESCRIPTION("OCFS2 cluster stack plugin over rdlm");
MODULE_LICENSE("GPL");
