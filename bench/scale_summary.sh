#!/bin/sh
# Summary of bench/scale.sh's results in DIR (scale.csv, bin/*/predict.csv):
#   summary.csv / summary.txt, per case and size: treeduce auto's time, the
#   best correct SMPI built-in and its time, best/auto (the speed-up), the
#   best forced treeduce algorithm, what auto ran; built-ins that gave wrong
#   results; and per case and size the Spearman rank correlation between the
#   model's predicted times (treeduce-gen --predict) and the simulated ones
#   over the forced treeduce algorithms (bench/spearman.awk: ties share
#   their average rank).
#   scale.png: bench/plot.sh of scale.csv (gnuplot): speed-up of auto over
#   the best correct built-in per case, their bandwidths and the model's.
#   bench/scale_summary.sh DIR
set -eu
dir=$1
awk -F, -v dir="$dir" "$(cat "$(dirname "$0")/spearman.awk")"'
function fmt(t) { return t == "" ? "-" : sprintf("%.4g", t * 1e6) }
NR == 1 { next }
$4 == "" { next }
{
    c = $1; b = $4; r = $3; t = $6 + 0; wrong = $8 + 0; ok = ($10 == "ok")
    key = c SUBSEP b
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; mach[key] = $2 }
    if (!ok) next
    if (r == "treeduce:auto") { autot[key] = t; autoran[key] = $12 }
    else if (r ~ /^treeduce:/) {
        a = substr(r, 10); sim[key, a] = t; algs[key] = algs[key] " " a
        if (wrong == 0 && (!(key in bt) || t < bt[key])) { bt[key] = t; ba[key] = a }
    } else if (wrong != 0 && wrong != -1) {
        bad[key] = bad[key] " " substr(r, 6)
    } else if (!(key in bs) || t < bs[key]) { bs[key] = t; bsa[key] = substr(r, 6) }
}
END {
    # predicted times: bin/<machine>/predict.csv, algorithm,bytes,predicted_us
    print "case,bytes,auto_us,best_smpi,best_smpi_us,speedup,best_treeduce,best_treeduce_us,auto_ran,rank_corr,wrong_smpi" > (dir "/summary.csv")
    printf "%-15s %9s %10s %24s %8s %20s  %-22s %6s\n", "case", "bytes", "auto us",
        "best built-in (us)", "speedup", "best treeduce (us)", "auto ran", "rho" > (dir "/summary.txt")
    for (i = 1; i <= n; i++) {
        key = order[i]; split(key, kb, SUBSEP); c = kb[1]; b = kb[2]
        m = mach[key]
        if (!(m in loaded)) {
            loaded[m] = 1
            f = dir "/bin/" m "/predict.csv"
            while ((getline line < f) > 0) {
                split(line, p, ",")
                if (p[1] != "algorithm") pred[m, p[1], p[2]] = p[3]
            }
            close(f)
        }
        # Spearman over the forced algorithms with both times
        na = split(algs[key], al, " "); k = 0
        for (j = 1; j <= na; j++)
            if ((m, al[j], b) in pred) { k++; x[k] = pred[m, al[j], b]; y[k] = sim[key, al[j]] }
        rho = k >= 3 ? sprintf("%.2f", spearman(k, x, y)) : "-"
        sp = (key in autot) && (key in bs) && autot[key] > 0 ? sprintf("%.2f", bs[key] / autot[key]) : "-"
        printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", c, b, fmt(autot[key]), bsa[key], fmt(bs[key]),
            sp, ba[key], fmt(bt[key]), autoran[key], rho, bad[key] > (dir "/summary.csv")
        printf "%-15s %9s %10s %15s %8s %8s %11s %8s  %-22s %6s\n", c, b, fmt(autot[key]), bsa[key],
            fmt(bs[key]), sp, ba[key], fmt(bt[key]), substr(autoran[key], 1, 22), rho > (dir "/summary.txt")
    }
}' "$dir/scale.csv"
cat "$dir/summary.txt"
if command -v gnuplot >/dev/null; then
    sh "$(dirname "$0")/plot.sh" "$dir/scale.csv"
else
    echo "gnuplot not found: $dir/scale.png not written"
fi
