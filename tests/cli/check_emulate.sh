#!/bin/sh
# treeduce-gen --emulate (gen/out/emulate.h):
#   good     the three-level machine's description, byte for byte
#            (tests/data/emulate_3level.cluster, @VERSION@ for the version)
#   hostile  a node name a shell would run refused with the exact message,
#            exit 1, and no output left (nor the --dot asked with it)
#   check_emulate.sh GEN SRCDIR WORKDIR VERSION CASE
set -eu
GEN=$1 SRC=$2 WORK=$3 VERSION=$4 CASE=$5
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
case $CASE in
good)
    "$GEN" "$SRC/tests/data/emulate_3level.topo" --emulate emu3.cluster
    sed "s/@VERSION@/$VERSION/" "$SRC/tests/data/emulate_3level.cluster" >expected
    diff -u expected emu3.cluster
    echo "ok good"
    ;;
hostile)
    rc=0
    "$GEN" "$SRC/tests/data/emulate_hostile.ibnet" --emulate h.cluster --dot h.dot 2>err || rc=$?
    cat err
    test "$rc" -eq 1 || { echo "exit status $rc, expected 1"; exit 1; }
    printf '%s\n' "h.cluster: error: node 'n1;\$(reboot)': an emulated node's name becomes its host name and must be 1 to 63 letters, digits or '-', not starting or ending with '-' (nothing written)" |
        diff -u - err
    left=$(ls -A)
    test "$left" = err || { echo "left behind: $left"; exit 1; }
    echo "ok hostile"
    ;;
*)
    echo "unknown case $CASE"
    exit 2
    ;;
esac
