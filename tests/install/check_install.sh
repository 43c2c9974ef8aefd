#!/bin/sh
# The installed treeduce, used as a project outside this tree would use it.
#
#   check_install.sh install BUILD PREFIX LIBDIR
#       cmake --install BUILD --prefix PREFIX (emptied first) and check that
#       every file a consumer needs is there
#   check_install.sh cmake PREFIX WORK MPICC MPIEXEC [TOPOLOGY]
#       configure and build cmake_consumer/ in WORK with find_package(treeduce)
#       (CMAKE_PREFIX_PATH=PREFIX), then run its program on 2 ranks
#   check_install.sh pkgconfig PREFIX WORK MPICC MPIEXEC LIBDIR PKG_CONFIG MAKE [TOPOLOGY]
#       build pkgconfig_consumer/Makefile in WORK with PREFIX's treeduce-gen and
#       pkg-config only, then run its program on 2 ranks
#
# TOPOLOGY (default pair.topo) is the machine the consumer generates for, in
# any format treeduce-gen reads (pair.yaml: Slurm's topology.yaml; pair.ibnet:
# ibnetdiscover output); each is the same machine "pair" of two nodes.
# The program runs on 2 ranks placed on the 2 nodes of the machine
# (TREEDUCE_HOSTS=n0,n1) with TREEDUCE_VERBOSE=2, so that treeduce's
# MPI_Allreduce names the algorithm it ran; it prints "consumer: ok" when every
# result equals PMPI_Allreduce's, and a status other than 0 fails the test
# (tests/mpi/run.sh).  Nothing is written outside PREFIX and WORK.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
shift

run_consumer() { # MPIEXEC PROGRAM
    echo "== TREEDUCE_HOSTS=n0,n1 TREEDUCE_VERBOSE=2 $1 -n 2 $2"
    TREEDUCE_HOSTS=n0,n1 TREEDUCE_VERBOSE=2 sh "$here/../mpi/run.sh" timeout 60 "$1" -n 2 "$2"
}

case $mode in
install)
    build=$1 prefix=$2 libdir=$3
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix"
    missing=0
    for f in bin/treeduce-gen bin/treeduce-calibrate bin/treeduce-tune \
        "$libdir/libtreeduce_runtime.a" "$libdir/libtreeduce_algo.a" \
        include/treeduce/treeduce.h include/treeduce/treeduce_rt.h \
        include/treeduce/treeduce_mpi.inc include/treeduce/treeduce_colls.h \
        include/treeduce/trd_select.h \
        "$libdir/cmake/treeduce/treeduceConfig.cmake" \
        "$libdir/cmake/treeduce/treeduceConfigVersion.cmake" \
        "$libdir/cmake/treeduce/treeduceTargets.cmake" \
        "$libdir/cmake/treeduce/TreeduceGenerate.cmake" \
        "$libdir/pkgconfig/treeduce.pc" share/treeduce/treeduce-topology.xsd \
        share/man/man1/treeduce-gen.1 share/man/man1/treeduce-calibrate.1 share/man/man1/treeduce-tune.1 \
        share/man/man5/treeduce-topology.5; do
        if [ ! -f "$prefix/$f" ]; then
            echo "not installed: $f" >&2
            missing=1
        fi
    done
    [ $missing -eq 0 ]
    "$prefix/bin/treeduce-gen" --version
    echo "installed into $prefix"
    ;;
cmake)
    prefix=$1 work=$2 mpicc=$3 mpiexec=$4 topo=${5:-$here/pair.topo}
    rm -rf "$work"
    cmake -S "$here/cmake_consumer" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" \
        -DMPI_C_COMPILER="$mpicc" -DMPIEXEC_EXECUTABLE="$mpiexec" -DCMAKE_BUILD_TYPE=Release \
        -DTOPOLOGY="$topo"
    status=0
    cmake --build "$work" --verbose >"$work/build.log" 2>&1 || status=$?
    cat "$work/build.log"
    [ $status -eq 0 ]
    # generated at build time, by the installed generator
    if ! grep -F "$prefix/bin/treeduce-gen $topo -o" "$work/build.log" >/dev/null; then
        echo "the build did not run $prefix/bin/treeduce-gen" >&2
        exit 1
    fi
    # with Graphviz, the machine's picture, drawn by the installed generator too
    if grep -q '^TRD_DOT_EXECUTABLE:FILEPATH=/' "$work/CMakeCache.txt" &&
        ! grep -q '<svg' "$work/treeduce_pair/pair.svg"; then
        echo "Graphviz was found but $work/treeduce_pair/pair.svg is not an SVG" >&2
        exit 1
    fi
    run_consumer "$mpiexec" "$work/consumer"
    ;;
pkgconfig)
    prefix=$1 work=$2 mpicc=$3 mpiexec=$4 libdir=$5 pkgconfig=$6 make=$7 topo=${8:-$here/pair.topo}
    rm -rf "$work"
    mkdir -p "$work"
    PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
    export PKG_CONFIG_PATH
    echo "== pkg-config --cflags --libs treeduce: $("$pkgconfig" --cflags --libs treeduce)"
    "$make" -C "$work" -f "$here/pkgconfig_consumer/Makefile" \
        TREEDUCE_GEN="$prefix/bin/treeduce-gen" MPICC="$mpicc" PKG_CONFIG="$pkgconfig" TOPOLOGY="$topo"
    run_consumer "$mpiexec" "$work/consumer"
    ;;
*)
    echo "check_install.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
