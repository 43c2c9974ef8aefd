#!/bin/sh
# check_tune.sh MPIEXEC TUNE GEN MPICC SRC RUNTIME_A ALGO_A WORK
# tune.np2: treeduce-tune at np 2 on tests/data/testbed.topo, one node x 2
# ranks and 2 nodes x 1 (TREEDUCE_HOSTS), a tiny grid, bcast restricted to
# the MPI library's routine (so that "mpi" wins its ranges); then for each
# wisdom: treeduce-gen --wisdom, the generated C compiled with the build's
# runtime and check_wisdom.c, run at np 2 on the same placement (every
# range's winner runs, results equal PMPI's).  Every check line's verdict
# is the one its own times and noise give (the check pass: the winner
# stays where it is faster than the model's choice beyond the noise, or is
# that choice, and not slower than the MPI library's routine beyond it),
# and a range the check gave away names who took it.  A
# budget run: cut short, "budget 1 0", nothing of the table cut short.  A
# candidate with wrong results: reported, never chosen.  What is asserted
# holds at any speed of the machine: no winner, no table measured within the
# budget, is taken for granted.
mpiexec=$1 tune=$2 gen=$3 mpicc=$4 src=$5 rt=$6 algo=$7 work=$8
topo=$src/tests/data/testbed.topo
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# verdicts FILE: each check line's verdict from its own numbers, and each
# range taken by the check ('model', or 'mpi' where the measured winner was
# another) backed by a check line of that verdict
# (a lead counts beyond the larger of the noise and TUNE_TIE_US, as
# tune_check_verdict takes it)
tie=$(awk '$1 == "#define" && $2 == "TUNE_TIE_US" { print $3 }' "$src/measure/tune_rules.h")
[ -n "$tie" ] || fail "no TUNE_TIE_US in measure/tune_rules.h"
verdicts() {
  awk -v tie="$tie" '
    function margin(t, n) { return t + (n * t > tie ? n * t : tie) }
    /^range / { if (rng != "" && need != "" && !seen) { print "no check backs: " rng; bad = 1 }
                rng = $0; seen = 0; need = ($7 == "model") ? "model" : "" }
    /^check / { a = $4 + 0; m = $6 + 0; p = $7 + 0; n = $8 + 0
                beats = ($3 == $5) || margin(a, n) < m
                v = (beats && a <= margin(p, n)) ? "kept" : (p <= margin(m, n)) ? "mpi" : "model"
                if ($9 != v) { print "verdict " $9 ", its numbers say " v ": " $0; bad = 1 }
                if ($9 == need) seen = 1 }
    END { if (rng != "" && need != "" && !seen) { print "no check backs: " rng; bad = 1 }
          exit bad }' "$1"
}

for placement in 1x2:n0,n0 2x1:n0,n1; do
  name=${placement%%:*} hosts=${placement#*:}
  w=$work/$name.wisdom
  TREEDUCE_HOSTS=$hosts sh "$src/tests/mpi/run.sh" "$mpiexec" -n 2 "$tune" "$topo" \
    --min-bytes 8 --max-bytes 64K --factor 4 --budget 120 --size-time 0.01 \
    --candidates bcast=mpi -o "$w" || fail "treeduce-tune on $hosts"
  cat "$w"
  grep -q "^budget 120 1$" "$w" || fail "$w: not complete"
  grep -q "^hosts \"n0\" \"${hosts#n0,}\"$" "$w" || fail "$w: hosts"
  for coll in allreduce reduce_scatter_block allgather reduce bcast; do
    grep -q "^range $coll ${name%x*} ${name#*x} 0 " "$w" || fail "$w: no $coll table"
  done
  # bcast measured the MPI library's routine alone: its ranges are that
  # routine's, or the model's where the check found the untuned choice faster
  grep "^range bcast " "$w" | grep -vq "^range bcast [0-9]* [0-9]* [0-9]* [0-9-]* \(mpi\|model\) " &&
    fail "$w: bcast chose neither mpi nor the model"
  # the ranges cover what was measured: from 0 (the grid starts at one
  # double) to half a bisection step above 32 KiB, the largest size of
  # the grid (8 B times powers of 4 up to 64 KiB)
  awk '/^range / { if ($6 == "-" || $6 + 0 <= 32768 || $6 + 0 > 32768 * 1.1) last[$2] = $6; else last[$2] = "ok" }
       END { for (c in last) if (last[c] != "ok") { print c " ends at " last[c]; bad = 1 }; exit bad }' "$w" ||
    fail "$w: a table does not end half a bisection step above 32 KiB"
  grep -q "^check " "$w" || fail "$w: no check lines"
  verdicts "$w" || fail "$w: a check's verdict is not its numbers'"
  "$gen" "$topo" --wisdom "$w" -o "$work/$name" || fail "treeduce-gen --wisdom $w"
  "$mpicc" -O1 -o "$work/$name/check_wisdom" "$src/tests/tune/check_wisdom.c" \
    "$work/$name"/trd_testbed.c "$work/$name"/trd_testbed_mpi.c -I"$work/$name" \
    -I"$src/runtime" -I"$src/runtime/algo" "$rt" "$algo" -lpthread -lm ||
    fail "compiling the generated library"
  # the segment from the first call: a communicator's calls before it take
  # the model's choice, and the tables were measured with it
  TREEDUCE_HOSTS=$hosts TREEDUCE_VERBOSE=2 TREEDUCE_SEGMENT_CALLS=0 sh "$src/tests/mpi/run.sh" \
    "$mpiexec" -n 2 "$work/$name/check_wisdom" "$w" >"$work/$name.out" 2>&1
  rc=$?
  cat "$work/$name.out"
  [ $rc -eq 0 ] || fail "check_wisdom on $hosts"
  grep -q "check_wisdom: [1-9][0-9]* ranges, [1-9][0-9]* passed, 0 failed" "$work/$name.out" ||
    fail "check_wisdom on $hosts: no summary"
done

# a budget far too small for the grid (allreduce's first pass alone, some
# 20 candidates up to 64 MiB, takes seconds on any machine): cut short and
# said so, allreduce left out; bcast (the MPI library's routine only),
# measured first, is in the file where its grid fitted in the second
w=$work/budget.wisdom
TREEDUCE_HOSTS=n0,n1 sh "$src/tests/mpi/run.sh" "$mpiexec" -n 2 "$tune" "$topo" \
  --min-bytes 8 --max-bytes 64M --factor 4 --size-time 0.001 --colls bcast,allreduce \
  --candidates bcast=mpi --budget 1s -o "$w" || fail "treeduce-tune --budget 1s"
cat "$w"
grep -q "^budget 1 0$" "$w" || fail "$w: not marked cut short"
grep "^range bcast " "$w" | grep -vq "^range bcast 2 1 [0-9]* [0-9-]* \(mpi\|model\) " &&
  fail "$w: bcast chose neither mpi nor the model"
grep -q "^range allreduce" "$w" && fail "$w: holds the allreduce table cut short"
"$gen" "$topo" --wisdom "$w" -o "$work/budget" || fail "treeduce-gen --wisdom $w"
# a candidate whose results are wrong (its plan broken with TREEDUCE_BREAK)
# is reported and never chosen
w=$work/broken.wisdom
TREEDUCE_BREAK=rd:1:2 TREEDUCE_HOSTS=n1,n0 sh "$src/tests/mpi/run.sh" "$mpiexec" -n 2 "$tune" \
  "$topo" --max-bytes 4K --factor 8 --size-time 0.01 --colls allreduce --candidates allreduce=rd \
  --candidates allreduce=mpi -o "$w" >"$work/broken.out" 2>&1 || fail "treeduce-tune, rd broken"
cat "$work/broken.out" "$w"
grep -qF "treeduce-tune: allreduce 2x1 at 8 B: 'rd' differs from the MPI library's result; never chosen" \
  "$work/broken.out" || fail "the wrong results of rd are not reported"
grep -q "^range allreduce 2 1 0 " "$w" || fail "$w: no allreduce table"
grep -q "^range allreduce .* rd " "$w" && fail "$w: rd is chosen"
verdicts "$w" || fail "$w: a check's verdict is not its numbers'"
echo "tune.np2: passed"
