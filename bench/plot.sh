#!/bin/sh
# Pictures of a benchmark's CSV (gnuplot): CSV's name with .png, or PNG.
#   bench/plot.sh [--predict FILE] CSV [PNG]
# Two panels over the message size per rank (bytes, log scale):
#   speed-up: the MPI library's time over treeduce's (above 1: treeduce faster);
#   bandwidth: algorithm bandwidth, the message's bytes per rank over the
#     time of the call (GB/s, 1e9 B/s; as bench_allreduce's algbw columns,
#     OSU's and nccl-tests' algbw), treeduce's and the MPI library's.
# The bounds, where the CSV or FILE gives them, in both panels (as the
# speed-up treeduce would have at that time, and as that time's bandwidth):
#   memory bound: bench_allreduce's bound_us, 2 p m / B_sum, the time that
#     the memory traffic any allreduce makes takes at the summed copy
#     bandwidth (>= 1 MiB; a lower bound on the time); bench_pieces' per
#     piece, in the piece's colour;
#   copy floor: bench_allreduce's xfer_us, the copies of an allreduce through
#     a shared segment, timed (not a strict bound); bench_pieces' xfer_us,
#     the same for each piece (one line each, dotted, in the piece's colour);
#   model: treeduce-gen --predict's predicted time (--predict FILE; the CSV's
#     algorithm when it names one, else the best predicted algorithm; for
#     scale.sh's scale.csv, DIR/bin/MACHINE/predict.csv beside it).
# CSVs read: bench_allreduce's and bench_pieces' (one line per routine's
# time, NAME_us before mpi_us: treeduce_us, or new_us and old_us; pieces one
# colour each), bench_persistent's (blocking, persistent, nonblocking) and
# scale.sh's scale.csv (per case: treeduce auto against the best correct
# SMPI built-in).  A malformed line is reported as FILE:LINE[:COL]: error:
# and no PNG is written.  Exit status 0, 1 on bad input, 2 on bad usage,
# 3 without gnuplot.
set -eu
prog=plot.sh
usage() {
    echo "usage: bench/plot.sh [--predict FILE] CSV [PNG]" >&2
    exit 2
}
predict=
while [ $# -gt 0 ]; do
    case $1 in
    --predict)
        [ $# -ge 2 ] || usage
        predict=$2
        shift 2
        ;;
    --) shift; break ;;
    -?*) usage ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || [ $# -eq 2 ] || usage
csv=$1
png=${2:-${csv%.csv}.png}
[ -r "$csv" ] || { echo "$prog: $csv: cannot read" >&2; exit 1; }
[ -z "$predict" ] || [ -r "$predict" ] || { echo "$prog: $predict: cannot read" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "$prog: gnuplot not found: $png not written" >&2; exit 3; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The series: $tmp/N.dat (bytes value) and one line each in $tmp/series:
# panel (1 speed-up, 2 bandwidth), file, title, gnuplot style.  Then
# $tmp/title.
awk -v tmp="$tmp" -v predict="$predict" -v csvdir="$(dirname "$csv")" '
BEGIN { FS = "," }
function fail(msg, c,    i, col0) {
    if (c) {
        col0 = 1
        for (i = 1; i < c; i++) col0 += length($i) + 1
        printf "%s:%d:%d: error: %s\n", FILENAME, FNR, col0, msg > "/dev/stderr"
    } else
        printf "%s:%d: error: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    failed = 1
    exit 1
}
function isnum(s) { return s ~ /^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
# field c (named by the header) as a positive number
function pos(c) {
    if (!isnum($c) || $c + 0 <= 0)
        fail("expected a positive number in column " head[c] ", got \"" $c "\"", c)
    return $c + 0
}
function opt(c) { return $c == "" ? 0 : pos(c) }
function point(key, panel, title, style, x, y) {
    if (!(key in file)) {
        file[key] = tmp "/" (++nseries) ".dat"
        printf "%d\t%s\t%s\t%s\n", panel, file[key], title, style > (tmp "/series")
    }
    printf "%.17g %.17g\n", x, y > file[key]
    if (xmin == "" || x < xmin) xmin = x
    if (xmax == "" || x > xmax) xmax = x
}
function gbps(bytes, us) { return bytes / us / 1e3 }
function load_predict(f, tag,    line, p, n, ln) {
    ln = 0
    while ((n = (getline line < f)) > 0) {
        ln++
        if (ln == 1) {
            if (line != "algorithm,bytes,predicted_us") {
                printf "%s:1: error: expected the header algorithm,bytes,predicted_us\n", f > "/dev/stderr"
                failed = 1; exit 1
            }
            continue
        }
        if (split(line, p, ",") != 3 || !isnum(p[2]) || !isnum(p[3]) || p[3] + 0 <= 0) {
            printf "%s:%d: error: expected algorithm,bytes,predicted_us\n", f, ln > "/dev/stderr"
            failed = 1; exit 1
        }
        pred[tag, p[1], p[2] + 0] = p[3] + 0
        if (!((tag, p[2] + 0) in best) || p[3] + 0 < best[tag, p[2] + 0]) best[tag, p[2] + 0] = p[3] + 0
    }
    close(f)
    return ln > 0
}
FNR == 1 {
    nf = NF
    for (i = 1; i <= NF; i++) { head[i] = $i; col[$i] = i }
    if (("case" in col) && ("routine" in col) && ("bytes" in col) && ("median_s" in col) &&
        ("status" in col) && ("wrong_ranks" in col) && ("machine" in col))
        kind = "scale"
    else if (("bytes" in col) && ("tr_us" in col) && ("tr_pers_us" in col) && ("tr_nb_us" in col) &&
             ("mpi_us" in col) && ("mpi_pers_us" in col) && ("mpi_nb_us" in col))
        kind = "persistent"
    else if (("bytes" in col) && ("mpi_us" in col) && ("iters" in col) && col["iters"] < col["mpi_us"] - 1)
        kind = "allreduce"
    else
        fail("expected the header of a bench_allreduce, bench_pieces or bench_persistent CSV " \
             "(columns bytes, iters, NAME_us, mpi_us) or of scale.sh'"'"'s scale.csv " \
             "(case, machine, routine, bytes, median_s, wrong_ranks, status)")
    if (kind == "allreduce")
        for (i = col["iters"] + 1; i < col["mpi_us"]; i++)
            if (head[i] !~ /_us$/)
                fail("expected the time columns NAME_us between iters and mpi_us, got \"" head[i] "\"", i)
    if (predict != "" && !load_predict(predict, "-"))
        fail("no predictions in " predict)
    next
}
NF != nf { fail("expected " nf " fields as in the header, got " NF) }
kind == "allreduce" {
    b = pos(col["bytes"]); mpi = pos(col["mpi_us"])
    if (ranks == "") ranks = $(col["ranks"])
    g = ("piece" in col) ? $(col["piece"]) : ""
    if (!(g in gi)) gi[g] = ngroups++
    for (i = col["iters"] + 1; i < col["mpi_us"]; i++) {
        t = pos(i); r = substr(head[i], 1, length(head[i]) - 3)
        if (!(r in ri)) ri[r] = nroutines++
        nm = (g != "" ? g ": " : "") r
        st = sprintf("lc %d dt 1 pt %d", g != "" ? gi[g] + 1 : ri[r] + 1, 7 + ri[r])
        point("sp" g SUBSEP r, 1, nm, st, b, mpi / t)
        point("bw" g SUBSEP r, 2, nm, st, b, gbps(b, t))
    }
    point("bw" g SUBSEP "mpi", 2, (g != "" ? g ": " : "") "MPI library",
          sprintf("lc %s dt 2 pt 4", g != "" ? gi[g] + 1 : "rgb \"#d62728\""), b, gbps(b, mpi))
    if ("bound_us" in col && (t = opt(col["bound_us"])) > 0) {
        st = sprintf("lc %s dt 2 pt 1", g != "" ? gi[g] + 1 : "black")
        nm = g != "" ? g ": " : ""
        point("spbound" g, 1, nm "at the memory bound", st, b, mpi / t)
        point("bwbound" g, 2, nm "memory bound (bound_us)", st, b, gbps(b, t))
    }
    if ("xfer_us" in col && (t = opt(col["xfer_us"])) > 0) {
        st = sprintf("lc %s dt 3 pt 2", g != "" ? gi[g] + 1 : "rgb \"#7f7f7f\"")
        nm = g != "" ? g ": " : ""
        point("spxfer" g, 1, nm "at the copy floor", st, b, mpi / t)
        point("bwxfer" g, 2, nm "copy floor (xfer_us)", st, b, gbps(b, t))
    }
    if (predict != "" && g == "") {
        a = ("algorithm" in col) ? $(col["algorithm"]) : ""
        if (a != "" && ("-", a, b) in pred) { t = pred["-", a, b]; nm = "model, " a " (--predict)" }
        else if (a == "" && ("-", b) in best) { t = best["-", b]; nm = "model (--predict, best)" }
        else t = 0
        if (t > 0) {
            point("spmodel", 1, "at the model", "lc rgb \"#ff7f0e\" dt 4 pt 6", b, mpi / t)
            point("bwmodel", 2, nm, "lc rgb \"#ff7f0e\" dt 4 pt 6", b, gbps(b, t))
        }
    }
    next
}
kind == "persistent" {
    b = pos(col["bytes"])
    if (ranks == "") ranks = $(col["ranks"])
    split("blocking persistent nonblocking", way, " ")
    split("tr_us tr_pers_us tr_nb_us", trc, " ")
    split("mpi_us mpi_pers_us mpi_nb_us", mpc, " ")
    for (w = 1; w <= 3; w++) {
        t = pos(col[trc[w]]); m = pos(col[mpc[w]])
        point("sp" w, 1, "treeduce, " way[w], "lc " w " dt 1 pt 7", b, m / t)
        point("bwt" w, 2, "treeduce, " way[w], "lc " w " dt 1 pt 7", b, gbps(b, t))
        point("bwm" w, 2, "MPI library, " way[w], "lc " w " dt 2 pt 4", b, gbps(b, m))
    }
    next
}
kind == "scale" {
    s = $(col["status"])
    if (s != "ok") next # skipped, failed or timed out: no time
    b = pos(col["bytes"]); t = pos(col["median_s"])
    w = $(col["wrong_ranks"])
    if (w !~ /^-?[0-9]+$/) fail("expected an integer in column wrong_ranks, got \"" w "\"", col["wrong_ranks"])
    c = $(col["case"]); r = $(col["routine"])
    if (!(c in ci)) { ci[c] = ++ncases; cname[ncases] = c; cmach[c] = $(col["machine"]) }
    k = c SUBSEP b
    if (!(k in kseen)) { kseen[k] = 1; keys[++nkeys] = k }
    if (r == "treeduce:auto") autot[k] = t
    else if (r ~ /^smpi:/ && (w == 0 || w == -1) && (!(k in bi) || t < bi[k])) bi[k] = t
    next
}
END {
    if (failed) exit 1
    if (NR == 0) { printf "%s: error: empty file\n", ARGV[1] > "/dev/stderr"; exit 1 }
    if (kind == "scale") {
        for (n = 1; n <= nkeys; n++) {
            split(keys[n], kb, SUBSEP); c = kb[1]; b = kb[2] + 0; m = cmach[c]
            if (!(m in tried)) {
                tried[m] = 1
                f = csvdir "/bin/" m "/predict.csv"
                if ((getline line < f) >= 0) { close(f); load_predict(f, m); if (failed) exit 1; nmodel++ }
            }
            st = "lc " ci[c]
            if ((k = keys[n]) in autot && k in bi)
                point("sp" c, 1, c, st " dt 1 pt 7", b, bi[k] / autot[k])
            if (k in autot) point("bwa" c, 2, c ": auto", st " dt 1 pt 7", b, b / autot[k] / 1e9)
            if (k in bi) point("bwb" c, 2, c ": best built-in", st " dt 2 pt 4", b, b / bi[k] / 1e9)
            if ((m, b) in best) {
                if (k in bi) point("spm" c, 1, c ": model", st " dt 3 pt 2", b, bi[k] / (best[m, b] * 1e-6))
                point("bwm" c, 2, c ": model", st " dt 3 pt 2", b, b / (best[m, b] * 1e-6) / 1e9)
            }
        }
        title = "treeduce auto against the best correct SMPI built-in (simulated)"
        if (nmodel) note = "dotted: the model, the best time treeduce-gen --predict gives"
    } else if (kind == "persistent")
        title = "blocking, persistent and nonblocking allreduce, " ranks " ranks"
    else if ("piece" in col)
        title = "reduce_scatter_block, allgather, reduce, bcast, " ranks " ranks"
    else
        title = "allreduce, " ranks " ranks"
    if (nseries == 0) { printf "%s: error: no line to plot\n", ARGV[1] > "/dev/stderr"; exit 1 }
    print title > (tmp "/title")
    print note > (tmp "/title")
    printf "[%.17g:%.17g]\n", xmin / 1.4, xmax * 1.4 > (tmp "/xrange")
}' "$csv"

name=$(basename "$csv")
{
    echo "set terminal pngcairo size 900,720 noenhanced font ',9'"
    echo "set output '$tmp/plot.png'"
    title="$(sed -n 1p "$tmp/title") ($name)"
    note=$(sed -n 2p "$tmp/title")
    printf 'set multiplot layout 2,1 title "%s%s"\n' "$title" "${note:+\\n$note}"
    echo "set lmargin at screen 0.09; set rmargin at screen 0.64"
    echo "set logscale x 2; set xrange $(cat "$tmp/xrange"); set grid; set key outside right top"
    echo "set format y '%g'"
    echo "set xtics ('1' 1, '8' 8, '64' 64, '512' 512, '4K' 4096, '32K' 32768, '256K' 262144, '2M' 2097152, '16M' 16777216, '128M' 134217728, '1G' 1073741824)"
    for panel in 1 2; do
        if [ $panel = 1 ]; then
            echo "set ylabel 'speed-up: MPI time / treeduce time'; set yrange [0:*]"
            printf "plot 1 title 'equal' lc black dt 3 lw 1"
        else
            echo "set xlabel 'message size per rank (bytes)'"
            echo "set ylabel 'algorithm bandwidth (GB/s): bytes per rank / time'; set logscale y; set yrange [*:*]"
            printf "plot NaN notitle"
        fi
        while IFS="$(printf '\t')" read -r p f t s; do
            [ "$p" = "$panel" ] || continue
            sort -g -o "$f" "$f"
            printf ", '%s' using 1:2 with linespoints lw 2 %s title '%s'" "$f" "$s" "$(echo "$t" | sed "s/'/''/g")"
        done <"$tmp/series"
        echo
    done
    echo "unset multiplot"
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
[ -s "$tmp/plot.png" ] || { echo "$prog: gnuplot wrote no picture" >&2; exit 1; }
mv "$tmp/plot.png" "$png"
echo "wrote $png"
