// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm: the configfs namespace, the administrators' way in.
 *
 *   /sys/kernel/config/rdlm/
 *	nodes/<name>/		one directory per cluster node
 *		nodeid		1..1024, unique
 *		address		IPv4 or IPv6 address of its RDMA port
 *		port		rdma_cm port (default 21064)
 *		local		1 on the one node that is this machine
 *	lockspaces/<name>/	one directory per lockspace
 *		members		node ids, comma separated ("1,2,3")
 *		engine		protocol engine: bakery, central, dqnl, dqnl-sf,
 *				ncosed; rangeseg or rangecomb: range locks
 *				only (rdlm_range_lock())
 *		atomic_mode	"nic" (one-sided atomics) or "cpu" (home applies)
 *		table_size	lock words per member table
 *		mailbox_slots	receive area slots per member
 *		lease_us, omega_ns, backoff_r_us, backoff_l_us, kmax,
 *		update_locks, nr_reqs	engine parameters; lease_us 0: no
 *				leases (holds last until released; the
 *				range engines refuse it)
 *		local_grants_max	local takeovers of a held lock word
 *		cache_us	hold caching: a lock word no local lock uses
 *				any more is kept this long for the next one,
 *				unless another node waits (at most half the
 *				lease; default 0: given back at once)
 *		max_locks	locks on this node (default 65536)
 *		max_locks_per_file	locks and unread events of one
 *				/dev/rdlm file (default 4096)
 *		max_lvbs	LVBs kept as a home (default 65536)
 *		lvb_len		bytes of a lock value block: 16, 32 (default),
 *				48 or 64
 *		lvb_read	1 (default): in NIC-atomic mode read a remote
 *				home's LVB by RDMA READ of its record; 0: ask
 *				by message
 *		uid, gid, mode	who may join through /dev/rdlm (default
 *				root:root 0600)
 *		fencing		1 (default): a departed member's locks are
 *				recovered only once its fencing is
 *				acknowledged (fence_ack); 0: after the
 *				recovery grace, trusting that a node cut off
 *				learns it within the grace
 *		recovery_grace_ms	with fencing 0: wait after a member
 *				departed before its locks are recovered
 *				(default 5000)
 *		enable		1 brings the lockspace up, 0 takes it down
 *		membership	while enabled: the cluster's agreed membership,
 *				"EPOCH QUORATE NODEID..." (rdlm_controld)
 *		managed		1 (default): rdlm_controld manages the
 *				membership (and, enabled while it runs, the
 *				lockspace grants nothing before its first
 *				line); 0: static, rdlm_controld leaves it alone
 *		fence_ack	while enabled: a departed node id whose
 *				fencing is done, recovered from at once
 *
 * A kernel caller (a cluster file system) may create a lockspace of its
 * own from one of these as a template: rdlm_new_lockspace() copies its
 * attributes; such lockspaces are not in configfs.
 *
 * Every write is validated in full before anything changes: junk answers
 * -EINVAL with one line in the kernel log saying why, anything a running
 * lockspace depends on answers -EBUSY while it is enabled. configfs files are
 * root-owned, but a root without CAP_SYS_ADMIN (a container, a
 * capability-dropping service) must not reconfigure the cluster either, so
 * every change checks the capability explicitly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/configfs.h>
#include <linux/ctype.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rdlm.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "rdlm.h"
#include "fabric/fabric.h"

#define RDLM_DEFAULT_PORT	21064
#define RDLM_ADDR_MAX		48

/* Protects every node and lockspace below; taken inside configfs' su_mutex. */
static DEFINE_MUTEX(rdlm_cfg_mutex);
static LIST_HEAD(rdlm_node_list);

struct rdlm_node {
	struct config_item item;
	struct list_head entry;
	u32 nodeid;
	char address[RDLM_ADDR_MAX];
	u16 port;
	bool local;
	unsigned int users;	/* enabled lockspaces relying on this node */
};

struct rdlm_cfg_ls {
	struct config_item item;
	u32 members[RDLM_MAX_MEMBERS];
	u32 nr_members;
	char engine[16];
	u8 atomic_mode;
	u32 table_size;
	u32 mailbox_slots;
	u32 lease_us;
	u32 omega_ns;
	u32 backoff_r_us;
	u32 backoff_l_us;
	u32 kmax;
	u32 update_locks;
	u32 nr_reqs;
	u32 local_grants_max;
	u32 cache_us;
	u32 max_locks;
	u32 max_locks_per_file;
	u32 max_lvbs;
	u32 lvb_len;
	u32 lvb_read;
	u32 uid;
	u32 gid;
	u32 mode;
	u32 recovery_grace_ms;
	u32 fencing;
	u32 managed;
	struct rdlm_fabric_ls *fls;	/* non-NULL while enabled */
	struct rdlm_lockspace *lm;	/* its lock manager, while enabled */
	struct rdlm_node *pinned[RDLM_MAX_MEMBERS + 1];
	u32 nr_pinned;
	/* made by rdlm_new_lockspace(), not in configfs */
	bool kernel_made;
	struct list_head kernel_entry;
	u32 creators;
};

/* Lockspaces of kernel callers, under rdlm_cfg_mutex. */
static LIST_HEAD(rdlm_kernel_lss);

static const char *const rdlm_engine_names[] = {
	"bakery", "central", "dqnl", "dqnl-sf", "ncosed", "rangeseg", "rangecomb",
};

static const char *const rdlm_atomic_names[] = {
	[RDLM_ATOMIC_NIC] = "nic",
	[RDLM_ATOMIC_CPU] = "cpu",
};

static struct rdlm_node *to_rdlm_node(struct config_item *item)
{
	return container_of(item, struct rdlm_node, item);
}

static struct rdlm_cfg_ls *to_rdlm_cfg_ls(struct config_item *item)
{
	return container_of(item, struct rdlm_cfg_ls, item);
}

#define cfg_reject(item, fmt, ...) \
	pr_info("config %s: " fmt "\n", config_item_name(item), ##__VA_ARGS__)

/*
 * Copy a configfs write into @buf without its one trailing newline. Writes
 * longer than the buffer, or with other control characters, are junk.
 */
static int rdlm_cfg_string(struct config_item *item, const char *page,
			   size_t len, char *buf, size_t size)
{
	size_t i;

	if (len && page[len - 1] == '\n')
		len--;
	if (len >= size) {
		cfg_reject(item, "value too long");
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		if (!isprint(page[i])) {
			cfg_reject(item, "value has control characters");
			return -EINVAL;
		}
	}
	memcpy(buf, page, len);
	buf[len] = '\0';
	return 0;
}

/* Parse an unsigned number in [min, max]; anything else is -EINVAL. */
static int rdlm_cfg_u32(struct config_item *item, const char *page, size_t len,
			u32 min, u32 max, u32 *val)
{
	char buf[24];
	u32 v;
	int ret;

	ret = rdlm_cfg_string(item, page, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (kstrtou32(buf, 0, &v) || v < min || v > max) {
		cfg_reject(item, "'%s' is not a number in %u..%u", buf, min, max);
		return -EINVAL;
	}
	*val = v;
	return 0;
}

static int rdlm_cfg_pick(struct config_item *item, const char *page,
			 size_t len, const char *const *names, size_t n)
{
	char buf[16];
	size_t i;
	int ret;

	ret = rdlm_cfg_string(item, page, len, buf, sizeof(buf));
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (!strcmp(buf, names[i]))
			return i;
	cfg_reject(item, "unknown value '%s'", buf);
	return -EINVAL;
}

/* ---- nodes ---------------------------------------------------------- */

static struct rdlm_node *rdlm_node_by_id(u32 nodeid)
{
	struct rdlm_node *node;

	list_for_each_entry(node, &rdlm_node_list, entry)
		if (node->nodeid == nodeid)
			return node;
	return NULL;
}

static int rdlm_node_writable(struct rdlm_node *node)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (node->users) {
		cfg_reject(&node->item, "in use by an enabled lockspace");
		return -EBUSY;
	}
	return 0;
}

static ssize_t rdlm_node_nodeid_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%u\n", to_rdlm_node(item)->nodeid);
}

static ssize_t rdlm_node_nodeid_store(struct config_item *item,
				      const char *page, size_t len)
{
	struct rdlm_node *node = to_rdlm_node(item), *other;
	u32 nodeid;
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_node_writable(node);
	if (!ret)
		ret = rdlm_cfg_u32(item, page, len, 1, RDLM_MAX_NODEID, &nodeid);
	if (!ret) {
		other = rdlm_node_by_id(nodeid);
		if (other && other != node) {
			cfg_reject(item, "node id %u already belongs to %s",
				   nodeid, config_item_name(&other->item));
			ret = -EINVAL;
		} else {
			node->nodeid = nodeid;
		}
	}
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_node_address_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%s\n", to_rdlm_node(item)->address);
}

static ssize_t rdlm_node_address_store(struct config_item *item,
				       const char *page, size_t len)
{
	struct rdlm_node *node = to_rdlm_node(item);
	struct sockaddr_storage ss;
	char buf[RDLM_ADDR_MAX];
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_node_writable(node);
	if (!ret)
		ret = rdlm_cfg_string(item, page, len, buf, sizeof(buf));
	if (!ret && inet_pton_with_scope(&init_net, AF_UNSPEC, buf, NULL, &ss)) {
		cfg_reject(item, "'%s' is not an IPv4 or IPv6 address", buf);
		ret = -EINVAL;
	}
	if (!ret)
		strscpy(node->address, buf, sizeof(node->address));
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_node_port_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%u\n", to_rdlm_node(item)->port);
}

static ssize_t rdlm_node_port_store(struct config_item *item,
				    const char *page, size_t len)
{
	struct rdlm_node *node = to_rdlm_node(item);
	u32 port;
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_node_writable(node);
	if (!ret)
		ret = rdlm_cfg_u32(item, page, len, 1, 65535, &port);
	if (!ret)
		node->port = port;
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_node_local_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%d\n", to_rdlm_node(item)->local);
}

static ssize_t rdlm_node_local_store(struct config_item *item,
				     const char *page, size_t len)
{
	struct rdlm_node *node = to_rdlm_node(item), *other;
	u32 local;
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_node_writable(node);
	if (!ret)
		ret = rdlm_cfg_u32(item, page, len, 0, 1, &local);
	if (!ret && local) {
		list_for_each_entry(other, &rdlm_node_list, entry) {
			if (other != node && other->local) {
				cfg_reject(item, "%s is already the local node",
					   config_item_name(&other->item));
				ret = -EINVAL;
				break;
			}
		}
	}
	if (!ret)
		node->local = local;
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

CONFIGFS_ATTR(rdlm_node_, nodeid);
CONFIGFS_ATTR(rdlm_node_, address);
CONFIGFS_ATTR(rdlm_node_, port);
CONFIGFS_ATTR(rdlm_node_, local);

static struct configfs_attribute *rdlm_node_attrs[] = {
	&rdlm_node_attr_nodeid,
	&rdlm_node_attr_address,
	&rdlm_node_attr_port,
	&rdlm_node_attr_local,
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
	node->port = RDLM_DEFAULT_PORT;
	config_item_init_type_name(&node->item, name, &rdlm_node_type);
	mutex_lock(&rdlm_cfg_mutex);
	list_add_tail(&node->entry, &rdlm_node_list);
	mutex_unlock(&rdlm_cfg_mutex);
	return &node->item;
}

static void rdlm_nodes_drop_item(struct config_group *group,
				 struct config_item *item)
{
	struct rdlm_node *node = to_rdlm_node(item);

	/*
	 * An enabled lockspace keeps its own copy of the addresses; the
	 * node just stops being found for the next enable.
	 */
	mutex_lock(&rdlm_cfg_mutex);
	list_del_init(&node->entry);
	node->nodeid = 0;
	mutex_unlock(&rdlm_cfg_mutex);
	config_item_put(item);
}

static struct configfs_group_operations rdlm_nodes_group_ops = {
	.make_item	= rdlm_nodes_make_item,
	.drop_item	= rdlm_nodes_drop_item,
};

static const struct config_item_type rdlm_nodes_type = {
	.ct_group_ops	= &rdlm_nodes_group_ops,
	.ct_owner	= THIS_MODULE,
};

/* ---- lockspaces ----------------------------------------------------- */

static int rdlm_cfg_ls_writable(struct rdlm_cfg_ls *ls)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (ls->fls) {
		cfg_reject(&ls->item, "lockspace is enabled");
		return -EBUSY;
	}
	return 0;
}

/* A numeric lockspace parameter: where it lives and its range. */
struct rdlm_cfg_ls_param {
	size_t off;
	u32 min;
	u32 max;
};

static ssize_t rdlm_cfg_ls_u32_show(struct config_item *item, char *page,
				    const struct rdlm_cfg_ls_param *p)
{
	return sysfs_emit(page, "%u\n",
			  *(u32 *)((char *)to_rdlm_cfg_ls(item) + p->off));
}

static ssize_t rdlm_cfg_ls_u32_store(struct config_item *item,
				     const char *page, size_t len,
				     const struct rdlm_cfg_ls_param *p)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	u32 v;
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_ls_writable(ls);
	if (!ret)
		ret = rdlm_cfg_u32(item, page, len, p->min, p->max, &v);
	if (!ret)
		*(u32 *)((char *)ls + p->off) = v;
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

#define RDLM_LS_U32_ATTR(field, min, max)				\
static const struct rdlm_cfg_ls_param rdlm_cfg_ls_##field##_param = {		\
	offsetof(struct rdlm_cfg_ls, field), min, max			\
};									\
static ssize_t rdlm_cfg_ls_##field##_show(struct config_item *item,	\
				      char *page)			\
{									\
	return rdlm_cfg_ls_u32_show(item, page, &rdlm_cfg_ls_##field##_param);	\
}									\
static ssize_t rdlm_cfg_ls_##field##_store(struct config_item *item,	\
				       const char *page, size_t len)	\
{									\
	return rdlm_cfg_ls_u32_store(item, page, len,			\
				 &rdlm_cfg_ls_##field##_param);		\
}

RDLM_LS_U32_ATTR(table_size, 1, RDLM_MAX_SLOTS)
RDLM_LS_U32_ATTR(mailbox_slots, 1, RDLM_MAX_MBOX)
RDLM_LS_U32_ATTR(lease_us, 0, 60000000)
RDLM_LS_U32_ATTR(omega_ns, 1, 1000000000)
RDLM_LS_U32_ATTR(backoff_r_us, 1, 1000000)
RDLM_LS_U32_ATTR(backoff_l_us, 1, 60000000)
RDLM_LS_U32_ATTR(kmax, 1, 64)
RDLM_LS_U32_ATTR(update_locks, 0, 1)
RDLM_LS_U32_ATTR(nr_reqs, 1, 1U << 20)
RDLM_LS_U32_ATTR(local_grants_max, 0, 1U << 20)
RDLM_LS_U32_ATTR(cache_us, 0, 60000000)
RDLM_LS_U32_ATTR(max_locks, 1, 1U << 24)
RDLM_LS_U32_ATTR(max_locks_per_file, 1, 1U << 24)
RDLM_LS_U32_ATTR(max_lvbs, 1, 1U << 24)
RDLM_LS_U32_ATTR(lvb_len, 16, RDLM_LVB_MAX)
RDLM_LS_U32_ATTR(lvb_read, 0, 1)
RDLM_LS_U32_ATTR(recovery_grace_ms, 0, 3600000)
RDLM_LS_U32_ATTR(fencing, 0, 1)
RDLM_LS_U32_ATTR(managed, 0, 1)
RDLM_LS_U32_ATTR(uid, 0, U32_MAX - 1)
RDLM_LS_U32_ATTR(gid, 0, U32_MAX - 1)
CONFIGFS_ATTR(rdlm_cfg_ls_, table_size);
CONFIGFS_ATTR(rdlm_cfg_ls_, mailbox_slots);
CONFIGFS_ATTR(rdlm_cfg_ls_, lease_us);
CONFIGFS_ATTR(rdlm_cfg_ls_, omega_ns);
CONFIGFS_ATTR(rdlm_cfg_ls_, backoff_r_us);
CONFIGFS_ATTR(rdlm_cfg_ls_, backoff_l_us);
CONFIGFS_ATTR(rdlm_cfg_ls_, kmax);
CONFIGFS_ATTR(rdlm_cfg_ls_, update_locks);
CONFIGFS_ATTR(rdlm_cfg_ls_, nr_reqs);
CONFIGFS_ATTR(rdlm_cfg_ls_, local_grants_max);
CONFIGFS_ATTR(rdlm_cfg_ls_, cache_us);
CONFIGFS_ATTR(rdlm_cfg_ls_, max_locks);
CONFIGFS_ATTR(rdlm_cfg_ls_, max_locks_per_file);
CONFIGFS_ATTR(rdlm_cfg_ls_, max_lvbs);
CONFIGFS_ATTR(rdlm_cfg_ls_, lvb_len);
CONFIGFS_ATTR(rdlm_cfg_ls_, lvb_read);
CONFIGFS_ATTR(rdlm_cfg_ls_, recovery_grace_ms);
CONFIGFS_ATTR(rdlm_cfg_ls_, fencing);
CONFIGFS_ATTR(rdlm_cfg_ls_, managed);
CONFIGFS_ATTR(rdlm_cfg_ls_, uid);
CONFIGFS_ATTR(rdlm_cfg_ls_, gid);

/* Permission bits, octal as chmod takes them; only rw bits mean anything. */
static ssize_t rdlm_cfg_ls_mode_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%04o\n", to_rdlm_cfg_ls(item)->mode);
}

static ssize_t rdlm_cfg_ls_mode_store(struct config_item *item, const char *page,
				      size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	char buf[16];
	unsigned int v;
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_ls_writable(ls);
	if (!ret)
		ret = rdlm_cfg_string(item, page, len, buf, sizeof(buf));
	if (!ret && (kstrtouint(buf, 8, &v) || v > 0777)) {
		cfg_reject(item, "mode: octal 0..0777");
		ret = -EINVAL;
	}
	if (!ret)
		ls->mode = v;
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}
CONFIGFS_ATTR(rdlm_cfg_ls_, mode);

static ssize_t rdlm_cfg_ls_members_show(struct config_item *item, char *page)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	ssize_t n = 0;
	u32 i;

	mutex_lock(&rdlm_cfg_mutex);
	for (i = 0; i < ls->nr_members; i++)
		n += sysfs_emit_at(page, n, "%s%u", i ? "," : "",
				   ls->members[i]);
	mutex_unlock(&rdlm_cfg_mutex);
	n += sysfs_emit_at(page, n, "\n");
	return n;
}

static int rdlm_cfg_ls_parse_members(struct config_item *item, char *buf,
				     u32 *members, u32 *nr)
{
	char *tok, *p = buf;
	u32 id, i, n = 0;

	while ((tok = strsep(&p, ", ")) != NULL) {
		if (!*tok)
			continue;
		if (n == RDLM_MAX_MEMBERS) {
			cfg_reject(item, "more than %d members",
				   RDLM_MAX_MEMBERS);
			return -EINVAL;
		}
		if (kstrtou32(tok, 10, &id) || !id || id > RDLM_MAX_NODEID) {
			cfg_reject(item, "'%s' is not a node id", tok);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (members[i] == id) {
				cfg_reject(item, "node %u listed twice", id);
				return -EINVAL;
			}
		}
		members[n++] = id;
	}
	if (!n) {
		cfg_reject(item, "no members");
		return -EINVAL;
	}
	*nr = n;
	return 0;
}

static ssize_t rdlm_cfg_ls_members_store(struct config_item *item,
					 const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	u32 members[RDLM_MAX_MEMBERS], nr;
	char *buf;
	int ret;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_ls_writable(ls);
	if (!ret)
		ret = rdlm_cfg_string(item, page, len, buf, PAGE_SIZE);
	if (!ret)
		ret = rdlm_cfg_ls_parse_members(item, buf, members, &nr);
	if (!ret) {
		memcpy(ls->members, members, nr * sizeof(members[0]));
		ls->nr_members = nr;
	}
	mutex_unlock(&rdlm_cfg_mutex);
	kfree(buf);
	return ret ? ret : len;
}

static ssize_t rdlm_cfg_ls_engine_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%s\n", to_rdlm_cfg_ls(item)->engine);
}

static ssize_t rdlm_cfg_ls_engine_store(struct config_item *item,
					const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_ls_writable(ls);
	if (!ret)
		ret = rdlm_cfg_pick(item, page, len, rdlm_engine_names,
				    ARRAY_SIZE(rdlm_engine_names));
	if (ret >= 0)
		strscpy(ls->engine, rdlm_engine_names[ret], sizeof(ls->engine));
	mutex_unlock(&rdlm_cfg_mutex);
	return ret < 0 ? ret : len;
}

static ssize_t rdlm_cfg_ls_atomic_mode_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%s\n",
			  rdlm_atomic_names[to_rdlm_cfg_ls(item)->atomic_mode]);
}

static ssize_t rdlm_cfg_ls_atomic_mode_store(struct config_item *item,
					     const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	int ret;

	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_ls_writable(ls);
	if (!ret)
		ret = rdlm_cfg_pick(item, page, len, rdlm_atomic_names,
				    ARRAY_SIZE(rdlm_atomic_names));
	if (ret >= 0)
		ls->atomic_mode = ret;
	mutex_unlock(&rdlm_cfg_mutex);
	return ret < 0 ? ret : len;
}

static int rdlm_node_sockaddr(struct rdlm_node *node,
			      struct rdlm_node_cfg *cfg)
{
	char port[8];

	snprintf(port, sizeof(port), "%u", node->port);
	cfg->nodeid = node->nodeid;
	return inet_pton_with_scope(&init_net, AF_UNSPEC, node->address, port,
				    &cfg->addr);
}

static void rdlm_cfg_ls_unpin(struct rdlm_cfg_ls *ls)
{
	while (ls->nr_pinned)
		ls->pinned[--ls->nr_pinned]->users--;
}

/* Put the lock manager with its engine on the enabled fabric lockspace. */
static int rdlm_cfg_ls_enable_lm(struct rdlm_cfg_ls *ls, u32 local)
{
	struct rdlm_lockspace_cfg *lc;
	struct rdlm_engine_params *p;
	int ret;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL);
	if (!lc)
		return -ENOMEM;
	lc->name = config_item_name(&ls->item);
	lc->ops = rdlm_engine_find(ls->engine);
	lc->local = local;
	lc->nr_members = ls->nr_members;
	memcpy(lc->members, ls->members, ls->nr_members * sizeof(u32));
	lc->nr_slots = ls->table_size;
	lc->local_grants_max = ls->local_grants_max;
	lc->cache_us = ls->cache_us;
	lc->max_locks = ls->max_locks;
	lc->max_locks_per_file = ls->max_locks_per_file;
	lc->max_lvbs = ls->max_lvbs;
	lc->lvb_len = ls->lvb_len;
	lc->lvb_read = ls->lvb_read;
	lc->recovery_grace_ms = ls->recovery_grace_ms;
	lc->fencing = ls->fencing;
	lc->managed = !ls->kernel_made && ls->managed;
	lc->uid = make_kuid(&init_user_ns, ls->uid);
	lc->gid = make_kgid(&init_user_ns, ls->gid);
	lc->mode = ls->mode;
	p = &lc->params;
	rdlm_engine_default_params(p);
	p->atomic_mode = ls->atomic_mode;
	p->update_locks = ls->update_locks;
	p->lease_ns = (u64)ls->lease_us * NSEC_PER_USEC;
	p->no_lease = !ls->lease_us;
	p->omega_ns = ls->omega_ns;
	p->backoff_r_ns = (u64)ls->backoff_r_us * NSEC_PER_USEC;
	p->backoff_l_ns = (u64)ls->backoff_l_us * NSEC_PER_USEC;
	p->kmax = ls->kmax;
	/* the queue engines' notices: mbox_kinds entries per request and node */
	p->nr_reqs = ls->nr_reqs;
	if (lc->ops && lc->ops->mbox_kinds)
		p->nr_reqs = min(p->nr_reqs, ls->mailbox_slots /
				 (ls->nr_members * lc->ops->mbox_kinds));
	ret = -EINVAL;
	if (!lc->ops)
		cfg_reject(&ls->item, "engine %s is not built in", ls->engine);
	else if (ls->lvb_len % RDLM_LVB_CHUNK)
		cfg_reject(&ls->item, "lvb_len %u: 16, 32, 48 or 64", ls->lvb_len);
	else if (!p->nr_reqs)
		cfg_reject(&ls->item, "mailbox_slots below %u x the member count",
			   lc->ops->mbox_kinds);
	else
		ret = rdlm_lockspace_create(lc, &ls->lm);
	if (ret && ret != -EINVAL)
		cfg_reject(&ls->item, "cannot start the lock manager: %d", ret);
	kfree(lc);
	return ret;
}

/* Check that every node the lockspace names exists, then bring it up. */
static int rdlm_cfg_ls_enable(struct rdlm_cfg_ls *ls)
{
	struct config_item *item = &ls->item;
	struct rdlm_fabric_ls_cfg *cfg;
	struct rdlm_node *node, *local = NULL;
	bool member = false;
	u32 i;
	int ret;

	list_for_each_entry(node, &rdlm_node_list, entry)
		if (node->local)
			local = node;
	if (!local || !local->nodeid || !local->address[0]) {
		cfg_reject(item, "no local node with id and address");
		return -EINVAL;
	}
	if (!ls->nr_members) {
		cfg_reject(item, "no members");
		return -EINVAL;
	}
	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	strscpy(cfg->name, config_item_name(item), sizeof(cfg->name));
	ret = rdlm_node_sockaddr(local, &cfg->local);
	for (i = 0; !ret && i < ls->nr_members; i++) {
		node = rdlm_node_by_id(ls->members[i]);
		if (!node || !node->address[0]) {
			cfg_reject(item, "member %u is not a node with an address",
				   ls->members[i]);
			ret = -EINVAL;
			break;
		}
		member |= node == local;
		ret = rdlm_node_sockaddr(node, &cfg->members[i]);
	}
	if (!ret && !member) {
		cfg_reject(item, "the local node %u is not a member",
			   local->nodeid);
		ret = -EINVAL;
	}
	if (ret)
		goto out;
	cfg->nr_members = ls->nr_members;
	cfg->nr_slots = ls->table_size;
	cfg->nr_mbox = ls->mailbox_slots;
	cfg->atomic_mode = ls->atomic_mode;
	strscpy(cfg->engine, ls->engine, sizeof(cfg->engine));
	cfg->lvb_len = ls->lvb_len;
	cfg->lease_us = ls->lease_us;
	/* for peers' READs of the LVBs homed here: 4 per word, or the most */
	cfg->nr_records = min_t(u32, ls->table_size, RDLM_MAX_RECORDS / 4) * 4;

	ret = rdlm_fabric_ls_create(cfg, &ls->fls);
	if (ret) {
		cfg_reject(item, "cannot enable: %d", ret);
		goto out;
	}
	ret = rdlm_cfg_ls_enable_lm(ls, local->nodeid);
	if (ret) {
		rdlm_fabric_ls_destroy(ls->fls);
		ls->fls = NULL;
		goto out;
	}
	for (i = 0; i < ls->nr_members; i++)
		ls->pinned[ls->nr_pinned++] = rdlm_node_by_id(ls->members[i]);
	ls->pinned[ls->nr_pinned++] = local;
	for (i = 0; i < ls->nr_pinned; i++)
		ls->pinned[i]->users++;
out:
	kfree(cfg);
	return ret;
}

static void rdlm_cfg_ls_disable(struct rdlm_cfg_ls *ls)
{
	if (!ls->fls)
		return;
	/*
	 * The fabric side goes between the two steps: it waits for the verbs
	 * in flight, whose completions use the lock manager's lockspace and
	 * engine requests, which therefore go only afterwards.
	 */
	rdlm_lockspace_stop(ls->lm);
	rdlm_fabric_ls_destroy(ls->fls);
	ls->fls = NULL;
	rdlm_lockspace_destroy(ls->lm);
	ls->lm = NULL;
	rdlm_cfg_ls_unpin(ls);
}

static ssize_t rdlm_cfg_ls_enable_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%d\n", !!to_rdlm_cfg_ls(item)->fls);
}

static ssize_t rdlm_cfg_ls_enable_store(struct config_item *item,
					const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	u32 enable;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_u32(item, page, len, 0, 1, &enable);
	if (!ret && enable && !ls->fls)
		ret = rdlm_cfg_ls_enable(ls);
	else if (!ret && !enable)
		rdlm_cfg_ls_disable(ls);
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_cfg_ls_membership_show(struct config_item *item,
					   char *page)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	ssize_t ret = 0;

	mutex_lock(&rdlm_cfg_mutex);
	if (ls->lm)
		ret = rdlm_lockspace_show_membership(ls->lm, page, PAGE_SIZE);
	mutex_unlock(&rdlm_cfg_mutex);
	return ret;
}

static ssize_t rdlm_cfg_ls_membership_store(struct config_item *item,
					    const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&rdlm_cfg_mutex);
	if (!ls->lm) {
		cfg_reject(item, "membership: lockspace is not enabled");
		ret = -ENOENT;
	} else {
		ret = rdlm_lockspace_set_membership(ls->lm, page);
		if (ret == -EINVAL)
			cfg_reject(item, "membership: want EPOCH QUORATE NODEID... with this node");
		else if (ret == -ESTALE)
			cfg_reject(item, "membership: old epoch, or stopped by a quorum loss");
	}
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_cfg_ls_fence_ack_store(struct config_item *item,
					   const char *page, size_t len)
{
	struct rdlm_cfg_ls *ls = to_rdlm_cfg_ls(item);
	u32 nodeid;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_cfg_u32(item, page, len, 1, RDLM_MAX_NODEID, &nodeid);
	if (!ret && !ls->lm)
		ret = -ENOENT;
	if (!ret)
		ret = rdlm_lockspace_fence_ack(ls->lm, nodeid);
	if (ret == -ENOENT)
		cfg_reject(item, "fence_ack: node %u is not waiting for recovery",
			   nodeid);
	mutex_unlock(&rdlm_cfg_mutex);
	return ret ? ret : len;
}

CONFIGFS_ATTR(rdlm_cfg_ls_, membership);
CONFIGFS_ATTR_WO(rdlm_cfg_ls_, fence_ack);
CONFIGFS_ATTR(rdlm_cfg_ls_, members);
CONFIGFS_ATTR(rdlm_cfg_ls_, engine);
CONFIGFS_ATTR(rdlm_cfg_ls_, atomic_mode);
CONFIGFS_ATTR(rdlm_cfg_ls_, enable);

static struct configfs_attribute *rdlm_cfg_ls_attrs[] = {
	&rdlm_cfg_ls_attr_members,
	&rdlm_cfg_ls_attr_engine,
	&rdlm_cfg_ls_attr_atomic_mode,
	&rdlm_cfg_ls_attr_table_size,
	&rdlm_cfg_ls_attr_mailbox_slots,
	&rdlm_cfg_ls_attr_lease_us,
	&rdlm_cfg_ls_attr_omega_ns,
	&rdlm_cfg_ls_attr_backoff_r_us,
	&rdlm_cfg_ls_attr_backoff_l_us,
	&rdlm_cfg_ls_attr_kmax,
	&rdlm_cfg_ls_attr_update_locks,
	&rdlm_cfg_ls_attr_nr_reqs,
	&rdlm_cfg_ls_attr_local_grants_max,
	&rdlm_cfg_ls_attr_cache_us,
	&rdlm_cfg_ls_attr_max_locks,
	&rdlm_cfg_ls_attr_max_locks_per_file,
	&rdlm_cfg_ls_attr_max_lvbs,
	&rdlm_cfg_ls_attr_lvb_len,
	&rdlm_cfg_ls_attr_lvb_read,
	&rdlm_cfg_ls_attr_recovery_grace_ms,
	&rdlm_cfg_ls_attr_fencing,
	&rdlm_cfg_ls_attr_managed,
	&rdlm_cfg_ls_attr_uid,
	&rdlm_cfg_ls_attr_gid,
	&rdlm_cfg_ls_attr_mode,
	&rdlm_cfg_ls_attr_enable,
	&rdlm_cfg_ls_attr_membership,
	&rdlm_cfg_ls_attr_fence_ack,
	NULL,
};

static void rdlm_cfg_ls_release(struct config_item *item)
{
	kfree(to_rdlm_cfg_ls(item));
}

static struct configfs_item_operations rdlm_cfg_ls_item_ops = {
	.release	= rdlm_cfg_ls_release,
};

static const struct config_item_type rdlm_cfg_ls_type = {
	.ct_item_ops	= &rdlm_cfg_ls_item_ops,
	.ct_attrs	= rdlm_cfg_ls_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_item *rdlm_lockspaces_make_item(struct config_group *group,
						     const char *name)
{
	struct rdlm_cfg_ls *ls;

	if (!capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);
	if (strlen(name) >= RDLM_LS_NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);

	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls)
		return ERR_PTR(-ENOMEM);
	strscpy(ls->engine, "bakery", sizeof(ls->engine));
	ls->atomic_mode = RDLM_ATOMIC_NIC;
	ls->table_size = 1024;
	ls->mailbox_slots = 1024;
	ls->lease_us = 10000;
	ls->omega_ns = 5000;
	ls->backoff_r_us = 10;
	ls->backoff_l_us = 10000;
	ls->kmax = 1;
	ls->nr_reqs = 1024;
	ls->local_grants_max = 8;
	ls->max_locks = 65536;
	ls->max_locks_per_file = 4096;
	ls->max_lvbs = 65536;
	ls->lvb_len = 32;
	ls->lvb_read = 1;
	ls->recovery_grace_ms = 5000;
	ls->fencing = 1;
	ls->managed = 1;
	ls->mode = 0600;
	config_item_init_type_name(&ls->item, name, &rdlm_cfg_ls_type);
	return &ls->item;
}

static void rdlm_lockspaces_drop_item(struct config_group *group,
				      struct config_item *item)
{
	mutex_lock(&rdlm_cfg_mutex);
	rdlm_cfg_ls_disable(to_rdlm_cfg_ls(item));
	mutex_unlock(&rdlm_cfg_mutex);
	config_item_put(item);
}

static struct configfs_group_operations rdlm_lockspaces_group_ops = {
	.make_item	= rdlm_lockspaces_make_item,
	.drop_item	= rdlm_lockspaces_drop_item,
};

static const struct config_item_type rdlm_lockspaces_type = {
	.ct_group_ops	= &rdlm_lockspaces_group_ops,
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

/* Lockspace attributes a kernel lockspace copies from its template. */
static void rdlm_cfg_ls_copy(struct rdlm_cfg_ls *to,
			     const struct rdlm_cfg_ls *from)
{
	memcpy(to->members, from->members, sizeof(to->members));
	to->nr_members = from->nr_members;
	memcpy(to->engine, from->engine, sizeof(to->engine));
	to->atomic_mode = from->atomic_mode;
	to->table_size = from->table_size;
	to->mailbox_slots = from->mailbox_slots;
	to->lease_us = from->lease_us;
	to->omega_ns = from->omega_ns;
	to->backoff_r_us = from->backoff_r_us;
	to->backoff_l_us = from->backoff_l_us;
	to->kmax = from->kmax;
	to->update_locks = from->update_locks;
	to->nr_reqs = from->nr_reqs;
	to->local_grants_max = from->local_grants_max;
	to->cache_us = from->cache_us;
	to->max_locks = from->max_locks;
	to->max_locks_per_file = from->max_locks_per_file;
	to->max_lvbs = from->max_lvbs;
	to->lvb_len = from->lvb_len;
	to->lvb_read = from->lvb_read;
	to->uid = from->uid;
	to->gid = from->gid;
	to->mode = from->mode;
	to->recovery_grace_ms = from->recovery_grace_ms;
	to->fencing = from->fencing;
}

static struct rdlm_cfg_ls *rdlm_kernel_ls_by_name(const char *name)
{
	struct rdlm_cfg_ls *ls;

	list_for_each_entry(ls, &rdlm_kernel_lss, kernel_entry)
		if (!strcmp(config_item_name(&ls->item), name))
			return ls;
	return NULL;
}

/*
 * @name exists on this node already: join it (a kernel lockspace counts
 * one more creator), or -EEXIST with RDLM_NEWLS_EXCL; -ENOENT if it does
 * not exist.
 */
static int rdlm_kernel_ls_join(const char *name, u32 flags,
			       struct rdlm_lockspace **lsp)
{
	struct rdlm_cfg_ls *ls = rdlm_kernel_ls_by_name(name);
	int ret;

	if (!ls && rdlm_lockspace_find(name, lsp))
		return -ENOENT;
	if (flags & RDLM_NEWLS_EXCL) {
		if (!ls)
			rdlm_lockspace_put(*lsp);
		return -EEXIST;
	}
	if (!ls)
		return 0;
	ret = rdlm_lockspace_find(name, lsp);
	if (!ret)
		ls->creators++;
	return ret;
}

/* A configfs lockspace, with a reference, or NULL. */
static struct rdlm_cfg_ls *rdlm_cfg_ls_get(const char *name)
{
	struct config_item *item;

	mutex_lock(&rdlm_subsys.su_mutex);
	item = config_group_find_item(&rdlm_lockspaces_group, name);
	mutex_unlock(&rdlm_subsys.su_mutex);
	return item ? to_rdlm_cfg_ls(item) : NULL;
}

/**
 * rdlm_new_lockspace() - create a lockspace for a kernel caller, or join it
 * @name: lockspace name, 1..RDLM_LS_NAME_MAX - 1 bytes, the same on
 *	every node (a cluster file system uses its UUID)
 * @template: a lockspace the administrator configured in configfs
 *	(/sys/kernel/config/rdlm/lockspaces/@template, enabled or not): its
 *	members, engine and every other attribute are copied
 * @flags: 0, or RDLM_NEWLS_EXCL: -EEXIST if @name exists already
 * @lsp: out: the lockspace, with a reference as rdlm_lockspace_find()'s
 *
 * Each node whose caller creates @name from identical templates brings up
 * the same lockspace: its members connect by its name, as configfs
 * lockspaces do. A lockspace of that name that exists already on this node
 * (a configfs one, or one created before) is returned as it is, and a
 * kernel lockspace then counts one more creator. Kernel lockspaces do not
 * appear in configfs; they do in debugfs, and /dev/rdlm can join them.
 *
 * Context: process context, sleeps.
 * Return: 0, -EINVAL (bad name), -ENOENT (no such template), -EEXIST
 * (with RDLM_NEWLS_EXCL), -ENOMEM, or the error that enabling it gave
 * (-EINVAL: the template is incomplete; the kernel log says why).
 */
int rdlm_new_lockspace(const char *name, const char *template, u32 flags,
		       struct rdlm_lockspace **lsp)
{
	struct rdlm_cfg_ls *tmpl, *ls;
	int ret;

	if (!name || !*name || strlen(name) >= RDLM_LS_NAME_MAX ||
	    !template || (flags & ~RDLM_NEWLS_EXCL))
		return -EINVAL;
	mutex_lock(&rdlm_cfg_mutex);
	ret = rdlm_kernel_ls_join(name, flags, lsp);
	if (ret != -ENOENT)
		goto out;
	mutex_unlock(&rdlm_cfg_mutex);

	tmpl = rdlm_cfg_ls_get(template);
	if (!tmpl)
		return -ENOENT;
	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls) {
		config_item_put(&tmpl->item);
		return -ENOMEM;
	}
	config_item_init_type_name(&ls->item, name, &rdlm_cfg_ls_type);
	mutex_lock(&rdlm_cfg_mutex);
	rdlm_cfg_ls_copy(ls, tmpl);
	ls->kernel_made = true;
	config_item_put(&tmpl->item);
	/* made by another caller meanwhile: that one */
	ret = rdlm_kernel_ls_join(name, flags, lsp);
	if (ret == -ENOENT) {
		ret = rdlm_cfg_ls_enable(ls);
		if (!ret)
			ret = rdlm_lockspace_find(name, lsp);
		if (!ret) {
			ls->creators = 1;
			list_add(&ls->kernel_entry, &rdlm_kernel_lss);
			goto out;
		}
		rdlm_cfg_ls_disable(ls);
	}
	/* ours is not needed, or could not come up */
	mutex_unlock(&rdlm_cfg_mutex);
	config_item_put(&ls->item);
	return ret;
out:
	mutex_unlock(&rdlm_cfg_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdlm_new_lockspace);

/**
 * rdlm_release_lockspace() - give up a lockspace of rdlm_new_lockspace()
 * @ls: the lockspace it returned; its reference is dropped on success
 * @force: take it down even if locks exist on this node (they are
 *	reported lost to their holders, as when configfs disables it)
 *
 * The last creator's release takes the lockspace down on this node; a
 * lockspace the administrator made in configfs is only left.
 *
 * Context: process context, sleeps.
 * Return: 0, or -EBUSY (locks exist, @force not given; nothing changed).
 */
int rdlm_release_lockspace(struct rdlm_lockspace *ls, bool force)
{
	struct rdlm_cfg_ls *kls = NULL, *k;

	mutex_lock(&rdlm_cfg_mutex);
	list_for_each_entry(k, &rdlm_kernel_lss, kernel_entry)
		if (k->lm == ls)
			kls = k;
	if (kls && kls->creators == 1 && !force && rdlm_lockspace_busy(ls)) {
		mutex_unlock(&rdlm_cfg_mutex);
		return -EBUSY;
	}
	rdlm_lockspace_put(ls);
	if (kls && !--kls->creators) {
		list_del(&kls->kernel_entry);
		rdlm_cfg_ls_disable(kls);
		config_item_put(&kls->item);
	}
	mutex_unlock(&rdlm_cfg_mutex);
	return 0;
}
EXPORT_SYMBOL_GPL(rdlm_release_lockspace);

/**
 * rdlm_configfs_init() - register the configfs subsystem "rdlm"
 *
 * Return: 0 or -errno.
 */
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

/**
 * rdlm_configfs_exit() - unregister the configfs subsystem
 *
 * configfs pins the module while any item exists, so every lockspace has
 * been disabled by its rmdir before this runs.
 */
void rdlm_configfs_exit(void)
{
	configfs_unregister_subsystem(&rdlm_subsys);
	/* callers' modules hold rdlm's: they released theirs before */
	WARN_ON_ONCE(!list_empty(&rdlm_kernel_lss));
}
