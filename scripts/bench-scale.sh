#!/usr/bin/env bash
# iwxd at scale (issue 13), over a veth pair between two network namespaces (as root): an
# iwxd in each, the server of bench_scale in b, its client in a (tests/bench/bench_scale.c).
# Three tables of medians:
#   - idle queue pairs (0, 256, 1024, 4096, 16384) held between the daemons, and an
#     8-byte Send ping-pong on one more connection: its median and p99 round trip, each
#     iwxd's resident memory (VmRSS) with them all held, what one idle queue pair adds to
#     it, and the rate they were set up at (64 connects in flight);
#   - the set-up rate with 1 and with 64 connects in flight, for 1024 and 4096 queue pairs;
#   - the aggregate goodput of 1 MiB and 64 KiB RDMA Writes (8 outstanding on each
#     connection) on 1, 4, 16, 64 and 256 connections, its ratio to one connection's
#     (target: 0.9 or more) and the spread between connections (the bytes of the most
#     served over those of the least).
# Each measurement starts on new namespaces and daemons (so that nothing of one, memory or
# sockets in TIME_WAIT, carries into the next), the daemons' limits raised for the most
# queue pairs asked for, and runs RUNS times, the sizes in turn.
#
#   scripts/bench-scale.sh                     # 3 runs, 3 s each: about 3 minutes
#   scripts/bench-scale.sh -n 1 --idle "0 256" --setup 256 --conns "1 4"
#
# --idle LIST, --setup LIST, --conns LIST: the idle queue pairs, the queue pairs set up,
# the connections writing (quoted lists). -t SECONDS: each ping-pong and goodput run
# (default 3). --no-pin, --no-rps: as bench.sh (namespace a on CPU 0, b on CPU 1, each veth
# end receiving on its namespace's CPU). The descriptor limit is raised to the hard limit
# for the daemons (a TCP socket for each queue pair), which must exceed the most queue
# pairs asked for, as vm.max_map_count must (a mapping for each, in iwxd and in each
# program). Every step is bounded by timeout(1); on any exit the daemons, the programs,
# the namespaces and the temporary directory this script made go, by the PIDs and names
# it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh

runs=3 secs=3 pin=1 rps=1
idle_list="0 256 1024 4096 16384" setup_list="1024 4096" conns_list="1 4 16 64 256"
while [ $# -gt 0 ]; do
	case $1 in
	--idle) idle_list=${2:-}; shift 2 || usage 2 ;;
	--setup) setup_list=${2:-}; shift 2 || usage 2 ;;
	--conns) conns_list=${2:-}; shift 2 || usage 2 ;;
	*) common_arg "$@"; shift "$took" ;;
	esac
done

net_names iwxq
port=7178
tool=build/bench/bench_scale iwxd=build/iwxd
out=	# the temporary directory: sockets, logs, results
made_ns=()	# namespaces this script created
daemons=()	# PIDs of the iwxds it started
server=	# the server it runs in the background, while it runs

cleanup_extra() { daemons_down; } # lib-bench.sh's cleanup: before the namespaces go

die() { echo "bench-scale: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, iwxd's STATUS)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "-t takes a positive number of seconds"
for n in $idle_list $setup_list $conns_list; do
	[[ $n =~ ^[0-9]+$ ]] || die "not a number of queue pairs: $n"
done
for tool_needed in ip ss timeout awk; do
	command -v "$tool_needed" >/dev/null || die "$tool_needed is missing"
done

# the most queue pairs one side holds, and what that takes of the daemons and the kernel
most=$(echo "$idle_list $setup_list $conns_list" | tr ' ' '\n' | sort -n | tail -1)
most=$((most + 1))	# the ping-pong connection
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -gt $((most + 256)) ] ||
	die "$most queue pairs need more descriptors than the hard limit, $(ulimit -Hn)"
[ "$(cat /proc/sys/vm/max_map_count)" -gt $((most + 4096)) ] ||
	die "$most queue pairs need more mappings than vm.max_map_count allows"
# queue pairs and their rings' mappings for one client; its events (a disconnect for each)
iwxd_opts=(--settle-ms 0 --max-qps "$most" --max-maps $((most + 64))
	--max-queued $((most * 2 + 8192)))

make -s "$iwxd" "$tool"
out=$(mktemp -d /tmp/iwx-bench-scale-XXXXXX)
net_up

# One measurement on fresh daemons: N, then the client's other options. The client's line
# in $result, with the server's teardown_ms (its connections' ends, first to last). Then
# new namespaces for the next: this one's sockets in TIME_WAIT, as many as it had
# connections, would slow the kernel's choice of a port for each of its connects.
measure() {
	local name="-n $*" v
	# seconds: the ping-pong or Writes and their last completions (bench_scale waits a
	# minute for one), set-up and teardown at a few hundred a second
	local limit=$((secs + 120 + $1 / 100))

	daemons_up "${iwxd_opts[@]}"
	start_server "$tool" -s -a "$addr_b" -p "$port" -D "$sock_b"
	wait_listen "$port"
	result=$(in_a timeout "$limit" "$tool" -c -a "$addr_b" -p "$port" -D "$sock_a" \
		-t "$secs" -n "$@" 2>"$out/client.log") || client_failed "bench_scale $name"
	stop_server "bench_scale $name"
	v=$(sed -n 's/.*teardown_ms=\([0-9]*\).*/\1/p' "$out/server.log")
	result="$result teardown_ms=${v:-na}"
	daemons_down
	net_down
	net_up
}

echo "bench-scale: $ns_a $addr_a <-> $ns_b $addr_b (veth), $runs runs, $secs s each"
echo "  ${pin_a:+namespace a (client, iwxd a) on CPU 0, b (server, iwxd b) on CPU 1$(steer_note); }iwxd" \
	"${iwxd_opts[*]}"
for r in $(seq "$runs"); do
	for n in $idle_list; do
		measure "$n" -m pingpong
		echo "[$r/$runs] $result"
		record "idle-$n" rtt_us_median rtt_us_p99 iwxd_rss_kb peer_iwxd_rss_kb conns_per_s \
			teardown_ms
	done
	for n in $setup_list; do
		for k in 1 64; do
			measure "$n" -m setup -k "$k"
			echo "[$r/$runs] $result"
			record "setup-$n-$k" conns_per_s
		done
	done
	for s in 1M 64K; do
		one=	# this run's goodput on the first of --conns: the ratios' base
		for n in $conns_list; do
			measure "$n" -m write -S "$s"
			one=${one:-$(field gbps "$result")}
			result="$result ratio=$(awk -v a="$(field gbps "$result")" -v b="$one" \
				'BEGIN { if (b > 0) printf "%.2f", a / b; else print "na" }')"
			echo "[$r/$runs] $result"
			record "write-$s-$n" gbps ratio spread
		done
	done
done

# ------------------------------------------------------------- the tables

mb() { awk -v k="$1" 'BEGIN { if (k == "na") print "na"; else printf "%.1f MB", k / 1024 }'; }
# (the median RSS with n idle - that with none) / n, in kB
per_qp() { # key n
	awk -v a="$(median "$out/idle-$2.$1" 0)" -v b="$(median "$out/idle-0.$1" 0)" -v n="$2" \
		'BEGIN { if (a == "na" || b == "na" || n == 0) print "—"; else printf "%.1f kB", (a - b) / n }'
}

echo
echo "Idle queue pairs held, and an 8-byte Send ping-pong on one more connection (round"
echo "trip in µs); each iwxd's resident memory with them all held (a: the client's, b: the"
echo "server's), what one idle queue pair adds (against none), their set-up rate (64 in"
echo "flight), and the teardown once the client closed its device: the server's events of"
echo "their ends, first to last, each queue pair destroyed. Medians of $runs."
echo
row "idle QPs" "ping-pong median / p99" "iwxd a RSS" "iwxd b RSS" "per idle QP a / b" "set-up rate" \
	teardown
row --- --- --- --- --- --- ---
for n in $idle_list; do
	rate="—"
	[ "$n" = 0 ] || rate="$(median "$out/idle-$n.conns_per_s" 0)/s"
	row "$n" "$(median "$out/idle-$n.rtt_us_median" 0) / $(median "$out/idle-$n.rtt_us_p99" 0) µs" \
		"$(mb "$(median "$out/idle-$n.iwxd_rss_kb" 0)")" \
		"$(mb "$(median "$out/idle-$n.peer_iwxd_rss_kb" 0)")" \
		"$(per_qp iwxd_rss_kb "$n") / $(per_qp peer_iwxd_rss_kb "$n")" "$rate" \
		"$(median "$out/idle-$n.teardown_ms" 0) ms"
done

echo
echo "Set-up rate: queue pairs created and connected per second (both sides create one for"
echo "each), with 1 and with 64 connects in flight. Medians of $runs."
echo
row "queue pairs" "1 in flight" "64 in flight"
row --- --- ---
for n in $setup_list; do
	row "$n" "$(median "$out/setup-$n-1.conns_per_s" 0)/s" "$(median "$out/setup-$n-64.conns_per_s" 0)/s"
done

echo
echo "RDMA Write goodput over all connections, Gbit/s: 8 Writes outstanding on each for"
echo "$secs s, then a Read on each that returns once its Writes are placed, the time running"
echo "until the last. Its ratio to one connection's, in the same run (target ≥ 0.9); the"
echo "spread: the bytes of the connection served most over those of the one served least."
echo "Medians of $runs."
echo
row connections "1 MiB" ratio spread "64 KiB" ratio spread
row --- --- --- --- --- --- ---
for n in $conns_list; do
	cells=()
	for s in 1M 64K; do
		cells+=("$(median "$out/write-$s-$n.gbps" 3)" "$(median "$out/write-$s-$n.ratio" 2)"
			"$(median "$out/write-$s-$n.spread" 2)")
	done
	row "$n" "${cells[@]}"
done
echo
echo "(ratio: to the goodput on $(echo "$conns_list" | awk '{ print $1 }') connection(s), the first of --conns)"
