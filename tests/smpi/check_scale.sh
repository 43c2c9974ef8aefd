#!/bin/sh
# bench/scale.sh's partial rerun, on ethernet32 at 8 B in a results directory
# of its own whose scale.csv has made-up rows: -r reruns treeduce:rd and the
# routine -a adds (a forced parameter list with a comma), and nothing else;
# rd's rows are replaced where they were (its 1 KiB row goes: the run had
# 8 B only), the added routine's rows come after the case's last row, its
# comma written as a semicolon, and every other row stays as it was.
# Exit 77 (ctest: skipped) when SimGrid's smpicc/smpirun are not installed.
#   check_scale.sh GEN SRCDIR WORKDIR
set -eu
GEN=$1 SRC=$2 WORK=$3
if ! command -v smpicc >/dev/null 2>&1 || ! command -v smpirun >/dev/null 2>&1; then
    echo "SKIP: SimGrid's smpicc/smpirun not found (Debian: libsimgrid-dev)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK"
header="case,machine,routine,bytes,ranks,median_s,min_s,wrong_ranks,checked,status,wall_s,ran"
kept1="eth32,ethernet32,smpi:mpich,8,32,9e-04,9e-04,0,1,ok,1,"
kept2="eth32-shuffled,ethernet32,treeduce:rd,8,32,8e-04,8e-04,0,1,ok,1,rd"
printf '%s\n' "$header" "eth32,ethernet32,treeduce:rd,8,32,1,1,0,1,ok,1,old" \
    "eth32,ethernet32,treeduce:rd,1024,32,1,1,0,1,ok,1,old" "$kept1" "$kept2" >"$WORK/scale.csv"
TREEDUCE_GEN=$GEN bash "$SRC/bench/scale.sh" -o "$WORK" -s 8 -r '^treeduce:(rd|nap:8,4)$' \
    -a treeduce:nap:8,4 eth32 >"$WORK/log" 2>&1 || { cat "$WORK/log"; exit 1; }
cat "$WORK/scale.csv"
fail() { echo "check_scale: $*"; exit 1; }
set -- "$WORK"/runs/eth32/*.csv
[ $# -eq 2 ] || fail "ran other routines: $*"
[ "$(wc -l <"$WORK/scale.csv")" -eq 5 ] || fail "expected 5 lines"
[ "$(sed -n 1p "$WORK/scale.csv")" = "$header" ] || fail "header"
sed -n 2p "$WORK/scale.csv" | grep -Eq '^eth32,ethernet32,treeduce:rd,8,32,[0-9.e+-]+,[0-9.e+-]+,0,1,ok,[0-9]+,rd$' ||
    fail "rd not rerun in place"
[ "$(sed -n 3p "$WORK/scale.csv")" = "$kept1" ] || fail "smpi:mpich's row changed"
sed -n 4p "$WORK/scale.csv" | grep -Eq '^eth32,ethernet32,treeduce:nap:8;4,8,32,[0-9.e+-]+,[0-9.e+-]+,0,1,ok,[0-9]+,nap:8;4$' ||
    fail "nap:8,4 not added after eth32's rows"
[ "$(sed -n 5p "$WORK/scale.csv")" = "$kept2" ] || fail "eth32-shuffled's row changed"
grep -q '^eth32,8,' "$WORK/summary.csv" || fail "no summary"
echo "check_scale: passed"
