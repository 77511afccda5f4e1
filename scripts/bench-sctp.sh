#!/usr/bin/env bash
# DDP over SCTP against plain SCTP, over a veth pair between two network namespaces (as
# root): RDMA Writes of 1 MiB and 64 KiB, 8 outstanding, on the engine through the
# adaptation shim (draft-otis-sctp-ddp-00) on usrsctp (bench_engine --llp sctp), and plain
# usrsctp messages of SCTP_MAXSEG bytes, unordered, on an association of the same settings
# (bench_usrsctp), for the same time each, both in UDP datagrams (RFC 6951) between
# 192.0.2.1 and 192.0.2.2, through the kernel's UDP sockets and again through AF_XDP
# sockets (bpf/sctp_xsk.bpf.c at native XDP on each veth end, as iwxd after iwx attach,
# tagged payload placed from the frames); each end a
# process of its own with its own usrsctp stack. For context, in the same session, TCP on
# the same pair: iperf3 with one stream, and 1 MiB RDMA Writes on the engine over MPA and
# TCP (bench_engine, as scripts/bench.sh runs it). Each measurement runs RUNS times, the
# SCTP variants alternating (their order rotating run by run); the table shows medians,
# the ratio of each to plain SCTP (the median of the runs' own ratios), and the CPU of
# each end.
#
#   scripts/bench-sctp.sh                 # 3 runs of 3 s each: about 2 minutes
#   scripts/bench-sctp.sh -n 5 -t 5 --no-tcp
#   BUILD=/tmp/b scripts/bench-sctp.sh    # binaries built in and run from /tmp/b
#
# -t SECONDS: each run (default 3). --no-tcp: no TCP context. --no-64k: no 64 KiB row.
# --no-xsk: no AF_XDP rows.
# --no-pin: by default (with two CPUs or more) namespace a (the initiators, senders) runs
# on CPU 0 and namespace b (the responders, receivers) on CPU 1, and each veth end steers
# what it receives to its namespace's CPU (RPS), as bench.sh does; --no-rps: pinned, not
# steered. The veth ends keep their offloads as found: usrsctp sends one datagram per SCTP
# packet, so neither segmentation offload nor GRO has anything to merge on the SCTP runs.
# Every step is bounded by timeout(1); on any exit the programs, the namespaces and the
# temporary directory this script made go, by the PIDs and names it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh

runs=3 secs=3 pin=1 rps=1 tcp=1 small=1 xsk=1
while [ $# -gt 0 ]; do
	case $1 in
	--no-tcp) tcp=0; shift ;;
	--no-xsk) xsk=0; shift ;;
	--no-64k) small=0; shift ;;
	*) common_arg "$@"; shift "$took" ;;
	esac
done

build=${BUILD:-build}
net_names iwxs
port_sctp=7175 port_engine=7176 port_iperf=5201
usrsctp=$build/bench/bench_usrsctp engine=$build/bench/bench_engine
limit=$((secs + 60))	# seconds: the bound on one run's programs
out=	# the temporary directory: logs, results
made_ns=()	# namespaces this script created
server=	# the one server it runs in the background, while it runs

die() { echo "bench-sctp: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "-n takes a positive number of runs"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "-t takes a positive number of seconds"
for tool in ip ss timeout awk; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
[ "$tcp" = 0 ] || command -v iperf3 >/dev/null ||
	die "iperf3 is missing: apt-get install -y iperf3 (or --no-tcp)"

make -s BUILD="$build" "$usrsctp" "$engine"
out=$(mktemp -d /tmp/iwx-bench-sctp-XXXXXX)

net_up
[ ${#pin_a[@]} -gt 0 ] ||
	echo "bench-sctp: not pinned: each side's CPU is whatever the scheduler gave it" >&2

# ------------------------------------------------------------- one step

# One run of a bench.c-style program (bench_engine, bench_usrsctp): the program, the
# server's options, then the client's. Its line in $result, with the server's CPU and, on
# SCTP, the client's DATA chunks sent again and the server's UDP receive drops (the
# carrier's stderr line).
# With via_xsk=1, each end's datagrams go through an AF_XDP socket on its veth end.
run_prog() { # name program server-options client-options
	local name=$1 prog=$2 sopts copts v env_a=() env_b=()
	read -ra sopts <<<"$3"
	read -ra copts <<<"$4"
	if [ "$via_xsk" = 1 ]; then
		env_a=(env "IWX_BENCH_XSK=$if_a") env_b=(env "IWX_BENCH_XSK=$if_b")
	fi
	start_server "${env_b[@]}" "$prog" -s -a "$addr_b" "${sopts[@]}"
	wait_listen "$port" "$listen"
	result=$(in_a timeout "$limit" "${env_a[@]}" "$prog" -c -a "$addr_b" "${copts[@]}" -t "$secs" \
		2>"$out/client.log") || client_failed "$name"
	stop_server "$name"
	v=$(sed -n 's/.*server_cpu_pct=\([0-9.]*\).*/\1/p' "$out/server.log")
	result="$result server_cpu_pct=${v:-na}"
	if [ "$listen" = -Hlun ]; then
		v=$(sed -n 's/.*usrsctp:.*retrans_chunks=\([0-9]*\).*/\1/p' "$out/client.log")
		result="$result retrans_chunks=${v:-na}"
		v=$(sed -n 's/.*usrsctp:.*udp_drops=\([0-9]*\).*/\1/p' "$out/server.log")
		result="$result udp_drops_s=${v:-na}"
	fi
}
run_sctp() { # name program [client-options]: bench_engine runs with --llp sctp
	local llp=
	listen=-Hlun port=$port_sctp
	[ "$2" = "$engine" ] && llp="--llp sctp"
	run_prog "$1" "$2" "-p $port_sctp $llp" "-p $port_sctp $llp ${3:-}"
}
run_engine() {
	listen=-Hltn port=$port_engine
	run_prog "bench_engine write" "$engine" "-p $port_engine" "-p $port_engine -m write"
}

# iperf3, one stream. A line like the others in $result.
run_iperf() {
	start_server iperf3 -s -1 -B "$addr_b" -p "$port_iperf"
	wait_listen "$port_iperf"
	in_a timeout $((secs + 30)) iperf3 -c "$addr_b" -p "$port_iperf" -t "$secs" -J \
		>"$out/iperf3.json" 2>&1 || { cp "$out/iperf3.json" "$out/client.log"; client_failed iperf3; }
	stop_server iperf3
	result=$(iperf3_figures "$out/iperf3.json")
	[ -n "$result" ] || die "no goodput or CPU in iperf3's JSON"
	result="mode=iperf3 $result"
}

# A TCP run's CPU per GiB moved, from its CPU percentages and goodput, added to $result.
per_gib() {
	result="$result $(awk -v g="$(field gbps "$result")" -v c="$(field client_cpu_pct "$result")" \
		-v s="$(field server_cpu_pct "$result")" 'BEGIN {
		k = g > 0 ? 10 * 8 * 2^30 / (g * 1e9) : 0	# ms per GiB at 1% of a CPU
		printf "client_ms_gib=%.0f server_ms_gib=%.0f", c * k, s * k }')"
}

# ------------------------------------------------------------- medians and tables

# Median of the runs' ratios of one measurement to plain SCTP's, run by run.
ratio_med() { # name key
	paste -d' ' "$out/$1.$2" "$out/plain.$2" |
		awk '$1 != "na" && $2 != "na" && $2 > 0 { print $1 / $2 }' >"$out/ratio"
	median "$out/ratio"
}
# ------------------------------------------------------------- the runs

variants=(iwx plain)
[ "$small" = 1 ] && variants+=(iwx-64k)
[ "$xsk" = 1 ] && variants+=(iwx-xsk plain-xsk)
echo "bench-sctp: $ns_a $addr_a <-> $ns_b $addr_b (veth), $runs runs of $secs s"
if [ ${#pin_a[@]} -gt 0 ]; then
	steer=", not steered (no RPS)"
	[ "$rps" = 1 ] && steer=", each receiving there (RPS)"
	echo "  namespace a (initiators, senders) on CPU 0, b (responders, receivers) on CPU 1$steer"
fi
for r in $(seq "$runs"); do
	for v in $(fp_order "$r" "${variants[@]}"); do
		via_xsk=0
		case $v in
		iwx) run_sctp iwx "$engine" "-m write -S 1M -d 8" ;;
		plain) run_sctp plain "$usrsctp" ;;
		iwx-64k) run_sctp iwx-64k "$engine" "-m write -S 64K -d 8" ;;
		iwx-xsk) via_xsk=1 run_sctp iwx-xsk "$engine" "-m write -S 1M -d 8" ;;
		plain-xsk) via_xsk=1 run_sctp plain-xsk "$usrsctp" ;;
		esac
		echo "[$r/$runs] $v $result"
		per_gib
		record "$v" gbps client_cpu_pct server_cpu_pct client_ms_gib server_ms_gib \
			retrans_chunks udp_drops_s
		if [ "$v" = plain ]; then record plain size; fi
	done
	if [ "$tcp" = 1 ]; then
		run_iperf
		echo "[$r/$runs] $result"
		per_gib
		record iperf3 gbps client_cpu_pct server_cpu_pct client_ms_gib server_ms_gib
		run_engine
		echo "[$r/$runs] engine-tcp $result"
		per_gib
		record engine-tcp gbps client_cpu_pct server_cpu_pct client_ms_gib server_ms_gib
	fi
done

maxseg=$(median "$out/plain.size" 0)
echo
echo "Medians of $runs runs; the ratios are medians of each run's ratio to plain SCTP in"
echo "the same run. Goodput: application bytes (the shim's headers not counted), $secs s a run;"
echo "TCP: $secs s a run. CPU: each process's user and system time over its measured time"
echo "(the kernel charges softirq to whichever process it interrupts; iperf3's own figures),"
echo "in percent of one CPU and in ms per GiB moved; sent again: DATA chunks the sender's"
echo "usrsctp retransmitted."
echo
row measurement goodput "ratio to plain SCTP" "sender CPU" "receiver CPU" \
	"CPU per GiB, sender / receiver" "… ratio to plain SCTP" "chunks sent again"
row --- --- --- --- --- --- --- ---
measure_row() { # label name [retransmissions]
	local f=$out/$2
	row "$1" "$(median "$f.gbps") Gbit/s" "$(ratio_med "$2" gbps)" \
		"$(median "$f.client_cpu_pct" 0)%" "$(median "$f.server_cpu_pct" 0)%" \
		"$(median "$f.client_ms_gib" 0) / $(median "$f.server_ms_gib" 0) ms" \
		"$(ratio_med "$2" client_ms_gib) / $(ratio_med "$2" server_ms_gib)" "${3:-}"
}
measure_row "plain usrsctp, $maxseg-byte messages, unordered" plain \
	"$(median "$out/plain.retrans_chunks" 0)"
measure_row "RDMA Write over the shim, 1 MiB, 8 outstanding" iwx \
	"$(median "$out/iwx.retrans_chunks" 0)"
[ "$small" = 0 ] || measure_row "RDMA Write over the shim, 64 KiB, 8 outstanding" iwx-64k \
	"$(median "$out/iwx-64k.retrans_chunks" 0)"
if [ "$xsk" = 1 ]; then
	measure_row "AF_XDP: plain usrsctp, $maxseg-byte messages, unordered" plain-xsk \
		"$(median "$out/plain-xsk.retrans_chunks" 0)"
	measure_row "AF_XDP: RDMA Write over the shim, 1 MiB, 8 outstanding" iwx-xsk \
		"$(median "$out/iwx-xsk.retrans_chunks" 0)"
fi
if [ "$tcp" = 1 ]; then
	measure_row "TCP: iperf3, one stream" iperf3
	measure_row "TCP: RDMA Write on the engine (MPA, CRC), 1 MiB, 8 outstanding" engine-tcp
fi
echo
echo "Runs (goodput, Gbit/s; UDP receive drops at the receiver):"
for v in "${variants[@]}"; do
	printf '  %-12s [%s] [%s]\n' "$v" "$(runs_of "$out/$v.gbps")" "$(runs_of "$out/$v.udp_drops_s")"
done
if [ "$tcp" = 1 ]; then
	for t in iperf3 engine-tcp; do
		printf '  %-12s [%s]\n' "$t" "$(runs_of "$out/$t.gbps")"
	done
fi
