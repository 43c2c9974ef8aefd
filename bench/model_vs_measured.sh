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
#   bench/model_vs_measured.sh [BUILD_DIR] [MAX (default 4M)] [TOPOLOGY (default local)]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
max=${2:-4M}
topo=${3:-local}
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/treeduce-gen" "$topo" --predict "$max" > "$work/predicted.csv"
: > "$work/measured.csv"
for alg in $(tail -n +2 "$work/predicted.csv" | cut -d, -f1 | uniq); do
    TREEDUCE_ALGORITHM=$alg "$mpiexec" -n 2 "$build/bench_allreduce_local" --max-bytes "$max" \
        --copy-bytes 0 --csv "$work/m.csv" > /dev/null
    # ranks,algorithm,bytes,count,iters,treeduce_us,...
    tail -n +2 "$work/m.csv" | awk -F, -v a="$alg" '{ print a "," $3 "," $6 }' >> "$work/measured.csv"
done

awk -F, '
function spearman(n, x, y,    i, j, rx, ry, mx, my, sxy, sxx, syy) {
    # ranks with ties averaged
    for (i = 1; i <= n; i++) {
        rx[i] = 1; ry[i] = 1
        for (j = 1; j <= n; j++) {
            if (x[j] < x[i]) rx[i]++; else if (j != i && x[j] == x[i]) rx[i] += 0.5
            if (y[j] < y[i]) ry[i]++; else if (j != i && y[j] == y[i]) ry[i] += 0.5
        }
    }
    for (i = 1; i <= n; i++) { mx += rx[i] / n; my += ry[i] / n }
    for (i = 1; i <= n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my); sxx += (rx[i] - mx) ^ 2; syy += (ry[i] - my) ^ 2
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0
}
FNR == 1 { file++ }
file == 1 && FNR > 1 { pred[$1 "," $2] = $3; next }
file == 2 { meas[$1 "," $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++ns] = $2 }
            if (!($1 in aseen)) { aseen[$1] = 1; algs[++na] = $1 } }
END {
    printf "%-14s %10s %13s %13s %9s\n", "algorithm", "bytes", "predicted_us", "measured_us", "meas/pred"
    n = 0
    for (a = 1; a <= na; a++)
        for (s = 1; s <= ns; s++) {
            k = algs[a] "," sizes[s]
            if (!(k in pred) || !(k in meas)) continue
            printf "%-14s %10d %13.2f %13.2f %9.2f\n", algs[a], sizes[s], pred[k], meas[k], meas[k] / pred[k]
            n++; X[n] = pred[k]; Y[n] = meas[k]
        }
    printf "\nSpearman rank correlation, predicted vs measured, all %d (algorithm, size) pairs: %.3f\n", n, spearman(n, X, Y)
    printf "per size, across the %d algorithms:\n", na
    sum = 0
    for (s = 1; s <= ns; s++) {
        m = 0; delete X; delete Y
        for (a = 1; a <= na; a++) {
            k = algs[a] "," sizes[s]
            if ((k in pred) && (k in meas)) { m++; X[m] = pred[k]; Y[m] = meas[k] }
        }
        r = spearman(m, X, Y); sum += r
        printf "  %10d B: %6.3f\n", sizes[s], r
    }
    printf "  mean: %.3f\n", ns ? sum / ns : 0
}' "$work/predicted.csv" "$work/measured.csv"
