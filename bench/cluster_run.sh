#!/bin/bash
# bench/run.sh's tables across the nodes of an emulated cluster
# (bench/cluster.sh): the allreduce (and with --pieces reduce_scatter_block,
# allgather, reduce and bcast) of treeduce's library tuned for TOPOLOGY, the
# untuned one and the MPI library's routine (timed twice, for the run's A/B
# noise), interleaved call by call in one run, with the link bound beside
# them.
#
#   bench/cluster_run.sh TOPOLOGY [--ppn K] [--order tree|shuffled|FILE] [--mpi mpich|openmpi]
#                        [--wisdom FILE... | --tune [--budget D]] [--pieces] [--build DIR]
#                        [--results DIR] [-- bench_allreduce options]
#
# The libraries are generated here from TOPOLOGY with the build's treeduce-gen
# (untuned; and tuned with --wisdom FILE, which may be given more than once:
# treeduce-gen combines the files, the newer measurement of a size winning)
# and compiled with the MPI
# library's compiler against the build's runtime.  --tune first runs
# treeduce-tune on the cluster itself (same ranks, same order; for --budget,
# default 20m) into RESULTS/wisdom-MACHINE.wisdom and uses that.
#
# The link bound (bench_allreduce --link-rate) is that of the slowest node
# link as cluster.sh shapes it (cluster.sh --rates).  Tables and CSVs go to
# RESULTS (default bench/results/cluster-MACHINE), named
# allreduce-MACHINE-NxPPN-ORDER.csv and pieces-...; after each table, the
# sizes where tuned is slower than untuned beyond the run's MPI A/B noise
# (bench/verdict.sh), and the speed-up over the MPI library at each size.
#
# Exit: 0, or the first failure's status (77: this host cannot emulate).
set -u
me=${0##*/}
die() { echo "$me: $*" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)

topo= ppn= order=tree mpi=mpich wisdom=() tune=0 budget=20m pieces=0 build=$top/build results=
[ $# -ge 1 ] || die "usage: $me TOPOLOGY [options] [-- bench_allreduce options] (see the file)"
topo=$1
shift
while [ $# -gt 0 ]; do
    case $1 in
    --ppn) ppn=${2:?}; shift 2 ;;
    --order) order=${2:?}; shift 2 ;;
    --mpi) mpi=${2:?}; shift 2 ;;
    --wisdom) wisdom+=("${2:?}"); shift 2 ;;
    --tune) tune=1; shift ;;
    --budget) budget=${2:?}; shift 2 ;;
    --pieces) pieces=1; shift ;;
    --build) build=${2:?}; shift 2 ;;
    --results) results=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the file)" ;;
    esac
done
[ -r "$topo" ] || die "$topo: cannot read"
[ ${#wisdom[@]} = 0 ] || [ "$tune" = 0 ] || die "--wisdom and --tune: one or the other"
for w in ${wisdom[@]+"${wisdom[@]}"}; do
    [ -r "$w" ] || die "--wisdom $w: cannot read"
done
case $mpi in
mpich) mpicc=mpicc.mpich ;;
openmpi) mpicc=mpicc.openmpi ;;
*) die "--mpi '$mpi': expected mpich or openmpi" ;;
esac
command -v "$mpicc" >/dev/null || die "no $mpicc"
gen=$build/treeduce-gen
for f in "$gen" "$build/bench_allreduce" "$build/bench_pieces" "$build/treeduce-tune"; do
    [ -x "$f" ] || die "$f not found (build first, or give --build DIR)"
done

cluster=("$top/bench/cluster.sh" "$topo" --mpi "$mpi" --order "$order" --build "$build" --timeout 3600)
[ -z "$ppn" ] || cluster+=(--ppn "$ppn")
rates=$("${cluster[0]}" "$topo" --rates --build "$build") || exit 1
rate=$(echo "$rates" | awk '$1 == "node" && (m == "" || $3 < m) { m = $3 } END { print m }')
nodes=$(echo "$rates" | grep -c '^node ')
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
if [ -z "$ppn" ]; then # the first node's cores, as cluster.sh takes them
    "$gen" "$topo" --emulate "$work/desc" || exit 1
    ppn=$(awk '$1 == "node" { print $5; exit }' "$work/desc")
fi

# machine NAME: the name treeduce-gen gives the library (its trd_NAME.c)
"$gen" "$topo" -o "$work/untuned" >/dev/null || exit 1
machine=$(cd "$work/untuned" && ls trd_*_mpi.c | sed 's/^trd_//; s/_mpi\.c$//')
[ -n "$machine" ] || die "treeduce-gen wrote no library for $topo"
results=${results:-$top/bench/results/cluster-$machine}
mkdir -p "$results" || exit 1
shape=${nodes}x$ppn-$(basename "$order")

# library DIR: compile the generated machine in DIR into DIR/libtreeduce_MACHINE.so
library() {
    "$mpicc" -O2 -fPIC -shared -o "$1/libtreeduce_$machine.so" "$1/trd_$machine.c" \
        "$1/trd_${machine}_mpi.c" -I"$1" -I"$top/runtime" -I"$top/runtime/algo" \
        "$build/libtreeduce_runtime.a" "$build/libtreeduce_algo.a" -lpthread -lm ||
        die "compiling the library generated in $1"
}
library "$work/untuned"
libs=(--lib "$work/untuned/libtreeduce_$machine.so")

if [ "$tune" = 1 ]; then
    wisdom=("$results/wisdom-$machine.wisdom")
    echo "== tuning on the cluster: treeduce-tune --budget $budget, $shape"
    "${cluster[@]}" -- "$build/treeduce-tune" "$(realpath "$topo")" --budget "$budget" \
        -o "${wisdom[0]}" || { s=$?; echo "$me: treeduce-tune failed" >&2; exit $s; }
fi
if [ ${#wisdom[@]} -gt 0 ]; then
    wargs=()
    for w in "${wisdom[@]}"; do wargs+=(--wisdom "$w"); done
    "$gen" "$topo" "${wargs[@]}" -o "$work/tuned" >/dev/null || exit 1
    library "$work/tuned"
    libs=(--lib "$work/tuned/libtreeduce_$machine.so" "${libs[@]}")
    new=tuned old=untuned
else
    new=untuned old=
fi
libs+=(--lib mpi)

. "$top/bench/verdict.sh"
status=0
csv=$results/allreduce-$machine-$shape.csv
echo
echo "== allreduce, ${old:+$new (new) and $old (old), }vs the MPI library's; $shape; links of $rate B/s"
"${cluster[@]}" -- "$build/bench_allreduce" "${libs[@]}" --copy-bytes 0 --link-rate "$rate" \
    --csv "$csv" "$@" || status=$?
if [ "$status" = 0 ]; then
    [ -z "$old" ] || verdict "$new" "$old" "$csv"
    speedups "$new" "$csv"
fi
if [ "$pieces" = 1 ] && [ "$status" = 0 ]; then
    pcsv=$results/pieces-$machine-$shape.csv
    echo
    echo "== reduce_scatter_block, allgather, reduce, bcast, ${old:+$new (new) and $old (old), }vs the MPI library's; $shape"
    "${cluster[@]}" -- "$build/bench_pieces" "${libs[@]}" --csv "$pcsv" "$@" || status=$?
    if [ "$status" = 0 ]; then
        [ -z "$old" ] || verdict "$new" "$old" "$pcsv"
        speedups "$new" "$pcsv"
    fi
fi
[ ${#wisdom[@]} = 0 ] || echo "wisdom: ${wisdom[*]}"
echo "CSV: $results"
exit "$status"
