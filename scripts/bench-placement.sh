#!/usr/bin/env bash
# How much of one RDMA Write the fast path places whatever the link's pace or the machine's
# load (issue 41), over a veth pair between two network namespaces (as root): an iwxd in
# each, the receiver's fast path attached at TC ingress (or XDP), and one 32 MiB RDMA
# Write from namespace a into b (bench_verbs, one outstanding) on a link without a limit,
# under a tbf qdisc of 1 Gbit/s and of 100 Mbit/s on a's veth end, and without a limit
# beside a busy loop on each CPU; the four alternating, RUNS times each. It prints, for
# each, the share of the Write's bytes the BPF programs placed (the rest iwxd copied from
# TCP) in each run, its median and lowest, the FPDUs the programs left to iwxd (in each
# run, the reason that counted most: 'iwx stats --help' says what each means), and the
# Write's seconds. The target: 95 % or more in every run, each way.
#
#   scripts/bench-placement.sh               # 5 runs each: about a minute
#   scripts/bench-placement.sh -n 9 --xdp --no-pin
#
# --xdp: attach at XDP instead (native on veth; the veth ends' tx checksum offload off, as
# XDP needs, see 'iwx attach --help'). -S BYTES: the Write's size (default 32 MiB). -t is
# not taken: each run is one Write. --no-pin, --no-rps: as bench.sh (namespace a on CPU 0,
# b on CPU 1; the busy loops are not pinned to a namespace: one on each CPU).
# Every step is bounded by timeout(1); on any exit the daemons, the busy loops, the
# namespaces and the temporary directory this script made go, by the PIDs and names it
# recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh

runs=5 secs=10 pin=1 rps=1 mode=tc size=$((32 << 20))
while [ $# -gt 0 ]; do
	case $1 in
	--xdp) mode=xdp; shift ;;
	-S) size=${2:-}; shift 2 || usage 2 ;;
	-t) usage 2 >&2 ;;
	*) common_arg "$@"; shift "$took" ;;
	esac
done

net_names iwxl
port=7178
verbs=build/bench/bench_verbs iwxd=build/iwxd iwx=build/iwx
out=	# the temporary directory: sockets, logs, results
made_ns=()	# namespaces this script created
daemons=()	# PIDs of the iwxds it started
server=	# the Write's server, while it runs
busy=()	# the busy loops, while they run

cleanup_extra() { # lib-bench.sh's cleanup: before the namespaces go
	local pid

	for pid in ${busy[@]+"${busy[@]}"}; do stop_pid "$pid"; done
	# an XDP program outlives its iwxd (the interface goes with the namespace anyway)
	[ -z "${sock_b:-}" ] || timeout 5 "$iwx" detach dev "$if_b" -s "$sock_b" >/dev/null 2>&1 || true
	daemons_down
}

die() { echo "bench-placement: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, BPF)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
{ [[ $size =~ ^[1-9][0-9]*$ ]] && [ "$size" -le $((1 << 30)) ]; } ||
	die "-S takes a number of bytes, up to 1 GiB"
for tool in ip ss tc timeout awk join ethtool taskset; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done

make -s "$iwxd" "$verbs" "$iwx"
out=$(mktemp -d /tmp/iwx-placement-XXXXXX)
net_up
daemons_up --settle-ms 0
if [ "$mode" = xdp ]; then
	# veth hands XDP the sender's packets with their TCP checksum not computed
	ip netns exec "$ns_a" ethtool -K "$if_a" tx off >/dev/null
	ip netns exec "$ns_b" ethtool -K "$if_b" tx off >/dev/null
fi
timeout 30 "$iwx" attach dev "$if_b" -m "$mode" -s "$sock_b" >"$out/attach.log" 2>&1 ||
	{ cat "$out/attach.log" >&2; daemon_logs; die "iwx attach -m $mode: failed"; }

# The link of a variant: a's veth end's root qdisc, or none; the busy loops, or none.
link_set() { # unlimited|1gbit|100mbit|busy
	ip netns exec "$ns_a" tc qdisc del dev "$if_a" root 2>/dev/null || true
	case $1 in
	1gbit | 100mbit)
		# a burst of 64 KiB: a TSO segment whole (tbf would cut a larger one)
		ip netns exec "$ns_a" tc qdisc add dev "$if_a" root tbf rate "$1" burst 64kb latency 100ms ;;
	busy)
		for ((c = 0; c < $(nproc); c++)); do
			timeout 600 taskset -c "$c" sh -c 'while :; do :; done' &
			busy+=($!)
		done ;;
	esac
}

link_unset() {
	local pid

	for pid in ${busy[@]+"${busy[@]}"}; do stop_pid "$pid"; done
	busy=()
}

# The receiver's FPDUs skipped, by reason: "reason count" a line, its interfaces summed.
skips() {
	timeout 10 "$iwx" stats -j -s "$sock_b" | awk '/"ifindex"/ {
		s = $0; sub(/.*"skipped": \{/, "", s); sub(/\}.*/, "", s); n = split(s, kv, /, /)
		for (i = 1; i <= n; i++) { split(kv[i], p, /: /); gsub(/"/, "", p[1]); k[p[1]] += p[2] } }
		END { for (r in k) print r, k[r] }' | sort
}

# The reason that skipped most FPDUs between two skips() outputs, with its count.
top_skip() { # before after
	join "$1" "$2" | awk '{ d = $3 - $2; if (d > m) { m = d; r = $1 } } END { print (m ? r " " m : "none") }'
}

# One Write: its share placed (%), FPDUs skipped and seconds appended to $out/$1.*, and
# the reason that skipped most to $out/$1.why
write_once() { # variant
	local p0 p1

	start_server "$verbs" -s -a "$addr_b" -p "$port" -D "$sock_b" -A $((size + (32 << 20)))
	wait_listen "$port"
	read -r -a p0 <<<"$(fp_placed "$sock_b")"
	skips >"$out/skips0"
	if ! result=$(in_a timeout 120 "$verbs" -c -a "$addr_b" -p "$port" -D "$sock_a" -m write \
			-S "$size" -d 1 -t 0.01 2>"$out/client.log"); then
		client_failed "$1"
	fi
	stop_server "$1"
	read -r -a p1 <<<"$(fp_placed "$sock_b")"
	skips >"$out/skips1"
	top_skip "$out/skips0" "$out/skips1" >>"$out/$1.why"
	[ "$(field bytes "$result")" = "$size" ] || die "$1: wrote $(field bytes "$result") bytes"
	awk -v b="$((p1[0] - p0[0]))" -v s="$size" 'BEGIN { printf "%.1f\n", 100 * b / s }' >>"$out/$1.pct"
	echo "$((p1[2] - p0[2]))" >>"$out/$1.skipped"
	field seconds "$result" >>"$out/$1.secs"
}

lowest() { sort -g "$1" | head -1; }

variants=(unlimited 1gbit 100mbit busy)
echo "bench-placement: $runs runs each of one $((size >> 20)) MiB Write, the fast path at $mode$(steer_note)"
for ((r = 1; r <= runs; r++)); do
	for v in $(fp_order "$r" "${variants[@]}"); do
		link_set "$v"
		write_once "$v"
		link_unset
		echo "[$r/$runs] $v: $(tail -1 "$out/$v.pct")% placed, $(tail -1 "$out/$v.skipped")" \
			"FPDUs skipped (most: $(tail -1 "$out/$v.why")), $(tail -1 "$out/$v.secs") s"
	done
done

echo
row "one $((size >> 20)) MiB Write, fast path at $mode" "placed, each run (%)" "median (%)" "lowest (%)" \
	"FPDUs skipped (median)" "skipped most for, each run" "seconds (median)"
row --- --- --- --- --- --- ---
for v in "${variants[@]}"; do
	label=$v
	case $v in
	unlimited) label="no limit" ;;
	1gbit) label="tbf 1 Gbit/s" ;;
	100mbit) label="tbf 100 Mbit/s" ;;
	busy) label="no limit, a busy loop on each CPU" ;;
	esac
	row "$label" "$(runs_of "$out/$v.pct")" "$(median "$out/$v.pct" 1)" "$(lowest "$out/$v.pct")" \
		"$(median "$out/$v.skipped" 0)" "$(awk '{ print $1 }' "$out/$v.why" | tr '\n' ' ' | sed 's/ $//')" \
		"$(median "$out/$v.secs" 3)"
done
