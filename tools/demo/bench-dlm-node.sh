#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/bench-dlm, run on each node of a 2-node cluster (node1 is "A",
# node2 "B"), in this order:
#  1. perftest round trips B -> A: atomic FA (polling and, with -e,
#     sleeping on completion events), CAS, READ, SEND;
#  2. Linux's fs/dlm: corosync (tools/cluster/corosync-conf) and
#     dlm_controld on both nodes, modprobe dlm, lockspace "bdlm" joined
#     through libdlm, then userspace/dlm-bench's rows: A takes every name
#     first (in NL, kept), so fs/dlm masters it on A: B measures a remote
#     master, A a local one; cold acquires, lock+unlock in EX (re-acquire
#     and unlock timed apart), in PR while the other node holds PR, and a
#     contended hand-over (ping-pong); the TCP connections of the pair;
#  3. rdlm, on every lk-* lockspace: the same rows through /dev/rdlm
#     (rdlm-bench -m), and lock+unlock in EX and in PR through the kernel
#     API (rdlm_torture.ko, one thread, one name); the name's home is
#     wherever rdlm hashes it: each row says local or remote. The EX rows
#     first, then the hand-over, then the PR rows, then lock+unlock PR
#     with the value block (rdlm-bench -V, a name nobody else holds; where
#     the lockspace reads LVBs from the home's records, again with
#     lvb_read 0: systems "LS+msg"), all without hold
#     caching (cache_us 0, whatever cluster.conf says) and with 60 s
#     leases where the lockspace has one; then lock+unlock
#     in EX again with caching (cache_us BENCH_CACHE_US, default 1 s:
#     systems "LS+kept"). A request that hangs
#     fails its row after 30 s (the lockspace's state goes to the log);
#     rdlm_torture stuck in rdlm ends the kernel API rows;
#  4. perftest FA again (drift).
# One node measures at a time, the other idle (or holding what the row
# needs), except in the hand-overs. Results: $RDLM_OUT/bdlm.NODE
# (tools/bench-dlm reads them): "S SYSTEM ROW WHERE USEC" per sample,
# "C SYSTEM ROW WHERE OPS COUNT" (verbs or DLM messages this node sent),
# "P SYSTEM ROW WHERE P50 P99 OPS" (kernel API: percentiles only),
# "I KEY VALUE..." facts, "E SYSTEM ROW WHY" for a row that failed.
#
# BENCH_OPS (default 200) pairs per row, BENCH_COLD (default 50) cold
# names, BENCH_PINGPONG (default 100) grants per node in a hand-over row,
# BENCH_LS the rdlm lockspaces (default every lk-* of cluster.conf),
# BENCH_CACHE_US the hold caching of the "+kept" rows (0: no such rows),
# BENCH_POLL_US rdlm's poll_us in the "+poll" rows (0: no such rows),
# BENCH_BIN where rdlm.ko, rdlm_torture.ko, rdlm-bench, dlm-bench and
# rdlmctl are (default: the tree).
set -u
. selftests/rdlm/lib.sh
. selftests/rdlm/fabric_lib.sh
TROUBLE=$RDLM_REPO/tools/cluster/kernel-trouble.patterns
# BENCH_BIN: tools/bench-dlm's copies of the modules and programs, safe
# from a rebuild of the tree during the run
bin=${BENCH_BIN:-}
RDLM_KO=${bin:-$RDLM_REPO}/rdlm.ko
TORTURE_KO=${bin:-$RDLM_REPO}/rdlm_torture.ko
BENCH=${bin:-$RDLM_REPO/userspace}/rdlm-bench
DLMB=${bin:-$RDLM_REPO/userspace}/dlm-bench
RDLMCTL=${bin:-$RDLM_REPO/userspace}/rdlmctl
TD=/sys/kernel/debug/rdlm_torture
OPS=${BENCH_OPS:-200}
COLD=${BENCH_COLD:-50}
PP=${BENCH_PINGPONG:-100}
CACHE_US=${BENCH_CACHE_US:-1000000}
POLL_US=${BENCH_POLL_US:-2000}
DLS=bdlm
res=$RDLM_OUT/bdlm.$ME
tmp=$(mktemp -d)
lockspaces=${BENCH_LS:-$(sed -n 's/^lockspace \(lk-[^[:space:]]*\).*/\1/p' \
	"$RDLM_REPO/tools/cluster/cluster.conf")}
: >"$res"
[ "$NODES" = 2 ] || fail "bench-dlm needs 2 nodes, not $NODES"
OTHER=$((3 - ME))

now() { date +%s.%N; }
# elapsed T0: seconds since T0 (from now)
elapsed() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.1f\n", t1 - t0 }'; }
log() { echo "node$ME $(cut -d' ' -f1 /proc/uptime)s: $*"; }

# tag SYSTEM: prefix dlm-bench / rdlm-bench lines "S ..." and "C ..." with
# SYSTEM, append them to the results, pass comments through
tag()
{
	awk -v sys="$1" '$1 == "S" || $1 == "C" { $1 = $1 " " sys; print; next }
		{ print > "/dev/stderr" }' >>"$res"
}

# hold_start KEY CMD...: start a holder in the background, wait until it
# created $tmp/KEY.ready (60 s at most)
hold_start()
{
	local key=$1 i

	shift
	rm -f "$tmp/$key.ready"
	"$@" -R "$tmp/$key.ready" 2>>"$tmp/$key.err" &
	echo $! >"$tmp/$key.pid"
	for ((i = 0; i < 600; i++)); do
		[ -e "$tmp/$key.ready" ] && return 0
		kill -0 "$(cat "$tmp/$key.pid")" 2>/dev/null || break
		sleep 0.1
	done
	echo "E - hold-$key - holder did not start: $(tail -n 2 "$tmp/$key.err" | xargs)" >>"$res"
	return 1
}

hold_stop()
{
	local pid

	pid=$(cat "$tmp/$1.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$tmp/$1.pid"
}

# ---- 1. perftest ------------------------------------------------------
gid=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* |
	head -n 1 | xargs basename)

# perftest_run N NAME CMD...: node1 serves, node2 measures 1000 iterations
# and records p50 (perftest's "typical") and p99, and the samples (-H)
perftest_run()
{
	local n=$1 name=$2 out='' try pid done=$RDLM_OUT/bdlm.perf-$1.done
	shift 2

	if [ "$ME" = 1 ]; then
		timeout 120 "$@" -d rxe0 -x "$gid" -F -n 1000 -p $((18700 + n)) >/dev/null 2>&1 &
		pid=$!
		# a client that gave up leaves the server waiting: stop it
		while kill -0 $pid 2>/dev/null && [ ! -e "$done" ]; do
			sleep 0.2
		done
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
	else
		for try in $(seq 1 30); do	# until node1's server listens
			out=$(timeout 60 "$@" -d rxe0 -x "$gid" -F -n 1000 -p $((18700 + n)) \
				10.77.0.1 2>&1) && break
			echo "$out" | grep -qi "connect" || break
			sleep 1
		done
		touch "$done"
		if echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 9 { ok = 1 } END { exit !ok }'; then
			echo "$out" | awk -v name="$name" '
				$1 ~ /^[0-9]+$/ && NF >= 9 { printf "P perftest %s - %s %s 1000\n", name, $5, $8 }
				/^[0-9]+, *[0-9.e+]+$/ { sub(",", ""); printf "S perftest %s - %s\n", name, $2 }' >>"$res"
		else
			echo "E perftest $name - $(echo "$out" | grep -iE 'fail|error|unable|not supported|couldn' | head -n 2 | xargs)" >>"$res"
			echo "perftest $name failed:"
			echo "$out" | tail -n 15
		fi
	fi
	barrier "perf-$n" 180
}

log "perftest"
perftest_run 0 fa ib_atomic_lat -A FETCH_AND_ADD -H
perftest_run 1 fa-event ib_atomic_lat -A FETCH_AND_ADD -e -H
perftest_run 2 cas ib_atomic_lat -A CMP_AND_SWAP
perftest_run 3 read ib_read_lat
perftest_run 4 send ib_send_lat
perftest_run 5 send-event ib_send_lat -e

# ---- 2. fs/dlm --------------------------------------------------------
dlm_ok=1
dlm_fail()
{
	echo "E fs/dlm setup - $*" >>"$res"
	log "fs/dlm: $*"
	dlm_ok=
}

# TCP connections of fs/dlm (port 21064), this node's view
dlm_conns()
{
	ss -tnH state established '( sport = :21064 or dport = :21064 )' | wc -l
}

log "fs/dlm: corosync"
for d in /etc/corosync /var/lib/corosync; do
	mountpoint -q $d || mount -t tmpfs -o mode=0755 tmpfs $d
done
"$RDLM_REPO/tools/cluster/corosync-conf" -N 2 -l "$RDLM_OUT/node$ME.corosync.log" \
	>/etc/corosync/corosync.conf
corosync -f </dev/null >>"$RDLM_OUT/node$ME.corosync.log" 2>&1 &
cs_pid=$!
t0=$(now)
for ((i = 0; i < 120; i++)); do
	st=$(corosync-quorumtool -s 2>/dev/null)
	[ "$(sed -n 's/^Nodes: *//p' <<<"$st")" = 2 ] &&
		[ "$(sed -n 's/^Quorate: *//p' <<<"$st")" = Yes ] && break
	sleep 0.5
done
((i < 120)) || dlm_fail "corosync: not 2 nodes and quorate after 60 s"
echo "I corosync_quorate_s $(elapsed "$t0")" >>"$res"

# What Debian's dlm.service and udev rule (51-dlm.rules) do: load dlm and
# give its misc devices the /dev/misc/ names libdlm and dlm_controld use
# (the guests run no udev). The lockspace's device appears once it exists.
modprobe dlm || dlm_fail "modprobe dlm"
mkdir -p /dev/misc
for dev in dlm-control dlm-monitor dlm_plock dlm_$DLS; do
	ln -sfn "../$dev" "/dev/misc/$dev"
done
# no fencing (nothing to fence with), no posix locks (no cluster fs)
dlm_controld --daemon_debug=1 --protocol=tcp --enable_fencing=0 \
	--enable_startup_fencing=0 --enable_plock=0 \
	</dev/null >>"$RDLM_OUT/node$ME.dlm_controld.log" 2>&1 &
dc_pid=$!
for ((i = 0; i < 100; i++)); do
	dlm_tool status >/dev/null 2>&1 && break
	kill -0 $dc_pid 2>/dev/null || break
	sleep 0.2
done
dlm_tool status >/dev/null 2>&1 || dlm_fail "dlm_controld did not start: $(tail -n 3 "$RDLM_OUT/node$ME.dlm_controld.log" | xargs)"
barrier dlm-up 180

if [ -n "$dlm_ok" ]; then
	log "fs/dlm: join $DLS"
	t0=$(now)
	# both at once: fs/dlm's connection race, if any, happens here
	timeout 120 "$DLMB" -L $DLS -m join || dlm_fail "join $DLS failed"
	echo "I dlm_join_s $(elapsed "$t0")" >>"$res"
fi
barrier dlm-joined 180
[ -n "$dlm_ok" ] && [ ! -e "$RDLM_OUT/bdlm.dlmfail.$OTHER" ] || {
	touch "$RDLM_OUT/bdlm.dlmfail.$ME"
	dlm_ok=
}
barrier dlm-checked 60
[ -e "$RDLM_OUT/bdlm.dlmfail.$OTHER" ] && dlm_ok=

# dlm_row WHERE MODE ARGS...: one dlm-bench row, results tagged fs/dlm
dlm_row()
{
	local w=$1 m=$2 rc=0 row=$2

	shift 2
	[ "$m" = pair ] && row=pair-$(echo "$*" | sed -n 's/.*-M \([A-Z]*\).*/\1/p' | tr A-Z a-z)
	timeout 300 "$DLMB" -L $DLS -m "$m" -w "$w" "$@" >"$tmp/row" 2>"$tmp/row.err" || rc=$?
	tag fs/dlm <"$tmp/row"
	[ "$rc" = 0 ] ||
		echo "E fs/dlm $row $w status $rc: $(tail -n 2 "$tmp/row.err" | xargs)" >>"$res"
}

if [ -n "$dlm_ok" ]; then
	log "fs/dlm: rows"
	# A masters every name: it locks them first and keeps them in NL
	if [ "$ME" = 1 ]; then
		hold_start nlhot "$DLMB" -L $DLS -m hold -M NL -n 1 -p hot
		hold_start nlcold "$DLMB" -L $DLS -m hold -M NL -n "$COLD" -p cB-
	fi
	barrier dlm-mastered 300
	# B: master remote; then A: master local (A's cold names are new:
	# A becomes their master, after asking the directory node)
	for turn in 2 1; do
		if [ "$ME" = "$turn" ]; then
			w=$([ "$ME" = 1 ] && echo local || echo remote)
			if [ "$ME" = 2 ]; then
				dlm_row remote cold -n "$COLD" -p cB-
			else
				dlm_row local cold -n "$COLD" -p cA-
			fi
			dlm_row "$w" pair -M EX -n "$OPS" -p hot
		fi
		barrier "dlm-turn$turn" 300
		# PR while the other node holds PR
		[ "$ME" != "$turn" ] && hold_start prhot "$DLMB" -L $DLS -m hold -M PR -n 1 -p hot
		barrier "dlm-pr$turn" 120
		[ "$ME" = "$turn" ] && dlm_row "$w" pair -M PR -n "$OPS" -p hot
		barrier "dlm-prdone$turn" 300
		hold_stop prhot
	done
	barrier dlm-pingpong 120
	dlm_row - pingpong -n "$PP" -p pp
	barrier dlm-pingpong-done 300
	hold_stop nlhot
	hold_stop nlcold
	echo "I dlm_tcp_connections $(dlm_conns)" >>"$res"
	ss -tnH state established '( sport = :21064 or dport = :21064 )' |
		sed "s/^/I dlm_tcp /" >>"$res"
	cat /sys/kernel/config/dlm/cluster/protocol 2>/dev/null | sed "s/^/I dlm_protocol /" >>"$res"
	barrier dlm-rows-done 120
	"$DLMB" -L $DLS -m leave || echo "E fs/dlm setup - leave $DLS failed" >>"$res"
fi
log "fs/dlm: stop"
kill $dc_pid 2>/dev/null
for ((i = 0; i < 100; i++)); do
	kill -0 $dc_pid 2>/dev/null || break
	sleep 0.1
done
kill -KILL $dc_pid 2>/dev/null
kill $cs_pid 2>/dev/null
for ((i = 0; i < 300; i++)); do
	kill -0 $cs_pid 2>/dev/null || break
	sleep 0.1
done
kill -KILL $cs_pid 2>/dev/null
wait 2>/dev/null
barrier dlm-down 120

# ---- 3. rdlm ----------------------------------------------------------
# verbs LOCKSPACE: verbs this node posted in the lockspace so far
verbs()
{
	"$RDLMCTL" status "$1" 2>/dev/null | awk '$1 == "verbs:" {
		for (i = 3; i <= NF; i += 2) s += $i; print s + 0 }'
}

# dev_row LS MODE ARGS...: one rdlm-bench row through /dev/rdlm (a request
# gives up after 30 s, the row after 120 s); fails if the row did
dev_row()
{
	local ls=$1 m=$2 rc=0 row=$2

	shift 2
	[ "$m" = pair ] && row=pair-$(echo "$*" | sed -n 's/.*-M \([A-Z]*\).*/\1/p' | tr A-Z a-z)
	timeout -s INT 120 "$BENCH" -L "$ls" -m "$m" -I "$ME" "$@" >"$tmp/row" \
		2>"$tmp/row.err" || rc=$?
	tag "rdlm/dev:$ls$variant" <"$tmp/row"
	[ "$rc" = 0 ] && return 0
	echo "E rdlm/dev:$ls$variant $row - status $rc: $(tail -n 2 "$tmp/row.err" | xargs)" >>"$res"
	echo "node$ME: $ls: rdlm-bench -m $m $* failed ($rc); the lockspace now:"
	grep -v "^lock " "$DBG/ls/$ls" 2>/dev/null | head -n 40
	grep "^lock " "$DBG/ls/$ls" 2>/dev/null | head -n 10
	return 1
}

# bench_attrs LS US: cache_us of LS (the lockspace restarts; every node),
# and a lease of 60 s, the longest there is, where LS has one: the PR
# rows' holder on the other node holds for longer than cluster.conf's
# 2 s, and a hold past its lease is lost: the bakery leaves its ticket on
# the word for the next exclusive request to wait out (2 leases)
bench_attrs()
{
	local lease

	lease=$(cat "$CFS/lockspaces/$1/lease_us") || fail "$1: lease_us"
	[ "$lease" = 0 ] || lease=60000000
	ls_set "$1" cache_us="$2" lease_us="$lease" lvb_read=1
}

# restarted LS [WHEN]: both nodes restarted LS and each reaches the other's
# new lockspace (a wait before the other's restart would see its old one,
# whose connection goes just after: a lock then fails with -ENOTCONN)
restarted()
{
	barrier "$1-restarted${2:-}" 120
	st "wait $1 90"
}

# has rdlm_torture's thread finished (bash builtins only)?
torture_done()
{
	local k v

	# stop at the line: every read of the rest would show the file anew
	while read -r k v; do
		[ "$k" = state ] && { [ "$v" = done ]; return; }
	done <$TD/stats
	return 1
}

# kernel_row LS ROW SHARED_PCT: lock+unlock of one name through the kernel
# API (rdlm_torture, synchronous calls), without the value block as every
# other row
stuck=
variant=
kernel_row()
{
	local ls=$1 row=$2 pct=$3 v0 home w

	[ -n "$stuck" ] && { echo "E rdlm/kernel:$ls$variant $row - skipped (torture stuck on $stuck)" >>"$res"; return; }
	v0=$(verbs "$ls")
	insmod "$TORTURE_KO" lockspace="$ls" prefix="u-$ls-" nlocks=1 \
		nthreads=1 nops="$OPS" shared_pct="$pct" convert_pct=0 \
		noqueue_pct=0 async_pct=0 cancel_pct=0 hold_us=0 lvb=0 gate=1 \
		warmup=1 ||
		{ echo "E rdlm/kernel:$ls$variant $row - insmod rdlm_torture failed" >>"$res"; return; }
	# Writing "run" opens the gate and sleeps until the thread is done:
	# nothing of this node's but the thread runs meanwhile (a shell that
	# polled would be runnable next to it, and take the CPU from it for
	# a time slice now and then: the p99 showed a timer tick).
	timeout 120 bash -c "echo 1 >$TD/run"
	if ! torture_done; then
		echo "E rdlm/kernel:$ls$variant $row - not done after 120 s (later kernel API rows skipped): $(tr '\n' ' ' <$TD/stats)" >>"$res"
		stuck=$ls
		return
	fi
	home=$("$BENCH" -L "$ls" -m home -p "u-$ls-0" 2>/dev/null)
	w=remote
	[ "$home" = "$ME" ] && w=local
	[ -z "$home" ] && w=-
	awk -v sys="rdlm/kernel:$ls$variant" -v row="$row" -v w="$w" '{ s[$1] = $2 } END {
		printf "P %s %s %s %.1f %.1f %d\n", sys, row, w, s["lat_p50_ns"] / 1000,
			s["lat_p99_ns"] / 1000, s["ops"]
		if (s["errors"]) printf "E %s %s %s %d errors\n", sys, row, w, s["errors"] }' \
		$TD/stats >>"$res"
	echo "C rdlm/kernel:$ls$variant $row $w $(awk '$1 == "ops" { print $2 }' $TD/stats) $(($(verbs "$ls") - v0))" >>"$res"
	rmmod rdlm_torture
}

# ex_rows LS COLD_PREFIX WHEN: cold acquire (new names COLD_PREFIX*; none
# if it is empty) and lock+unlock EX through /dev/rdlm and the kernel API,
# each node in turn
ex_rows()
{
	local turn

	for turn in 1 2; do
		if [ "$turn" = "$ME" ]; then
			[ -n "$2" ] && dev_row "$1" cold -n "$COLD" -p "$2"
			dev_row "$1" pair -M EX -n "$OPS" -p "h-$1"
			kernel_row "$1" pair-ex 0
		fi
		barrier "$1-$3$turn" 300
	done
}

# lvb_rows LS WHEN: lock+unlock PR with the value block through /dev/rdlm,
# on a name no other node holds, each node in turn
lvb_rows()
{
	local turn

	for turn in 1 2; do
		if [ "$turn" = "$ME" ]; then
			dev_row "$1" pair -M PR -V -n "$OPS" -p "v-$1"
		fi
		barrier "$1-$2$turn" 300
	done
}

log "rdlm"
kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
for ls in $lockspaces; do
	bench_attrs "$ls" 0
	restarted "$ls"
	barrier "$ls-ready" 120
	log "rdlm: $ls"
	# EX rows, the hand-over, then PR rows (the other node holding PR)
	ex_rows "$ls" "c$ME-$ls-" turn
	dev_row "$ls" pingpong -n "$PP" -p "pp-$ls"
	barrier "$ls-pingpong" 300
	for turn in 1 2; do
		if [ "$turn" != "$ME" ]; then
			hold_start prhot "$BENCH" -L "$ls" -m hold -M PR -n 1 -p "h-$ls"
			hold_start prkern "$BENCH" -L "$ls" -m hold -M PR -n 1 -p "u-$ls-0"
		fi
		barrier "$ls-pr$turn" 120
		if [ "$turn" = "$ME" ]; then
			# a PR request that hung through /dev/rdlm would leave
			# rdlm_torture's threads hanging for good
			if dev_row "$ls" pair -M PR -n "$OPS" -p "h-$ls"; then
				kernel_row "$ls" pair-pr 100
			else
				echo "E rdlm/kernel:$ls pair-pr - skipped: the /dev/rdlm PR row failed" >>"$res"
			fi
		fi
		barrier "$ls-prdone$turn" 300
		hold_stop prhot
		hold_stop prkern
	done
	# PR with the value block: where the lockspace can, the LVB read
	# from the home's record (lvb_read 1), then by message ("LS+msg")
	lvb_rows "$ls" lvb
	if reads_records "$ls"; then
		ls_set "$ls" lvb_read=0
		restarted "$ls" lvbmsg
		barrier "$ls-lvbmsg" 120
		variant=+msg
		lvb_rows "$ls" lvbmsg
		variant=
	fi
	# cold acquire and lock+unlock EX again, the caller spinning for
	# the answer before it sleeps
	if [ "$POLL_US" = 0 ]; then
		:
	elif ! echo "$POLL_US" >/sys/module/rdlm/parameters/poll_us; then
		echo "E rdlm/dev:$ls+poll - - poll_us $POLL_US refused (0-10000)" >>"$res"
	else
		variant=+poll
		ex_rows "$ls" "p$ME-$ls-" poll
		variant=
		echo 0 >/sys/module/rdlm/parameters/poll_us
	fi
	# lock+unlock EX again, the word kept between the calls
	if [ "$CACHE_US" != 0 ]; then
		bench_attrs "$ls" "$CACHE_US"
		restarted "$ls" kept
		barrier "$ls-kept" 120
		variant=+kept
		ex_rows "$ls" "" kept
		variant=
	fi
	barrier "$ls-done" 120
done
# torture threads stuck in rdlm pin both modules: measure FA next to them
if [ -z "$stuck" ] && "$CONFIGURE" down; then
	rdlm_unload
else
	echo "E rdlm setup - not unloaded (stuck: ${stuck:-unconfigure failed}): FA again measured with rdlm loaded" >>"$res"
fi
barrier rdlm-down 120

# ---- 4. perftest again ------------------------------------------------
log "perftest again"
perftest_run 6 fa-after ib_atomic_lat -A FETCH_AND_ADD -H
kmsg_check
rm -rf "$tmp"
log "done"
