#!/usr/bin/env bash
# The engine against plain TCP, over a veth pair between two network namespaces (as
# root): iperf3 (its default large writes, then MSS-sized writes with TCP_NODELAY, the
# engine's one send() per FPDU), iwx's engine moving RDMA Writes, RDMA Reads and Sends,
# then an 8-byte ping-pong on the engine and on a TCP socket. Each measurement runs
# REPEAT times (default 3), the variants alternating; the table shows medians and ratios.
#
#   scripts/bench-engine.sh                    # REPEAT=3, BENCH_SECONDS=3: about 65 s
#   REPEAT=5 BENCH_SECONDS=5 PIN=0 scripts/bench-engine.sh
#
# PIN=1 (default, with two CPUs or more) runs the server side on CPU 1 and the client
# side on CPU 0, the same for every variant. The veth MTU is the default 1500.
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=${REPEAT:-3}
secs=${BENCH_SECONDS:-3}
pin=${PIN:-1}
ns_a=iwxb-$$-a ns_b=iwxb-$$-b
if_a=iwxb$$a if_b=iwxb$$b
addr_a=192.0.2.1 addr_b=192.0.2.2
port=7175 iperf_port=5201
bin=build/bench/bench_engine
out=$(mktemp -d /tmp/iwx-bench-XXXXXX)
server=	# the one process this script runs in the background, while it runs

cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	ip netns del "$ns_a" 2>/dev/null || true
	ip netns del "$ns_b" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "bench-engine: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "BENCH_SECONDS must be a positive integer"
for tool in ip ss timeout awk; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
command -v iperf3 >/dev/null ||
	die "iperf3 is missing: apt-get install -y iperf3 (scripts/install-deps.sh installs it)"

make -s "$bin"

pin_a=() pin_b=()
if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin_a=(taskset -c 0) pin_b=(taskset -c 1)
fi
in_a() { ip netns exec "$ns_a" "${pin_a[@]}" "$@"; }
in_b() { ip netns exec "$ns_b" "${pin_b[@]}" "$@"; }

ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "$if_a" netns "$ns_a" type veth peer name "$if_b" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/24" dev "$if_a"
ip -n "$ns_b" addr add "$addr_b/24" dev "$if_b"
ip -n "$ns_a" link set lo up
ip -n "$ns_b" link set lo up
ip -n "$ns_a" link set "$if_a" up
ip -n "$ns_b" link set "$if_b" up

wait_listen() {
	for _ in $(seq 50); do
		[ -n "$(ip netns exec "$ns_b" ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.1
	done
	die "nothing listens on port $1 in $ns_b after 5 s"
}

# Start a server in ns b; its pid in $server until it is waited for.
start_server() {
	in_b timeout $((secs + 60)) "$@" >"$out/server.log" 2>&1 &
	server=$!
}

stop_server() {
	local st=0

	wait "$server" || st=$?
	server=
	[ "$st" -eq 0 ] || { sed 's/^/  server: /' "$out/server.log" >&2; die "$1: the server failed"; }
}

# One engine run: mode, then client options. The client's line in $result.
engine() {
	local mode=$1
	shift
	if [ "$mode" = tcp-pingpong ]; then
		start_server "$bin" -s -a "$addr_b" -p "$port" -m tcp-pingpong
	else
		start_server "$bin" -s -a "$addr_b" -p "$port"
	fi
	wait_listen "$port"
	if ! result=$(in_a timeout $((secs + 60)) "$bin" -c -a "$addr_b" -p "$port" -m "$mode" \
			-t "$secs" "$@" 2>"$out/client.log"); then
		sed 's/^/  client: /' "$out/client.log" >&2
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
		server=
		sed 's/^/  server: /' "$out/server.log" >&2
		die "$mode: the client failed"
	fi
	stop_server "$mode"
}

# One iperf3 run: a name, then client options. A line like the engine's in $result.
iperf() {
	local name=$1
	shift
	start_server iperf3 -s -1 -B "$addr_b" -p "$iperf_port"
	wait_listen "$iperf_port"
	in_a timeout $((secs + 30)) iperf3 -c "$addr_b" -p "$iperf_port" -t "$secs" -J "$@" \
		>"$out/iperf3.json" 2>&1 || { cat "$out/iperf3.json" >&2; die "$name client failed"; }
	stop_server "$name"
	# the receiver's figure: "bits_per_second" inside "sum_received"
	result=$(awk '/"sum_received"/ { f = 1 }
		f && /"bits_per_second"/ { v = $2; gsub(/[^0-9.eE+-]/, "", v); printf "%.3f", v / 1e9; exit }' \
		"$out/iperf3.json")
	[ -n "$result" ] || die "no bits_per_second in iperf3's JSON"
	result="mode=$name seconds=$secs gbps=$result"
}

field() { # key line
	local kv
	for kv in $2; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
	die "no $1= in: $2"
}

record() { # name key
	field "$2" "$result" >>"$out/$1.$2"
}

mtu=$(ip -n "$ns_a" -o link show "$if_a" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
emss=$((mtu - 52))	# IPv4, TCP and its timestamp option: the engine's FPDU size
echo "bench-engine: $ns_a $addr_a <-> $ns_b $addr_b (veth, MTU $mtu), $repeat x $secs s each${pin_a:+,}"
echo "  ${pin_a:+client on CPU 0, server on CPU 1; }iperf3-mss: $emss-byte writes with TCP_NODELAY, one send() per MSS as the engine"
for r in $(seq "$repeat"); do
	iperf iperf3
	echo "[$r/$repeat] $result"
	record iperf3 gbps
	iperf iperf3-mss -N -l "$emss"
	echo "[$r/$repeat] $result"
	record iperf3-mss gbps
	for m in write read send pingpong; do
		engine "$m"
		echo "[$r/$repeat] $result"
		case $m in
		pingpong) record "$m" rtt_us_median; record "$m" rtt_us_p99 ;;
		*) record "$m" gbps ;;
		esac
		record "$m" aligned_pct
	done
	engine tcp-pingpong
	echo "[$r/$repeat] $result"
	record tcp-pingpong rtt_us_median
	record tcp-pingpong rtt_us_p99
done

median() { # file
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
runs() { tr '\n' ' ' <"$1" | sed 's/ $//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

ip3=$(median "$out/iperf3.gbps")
tcp=$(median "$out/tcp-pingpong.rtt_us_median")
echo
echo "Medians of $repeat runs of $secs s (runs in brackets)"
printf '%-34s %12s %6s  %s\n' measurement median ratio "FPDUs aligned"
row() { # label value unit base alignment
	printf '%-34s %12s %6s  %s\n' "$1" "$2 $3" "$(ratio "$2" "$4")" "$5"
}
row "iperf3 TCP, 1 stream" "$ip3" Gbit/s "$ip3" "-"
row "iperf3 $emss-byte writes, NODELAY" "$(median "$out/iperf3-mss.gbps")" Gbit/s "$ip3" "-"
for m in write read send; do
	case $m in
	write) label="engine RDMA Write 1 MiB x8" ;;
	read) label="engine RDMA Read 1 MiB x8" ;;
	send) label="engine Send 64 KiB x8" ;;
	esac
	row "$label" "$(median "$out/$m.gbps")" Gbit/s "$ip3" "$(median "$out/$m.aligned_pct")%"
done
row "engine Send ping-pong 8 B" "$(median "$out/pingpong.rtt_us_median")" "us RTT" "$tcp" \
	"$(median "$out/pingpong.aligned_pct")%"
row "TCP ping-pong 8 B" "$tcp" "us RTT" "$tcp" "-"
echo
echo "Goodput ratios are to iperf3, round trips to TCP's (lower is better); runs:"
for f in iperf3.gbps iperf3-mss.gbps write.gbps read.gbps send.gbps pingpong.rtt_us_median pingpong.rtt_us_p99 \
	tcp-pingpong.rtt_us_median tcp-pingpong.rtt_us_p99; do
	printf '  %-28s [%s]\n' "$f" "$(runs "$out/$f")"
done
echo "FPDUs aligned: FPDUs handed to TCP whole in one send() (tx_fpdus_aligned / tx_fpdus)"
echo "of the side that moved the data (the server for Read)."
