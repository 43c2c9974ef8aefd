#!/bin/sh
# The main job: show the plan for this machine, then run its generated
# allreduce (then the pieces, and the persistent and nonblocking allreduce)
# against the MPI library's own in one run
# (2 ranks), correctness check first, and keep the tables as CSV under
# bench/results/.
#   bench/run.sh [NEW [OLD]] [extra bench_allreduce options]
# Without OLD it first tunes this node: treeduce-tune measures every
# candidate and the MPI library's routine (2 ranks, for
# TREEDUCE_TUNE_BUDGET, default 10m) into bench/results/wisdom-HOST.wisdom,
# and NEW is reconfigured with TREEDUCE_LOCAL_WISDOM set to it, which builds
# libtreeduce_local_tuned.so; every size where the tuned library runs other
# code than the untuned one is timed again in fresh launches, and a range
# whose choice is not faster there goes to the model (recheck, below; the
# tuned library is built again); then the allreduce and the pieces run tuned
# (new) beside untuned (old) and the MPI library's, as with OLD below.  If
# the tuner or the tuned build fails, the job says why and benches the
# untuned library alone.
# NEW and OLD are build directories (NEW defaults to build/).  With OLD, both
# builds' libtreeduce_local.so are loaded into NEW's plain bench_allreduce and
# bench_pieces (--lib, --lib) and timed in the same run, interleaved call by
# call with the MPI library's: the tables add old_us and new/old, NEW's time
# over OLD's, to show that a change to the runtime is no slower.
# In both modes the MPI library's routine is timed twice (mpi_b/mpi) and a
# copy of OLD (untuned) is loaded as a fourth library (old_b/old): the
# verdict after each table takes the larger of the two as the run's noise,
# as two instances of one library differ by more than MPI's two timings at
# some sizes (where each one's shared-memory segment lands).
# Each CSV gets a PNG beside it (bench/plot.sh, when gnuplot is installed):
# speed-up and bandwidth over the size, with the bounds and, for the
# allreduce, the model's predicted time (treeduce-gen local --predict, kept
# as predict-HOST.csv).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
old=
perscsv=
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    old=$1
    shift
fi
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)

. "$top/bench/verdict.sh"
mkdir -p "$top/bench/results"
# copy_lib LIB: copy, a copy of LIB under the same name in a folder of its
# own (bench --lib loads a file once), removed on exit
copies=
trap 'rm -rf $copies' EXIT
# work: the sizes flagged and their second launches' CSVs (confirm)
work=$(mktemp -d "${TMPDIR:-/tmp}/treeduce-bench.XXXXXX")
copies=$work
copy_lib() {
    d=$(mktemp -d "${TMPDIR:-/tmp}/treeduce-copy.XXXXXX")
    copies="$copies $d"
    cp "$1" "$d/"
    copy=$d/$(basename "$1")
}
# confirm NEW_NAME OLD_NAME FLAGGED BENCH NEW_LIB OLD_LIB [BENCH options]:
# every size the verdict flagged (FLAGGED, verdict's fourth argument) timed
# again in two fresh launches of BENCH at that size alone, the libraries in
# the same order and swapped (OLD loaded first, a copy of NEW fourth), and
# judged by confirm_verdict (bench/verdict.sh).  Two instances of one
# library differ from launch to launch by more than one launch's A/B noise
# shows (where each one's code and segment land): up to 10% at
# sub-microsecond sizes, and 2-7% either way at 32 MiB where the tuned and
# untuned libraries run the same code.  A slower routine stays slower in
# both orders.  Where the two libraries said (TREEDUCE_VERBOSE=2) that they
# run the same algorithms at the size (same_code; tuned against untuned,
# whose machines have two names), a difference is not counted: it is the
# two instances', not the routines'.
# relaunch NAME FIRST SECOND COPY [BENCH options]: confirm's BENCH ($sel,
# at $bytes alone) with FIRST and SECOND loaded in that order, a copy of
# SECOND fourth, into $work/NAME.csv, its output added to $work/log.
# With TREEDUCE_VERBOSE=2 each library says what it runs (same_code).
relaunch() {
    rname=$1 rfirst=$2 rsecond=$3 rcopy=$4
    shift 4
    # shellcheck disable=SC2086 # sel: no option or two words
    TREEDUCE_VERBOSE=2 "$mpiexec" -n 2 "$cbench" $sel "$@" --min-bytes "$bytes" --max-bytes "$bytes" \
        --lib "$rfirst" --lib "$rsecond" --lib mpi --lib "$rcopy" --csv "$work/$rname.csv" \
        </dev/null >>"$work/log" 2>&1
}
confirm() {
    cnew_name=$1 cold_name=$2 flagged=$3 cbench=$4 cnew=$5 cold=$6
    shift 6
    [ -s "$flagged" ] || return 0
    copy_lib "$cnew"
    cnew_copy=$copy
    copy_lib "$cold"
    cold_copy=$copy
    echo "  the flagged sizes timed again in two fresh launches, the same order and swapped:"
    kept=0 total=0 same=0
    while read -r piece bytes med; do
        total=$((total + 1))
        sel='' label="$bytes B"
        [ "$piece" = - ] || sel="--piece $piece" label="$piece $bytes B"
        : >"$work/log"
        if ! relaunch same "$cnew" "$cold" "$cold_copy" "$@" ||
            ! relaunch swap "$cold" "$cnew" "$cnew_copy" "$@"; then
            echo "  $label: the launch failed, counted as slower:"
            sed 's/^/    /' "$work/log"
            kept=$((kept + 1))
            continue
        fi
        if confirm_verdict "$label" "$med" "$cnew_name" "$cold_name" "$work/same.csv" \
            "$work/swap.csv"; then
            if runs=$(same_code "$work/log" "$(machine_of "$cnew")" "$(machine_of "$cold")"); then
                echo "    $cnew_name and $cold_name run the same code there ($runs): a difference of the two instances, not counted"
                same=$((same + 1))
            else
                kept=$((kept + 1))
            fi
        fi
    done <"$flagged"
    sametext=
    [ "$same" -eq 0 ] || sametext=", $same of them set aside where both run the same code"
    if [ "$kept" -eq 0 ]; then
        echo "  $cnew_name is slower than $cold_name at none of the $total flagged sizes with the order balanced$sametext: no slower, within the noise"
    else
        echo "  $cnew_name is slower than $cold_name at $kept of the $total flagged sizes with the order balanced$sametext"
    fi
}
# recheck WISDOM TUNED UNTUNED: the tuner judges in its own process, where
# two close routines can rank the other way round than in an application's
# (docs/tuning.md, "What one process cannot see").  So every size at which
# TUNED runs other code than UNTUNED (recheck_sizes: WISDOM's check sizes
# of its 1x2 tables and the grid's between them) is timed again in two
# pairs of fresh launches of the bench, each pair the libraries in both
# orders, and where the tuned choice is not faster than the untuned one with
# the order balanced (confirm_verdict, strict) in either pair, its range is
# cut there and that part goes to the model (recheck_rewrite).
# WISDOM is rewritten through a temporary file renamed into place, each
# launch's line added under its check line as a comment.  Returns 0 where a
# size went to the model (TUNED must be built again), else 1.
recheck() {
    rw=$1 rt=$2 ru=$3
    recheck_sizes "$rw" 1 2 >"$work/recheck.sizes"
    if [ ! -s "$work/recheck.sizes" ]; then
        echo "  no size where the tuned library runs other code than the untuned one"
        return 1
    fi
    copy_lib "$rt"
    rt_copy=$copy
    copy_lib "$ru"
    ru_copy=$copy
    : >"$work/recheck.verdicts"
    while read -r line coll tbytes alg model; do
        sel='' bytes=$tbytes cbench=$build/bench_pieces
        case $coll in
        allreduce) cbench=$build/bench_allreduce ;;
        reduce_scatter_block) sel="--piece rsb" bytes=$((tbytes * 2)) ;; # the bench's size: p blocks
        allgather) sel="--piece allgather" bytes=$((tbytes * 2)) ;;
        reduce | bcast) sel="--piece $coll" ;;
        *) continue ;;
        esac
        what="$coll $tbytes B ($alg; untuned $model)"
        for pair in 1 2; do
            : >"$work/log"
            if ! relaunch same "$rt" "$ru" "$ru_copy" --copy-bytes 0 ||
                ! relaunch swap "$ru" "$rt" "$rt_copy" --copy-bytes 0; then
                echo "  $what: the launch failed, counted as not faster:"
                sed 's/^/    /' "$work/log"
                echo "$line $tbytes model $what: a launch failed" >>"$work/recheck.verdicts"
                break
            fi
            v=kept
            out=$(confirm_verdict "$what" 0 tuned untuned "$work/same.csv" "$work/swap.csv" 1) && v=model
            echo "$out (pair $pair)"
            echo "$line $tbytes $v ${out#  } (pair $pair)" >>"$work/recheck.verdicts"
        done
    done <"$work/recheck.sizes"
    ranges=$(awk '$3 == "model" && !($1 in r) { r[$1] = 1; n++ } END { print n + 0 }' "$work/recheck.verdicts")
    tmp=$(mktemp "$rw.XXXXXX")
    if ! recheck_rewrite "$rw" "$work/recheck.verdicts" >"$tmp" || ! mv "$tmp" "$rw"; then
        rm -f "$tmp"
        echo "bench/run.sh: $rw could not be rewritten" >&2
        return 1
    fi
    echo "  sizes given to the model in $ranges range(s) of $rw"
    [ "$ranges" -gt 0 ]
}
host=$(hostname -s)
echo "== plan for this machine (treeduce-gen local --explain)"
plan=$("$build/treeduce-gen" local --explain)
echo "$plan"
if [ -z "$old" ]; then
    perscsv="$top/bench/results/persistent-$host.csv"
    wisdom="$top/bench/results/wisdom-$host.wisdom"
    budget=${TREEDUCE_TUNE_BUDGET:-10m}
    tuned=$build/libtreeduce_local_tuned.so
    echo
    echo "== tuning this node: treeduce-tune local --budget $budget, 2 ranks"
    why=
    if [ ! -x "$build/treeduce-tune" ]; then
        why="no $build/treeduce-tune"
    elif ! "$mpiexec" -n 2 "$build/treeduce-tune" local --budget "$budget" -o "$wisdom"; then
        why="treeduce-tune failed"
    elif ! cmake -S "$top" -B "$build" -DTREEDUCE_LOCAL_WISDOM="$wisdom" >"$build/tuned.log" 2>&1 ||
        ! cmake --build "$build" --target treeduce_local_tuned >>"$build/tuned.log" 2>&1; then
        why="the tuned library did not build (see $build/tuned.log)"
        # leave the build as it was: its default target would build the tuned one
        cmake -S "$top" -B "$build" -DTREEDUCE_LOCAL_WISDOM= >>"$build/tuned.log" 2>&1 || true
    elif ! grep -q "wisdom-$host.wisdom" "$build/treeduce_local_tuned/trd_local_tuned.c"; then
        why="the generator did not take the wisdom (no WISDOM in treeduce_generate?)"
    else
        echo
        echo "== the tuned choices timed again against the untuned ones, in fresh launches"
        if recheck "$wisdom" "$tuned" "$build/libtreeduce_local.so" &&
            ! cmake --build "$build" --target treeduce_local_tuned >>"$build/tuned.log" 2>&1; then
            why="the rechecked tuned library did not build (see $build/tuned.log)"
        fi
    fi
    if [ -z "$why" ]; then
        csv="$top/bench/results/allreduce-$host-tuned.csv"
        pcsv="$top/bench/results/pieces-$host-tuned.csv"
        echo
        echo "== allreduce, tuned (new: $tuned) and untuned (old), vs the MPI library's, 2 ranks, same run"
        copy_lib "$build/libtreeduce_local.so"
        "$mpiexec" -n 2 "$build/bench_allreduce" --lib "$tuned" --lib "$build/libtreeduce_local.so" \
            --lib mpi --lib "$copy" --csv "$csv" "$@"
        verdict tuned untuned "$csv" "$work/allreduce.flagged"
        confirm tuned untuned "$work/allreduce.flagged" "$build/bench_allreduce" "$tuned" \
            "$build/libtreeduce_local.so" "$@"
        echo
        echo "== reduce_scatter_block, allgather, reduce, bcast, tuned (new) and untuned (old), vs the MPI library's, 2 ranks, same run"
        "$mpiexec" -n 2 "$build/bench_pieces" --lib "$tuned" --lib "$build/libtreeduce_local.so" \
            --lib mpi --lib "$copy" --csv "$pcsv"
        verdict tuned untuned "$pcsv" "$work/pieces.flagged"
        confirm tuned untuned "$work/pieces.flagged" "$build/bench_pieces" "$tuned" \
            "$build/libtreeduce_local.so"
    else
        echo "bench/run.sh: not tuned: $why; benching the untuned library" >&2
        csv="$top/bench/results/allreduce-$host.csv"
        pcsv="$top/bench/results/pieces-$host.csv"
        echo
        echo "== generated allreduce vs the MPI library's, 2 ranks, same run"
        "$mpiexec" -n 2 "$build/bench_allreduce_local" --csv "$csv" "$@"
        echo
        echo "== reduce_scatter_block, allgather, reduce, bcast vs the MPI library's, 2 ranks, same run"
        "$mpiexec" -n 2 "$build/bench_pieces_local" --csv "$pcsv"
    fi
    echo
    echo "== blocking, persistent and nonblocking allreduce vs the MPI library's, 2 ranks, same run"
    "$mpiexec" -n 2 "$build/bench_persistent_local" --csv "$perscsv"
else
    new_lib=$build/libtreeduce_local.so
    old_lib=$old/libtreeduce_local.so
    for lib in "$new_lib" "$old_lib"; do
        [ -f "$lib" ] || { echo "bench/run.sh: no $lib" >&2; exit 2; }
    done
    # OLD's generator may plan differently: then its plan too (the seconds
    # the verification took aside)
    if [ -x "$old/treeduce-gen" ]; then
        old_plan=$("$old/treeduce-gen" local --explain 2>&1 || true)
        strip='s/, [0-9.]* s$//'
        if [ "$(echo "$old_plan" | sed "$strip")" != "$(echo "$plan" | sed "$strip")" ]; then
            echo
            echo "== OLD's plan ($old/treeduce-gen local --explain) differs"
            echo "$old_plan"
        fi
    fi
    copy_lib "$old_lib"
    csv="$top/bench/results/allreduce-$host-new-old.csv"
    pcsv="$top/bench/results/pieces-$host-new-old.csv"
    echo
    echo "== generated allreduce, NEW ($build) and OLD ($old), vs the MPI library's, 2 ranks, same run"
    "$mpiexec" -n 2 "$build/bench_allreduce" --lib "$new_lib" --lib "$old_lib" --lib mpi --lib "$copy" --csv "$csv" "$@"
    verdict NEW OLD "$csv" "$work/allreduce.flagged"
    confirm NEW OLD "$work/allreduce.flagged" "$build/bench_allreduce" "$new_lib" "$old_lib" "$@"
    echo
    echo "== reduce_scatter_block, allgather, reduce, bcast, NEW and OLD, vs the MPI library's, 2 ranks, same run"
    "$mpiexec" -n 2 "$build/bench_pieces" --lib "$new_lib" --lib "$old_lib" --lib mpi --lib "$copy" --csv "$pcsv"
    verdict NEW OLD "$pcsv" "$work/pieces.flagged"
    confirm NEW OLD "$work/pieces.flagged" "$build/bench_pieces" "$new_lib" "$old_lib"
fi
echo
echo "CSV: $csv $pcsv${perscsv:+ $perscsv}"
# the pictures: a bench that ran is not failed by a missing or failed plot
if command -v gnuplot >/dev/null; then
    pred=
    if [ -z "$old" ]; then
        pred=$top/bench/results/predict-$host.csv
        max=$(awk -F, 'NR > 1 && $3 + 0 > m { m = $3 + 0 } END { print m + 0 }' "$csv")
        "$build/treeduce-gen" local --predict "$max" >"$pred" || pred=
    fi
    sh "$top/bench/plot.sh" ${pred:+--predict "$pred"} "$csv" || echo "bench/run.sh: ${csv%.csv}.png not written" >&2
    for f in "$pcsv" $perscsv; do
        sh "$top/bench/plot.sh" "$f" || echo "bench/run.sh: ${f%.csv}.png not written" >&2
    done
else
    echo "gnuplot not found: PNGs skipped (apt-get install gnuplot-nox)"
fi
