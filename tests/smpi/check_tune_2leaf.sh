#!/bin/sh
# check_tune_2leaf.sh SMPIRUN SMPICC GEN SMPI_BUILD SRC WORK
# smpi.tune_2leaf: measured tuning pays in the simulation.  The SMPI build's
# treeduce-tune under smpirun on tests/data/leaf2x4-thin.topo (2 leaf
# switches x 4 single-core hosts, thin uplinks) exported by treeduce-gen
# --simgrid, one rank per host, allreduce on the whole job at 16 B .. 1 MiB
# (factor 16); then bench/bench_smpi.c built with smpicc against the untuned
# (treeduce-gen TOPOLOGY) and the tuned (--wisdom) machine, both timed at
# 16 B and 1 MiB on the same platform with bench/scale.sh's simulation
# settings.  Passes when the tuned time at 1 MiB is at most the untuned one
# (simulated time is exact: 1e-9 relative), every result is right and every
# command exits 0.  Then a planted bad choice (the ring alone measured at
# small sizes) must be overruled by the check pass.  Exits 77 (skipped) without SimGrid or the SMPI build.
smpirun=$1 smpicc=$2 gen=$3 bin=$4 src=$5 work=$6
topo=$src/tests/data/leaf2x4-thin.topo
if ! command -v "$smpirun" >/dev/null 2>&1 || ! command -v "$smpicc" >/dev/null 2>&1; then
  echo "skipped: SimGrid's smpirun or smpicc not found (install libsimgrid-dev)"; exit 77
fi
if [ ! -f "$bin/CMakeCache.txt" ]; then
  echo "skipped: the SMPI build (smpi.build) missing"; exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
cmake --build "$bin" --target treeduce-tune >/dev/null || fail "building the SMPI treeduce-tune"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$gen" "$topo" --simgrid leaf.xml || fail "treeduce-gen --simgrid"
sim="--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=network/crosstraffic:0
  --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no --log=root.thres:warning
  --log=xbt_cfg.thres:warning --cfg=smpi/reduce:binomial --cfg=smpi/bcast:binomial_tree
  --cfg=smpi/barrier:ompi_recursivedoubling --cfg=smpi/allreduce:rdb"
# shellcheck disable=SC2086
TREEDUCE_SHM=0 "$smpirun" -platform leaf.xml -hostfile leaf.hosts -np 8 $sim \
  "$bin/treeduce-tune" "$topo" --alpha-r-ratio 0 --colls allreduce --shapes 8x1 \
  --min-bytes 16 --max-bytes 1M --factor 16 --size-time 0.002 --passes 1 -o leaf.wisdom \
  2>tune.err || { cat tune.err; fail "treeduce-tune exited $?"; }
grep -q '^range allreduce 8 1 [0-9]* ' leaf.wisdom || { cat tune.err leaf.wisdom; fail "no allreduce 8x1 table"; }
# a planted bad choice: the ring alone measured at 8 .. 64 B, 14 latencies
# where the model's choice and the library's recursive doubling take 3; the
# check pass must give those sizes to one of them, and say so
# shellcheck disable=SC2086
TREEDUCE_SHM=0 "$smpirun" -platform leaf.xml -hostfile leaf.hosts -np 8 $sim \
  "$bin/treeduce-tune" "$topo" --alpha-r-ratio 0 --colls allreduce --shapes 8x1 \
  --max-bytes 64 --candidates allreduce=ring -o planted.wisdom 2>planted.err ||
  { cat planted.err; fail "treeduce-tune (ring only) exited $?"; }
cat planted.wisdom
awk '$1 == "range" && $7 == "ring" { found = 1 } END { exit !found }' planted.wisdom &&
  fail "the planted ring kept a range"
grep -q '^check 8 ring [0-9.e+-]* [^ ]* [0-9.e+-]* [0-9.e+-]* [0-9.e+-]* \(model\|mpi\)$' planted.wisdom ||
  fail "no check line gives 8 B to the model or the library"
# the runtime and the benchmark compiled once, each machine's routines on top
mkdir -p obj && cd obj || exit 1
"$smpicc" -c -O2 -DNDEBUG -DSMPI_NO_OVERRIDE_MALLOC -I"$src/runtime" -I"$src/runtime/algo" \
  "$src/bench/bench_smpi.c" "$src"/runtime/*.c "$src"/runtime/algo/*.c || fail "compiling the runtime"
cd .. || exit 1
for kind in untuned tuned; do
  if [ $kind = tuned ]; then w="--wisdom leaf.wisdom"; else w=; fi
  # shellcheck disable=SC2086
  "$gen" "$topo" --alpha-r-ratio 0 $w -o $kind >/dev/null || fail "treeduce-gen $w"
  "$smpicc" -O2 -DNDEBUG -DSMPI_NO_OVERRIDE_MALLOC -I"$src/runtime" -I"$src/runtime/algo" -I$kind \
    -o bench_$kind obj/*.o $kind/trd_leaf2x4_thin.c $kind/trd_leaf2x4_thin_mpi.c -lm -lpthread ||
    fail "building bench_smpi ($kind)"
  # shellcheck disable=SC2086
  TREEDUCE_SHM=0 TREEDUCE_VERBOSE=2 "$smpirun" -platform leaf.xml -hostfile leaf.hosts -np 8 $sim \
    ./bench_$kind --sizes 16,1M --iters 1 >$kind.csv 2>$kind.err || { cat $kind.err; fail "bench_smpi ($kind) exited"; }
  echo "$kind: $(grep -o 'MPI_Allreduce runs [^ ]*' $kind.err | sort -u | tr '\n' ' ')"
  cat $kind.csv
done
awk -F, 'FNR == 1 { next }
  $5 != 0 { print "FAIL: " FILENAME ": " $5 " ranks wrong at " $1 " B"; bad = 1 }
  FILENAME == "untuned.csv" { u[$1] = $3 } FILENAME == "tuned.csv" { t[$1] = $3 }
  END {
    if (!(1048576 in u) || !(1048576 in t)) { print "FAIL: no 1 MiB time"; exit 1 }
    for (b in t) printf "%s B: tuned %.6g us, untuned %.6g us, tuned/untuned %.4f\n", b, t[b] * 1e6, u[b] * 1e6, t[b] / u[b]
    if (t[1048576] > u[1048576] * (1 + 1e-9)) { print "FAIL: tuned slower than untuned at 1 MiB"; bad = 1 }
    exit bad
  }' untuned.csv tuned.csv || fail "the timings above"
echo "smpi.tune_2leaf: passed"
