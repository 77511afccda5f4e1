#!/bin/sh
# `make install PREFIX=DIR` after a plain `make`: the installed iwx finds the drop-ins it
# was installed with (DIR/lib/iwx), not the default's, and rdma-core's ibv_devinfo runs
# through them against the installed iwxd, run as this user on a socket of its own.
# usage: prefix.sh DIR (DIR absolute: installed there by the caller)
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
sock=$dir/iwxd.sock
fail() { echo "prefix.sh: $*" >&2; exit 1; }

out=$("$dir/bin/iwx" exec -s /nonexistent/iwxd.sock -- true 2>&1) && fail "iwx exec ran without an iwxd"
case $out in
*"no iwxd at /nonexistent/iwxd.sock"*) ;;	# the drop-ins were found: it got as far as the socket
*) fail "the installed iwx exec did not find $dir/lib/iwx: $out" ;;
esac
command -v ibv_devinfo >/dev/null || { echo "prefix.sh: no ibv_devinfo (ibverbs-utils): its run skipped"; exit 0; }

"$dir/sbin/iwxd" -s "$sock" --sctp-port 0 2>"$dir/iwxd.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 400); do [ -S "$sock" ] && break; sleep 0.05; done	# bounded against a hang (20 s), not a pace
[ -S "$sock" ] || { cat "$dir/iwxd.log"; fail "the installed iwxd did not serve $sock"; }
release=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
out=$(timeout 30 "$dir/bin/iwx" exec -s "$sock" -- ibv_devinfo 2>&1) || fail "ibv_devinfo: $out"
echo "$out" | grep -q "hca_id:	iwx0" || fail "ibv_devinfo shows no iwx0: $out"
echo "$out" | grep -q "fw_ver:				iwx $release" || fail "ibv_devinfo's fw_ver is not iwx $release: $out"
