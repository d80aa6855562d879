/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The part of Linux 6.1's fs/ocfs2/stackglue.h (and of the o2dlm status
 * block it embeds, fs/ocfs2/dlm/dlmapi.h) a cluster stack plugin needs.
 * Neither header is in linux-headers: this copy must keep their layout
 * exactly (struct ocfs2_dlm_lksb, struct ocfs2_cluster_connection and the
 * plugin structures are shared with ocfs2.ko and ocfs2_stackglue.ko).
 *
 * Copyright (C) 2007, 2008 Oracle.  All rights reserved (the declarations).
 */
#ifndef _RDLM_OCFS2_STACKGLUE_H
#define _RDLM_OCFS2_STACKGLUE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/dlm.h>
#include <linux/dlmconstants.h>

struct file;
struct file_lock;

/* o2dlm's flag for a local lock, passed by dlmglue (stackglue.h) */
#define DLM_LKF_LOCAL		0x00100000

#define GROUP_NAME_MAX		64
#define CLUSTER_NAME_MAX	16

/* fs/ocfs2/dlm/dlmapi.h */
#define DLM_LVB_LEN		64

struct dlm_lock;

struct dlm_lockstatus {
	int status;		/* enum dlm_status */
	u32 flags;
	struct dlm_lock *lockid;
	char lvb[DLM_LVB_LEN];
};

struct ocfs2_protocol_version {
	u8 pv_major;
	u8 pv_minor;
};

struct fsdlm_lksb_plus_lvb {
	struct dlm_lksb lksb;
	char lvb[DLM_LVB_LEN];
};

struct ocfs2_cluster_connection;

struct ocfs2_dlm_lksb {
	union {
		struct dlm_lockstatus lksb_o2dlm;
		struct dlm_lksb lksb_fsdlm;
		struct fsdlm_lksb_plus_lvb padding;
	};
	struct ocfs2_cluster_connection *lksb_conn;
};

struct ocfs2_locking_protocol {
	struct ocfs2_protocol_version lp_max_version;
	void (*lp_lock_ast)(struct ocfs2_dlm_lksb *lksb);
	void (*lp_blocking_ast)(struct ocfs2_dlm_lksb *lksb, int level);
	void (*lp_unlock_ast)(struct ocfs2_dlm_lksb *lksb, int error);
};

struct ocfs2_cluster_connection {
	char cc_name[GROUP_NAME_MAX + 1];
	int cc_namelen;
	char cc_cluster_name[CLUSTER_NAME_MAX + 1];
	int cc_cluster_name_len;
	struct ocfs2_protocol_version cc_version;
	struct ocfs2_locking_protocol *cc_proto;
	void (*cc_recovery_handler)(int node_num, void *recovery_data);
	void *cc_recovery_data;
	void *cc_lockspace;
	void *cc_private;
};

struct ocfs2_stack_operations {
	int (*connect)(struct ocfs2_cluster_connection *conn);
	int (*disconnect)(struct ocfs2_cluster_connection *conn);
	int (*this_node)(struct ocfs2_cluster_connection *conn,
			 unsigned int *node);
	int (*dlm_lock)(struct ocfs2_cluster_connection *conn, int mode,
			struct ocfs2_dlm_lksb *lksb, u32 flags, void *name,
			unsigned int namelen);
	int (*dlm_unlock)(struct ocfs2_cluster_connection *conn,
			  struct ocfs2_dlm_lksb *lksb, u32 flags);
	int (*lock_status)(struct ocfs2_dlm_lksb *lksb);
	int (*lvb_valid)(struct ocfs2_dlm_lksb *lksb);
	void *(*lock_lvb)(struct ocfs2_dlm_lksb *lksb);
	int (*plock)(struct ocfs2_cluster_connection *conn, u64 ino,
		     struct file *file, int cmd, struct file_lock *fl);
	void (*dump_lksb)(struct ocfs2_dlm_lksb *lksb);
};

struct ocfs2_stack_plugin {
	char *sp_name;
	struct ocfs2_stack_operations *sp_ops;
	struct module *sp_owner;

	/* managed by the stack glue */
	struct list_head sp_list;
	unsigned int sp_count;
	struct ocfs2_protocol_version sp_max_proto;
};

int ocfs2_stack_glue_register(struct ocfs2_stack_plugin *plugin);
void ocfs2_stack_glue_unregister(struct ocfs2_stack_plugin *plugin);

#endif /* _RDLM_OCFS2_STACKGLUE_H */
