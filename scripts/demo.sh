#!/usr/bin/env bash
# The iwx demonstration, from a fresh clone (as root on Debian 12): install what is
# missing, build, then show iWARP on the wire. The library builds a realistic exchange
# (MPA set-up with RFC 6581 IRD/ORD, Sends, a segmented RDMA Write, a Read Request and
# its Response, a Terminate) into a pcap; our decoder and tshark's dissectors read it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
make -s all build/tests/unit

out=$(mktemp -d /tmp/iwx-demo-XXXXXX)
trap 'rm -rf "$out"' EXIT

echo
echo "== Building the exchange and checking it against tshark (tests/test_tshark.c)"
IWX_TSHARK_KEEP="$out" build/tests/unit --filter 'tshark/rev2_enhanced_crc' --verbose=0 2>&1 |
	tail -n 1
pcap="$out/rev2_enhanced_crc.pcap"

echo
echo "== iwx decode: our receive parser on that capture"
build/iwx decode "$pcap"

echo
echo "== tshark: the same frames through its iwarp_mpa and iwarp_ddp_rdmap dissectors"
tshark -r "$pcap" -o tcp.desegment_tcp_streams:TRUE \
	--disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp \
	-Y 'iwarp_mpa' -T fields -E header=y -E separator=/t \
	-e frame.number -e iwarp_mpa.rev -e iwarp_mpa.ulpdulength -e iwarp_mpa.crc_check \
	-e iwarp_rdma.opcode -e iwarp_ddp.last_flag -e iwarp_ddp.stag -e iwarp_ddp.tagged_offset \
	-e iwarp_ddp.qn -e iwarp_ddp.msn -e iwarp_ddp.mo 2>/dev/null |
	sed 's/iwarp_[a-z]*\.//g' |
	awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "") $i = "-"; print }' |
	column -t
echo
tshark -r "$pcap" -o tcp.desegment_tcp_streams:TRUE \
	--disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp \
	-V 2>/dev/null | grep -o 'Good CRC32\|Bad CRC32' | sort | uniq -c |
	sed 's/^/tshark CRC verdicts: /'
