#!/bin/sh
# One program on an emulated cluster: bench/cluster.sh with the build's
# treeduce-gen, its exit status passed on (77: this host cannot emulate).
# MPICH 4.0's ch4/ucx MPI_Finalize can deadlock over TCP between nodes
# (docs/scale.md, An emulated cluster): such a run is skipped, the reason
# printed, rather than fail at random.
#   check_run.sh CLUSTER_SH BUILD MPI TOPOLOGY [cluster.sh options] -- PROGRAM [ARGS]
set -u
CLUSTER=$1 BUILD=$2 MPI=$3
shift 3
if [ "$MPI" = mpich ] && mpiexec.mpich --version 2>/dev/null | grep -q 'Version: *4\.0\.'; then
    echo "skipped: MPICH 4.0's MPI_Finalize over UCX TCP can deadlock between nodes (fixed in MPICH 4.2)"
    exit 77
fi
topo=$1
shift
exec "$CLUSTER" "$topo" --mpi "$MPI" --build "$BUILD" --timeout 120 "$@"
