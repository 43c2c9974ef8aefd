#!/bin/sh
# Adding a collective is one line of runtime/treeduce_colls.h and its
# algorithms.  This adds MPI_Scan's line to a copy of the table, and
# changes nothing else: the runtime's collective routines (coll.c) and a
# machine's library built against that copy must define every form MPI has
# of MPI_Scan, and its calls must give what the MPI library's PMPI_Scan
# gives (with no algorithms yet, each goes to the library's routine and
# says why at TREEDUCE_VERBOSE=1).  The library built without the line
# must define no MPI_Scan, so that the line is what made it.
#   check_one_line.sh SRC MACHINE_DIR MACHINE RUNTIME_ARCHIVE ALGO_ARCHIVE MPICC MPI_MAJOR MPIEXEC...
# MACHINE_DIR holds trd_MACHINE.{h,c} and trd_MACHINE_mpi.c as generated;
# both libraries are built here from them, with and without the line;
# MPIEXEC... runs "-n 2 PROGRAM".
set -u
src=$1 mdir=$2 m=$3 rt=$4 algo=$5 mpicc=$6 major=$7
shift 7
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$work"' EXIT

bs=$(printf '\134') # the backslash that continues the table's line
line="    X(scan, Scan, , (sendbuf, recvbuf, count, datatype, op, comm), -1, ARG_OP | ARG_ALIAS, ()) $bs"
# the runtime's headers copied too, so that each finds the copy of the table
cp "$src/runtime/coll.c" "$src/runtime"/*.h "$src/runtime"/*.inc "$work/" || fail "copy runtime"

for f in "trd_$m.h" "trd_$m.c" "trd_${m}_mpi.c"; do
    cp "$mdir/$f" "$work/" || fail "copy $f"
done
# the line, after the table's first
awk -v line="$line" '{ print } /^#define TRD_COLLS\(X\)/ { print line; n++ } END { exit n != 1 }' \
    "$src/runtime/treeduce_colls.h" >"$work/treeduce_colls.h" || fail "no TRD_COLLS table to add to"

build() { # build LIB DIR: coll.c and the machine from DIR, with the archives
    "$mpicc" -O1 -fPIC -shared -std=gnu11 -Wall -Wextra -Werror -I"$2" -I"$src/runtime" \
        -I"$src/runtime/algo" -o "$1" "$2/coll.c" "$2/trd_$m.c" "$2/trd_${m}_mpi.c" "$rt" "$algo" \
        -lpthread -lm || fail "building $1"
}
mkdir "$work/plain" || fail "mkdir"
cp "$src/runtime/coll.c" "$mdir/trd_$m.h" "$mdir/trd_$m.c" "$mdir/trd_${m}_mpi.c" "$work/plain/" ||
    fail "copy"
build "$work/libplain.so" "$work/plain"
nm -D --defined-only "$work/libplain.so" | awk '{ print $3 }' | grep -qx MPI_Scan &&
    fail "the library without the line already defines MPI_Scan"
build "$work/libscan.so" "$work"
have=$(nm -D --defined-only "$work/libscan.so" | awk '{ print $3 }')
want="MPI_Scan MPI_Iscan trd_scan trd_scan_c trd_iscan trd_scan_init trd_scan_with"
[ "$major" -ge 4 ] && want="$want MPI_Scan_init MPI_Scan_c MPI_Iscan_c MPI_Scan_init_c"
for s in $want; do
    echo "$have" | grep -qx "$s" || fail "the library with the line defines no $s"
done
echo "one line: $(echo "$want" | wc -w) routines defined"

"$mpicc" -O1 -o "$work/scan" "$src/tests/mpi/one_line_scan.c" -L"$work" -lscan \
    -Wl,-rpath,"$work" || fail "building one_line_scan"
out=$(TREEDUCE_VERBOSE=1 "$@" -n 2 "$work/scan" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "one_line_scan exited $rc"
echo "$out" | grep -q "MPI_Scan.*no algorithms of its own" ||
    fail "no note from treeduce's MPI_Scan: the calls did not go through the library with the line"
echo "one line: ok"
