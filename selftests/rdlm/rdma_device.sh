#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdlm tracks RDMA devices: it sees rxe0 at load, lets it go when the link
# is deleted under the loaded module, and picks up the new one on add.
. ./lib.sh
require_root
rdma link show | grep -q "^link rxe0/" || { echo "SKIP: no rxe0"; exit $ksft_skip; }
netdev=$(rdma link show | sed -n "s|^link rxe0/.* netdev \([^ ]*\).*|\1|p")
rdlm_loaded || rdlm_load
kmsg_mark

devices() { cat $DBG/devices; }
[ "$(devices)" = rxe0 ] || fail "devices at load: '$(devices)'"

rdma link delete rxe0 || fail "rdma link delete rxe0"
[ -z "$(devices)" ] || fail "devices after delete: '$(devices)'"
dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -q "rdlm: removed RDMA device rxe0" ||
	fail "removal not logged"

rdma link add rxe0 type rxe netdev "$netdev" || fail "rdma link add rxe0"
[ "$(devices)" = rxe0 ] || fail "devices after add: '$(devices)'"

# unload with the device present, then load again: it is found again
rdlm_unload
rdlm_load
[ "$(devices)" = rxe0 ] || fail "devices after reload: '$(devices)'"
rdlm_unload
kmsg_check
