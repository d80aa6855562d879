#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Demo, run on every test cluster node: load rdlm, report what it sees, and
# measure the raw verb round trips the lock protocols are built from
# (node1 serves, every other node measures against it with perftest).
set -u
. selftests/rdlm/lib.sh
RDLM_KO=$RDLM_REPO/rdlm.ko

kmsg_mark
rdlm_load
echo "== $RDLM_NODE_NAME ($RDLM_NODE_IP): rdlm loaded"
printf '   %-22s %s\n' "RDMA devices (rdlm):" "$(cat $DBG/devices | xargs)"
printf '   %-22s %s\n' "/dev/rdlm:" "$(stat -c '%A %U:%G' /dev/rdlm)"
printf '   %-22s %s\n' "configfs:" "$(ls $CFS | xargs)"
printf '   %-22s %s\n' "atomic capability:" \
	"$(ibv_devinfo -v -d rxe0 | sed -n 's/^[[:space:]]*atomic_cap:[[:space:]]*//p')"

gid=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/rxe0/ports/1/gids/* |
	head -n 1 | xargs basename)
perf=(-d rxe0 -x "$gid" -F -n 200)
tests=("ib_atomic_lat -A FETCH_AND_ADD" "ib_atomic_lat -A CMP_AND_SWAP"
       "ib_read_lat" "ib_send_lat")
if [ "$RDLM_NODE_ID" = 1 ]; then
	# one server per client and test, each on its own port
	for c in $(seq 2 "$RDLM_NODES"); do
		for t in "${!tests[@]}"; do
			timeout 120 ${tests[t]} "${perf[@]}" -p $((18500 + c * 10 + t)) \
				>/dev/null 2>&1
		done &
	done
	wait
else
	echo "   raw verb round trips to node1 (perftest, 200 iterations, usec):"
	printf '   %-30s %8s %8s %8s\n' verb typical p99 "p99.9"
	for t in "${!tests[@]}"; do
		for try in $(seq 1 30); do	# until node1's server listens
			out=$(timeout 60 ${tests[t]} "${perf[@]}" \
				-p $((18500 + RDLM_NODE_ID * 10 + t)) 10.77.0.1 2>&1) && break
			sleep 1
		done
		echo "$out" | awk -v t="${tests[t]}" '$1 ~ /^[0-9]+$/ && NF >= 9 {
			printf "   %-30s %8s %8s %8s\n", t, $5, $8, $9 }'
	done
fi
rdlm_unload
kmsg_check
echo "== $RDLM_NODE_NAME: rdlm unloaded, kernel log clean"
