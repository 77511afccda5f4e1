#!/bin/sh
# One libFuzzer target for SECONDS, from its seeds and the corpus kept in the tree, adding
# what it finds under BUILD/fuzz/corpus/; one line when it ends (several run at once in
# `make fuzz FUZZ_JOBS=N`), its log's tail when it fails.
# usage: run.sh BUILD TARGET SECONDS
set -u
[ $# -eq 3 ] || { echo "usage: $0 BUILD TARGET SECONDS" >&2; exit 2; }
build=$1 target=$2 seconds=$3
name=$(basename "$target")
corpus=$build/fuzz/corpus/$name tree=tests/fuzz/corpus/$name log=$build/fuzz/$name.log
mkdir -p "$corpus" "$tree"
if ! FUZZ_IPC_WINDOW=$build/fuzz/fuzz_ipc-window "$target" -max_total_time="$seconds" \
	-print_final_stats=1 -artifact_prefix="$build/fuzz/$name-" "$corpus" "$tree" \
	"$build/fuzz/seeds/$name" 2> "$log"; then
	tail -50 "$log"
	echo "  FUZZ    $name for $seconds s: FAILED ($log)"
	exit 1
fi
echo "  FUZZ    $name for $seconds s: $(grep -E '^stat::number_of_executed_units|^Done' "$log" | tr '\n' ' ')"
