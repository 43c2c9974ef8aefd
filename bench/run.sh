#!/bin/sh
# The main job: show the plan for this machine, then run its generated
# allreduce (and the pieces) against the MPI library's own in one run
# (2 ranks), correctness check first, and keep the tables as CSV under
# bench/results/.
#   bench/run.sh [BUILD_DIR] [extra bench options]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)
mkdir -p "$top/bench/results"
csv="$top/bench/results/allreduce-$(hostname -s).csv"
echo "== plan for this machine (treeduce-gen local --explain)"
"$build/treeduce-gen" local --explain
echo
echo "== generated allreduce vs the MPI library's, 2 ranks, same run"
"$mpiexec" -n 2 "$build/bench_allreduce_local" --csv "$csv" "$@"
echo
pcsv="$top/bench/results/pieces-$(hostname -s).csv"
echo "== reduce_scatter_block, allgather, reduce, bcast vs the MPI library's, 2 ranks, same run"
"$mpiexec" -n 2 "$build/bench_pieces_local" --csv "$pcsv"
echo
echo "CSV: $csv $pcsv"
