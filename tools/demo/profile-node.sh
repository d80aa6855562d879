#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/profile-lock, run on each node of a 2-node cluster: where the CPU
# time of lock+unlock through /dev/rdlm goes. Node 1 runs rdlm-bench's
# "pair" row (one process, one name, EX) on a name homed on node 1
# (PROF_HOME=local) or node 2 (remote), first alone for its p50, then under
# perf record (cpu-clock samples with call graphs: a VM has no hardware
# counters), and writes perf's report, by symbol, to $RDLM_OUT/profile:
# self time, then time with the callees ("children"). Node 2 serves.
#
# PROF_LS (default lk-bakery-cpu), PROF_HOME (local), PROF_CACHE_US (0:
# no hold kept; 1000000 profiles a kept hold), PROF_OPS (40000) pairs,
# PROF_HZ (4000) samples per second: more slows what they measure (every
# sample is an interrupt of the emulated CPU).
set -u
. selftests/rdlm/lib.sh
. selftests/rdlm/fabric_lib.sh
bin=${PROF_BIN:-}
RDLM_KO=${bin:-$RDLM_REPO}/rdlm.ko
BENCH=${bin:-$RDLM_REPO/userspace}/rdlm-bench
ls=${PROF_LS:-lk-bakery-cpu}
ops=${PROF_OPS:-40000}
out=$RDLM_OUT/profile
tmp=$(mktemp -d)

# p50 of each row of rdlm-bench's samples ("S ROW WHERE USEC")
p50()
{
	awk '$1 == "S" { print $2, $4 }' "$1" | sort -k1,1 -k2,2n |
		awk '{ v[$1, ++n[$1]] = $2 }
		END { for (r in n) printf "  %-8s p50 %7.1f us  (%d)\n", r,
			v[r, int(n[r] / 2) + 1], n[r] }'
}

kmsg_mark
rdlm_load
"$CONFIGURE" up || fail "configure"
ls_set "$ls" cache_us="${PROF_CACHE_US:-0}"
st "wait $ls 90"
barrier profile-ready
if [ "$ME" = 1 ]; then
	want=$ME
	[ "${PROF_HOME:-local}" = remote ] && want=2
	name=
	for i in $(seq 0 63); do
		h=$("$BENCH" -L "$ls" -m home -p "prof-$i" 2>/dev/null)
		[ "$h" = "$want" ] && { name=prof-$i; break; }
	done
	[ -n "$name" ] || fail "no name of 64 homed on node $want"
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	{
		echo "# tools/profile-lock: $ls, home ${PROF_HOME:-local} ($name), cache_us ${PROF_CACHE_US:-0}, $ops pairs"
		"$BENCH" -L "$ls" -m pair -M EX -n "$ops" -p "$name" >"$tmp/alone" ||
			fail "rdlm-bench"
		echo "alone:"
		p50 "$tmp/alone"
		# the samples go to a file: a pipe would wake its reader
		perf record -q -e cpu-clock -F "${PROF_HZ:-4000}" -g \
			-o "$tmp/perf.data" -- "$BENCH" -L "$ls" -m pair -M EX \
			-n "$ops" -p "$name" >"$tmp/profiled" || fail "perf record"
		echo "under perf:"
		p50 "$tmp/profiled"
		echo "## self"
		perf report -i "$tmp/perf.data" --no-children --sort sym --stdio \
			-g none --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep .
		echo "## with callees"
		perf report -i "$tmp/perf.data" --children --sort sym --stdio \
			-g none --percent-limit 1 2>/dev/null | grep -v '^#' | grep .
	} >"$out"
fi
barrier profile-done 600
rm -rf "$tmp"
"$CONFIGURE" down || fail "unconfigure"
rdlm_unload
kmsg_check
