#!/usr/bin/env bash
# A client that rings every doorbell without end against another client's stream (issue
# 27), over a veth pair between two network namespaces (as root): an iwxd in each, a victim
# (bench_verbs) writing one 256 MiB RDMA Write from namespace a into b, alone and with a
# ringer (bench_ringer: 1024 queue pairs and 1024 CQs, nothing posted, every bit of its
# doorbells set over and over) on the victim's iwxd, the two alternating, RUNS times each.
# A third variant runs beside a spinner instead (a process at the ringer's nice level that
# only burns a CPU and talks to no iwxd): what the scheduler alone costs the victim, so that
# ringer / spinner is what iwxd gives the ringer. It prints the victim's seconds for each
# run, their medians and the ratios to alone (target: 1.1 or less) and to the spinner, and
# the CPU the ringer's iwxd took meanwhile.
#
#   scripts/bench-bell.sh                 # 5 runs each: about a minute
#   scripts/bench-bell.sh -n 9 --ringer-nice 0
#
# --ringer-nice N: run the ringer at that nice level (default 19: on a machine of two CPUs
# a ringer at 0 takes one from the victim's programs, which measures the scheduler, not
# what iwxd gives the ringer; iwxd still sees it ring between every two turns). --ringer-side b: the
# ringer on the receiving iwxd instead. -t is not taken: the stream is one Write. --no-pin,
# --no-rps: as bench.sh (namespace a on CPU 0, b on CPU 1; the ringer is not pinned).
# Every step is bounded by timeout(1); on any exit the daemons, the ringer, the namespaces
# and the temporary directory this script made go, by the PIDs and names it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh

runs=5 secs=10 pin=1 rps=1 nice_n=19 side=a
while [ $# -gt 0 ]; do
	case $1 in
	--ringer-nice) nice_n=${2:-}; shift 2 || usage 2 ;;
	--ringer-side) side=${2:-}; shift 2 || usage 2 ;;
	-t) usage 2 >&2 ;;
	*) common_arg "$@"; shift "$took" ;;
	esac
done

net_names iwxr
port=7179 size=$((256 << 20))
verbs=build/bench/bench_verbs ringer_bin=build/bench/bench_ringer iwxd=build/iwxd
out=	# the temporary directory: sockets, logs, results
made_ns=()	# namespaces this script created
daemons=()	# PIDs of the iwxds it started
server=	# the victim's server, while it runs
ringer=	# the ringer (or the spinner), while it runs

cleanup_extra() { # lib-bench.sh's cleanup: before the namespaces go
	[ -z "$ringer" ] || stop_pid "$ringer"
	daemons_down
}

die() { echo "bench-bell: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
[[ $nice_n =~ ^-?[0-9]+$ ]] || die "--ringer-nice takes a number"
[ "$side" = a ] || [ "$side" = b ] || die "--ringer-side takes a or b"
for tool in ip ss timeout awk; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done

make -s "$iwxd" "$verbs" "$ringer_bin"
out=$(mktemp -d /tmp/iwx-bell-XXXXXX)
net_up
daemons_up --settle-ms 0
ringer_sock=$sock_a ringer_pid_d=$pid_a
if [ "$side" = b ]; then ringer_sock=$sock_b ringer_pid_d=$pid_b; fi

ringer_up() {
	: >"$out/ringer.out"
	timeout 600 nice -n "$nice_n" "$ringer_bin" -D "$ringer_sock" >"$out/ringer.out" \
		2>"$out/ringer.log" &
	ringer=$!
	for _ in $(seq 300); do
		[ -s "$out/ringer.out" ] && return 0
		kill -0 "$ringer" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out/ringer.log" >&2
	die "the ringer does not ring"
}

spinner_up() {
	timeout 600 nice -n "$nice_n" sh -c 'while :; do :; done' &
	ringer=$!
}

# One victim run: its seconds for the 256 MiB Write, appended to $out/$1.secs; the CPU
# its iwxd (the ringer's) took, in percent of one, to $out/$1.iwxd
victim() {
	local d0 d1 t0 t1

	start_server "$verbs" -s -a "$addr_b" -p "$port" -D "$sock_b" -A $((size + (32 << 20)))
	wait_listen "$port"
	d0=$(ticks "$ringer_pid_d") t0=$(now_ns)
	if ! result=$(in_a timeout 120 "$verbs" -c -a "$addr_b" -p "$port" -D "$sock_a" -m write \
			-S "$size" -d 1 -t 0.01 2>"$out/client.log"); then
		client_failed "victim ($1)"
	fi
	t1=$(now_ns) d1=$(ticks "$ringer_pid_d")
	stop_server "victim ($1)"
	[ "$(field bytes "$result")" = "$size" ] || die "the victim wrote $(field bytes "$result") bytes"
	field seconds "$result" >>"$out/$1.secs"
	awk -v d="$((d1 - d0))" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f\n", 100 * d / hz / (t / 1e9) }' >>"$out/$1.iwxd"
}

echo "bench-bell: $runs runs each, the ringer (nice $nice_n) on iwxd $side$(steer_note)"
for ((r = 1; r <= runs; r++)); do
	for v in $(fp_order "$r" alone spinner ringer); do
		if [ "$v" = ringer ]; then ringer_up; fi
		if [ "$v" = spinner ]; then spinner_up; fi
		victim "$v"
		if [ "$v" != alone ]; then
			stop_pid "$ringer"
			ringer=
		fi
		echo "[$r/$runs] $v: $(tail -1 "$out/$v.secs") s, iwxd $side $(tail -1 "$out/$v.iwxd")% CPU"
	done
done

alone=$(median "$out/alone.secs" 3) rung=$(median "$out/ringer.secs" 3)
spun=$(median "$out/spinner.secs" 3)
echo
row "victim: 256 MiB Write" "runs (s)" "median (s)" "iwxd $side CPU (median %)"
row --- --- --- ---
row alone "$(runs_of "$out/alone.secs")" "$alone" "$(median "$out/alone.iwxd" 0)"
row "with a spinner" "$(runs_of "$out/spinner.secs")" "$spun" "$(median "$out/spinner.iwxd" 0)"
row "with the ringer" "$(runs_of "$out/ringer.secs")" "$rung" "$(median "$out/ringer.iwxd" 0)"
echo
echo "with / without the ringer: $(awk -v a="$alone" -v b="$rung" 'BEGIN { printf "%.3f", b / a }') (target 1.1 or less)"
echo "ringer / spinner: $(awk -v a="$spun" -v b="$rung" 'BEGIN { printf "%.3f", b / a }') (what iwxd gives the ringer beyond the CPU it takes)"
