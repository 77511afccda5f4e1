#!/usr/bin/env bash
# The iwx demonstration, from a fresh clone (as root on Debian 12): install what is
# missing, build, then RDMA over a veth pair between two network namespaces: an iwxd in
# each, and iwx_rping, a libiwx application, on both ends: MPA set-up with CRC, a Send,
# an RDMA Read and an RDMA Write of several megabytes each way, every byte verified, the
# fast path attached on both sides (BPF at TC ingress places the RDMA payload); then the
# same traffic as the wire saw it, through our decoder and through tshark's dissectors,
# and what the fast path placed; the same rping over SCTP (the DDP adaptation shim, SCTP
# in UDP between the daemons); last, Debian's own ibv_devinfo and rping, unmodified,
# through iwx exec (the drop-in libibverbs and librdmacm).
set -euo pipefail
cd "$(dirname "$0")/.."

size=$((8 << 20))
iterations=3
port=7174
ns_a=iwx-demo-a ns_b=iwx-demo-b
out=$(mktemp -d /tmp/iwx-demo-XXXXXX)
pids=()		# everything started in the background, stopped by PID on exit

cleanup() {
	local rc=$? f
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ "$rc" -ne 0 ]; then
		# what each part said, for the failure above
		for f in "$out"/*.log; do
			[ -s "$f" ] || continue
			echo "---- $(basename "$f") (last 30 lines)"
			tail -30 "$f"
		done
	fi
	ip netns del "$ns_a" 2>/dev/null || true
	ip netns del "$ns_b" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT

bash scripts/install-deps.sh
make -s all

echo
echo "== Two namespaces on a veth pair: $ns_a 192.0.2.1 <-> $ns_b 192.0.2.2"
ip netns del "$ns_a" 2>/dev/null || true
ip netns del "$ns_b" 2>/dev/null || true
ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add iwxdemo-a netns "$ns_a" type veth peer name iwxdemo-b netns "$ns_b"
ip -n "$ns_a" addr add 192.0.2.1/24 dev iwxdemo-a
ip -n "$ns_b" addr add 192.0.2.2/24 dev iwxdemo-b
for ns in "$ns_a" "$ns_b"; do
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "iwxdemo-${ns##*-}" up
	# segmentation offload off: the capture then shows the TCP segments a wire would carry
	ip netns exec "$ns" ethtool -K "iwxdemo-${ns##*-}" tso off gso off >/dev/null
done
# each end receiving on a CPU of its own (RPS), as a second host's NIC would: else a veth
# receives on the sender's CPU, and the fast path's copy with it ('iwx attach' warns)
if [ "$(nproc)" -ge 2 ]; then
	ip netns exec "$ns_a" sh -c "echo 1 > /sys/class/net/iwxdemo-a/queues/rx-0/rps_cpus"
	ip netns exec "$ns_b" sh -c "echo 2 > /sys/class/net/iwxdemo-b/queues/rx-0/rps_cpus"
fi

# start_iwxd NS NAME: an iwxd serving $out/NAME.sock in NS, logging to $out/NAME.log
start_iwxd() {
	local ns=$1 name=$2 pid
	# both ends are iwx: no siw Responder to hold the first FPDU for (--settle-ms)
	ip netns exec "$ns" build/iwxd -s "$out/$name.sock" -v --settle-ms 0 \
		>"$out/$name.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do
		grep -q "serving" "$out/$name.log" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "iwxd in $ns did not start" >&2
	return 1
}

echo "== iwxd in each namespace, serving libiwx applications there"
start_iwxd "$ns_a" iwxd-a
start_iwxd "$ns_b" iwxd-b

echo "== the fast path at TC ingress of each namespace's veth end, and SCTP through AF_XDP (iwx attach --sctp)"
build/iwx attach dev iwxdemo-a --sctp -s "$out/iwxd-a.sock" | sed 's/^/   a: /'
build/iwx attach dev iwxdemo-b --sctp -s "$out/iwxd-b.sock" | sed 's/^/   b: /'

# capture the whole exchange on the client's side of the veth
ip netns exec "$ns_a" dumpcap -q -B 64 -i iwxdemo-a -f "tcp port $port" -w "$out/demo.pcap" 2>/dev/null &
dumpcap=$!
pids+=("$dumpcap")
for _ in $(seq 50); do [ -s "$out/demo.pcap" ] && break; sleep 0.1; done

echo "== iwx_rping server in $ns_b, client in $ns_a: $iterations x $((size >> 20)) MiB"
ip netns exec "$ns_b" timeout 60 build/iwx_rping -s -a 192.0.2.2 -p "$port" -S "$size" \
	-C "$iterations" --socket "$out/iwxd-b.sock" >"$out/server.log" 2>&1 &
server=$!
pids+=("$server")
# the listening socket is iwxd's, in the server's namespace
for _ in $(seq 100); do
	[ -n "$(ip netns exec "$ns_b" ss -Hltn "sport = :$port")" ] && break
	kill -0 "$server" 2>/dev/null || break
	sleep 0.05
done
ip netns exec "$ns_a" timeout 60 build/iwx_rping -c -a 192.0.2.2 -p "$port" -S "$size" \
	-C "$iterations" --socket "$out/iwxd-a.sock" 2>&1 | sed 's/^/client: /'
wait "$server"
sed 's/^/server: /' "$out/server.log"
sleep 0.5
kill "$dumpcap" 2>/dev/null || true
wait "$dumpcap" 2>/dev/null || true

echo
echo "== The wire, through iwx decode (our receive parser)"
build/iwx decode "$out/demo.pcap" | sed -n '1,3p;4,12p'
echo "   ..."
build/iwx decode -q "$out/demo.pcap" | tail -2

echo
echo "== The wire, through tshark's iwarp_mpa and iwarp_ddp_rdmap dissectors"
tshark -r "$out/demo.pcap" -Y iwarp_rdma.opcode -T fields -e iwarp_rdma.opcode 2>/dev/null | tr , "\n" |
	sort | uniq -c | awk '{
		split("RDMA-Write Read-Request Read-Response Send", name, " ")
		op = $2; sub(/^0x0*/, "", op)		# opcodes 0-3: plain digits
		printf "   %7d %s\n", $1, name[op + 1] }'
tshark -r "$out/demo.pcap" -V 2>/dev/null | grep -o 'Good CRC32\|Bad CRC32' | sort | uniq -c |
	sed 's/^/   CRC verdicts: /'

echo
echo "== iwx status of the client's iwxd ($ns_a)"
build/iwx status -s "$out/iwxd-a.sock" | sed 's/^/   /'

echo
echo "== What the fast path placed: iwx stats in $ns_a (Read Responses) and $ns_b (Writes)"
build/iwx stats -s "$out/iwxd-a.sock" | sed 's/^/   a: /'
build/iwx stats -s "$out/iwxd-b.sock" | sed 's/^/   b: /'

echo
echo "== The same over SCTP: the DDP adaptation shim, SCTP in UDP between the iwxds through"
echo "   AF_XDP sockets (iwx attach --sctp opened them), Writes and Read Responses placed from the frames"
ip netns exec "$ns_b" timeout 30 build/iwx_rping -s -a 192.0.2.2 -p "$port" -S "$size" -C 2 --sctp \
	--socket "$out/iwxd-b.sock" >"$out/server-sctp.log" 2>&1 &
server=$!
pids+=("$server")
# an SCTP listener is iwxd's alone (no kernel socket to see): try until it is there
for _ in $(seq 20); do
	ip netns exec "$ns_a" timeout 30 build/iwx_rping -c -a 192.0.2.2 -p "$port" -S "$size" -C 2 \
		--sctp --socket "$out/iwxd-a.sock" >"$out/client-sctp.log" 2>&1 && break
	sleep 0.1
done
sed 's/^/   client: /' "$out/client-sctp.log"
wait "$server"
for side in a b; do
	build/iwx status -s "$out/iwxd-$side.sock" | sed -n '/^DDP over SCTP/,$p' | sed "s/^/   $side: /"
done

echo
echo "== Unmodified rdma-core programs over iwx (iwx exec): Debian's ibv_devinfo and rping"
ip netns exec "$ns_a" build/iwx exec -s "$out/iwxd-a.sock" -- ibv_devinfo | sed -n '1,3p;/state:/p' |
	sed 's/^/   /'
ip netns exec "$ns_b" timeout 30 build/iwx exec -s "$out/iwxd-b.sock" -- \
	rping -s -a 192.0.2.2 -p 7175 -V -C 3 >"$out/rping-server.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 100); do
	[ -n "$(ip netns exec "$ns_b" ss -Hltn "sport = :7175")" ] && break
	sleep 0.05
done
ip netns exec "$ns_a" timeout 30 build/iwx exec -s "$out/iwxd-a.sock" -- \
	rping -c -a 192.0.2.2 -p 7175 -v -V -C 3 2>&1 | grep 'ping data' | sed 's/^/   rping -c: /'
wait "$server"
echo "   (rping -V: both sides verified every byte; 'iwx exec -- ib_write_bw -R' runs perftest the same way)"
