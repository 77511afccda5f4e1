#!/usr/bin/env bash
# iwx against plain TCP over a veth pair between two network namespaces (as root), the
# way applications use it: an iwxd in each namespace, and two programs on libiwx
# (bench_verbs) moving 1 MiB RDMA Writes and Reads with 8 outstanding, 64 KiB Sends,
# and an 8-byte Send ping-pong through them. Beside it, in the same session: the same
# on the engine driven in-process, no daemon (bench_engine: what the daemon costs),
# iperf3 with one stream (its large writes, then MSS-sized writes with TCP_NODELAY, the
# engine's one send() per FPDU) and an 8-byte ping-pong on a TCP socket. Each
# measurement runs RUNS times, the variants alternating; the table shows medians and
# ratios, then where the time went (CPU of each process, iwxd's doorbells and wake-ups),
# and last what registering 1 MiB and 64 MiB of ordinary memory costs (bench_reg).
#
#   scripts/bench.sh                  # 3 runs of 3 s each: about 2 minutes
#   scripts/bench.sh -n 5 -t 5 --no-pin
#
# --no-pin: by default (with two CPUs or more) namespace a (the clients, its iwxd) runs
# on CPU 0 and namespace b (the servers, its iwxd) on CPU 1, the same for every variant.
# Every step is bounded by timeout(1); on any exit the daemons, the namespaces and the
# temporary directory this script made go, by the PIDs and names it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit "${1:-0}"
}

runs=3 secs=3 pin=1
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=${2:-}; shift 2 || usage 2 ;;
	-t) secs=${2:-}; shift 2 || usage 2 ;;
	--no-pin) pin=0; shift ;;
	-h | --help) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done

ns_a=iwxb-$$-a ns_b=iwxb-$$-b
if_a=iwxb$$a if_b=iwxb$$b
addr_a=192.0.2.1 addr_b=192.0.2.2
port_engine=7175 port_verbs=7176 port_tcp=7177 port_iperf=5201
verbs=build/bench/bench_verbs engine=build/bench/bench_engine iwxd=build/iwxd
reg=build/bench/bench_reg
out=	# the temporary directory: sockets, logs, results
made_ns=()	# namespaces this script created
daemons=()	# PIDs of the iwxds it started
server=	# the one benchmark server it runs in the background, while it runs

stop_pid() { # pid: TERM, up to 5 s, then KILL
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	local st=$? pid ns

	trap - EXIT INT TERM
	[ -n "$server" ] && stop_pid "$server"
	for pid in "${daemons[@]}"; do stop_pid "$pid"; done
	for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	[ -n "$out" ] && rm -rf "$out"
	exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, iwxd's STATUS)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "-t takes a positive number of seconds"
for tool in ip ss timeout awk; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
command -v iperf3 >/dev/null ||
	die "iperf3 is missing: apt-get install -y iperf3 (scripts/install-deps.sh installs it)"

make -s "$iwxd" "$verbs" "$engine" "$reg"
out=$(mktemp -d /tmp/iwx-bench-XXXXXX)

pin_a=() pin_b=()
if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin_a=(taskset -c 0) pin_b=(taskset -c 1)
fi
in_a() { ip netns exec "$ns_a" "${pin_a[@]}" "$@"; }
in_b() { ip netns exec "$ns_b" "${pin_b[@]}" "$@"; }

ip netns add "$ns_a"
made_ns+=("$ns_a")
ip netns add "$ns_b"
made_ns+=("$ns_b")
ip link add "$if_a" netns "$ns_a" type veth peer name "$if_b" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/24" dev "$if_a"
ip -n "$ns_b" addr add "$addr_b/24" dev "$if_b"
ip -n "$ns_a" link set lo up
ip -n "$ns_b" link set lo up
ip -n "$ns_a" link set "$if_a" up
ip -n "$ns_b" link set "$if_b" up

# ------------------------------------------------------------- the daemons

sock_a=$out/iwxd-a.sock sock_b=$out/iwxd-b.sock
# not through in_a/in_b, whose subshell $! would name: ip netns exec and taskset exec,
# so the PID started is iwxd's own
ip netns exec "$ns_a" "${pin_a[@]}" "$iwxd" -s "$sock_a" -v --settle-ms 0 >"$out/iwxd-a.log" 2>&1 &
pid_a=$!
daemons+=("$pid_a")
ip netns exec "$ns_b" "${pin_b[@]}" "$iwxd" -s "$sock_b" -v --settle-ms 0 >"$out/iwxd-b.log" 2>&1 &
pid_b=$!
daemons+=("$pid_b")

daemon_logs() { for x in a b; do sed "s/^/  iwxd-$x: /" "$out/iwxd-$x.log" | tail -20 >&2; done; }

wait_daemon() { # namespace socket pid
	for _ in $(seq 50); do
		kill -0 "$3" 2>/dev/null || { daemon_logs; die "iwxd in $1 exited"; }
		ip netns exec "$1" ss -Hxl | grep -qF "$2" && return 0
		sleep 0.1
	done
	daemon_logs
	die "iwxd in $1 does not serve $2 after 5 s"
}
wait_daemon "$ns_a" "$sock_a" "$pid_a"
wait_daemon "$ns_b" "$sock_b" "$pid_b"
if [ "$(cat /proc/"$pid_a"/comm)" != iwxd ] || [ "$(cat /proc/"$pid_b"/comm)" != iwxd ]; then
	die "the daemons' PIDs are not iwxd's"
fi

# ------------------------------------------------------------- one step

wait_listen() {
	for _ in $(seq 50); do
		[ -n "$(ip netns exec "$ns_b" ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.1
	done
	die "nothing listens on port $1 in $ns_b after 5 s"
}

# Start a server in ns b; its pid (timeout's, which passes signals on) in $server until
# it is waited for.
start_server() {
	ip netns exec "$ns_b" "${pin_b[@]}" timeout $((secs + 60)) "$@" >"$out/server.log" 2>&1 &
	server=$!
}

stop_server() {
	local st=0

	wait "$server" || st=$?
	server=
	[ "$st" -eq 0 ] || { sed 's/^/  server: /' "$out/server.log" >&2; die "$1: the server failed"; }
}

ticks() { # pid: CPU time used so far, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

now_ns() { date +%s%N; }

# One run of a benchmark program: program, port, mode. The client's line in $result,
# with the server's CPU and, through iwxd, the daemons' (percent of one CPU over the
# run) appended.
run() {
	local bin=$1 port=$2 mode=$3 t0 t1 a0 a1 b0 b1 scpu
	local -a sopt=() copt=()

	if [ "$bin" = "$verbs" ]; then
		sopt=(-D "$sock_b")
		copt=(-D "$sock_a")
	fi
	if [ "$mode" = tcp-pingpong ]; then
		sopt+=(-m tcp-pingpong)
	fi
	start_server "$bin" -s -a "$addr_b" -p "$port" "${sopt[@]}"
	wait_listen "$port"
	a0=$(ticks "$pid_a") b0=$(ticks "$pid_b") t0=$(now_ns)
	if ! result=$(in_a timeout $((secs + 60)) "$bin" -c -a "$addr_b" -p "$port" -m "$mode" \
			-t "$secs" "${copt[@]}" 2>"$out/client.log"); then
		sed 's/^/  client: /' "$out/client.log" >&2
		stop_pid "$server"
		server=
		sed 's/^/  server: /' "$out/server.log" >&2
		daemon_logs
		die "$bin $mode: the client failed"
	fi
	stop_server "$bin $mode"
	t1=$(now_ns) a1=$(ticks "$pid_a") b1=$(ticks "$pid_b")
	scpu=$(sed -n 's/.*server_cpu_pct=\([0-9.]*\).*/\1/p' "$out/server.log")
	result="$result server_cpu_pct=${scpu:-na}"
	if [ "$bin" = "$verbs" ] && [ "$mode" != tcp-pingpong ]; then
		result="$result $(awk -v a="$((a1 - a0))" -v b="$((b1 - b0))" -v t="$((t1 - t0))" \
			-v hz="$(getconf CLK_TCK)" 'BEGIN {
			printf "iwxd_a_cpu_pct=%.0f iwxd_b_cpu_pct=%.0f", 100 * a / hz / (t / 1e9),
				100 * b / hz / (t / 1e9) }')"
	fi
}

# One iperf3 run: a name, then client options. A line like the others in $result.
iperf() {
	local name=$1
	shift
	start_server iperf3 -s -1 -B "$addr_b" -p "$port_iperf"
	wait_listen "$port_iperf"
	in_a timeout $((secs + 30)) iperf3 -c "$addr_b" -p "$port_iperf" -t "$secs" -J "$@" \
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

record() { # name key...
	local name=$1 key
	shift
	for key in "$@"; do field "$key" "$result" >>"$out/$name.$key"; done
}

# Per request: key divided by the messages (or round trips) of the run.
record_per() { # name key count-key
	awk -v a="$(field "$2" "$result")" -v n="$(field "$3" "$result")" \
		'BEGIN { printf "%.2f\n", (n > 0 ? a / n : 0) }' >>"$out/$1.$2_per"
}

# ------------------------------------------------------------- the runs

mtu=$(ip -n "$ns_a" -o link show "$if_a" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
emss=$((mtu - 52))	# IPv4, TCP and its timestamp option: the engine's FPDU size
echo "bench: $ns_a $addr_a <-> $ns_b $addr_b (veth, MTU $mtu), $runs x $secs s each"
echo "  ${pin_a:+namespace a (clients, iwxd a) on CPU 0, b (servers, iwxd b) on CPU 1; }iwxd" \
	"--settle-ms 0"
for r in $(seq "$runs"); do
	iperf iperf3
	echo "[$r/$runs] $result"
	record iperf3 gbps
	iperf iperf3-mss -N -l "$emss"
	echo "[$r/$runs] $result"
	record iperf3-mss gbps
	for m in write read send pingpong; do
		for b in verbs engine; do
			if [ "$b" = verbs ]; then
				run "$verbs" "$port_verbs" "$m"
			else
				run "$engine" "$port_engine" "$m"
			fi
			echo "[$r/$runs] $b $result"
			case $m in
			pingpong) record "$b-$m" rtt_us_median rtt_us_p99; n=n ;;
			*) record "$b-$m" gbps; n=msgs ;;
			esac
			record "$b-$m" aligned_pct client_cpu_pct server_cpu_pct
			if [ "$b" = verbs ]; then
				record "$b-$m" iwxd_a_cpu_pct iwxd_b_cpu_pct
				for k in doorbells_c wakeups_c doorbells_s wakeups_s; do
					record_per "$b-$m" "$k" "$n"
				done
			fi
		done
	done
	run "$verbs" "$port_tcp" tcp-pingpong
	echo "[$r/$runs] $result"
	record tcp-pingpong rtt_us_median rtt_us_p99
done

# ------------------------------------------------------------- the table

median() { # file [decimals]
	[ -s "$1" ] || { echo na; return; }
	grep -v '^na$' "$1" | sort -g | awk -v d="${2:-2}" '{ v[NR] = $1 } END {
		if (!NR) { print "na"; exit }
		printf "%.*f", d, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
runs_of() { tr '\n' ' ' <"$1" | sed 's/ $//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
pct() { if [ "$1" = na ]; then echo "-"; else echo "$1%"; fi; }

row() { # cells...: one line of a Markdown table
	local c line="|"

	for c in "$@"; do line="$line $c |"; done
	echo "$line"
}
aligned() { # measurement: the share of FPDUs handed to TCP whole, through iwxd / engine
	echo "$(pct "$(median "$out/verbs-$1.aligned_pct" 1)") /" \
		"$(pct "$(median "$out/engine-$1.aligned_pct" 1)")"
}

ip3=$(median "$out/iperf3.gbps")
tcp=$(median "$out/tcp-pingpong.rtt_us_median")
echo
echo "Medians of $runs runs of $secs s. Goodput ratios are to iperf3's one stream, round"
echo "trips to TCP's (lower is better). FPDUs whole: tx_fpdus_aligned / tx_fpdus of both"
echo "sides over the measured time (through iwxd: the daemons' STATUS before and after)."
echo
row measurement "through iwxd" ratio "engine, no daemon" ratio "FPDUs whole, iwxd / engine"
row --- --- --- --- --- ---
row "iperf3, one stream" "$ip3 Gbit/s" 1.00 "" "" ""
v=$(median "$out/iperf3-mss.gbps")
row "iperf3, $emss-byte writes, TCP_NODELAY" "$v Gbit/s" "$(ratio "$v" "$ip3")" "" "" ""
for m in write read send; do
	case $m in
	write) label="RDMA Write, 1 MiB, 8 outstanding" ;;
	read) label="RDMA Read, 1 MiB, 8 outstanding" ;;
	send) label="Send, 64 KiB, 8 outstanding" ;;
	esac
	v=$(median "$out/verbs-$m.gbps") e=$(median "$out/engine-$m.gbps")
	row "$label" "$v Gbit/s" "$(ratio "$v" "$ip3")" "$e Gbit/s" "$(ratio "$e" "$ip3")" \
		"$(aligned "$m")"
done
v=$(median "$out/verbs-pingpong.rtt_us_median") e=$(median "$out/engine-pingpong.rtt_us_median")
row "Send ping-pong, 8 bytes" "$v µs round trip" "$(ratio "$v" "$tcp")" "$e µs" \
	"$(ratio "$e" "$tcp")" "$(aligned pingpong)"
row "TCP ping-pong, 8 bytes" "$tcp µs round trip" 1.00 "" "" ""

echo
echo "Where the time went (medians): CPU in percent of one CPU over the run; doorbells"
echo "(the application woke its iwxd) and wake-ups (iwxd had gone to sleep in epoll_wait"
echo "and an event woke it) per request or round trip, for the client's daemon (a) and the"
echo "server's (b)."
echo
row "through iwxd" client server "iwxd a" "iwxd b" "doorbells a / b" "wake-ups a / b" \
	"engine: client / server"
row --- --- --- --- --- --- --- ---
for m in write read send pingpong; do
	f=$out/verbs-$m g=$out/engine-$m
	row "$m" "$(median "$f.client_cpu_pct" 0)%" "$(median "$f.server_cpu_pct" 0)%" \
		"$(median "$f.iwxd_a_cpu_pct" 0)%" "$(median "$f.iwxd_b_cpu_pct" 0)%" \
		"$(median "$f.doorbells_c_per") / $(median "$f.doorbells_s_per")" \
		"$(median "$f.wakeups_c_per") / $(median "$f.wakeups_s_per")" \
		"$(median "$g.client_cpu_pct" 0)% / $(median "$g.server_cpu_pct" 0)%"
done

echo
echo "Runs:"
for f in iperf3.gbps iperf3-mss.gbps verbs-write.gbps engine-write.gbps verbs-read.gbps \
	engine-read.gbps verbs-send.gbps engine-send.gbps verbs-pingpong.rtt_us_median \
	verbs-pingpong.rtt_us_p99 engine-pingpong.rtt_us_median engine-pingpong.rtt_us_p99 \
	tcp-pingpong.rtt_us_median tcp-pingpong.rtt_us_p99; do
	printf '  %-32s [%s]\n' "$f" "$(runs_of "$out/$f")"
done

echo
echo "Registering ordinary memory (malloc'd, touched): medians of 21 iwx_reg_mr and"
echo "iwx_dereg_mr through iwxd a; its pages move into memory iwxd shares, and back."
echo
in_a timeout 120 env IWX_SOCKET="$sock_a" "$reg" 21 || die "bench_reg failed"
