#!/bin/sh
# libiwx.so as installed: it needs libc alone, and exports exactly the functions the
# installed iwx.h declares (its static inline ones aside; gcc -aux-info lists them), each
# under a version of lib/client/libiwx.map, nothing of the IPC, the utilities or the core.
# usage: exports.sh LIBIWX_SO INCLUDEDIR
set -eu
[ $# -eq 2 ] || { echo "usage: $0 LIBIWX_SO INCLUDEDIR" >&2; exit 2; }
so=$1 inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

if readelf -d "$so" | grep NEEDED | grep -v 'libc\.so'; then
	echo "exports.sh: libiwx.so needs more than libc" >&2; fail=1
fi

echo '#include <iwx/iwx.h>' > "$tmp/api.c"
${CC:-cc} -std=gnu11 -I"$inc" -aux-info "$tmp/aux" -fsyntax-only "$tmp/api.c"
grep "$inc/iwx/" "$tmp/aux" | grep -v '\*/ static ' |
	sed -E 's/.*[ *](iwx_[a-z0-9_]+) \(.*/\1/' | sort > "$tmp/declared"
[ -s "$tmp/declared" ] || { echo "exports.sh: iwx.h declares no call?" >&2; exit 1; }

# "name@@VERSION" for a default version, "name" for one without any
nm -D --defined-only "$so" | awk '{ print $3 }' | grep -v '^LIBIWX_' | sort > "$tmp/exported"
sed 's/@.*//' "$tmp/exported" > "$tmp/names"
if ! cmp -s "$tmp/declared" "$tmp/names"; then
	echo "exports.sh: exported (>) against declared in iwx.h (<):" >&2
	diff "$tmp/declared" "$tmp/names" | grep '^[<>]' >&2; fail=1
fi
unversioned=$(grep -cv '@@LIBIWX_' "$tmp/exported" || true)
if [ "$unversioned" != 0 ]; then
	echo "exports.sh: $unversioned exported without a LIBIWX_ version (lib/client/libiwx.map)," \
		"$(grep -v '@@LIBIWX_' "$tmp/exported" | head -3 | tr '\n' ' ')..." >&2; fail=1
fi
[ "$fail" = 0 ] || exit 1
echo "exports.sh: libiwx.so exports the $(wc -l < "$tmp/declared") calls of iwx.h, versioned, and needs libc alone"
