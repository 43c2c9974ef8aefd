# shellcheck shell=bash
# Sourced (bash) by the SimGrid benchmarks, bench/scale.sh and
# bench/three_way.sh: SMPI's simulation settings and bench/bench_smpi.c
# built for a machine.

# The simulation settings (bench/scale.sh's head says why): SMPI's network
# factors 1, no cross traffic, no TCP window limit, no simulated computation;
# SMPI's reduce, bcast and barrier binomial and recursive doubling.  The
# allreduce (--cfg=smpi/allreduce:NAME) is the caller's.
# shellcheck disable=SC2034 # used by the scripts that source this file
smpi_sim=(--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=network/crosstraffic:0
    --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no --log=root.thres:warning
    --cfg=smpi/reduce:binomial --cfg=smpi/bcast:binomial_tree --cfg=smpi/barrier:ompi_recursivedoubling)

# smpi_build_bench GEN TOPOLOGY DIR BIN [SMPI_BUILD]
# TOPOLOGY's routines (GEN --alpha-r-ratio 0: SimGrid overlaps the messages a
# rank posts together for free) and its platform, DIR/M.xml and DIR/M.hosts
# (M: the topology's file name without .topo), into DIR; then bench_smpi
# compiled with smpicc into BIN, with the machine's accessor (--candidates,
# --fell-back), against SMPI_BUILD's runtime and algorithm libraries (a
# -DTREEDUCE_SMPI=ON build; its target treeduce_runtime is brought up to date
# first, one job) or, without SMPI_BUILD, the runtime's sources.  Done
# only when BIN is older than TOPOLOGY, GEN, bench_smpi.c or SMPI_BUILD's
# libraries.
smpi_build_bench() {
    local gen=$1 topo=$2 dir=$3 bin=$4 smpi_build=${5:-} src m f stale=0
    src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    m=$(basename "$topo" .topo)
    local libs=()
    if [ -n "$smpi_build" ]; then
        cmake --build "$smpi_build" --target treeduce_runtime -j1 >/dev/null ||
            { echo "smpi_build_bench: building treeduce_runtime in $smpi_build failed" >&2; return 1; }
        libs=("$smpi_build/libtreeduce_runtime.a" "$smpi_build/libtreeduce_algo.a")
    fi
    for f in "$topo" "$gen" "$src/bench/bench_smpi.c" ${libs[@]+"${libs[@]}"}; do
        [ -x "$bin" ] && ! [ "$f" -nt "$bin" ] || stale=1
    done
    [ "$stale" = 1 ] || return 0
    mkdir -p "$dir"
    "$gen" "$topo" --alpha-r-ratio 0 -o "$dir" >/dev/null || return 1
    "$gen" "$topo" --simgrid "$dir/$m.xml" || return 1
    # the machine's name, which its files and accessor carry (just written)
    local name
    # shellcheck disable=SC2012 # trd_NAME_mpi.c: a C identifier
    name=$(basename "$(ls -t "$dir"/trd_*_mpi.c | head -1)" _mpi.c)
    name=${name#trd_}
    if [ ${#libs[@]} -eq 0 ]; then
        libs=("$src"/runtime/*.c "$src"/runtime/algo/*.c)
    fi
    smpicc -O2 -DNDEBUG -DSMPI_NO_OVERRIDE_MALLOC -DBENCH_SMPI_MACHINE="trd_${name}_machine" -o "$bin" \
        "$src/bench/bench_smpi.c" "$dir/trd_$name.c" "$dir/trd_${name}_mpi.c" "${libs[@]}" \
        -I"$src/runtime" -I"$src/runtime/algo" -I"$dir" -lm -lpthread
}
