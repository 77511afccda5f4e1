#!/usr/bin/env bash
# iwx against plain TCP over a veth pair between two network namespaces (as root), the
# way applications use it: an iwxd in each namespace, and two programs on libiwx
# (bench_verbs) moving 1 MiB RDMA Writes, Writes with Immediate (RFC 7306) and Reads with
# 8 outstanding, 64 KiB Sends, and an 8-byte Send ping-pong through them. Beside it, in the same session: the same
# on the engine driven in-process, no daemon (bench_engine: what the daemon costs),
# iperf3 with one stream (its large writes, then MSS-sized writes with TCP_NODELAY, the
# engine's one send() per FPDU) and an 8-byte ping-pong on a TCP socket. Each
# measurement runs RUNS times, the variants alternating; the table shows medians and
# ratios (each ping-pong's CPU per round trip too: client, server and, through iwxd, both
# daemons), then where the time went (CPU of each process, iwxd's doorbells and wake-ups).
# Then the cost per byte against TCP, from the same runs of iperf3's one stream and the
# 1 MiB Writes: CPU ms per GiB of the process that moves the bytes on each side (iperf3's
# own figures from its JSON, end.cpu_utilization_percent's host_total and remote_total
# times end.sum_received.seconds; iwxd's run time in /proc/PID/schedstat), of it with its
# application (the benchmark programs' getrusage), of each side's CPU, busy (the CPU
# meter: whatever ran there), and of the receiving namespace without the machine's other
# load (its processes, and the softirq on its CPU not charged to them); all as charged,
# with the softirq that ran while a process was current counted as its own. Then messages
# per second at 64 B, 4 KiB and 64 KiB: Sends through the daemons, 8 outstanding, against
# messages on a TCP socket under the same flow control (bench_verbs -m tcp-send: a credit
# from the receiving program each 4 messages, the sender within 16 of the last), the two
# alternating. And what registering 1 MiB and 64 MiB of ordinary memory costs (bench_reg).
# Last, iwxd's fast path (iwx attach): 1 MiB RDMA Writes (received in b) and Reads
# (received in a) through the daemons with it off, at TC ingress, at XDP, and off with
# the veth ends as XDP leaves them (a pass-through XDP program, xdp_pass.bpf.o: no GRO, no
# TSO; XDP's own baseline), the four alternating: goodput, the receiving iwxd's own CPU
# (less the softirq it was charged for, which softirq_time measures) and the receiving
# namespace's CPU per GiB received, the share of the payload the BPF programs placed, and
# the receiving iwxd's system calls per MiB (perf stat, when it works here).
#
#   scripts/bench.sh                  # 3 runs of 3 s each: about 9 minutes
#   scripts/bench.sh -n 5 -t 5 --no-pin
#   scripts/bench.sh --fastpath-only --plot
#   scripts/bench.sh --guard          # the quick check: about a minute, exit 1 on a regression
#   scripts/bench.sh --pingpong-only  # the three 8-byte ping-pongs: about 30 s
#
# --no-pin: by default (with two CPUs or more) namespace a (the clients, its iwxd) runs
# on CPU 0 and namespace b (the servers, its iwxd) on CPU 1, the same for every variant,
# and each namespace's veth end steers what it receives to that namespace's CPU (RPS), as
# a second host's NIC would: else a veth receives on the sending CPU, and the receiver's
# TCP and TC ingress (the fast path's copy) run there. --no-rps: pinned, not steered.
# --rfs: each veth end steers what it receives to the CPU where the flow's reader last ran
# (RFS: every CPU in rps_cpus, rps_flow_cnt, and net.core.rps_sock_flow_entries, the
# machine's, put back on exit), in place of RPS; with --no-pin, the receive no longer runs
# on the sending CPU (the other scripts that take --no-pin take it too).
# --fastpath-only: only the fast path's measurements. --plot: also RDMA Writes of 4 KiB
# to 8 MiB with the fast path off, at TC and at XDP (about 9 minutes more), and a
# gnuplot PNG of their goodput and CPU per GiB against the size (docs/bench-fastpath.png;
# --plot-file FILE for another). At XDP the sending veth ends' tx checksum offload is off
# (XDP on veth needs it, see 'iwx attach'), and with it TSO; it is back on for the rest.
# --no-crc: every iWARP connection without the MPA CRC (what verifying it costs; the fast
# path follows none of them, and places nothing).
# --markers: every iWARP connection with MPA markers both ways (what they cost; with
# them the fast path needs no history of the stream, and places out of order).
# --guard: only a quick check for regressions, 3 runs of 3 s unless -n and -t say
# otherwise (BENCHMARKS.md, "The guard"): 1 MiB RDMA Writes through the daemons against
# iperf3's one stream, and the same received in b with the fast path off and at TC, each
# pair alternating. It prints the figures and four ratios, and exits 1 when goodput at TC
# is below 0.9 of off, the receiver's CPU per GiB at TC / off above BENCHMARKS.md's
# "Guard reference: receiver's CPU, TC / off" line plus 0.15 (at least 1.1; 1.1 without it),
# the BPF programs' own run time per GiB at TC (kernel.bpf_stats_enabled, on for the fast
# path's runs) above 1.5 times its "Guard reference: BPF run time per GiB, TC" line, or
# RDMA Write / iperf3 more than 25% below its "Guard reference: RDMA Write / iperf3" line
# (without one of those two lines, its check is skipped). Not with --fastpath-only or --plot.
# --pingpong-only: only the 8-byte ping-pongs (through iwxd, the engine, TCP), alternating,
# and their rows: round trips and CPU per round trip, and where the time went; no iperf3,
# goodput, cost per byte, messages per second, registration or fast path. Not with
# --guard, --fastpath-only or --plot.
# Every step is bounded by timeout(1); on any exit the daemons, the namespaces and the
# temporary directory this script made go, by the PIDs and names it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh

runs=3 secs=3 pin=1 rps=1 fast_only=0 guard=0 pp_only=0 plot='' mpa_opt=()
while [ $# -gt 0 ]; do
	case $1 in
	--fastpath-only) fast_only=1; shift ;;
	--guard) guard=1; shift ;;
	--pingpong-only) pp_only=1; shift ;;
	--no-crc) mpa_opt+=(-N); shift ;;
	--markers) mpa_opt+=(-M); shift ;;
	--plot) plot=${plot:-docs/bench-fastpath.png}; shift ;;
	--plot-file) plot=${2:-}; shift 2 || usage 2 ;;
	*) common_arg "$@"; shift "$took" ;;
	esac
done

net_names iwxb
port_engine=7175 port_verbs=7176 port_tcp=7177 port_iperf=5201
verbs=build/bench/bench_verbs engine=build/bench/bench_engine iwxd=build/iwxd
reg=build/bench/bench_reg iwx=build/iwx meter=build/bench/softirq_time
xdp_pass_obj=build/bpf/xdp_pass.bpf.o
out=	# the temporary directory: sockets, logs, results
server_pid=	# the server program under timeout, for the cost table (cost_begin)
made_ns=()	# namespaces this script created
daemons=()	# PIDs of the iwxds it started
server=	# the one benchmark server it runs in the background, while it runs
counter=	# perf stat counting a daemon's system calls, while it runs
metering=	# the CPU meter (softirq_time), while it runs
fp_mode=off	# where the daemons' fast path is attached: off, tc or xdp; xdp-off: neither,
		# the veth ends in XDP mode (xdp_pass.bpf.o) for XDP's baseline
probe=	# a or b: run() measures that side as the receiver (probe_begin, probe_end)
bpf_stats= bpf_stats_was=	# na: no BPF run times; kernel.bpf_stats_enabled before bpf_stats_on
cost=	# 1: run() and iperf() also measure what the run cost (meter_start, cost_end)

cleanup_extra() { # lib-bench.sh's cleanup: after the server, before the namespaces
	[ -n "$counter" ] && stop_pid "$counter"
	[ -z "$bpf_stats_was" ] || sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_was" 2>/dev/null
	[ -n "$metering" ] && stop_pid "$metering"
	# an XDP program outlives its iwxd (the interfaces go with the namespaces anyway)
	if [ "$fp_mode" = tc ] || [ "$fp_mode" = xdp ]; then
		timeout 5 "$iwx" detach dev "$if_a" -s "$sock_a" >/dev/null 2>&1
		timeout 5 "$iwx" detach dev "$if_b" -s "$sock_b" >/dev/null 2>&1
	fi
	daemons_down
}

die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, iwxd's STATUS)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "-t takes a positive number of seconds"
if [ "$guard" = 1 ] && { [ "$fast_only" = 1 ] || [ -n "$plot" ]; }; then
	die "--guard runs alone: not with --fastpath-only or --plot"
fi
if [ "$pp_only" = 1 ] && { [ "$guard" = 1 ] || [ "$fast_only" = 1 ] || [ -n "$plot" ]; }; then
	die "--pingpong-only runs alone: not with --guard, --fastpath-only or --plot"
fi
for tool in ip ss timeout awk ethtool; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
[ "$pp_only" = 1 ] || command -v iperf3 >/dev/null ||
	die "iperf3 is missing: apt-get install -y iperf3 (scripts/install-deps.sh installs it)"
[ -z "$plot" ] || command -v gnuplot >/dev/null ||
	die "--plot needs gnuplot: apt-get install -y gnuplot-nox (scripts/install-deps.sh)"
[ "$(nproc)" -ge 2 ] && [ "$pin" = 1 ] && command -v taskset >/dev/null ||
	echo "bench: not pinned: the receiving namespace's CPU time cannot be told apart" >&2
# iwxd's system calls, counted by the kernel's tracepoint (no strace: it would slow
# iwxd down by more than it measures)
perf_ok=0
perf stat -x, -e raw_syscalls:sys_enter -- true >/dev/null 2>&1 && perf_ok=1

make -s "$iwxd" "$verbs" "$engine" "$reg" "$iwx" "$meter" "$xdp_pass_obj"
out=$(mktemp -d /tmp/iwx-bench-XXXXXX)

net_up

# ------------------------------------------------------------- the daemons

daemons_up --settle-ms 0

# ------------------------------------------------------------- one step

# ------------------------------------------------------------- the fast path

# Each veth end's tx checksum offload as found: XDP runs without it, the rest with it.
tx_of() { ip netns exec "$1" ethtool -k "$2" | awk '/^tx-checksumming:/ { print $2 }'; }
tx_a=$(tx_of "$ns_a" "$if_a") tx_b=$(tx_of "$ns_b" "$if_b")

fp_iwx() { # iwx's arguments
	timeout 10 "$iwx" "$@" >>"$out/fastpath.log" 2>&1 ||
		{ tail -5 "$out/fastpath.log" >&2; daemon_logs; die "iwx $*: failed"; }
}

# A pass-through XDP program on both veth ends, or none.
xdp_pass() { # on|off
	local ns ifc

	for ns in "$ns_a:$if_a" "$ns_b:$if_b"; do
		ifc=${ns#*:} ns=${ns%%:*}
		if [ "$1" = on ]; then
			ip -n "$ns" link set dev "$ifc" xdpdrv obj "$xdp_pass_obj" sec xdp
		else
			ip -n "$ns" link set dev "$ifc" xdpdrv off
		fi || die "cannot turn $ifc's pass-through XDP program $1"
	done
}

# Both daemons' fast path off, or attached at tc or xdp, each at its own veth end; or
# off with the veth ends as at xdp (their tx checksum offload off, in XDP mode).
fp_set() { # off|tc|xdp|xdp-off
	[ "$1" = "$fp_mode" ] && return 0
	if [ "$fp_mode" = tc ] || [ "$fp_mode" = xdp ]; then
		fp_iwx detach dev "$if_a" -s "$sock_a"
		fp_iwx detach dev "$if_b" -s "$sock_b"
	fi
	[ "$fp_mode" = xdp-off ] && xdp_pass off
	if [ "$fp_mode" = xdp ] || [ "$fp_mode" = xdp-off ]; then
		ip netns exec "$ns_a" ethtool -K "$if_a" tx "$tx_a" >>"$out/fastpath.log"
		ip netns exec "$ns_b" ethtool -K "$if_b" tx "$tx_b" >>"$out/fastpath.log"
	fi
	fp_mode=off
	[ "$1" = off ] && return 0
	if [ "$1" = xdp ] || [ "$1" = xdp-off ]; then
		# veth hands XDP the sender's packets with their TCP checksum not computed
		ip netns exec "$ns_a" ethtool -K "$if_a" tx off >>"$out/fastpath.log"
		ip netns exec "$ns_b" ethtool -K "$if_b" tx off >>"$out/fastpath.log"
	fi
	fp_mode=$1	# from here the cleanup detaches
	if [ "$1" = xdp-off ]; then
		xdp_pass on
		return 0
	fi
	fp_iwx attach dev "$if_a" -m "$1" -s "$sock_a"
	fp_iwx attach dev "$if_b" -m "$1" -s "$sock_b"
}

run_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; } # pid: its run time so far, ns

# The run time (ns) of the fast path's programs as the kernel counts it while
# kernel.bpf_stats_enabled is 1 (bpf_stats_on): what they cost per byte, without the noise
# of the rest of the machine. Every iwx_tc and xdp_dispatcher (libxdp's, which runs
# iwx_xdp) loaded here: the two daemons' (the sender's sees ACKs alone), and any other
# running on the machine, which a benchmark should not share it with. Debian 12's bpftool
# names neither a program's process nor TC's tcx links in a namespace.
bpf_run_ns() {
	bpftool prog show 2>/dev/null | awk '/^[0-9]+: / {
		name = ""; rt = 0
		for (i = 1; i < NF; i++) {
			if ($i == "name") name = $(i + 1)
			if ($i == "run_time_ns") rt = $(i + 1)
		}
		if (name == "iwx_tc" || name == "xdp_dispatcher") s += rt }
		END { printf "%.0f\n", s }'
}

# kernel.bpf_stats_enabled on for the fast path's measurements, as it was again at the end
# (cleanup_extra); bpf_stats=na when the kernel will not.
bpf_stats_on() {
	[ -z "$bpf_stats_was" ] || return 0
	bpf_stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) &&
		sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null || { bpf_stats=na bpf_stats_was=; }
}

# What probe_begin and probe_end read: a's and b's run time (ns), the receiver's fast
# path counters, the time (ns), the fast path's programs' run time (ns).
snapshot() {
	echo "$(run_ns "$pid_a") $(run_ns "$pid_b") $(fp_placed "$rx_sock") $(now_ns)" \
		"$(bpf_run_ns)"
}

# The CPU meter (build/bench/softirq_time), started: from now to meter_stop, each CPU's
# softirq and idle time, and the softirq that ran while each process was current. This
# kernel has no IRQ time accounting: a daemon's run time includes the softirq that ran
# while it was current (with RPS, the receiving CPU's TCP and the programs' copy land on
# the receiving iwxd's bill), and /proc/stat counts softirq run from the idle loop while
# the tick is stopped as idle (a receiving CPU that sleeps between packets looks idler
# than it is). The meter's figures are exact to the nanosecond.
meter_start() {
	rm -f "$out/meter.txt"	# no "ready" of the last one's
	"$meter" $((secs + 120)) >"$out/meter.txt" 2>>"$out/meter.log" &
	metering=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$out/meter.txt" 2>/dev/null && return 0
		kill -0 "$metering" 2>/dev/null || break
		sleep 0.05
	done
	cat "$out/meter.log" >&2
	die "the CPU meter did not start"
}

# Its figures in $meter_ns, in ns: the time it measured; the receiving CPU ($1, 0 or 1)'s
# busy time (not idle, or idle but in softirq) and softirq, the other CPU's the same, and the
# softirq while the processes $2 (PIDs, blank-separated) were current; "na" if it said
# nothing. Not in a subshell: it waits for the meter, its child, to have written them.
meter_stop() {
	local st=0

	kill -TERM "$metering" 2>/dev/null || true
	wait "$metering" 2>/dev/null || st=$?
	metering=
	if ! grep -q '^wall' "$out/meter.txt"; then
		echo "bench: the CPU meter said nothing (exit $st): its figures are 'na' for this run" >&2
		sed 's/^/  meter: /' "$out/meter.log" >&2
		meter_ns=na
		return
	fi
	meter_ns=$(awk -v c="$1" -v p="$2" '$1 == "wall" { wall = $2 }
		$1 == "cpu" && $2 == c { rb = -$5 + $4; rs = $3 }
		$1 == "cpu" && $2 == 1 - c { tb = -$5 + $4; ts = $3 }
		$1 == "tgid" && index(" " p " ", " " $2 " ") { pid += $3 }
		END { printf "%.0f %.0f %.0f %.0f %.0f %.0f\n", wall, wall + rb, rs, wall + tb, ts, pid }' \
		"$out/meter.txt")
}

probe_begin() {
	if [ "$probe" = a ]; then
		rx_pid=$pid_a rx_sock=$sock_a rx_cpu=0
	else
		rx_pid=$pid_b rx_sock=$sock_b rx_cpu=1
	fi
	if [ "$perf_ok" = 1 ]; then
		# every system call, and recv's among them (recvfrom: the engine's recv())
		perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_recvfrom \
			-p "$rx_pid" -o "$out/perf.csv" 2>>"$out/perf.log" &
		counter=$!
		sleep 0.3	# attached before anything is measured
	fi
	meter_start
	snap0=$(snapshot)
}

# Per GiB the receiver took (the client's bytes: every message of the run, Writes or
# Reads): CPU in ms, system calls per MiB, the share placed by BPF.
probe_end() {
	local snap1 sys=na recv=na bytes meter_ns

	snap1=$(snapshot)
	meter_stop "$rx_cpu" "$rx_pid"
	if [ -n "$counter" ]; then
		kill -INT "$counter" 2>/dev/null || true
		wait "$counter" 2>/dev/null || true
		counter=
		sys=$(awk -F, '$3 == "raw_syscalls:sys_enter" && $1 ~ /^[0-9]+$/ { print $1 }' \
			"$out/perf.csv")
		recv=$(awk -F, '$3 == "syscalls:sys_enter_recvfrom" && $1 ~ /^[0-9]+$/ { print $1 }' \
			"$out/perf.csv")
	fi
	bytes=$(field bytes "$result")
	result="$result $(awk -v s0="$snap0" -v s1="$snap1" -v bytes="$bytes" -v rc="$rx_cpu" \
		-v m="$meter_ns" -v sys="${sys:-na}" -v recv="${recv:-na}" -v bpf="$bpf_stats" 'BEGIN {
		split(s0, a); split(s1, b); split(m, q)
		for (i in a) d[i] = b[i] - a[i]
		gib = bytes / 2^30; mib = bytes / 2^20
		if (gib <= 0) gib = mib = 1e-9
		ms = 1 / 1e6 / gib
		rx = d[1 + rc]	# the receiving iwxd: a (rc 0) or b
		printf "rx_iwxd_ms_gib=%.0f tx_iwxd_ms_gib=%.0f", rx * ms, d[2 - rc] * ms
		split("rx_iwxd_own rx_iwxd_softirq rx_cpu rx_softirq tx_cpu cpus other softirq", mk)
		# the meter ran a little longer than the snapshots: its figures scaled down
		k = (q[1] > 0 ? d[6] / q[1] : 0) * ms
		# its own: its run time less the softirq that ran while it was current
		v[1] = rx * ms - q[6] * k; v[2] = q[6] * k
		v[3] = q[2] * k; v[4] = q[3] * k; v[5] = q[4] * k
		v[6] = (q[2] + q[4]) * k; v[7] = v[6] - (d[1] + d[2]) * ms; v[8] = (q[3] + q[5]) * k
		for (i = 1; i <= 8; i++)
			printf (m == "na" ? " %s_ms_gib=na" : " %s_ms_gib=%.0f"), mk[i], v[i]
		printf " placed_pct=%.1f placed_fpdus=%.0f skipped_fpdus=%.0f", \
			100 * d[3] / bytes, d[4], d[5]
		printf " sys_per_mib=%s recv_per_mib=%s", \
			sys == "na" ? "na" : sprintf("%.1f", sys / mib), \
			recv == "na" ? "na" : sprintf("%.1f", recv / mib)
		printf (bpf == "na" ? " bpf_ms_gib=na" : " bpf_ms_gib=%.0f"), d[7] * ms }')"
}

# One run of a benchmark program: program, port, mode, and optionally the size of each
# message. The client's line in $result, with the server's CPU and, through iwxd, the
# daemons' (percent of one CPU over the run) appended; and what probe_end adds when
# $probe names the receiving side.
run() {
	local bin=$1 port=$2 mode=$3 size=${4:-} t0 t1 a0 a1 b0 b1 k v
	local -a sopt=() copt=()

	if [ "$bin" = "$verbs" ]; then
		sopt=(-D "$sock_b")
		copt=(-D "$sock_a")
	fi
	case $mode in
	tcp-*) sopt+=(-m "$mode") ;;
	*) sopt+=("${mpa_opt[@]}"); copt+=("${mpa_opt[@]}") ;;
	esac
	if [ -n "$size" ]; then
		copt+=(-S "$size")
		# the server's arena: its 8 buffers and its control slots (default 64 MiB)
		if [ "$bin" = "$verbs" ] && [ $((size * 8 + (16 << 20))) -gt $((64 << 20)) ]; then
			sopt+=(-A $((size * 8 + (16 << 20))))
		fi
	fi
	start_server "$bin" -s -a "$addr_b" -p "$port" "${sopt[@]}"
	wait_listen "$port"
	[ -z "$probe" ] || probe_begin
	[ -z "$cost" ] || cost_begin
	a0=$(run_ns "$pid_a") b0=$(run_ns "$pid_b") t0=$(now_ns)
	if ! result=$(in_a timeout $((secs + 60)) "$bin" -c -a "$addr_b" -p "$port" -m "$mode" \
			-t "$secs" "${copt[@]}" 2>"$out/client.log"); then
		client_failed "$bin $mode"
	fi
	stop_server "$bin $mode"
	t1=$(now_ns) a1=$(run_ns "$pid_a") b1=$(run_ns "$pid_b")
	for k in server_cpu_pct server_cpu_ms; do
		v=$(sed -n "s/.*$k=\([0-9.]*\).*/\1/p" "$out/server.log")
		result="$result $k=${v:-na}"
	done
	if [ "$bin" = "$verbs" ] && [[ $mode != tcp-* ]]; then
		# each daemon's run time over the run, connection set-up and close included
		result="$result $(awk -v a="$((a1 - a0))" -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN {
			printf "iwxd_a_cpu_pct=%.0f iwxd_b_cpu_pct=%.0f iwxd_a_cpu_ms=%.1f iwxd_b_cpu_ms=%.1f",
				100 * a / t, 100 * b / t, a / 1e6, b / 1e6 }')"
	fi
	if [[ $mode == *pingpong ]]; then result="$result $(cpu_per_rt "$result")"; fi
	[ -z "$probe" ] || probe_end
	[ -z "$cost" ] || cost_end
}

# A ping-pong's CPU per round trip, in µs: its processes' CPU over the run (the client's
# and the server's, and through iwxd both daemons', set-up and close included) over its
# round trips. In ms where the line has them (the daemons' from /proc/PID/schedstat),
# else percent of one CPU times the client's seconds; na when one is missing.
cpu_per_rt() { # result line
	awk -v line="$1" 'BEGIN {
		n = split(line, kv, " ")
		for (i = 1; i <= n; i++) {
			k = x = kv[i]; sub(/=.*/, "", k); sub(/^[^=]*=/, "", x); v[k] = x
		}
		split("client server iwxd_a iwxd_b", who)
		for (i = 1; i <= 4; i++) {
			ms = who[i] "_cpu_ms"; pct = who[i] "_cpu_pct"
			if (ms in v && v[ms] != "na") cpu += v[ms]
			else if (pct in v && v[pct] != "na") cpu += v[pct] / 100 * v["seconds"] * 1e3
			else if (i <= 2 || ms in v || pct in v) { print "cpu_us_rt=na"; exit }
		}
		printf "cpu_us_rt=%.1f", (v["n"] > 0 ? cpu * 1e3 / v["n"] : 0) }'
}

# One iperf3 run: a name, then client options. A line like the others in $result.
iperf() {
	local name=$1
	shift
	start_server iperf3 -s -1 -B "$addr_b" -p "$port_iperf"
	wait_listen "$port_iperf"
	[ -z "$cost" ] || cost_begin
	in_a timeout $((secs + 30)) iperf3 -c "$addr_b" -p "$port_iperf" -t "$secs" -J "$@" \
		>"$out/iperf3.json" 2>&1 || { cat "$out/iperf3.json" >&2; die "$name client failed"; }
	stop_server "$name"
	result=$(iperf3_figures "$out/iperf3.json")
	[ -n "$result" ] || die "no goodput or CPU in iperf3's JSON"
	result="mode=$name $result"
	[ -z "$cost" ] || cost_end
}

# Before a run whose cost cost_end takes, its server listening: the server program's PID
# (timeout's child), and the CPU meter started.
cost_begin() {
	server_pid=$(pgrep -P "$server") || die "no server program under timeout ($server)"
	meter_start
}

# What the run in $result cost, appended to it in CPU ms per GiB of its client's bytes:
# on each side the process that moves the bytes (iwxd; iperf3 itself, whose kernel moves
# them in its system calls), then with its application (iwxd with the benchmark program;
# iperf3 alone), each as charged (the softirq that ran while it was current included);
# each namespace's CPU, busy (the meter's: whatever ran there, softirq from idle included;
# pinned, CPU 0 sends and CPU 1 receives); and the receiving namespace's own: its
# processes and the softirq on its CPU that was not charged to them (from idle, or charged
# to another process, this machine's other load), which leaves that other load out.
cost_end() {
	local meter_ns rx_pids=$server_pid

	[[ $result != *iwxd_b_cpu_ms=* ]] || rx_pids="$pid_b $server_pid"
	meter_stop 1 "$rx_pids"
	result="$result $(awk -v line="$result" -v m="$meter_ns" 'BEGIN {
		n = split(line, kv, " ")
		for (i = 1; i <= n; i++) {
			k = v = kv[i]; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v); f[k] = v
		}
		gib = f["bytes"] / 2^30
		if (gib <= 0) gib = 1e-9
		if ("iwxd_a_cpu_ms" in f) {
			tx = f["iwxd_a_cpu_ms"]; txs = tx + f["client_cpu_ms"]
			rx = f["iwxd_b_cpu_ms"]; rxs = rx + f["server_cpu_ms"]
		} else {
			tx = txs = f["client_cpu_ms"]; rx = rxs = f["server_cpu_ms"]
		}
		if (f["client_cpu_ms"] == "na" || f["server_cpu_ms"] == "na")
			printf "tx_own_ms_gib=na tx_side_ms_gib=na rx_own_ms_gib=na rx_side_ms_gib=na"
		else
			printf "tx_own_ms_gib=%.0f tx_side_ms_gib=%.0f rx_own_ms_gib=%.0f rx_side_ms_gib=%.0f",
				tx / gib, txs / gib, rx / gib, rxs / gib
		# wall, CPU 1 busy and softirq, CPU 0 busy and softirq, softirq charged to rx_pids (ns)
		split(m, q)
		if (m == "na" || f["server_cpu_ms"] == "na")
			printf " tx_cpu_ms_gib=na rx_cpu_ms_gib=na rx_ns_ms_gib=na"
		else
			printf " tx_cpu_ms_gib=%.0f rx_cpu_ms_gib=%.0f rx_ns_ms_gib=%.0f", q[4] / 1e6 / gib,
				q[2] / 1e6 / gib, (rxs + (q[3] - q[6]) / 1e6) / gib
	}')"
}

# Messages per second of the run in $result, appended to it.
msgs_rate() {
	result="$result msgs_per_s=$(awk -v n="$(field msgs "$result")" \
		-v s="$(field seconds "$result")" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')"
}

# Per request: key divided by the messages (or round trips) of the run.
record_per() { # name key count-key
	awk -v a="$(field "$2" "$result")" -v n="$(field "$3" "$result")" \
		'BEGIN { printf "%.2f\n", (n > 0 ? a / n : 0) }' >>"$out/$1.$2_per"
}

# ------------------------------------------------------------- medians and tables

ratio() { # a b: a / b, na when either is
	if [ "$1" = na ] || [ "$2" = na ]; then echo na; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

# Median of the runs' ratios of one figure to another, run by run (e.g. a variant's to off's).
ratio_med() { # file file-to
	paste -d' ' "$1" "$2" | awk '$1 != "na" && $2 != "na" && $2 > 0 { print $1 / $2 }' \
		>"$out/ratio"
	median "$out/ratio"
}

size_name() { awk -v s="$1" 'BEGIN { if (s >= 2^20) printf "%d MiB", s / 2^20;
	else if (s >= 2^10) printf "%d KiB", s / 2^10; else printf "%d B", s }'; }
pct() { if [ "$1" = na ]; then echo "-"; else echo "$1%"; fi; }

aligned() { # measurement: the share of FPDUs handed to TCP whole, through iwxd / engine
	echo "$(pct "$(median "$out/verbs-$1.aligned_pct" 1)") /" \
		"$(pct "$(median "$out/engine-$1.aligned_pct" 1)")"
}

# ------------------------------------------------------------- the runs

mtu=$(ip -n "$ns_a" -o link show "$if_a" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
emss=$((mtu - 52))	# IPv4, TCP and its timestamp option: the engine's FPDU size
echo "bench: $ns_a $addr_a <-> $ns_b $addr_b (veth, MTU $mtu), $runs x $secs s each"
steer=$(steer_note)
where="not pinned$steer; "
[ -z "${pin_a:-}" ] || where="namespace a (clients, iwxd a) on CPU 0, b (servers, iwxd b) on CPU 1$steer; "
echo "  ${where}iwxd" \
	"--settle-ms 0$([[ " ${mpa_opt[*]} " == *" -N "* ]] && echo "; no MPA CRC")$(
	[[ " ${mpa_opt[*]} " == *" -M "* ]] && echo "; MPA markers")"
# the cost table's figures (cost_end), and the message sizes of the messages' table
cost_keys=(tx_own_ms_gib tx_side_ms_gib tx_cpu_ms_gib rx_own_ms_gib rx_side_ms_gib rx_cpu_ms_gib
	rx_ns_ms_gib)
msg_sizes=(64 4096 65536)
modes="write write-imm read send pingpong"	# bench_verbs' and bench_engine's, each run
[ "$pp_only" = 0 ] || modes=pingpong
if [ "$fast_only" = 0 ] && [ "$guard" = 0 ]; then
	for r in $(seq "$runs"); do
		if [ "$pp_only" = 0 ]; then
			cost=1 iperf iperf3
			echo "[$r/$runs] $result"
			record iperf3 gbps "${cost_keys[@]}"
			iperf iperf3-mss -N -l "$emss"
			echo "[$r/$runs] $result"
			record iperf3-mss gbps
		fi
		for m in $modes; do
			for b in verbs engine; do
				if [ "$b" = engine ]; then
					run "$engine" "$port_engine" "$m"
				elif [ "$m" = write ]; then
					cost=1 run "$verbs" "$port_verbs" "$m"
					record verbs-write "${cost_keys[@]}"
				else
					run "$verbs" "$port_verbs" "$m"
				fi
				echo "[$r/$runs] $b $result"
				case $m in
				pingpong) record "$b-$m" rtt_us_median rtt_us_p99 cpu_us_rt; n=n ;;
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
		record tcp-pingpong rtt_us_median rtt_us_p99 cpu_us_rt
		[ "$pp_only" = 0 ] || continue	# no messages per second
		for s in "${msg_sizes[@]}"; do
			for v in $(fp_order "$r" verbs tcp); do
				if [ "$v" = verbs ]; then
					run "$verbs" "$port_verbs" send "$s"
				else
					run "$verbs" "$port_tcp" tcp-send "$s"
				fi
				msgs_rate
				echo "[$r/$runs] $v $result"
				record "msgs-$v-$s" msgs_per_s
			done
		done
	done

	ip3=$(median "$out/iperf3.gbps")
	tcp=$(median "$out/tcp-pingpong.rtt_us_median")
	echo
	if [ "$pp_only" = 0 ]; then
		echo "Medians of $runs runs of $secs s. Goodput ratios are to iperf3's one stream, round"
		echo "trips to TCP's (lower is better). FPDUs whole: tx_fpdus_aligned / tx_fpdus of both"
	else
		echo "Medians of $runs runs of $secs s. Ratios are to TCP's round trip (lower is better)."
		echo "FPDUs whole: tx_fpdus_aligned / tx_fpdus of both"
	fi
	echo "sides over the measured time (through iwxd: the daemons' STATUS before and after)."
	echo "CPU per round trip: the client's and the server's CPU over the run and, through iwxd,"
	echo "both daemons' (set-up and close included), over the round trips."
	echo
	row measurement "through iwxd" ratio "engine, no daemon" ratio "FPDUs whole, iwxd / engine"
	row --- --- --- --- --- ---
	if [ "$pp_only" = 0 ]; then
		row "iperf3, one stream" "$ip3 Gbit/s" 1.00 "" "" ""
		v=$(median "$out/iperf3-mss.gbps")
		row "iperf3, $emss-byte writes, TCP_NODELAY" "$v Gbit/s" "$(ratio "$v" "$ip3")" "" "" ""
		for m in write write-imm read send; do
			case $m in
			write) label="RDMA Write, 1 MiB, 8 outstanding" ;;
			write-imm) label="RDMA Write with Immediate, 1 MiB, 8 outstanding" ;;
			read) label="RDMA Read, 1 MiB, 8 outstanding" ;;
			send) label="Send, 64 KiB, 8 outstanding" ;;
			esac
			v=$(median "$out/verbs-$m.gbps") e=$(median "$out/engine-$m.gbps")
			row "$label" "$v Gbit/s" "$(ratio "$v" "$ip3")" "$e Gbit/s" "$(ratio "$e" "$ip3")" \
				"$(aligned "$m")"
		done
	fi
	v=$(median "$out/verbs-pingpong.rtt_us_median") e=$(median "$out/engine-pingpong.rtt_us_median")
	row "Send ping-pong, 8 bytes" "$v µs round trip" "$(ratio "$v" "$tcp")" "$e µs" \
		"$(ratio "$e" "$tcp")" "$(aligned pingpong)"
	row "TCP ping-pong, 8 bytes" "$tcp µs round trip" 1.00 "" "" ""
	if [ "$pp_only" = 0 ]; then
		row "… Write with Immediate / Write (median of each run's)" "" \
			"$(ratio_med "$out/verbs-write-imm.gbps" "$out/verbs-write.gbps")" "" \
			"$(ratio_med "$out/engine-write-imm.gbps" "$out/engine-write.gbps")" ""
	fi
	v=$(median "$out/verbs-pingpong.cpu_us_rt" 1) e=$(median "$out/engine-pingpong.cpu_us_rt" 1)
	t=$(median "$out/tcp-pingpong.cpu_us_rt" 1)
	row "… CPU per round trip, ping-pong / TCP's" "$v / $t µs" "$(ratio "$v" "$t")" "$e µs" \
		"$(ratio "$e" "$t")" ""

	echo
	echo "Where the time went (medians): CPU in percent of one CPU over the run; doorbells"
	echo "(the application woke its iwxd) and wake-ups (iwxd had gone to sleep in epoll_wait"
	echo "and an event woke it) per request or round trip, for the client's daemon (a) and the"
	echo "server's (b)."
	echo
	row "through iwxd" client server "iwxd a" "iwxd b" "doorbells a / b" "wake-ups a / b" \
		"engine: client / server"
	row --- --- --- --- --- --- --- ---
	for m in $modes; do
		f=$out/verbs-$m g=$out/engine-$m
		row "$m" "$(median "$f.client_cpu_pct" 0)%" "$(median "$f.server_cpu_pct" 0)%" \
			"$(median "$f.iwxd_a_cpu_pct" 0)%" "$(median "$f.iwxd_b_cpu_pct" 0)%" \
			"$(median "$f.doorbells_c_per") / $(median "$f.doorbells_s_per")" \
			"$(median "$f.wakeups_c_per") / $(median "$f.wakeups_s_per")" \
			"$(median "$g.client_cpu_pct" 0)% / $(median "$g.server_cpu_pct" 0)%"
	done

	if [ "$pp_only" = 0 ]; then	# neither iperf3 nor the messages ran
		echo
		echo "Cost per byte, iperf3's one stream against the 1 MiB RDMA Writes through iwxd (their"
		echo "runs above): CPU in ms per GiB moved (medians; the ratios are medians of each run's"
		echo "ratio). A side's process: the one moving the bytes (iperf3, whose kernel moves them in"
		echo "its system calls; iwxd), as charged (softirq that ran while it was current included),"
		echo "from iperf3's JSON and /proc/PID/schedstat; with its application: iwxd and the"
		echo "benchmark program. A side's CPU${pin_a:+ (a on 0, b on 1)}: busy, measured by the CPU meter over the"
		echo "whole run, whatever ran there (softirq from idle and this machine's other load included)."
		echo "The receiver's namespace: its processes as charged, and the softirq on its CPU that was"
		echo "not charged to them (run from idle, or while another process was current): the whole"
		echo "receiving side without the machine's other load."
		echo
		row "CPU per GiB" "iperf3, one stream" "RDMA Write, 1 MiB, through iwxd" "iwx / iperf3"
		row --- --- --- ---
		cost_row() { # label key
			row "$1" "$(median "$out/iperf3.$2" 0) ms" "$(median "$out/verbs-write.$2" 0) ms" \
				"$(ratio_med "$out/verbs-write.$2" "$out/iperf3.$2")"
		}
		cost_row "sender's process (iperf3 / iwxd a)" tx_own_ms_gib
		cost_row "… with its application (iperf3 / iwxd a + client)" tx_side_ms_gib
		cost_row "sender's CPU${pin_a:+ (0)}, busy" tx_cpu_ms_gib
		cost_row "receiver's process (iperf3 / iwxd b)" rx_own_ms_gib
		cost_row "… with its application (iperf3 / iwxd b + server)" rx_side_ms_gib
		cost_row "receiver's CPU${pin_a:+ (1)}, busy" rx_cpu_ms_gib
		cost_row "receiver's namespace: its processes, softirq on its CPU outside them" rx_ns_ms_gib

		echo
		echo "Messages per second at each size: Sends through iwxd, 8 outstanding, and messages on a TCP"
		echo "socket (bench_verbs -m tcp-send) under the same flow control: the receiving program"
		echo "returns a credit each 4 messages and the sender stays within 16 of the last (for iwx"
		echo "too: its receives posted). Medians; the ratio is the median of each run's, the two"
		echo "alternating."
		echo
		row "message size" "iwx Sends through iwxd, per s" "TCP messages, per s" "iwx / TCP"
		row --- --- --- ---
		for s in "${msg_sizes[@]}"; do
			row "$(size_name "$s")" "$(median "$out/msgs-verbs-$s.msgs_per_s" 0)" \
				"$(median "$out/msgs-tcp-$s.msgs_per_s" 0)" \
				"$(ratio_med "$out/msgs-verbs-$s.msgs_per_s" "$out/msgs-tcp-$s.msgs_per_s")"
		done
	fi

	echo
	echo "Runs:"
	for f in iperf3.gbps iperf3-mss.gbps verbs-write.gbps engine-write.gbps \
		verbs-write-imm.gbps engine-write-imm.gbps verbs-read.gbps \
		engine-read.gbps verbs-send.gbps engine-send.gbps verbs-pingpong.rtt_us_median \
		verbs-pingpong.rtt_us_p99 engine-pingpong.rtt_us_median engine-pingpong.rtt_us_p99 \
		tcp-pingpong.rtt_us_median tcp-pingpong.rtt_us_p99 verbs-pingpong.cpu_us_rt \
		engine-pingpong.cpu_us_rt tcp-pingpong.cpu_us_rt iperf3.tx_side_ms_gib \
		verbs-write.tx_side_ms_gib iperf3.rx_ns_ms_gib verbs-write.rx_ns_ms_gib; do
		[ -e "$out/$f" ] || continue	# --pingpong-only: not run
		printf '  %-32s [%s]\n' "$f" "$(runs_of "$out/$f")"
	done
	for s in "${msg_sizes[@]}"; do
		for v in verbs tcp; do
			f=msgs-$v-$s.msgs_per_s
			[ -e "$out/$f" ] || continue
			printf '  %-32s [%s]\n' "$f" "$(runs_of "$out/$f")"
		done
	done

	[ "$pp_only" = 0 ] || exit 0
	echo
	echo "Registering ordinary memory (malloc'd, touched): medians of 21 iwx_reg_mr and"
	echo "iwx_dereg_mr through iwxd a; its pages move into memory iwxd shares, and back."
	echo
	in_a timeout 120 env IWX_SOCKET="$sock_a" "$reg" 21 || die "bench_reg failed"
fi

# ------------------------------------------------------------- the fast path

# xdp-off: XDP's own baseline, the veth as XDP leaves it (no GRO, no TSO) and nothing placed
fp_variants=(off tc xdp xdp-off)
sweep_variants=(off tc xdp)
fp_name() {
	case $1 in off) echo off ;; tc) echo TC ;; xdp) echo XDP ;; xdp-off) echo "off, veth as at XDP" ;; esac
}
fp_keys=(gbps rx_iwxd_ms_gib rx_iwxd_own_ms_gib rx_iwxd_softirq_ms_gib tx_iwxd_ms_gib
	rx_cpu_ms_gib rx_softirq_ms_gib tx_cpu_ms_gib cpus_ms_gib other_ms_gib softirq_ms_gib
	placed_pct skip_pct sys_per_mib recv_per_mib bpf_ms_gib)

# One measurement with the fast path as it is: mode, receiving side, name, [size].
fp_measure() {
	bpf_stats_on
	probe=$2
	run "$verbs" "$port_verbs" "$1" ${4:+"$4"}
	probe=
	# FPDUs the programs looked at and did not place, of all they looked at
	result="$result $(awk -v p="$(field placed_fpdus "$result")" \
		-v k="$(field skipped_fpdus "$result")" 'BEGIN {
		printf "skip_pct=%.1f", (p + k > 0 ? 100 * k / (p + k) : 0) }')"
	record "$3" "${fp_keys[@]}"
	echo "[$r/$runs] $1${4:+ $4} fast path $(fp_name "$fp_mode"): $(field gbps "$result") Gbit/s;" \
		"per GiB: iwxd $(field rx_iwxd_own_ms_gib "$result") ms (+ softirq" \
		"$(field rx_iwxd_softirq_ms_gib "$result")), receiver's CPU" \
		"$(field rx_cpu_ms_gib "$result") ms, both $(field cpus_ms_gib "$result") ms;" \
		"placed $(field placed_pct "$result")%; syscalls/MiB $(field sys_per_mib "$result");" \
		"BPF $(field bpf_ms_gib "$result") ms"
}

# ------------------------------------------------------------- the guard

# The last "Guard reference: WHAT = X" line in BENCHMARKS.md: X, or nothing.
guard_ref() { # what
	local what=${1//\//\\/}

	sed -n "s/^Guard reference: $what = \([0-9]*\.\{0,1\}[0-9][0-9]*\)[[:space:]]*\$/\1/p" \
		BENCHMARKS.md 2>/dev/null | tail -1 || true
}

# One row of the guard's table, PASS or FAIL by the printed ratio (so that the row reads
# as it is judged); a ratio not measured (na: the CPU meter said nothing) fails, since a
# guard that cannot see must not pass.
guard_check() { # check figures ratio ≥|≤ threshold [note on the threshold]
	local verdict=PASS

	if [ "$3" = na ] || ! awk -v v="$3" -v t="$5" -v op="$4" \
		'BEGIN { exit !(op == "≥" ? v >= t : v <= t) }'; then
		verdict=FAIL guard_failed=${guard_failed:+$guard_failed; }$1
	fi
	row "$1" "$2" "$3" "$4 $5${6:-}" "$verdict"
}

if [ "$guard" = 1 ]; then
	echo
	echo "Guard: 1 MiB RDMA Writes, 8 outstanding, through the daemons against iperf3's one" \
		"stream, then received in b with the fast path off and at TC, each pair alternating"
	[ "$perf_ok" = 1 ] || echo "  (perf stat cannot count system calls here: syscalls 'na')"
	for r in $(seq "$runs"); do
		fp_set off	# the product path: the daemons as applications find them
		for v in $(fp_order "$r" iperf3 write); do
			if [ "$v" = iperf3 ]; then
				iperf iperf3
				echo "[$r/$runs] $result"
			else
				run "$verbs" "$port_verbs" write
				echo "[$r/$runs] verbs $result"
			fi
			record "guard-$v" gbps
		done
		for v in $(fp_order "$r" off tc); do
			fp_set "$v"
			fp_measure write b "fp-write-$v"
		done
	done
	fp_set off

	guard_failed=	# the checks that failed
	ref=$(guard_ref "RDMA Write / iperf3")
	cpu_ref=$(guard_ref "receiver's CPU, TC / off")
	f=$out/fp-write
	echo
	echo "Medians of $runs run(s) of $secs s; the ratios are medians of each run's ratio. CPU in"
	echo "ms per GiB b received, the receiver's CPU as in the fast path's table."
	echo
	row check figures ratio threshold result
	row --- --- --- --- ---
	guard_check "goodput, TC / off" \
		"$(median "$f-tc.gbps") / $(median "$f-off.gbps") Gbit/s" \
		"$(ratio_med "$f-tc.gbps" "$f-off.gbps")" ≥ 0.9
	# the recorded ratio and the noise of five short runs above it, else the target
	cpu_max=1.1 cpu_note=
	if [ -n "$cpu_ref" ]; then
		cpu_max=$(awk -v r="$cpu_ref" 'BEGIN { printf "%g", (r + 0.15 > 1.1 ? r + 0.15 : 1.1) }')
		cpu_note=" (BENCHMARKS.md's $cpu_ref and 0.15)"
	fi
	guard_check "receiver's CPU${pin_a:+ (1)} per GiB, TC / off" \
		"$(median "$f-tc.rx_cpu_ms_gib" 0) / $(median "$f-off.rx_cpu_ms_gib" 0) ms" \
		"$(ratio_med "$f-tc.rx_cpu_ms_gib" "$f-off.rx_cpu_ms_gib")" ≤ "$cpu_max" "$cpu_note"
	# the programs' own run time per byte: the fast path's cost without the machine's noise
	bpf_ref=$(guard_ref "BPF run time per GiB, TC")
	bpf_med=$(median "$f-tc.bpf_ms_gib" 0)
	if [ -n "$bpf_ref" ]; then
		guard_check "BPF programs' run time per GiB, TC" "$bpf_med ms" \
			"$(awk -v v="$bpf_med" -v r="$bpf_ref" 'BEGIN {
				print (v == "na" ? "na" : sprintf("%.2f", v / r)) }')" ≤ 1.5 \
			" of BENCHMARKS.md's $bpf_ref ms"
	else
		row "BPF programs' run time per GiB, TC" "$bpf_med ms" - "no reference" skipped
	fi
	wr="$(median "$out/guard-write.gbps") / $(median "$out/guard-iperf3.gbps") Gbit/s"
	wr_ratio=$(ratio_med "$out/guard-write.gbps" "$out/guard-iperf3.gbps")
	if [ -n "$ref" ]; then
		guard_check "goodput, RDMA Write / iperf3" "$wr" "$wr_ratio" ≥ \
			"$(awk -v r="$ref" 'BEGIN { printf "%g", 0.75 * r }')" \
			" (BENCHMARKS.md's $ref less 25%)"
	else
		row "goodput, RDMA Write / iperf3" "$wr" "$wr_ratio" "no reference" skipped
		echo "bench: no 'Guard reference: RDMA Write / iperf3 = X' line in BENCHMARKS.md:" \
			"that check skipped" >&2
	fi
	echo
	if [ -n "$guard_failed" ]; then
		echo "guard: FAIL ($guard_failed), $SECONDS s"
		exit 1
	fi
	echo "guard: PASS, $SECONDS s"
	exit 0
fi

echo
echo "Fast path: 1 MiB RDMA Writes (b receives) and Reads (a receives), 8 outstanding," \
	"off / TC / XDP / off as at XDP alternating; at XDP the veth ends' tx checksum offload is off"
[ "$perf_ok" = 1 ] || echo "  (perf stat cannot count system calls here: syscalls 'na')"
for r in $(seq "$runs"); do
	for v in $(fp_order "$r" "${fp_variants[@]}"); do
		fp_set "$v"
		fp_measure write b "fp-write-$v"
		fp_measure read a "fp-read-$v"
	done
done
fp_set off

fp_row() { # label op key unit decimals [target]
	local v cells=()

	for v in "${fp_variants[@]}"; do
		cells+=("$(median "$out/fp-$2-$v.$3" "$5")$4")
	done
	row "$1" "${cells[@]}" "$(ratio_med "$out/fp-$2-tc.$3" "$out/fp-$2-off.$3")" \
		"$(ratio_med "$out/fp-$2-xdp.$3" "$out/fp-$2-off.$3")" \
		"$(ratio_med "$out/fp-$2-xdp.$3" "$out/fp-$2-xdp-off.$3")" "${6:-}"
}

echo
echo "Medians of $runs runs of $secs s; the ratios are medians of each run's ratio to off."
echo "CPU in ms per GiB the receiver took, measured to the ns (run time in /proc/PID/schedstat,"
echo "the CPU meter build/bench/softirq_time): the receiving iwxd's own (its run time less the"
echo "softirq that ran while it was current: this kernel has no IRQ time accounting and"
echo "charges softirq to whoever it interrupted), that softirq, the receiving and the sending"
echo "iwxd as charged, the CPU the receiving namespace is pinned to (busy: not idle, or in"
echo "softirq from idle, which /proc/stat counts as idle when the tick is stopped; whatever ran"
echo "there, this machine's other load too) and its softirq, the other CPU, both CPUs, of those"
echo "what neither daemon was charged for (applications, softirq outside them, other load), and"
echo "both CPUs' softirq. Placed: payload bytes the programs placed (iwx stats) of those moved;"
echo "FPDUs skipped: of those the programs looked at. System calls: the receiving iwxd's,"
echo "counted by perf stat (raw_syscalls:sys_enter), and its recv() calls among them."
for m in write read; do
	if [ "$m" = write ]; then
		label="RDMA Write" rc=${pin_a:+1} sc=${pin_a:+0}
	else
		label="RDMA Read" rc=${pin_a:+0} sc=${pin_a:+1}
	fi
	echo
	row "$label, 1 MiB" off TC XDP "off, veth as at XDP" "TC / off" "XDP / off" \
		"XDP / off as at XDP" target
	row --- --- --- --- --- --- --- --- ---
	fp_row "goodput" "$m" gbps " Gbit/s" 2 "≥ 1"
	fp_row "receiving iwxd's own CPU per GiB" "$m" rx_iwxd_own_ms_gib " ms" 0 "≤ 0.25"
	fp_row "… softirq while it ran" "$m" rx_iwxd_softirq_ms_gib " ms" 0
	fp_row "receiving iwxd as charged, per GiB" "$m" rx_iwxd_ms_gib " ms" 0
	fp_row "sending iwxd as charged, per GiB" "$m" tx_iwxd_ms_gib " ms" 0
	fp_row "receiver's CPU${rc:+ ($rc)}, per GiB" "$m" rx_cpu_ms_gib " ms" 0 "≤ 1.1"
	fp_row "… in softirq" "$m" rx_softirq_ms_gib " ms" 0
	fp_row "sender's CPU${sc:+ ($sc)}, per GiB" "$m" tx_cpu_ms_gib " ms" 0
	fp_row "both CPUs, per GiB" "$m" cpus_ms_gib " ms" 0
	fp_row "… not charged to a daemon" "$m" other_ms_gib " ms" 0
	fp_row "… in softirq" "$m" softirq_ms_gib " ms" 0
	fp_row "placed by BPF" "$m" placed_pct "%" 1
	fp_row "FPDUs skipped" "$m" skip_pct "%" 1
	fp_row "receiving iwxd's system calls per MiB" "$m" sys_per_mib "" 1
	fp_row "… of them recv()" "$m" recv_per_mib "" 1
done
echo
echo "Runs (goodput, Gbit/s; receiving iwxd's own and receiver's CPU, ms per GiB):"
for m in write read; do
	for v in "${fp_variants[@]}"; do
		printf '  %-10s [%s] [%s] [%s]\n' "$m $v" "$(runs_of "$out/fp-$m-$v.gbps")" \
			"$(runs_of "$out/fp-$m-$v.rx_iwxd_own_ms_gib")" \
			"$(runs_of "$out/fp-$m-$v.rx_cpu_ms_gib")"
	done
done

[ -n "$plot" ] || exit 0

# ------------------------------------------------------------- the sweep, the plot

sizes=(4096 16384 65536 262144 1048576 4194304 8388608)

echo
echo "Fast path: RDMA Writes of $(size_name "${sizes[0]}") to $(size_name "${sizes[-1]}")," \
	"8 outstanding, off / TC / XDP alternating"
for r in $(seq "$runs"); do
	for i in "${!sizes[@]}"; do
		for v in $(fp_order $((r + i)) "${sweep_variants[@]}"); do
			fp_set "$v"
			fp_measure write b "sweep-${sizes[i]}-$v" "${sizes[i]}"
		done
	done
done
fp_set off

echo
echo "RDMA Writes, medians of $runs runs of $secs s: goodput, Gbit/s; the receiving iwxd's"
echo "CPU, the receiver's CPU and both CPUs, ms per GiB; placed by BPF"
echo
row size "goodput off / TC / XDP" "iwxd off / TC / XDP" "receiver's CPU off / TC / XDP" \
	"both CPUs off / TC / XDP" "placed TC / XDP"
row --- --- --- --- --- ---
: >"$out/sweep.dat"
for s in "${sizes[@]}"; do
	f=$out/sweep-$s
	line=$s
	cells=()
	for k in gbps:2 rx_iwxd_own_ms_gib:0 rx_cpu_ms_gib:0 cpus_ms_gib:0; do
		c=
		for v in "${sweep_variants[@]}"; do
			x=$(median "$f-$v.${k%:*}" "${k#*:}")
			line="$line $x" c="$c${c:+ / }$x"
		done
		cells+=("$c")
	done
	echo "$line" >>"$out/sweep.dat"
	row "$(size_name "$s")" "${cells[@]}" \
		"$(median "$f-tc.placed_pct" 1)% / $(median "$f-xdp.placed_pct" 1)%"
done

# sweep.dat: the size, then goodput, iwxd, receiver's CPU, both CPUs, each off TC XDP
mkdir -p "$(dirname "$plot")"
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,1200 font ",10"
set output "$plot"
set datafile missing "na"
set logscale x 2
set xrange [3072:11184810]
set xtics ("4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, \
	"4M" 4194304, "8M" 8388608)
set grid
set key outside right top
set rmargin at screen 0.78
set multiplot layout 3,1 title "iwx: RDMA Writes over veth, 8 outstanding, fast path off / TC / XDP\n(medians of $runs runs of $secs s)"
set ylabel "goodput, Gbit/s"
set yrange [0:*]
plot "$out/sweep.dat" u 1:2 w lp lw 2 t "off", "" u 1:3 w lp lw 2 t "TC", \
	"" u 1:4 w lp lw 2 t "XDP"
set ylabel "receiving iwxd, its own CPU, ms per GiB"
set logscale y
set yrange [*:*]
plot "$out/sweep.dat" u 1:5 w lp lw 2 t "off", "" u 1:6 w lp lw 2 t "TC", \
	"" u 1:7 w lp lw 2 t "XDP"
set ylabel "CPU ms per GiB"
set xlabel "message size"
plot "$out/sweep.dat" u 1:8 w lp lw 2 lc 1 t "off: receiver's CPU", \
	"" u 1:9 w lp lw 2 lc 2 t "TC: receiver's CPU", \
	"" u 1:10 w lp lw 2 lc 3 t "XDP: receiver's CPU", \
	"" u 1:11 w lp dt 2 lc 1 t "off: both CPUs", \
	"" u 1:12 w lp dt 2 lc 2 t "TC: both CPUs", \
	"" u 1:13 w lp dt 2 lc 3 t "XDP: both CPUs"
unset multiplot
EOF
echo
echo "plot: $plot"
