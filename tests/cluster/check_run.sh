#!/bin/sh
# One program on an emulated cluster: bench/cluster.sh with the build's
# treeduce-gen, its exit status passed on (77: this host cannot emulate).
# (MPICH before 4.2 finalizes there with the build's
# libtrd_cluster_finalize.so, which cluster.sh preloads: docs/scale.md.)
#   check_run.sh CLUSTER_SH BUILD MPI TOPOLOGY [cluster.sh options] -- PROGRAM [ARGS]
set -u
CLUSTER=$1 BUILD=$2 MPI=$3
shift 3
topo=$1
shift
exec "$CLUSTER" "$topo" --mpi "$MPI" --build "$BUILD" --timeout 120 "$@"
