#!/bin/bash
# The Debian packages of `make deb` installed into a fresh root and removed from it: a
# copy-on-write root (overlayfs: this machine's / below, an empty tmpfs above, in a mount
# namespace of its own), where dpkg installs iwx, libiwx0, libiwx-dev and iwx-dropin with
# their maintainer scripts, checking their dependencies against what this machine has.
# From that root: iwxd --help and iwx --help run, /etc/default/iwxd is a conffile, the
# unit is where systemd looks (not enabled), the packaged iwxd serves `iwx exec
# ibv_devinfo` through the packaged drop-ins, a program builds with pkg-config and runs
# on the packaged libiwx.so.0, man finds the pages. Then dpkg --purge, and the upper
# layer, which holds every file that changed, must hold dpkg's bookkeeping alone. Where
# the host has these packages (any version), the fresh root purges them first, and what
# that changed is no part of the verdict.
# The machine's own / is never written; the root's processes live in a PID and network
# namespace of their own and end with it. usage (root): deb.sh DEB_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DEB_DIR" >&2; exit 2; }
debs=$(cd "$1" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "deb.sh: needs root (a mount namespace, overlayfs, chroot)" >&2; exit 1; }
pkgs=(iwx libiwx0 libiwx-dev iwx-dropin)
files=()
for p in "${pkgs[@]}"; do
	f=$(ls "$debs/${p}"_*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "deb.sh: no ${p}_*.deb in $debs (make deb)" >&2; exit 1; }
	files+=("/mnt/$(basename "$f")")
done
src=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d /tmp/iwx-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# everything below runs in namespaces of its own: its mounts, processes and sockets go with it
unshare --mount --propagation private --net --pid --fork \
	bash -euo pipefail -s "$tmp" "$debs" "$src" "${files[*]}" <<'EOF'
tmp=$1 debs=$2 src=$3
read -ra files <<< "$4"
mount -t tmpfs tmpfs "$tmp"
mkdir "$tmp/upper" "$tmp/work" "$tmp/root"
# the lower layer is / alone, without the file systems mounted on it
mount -t overlay overlay -o "lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work" "$tmp/root"
root=$tmp/root
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"	# no /run/systemd/system: the scripts leave systemd alone
mount -t tmpfs tmpfs "$root/tmp"
mount --bind -o ro "$debs" "$root/mnt"
cp "$src/use_libiwx.c" "$root/tmp/"
inroot() { chroot "$root" "$@"; }
fail() { echo "deb.sh: $*" >&2; exit 1; }

# What changed: every entry of the upper layer that is new or, but for directories, modified;
# of those only dpkg's database and log, the caches of ldconfig and man-db may be new.
changed() {
	(cd "$tmp/upper" && find . -mindepth 1 ! \( -type d -exec test -d "/{}" \; \) -print) |
		sed 's|^\./||' | grep -Ev '^(var/lib/dpkg(/.*)?|var/log(/.*)?|var/cache/(man|ldconfig)(/.*)?|etc/ld\.so\.cache)$' |
		sort || true
}
# The host may have these packages, of this version or another: the fresh root starts
# without them, and what their purge changed there (whiteouts) is not the test's to judge.
for p in iwx-dropin libiwx-dev libiwx0 iwx; do
	st=$(inroot dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	if [[ $st == [a-z]i* ]]; then
		echo "  the host has $p: purged in the fresh root first"
		inroot dpkg --purge "$p" > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge $p (the host's)"; }
	fi
done
before=$(changed)

echo "  install: ${files[*]##*/}"
inroot dpkg -i "${files[@]}" > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i failed"; }
for p in iwx libiwx0 libiwx-dev iwx-dropin; do
	inroot dpkg-query -W -f='${Status}\n' "$p" | grep -qx 'install ok installed' || fail "$p is not installed"
done
# (grep -q after a pipe would end the writer early: pipefail)
out=$(inroot iwxd --help) && grep -q '^usage: iwxd' <<< "$out" || fail "iwxd --help from the package"
out=$(inroot iwx --help) && grep -q '^usage: iwx' <<< "$out" || fail "iwx --help from the package"
[ "$(inroot dpkg-query -W -f='${Conffiles}' iwx | awk '{print $1}')" = /etc/default/iwxd ] ||
	fail "/etc/default/iwxd is not iwx's conffile"
inroot test -f /lib/systemd/system/iwxd.service || fail "no /lib/systemd/system/iwxd.service"
grep -q '^ExecStart=/usr/sbin/iwxd ' "$root/lib/systemd/system/iwxd.service" || fail "the unit does not start /usr/sbin/iwxd"
# --no-enable: installed, not enabled
inroot test ! -e /etc/systemd/system/multi-user.target.wants/iwxd.service || fail "the package enabled iwxd.service"
dir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/iwx
out=$(inroot iwx exec --help) && grep -qF "then in $dir." <<< "$out" || fail "iwx exec does not look for the drop-ins in $dir"
inroot iwxd -s /run/iwxd.sock > "$tmp/iwxd.log" 2>&1 &
iwxd=$!
for _ in $(seq 200); do [ -S "$root/run/iwxd.sock" ] && break; sleep 0.1; done	# bounded against a hang (20 s), not a pace
inroot iwx exec -s /run/iwxd.sock -- ibv_devinfo > "$tmp/devinfo" 2>&1 &&
	grep -q 'hca_id:.*iwx0' "$tmp/devinfo" ||
	{ cat "$tmp/devinfo" "$tmp/iwxd.log"; fail "iwx exec ibv_devinfo on the packaged iwxd and drop-ins"; }
kill "$iwxd"; wait "$iwxd" || true
inroot sh -c 'cc -std=gnu11 -Wall -Werror /tmp/use_libiwx.c -o /run/use_libiwx $(pkg-config --cflags --libs libiwx) &&
	ldd /run/use_libiwx | grep -Eq "libiwx.so.0 => (/usr)?/lib/" && /run/use_libiwx > /dev/null' ||
	fail "a program built with pkg-config libiwx on the packaged library"
inroot man -w iwxd iwx libiwx > /dev/null || fail "man finds iwxd(8), iwx(8), libiwx(3)"

echo "  purge: iwx-dropin libiwx-dev libiwx0 iwx"
inroot dpkg --purge iwx-dropin libiwx-dev libiwx0 iwx > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge failed"; }
left=$(comm -13 <(echo "$before") <(changed))
[ -z "$left" ] || { echo "$left"; fail "the packages left these behind"; }
echo "  left nothing behind"
EOF
echo "deb.sh: 1 passed, 0 failed"
