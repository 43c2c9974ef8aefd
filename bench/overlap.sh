#!/bin/bash
# The overlap of MPI_Iallreduce with computation (bench_overlap, OSU's
# formula), treeduce's and the MPI library's, each without and with its own
# progress thread, in one table: CSV and PNG.
#
#   bench/overlap.sh [--build DIR] [--cluster TOPOLOGY] [--results DIR]
#                    [-- bench_overlap options]
#
# Three runs of bench_overlap on 2 ranks, treeduce's library preloaded:
#   plain    no progress thread;
#   tr_async TREEDUCE_ASYNC_PROGRESS=1 (treeduce's thread);
#   mpi_async MPIR_CVAR_ASYNC_PROGRESS=1 (MPICH's own thread).
# From each run come treeduce's and the library's columns; the joined table
# has tr (plain run), tr_async (treeduce's thread), mpi (plain run) and
# mpi_async (MPICH's thread), with each one's pure time, total time,
# computation over pure time (comp_x) and overlap; also tr_under_mpi_async,
# treeduce without its thread but with MPICH's.
#
# Without --cluster the ranks share this node, with the build's
# libtreeduce_local.so.  With --cluster TOPOLOGY (a machine of two nodes,
# such as tests/cluster/tree2.topo) they run on an emulated cluster
# (bench/cluster.sh, root needed), one rank per node, over its shaped links,
# with a library generated from TOPOLOGY.
#
# Output: RESULTS/overlap-WHERE.csv and .png (RESULTS default bench/results;
# WHERE is "node" or the machine's name); the PNG needs gnuplot.
# Exit: 0, or the first failure's status (77: the cluster cannot be emulated).
set -u
me=${0##*/}
die() { echo "$me: $*" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)

build=$top/build topo= results=$top/bench/results
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?}; shift 2 ;;
    --cluster) topo=${2:?}; shift 2 ;;
    --results) results=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the file)" ;;
    esac
done
prog=$build/bench_overlap
[ -x "$prog" ] || die "$prog not found (build first, or give --build DIR)"
mkdir -p "$results" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

if [ -z "$topo" ]; then
    where=node
    lib=$build/libtreeduce_local.so
    [ -r "$lib" ] || die "$lib not found"
    run() { # run ENV... : bench_overlap on 2 ranks of this node
        timeout 1800 mpiexec.mpich -n 2 env LD_PRELOAD="$lib" "$@" "$prog" "${opts[@]}" --csv "$csvout"
    }
else
    [ -r "$topo" ] || die "$topo: cannot read"
    "$build/treeduce-gen" "$topo" -o "$work/lib" >/dev/null || exit 1
    machine=$(cd "$work/lib" && ls trd_*_mpi.c | sed 's/^trd_//; s/_mpi\.c$//')
    [ -n "$machine" ] || die "treeduce-gen wrote no library for $topo"
    where=$machine
    lib=$work/lib/libtreeduce_$machine.so
    mpicc.mpich -O2 -fPIC -shared -o "$lib" "$work/lib/trd_$machine.c" "$work/lib/trd_${machine}_mpi.c" \
        -I"$work/lib" -I"$top/runtime" -I"$top/runtime/algo" "$build/libtreeduce_runtime.a" \
        "$build/libtreeduce_algo.a" -lpthread -lm || die "compiling the library for $topo"
    chmod -R a+rX "$work"
    run() { # run NAME=VALUE... : bench_overlap on the emulated cluster, a rank per node
        local envs=(--env "LD_PRELOAD=$lib") e
        for e in "$@"; do envs+=(--env "$e"); done
        "$top/bench/cluster.sh" "$topo" --ppn 1 --mpi mpich --build "$build" --timeout 1800 \
            "${envs[@]}" -- "$prog" "${opts[@]}" --csv "$csvout"
    }
fi
opts=("$@")

status=0
for kind in plain tr_async mpi_async; do
    case $kind in
    plain) envs=(TREEDUCE_ASYNC_PROGRESS=0 MPIR_CVAR_ASYNC_PROGRESS=0) ;;
    tr_async) envs=(TREEDUCE_ASYNC_PROGRESS=1 MPIR_CVAR_ASYNC_PROGRESS=0) ;;
    mpi_async) envs=(TREEDUCE_ASYNC_PROGRESS=0 MPIR_CVAR_ASYNC_PROGRESS=1) ;;
    esac
    echo "== $kind: ${envs[*]}"
    csvout=$work/$kind.csv
    run "${envs[@]}" TREEDUCE_VERBOSE=1 || { status=$?; break; }
done
[ "$status" = 0 ] || exit "$status"

# join: bytes, then per column set pure_us,total_us,comp_x,overlap_pct
csv=$results/overlap-$where.csv
awk -F, '
FNR == 1 { f++; next }
{
    b = $1; bytes[b] = 1
    # columns: 2-5 tr, 6-9 mpi (bench_overlap --csv)
    if (f == 1) { tr[b] = $2 "," $3 "," sprintf("%.2f", $4 / $2) "," $5
                  mpi[b] = $6 "," $7 "," sprintf("%.2f", $8 / $6) "," $9 }
    if (f == 2) tra[b] = $2 "," $3 "," sprintf("%.2f", $4 / $2) "," $5
    if (f == 3) { mpia[b] = $6 "," $7 "," sprintf("%.2f", $8 / $6) "," $9
                  trm[b] = $2 "," $3 "," sprintf("%.2f", $4 / $2) "," $5 }
    if (f == 1) order[++n] = b
}
END {
    h = ""
    split("tr tr_async mpi mpi_async tr_under_mpi_async", w, " ")
    for (i = 1; i <= 5; i++)
        h = h "," w[i] "_pure_us," w[i] "_total_us," w[i] "_comp_x," w[i] "_overlap_pct"
    print "bytes" h
    for (i = 1; i <= n; i++) {
        b = order[i]
        print b "," tr[b] "," tra[b] "," mpi[b] "," mpia[b] "," trm[b]
    }
}' "$work/plain.csv" "$work/tr_async.csv" "$work/mpi_async.csv" >"$csv" || exit 1
echo
echo "== overlap %, OSU's formula (comp_x: the computation's time over the call's alone)"
awk -F, 'NR == 1 { printf "%10s %10s %10s %10s %10s %12s %12s\n", "bytes", "tr", "tr_async",
                   "mpi", "mpi_async", "tr_async_cx", "mpi_async_cx"; next }
         { printf "%10s %10s %10s %10s %10s %12s %12s\n", $1, $5, $9, $13, $17, $8, $16 }' "$csv"
echo "CSV: $csv"

if command -v gnuplot >/dev/null; then
    png=${csv%.csv}.png
    gnuplot <<EOF || echo "$me: gnuplot failed; no PNG" >&2
set terminal pngcairo size 900,560 noenhanced
set output '$png'
set datafile separator ','
set key autotitle columnhead outside below
set logscale x 2
set format x '%.0b%B'
set xlabel 'message (bytes)'
set ylabel 'overlap (%), OSU formula'
set yrange [0:105]
set grid
set title "MPI_Iallreduce overlapped with computation, 2 ranks ($where)"
plot '$csv' using 1:5 with linespoints title 'treeduce', \
     '' using 1:9 with linespoints title 'treeduce, TREEDUCE_ASYNC_PROGRESS=1', \
     '' using 1:13 with linespoints title 'MPI library', \
     '' using 1:17 with linespoints title 'MPI library, MPIR_CVAR_ASYNC_PROGRESS=1'
EOF
    [ -s "$png" ] && echo "PNG: $png"
fi
exit 0
