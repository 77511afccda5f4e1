#!/usr/bin/env bash
# Unmodified perftest over iwx (iwx exec: the drop-in libibverbs and librdmacm) against
# the same transfer through libiwx directly (bench_verbs), in one session on one veth
# pair between two network namespaces, an iwxd in each (as root). RDMA Writes, Reads and
# Sends of 64 KiB, 1 MiB and 4 MiB with 8 outstanding (perftest -t 8, -o 8 for Reads;
# bench_verbs -d 8), each for SECS seconds, the two alternating, RUNS times: medians and
# the ratio perftest / bench_verbs. Then latency: ib_send_lat, ib_write_lat and
# ib_read_lat with 8 bytes and ib_atomic_lat (RFC 7306) (perftest's typical one-way time
# and its 99th percentile) beside half the median round trip of an 8-byte Send
# ping-pong through libiwx and on a plain TCP socket (alone with --latency-only); and 64
# KiB Sends into a shared receive queue (--use-srq) beside the same into the QP's own (alone with
# --srq-only). With --fabric-only, libfabric's fi_pingpong (verbs, connected endpoints)
# beside perftest's ib_send_lat, 64 bytes, daemons without the settle hold (both peers
# are iwx: no siw Responder to wait for; README). With --rsockets-only, rdmacm-utils'
# rstream over iwx's rsockets beside the same on kernel TCP sockets (-T s), 64-byte
# latency and 1 MiB bandwidth. With --mpi-only, Open MPI's two ranks (tests/bench/mpi_bench.c: a
# 1-byte ping-pong, MPI_Sendrecv of 64 MiB and of 1 MiB each way) over iwx (pml cm, mtl
# ofi, verbs;ofi_rxm, under iwx exec) beside a TCP socket's ping-pong and iperf3's one
# stream. With --plot, perftest's
# -a sweep (2 B to 8 MiB) of ib_write_bw, ib_read_bw and ib_send_bw over iwx, as a
# gnuplot PNG (docs/bench-perftest.png).
#
#   scripts/bench-perftest.sh              # 3 runs of 3 s: about 6 minutes
#   scripts/bench-perftest.sh -n 5 -t 5 --plot
#   scripts/bench-perftest.sh --srq-only     # about 30 s
#   scripts/bench-perftest.sh --fabric-only  # about 30 s
#   scripts/bench-perftest.sh --rsockets-only  # about 30 s
#   scripts/bench-perftest.sh --latency-only   # about a minute
#   scripts/bench-perftest.sh --mpi-only       # about a minute
#
# Namespace a (clients, its iwxd) runs on CPU 0, b (servers, its iwxd) on CPU 1. Every
# step is bounded by timeout(1); on any exit the daemons and namespaces this script made
# go, by the PIDs and names it recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit "${1:-0}"
}

runs=3 secs=3 plot= srq_only= fabric_only= rs_only= lat_only= mpi_only=
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=${2:-}; shift 2 || usage 2 ;;
	-t) secs=${2:-}; shift 2 || usage 2 ;;
	--plot) plot=docs/bench-perftest.png; shift ;;
	--srq-only) srq_only=1; shift ;;
	--fabric-only) fabric_only=1; shift ;;
	--rsockets-only) rs_only=1; shift ;;
	--latency-only) lat_only=1; shift ;;
	--mpi-only) mpi_only=1; shift ;;
	-h | --help) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done

ns_a=iwxp-$$-a ns_b=iwxp-$$-b
A=192.0.2.1 B=192.0.2.2
iwx=build/iwx iwxd=build/iwxd verbs=build/bench/bench_verbs
daemons=()
out=$(mktemp -d /tmp/iwx-bench-perftest-XXXXXX)
cleanup() {
	for p in "${daemons[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	ip netns del "$ns_a" 2>/dev/null || true
	ip netns del "$ns_b" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
die() { echo "bench-perftest: $*" >&2; exit 1; }

for f in "$iwx" "$iwxd" "$verbs" build/dropin/libibverbs.so.1; do
	[ -e "$f" ] || die "$f is missing: make all build/bench/bench_verbs"
done
command -v ib_write_bw >/dev/null || die "perftest is not installed (scripts/install-deps.sh)"
[ -z "$fabric_only" ] || command -v fi_pingpong >/dev/null ||
	die "fi_pingpong is not installed (scripts/install-deps.sh: libfabric-bin)"
[ -z "$mpi_only" ] || { command -v mpirun >/dev/null && [ -x build/bench/mpi_bench ] &&
	command -v iperf3 >/dev/null; } ||
	die "--mpi-only needs Open MPI and iperf3 (scripts/install-deps.sh) and build/bench/mpi_bench (make)"
iwxd_args=()
[ -z "$fabric_only" ] || iwxd_args=(--settle-ms 0)

ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "ip$$a" netns "$ns_a" type veth peer name "ip$$b" netns "$ns_b"
ip -n "$ns_a" addr add "$A/24" dev "ip$$a"
ip -n "$ns_b" addr add "$B/24" dev "ip$$b"
for x in a b; do
	ns=ns_$x
	ip -n "${!ns}" link set "ip$$$x" up
	ip -n "${!ns}" link set lo up
done

# commands, not functions: what goes to the background is then the process itself
in_a=(ip netns exec "$ns_a" taskset -c 0)
in_b=(ip netns exec "$ns_b" taskset -c 1)
"${in_a[@]}" "$iwxd" "${iwxd_args[@]}" -s "$out/a.sock" >"$out/iwxd-a.log" 2>&1 &
daemons+=($!)
"${in_b[@]}" "$iwxd" "${iwxd_args[@]}" -s "$out/b.sock" >"$out/iwxd-b.log" 2>&1 &
daemons+=($!)
for _ in $(seq 50); do [ -S "$out/a.sock" ] && [ -S "$out/b.sock" ] && break; sleep 0.1; done

# perftest NAME SERVER-ARGS -- CLIENT-ARGS: its client's output in $out/pt.out
perftest() {
	local t=$1 spid
	shift
	"${in_b[@]}" timeout $((secs + 60)) "$iwx" exec -s "$out/b.sock" -- "$t" "$@" >"$out/pt.srv" 2>&1 &
	spid=$!
	sleep 0.5
	"${in_a[@]}" timeout $((secs + 60)) "$iwx" exec -s "$out/a.sock" -- "$t" "$@" "$B" >"$out/pt.out" 2>&1 ||
		{ cat "$out/pt.out" >&2; die "$t $*: the client failed"; }
	wait "$spid" || { cat "$out/pt.srv" >&2; die "$t $*: the server failed"; }
}

# bench MODE ARGS...: bench_verbs' client line in $out/bv.out
bench() {
	local spid
	"${in_b[@]}" timeout $((secs + 60)) "$verbs" -s -a "$B" -p 7301 -D "$out/b.sock" -A 256M \
		>"$out/bv.srv" 2>&1 &
	spid=$!
	sleep 0.3
	"${in_a[@]}" timeout $((secs + 60)) "$verbs" -c -a "$B" -p 7301 -D "$out/a.sock" "$@" -t "$secs" \
		>"$out/bv.out" 2>"$out/bv.err" || { cat "$out/bv.err" >&2; die "bench_verbs $*: failed"; }
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
}

# perftest's average bandwidth in Gb/s, of the row for size $1
pt_gbps() { awk -v s="$1" '$1 == s { v = $4 } END { print v }' "$out/pt.out"; }
bv() { tr ' ' '\n' <"$out/bv.out" | sed -n "s/^$1=//p"; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# alternate MEASURE X Y: RUNS rounds of MEASURE X and MEASURE Y, their order swapped each
# round; MEASURE W appends its figure to $out/W
alternate() {
	local fn=$1 x=$2 y=$3 which r
	: >"$out/$x" && : >"$out/$y"
	for r in $(seq "$runs"); do
		for which in $( [ $((r % 2)) -eq 1 ] && echo "$x $y" || echo "$y $x"); do
			"$fn" "$which"
		done
	done
}

# row LABEL X Y: a table row of alternate's figures: the medians, Y / X, and the runs
row() {
	local x y
	x=$(median "$out/$2") y=$(median "$out/$3")
	echo "| $1 | $x | $y | $(ratio "$y" "$x") | $(tr '\n' ' ' <"$out/$2"); $(tr '\n' ' ' <"$out/$3") |"
}

# 64 KiB Sends, 8 outstanding, one QP, into the QP's own receive queue (p) and into an SRQ
# (s): what the SRQ costs a message (iwxd takes each receive as its Send begins)
srq_send() {
	perftest ib_send_bw -R -s 65536 -D "$secs" --report_gbits -t 8 $( [ "$1" = s ] && echo --use-srq)
	pt_gbps 65536 >>"$out/$1"
}

srq_compare() {
	echo
	echo "| 64 KiB Sends, 8 outstanding | own receive queue (Gb/s) | SRQ, --use-srq (Gb/s) | SRQ / own | runs (own; SRQ) |"
	echo "| --- | --- | --- | --- | --- |"
	alternate srq_send p s
	row "perftest ib_send_bw -R" p s
}

# 64-byte one-way latency: ib_send_lat's t_avg (p) and fi_pingpong's usec/xfer (f, a round
# trip's half), 10000 each
fabric_lat() {
	if [ "$1" = p ]; then
		perftest ib_send_lat -R -s 64 -n 10000
		awk '$1 == 64 { print $6 }' "$out/pt.out" >>"$out/p"
	else
		perftest fi_pingpong -p verbs -e msg -S 64 -I 10000
		awk '$1 == 64 { print $7 }' "$out/pt.out" >>"$out/f"
	fi
}

fabric_compare() {
	echo
	echo "| 64 bytes, 10000 ping-pongs | ib_send_lat -R t_avg (µs) | fi_pingpong -p verbs -e msg usec/xfer (µs) | fi_pingpong / ib_send_lat | runs (ib_send_lat; fi_pingpong) |"
	echo "| --- | --- | --- | --- | --- |"
	alternate fabric_lat p f
	row "64 B" p f
}

# rstream TEST-ARGS: its client's result line in $out/pt.out (the server in b)
rstream_pair() {
	local spid
	"${in_b[@]}" timeout 60 "$iwx" exec -s "$out/b.sock" -- rstream "$@" >"$out/pt.srv" 2>&1 &
	spid=$!
	sleep 0.5
	"${in_a[@]}" timeout 60 "$iwx" exec -s "$out/a.sock" -- rstream -s "$B" "$@" >"$out/pt.out" 2>&1 ||
		{ cat "$out/pt.out" >&2; die "rstream $*: the client failed"; }
	wait "$spid" || { cat "$out/pt.srv" >&2; die "rstream $*: the server failed"; }
}

# rstream on kernel TCP sockets (s, -T s) and over iwx's rsockets (i): usec/xfer for 64
# bytes (10000 ping-pongs), Gb/sec for 1 MiB (200 transfers)
rstream_lat() {
	rstream_pair -S 64 -C 1 -I 10000 $( [ "$1" = s ] && echo -T s)
	awk '$1 == "custom" { print $8 }' "$out/pt.out" >>"$out/$1"
}

rstream_bw() {
	rstream_pair -S 1048576 -C 200 $( [ "$1" = s ] && echo -T s)
	awk '$1 == "custom" { print $7 }' "$out/pt.out" >>"$out/$1"
}

rsockets_compare() {
	echo
	echo "| rstream | on TCP sockets (-T s) | over iwx's rsockets | iwx / TCP | runs (TCP; iwx) |"
	echo "| --- | --- | --- | --- | --- |"
	alternate rstream_lat s i
	row "64 B, µs per transfer" s i
	alternate rstream_bw s i
	row "1 MiB, Gb/s" s i
}

# an 8-byte ping-pong on a TCP socket (bench_verbs -m tcp-pingpong): its line in $out/bv.out
tcp_pingpong() {
	local spid
	"${in_b[@]}" timeout $((secs + 30)) "$verbs" -s -a "$B" -p 7302 -m tcp-pingpong >"$out/bv.srv" 2>&1 &
	spid=$!
	sleep 0.3
	"${in_a[@]}" timeout $((secs + 30)) "$verbs" -c -a "$B" -p 7302 -m tcp-pingpong -t "$secs" \
		>"$out/bv.out" 2>"$out/bv.err" || die "tcp-pingpong failed"
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
}

# 8-byte one-way latency: perftest's ib_send_lat, ib_write_lat, ib_read_lat and (RFC 7306)
# ib_atomic_lat (typical, and its 99th percentile: a poller that starves its iwxd shows
# there), beside half the median round trip of a Send ping-pong through libiwx and of one
# on a TCP socket
latency_compare() {
	local t mode name size
	echo
	echo "| 8 bytes | one-way latency, median of runs (µs) | 99th percentile, median of runs (µs) | runs (typical; 99th) |"
	echo "| --- | --- | --- | --- |"
	for t in send write read atomic; do
		: >"$out/l" && : >"$out/l99"
		size="-s 8"
		[ $t != atomic ] || size=	# an atomic's 8 bytes are its only size
		for _ in $(seq "$runs"); do
			# shellcheck disable=SC2086
			perftest "ib_${t}_lat" -R $size -n 20000
			awk '$1 == 8 { print $5 }' "$out/pt.out" >>"$out/l"	# t_typical
			awk '$1 == 8 { print $8 }' "$out/pt.out" >>"$out/l99"	# 99% percentile
		done
		echo "| perftest ib_${t}_lat over iwx (typical) | $(median "$out/l") | $(median "$out/l99") |" \
			"$(tr '\n' ' ' <"$out/l"); $(tr '\n' ' ' <"$out/l99") |"
	done
	for mode in pingpong tcp-pingpong; do
		: >"$out/l" && : >"$out/l99"
		for _ in $(seq "$runs"); do
			if [ $mode = pingpong ]; then
				bench -m pingpong -S 8
			else
				tcp_pingpong
			fi
			awk -v r="$(bv rtt_us_median)" 'BEGIN { printf "%.2f\n", r / 2 }' >>"$out/l"
			awk -v r="$(bv rtt_us_p99)" 'BEGIN { printf "%.2f\n", r / 2 }' >>"$out/l99"
		done
		name=$([ $mode = pingpong ] && echo "Send ping-pong through libiwx (bench_verbs), half the round trip" ||
			echo "ping-pong on a TCP socket, half the round trip")
		echo "| $name | $(median "$out/l") | $(median "$out/l99") | $(tr '\n' ' ' <"$out/l"); $(tr '\n' ' ' <"$out/l99") |"
	done
}

# mpi_run: mpi_bench's two ranks over iwx, 0 in a and 1 in b (scripts/netns-rsh),
# under iwx exec, pml cm, mtl ofi, verbs;ofi_rxm; its line in $out/mpi.out. (Open MPI's own
# TCP BTL is no reference here: both namespaces have one host name, and its 1-byte half
# round trip is 4 ms.)
mpi_run() {
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "${in_a[@]}" \
		env IWX_SOCKET="$out/a.sock" IWX_NETNS_HOSTS="$A $ns_a $out/a.sock 0;$B $ns_b $out/b.sock 1" \
		timeout 120 mpirun -np 2 --host "$A,$B" --mca plm_rsh_agent "$PWD/scripts/netns-rsh" \
		--mca oob_tcp_if_include 192.0.2.0/24 --mca btl_tcp_if_include 192.0.2.0/24 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include 'verbs;ofi_rxm' \
		"$iwx" exec -- build/bench/mpi_bench 3 >"$out/mpi.out" 2>&1 ||
		{ cat "$out/mpi.out" >&2; die "mpirun failed"; }
}

# iperf3's one stream from a to b, in MB/s (its receiver's figure)
iperf_mbs() {
	local spid
	"${in_b[@]}" timeout 30 iperf3 -s -1 -B "$B" >"$out/ip.srv" 2>&1 &
	spid=$!
	sleep 0.5
	"${in_a[@]}" timeout 30 iperf3 -c "$B" -t "$secs" -J >"$out/ip.out" 2>&1 || die "iperf3 failed"
	wait "$spid" || true
	awk -F'[:,]' '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ { printf "%.0f\n", $2 / 8e6; exit }' \
		"$out/ip.out"
}

# mpi_row IWX-FIGURE TCP-FIGURE LABEL: a row of mpi_compare's table
mpi_row() {
	local i t
	i=$(median "$out/m.$1") t=$(median "$out/m.$2")
	echo "| $3 | $i | $t | $(ratio "$i" "$t") | $(tr '\n' ' ' <"$out/m.$1"); $(tr '\n' ' ' <"$out/m.$2") |"
}

# Open MPI over iwx beside TCP: its 1-byte half round trip beside a TCP socket's (8 bytes),
# its 64 MiB and 1 MiB MPI_Sendrecv beside iperf3's one stream
mpi_compare() {
	local k
	for k in half_rtt_us sendrecv_64m_mbs sendrecv_1m_mbs tcp iperf; do : >"$out/m.$k"; done
	for _ in $(seq "$runs"); do
		mpi_run
		for k in half_rtt_us sendrecv_64m_mbs sendrecv_1m_mbs; do
			tr ' ' '\n' <"$out/mpi.out" | sed -n "s/^$k=//p" >>"$out/m.$k"
		done
		tcp_pingpong
		awk -v r="$(bv rtt_us_median)" 'BEGIN { printf "%.2f\n", r / 2 }' >>"$out/m.tcp"
		iperf_mbs >>"$out/m.iperf"
	done
	echo
	echo "| Open MPI, 2 ranks over iwx (pml cm, mtl ofi) | over iwx | TCP | iwx / TCP | runs (iwx; TCP) |"
	echo "| --- | --- | --- | --- | --- |"
	mpi_row half_rtt_us tcp "1 B ping-pong, half round trip, µs (TCP: an 8-byte socket ping-pong)"
	mpi_row sendrecv_64m_mbs iperf "MPI_Sendrecv 64 MiB each way, MB/s one way (TCP: iperf3's one stream)"
	mpi_row sendrecv_1m_mbs iperf "MPI_Sendrecv 1 MiB each way, MB/s one way (TCP: iperf3's one stream)"
}

if [ -n "$mpi_only" ]; then
	echo "bench-perftest: $runs runs, one veth pair, Open MPI $(mpirun --version | head -1 | awk '{ print $NF }')"
	mpi_compare
	exit 0
fi

if [ -n "$lat_only" ]; then
	echo "bench-perftest: $runs runs, one veth pair"
	latency_compare
	exit 0
fi

if [ -n "$rs_only" ]; then
	echo "bench-perftest: $runs runs, one veth pair"
	rsockets_compare
	exit 0
fi

if [ -n "$fabric_only" ]; then
	echo "bench-perftest: $runs runs, one veth pair, iwxd --settle-ms 0"
	fabric_compare
	exit 0
fi

if [ -n "$srq_only" ]; then
	echo "bench-perftest: $runs runs of $secs s, one veth pair"
	srq_compare
	exit 0
fi

echo "bench-perftest: $runs runs of $secs s, one veth pair, 8 outstanding"
echo
echo "| operation | size | perftest over iwx (Gb/s) | bench_verbs (Gb/s) | perftest / bench_verbs | runs (perftest; bench_verbs) |"
echo "| --- | --- | --- | --- | --- | --- |"
for size in 65536 1048576 4194304; do
	for op in write read send; do
		: >"$out/p" && : >"$out/v"
		for r in $(seq "$runs"); do
			depth=(-t 8)
			[ $op = read ] && depth+=(-o 8)
			for which in $( [ $((r % 2)) -eq 1 ] && echo "pt bv" || echo "bv pt"); do
				if [ "$which" = pt ]; then
					perftest "ib_${op}_bw" -R -s "$size" -D "$secs" --report_gbits "${depth[@]}"
					pt_gbps "$size" >>"$out/p"
				else
					bench -m "$op" -S "$size" -d 8
					bv gbps >>"$out/v"
				fi
			done
		done
		p=$(median "$out/p") v=$(median "$out/v")
		echo "| RDMA ${op^} | $((size >> 10)) KiB | $p | $v | $(ratio "$p" "$v") |" \
			"$(tr '\n' ' ' <"$out/p"); $(tr '\n' ' ' <"$out/v") |"
	done
done

srq_compare

latency_compare
echo

[ -n "$plot" ] || exit 0
command -v gnuplot >/dev/null || die "gnuplot is not installed (scripts/install-deps.sh)"
for op in write read send; do
	perftest "ib_${op}_bw" -R -a -n 200 --report_gbits -t 8 $( [ $op = read ] && echo -o 8)
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 { print $1, $4 }' "$out/pt.out" >"$out/sweep-$op"
done
gnuplot <<EOF
set terminal pngcairo size 900,520
set output "$plot"
set title "Unmodified perftest over iwx (iwx exec), one veth pair, 8 outstanding"
set xlabel "message size (bytes)"
set ylabel "bandwidth (Gb/s)"
set logscale x 2
set format x "2^{%L}"
set key top left
set grid
plot "$out/sweep-write" using 1:2 with linespoints title "ib\\\\_write\\\\_bw -R", \
     "$out/sweep-read" using 1:2 with linespoints title "ib\\\\_read\\\\_bw -R", \
     "$out/sweep-send" using 1:2 with linespoints title "ib\\\\_send\\\\_bw -R"
EOF
echo
echo "plot: $plot"
