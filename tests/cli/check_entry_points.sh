#!/bin/sh
# The MPI entry points a machine's library defines: every form MPI has of
# each collective treeduce replaces, spelled as the standard spells them
# (MPI_Name, MPI_Iname; from MPI 4.0 MPI_Name_init and the large-count _c of
# all three), and the runtime's trd_ routines they call; nothing missing.
#   check_entry_points.sh LIBRARY MPI_VERSION_MAJOR RUNTIME_ARCHIVE
set -u
lib=$1 major=$2 rt=$3
fail() { echo "FAIL: $*"; exit 1; }
have=$(nm -D --defined-only "$lib" | awk '{ print $3 }') || fail "nm $lib"
trd=$(nm --defined-only "$rt" 2>/dev/null | awk '$2 == "T" { print $3 }') || fail "nm $rt"
n=0
for c in Allreduce:allreduce Reduce_scatter_block:reduce_scatter_block \
    Reduce_scatter:reduce_scatter Allgather:allgather Reduce:reduce Bcast:bcast; do
    Name=${c%%:*} name=${c#*:}
    want="MPI_$Name MPI_I$name"
    rt_want="trd_$name trd_${name}_c trd_i$name trd_${name}_init"
    [ "$name" = reduce_scatter ] && rt_want="$rt_want trd_i${name}_c trd_${name}_init_c"
    [ "$name" != reduce_scatter ] && rt_want="$rt_want trd_${name}_with"
    [ "$major" -ge 4 ] && want="$want MPI_${Name}_init MPI_${Name}_c MPI_I${name}_c MPI_${Name}_init_c"
    for s in $want; do
        echo "$have" | grep -qx "$s" || fail "$lib defines no $s"
        n=$((n + 1))
    done
    for s in $rt_want; do
        echo "$trd" | grep -qx "$s" || fail "$rt defines no $s"
    done
done
echo "entry points: $n MPI routines: ok"
