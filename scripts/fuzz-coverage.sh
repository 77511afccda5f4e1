#!/bin/bash
# The coverage of each fuzz target's own source by the corpus kept in the tree
# (tests/fuzz/corpus/TARGET) and the seeds: the targets built again under build/cov,
# without sanitizers and with clang's source coverage, each input run once, then
# llvm-cov's report of the files the target is for (lines, branches, functions).
#
# Usage: scripts/fuzz-coverage.sh [TARGET...]   (all but fuzz_fastpath by default; as
# root for fuzz_ipc). fuzz_fastpath's code runs in the kernel, where this cannot follow
# it: its skip reasons say what it reached (FUZZ_FASTPATH_STATS=1, FUZZING.md).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A src=(
	[fuzz_ddp]="lib/proto/ddp.c lib/proto/ddp_shim.c lib/proto/rdmap.c lib/proto/term.c"
	[fuzz_mpa_rr]="lib/proto/mpa.c"
	[fuzz_mpa_rx]="lib/proto/mpa_rx.c lib/proto/mpa_fpdu.c"
	[fuzz_decode]="cli/decode.c cli/tcp_streams.c"
	[fuzz_sctp_place]="control/engine/sctp_place.c"
	[fuzz_sctp_rx]="control/engine/llp_sctp.c"
	[fuzz_ipc]="control/iwxd/session.c control/iwxd/cm.c control/iwxd/vqp.c control/iwxd/vcq.c
		    control/iwxd/vsrq.c control/iwxd/shm.c control/iwxd/shared.c control/iwxd/regions.c
		    control/iwxd/doorbell.c control/iwxd/limits.c"
)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_ddp fuzz_mpa_rr fuzz_mpa_rx fuzz_decode fuzz_sctp_place
				      fuzz_sctp_rx fuzz_ipc)
cov=build/cov
for t in "${targets[@]}"; do
	if [ -z "${src[$t]:-}" ]; then
		echo "fuzz-coverage: no sources known for '$t' (one of: ${!src[*]})" >&2
		exit 2
	fi
done

make -s BUILD=$cov FUZZ_SAN="-fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping" \
	"${targets[@]/#/$cov/fuzz/}" $cov/fuzz/make_seeds
rm -rf $cov/seeds $cov/prof && $cov/fuzz/make_seeds $cov/seeds && mkdir -p $cov/prof
for t in "${targets[@]}"; do
	LLVM_PROFILE_FILE="$cov/prof/$t-%p.profraw" "$cov/fuzz/$t" -runs=0 \
		tests/fuzz/corpus/$t $cov/seeds/$t > $cov/prof/$t.log 2>&1 ||
		{ echo "fuzz-coverage: $t failed (its log: $cov/prof/$t.log)" >&2; exit 1; }
	llvm-profdata merge -o $cov/prof/$t.profdata $cov/prof/$t-*.profraw
	echo "== $t ($(ls tests/fuzz/corpus/$t | wc -l) inputs in the tree, and the seeds)"
	# shellcheck disable=SC2086 # the file lists split on purpose
	llvm-cov report $cov/fuzz/$t -instr-profile=$cov/prof/$t.profdata ${src[$t]} |
		awk 'NR > 1 && !/^-+$/ { sub(".*/", "", $1); printf "  %-16s lines %5s of %4d, branches %5s of %4d, functions %5s of %3d\n",
					  $1, $10, $8, $13, $11, $7, $5 }'
done
