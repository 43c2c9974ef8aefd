#!/bin/sh
# bench_allreduce and bench_pieces --also all on one node of 2 ranks
# (TREEDUCE_HOSTS=n0,n0) with LIB: every forced algorithm is timed and has
# its CSV column, the fastest is named, and a candidate that falls back to
# the MPI library's routine (Rabenseifner's reduce of one element) shows "-".
#   check_bench_also.sh MPIEXEC NPFLAG BENCH_ALLREDUCE BENCH_PIECES LIB
set -u
mpiexec=$1 np=$2 ar=$3 pieces=$4 lib=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export TREEDUCE_HOSTS=n0,n0
small="--min-bytes 8 --iters 20 --warmup 1"

# shellcheck disable=SC2086
"$mpiexec" "$np" 2 "$ar" --lib "$lib" --also all --max-bytes 64 --copy-bytes 0 $small \
    --csv "$work/a.csv" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "bench_allreduce --also all"; }
grep -q "best_us" "$work/a.txt" || fail "no best_us in the table"
# the one-node variants with their parameters, and the fastest, per size
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
          for (k = split("shm_us shm:cyclic_us shm:rx:2_us shm:tree:2_us shm:socket_us ring_us best best_us", want, " "); k > 0; k--)
              if (!(want[k] in col)) { print "no column " want[k]; bad = 1 }
          next }
{ rows++
  for (c in col) if (c ~ /^shm/ && $(col[c]) !~ /^[0-9.]+$/) { print "row " NR ": " c " = " $(col[c]); bad = 1 }
  if ($(col["best"]) == "" || $(col["best_us"]) + 0 <= 0) { print "row " NR ": no best"; bad = 1 } }
END { if (rows != 4) { print rows " rows, expected 4"; bad = 1 } exit bad }' "$work/a.csv" ||
    fail "bench_allreduce CSV"

# shellcheck disable=SC2086
"$mpiexec" "$np" 2 "$pieces" --lib "$lib" --piece reduce --also all --max-bytes 8 $small \
    --csv "$work/p.csv" > "$work/p.txt" 2>&1 || { cat "$work/p.txt"; fail "bench_pieces --also all"; }
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{ if ($(col["rabenseifner_us"]) != "-") { print "rabenseifner_us = " $(col["rabenseifner_us"]); bad = 1 }
  if ($(col["binomial_us"]) !~ /^[0-9.]+$/ || $(col["shm_us"]) !~ /^[0-9.]+$/) { print "binomial or shm not timed"; bad = 1 }
  if ($(col["best"]) == "rabenseifner") { print "a fallback named the fastest"; bad = 1 } }
END { if (NR != 2) { print NR - 1 " rows, expected 1"; bad = 1 } exit bad }' "$work/p.csv" ||
    fail "bench_pieces CSV"
echo "also all: ok"
