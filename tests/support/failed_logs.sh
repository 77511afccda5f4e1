#!/bin/bash
# What a failed Criterion run said, for a failure in CI that nobody can run again: each
# failed assertion and test (Criterion prints an assertion's message before its [FAIL]),
# each sanitizer report, then the daemons' logs of each failed test (iwxd_pair.c keeps
# them, IWX_TEST_KEEP_LOGS).
# usage: failed_logs.sh CRITERION_LOG LOG_DIR [LINES]
set -u
[ $# -ge 2 ] || { echo "usage: $0 CRITERION_LOG LOG_DIR [LINES]" >&2; exit 2; }
lines=${3:-40}
grep -a -E '^\[(----|FAIL)\]' "$1" | head -n 80
grep -a -E -A25 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1" | head -n 80
grep -a -o '^\[FAIL\] [A-Za-z0-9_]*::[A-Za-z0-9_]*' "$1" | sed 's/^\[FAIL\] //' | sort -u |
while read -r t; do
	for f in "$2/$t".iwxd-*.log; do
		[ -e "$f" ] || continue
		echo "---- $(basename "$f"): its warnings and errors, its Terminates and queue pairs, its last lines"
		grep -a -E ' (error|warning):' "$f" | tail -n "$lines"
		echo "...."
		grep -a -E 'Terminate| qp [0-9]+: ' "$f" | grep -a -v -E ' (error|warning):' |
			tail -n "$lines"
		echo "...."
		tail -n 10 "$f"
	done
done
exit 0
