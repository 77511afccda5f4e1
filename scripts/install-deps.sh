#!/usr/bin/env bash
# Installs every build and test dependency of iwx with apt-get (Debian 12, as root).
# Idempotent: when every package is already installed it only checks and returns.
set -euo pipefail

packages=(
	build-essential make pkg-config
	clang llvm libclang-rt-14-dev   # BPF objects, libFuzzer and sanitizers
	libbpf-dev bpftool libxdp-dev xdp-tools libelf-dev zlib1g-dev
	libmnl-dev libisal-dev libpcap-dev libcriterion-dev
	libcap-dev                             # iwxd drops the capabilities it no longer needs
	tshark iproute2 iperf3 ethtool         # iperf3: scripts/bench.sh; ethtool: offloads off in tests
	gnuplot-nox                            # scripts/bench.sh --plot: the fast path's PNG
	libusrsctp-dev                         # DDP over SCTP: user-space SCTP (AF_CONN)
	libibverbs-dev librdmacm-dev           # rdma-core's headers: the drop-in libibverbs, librdmacm
	rdmacm-utils ibverbs-utils qperf perftest   # unmodified rdma-core programs the drop-ins run
	libfabric-bin                          # fi_info, fi_pingpong: libfabric's verbs provider on the drop-ins
	openmpi-bin libopenmpi-dev             # Open MPI's ranks over the drop-ins (mtl ofi, verbs;ofi_rxm)
	systemd man-db groff-base mandoc       # make check-install: systemd-analyze verify, man pages linted
	debhelper lintian                      # make deb: the Debian packages, checked by lintian
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
