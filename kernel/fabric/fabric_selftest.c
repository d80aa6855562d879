// SPDX-License-Identifier: GPL-2.0
/*
 * rdlm fabric self-test, reachable from userspace through debugfs only (not
 * part of the ioctl ABI). Each write runs one check against every member
 * of a lockspace, this node included, and fails with -EIO (and one line in
 * the kernel log saying what differed) when a returned value is wrong:
 *
 *   wait LS SECS		every member's table becomes known
 *   claim LS			from now on SENDs and WRITE_WITH_IMMs arriving
 *				for LS go to the self-test, not to the lock
 *				manager (for lockspaces only the tests use:
 *				-EBUSY once the lock manager posted on LS)
 *   fa LS SLOT COUNT		COUNT concurrent FA(+1) per member; the values
 *				returned to us increase strictly
 *   read LS SLOT VALUE		the word reads VALUE on every member
 *   cas LS SLOT		CAS succeed/fail/reset on slot SLOT + node id
 *   imm LS COUNT		COUNT WRITE_WITH_IMMs to every member
 *   send LS COUNT		COUNT SENDs to every member
 *   rx LS COUNT SECS		COUNT of each arrived from every member, in
 *				order and intact (checked on receipt)
 *   lat LS NODE COUNT		FA, CAS, READ round trips to NODE: median and
 *				99th percentile in us, read back from the file
 *
 * Reading the file shows the last result.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": selftest: " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "fabric_priv.h"

#define RDLM_ST_MSG	(RDLM_MSG_ENGINE + 7)
#define RDLM_ST_MAX	100000

static DEFINE_MUTEX(rdlm_st_mutex);
static char rdlm_st_result[256] = "none\n";

static u64 rdlm_st_pattern(u32 src, u32 seq)
{
	return ((u64)src << 48) ^ (seq * 0x9e3779b97f4a7c15ULL);
}

/**
 * rdlm_selftest_rx() - account a message that arrived without a user
 * @ls: lockspace
 * @rx: message
 *
 * The self-test's WRITE_WITH_IMMs and SENDs carry a sequence number and a
 * pattern derived from it; anything else counts as bad.
 */
void rdlm_selftest_rx(struct rdlm_fabric_ls *ls, const struct rdlm_rx *rx)
{
	struct rdlm_member *m = rdlm_fabric_ls_member(ls, rx->src);
	bool ok;

	if (!m)
		return;
	spin_lock_bh(&ls->lock);
	if (rx->kind == RDLM_VERB_WRITE_IMM) {
		ok = rx->imm == m->rx_imm &&
		     rx->value == rdlm_st_pattern(rx->src, rx->imm);
		if (ok)
			m->rx_imm++;
	} else {
		ok = rx->msg.type == RDLM_ST_MSG && rx->msg.src == rx->src &&
		     rx->msg.token == m->rx_send &&
		     rx->msg.arg == rdlm_st_pattern(rx->src, rx->msg.token);
		if (ok)
			m->rx_send++;
	}
	if (!ok)
		m->rx_bad++;
	spin_unlock_bh(&ls->lock);
}

/* A batch of verbs whose results are collected by index (the cookie). */
struct rdlm_st_batch {
	atomic_t left;
	struct completion done;
	u64 *value;
	int *status;
	ktime_t *t;
};

static void rdlm_st_done(void *ctx, const struct rdlm_cqe *cqe)
{
	struct rdlm_st_batch *b = ctx;

	b->value[cqe->cookie] = cqe->value;
	b->status[cqe->cookie] = cqe->status;
	if (b->t)
		b->t[cqe->cookie] = ktime_sub(ktime_get(), b->t[cqe->cookie]);
	if (atomic_dec_and_test(&b->left))
		complete(&b->done);
}

static int rdlm_st_batch_init(struct rdlm_st_batch *b, u32 n, bool timed)
{
	memset(b, 0, sizeof(*b));
	atomic_set(&b->left, 1);
	init_completion(&b->done);
	b->value = kvcalloc(n, sizeof(*b->value), GFP_KERNEL);
	b->status = kvcalloc(n, sizeof(*b->status), GFP_KERNEL);
	if (timed)
		b->t = kvcalloc(n, sizeof(*b->t), GFP_KERNEL);
	if (!b->value || !b->status || (timed && !b->t))
		return -ENOMEM;
	return 0;
}

static void rdlm_st_batch_free(struct rdlm_st_batch *b)
{
	kvfree(b->value);
	kvfree(b->status);
	kvfree(b->t);
}

/*
 * Post @v as entry @idx of @b. Batches post thousands of verbs in a row
 * from a debugfs write: let others run between them.
 */
static int rdlm_st_post(struct rdlm_fabric_ls *ls, struct rdlm_st_batch *b,
			struct rdlm_verb *v, u32 idx)
{
	int ret;

	cond_resched();
	v->cookie = idx;
	atomic_inc(&b->left);
	if (b->t)
		b->t[idx] = ktime_get();
	ret = rdlm_fabric_ls_post(ls, v, rdlm_st_done, b);
	if (ret) {
		atomic_dec(&b->left);
		pr_info("%s: post to node %u failed: %d\n", ls->name, v->node,
			ret);
	}
	return ret;
}

/* Drop the batch's own count and wait for every posted verb. */
static int rdlm_st_wait(struct rdlm_fabric_ls *ls, struct rdlm_st_batch *b)
{
	if (!atomic_dec_and_test(&b->left) &&
	    !wait_for_completion_timeout(&b->done, 120 * HZ)) {
		/* the callbacks still own @b: never return before they ran */
		pr_info("%s: verbs did not complete in 120 s\n", ls->name);
		wait_for_completion(&b->done);
		return -ETIMEDOUT;
	}
	return 0;
}

static int rdlm_st_check_status(struct rdlm_fabric_ls *ls,
				struct rdlm_st_batch *b, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (b->status[i]) {
			pr_info("%s: verb %u failed: %d\n", ls->name, i,
				b->status[i]);
			return -EIO;
		}
	}
	return 0;
}

static int rdlm_st_fa(struct rdlm_fabric_ls *ls, u32 slot, u32 count)
{
	u32 n = count * ls->nr_members, i, k;
	struct rdlm_st_batch b;
	struct rdlm_verb v = { .kind = RDLM_VERB_FA, .slot = slot, .arg0 = 1 };
	int ret;

	ret = rdlm_st_batch_init(&b, n, false);
	for (i = 0; !ret && i < count; i++) {
		for (k = 0; !ret && k < ls->nr_members; k++) {
			v.node = ls->members[k].cfg.nodeid;
			ret = rdlm_st_post(ls, &b, &v, k * count + i);
		}
	}
	ret = rdlm_st_wait(ls, &b) ?: ret;
	if (!ret)
		ret = rdlm_st_check_status(ls, &b, n);
	for (k = 0; !ret && k < ls->nr_members; k++) {
		for (i = 1; i < count; i++) {
			u64 prev = b.value[k * count + i - 1];
			u64 cur = b.value[k * count + i];

			if (cur <= prev) {
				pr_info("%s: FA %u on node %u returned %llu after %llu\n",
					ls->name, i, ls->members[k].cfg.nodeid,
					cur, prev);
				ret = -EIO;
				break;
			}
		}
	}
	rdlm_st_batch_free(&b);
	return ret;
}

/* Run @nr single verbs one after another on @node; results in @b. */
static int rdlm_st_seq(struct rdlm_fabric_ls *ls, struct rdlm_st_batch *b,
		       struct rdlm_verb *v, u32 idx)
{
	int ret;

	reinit_completion(&b->done);
	atomic_set(&b->left, 1);
	ret = rdlm_st_post(ls, b, v, idx);
	return rdlm_st_wait(ls, b) ?: ret ?: b->status[idx];
}

static int rdlm_st_read(struct rdlm_fabric_ls *ls, u32 slot, u64 expect)
{
	struct rdlm_verb v = { .kind = RDLM_VERB_READ, .slot = slot };
	struct rdlm_st_batch b;
	u32 k;
	int ret;

	ret = rdlm_st_batch_init(&b, 1, false);
	for (k = 0; !ret && k < ls->nr_members; k++) {
		v.node = ls->members[k].cfg.nodeid;
		ret = rdlm_st_seq(ls, &b, &v, 0);
		if (!ret && b.value[0] != expect) {
			pr_info("%s: READ of slot %u on node %u gave %llu, expected %llu\n",
				ls->name, slot, v.node, b.value[0], expect);
			ret = -EIO;
		}
	}
	rdlm_st_batch_free(&b);
	return ret;
}

static int rdlm_st_cas(struct rdlm_fabric_ls *ls, u32 slot)
{
	const u64 me = ls->local;
	const struct {
		u8 kind;
		u64 cmp, swap, old;
	} steps[] = {
		{ RDLM_VERB_CAS, 0, me, 0 },		/* succeeds */
		{ RDLM_VERB_CAS, 0, 99, me },		/* fails */
		{ RDLM_VERB_READ, 0, 0, me },		/* unchanged */
		{ RDLM_VERB_CAS, me, 0, me },		/* resets */
		{ RDLM_VERB_READ, 0, 0, 0 },
	};
	struct rdlm_verb v = { .slot = slot + ls->local };
	struct rdlm_st_batch b;
	u32 k, s;
	int ret;

	if (v.slot >= ls->nr_slots)
		return -EINVAL;
	ret = rdlm_st_batch_init(&b, 1, false);
	for (k = 0; !ret && k < ls->nr_members; k++) {
		v.node = ls->members[k].cfg.nodeid;
		for (s = 0; !ret && s < ARRAY_SIZE(steps); s++) {
			v.kind = steps[s].kind;
			v.arg0 = steps[s].cmp;
			v.arg1 = steps[s].swap;
			ret = rdlm_st_seq(ls, &b, &v, 0);
			if (!ret && b.value[0] != steps[s].old) {
				pr_info("%s: step %u on node %u returned %llu, expected %llu\n",
					ls->name, s, v.node, b.value[0],
					steps[s].old);
				ret = -EIO;
			}
		}
	}
	rdlm_st_batch_free(&b);
	return ret;
}

/* WRITE_WITH_IMM or SEND, @count to every member. */
static int rdlm_st_msgs(struct rdlm_fabric_ls *ls, u8 kind, u32 count)
{
	u32 per = max(ls->nr_mbox / ls->nr_members, 1U);
	u32 n = count * ls->nr_members, i, k, base = 0;
	struct rdlm_verb v = { .kind = kind };
	struct rdlm_st_batch b;
	int ret;

	for (k = 0; k < ls->nr_members; k++)
		if (ls->members[k].cfg.nodeid == ls->local)
			base = k * per;
	ret = rdlm_st_batch_init(&b, n, false);
	/*
	 * A mailbox slot holds the last value written: reuse one only after
	 * the writes before it completed.
	 */
	for (i = 0; !ret && i < count; i++) {
		if (i && kind == RDLM_VERB_WRITE_IMM && !(i % per)) {
			ret = rdlm_st_wait(ls, &b);
			reinit_completion(&b.done);
			atomic_set(&b.left, 1);
		}
		for (k = 0; !ret && k < ls->nr_members; k++) {
			v.node = ls->members[k].cfg.nodeid;
			v.slot = min(base + i % per, ls->nr_mbox - 1);
			v.imm = i;
			v.arg0 = rdlm_st_pattern(ls->local, i);
			v.msg.type = RDLM_ST_MSG;
			v.msg.src = ls->local;
			v.msg.token = i;
			v.msg.arg = v.arg0;
			ret = rdlm_st_post(ls, &b, &v, k * count + i);
		}
	}
	ret = rdlm_st_wait(ls, &b) ?: ret;
	if (!ret)
		ret = rdlm_st_check_status(ls, &b, n);
	rdlm_st_batch_free(&b);
	return ret;
}

static int rdlm_st_rx(struct rdlm_fabric_ls *ls, u32 count, u32 secs)
{
	unsigned long end = jiffies + secs * HZ;
	struct rdlm_member *m;
	bool all;
	u32 k;

	for (;;) {
		all = true;
		spin_lock_bh(&ls->lock);
		for (k = 0; k < ls->nr_members; k++) {
			m = &ls->members[k];
			if (m->rx_bad) {
				spin_unlock_bh(&ls->lock);
				pr_info("%s: %u bad messages from node %u\n",
					ls->name, m->rx_bad, m->cfg.nodeid);
				return -EIO;
			}
			all &= m->rx_imm >= count && m->rx_send >= count;
		}
		spin_unlock_bh(&ls->lock);
		if (all)
			break;
		if (time_after(jiffies, end)) {
			pr_info("%s: messages missing after %u s\n", ls->name,
				secs);
			return -ETIMEDOUT;
		}
		msleep(20);
	}
	for (k = 0; k < ls->nr_members; k++) {
		m = &ls->members[k];
		if (m->rx_imm != count || m->rx_send != count) {
			pr_info("%s: node %u sent %u/%u, expected %u\n",
				ls->name, m->cfg.nodeid, m->rx_imm,
				m->rx_send, count);
			return -EIO;
		}
	}
	return 0;
}

static int rdlm_st_ready(struct rdlm_fabric_ls *ls, u32 secs)
{
	unsigned long end = jiffies + secs * HZ;
	bool all;
	u32 k;

	for (;;) {
		all = true;
		for (k = 0; k < ls->nr_members; k++)
			all &= rdlm_fabric_ls_ready(ls,
						    ls->members[k].cfg.nodeid);
		if (all)
			return 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		msleep(20);
	}
}

static int rdlm_st_cmp_ktime(const void *a, const void *b)
{
	s64 x = *(const ktime_t *)a, y = *(const ktime_t *)b;

	return x < y ? -1 : x > y;
}

static int rdlm_st_lat(struct rdlm_fabric_ls *ls, u32 node, u32 count)
{
	static const u8 kinds[] = {
		RDLM_VERB_FA, RDLM_VERB_CAS, RDLM_VERB_READ,
	};
	static const char *const names[] = { "fa", "cas", "read" };
	struct rdlm_verb v = { .node = node, .slot = 0 };
	struct rdlm_st_batch b;
	size_t len = 0;
	u32 s, i;
	int ret;

	ret = rdlm_st_batch_init(&b, count, true);
	for (s = 0; !ret && s < ARRAY_SIZE(kinds); s++) {
		v.kind = kinds[s];
		v.arg0 = 0;	/* FA +0, CAS 0->0: the word stays */
		for (i = 0; !ret && i < count; i++)
			ret = rdlm_st_seq(ls, &b, &v, i);
		if (ret)
			break;
		sort(b.t, count, sizeof(*b.t), rdlm_st_cmp_ktime, NULL);
		len += scnprintf(rdlm_st_result + len,
				 sizeof(rdlm_st_result) - len,
				 "%s node %u n %u p50_us %lld p99_us %lld\n",
				 names[s], node, count,
				 ktime_to_us(b.t[count / 2]),
				 ktime_to_us(b.t[count * 99 / 100]));
	}
	rdlm_st_batch_free(&b);
	return ret;
}

static int rdlm_st_run(char *cmd)
{
	char op[8], name[RDLM_LS_NAME_MAX];
	struct rdlm_fabric_ls *ls;
	u64 a = 0, c = 0;
	u32 bnum = 0;
	int n, ret;

	n = sscanf(cmd, "%7s %63s %u %llu %llu", op, name, &bnum, &a, &c);
	if (n < 2)
		return -EINVAL;
	ls = rdlm_fabric_ls_get(name);
	if (!ls)
		return -ENOENT;
	ret = -EINVAL;
	if (!strcmp(op, "claim") && n == 2) {
		ret = rdlm_fabric_ls_claim(ls);
	} else if (n < 3) {
		/* every other command takes a number */
	} else if (!strcmp(op, "wait")) {
		ret = rdlm_st_ready(ls, min(bnum, 600U));
	} else if (!strcmp(op, "fa") && n == 4 && a && a <= RDLM_ST_MAX &&
		   bnum < ls->nr_slots) {
		ret = rdlm_st_fa(ls, bnum, a);
	} else if (!strcmp(op, "read") && n == 4 && bnum < ls->nr_slots) {
		ret = rdlm_st_read(ls, bnum, a);
	} else if (!strcmp(op, "cas")) {
		ret = rdlm_st_cas(ls, bnum);
	} else if (!strcmp(op, "imm") && bnum <= RDLM_ST_MAX) {
		ret = rdlm_st_msgs(ls, RDLM_VERB_WRITE_IMM, bnum);
	} else if (!strcmp(op, "send") && bnum <= RDLM_ST_MAX) {
		ret = rdlm_st_msgs(ls, RDLM_VERB_SEND, bnum);
	} else if (!strcmp(op, "rx") && n == 4) {
		ret = rdlm_st_rx(ls, bnum, min_t(u64, a, 600));
	} else if (!strcmp(op, "lat") && n == 4 && a && a <= RDLM_ST_MAX &&
		   rdlm_fabric_ls_member(ls, bnum)) {
		ret = rdlm_st_lat(ls, bnum, a);
	}
	rdlm_fabric_ls_put(ls);
	return ret;
}

static ssize_t rdlm_st_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	char buf[128];
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&rdlm_st_mutex);
	snprintf(rdlm_st_result, sizeof(rdlm_st_result), "running\n");
	ret = rdlm_st_run(buf);
	if (!ret && strncmp(buf, "lat", 3))
		snprintf(rdlm_st_result, sizeof(rdlm_st_result), "ok\n");
	else if (ret)
		snprintf(rdlm_st_result, sizeof(rdlm_st_result), "error %d\n",
			 ret);
	mutex_unlock(&rdlm_st_mutex);
	return ret ? ret : len;
}

static ssize_t rdlm_st_read_file(struct file *file, char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	char buf[sizeof(rdlm_st_result)];

	mutex_lock(&rdlm_st_mutex);
	strscpy(buf, rdlm_st_result, sizeof(buf));
	mutex_unlock(&rdlm_st_mutex);
	return simple_read_from_buffer(ubuf, len, ppos, buf, strlen(buf));
}

static const struct file_operations rdlm_st_fops = {
	.owner	= THIS_MODULE,
	.write	= rdlm_st_write,
	.read	= rdlm_st_read_file,
	.llseek	= default_llseek,
};

/**
 * rdlm_selftest_init() - create debugfs "selftest"
 */
void rdlm_selftest_init(void)
{
	debugfs_create_file("selftest", 0600, rdlm_debugfs_root, NULL,
			    &rdlm_st_fops);
}
