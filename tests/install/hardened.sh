#!/bin/sh
# What `make install` put under ROOT (PREFIX=/usr) is built hardened, whatever CFLAGS
# said (the Makefile's HARDENING): the programs position-independent with stack canaries,
# iwxd's libc calls fortified, every ELF's GOT read-only and bound at start (RELRO, BIND_NOW).
# usage: hardened.sh ROOT
set -eu
[ $# -eq 1 ] || { echo "usage: $0 ROOT" >&2; exit 2; }
root=$1
fail=0
no() { echo "hardened.sh: $1: $2" >&2; fail=1; }

for elf in "$root"/usr/sbin/iwxd "$root"/usr/bin/iwx "$root"/usr/bin/iwx_rping \
	   "$root"/usr/lib/libiwx.so.0 "$root"/usr/lib/iwx/*.so.1; do
	[ -f "$elf" ] || { no "$elf" "not installed"; continue; }
	readelf -d "$elf" | grep -Eq 'FLAGS.*BIND_NOW|FLAGS_1.*NOW' || no "$elf" "not bound at start (BIND_NOW)"
	readelf -lW "$elf" | grep -q GNU_RELRO || no "$elf" "no RELRO segment"
done
for prog in "$root"/usr/sbin/iwxd "$root"/usr/bin/iwx "$root"/usr/bin/iwx_rping; do
	[ -f "$prog" ] || continue
	readelf -d "$prog" | grep -q 'FLAGS_1.*PIE' || no "$prog" "not a position-independent executable"
	nm -D "$prog" | grep -q ' __stack_chk_fail' || no "$prog" "no stack protector"
done
nm -D "$root"/usr/sbin/iwxd | grep -q ' __[a-z_]*_chk@' || no iwxd "no fortified libc call"
[ "$fail" = 0 ] || exit 1
echo "hardened.sh: iwxd, iwx, iwx_rping, libiwx and the drop-ins: PIE, canaries, fortified, RELRO, BIND_NOW"
