#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pass the kselftest runner's TAP through unchanged and follow each test's
# result with "# took N s: selftests: rdlm: NAME": tools/run-tests prints
# them in a table (the suite has a time budget).
t0=$SECONDS name=
while IFS= read -r line; do
	case $line in
	"# selftests: "*) t0=$SECONDS name=${line#\# } ;;
	esac
	printf '%s\n' "$line"
	case $line in
	"ok "[0-9]* | "not ok "[0-9]*) echo "# took $((SECONDS - t0)) s: $name" ;;
	esac
done
