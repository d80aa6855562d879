#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Queue order within a name, in a lockspace of this node alone, on each
# engine kind: requests are granted first in, first out, as fs/dlm grants
# them (and lock-manager.rst promises): a PR request behind a waiting EX
# waits, although the PR holder there would let it in, and is granted only
# after that EX.
. ./lib.sh
require_root
REPO=${RDLM_REPO:-$(cd ../../.. && pwd)}
RDLMCTL=$REPO/userspace/rdlmctl
ME=${RDLM_NODE_ID:-1}
LS=order-test
TMP=$(mktemp -d) || fail "mktemp"

# on any exit: the holders let go and are gone, the lockspace too
order_cleanup()
{
	touch $TMP/release.A $TMP/release.B $TMP/release.C
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	[ -d $CFS/lockspaces/$LS ] && "$RDLMCTL" leave $LS
	rm -rf "$TMP"
}
trap order_cleanup EXIT

# waiting N: N requests wait in $LS
waiting()
{
	local i

	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "^lock .* waiting " $DBG/ls/$LS)" = "$1" ] && return 0
		sleep 0.1
	done
	cat $DBG/ls/$LS
	return 1
}

# hold MODE NAME: run rdlmctl holding NAME in MODE until $TMP/release.NAME
# appears, writing NAME to $TMP/order once granted
hold()
{
	"$RDLMCTL" lock "$1" -L $LS fifo -- sh -c \
		"echo $2 >>$TMP/order; while [ ! -e $TMP/release.$2 ]; do sleep 0.05; done" &
}

rdlm_loaded && rdlm_reset
kmsg_mark
rdlm_load
local_node "$ME"
for engine in bakery central; do
	rm -f $TMP/*
	# a 60 s lease: a hold lost to its lease would hold up C by itself
	"$RDLMCTL" join $LS members="$ME" engine=$engine lease_us=60000000 ||
		fail "$engine: create $LS"
	echo "wait $LS 60" >$DBG/selftest || fail "$engine: $LS not ready"
	hold -s A
	a=$!
	wait_file $TMP/order
	hold -x B
	b=$!
	waiting 1 || fail "$engine: EX behind PR does not wait"
	hold -s C
	c=$!
	waiting 2 || fail "$engine: PR behind a waiting EX was granted first"
	touch $TMP/release.A
	wait $a || fail "$engine: PR holder A failed"
	waiting 1 || fail "$engine: EX not granted after the PR holder left"
	touch $TMP/release.B $TMP/release.C
	wait $b || fail "$engine: EX waiter B failed"
	wait $c || fail "$engine: PR waiter C failed"
	order=$(echo $(cat $TMP/order))
	[ "$order" = "A B C" ] || fail "$engine: granted in the order $order"
	echo "$engine: granted in queue order: $order"
	"$RDLMCTL" leave $LS || fail "$engine: remove $LS"
done
rmdir $CFS/nodes/self || fail "remove this node"
rdlm_unload
kmsg_check
