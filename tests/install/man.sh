#!/bin/sh
# The man pages `make install` put under MANDIR: groff -ww and mandoc -T lint (when
# installed) find nothing to say, and each page names what it documents: iwxd(8) every
# option of `iwxd --help`, iwx(8) every command of `iwx --help` and its options,
# libiwx(3) every function iwx.h declares.
# usage: man.sh MANDIR IWX IWXD IWX_H
set -eu
[ $# -eq 4 ] || { echo "usage: $0 MANDIR IWX IWXD IWX_H" >&2; exit 2; }
mandir=$1 iwx=$2 iwxd=$3 header=$4
fail=0

bad() { echo "man.sh: $*" >&2; fail=1; }

# the options of a --help text: "-x, --long" and "--long" at the start of a line
options() { grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | tr -d ',' | tr -s ' ' '\n' | sed '/^$/d'; }

# whether page's text has each word of standard input (in a pipe: its status says)
covers()
{
	text=$(groff -mandoc -Tascii -P-cbou "$1" 2>/dev/null) st=0
	while read -r w; do
		printf '%s\n' "$text" | grep -qF -e "$w" || { bad "$(basename "$1") does not mention $w"; st=1; }
	done
	return $st
}

for page in "$mandir"/man3/libiwx.3 "$mandir"/man8/iwx.8 "$mandir"/man8/iwxd.8; do
	[ -f "$page" ] || { bad "no $page"; continue; }
	out=$(groff -ww -mandoc -z "$page" 2>&1)
	[ -z "$out" ] || bad "groff -ww on $page: $out"
	if command -v mandoc >/dev/null; then
		out=$(mandoc -T lint -W warning "$page" 2>&1) || bad "mandoc -T lint on $page: $out"
	fi
done

"$iwxd" --help | options | covers "$mandir/man8/iwxd.8" || fail=1
commands=$("$iwx" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$commands" ] || bad "no commands in '$iwx --help'"
for c in $commands; do
	{ echo "$c"; "$iwx" "$c" --help | options; } | covers "$mandir/man8/iwx.8" || fail=1
done
calls=$("$(dirname "$0")/../../doc/man/calls.sh" "$header")
printf '%s\n' "$calls" | covers "$mandir/man3/libiwx.3" || fail=1
# man iwx_post_send: each call's own name leads to libiwx(3)
for f in $calls; do
	[ "$(cat "$mandir/man3/$f.3" 2>/dev/null)" = ".so man3/libiwx.3" ] || bad "no man3/$f.3 leading to libiwx(3)"
done
exit $fail
