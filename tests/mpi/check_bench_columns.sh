#!/bin/sh
# bench_allreduce, bench_pieces and bench_persistent on 2 ranks of this node
# with --verify: every timed call's result is compared with the values its
# send buffers were written with just before it (new each call), and the
# tight loops' results too; then the columns of the tight loop (NAME_loop_us)
# and the pieces' copy floor (xfer_us and the ratios to it) are in the tables
# and hold a positive number on every line of the CSVs.  Then the plain
# bench_pieces with --lib LIB --lib mpi: the MPI library's routines timed a
# second time as "old", a column of positive times, and --lib mpi first
# refused; four libraries (LIB, a copy as old, mpi, a second copy as old_b):
# old_b_us and old_b/old, and mpi as the fourth refused; and bench/verdict.sh
# on that CSV, and on one written here: the noise at a size is the larger of
# |mpi_b/mpi - 1| and |old_b/old - 1| (and their medians), and the flagged
# sizes it writes; confirm_verdict on planted second launches (and its
# strict form); recheck_sizes, recheck_rewrite, machine_of and same_code
# (bench/run.sh's recheck of a tuned wisdom) on planted wisdom and notes.
#   check_bench_columns.sh MPIEXEC NPFLAG BENCH_ALLREDUCE BENCH_PIECES BENCH_PERSISTENT|-
#                          BENCH_PIECES_PLAIN LIBTREEDUCE
set -u
mpiexec=$1 np=$2 ar=$3 pieces=$4 pers=$5 plain=$6 lib=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small="--verify --max-bytes 16K --iters 20 --warmup 1"

run() { # name program options...
    name=$1
    shift
    "$mpiexec" "$np" 2 "$@" --csv "$work/$name.csv" >"$work/$name.txt" 2>&1 ||
        { cat "$work/$name.txt"; fail "$name"; }
}
# the CSV's columns named (each a positive number on every line), and rows lines
positive() { # name rows column...
    name=$1 rows=$2
    shift 2
    awk -F, -v want="$*" -v rows="$rows" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
              n = split(want, w, " ")
              for (k = 1; k <= n; k++) if (!(w[k] in col)) { print "no column " w[k]; bad = 1 }
              if (bad) exit 1
              next }
    { for (k = 1; k <= n; k++) {
          v = $(col[w[k]])
          if (v !~ /^([0-9]+\.?[0-9]*|\.[0-9]+)$/ || v + 0 <= 0) { print "line " NR ": " w[k] " = \"" v "\""; bad = 1 }
      } }
    END { if (!bad && NR - 1 != rows) { print NR - 1 " rows, expected " rows; bad = 1 } exit bad }' \
        "$work/$name.csv" || fail "$name.csv"
}
heads() { # name word...
    name=$1
    shift
    for w in "$@"; do
        grep -q "^ *[a-z].* $w" "$work/$name.txt" || fail "$name: no column $w in the table"
    done
}

# shellcheck disable=SC2086
run allreduce "$ar" $small --copy-bytes 0
positive allreduce 12 treeduce_us mpi_us treeduce_loop_us mpi_loop_us loop_speedup xfer_us \
    treeduce_over_xfer mpi_over_xfer
heads allreduce treeduce_loop_us mpi_loop_us loop_spd xfer_us

# shellcheck disable=SC2086
run pieces "$pieces" $small --copy-bytes 0
# rsb and allgather from 16 B (a double per rank), reduce and bcast from 8 B
positive pieces 46 treeduce_us mpi_us treeduce_loop_us mpi_loop_us loop_speedup xfer_us \
    treeduce_over_xfer mpi_over_xfer
heads pieces treeduce_loop_us mpi_loop_us loop_spd xfer_us tr/xfer mpi/xfer
for p in rsb allgather reduce bcast; do
    grep -q "^2,[^,]*,$p," "$work/pieces.csv" || fail "pieces.csv: no line of $p"
done

# BENCH_PERSISTENT "-": not built (persistent collectives are MPI 4)
if [ "$pers" != - ]; then
    # shellcheck disable=SC2086
    run persistent "$pers" $small
    positive persistent 12 tr_loop_us tr_pers_loop_us tr_nb_loop_us mpi_loop_us mpi_pers_loop_us \
        mpi_nb_loop_us
    heads persistent tr_loop_us mpi_nb_loop_us
fi
# the MPI library's routine timed twice
run twice "$plain" --lib "$lib" --lib mpi --verify --max-bytes 1K --iters 20 --warmup 1 \
    --copy-bytes 0 --piece allgather
positive twice 7 new_us old_us mpi_us new_over_old
grep -q "^# old: the MPI library's routines (--lib mpi)" "$work/twice.txt" ||
    fail "twice: no header line on old"
"$mpiexec" "$np" 2 "$plain" --lib mpi --lib "$lib" --max-bytes 8 >"$work/first.txt" 2>&1 &&
    fail "--lib mpi first: accepted"
grep -q -- "--lib mpi: give the library under test first" "$work/first.txt" ||
    { cat "$work/first.txt"; fail "--lib mpi first: not the expected message"; }

# four libraries: LIB, a copy as old, mpi, a second copy as old_b
mkdir "$work/a" "$work/b"
cp "$lib" "$work/a/" && cp "$lib" "$work/b/" || fail "copying $lib"
base=$(basename "$lib")
run four "$plain" --lib "$lib" --lib "$work/a/$base" --lib mpi --lib "$work/b/$base" --verify \
    --max-bytes 1K --iters 20 --warmup 1 --copy-bytes 0 --piece bcast
positive four 8 new_us old_us mpi_b_us old_b_us mpi_us new_over_old mpi_b_over_mpi old_b_over_old
heads four old_b_us old_b/old
"$mpiexec" "$np" 2 "$plain" --lib "$lib" --lib "$work/a/$base" --lib mpi --lib mpi --max-bytes 8 \
    >"$work/fourth.txt" 2>&1 && fail "--lib mpi fourth: accepted"
grep -q -- "--lib mpi: the fourth --lib is a copy of OLD" "$work/fourth.txt" ||
    { cat "$work/fourth.txt"; fail "--lib mpi fourth: not the expected message"; }

# the verdict against both noises
. "$(dirname "$0")/../../bench/verdict.sh"
verdict new old "$work/four.csv" >"$work/verdict.txt" 2>&1
grep -q "^new against old: A/B noise of this run, median [0-9.]*% for the MPI routine timed twice (|mpi_b/mpi - 1|), [0-9.]*% for old loaded twice (|old_b/old - 1|)$" \
    "$work/verdict.txt" || { cat "$work/verdict.txt"; fail "verdict on four.csv: no noise line"; }
# sizes 8-64: new 8% slower everywhere; the noise there is old_b's 10% at
# 8, mpi_b's 9% at 16, 1% at 32 and 64: only 32 and 64 are beyond it
# (medians 1% and 0.5%)
{
    echo "piece,bytes,new_over_old,mpi_b_over_mpi,old_b_over_old"
    echo "bcast,8,1.08,1.00,1.10"
    echo "bcast,16,1.08,0.91,1.00"
    echo "bcast,32,1.08,1.01,0.995"
    echo "bcast,64,1.08,0.99,1.005"
} >"$work/planted.csv"
verdict new old "$work/planted.csv" >"$work/planted.txt" 2>&1
cat >"$work/planted.want" <<'EOF2'
new against old: A/B noise of this run, median 1.0% for the MPI routine timed twice (|mpi_b/mpi - 1|), 0.5% for old loaded twice (|old_b/old - 1|)
  new slower at bcast 32 B: new/old 1.080, beyond the noise there (1.010)
  new slower at bcast 64 B: new/old 1.080, beyond the noise there (1.010)
  2 of 4 sizes beyond the noise
EOF2
diff "$work/planted.want" "$work/planted.txt" || fail "verdict on planted.csv: not the expected lines"
# the flagged sizes written for bench/run.sh's second launches
verdict new old "$work/planted.csv" "$work/flagged" >/dev/null 2>&1
printf 'bcast 32 0.010000\nbcast 64 0.010000\n' >"$work/flagged.want"
diff "$work/flagged.want" "$work/flagged" || fail "verdict's flagged sizes: not the expected lines"
# confirm_verdict: the geometric mean of the same-order and swapped launches
# (the swapped one's new_over_old is old's over new's) against the larger of
# the run's median noise (1%) and the launches' own (2% and 3% here)
cv() { # name same_new_over_old swapped_new_over_old
    printf 'bytes,new_over_old,mpi_b_over_mpi,old_b_over_old\n32,%s,1.02,0.99\n' "$2" >"$work/same.csv"
    printf 'bytes,new_over_old,mpi_b_over_mpi,old_b_over_old\n32,%s,1.00,1.03\n' "$3" >"$work/swap.csv"
    confirm_verdict "bcast 32 B" 0.01 new old "$work/same.csv" "$work/swap.csv" >"$work/$1.txt"
}
# order alone: 1.08 one way, 0.93 the other (1/1.075): 1.004 both
cv order 1.08 1.075 && fail "confirm_verdict: an order effect counted as slower"
grep -qx "  bcast 32 B: new/old 1.080 again, 0.930 swapped, 1.002 both (noise 3.0%): within the noise" \
    "$work/order.txt" || { cat "$work/order.txt"; fail "confirm_verdict: not the expected line (order)"; }
# slower both ways: 1.06 and 1/0.95
cv slower 1.06 0.95 || fail "confirm_verdict: slower in both orders not counted"
grep -qx "  bcast 32 B: new/old 1.060 again, 1.053 swapped, 1.056 both (noise 3.0%): slower" \
    "$work/slower.txt" || { cat "$work/slower.txt"; fail "confirm_verdict: not the expected line (slower)"; }
# a launch that wrote no row counts as slower
printf 'bytes,new_over_old,mpi_b_over_mpi,old_b_over_old\n' >"$work/empty.csv"
confirm_verdict "bcast 32 B" 0.01 new old "$work/same.csv" "$work/empty.csv" >"$work/empty.txt" ||
    fail "confirm_verdict: a launch without a row not counted as slower"
grep -qx "  bcast 32 B: a launch timed no row, counted as slower" "$work/empty.txt" ||
    { cat "$work/empty.txt"; fail "confirm_verdict: not the expected line (no row)"; }
# confirm_verdict strict (bench/run.sh's recheck): not faster at 1.002 both
# (inside the noise), faster at 0.965 both
cv() { # name same_new_over_old swapped_new_over_old
    printf 'bytes,new_over_old,mpi_b_over_mpi,old_b_over_old\n32,%s,1.02,0.99\n' "$2" >"$work/same.csv"
    printf 'bytes,new_over_old,mpi_b_over_mpi,old_b_over_old\n32,%s,1.00,1.03\n' "$3" >"$work/swap.csv"
    confirm_verdict "bcast 32 B" 0 new old "$work/same.csv" "$work/swap.csv" 1 >"$work/$1.txt"
}
cv strict_tie 1.08 1.075 || fail "confirm_verdict strict: a mean above 1 counted as faster"
grep -qx "  bcast 32 B: new/old 1.080, 0.930 swapped, 1.002 both (noise 3.0%): not faster" \
    "$work/strict_tie.txt" || { cat "$work/strict_tie.txt"; fail "confirm_verdict strict: not the expected line (tie)"; }
cv strict_faster 0.95 1.02 && fail "confirm_verdict strict: faster in both orders not counted as faster"
grep -qx "  bcast 32 B: new/old 0.950, 0.980 swapped, 0.965 both (noise 3.0%): faster" \
    "$work/strict_faster.txt" || { cat "$work/strict_faster.txt"; fail "confirm_verdict strict: not the expected line (faster)"; }
# recheck_sizes: the check sizes of the 1x2 ranges whose choice is neither
# "model" nor the model's own there, and the powers of 2 between two of
# them with the same model's choice
cat >"$work/w.wisdom" <<'EOF2'
treeduce-wisdom 2
# range COLL NODES PPN FROM BELOW ALG US RUNNER RUNNER_US
# check BYTES ALG ALG_US MODEL MODEL_US MPI_US NOISE VERDICT
range allreduce 1 2 0 472 shm 0.9 nap 0.95
check 8 shm 0.9 shm 0.9 1.2 0.03 kept
range allreduce 1 2 472 4096 shm:cyclic 1.5 nap 1.7
check 512 shm:cyclic 1.3 shm 1.4 2.7 0.03 kept
check 1024 shm:cyclic 1.3 shm 1.5 2.9 0.03 kept
check 2048 shm:cyclic 1.9 shm 2.0 3.0 0.03 kept
check 4088 shm:cyclic 2.3 shm 2.5 3.2 0.03 kept
range allreduce 1 2 4096 8192 model 2.1 nap 2.2
check 4096 nap 2.2 shm 2.1 3.3 0.03 model
range allreduce 2 1 0 4096 rd 5.0 ring 6.0
check 8 rd 5.0 ring 6.0 9.0 0.03 kept
range bcast 1 2 8192 15688 binomial 3.0 mpi 3.5
check 8192 binomial 3.0 shm 3.4 3.5 0.03 kept
range bcast 1 2 15688 131072 binomial 9.0 mpi 9.5
check 15688 binomial 3.1 shm 3.5 3.6 0.03 kept
check 131064 binomial 20.0 shm 22.0 23.0 0.03 kept
end
EOF2
recheck_sizes "$work/w.wisdom" 1 2 >"$work/sizes"
cat >"$work/sizes.want" <<'EOF2'
6 allreduce 512 shm:cyclic shm
6 allreduce 1024 shm:cyclic shm
6 allreduce 2048 shm:cyclic shm
6 allreduce 4088 shm:cyclic shm
15 bcast 8192 binomial shm
17 bcast 15688 binomial shm
17 bcast 16384 binomial shm
17 bcast 32768 binomial shm
17 bcast 65536 binomial shm
17 bcast 131064 binomial shm
EOF2
diff "$work/sizes.want" "$work/sizes" || fail "recheck_sizes: not the expected sizes"
# recheck_rewrite: the range cut where its verdicts change, at the geometric
# middle of the two sizes in whole doubles (1024 and 2048: 1448; 2048 and
# 4088: 2896), the part not faster given to the model, each verdict under
# its check line; the rest of the file unchanged
cat >"$work/verdicts" <<'EOF2'
6 512 kept allreduce 512 B: faster
6 1024 kept allreduce 1024 B: faster
6 2048 model allreduce 2048 B: not faster
6 4088 kept allreduce 4088 B: faster
15 8192 kept bcast 8192 B: faster
EOF2
recheck_rewrite "$work/w.wisdom" "$work/verdicts" >"$work/w2.wisdom" || fail "recheck_rewrite failed"
awk 'NR == 6 { print "range allreduce 1 2 472 1448 shm:cyclic 1.5 nap 1.7"; next }
     NR == 7 { print; print "# recheck: allreduce 512 B: faster"; next }
     NR == 8 { print; print "# recheck: allreduce 1024 B: faster"
               print "range allreduce 1 2 1448 2896 model 1.5 nap 1.7"; next }
     NR == 9 { print; print "# recheck: allreduce 2048 B: not faster"
               print "range allreduce 1 2 2896 4096 shm:cyclic 1.5 nap 1.7"; next }
     NR == 10 { print; print "# recheck: allreduce 4088 B: faster"; next }
     NR == 16 { print; print "# recheck: bcast 8192 B: faster"; next } { print }' \
    "$work/w.wisdom" >"$work/w2.want"
diff "$work/w2.want" "$work/w2.wisdom" || fail "recheck_rewrite: not the expected wisdom"
# where cutting would give a table more ranges than treeduce-gen reads (3
# here), the whole range goes to the model instead
recheck_rewrite "$work/w.wisdom" "$work/verdicts" 4 >"$work/w3.wisdom" || fail "recheck_rewrite failed (whole)"
awk 'NR == 6 { print "range allreduce 1 2 472 4096 model 1.5 nap 1.7"; next }
     NR == 7 { print; print "# recheck: allreduce 512 B: faster"; next }
     NR == 8 { print; print "# recheck: allreduce 1024 B: faster"; next }
     NR == 9 { print; print "# recheck: allreduce 2048 B: not faster"; next }
     NR == 10 { print; print "# recheck: allreduce 4088 B: faster"; next }
     NR == 16 { print; print "# recheck: bcast 8192 B: faster"; next } { print }' \
    "$work/w.wisdom" >"$work/w3.want"
diff "$work/w3.want" "$work/w3.wisdom" || fail "recheck_rewrite: not the expected wisdom (a whole range)"
# a size without a check line (a power of 2 between two) gets a part of
# its own, its verdict where it lies among the check lines
cat >"$work/verdicts5" <<'EOF2'
17 15688 kept bcast 15688 B: faster
17 16384 kept bcast 16384 B: faster
17 32768 model bcast 32768 B: not faster
17 65536 kept bcast 65536 B: faster
17 131064 kept bcast 131064 B: faster
EOF2
recheck_rewrite "$work/w.wisdom" "$work/verdicts5" >"$work/w5.wisdom" || fail "recheck_rewrite failed (grid)"
awk 'NR == 17 { print "range bcast 1 2 15688 23168 binomial 9.0 mpi 9.5"; next }
     NR == 18 { print; print "# recheck: bcast 15688 B: faster"; print "# recheck: bcast 16384 B: faster"
                print "range bcast 1 2 23168 46344 model 9.0 mpi 9.5"; print "# recheck: bcast 32768 B: not faster"
                print "range bcast 1 2 46344 131072 binomial 9.0 mpi 9.5"; print "# recheck: bcast 65536 B: faster"; next }
     NR == 19 { print; print "# recheck: bcast 131064 B: faster"; next } { print }' \
    "$work/w.wisdom" >"$work/w5.want"
diff "$work/w5.want" "$work/w5.wisdom" || fail "recheck_rewrite: not the expected wisdom (grid sizes)"
# all of them faster: the range as it was, the grid sizes' lines kept too
sed 's/ model bcast 32768 B: not faster/ kept bcast 32768 B: faster/' "$work/verdicts5" >"$work/verdicts7"
recheck_rewrite "$work/w.wisdom" "$work/verdicts7" >"$work/w7.wisdom" || fail "recheck_rewrite failed (all kept)"
awk 'NR == 18 { print; print "# recheck: bcast 15688 B: faster"; print "# recheck: bcast 16384 B: faster"
                print "# recheck: bcast 32768 B: faster"; print "# recheck: bcast 65536 B: faster"; next }
     NR == 19 { print; print "# recheck: bcast 131064 B: faster"; next } { print }' \
    "$work/w.wisdom" >"$work/w7.want"
diff "$work/w7.want" "$work/w7.wisdom" || fail "recheck_rewrite: not the expected wisdom (all kept)"
# a second recheck of the rewritten file keeps the first one's comments
# (512 not faster now: cut at 728, between 512 and 1024)
printf '6 512 model allreduce 512 B: not faster\n' >"$work/verdicts2"
recheck_rewrite "$work/w2.wisdom" "$work/verdicts2" >"$work/w4.wisdom" || fail "recheck_rewrite failed (again)"
[ "$(grep -c '^# recheck:' "$work/w4.wisdom")" = 6 ] || { cat "$work/w4.wisdom"; fail "recheck_rewrite: the comments of a first recheck lost"; }
grep -qx 'range allreduce 1 2 472 728 model 1.5 nap 1.7' "$work/w4.wisdom" ||
    { cat "$work/w4.wisdom"; fail "recheck_rewrite: a second recheck not applied"; }
# two lines of one size (bench/run.sh's two pairs of launches): the size
# goes to the model where either says so, both lines kept as comments
printf '15 8192 kept bcast 8192 B: faster (pair 1)\n15 8192 model bcast 8192 B: not faster (pair 2)\n' >"$work/verdicts6"
recheck_rewrite "$work/w.wisdom" "$work/verdicts6" >"$work/w6.wisdom" || fail "recheck_rewrite failed (pairs)"
awk 'NR == 15 { print "range bcast 1 2 8192 15688 model 3.0 mpi 3.5"; next }
     NR == 16 { print; print "# recheck: bcast 8192 B: faster (pair 1)"; print "# recheck: bcast 8192 B: not faster (pair 2)"; next }
     { print }' "$work/w.wisdom" >"$work/w6.want"
diff "$work/w6.want" "$work/w6.wisdom" || fail "recheck_rewrite: not the expected wisdom (two pairs)"
# machine_of and same_code: the libraries' TREEDUCE_VERBOSE=2 notes of a
# launch at one size; the same algorithms in both, in any order, or not
[ "$(machine_of /x/build/libtreeduce_local_tuned.so)" = local_tuned ] || fail "machine_of: not local_tuned"
cat >"$work/notes.log" <<'EOF2'
treeduce[local_tuned]: MPI_Bcast runs binomial
treeduce[local]: MPI_Bcast runs shm
treeduce[local]: MPI_Bcast runs binomial
treeduce[local_tuned]: MPI_Bcast runs shm
treeduce[local]: MPI_Bcast: the MPI library's routine takes a communicator's first 4 calls (TREEDUCE_SEGMENT_CALLS)
EOF2
runs=$(same_code "$work/notes.log" local_tuned local) || fail "same_code: the same algorithms not seen"
case $runs in *"MPI_Bcast runs shm"*"MPI_Bcast runs binomial"* | *"MPI_Bcast runs binomial"*"MPI_Bcast runs shm"*) ;;
*) fail "same_code: printed '$runs'" ;; esac
echo "treeduce[local_tuned]: MPI_Bcast runs mpi" >>"$work/notes.log"
same_code "$work/notes.log" local_tuned local >/dev/null && fail "same_code: different algorithms taken for the same"
same_code "$work/notes.log" local local >/dev/null && fail "same_code: one machine name taken for two libraries"
grep -v local_tuned "$work/notes.log" >"$work/notes1.log"
same_code "$work/notes1.log" local_tuned local >/dev/null && fail "same_code: a library without notes taken for the same"
echo "bench columns: ok"
