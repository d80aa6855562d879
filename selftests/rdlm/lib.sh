# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the rdlm selftests (sourced, not run).

ksft_skip=4
RDLM_KO=${RDLM_KO:-$PWD/rdlm.ko}
TROUBLE=${TROUBLE:-$PWD/kernel-trouble.patterns}
CFS=/sys/kernel/config/rdlm
DBG=/sys/kernel/debug/rdlm

fail()
{
	echo "FAIL: $*"
	exit 1
}

require_root()
{
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit $ksft_skip; }
}

rdlm_loaded()
{
	[ -d /sys/module/rdlm ]
}

rdlm_load()
{
	modprobe -a configfs ib_core || fail "cannot load configfs and ib_core"
	insmod "$RDLM_KO" || fail "insmod $RDLM_KO"
}

rdlm_unload()
{
	rmmod rdlm || fail "rmmod rdlm"
}

# Mark the kernel log, so that kmsg_check looks only at what came after.
kmsg_mark()
{
	KMSG_MARK="rdlm-selftest-mark-$$-$(date +%s%N)"
	echo "$KMSG_MARK" >/dev/kmsg
}

kmsg_check()
{
	local trouble

	trouble=$(dmesg | sed -n "/$KMSG_MARK/,\$p" | grep -E -f "$TROUBLE")
	[ -z "$trouble" ] || fail "kernel log: $trouble"
}

# expect_fail ERRTEXT CMD...: CMD must fail and say ERRTEXT
expect_fail()
{
	local want=$1 out

	shift
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected '$want'"
	fi
	case $out in
	*"$want"*) ;;
	*) fail "'$*' said '$out', expected '$want'" ;;
	esac
}

# wait_file FILE: wait (60 s at most) for FILE to exist, else fail
wait_file()
{
	local i

	for ((i = 0; i < 600; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "$1 did not appear in 60 s"
}

# long_leases LS...: give the lockspaces a 60 s lease. Under TCG a holder
# can wait for another node longer than the lk-* lockspaces' 2 s lease,
# after which the bakery and central report it lost, let waiters in and
# mark the LVBs it was writing invalid: tests that check exact outcomes
# take leases out of the picture this way.
long_leases()
{
	local ls

	for ls in "$@"; do
		echo 0 >$CFS/lockspaces/$ls/enable &&
			echo 60000000 >$CFS/lockspaces/$ls/lease_us &&
			echo 1 >$CFS/lockspaces/$ls/enable || fail "$ls: lease"
	done
}
