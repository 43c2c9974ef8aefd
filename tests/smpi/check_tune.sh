#!/bin/sh
# check_tune.sh SMPIRUN GEN SMPI_BUILD SRC WORK
# smpi.tune: the SMPI build's treeduce-tune under smpirun on testbed (four
# 2-core nodes) exported by treeduce-gen --simgrid, one rank per host, a tiny
# grid; the wisdom names the platform's hosts and treeduce-gen takes it.
# Exits 77 (skipped) without SimGrid or the SMPI build.
smpirun=$1 gen=$2 bin=$3 src=$4 work=$5
topo=$src/tests/data/testbed.topo
if ! command -v "$smpirun" >/dev/null 2>&1 || [ ! -f "$bin/CMakeCache.txt" ]; then
  echo "skipped: smpirun or the SMPI build (smpi.build) missing"; exit 77
fi
cmake --build "$bin" --target treeduce-tune || { echo "FAIL: building the SMPI treeduce-tune"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$gen" "$topo" --simgrid testbed.xml || exit 1
printf 'n0\nn1\nn2\nn3\n' >hosts
sh "$src/tests/mpi/run.sh" "$smpirun" -np 4 -platform testbed.xml -hostfile hosts \
  --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
  --log=root.thres:warning --log=xbt_cfg.thres:warning \
  "$bin/treeduce-tune" "$topo" --max-bytes 4K --factor 8 --size-time 0.002 -o w.wisdom || exit 1
cat w.wisdom
grep -q '^hosts "n0" "n1" "n2" "n3"$' w.wisdom || { echo "FAIL: hosts"; exit 1; }
grep -q '^range allreduce 4 1 0 ' w.wisdom || { echo "FAIL: no allreduce 4x1 table"; exit 1; }
grep -q '^range bcast 2 1 0 ' w.wisdom || { echo "FAIL: no bcast 2x1 table"; exit 1; }
"$gen" "$topo" --wisdom w.wisdom -o gen || { echo "FAIL: treeduce-gen --wisdom"; exit 1; }
echo "smpi.tune: passed"
