#!/usr/bin/env bash
# bash's completion of iwx as `make install` put it: what a few words complete to.
# usage: completion.sh FILE
set -eu
[ $# -eq 1 ] || { echo "usage: $0 FILE" >&2; exit 2; }
# shellcheck source=/dev/null
source "$1"
fail=0

# expect WANT WORD...: completing the last WORD of the line "iwx WORD..." gives WANT
expect()
{
	local want=$1
	shift
	COMP_WORDS=(iwx "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_iwx || true
	if [ "${COMPREPLY[*]}" != "$want" ]; then
		echo "completion.sh: 'iwx $*' completes to '${COMPREPLY[*]}', not '$want'" >&2
		fail=1
	fi
}

expect attach at
expect "decode detach" help de
expect dev attach ""
expect "--sctp --socket" attach dev lo --s
expect "tc xdp" attach dev lo -m ""
expect "--json" status --j
exit $fail
