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
 * connect() joins the rdlm lockspace named after the file system's UUID
 * (OCFS2's group name, 32 hex digits): one the administrator made in
 * configfs, or else one rdlm_new_lockspace() creates from the configfs
 * lockspace named after the file system's cluster name as its template.
 * It needs 64-byte LVBs (configfs lvb_len 64). Modes and flags have
 * fs/dlm's numbers in rdlm too and pass through as they are.
 * Documentation/ocfs2.rst tells what maps to what and the limits.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/rdlm.h>

#include "stackglue.h"

/*
 * The status block of one OCFS2 lock, in the space OCFS2 reserves for
 * fs/dlm's (struct fsdlm_lksb_plus_lvb): rdlm's status block and the
 * 64-byte LVB buffer OCFS2 reads and writes, all of which rdlm carries
 * (the lockspace's lvb_len is 64, checked at connect).
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

/* fs/dlm's numbers are rdlm's: modes and flags pass through unchanged. */
static void o2rdlm_check_abi(void)
{
	BUILD_BUG_ON(RDLM_LOCK_NL != DLM_LOCK_NL);
	BUILD_BUG_ON(RDLM_LOCK_CR != DLM_LOCK_CR);
	BUILD_BUG_ON(RDLM_LOCK_CW != DLM_LOCK_CW);
	BUILD_BUG_ON(RDLM_LOCK_PR != DLM_LOCK_PR);
	BUILD_BUG_ON(RDLM_LOCK_PW != DLM_LOCK_PW);
	BUILD_BUG_ON(RDLM_LOCK_EX != DLM_LOCK_EX);
	BUILD_BUG_ON(RDLM_LKF_NOQUEUE != DLM_LKF_NOQUEUE);
	BUILD_BUG_ON(RDLM_LKF_CANCEL != DLM_LKF_CANCEL);
	BUILD_BUG_ON(RDLM_LKF_CONVERT != DLM_LKF_CONVERT);
	BUILD_BUG_ON(RDLM_LKF_VALBLK != DLM_LKF_VALBLK);
	BUILD_BUG_ON(RDLM_LKF_QUECVT != DLM_LKF_QUECVT);
	BUILD_BUG_ON(RDLM_LKF_IVVALBLK != DLM_LKF_IVVALBLK);
	BUILD_BUG_ON(RDLM_LKF_CONVDEADLK != DLM_LKF_CONVDEADLK);
	BUILD_BUG_ON(RDLM_LKF_NODLCKWT != DLM_LKF_NODLCKWT);
	BUILD_BUG_ON(RDLM_LKF_EXPEDITE != DLM_LKF_EXPEDITE);
	BUILD_BUG_ON(RDLM_LKF_NOQUEUEBAST != DLM_LKF_NOQUEUEBAST);
	BUILD_BUG_ON(RDLM_LKF_HEADQUE != DLM_LKF_HEADQUE);
	BUILD_BUG_ON(RDLM_LKF_NOORDER != DLM_LKF_NOORDER);
	BUILD_BUG_ON(RDLM_LKF_ALTPR != DLM_LKF_ALTPR);
	BUILD_BUG_ON(RDLM_LKF_ALTCW != DLM_LKF_ALTCW);
	BUILD_BUG_ON(RDLM_LKF_ALL & DLM_LKF_LOCAL);
	BUILD_BUG_ON(RDLM_LVB_MAX < DLM_LVB_LEN);
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
	if (status == -ENOLCK && (rl->sb.flags & RDLM_SBF_LOST))
		/*
		 * A lease ran out (bakery, central), the home went away or
		 * this node lost quorum: another node may be granted what
		 * OCFS2 still caches. dlmglue only logs the status; there is
		 * no way to tell it that a granted lock is gone.
		 */
		pr_err_ratelimited("ocfs2_stack_rdlm: %s: a granted lock was lost (lease expired, home gone or quorum lost)\n",
				   lksb->lksb_conn->cc_name);
	proto->lp_lock_ast(lksb);
}

static void o2rdlm_bast(void *arg, int mode)
{
	unsigned long tag;
	struct ocfs2_dlm_lksb *lksb = o2rdlm_arg_lksb(arg, &tag);

	lksb->lksb_conn->cc_proto->lp_blocking_ast(lksb, mode);
}

static int o2rdlm_lock(struct ocfs2_cluster_connection *conn, int mode,
		       struct ocfs2_dlm_lksb *lksb, u32 flags, void *name,
		       unsigned int namelen)
{
	struct o2rdlm_conn *c = conn->cc_private;
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);

	/*
	 * DLM_LKF_LOCAL is o2dlm's and means nothing here; every other flag
	 * is fs/dlm's and rdlm's alike (rdlm refuses what it does not know).
	 * NODLCKWT on every request, as ocfs2_stack_user gives fs/dlm: two
	 * up-conversions that block each other both wait, and dlmglue
	 * cancels one when it gets the blocking callback.
	 */
	flags &= ~DLM_LKF_LOCAL;
	flags |= DLM_LKF_NODLCKWT;
	rl->sb.lvb = rl->lvb;
	return rdlm_lock(c->ls, mode, &rl->sb, flags, name, namelen, 0,
			 o2rdlm_ast, lksb, o2rdlm_bast);
}

static int o2rdlm_unlock(struct ocfs2_cluster_connection *conn,
			 struct ocfs2_dlm_lksb *lksb, u32 flags)
{
	struct o2rdlm_conn *c = conn->cc_private;
	struct o2rdlm_lksb *rl = o2rdlm_sb(lksb);
	unsigned long tag = O2RDLM_ARG_UNLOCK;
	int ret;

	flags &= ~DLM_LKF_LOCAL;
	if (flags & DLM_LKF_CANCEL)
		tag = O2RDLM_ARG_CANCEL;
	rl->sb.lvb = rl->lvb;
	ret = rdlm_unlock(c->ls, rl->sb.lkid, flags, &rl->sb,
			  (void *)((unsigned long)lksb | tag));
	/*
	 * Nothing waits to be cancelled: the request was granted or failed
	 * and its ast comes or came. fs/dlm answers 0 then, and dlmglue
	 * expects that.
	 */
	if (ret == -EALREADY && (flags & DLM_LKF_CANCEL))
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

static void o2rdlm_recover_slot(void *arg, u32 nodeid, u32 slot)
{
	struct o2rdlm_conn *c = arg;

	c->conn->cc_recovery_handler(nodeid, c->conn->cc_recovery_data);
}

static const struct rdlm_lockspace_ops o2rdlm_ls_ops = {
	.recover_slot = o2rdlm_recover_slot,
};

static int o2rdlm_connect(struct ocfs2_cluster_connection *conn)
{
	const char *tmpl = conn->cc_cluster_name;
	struct o2rdlm_conn *c;
	u32 lvb_len;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->conn = conn;
	/*
	 * The lockspace named after the UUID: the administrator's configfs
	 * one if it exists, else a new one from the template named after
	 * the cluster name.
	 */
	ret = rdlm_new_lockspace(conn->cc_name, tmpl, 0, &c->ls);
	if (ret) {
		if (ret == -ENOENT)
			pr_err("ocfs2_stack_rdlm: no rdlm lockspace %s and no template lockspace \"%s\" (the cluster name) in configfs\n",
			       conn->cc_name, tmpl);
		else
			pr_err("ocfs2_stack_rdlm: lockspace %s (template \"%s\"): %d\n",
			       conn->cc_name, tmpl, ret);
		kfree(c);
		return ret;
	}
	lvb_len = rdlm_lockspace_lvb_len(c->ls);
	if (lvb_len < DLM_LVB_LEN) {
		pr_err("ocfs2_stack_rdlm: lockspace %s has %u-byte LVBs, OCFS2 needs %u: set lvb_len to %u\n",
		       conn->cc_name, lvb_len, DLM_LVB_LEN, DLM_LVB_LEN);
		rdlm_release_lockspace(c->ls, true);
		kfree(c);
		return -EINVAL;
	}
	conn->cc_private = c;
	conn->cc_lockspace = c->ls;
	rdlm_lockspace_watch(c->ls, &c->watch, &o2rdlm_ls_ops, c);
	return 0;
}

static int o2rdlm_disconnect(struct ocfs2_cluster_connection *conn)
{
	struct o2rdlm_conn *c = conn->cc_private;
	int ret;

	rdlm_lockspace_unwatch(c->ls, &c->watch);
	/* dlmglue released every lock before: a busy lockspace is a leak */
	ret = rdlm_release_lockspace(c->ls, false);
	if (ret) {
		pr_warn("ocfs2_stack_rdlm: lockspace %s: locks remain at disconnect (%d), released by force\n",
			conn->cc_name, ret);
		rdlm_release_lockspace(c->ls, true);
	}
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

/*
 * fcntl() locks across the nodes, for OCFS2's ->lock() (ocfs2_plock()),
 * as ocfs2_stack_user does it over fs/dlm. OCFS2 asks only when a plugin
 * has this op; its cancel (lockd's F_CANCELLK) becomes an unlock there too.
 */
static int o2rdlm_plock(struct ocfs2_cluster_connection *conn, u64 ino,
			struct file *file, int cmd, struct file_lock *fl)
{
	struct o2rdlm_conn *c = conn->cc_private;

	return rdlm_posix_fcntl(c->ls, ino, file, cmd, fl);
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
	.plock		= o2rdlm_plock,
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
	int ret;

	o2rdlm_check_abi();
	ret = ocfs2_stack_glue_register(&o2rdlm_plugin);
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
