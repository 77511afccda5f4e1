#!/bin/sh
# The calls an API header declares (include/iwx/iwx.h), one a line: what libiwx(3)
# documents, and the names `make install` leads to it (man iwx_post_send).
# usage: calls.sh HEADER
[ $# -eq 1 ] || { echo "usage: $0 HEADER" >&2; exit 2; }
grep -oE '\biwx_[a-z_0-9]+\(' "$1" | tr -d '(' | sort -u
