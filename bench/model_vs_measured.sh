#!/bin/sh
# The cost model against measurement on this machine: every algorithm
# treeduce plans as a schedule, forced with TREEDUCE_ALGORITHM, timed by
# bench_allreduce (2 ranks, medians, 8 B .. MAX), beside the time the
# schedule's cost model predicts for this machine (treeduce-gen local
# --predict MAX).  Prints one table per algorithm and size with both times
# and their ratio, then Spearman's rank correlation of predicted against
# measured times: over all (algorithm, size) pairs, and per size across the
# algorithms (does the model order the candidates as the machine does?).
# Not a test: the numbers depend on the machine and its load.
#   bench/model_vs_measured.sh [-A] [-a "ALG ..."] [-r REPEATS] [-m MEASURED] [-o SAVE]
#                              [BUILD_DIR] [MAX (default 4M)] [TOPOLOGY (default local)]
# -A: time the algorithms in one run of bench_allreduce_local --also all
#     (every algorithm that can be forced, through trd_allreduce_with,
#     interleaved call by call) instead of one run each: the load of a
#     shared machine then slows them alike.  Forcing through that routine
#     costs the same small time on every call of every algorithm.
# -a: only these algorithms (as --predict names them, with parameters:
#     "shm shm:cyclic shm:rx:2 shm:tree:2"); default every one --predict lists.
# -r: time every algorithm REPEATS times (default 1), the runs of the
#     algorithms taking turns.  Each run times the MPI library's allreduce
#     interleaved with the algorithm, and the algorithm's time is taken
#     relative to it: the measured time is the median over the runs of that
#     ratio times the median over all runs of the MPI library's time at the
#     size.  On a shared machine the load changes from run to run, and slows
#     both routines of a run alike.
# -o: keep the measured medians (algorithm,bytes,measured_us) in SAVE;
# -m: take them from MEASURED instead of running the benchmark (compare a
#     changed model with the same measurements).
# Per size, the pairs of algorithms whose measured times differ by more than
# 10% are counted, and those the model orders the other way listed: smaller
# differences are within the noise of a shared machine.
set -eu
algs=
all=
reps=1
measured=
save=
while getopts Aa:r:m:o: o; do
    case $o in
    A) all=1 ;;
    a) algs=$OPTARG ;;
    r) reps=$OPTARG ;;
    m) measured=$OPTARG ;;
    o) save=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
max=${2:-4M}
topo=${3:-local}
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/treeduce-gen" "$topo" --predict "$max" > "$work/predicted.csv"
[ -n "$algs" ] || algs=$(tail -n +2 "$work/predicted.csv" | cut -d, -f1 | uniq)
if [ -n "$measured" ]; then
    cp "$measured" "$work/measured.csv"
else
    : > "$work/runs.csv"
    : > "$work/mpi.csv"
    i=0
    while [ "$i" -lt "$reps" ]; do
        i=$((i + 1))
        if [ -n "$all" ]; then
            "$mpiexec" -n 2 "$build/bench_allreduce_local" --also all --max-bytes "$max" \
                --copy-bytes 0 --csv "$work/m.csv" > /dev/null
            # the NAME_us columns after treeduce_over_best ("-": fell back; ';' for ',')
            awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mpi_us") m = i; else if ($i == "treeduce_over_best") f = i
                               else if (f && !end && $i ~ /_us$/) { n = $i; sub(/_us$/, "", n); gsub(/;/, ",", n); name[i] = n }
                               else if (f) end = 1
                               next }
                     { for (i in name) if ($i != "-" && $i != "") print name[i] "," $3 "," $i / $m
                       print "mpi," $3 "," $m > "/dev/stderr" }' "$work/m.csv" >> "$work/runs.csv" 2>> "$work/mpi.csv"
            continue
        fi
        for alg in $algs; do
            TREEDUCE_ALGORITHM=$alg "$mpiexec" -n 2 "$build/bench_allreduce_local" --max-bytes "$max" \
                --copy-bytes 0 --csv "$work/m.csv" > /dev/null
            # ranks,algorithm,bytes,count,iters,treeduce_us,mpi_us,...
            tail -n +2 "$work/m.csv" | awk -F, -v a="$alg" '{ print a "," $3 "," $6 / $7 }' >> "$work/runs.csv"
            tail -n +2 "$work/m.csv" | awk -F, '{ print "mpi," $3 "," $7 }' >> "$work/mpi.csv"
        done
    done
    # medians per algorithm and size: of the ratios, and of the MPI library's times
    med='function flush() { if (n) printf "%s,%.6g\n", key, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    { k = $1 "," $2; if (k != key) { flush(); key = k; n = 0 } v[++n] = $3 }
    END { flush() }'
    sort -t, -k1,1 -k2,2n -k3,3g "$work/mpi.csv" | awk -F, "$med" > "$work/mpi_med.csv"
    sort -t, -k1,1 -k2,2n -k3,3g "$work/runs.csv" | awk -F, "$med" |
        awk -F, 'FNR == NR { mpi[$2] = $3; next } { printf "%s,%s,%.3f\n", $1, $2, $3 * mpi[$2] }' \
            "$work/mpi_med.csv" - > "$work/measured.csv"
fi
[ -z "$save" ] || cp "$work/measured.csv" "$save"

awk -F, -v algs="$algs" "$(cat "$top/bench/spearman.awk")"'
BEGIN { split(algs, want, " "); for (i in want) wanted[want[i]] = 1 }
FNR == 1 { file++ }
file == 1 && FNR > 1 { pred[$1 "," $2] = $3; next }
file == 2 && ($1 in wanted) {
            meas[$1 "," $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++ns] = $2 }
            if (!($1 in aseen)) { aseen[$1] = 1; algs_[++na] = $1 } }
END {
    printf "%-14s %10s %13s %13s %9s\n", "algorithm", "bytes", "predicted_us", "measured_us", "meas/pred"
    n = 0
    for (a = 1; a <= na; a++)
        for (s = 1; s <= ns; s++) {
            k = algs_[a] "," sizes[s]
            if (!(k in pred) || !(k in meas)) continue
            printf "%-14s %10d %13.2f %13.2f %9.2f\n", algs_[a], sizes[s], pred[k], meas[k], meas[k] / pred[k]
            n++; X[n] = pred[k]; Y[n] = meas[k]
        }
    printf "\nSpearman rank correlation, predicted vs measured, all %d (algorithm, size) pairs: %.3f\n", n, spearman(n, X, Y)
    printf "per size, across the %d algorithms (pairs measured > 10%% apart: how many, and those the model orders the other way):\n", na
    sum = 0; tpairs = 0; tbad = 0
    for (s = 1; s <= ns; s++) {
        m = 0; delete X; delete Y; delete A
        for (a = 1; a <= na; a++) {
            k = algs_[a] "," sizes[s]
            if ((k in pred) && (k in meas)) { m++; X[m] = pred[k]; Y[m] = meas[k]; A[m] = algs_[a] }
        }
        r = spearman(m, X, Y); sum += r
        pairs = 0; bad = ""
        for (i = 1; i <= m; i++)
            for (j = 1; j <= m; j++)
                if (Y[i] * 1.1 < Y[j]) {
                    pairs++
                    if (X[i] > X[j]) { bad = bad " " A[i] "<" A[j]; tbad++ }
                }
        tpairs += pairs
        printf "  %10d B: %6.3f  %2d%s\n", sizes[s], r, pairs, bad
    }
    printf "  mean: %.3f; pairs > 10%% apart: %d, ordered the other way by the model: %d\n", ns ? sum / ns : 0, tpairs, tbad
}' "$work/predicted.csv" "$work/measured.csv"
