#!/usr/bin/env bash
# Interoperability with a real peer: Linux's software iWARP driver (siw) and rdma-core's
# rping in a qemu guest (../shared/interop), against iwx's software engine (iwx_rping),
# both directions, CRC on and off, MPA revisions 1 and 2. Each exchange is captured on
# the bridge and must decode cleanly in `iwx decode` and, with CRC, as "Good CRC32" in tshark.
#
#   tests/interop/run.sh [BUILD_DIR]      (as root; the guest image is built and cached once)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
harness=$top/../shared/interop
rping=$build/iwx_rping
iwx=$build/iwx
count=3
passed=0 failed=0

if [ ! -x "$harness/run-peer.sh" ]; then
	echo "interop: no harness at $harness (../shared/interop beside the clone)"
	echo "0 passed, 1 failed"
	exit 1
fi
peer=$harness/run-peer.sh
out=$(mktemp -d /tmp/iwx-interop-XXXXXX)
cleanup() {
	"$peer" --down >/dev/null 2>&1 || true
	[ -n "${srv_pid:-}" ] && kill "$srv_pid" 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT

echo "interop: building the siw guest (cached after the first time)"
if ! bash "$harness/build-guest.sh" >"$out/build.log" 2>&1; then
	tail -20 "$out/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# check NAME PCAP CRC: the capture decodes, and with CRC every FPDU's CRC is good
check_capture() {
	local name=$1 pcap=$2 crc=$3 good bad
	if ! "$iwx" decode -q "$pcap" >"$out/$name.decode" 2>&1; then
		echo "  $name: iwx decode found errors:"; sed 's/^/    /' "$out/$name.decode"
		return 1
	fi
	good=$(tshark -r "$pcap" -V 2>/dev/null | grep -c 'Good CRC32')
	bad=$(tshark -r "$pcap" -V 2>/dev/null | grep -c 'Bad CRC32')
	if [ "$bad" -ne 0 ] || { [ "$crc" = on ] && [ "$good" -lt $((count * 6)) ]; } ||
		{ [ "$crc" = off ] && [ "$good" -ne 0 ]; }; then
		echo "  $name: tshark CRC verdicts: $good good, $bad bad (CRC $crc)"
		return 1
	fi
}

result() {
	if [ "$1" -eq 0 ]; then
		passed=$((passed + 1)); echo "  PASS $2"
	else
		failed=$((failed + 1)); echo "  FAIL $2"
	fi
}

# iwx client against a siw rping server in the guest
iwx_client() {
	local name=$1 siw=$2 crc=$3; shift 3
	local pcap=$out/$name.pcapng rc=0
	"$peer" -B -N 0 -T 120 -W 7174 -s "$siw" -c "$pcap" -- "rping -s -a 192.0.2.2 -v -C $count" \
		>"$out/$name.vm" 2>&1 || rc=1
	[ $rc -eq 0 ] && { ip netns exec iwpeer timeout 60 "$rping" -c -a 192.0.2.2 -C $count "$@" \
		>"$out/$name.out" 2>&1 || rc=1; }
	sleep 1
	"$peer" --stop >/dev/null 2>&1
	[ $rc -eq 0 ] && grep -q "iterations verified" "$out/$name.out" &&
		grep -aq "IWPEER-EXIT rc=0" /run/iwpeer/iwpeer/vm0.log || rc=1
	[ $rc -eq 0 ] && grep -q "CRC $crc" "$out/$name.out" || rc=1
	[ $rc -eq 0 ] && { check_capture "$name" "$pcap" "$crc" || rc=1; }
	[ $rc -ne 0 ] && { tail -5 "$out/$name.out" 2>/dev/null; grep -a "rping\|error\|EXIT" /run/iwpeer/iwpeer/vm0.log | tail -5; }
	result $rc "$name"
}

# a siw rping client in the guest against the iwx server in the namespace
siw_client() {
	local name=$1 siw=$2 crc=$3; shift 3
	local pcap=$out/$name.pcapng rc=0
	ip netns exec iwpeer true 2>/dev/null || "$peer" --stop >/dev/null 2>&1
	ip netns exec iwpeer timeout 90 "$rping" -s -a 192.0.2.1 -C $count "$@" >"$out/$name.out" 2>&1 &
	srv_pid=$!
	"$peer" -N 0 -T 90 -s "$siw" -c "$pcap" -- "rping -c -a 192.0.2.1 -v -C $count" \
		>"$out/$name.vm" 2>&1 || rc=1
	wait "$srv_pid" || rc=1
	srv_pid=
	"$peer" --stop >/dev/null 2>&1
	[ $rc -eq 0 ] && grep -q "iterations verified" "$out/$name.out" && grep -q "CRC $crc" "$out/$name.out" || rc=1
	[ $rc -eq 0 ] && { check_capture "$name" "$pcap" "$crc" || rc=1; }
	[ $rc -ne 0 ] && { tail -5 "$out/$name.out"; grep -a "ping data\|error\|EXIT" "$out/$name.vm" | tail -5; }
	result $rc "$name"
}

# the namespace and bridge exist once a VM has run; the server needs them first
"$peer" -N 0 -T 30 -- true >/dev/null 2>&1

echo "interop: iwx against siw (rping, $count iterations each)"
iwx_client iwx-client-rev2-crc "" on
iwx_client iwx-client-rev2-nocrc "" off --no-crc
# No iwx-client rev 1 case: siw 6.1 as a revision-1 Responder refuses every RDMA Read its
# application posts ("post send error -1" in rping), against siw itself just the same.
siw_client siw-client-rev2-crc "" on
siw_client siw-client-rev2-nocrc "" off --no-crc
siw_client siw-client-rev2-siw-asks-crc "mpa_crc_required=1" on --no-crc
siw_client siw-client-rev1 "mpa_version=1" on

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
