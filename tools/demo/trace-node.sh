#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/trace-lock, run on each node of a 2-node cluster: where the time of
# one uncontended lock+unlock goes. One node at a time (the other idle)
# takes one name in EX and releases it TRACE_OPS times through the kernel
# API (rdlm_torture.ko, synchronous calls) with ftrace's function tracer
# on the steps of the path: the call, the verbs posted, rxe's send and
# completion work, the completion reaching the fabric and the engine, the
# caller's wake-up, the unlock. Results: $RDLM_OUT/trace.LS.NODE (raw) and
# $RDLM_OUT/steps.LS.NODE (mean offset of each step from the lock call).
#
# TRACE_OPS (default 100) lock+unlock pairs; TRACE_LS the lockspaces.
set -u
. selftests/rdlm/lib.sh
. selftests/rdlm/fabric_lib.sh
# TRACE_BIN: tools/trace-lock's copies, safe from a rebuild of the tree
bin=${TRACE_BIN:-}
RDLM_KO=${bin:-$RDLM_REPO}/rdlm.ko
TORTURE_KO=${bin:-$RDLM_REPO}/rdlm_torture.ko
RDLMCTL=${bin:-$RDLM_REPO/userspace}/rdlmctl
TD=/sys/kernel/debug/rdlm_torture
TR=/sys/kernel/tracing
OPS=${TRACE_OPS:-100}
lockspaces=${TRACE_LS:-lk-bakery lk-dqnl lk-central}
# the path's steps, in the order one lock+unlock meets them
steps="rdlm_lock_wait rdlm_fabric_post rxe_post_send rxe_completer
rdlm_ls_verb_done rdlm_ls_call_complete rdlm_queue_ast rdlm_ls_cb_work
rdlm_unlock_wait"

kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
mountpoint -q $TR || mount -t tracefs nodev $TR || fail "tracefs"

for ls in $lockspaces; do
	st "wait $ls 90"
	barrier "$ls-ready"
	for turn in 1 2; do
		if [ "$turn" = "$ME" ]; then
			name="t-$ls-0"
			home=$("$RDLMCTL" lock -L "$ls" "$name" -- \
				grep -m1 "^lock " "$DBG/ls/$ls" | sed -n 's/.* home \([0-9]*\) .*/\1/p')
			echo 0 >$TR/tracing_on
			echo function >$TR/current_tracer
			: >$TR/set_ftrace_filter
			for f in $steps; do
				echo "$f" >>$TR/set_ftrace_filter 2>/dev/null
			done
			echo 4096 >$TR/buffer_size_kb
			: >$TR/trace
			echo 1 >$TR/tracing_on
			insmod "$TORTURE_KO" lockspace="$ls" prefix="t-$ls-" nlocks=1 \
				nthreads=1 nops="$OPS" shared_pct=0 convert_pct=0 \
				noqueue_pct=0 async_pct=0 cancel_pct=0 hold_us=0 ||
				fail "$ls: insmod rdlm_torture"
			for ((i = 0; i < 1200; i++)); do
				grep -q '^state done' $TD/stats && break
				sleep 0.1
			done
			echo 0 >$TR/tracing_on
			p50=$(awk '$1 == "lat_p50_ns" { printf "%.0f", $2 / 1000 }' $TD/stats)
			rmmod rdlm_torture
			grep -v '^#' $TR/trace >"$RDLM_OUT/trace.$ls.$ME"
			echo nop >$TR/current_tracer
			# per lock call: when each step (its 1st, 2nd, ... time) follows it
			awk -v home="$home" -v me="$ME" -v p50="$p50" -v ls="$ls" '
			{
				for (i = 1; i <= NF; i++)
					if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; f = $(i + 1); break }
				if (f == "rdlm_lock_wait") { n++; t0 = t; delete occ }
				if (!n) next
				s = f "#" ++occ[f]
				sum[s] += (t - t0) * 1e6; cnt[s]++
			}
			END {
				printf "%s node%s, home node%s, p50 %s us, %d lock calls traced\n",
					ls, me, home, p50, n
				for (s in sum)
					printf "  %9.1f us  %-28s in %d of %d calls\n",
						sum[s] / cnt[s], s, cnt[s], n | "sort -n"
				close("sort -n")
			}' "$RDLM_OUT/trace.$ls.$ME" >"$RDLM_OUT/steps.$ls.$ME"
			cat "$RDLM_OUT/steps.$ls.$ME"
		fi
		barrier "$ls-turn$turn" 300
	done
done
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
