#!/usr/bin/env bash
# Three sources of an allreduce's time side by side: for one machine and
# every allreduce algorithm treeduce can force on it (one rank per core of
# each node), the cost model's prediction, SimGrid's simulated time and the
# time measured on the emulated cluster, at each message size; each source's
# order of the algorithms, and Spearman's rank correlation between each pair
# of sources over the algorithms at each size (do they order the candidates
# alike?).
#
#   bench/three_way.sh TOPOLOGY [--emulated CSV] [--sizes LIST | --max-bytes N]
#                      [--order tree|shuffled|FILE] [--alpha-r-ratio R] [--build DIR]
#                      [--smpi-build DIR|none] [--timeout S] [-o OUTDIR]
#
# The sources:
#   model     treeduce-gen TOPOLOGY --predict MAX: the schedules' cost model
#             over the whole machine in tree order (--alpha-r-ratio R is
#             passed to it; the generator's default otherwise).
#   smpi      bench/bench_smpi.c under smpirun on the platform treeduce-gen
#             --simgrid exports, each algorithm forced with TREEDUCE_ALGORITHM
#             in a run of its own, every rank's result checked, one timed call
#             a size (simulated time repeats exactly); bench/scale.sh's
#             machine and simulation settings (bench/smpi_common.sh; scale.sh
#             says why: no shared memory, no simulated computation, the
#             machine generated with --alpha-r-ratio 0).  The algorithms are
#             those trd_candidates gives on the job (bench_smpi --candidates),
#             the ones bench_allreduce --also all times.
#   emulated  --emulated CSV: what bench_allreduce --also all --csv CSV wrote
#             on the emulated cluster (bench/cluster.sh), a column NAME_us per
#             forced algorithm after *_over_best ('-': fell back); the median
#             where it has several rows a size.  It must have run on the same
#             ranks (cluster.sh's --order); without it, model and smpi only.
# Algorithms are named as the CSVs write them, commas as ';' (rm:a2;a2).  An
# algorithm has no time at a size where it fell back to the MPI library's
# routine or a rank's result was wrong (said under the table).
#
# --sizes LIST  message sizes, comma-separated multiples of 8 B (1K, 64KiB,
#               16M); default every power of 2 from 8 B to --max-bytes N
#               (default 16M).
# --order       where the simulated ranks are, as bench/cluster.sh places
#               them: tree (nodes in ring order, a node's ranks together; the
#               default), shuffled (the nodes taking the leaf switches in turn)
#               or FILE (one host name per rank).  The model predicts tree order.
# --build DIR   the host build whose treeduce-gen is used (default build).
# --smpi-build DIR  the SMPI build whose runtime bench_smpi links (default
#               build/smpi, configured as ctest's smpi.build does; its runtime
#               is brought up to date); none: the runtime's sources compiled
#               with smpicc, as bench/scale.sh does.
# --timeout S   the limit of one smpirun (default 600).
# -o OUTDIR     default bench/results/three-way-MACHINE[-ORDER].  Each
#               algorithm's simulation is kept in OUTDIR/smpi/runs and taken
#               again while the program, the sizes and the ranks are the same.
#
# Writes OUTDIR/three_way.txt (printed too): per size, each algorithm's time
# from each source (microseconds) and its rank among the algorithms that every
# source timed (1: the fastest; ties share their average rank), and rho
# between each pair of sources over those algorithms (bench/spearman.awk; '-'
# below 3 algorithms or where a source gives them all one time); then per
# size rho, the median over those algorithms of smpi/model and
# emulated/model, and each source's fastest algorithm.  three_way.csv
# (bytes,algorithm,model_us,smpi_us,emulated_us; empty: no time),
# three_way_summary.csv (the summary), predict.csv (the model's), and with
# gnuplot three_way.png: the fastest algorithm's time from each source over
# the size, the medians of smpi/model and emulated/model, and rho.
#
# Needs a host build (treeduce-gen), SimGrid (smpicc, smpirun) and, unless
# --smpi-build none, the SMPI build.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
me=${0##*/}
die() { echo "$me: $*" >&2; exit 2; }
usage() { sed -n '10,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

topo='' emulated='' sizes='' max=16M order=tree alpha='' build=$top/build smpi_build='' limit=600 out=''
while [ $# -gt 0 ]; do
    case $1 in
    --emulated) emulated=${2:?}; shift 2 ;;
    --sizes) sizes=${2:?}; shift 2 ;;
    --max-bytes) max=${2:?}; shift 2 ;;
    --order) order=${2:?}; shift 2 ;;
    --alpha-r-ratio) alpha=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --smpi-build) smpi_build=${2:?}; shift 2 ;;
    --timeout) limit=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    -h | --help) usage ;;
    -*) die "unknown option '$1' (see the head of $0)" ;;
    *) [ -z "$topo" ] || die "one TOPOLOGY, not '$topo' and '$1'"; topo=$1; shift ;;
    esac
done
[ -n "$topo" ] || usage
[ -r "$topo" ] || die "$topo: cannot read"
[ -z "$emulated" ] || [ -r "$emulated" ] || die "--emulated $emulated: cannot read"
gen=$build/treeduce-gen
for tool in smpicc smpirun "$gen"; do
    command -v "$tool" >/dev/null || die "$tool not found"
done
if [ -z "$smpi_build" ]; then
    smpi_build=$build/smpi
    [ -f "$smpi_build/CMakeCache.txt" ] ||
        die "no SMPI build in $smpi_build (ctest --test-dir $build -R smpi.build makes it), or --smpi-build none"
elif [ "$smpi_build" = none ]; then
    smpi_build=
else
    [ -f "$smpi_build/CMakeCache.txt" ] || die "--smpi-build $smpi_build: not a CMake build directory"
fi

# the sizes in bytes, ascending
to_bytes() { # 16M, 64KiB, 1024 -> bytes; fails unless a multiple of 8 from 8
    awk -v s="$1" 'BEGIN {
        if (!match(s, /^[0-9]+(\.[0-9]+)?/)) exit 1
        n = substr(s, 1, RLENGTH); u = toupper(substr(s, RLENGTH + 1)); sub(/I?B$/, "", u)
        m = u == "" ? 1 : u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 0
        b = n * m
        if (!m || b < 8 || b % 8) exit 1
        printf "%.0f\n", b }'
}
if [ -n "$sizes" ]; then
    list=
    for s in ${sizes//,/ }; do
        b=$(to_bytes "$s") || die "--sizes: '$s' is not a multiple of 8 bytes (8, 1K, 64KiB, 16M)"
        list="$list $b"
    done
    list=$(tr ' ' '\n' <<<"$list" | awk 'NF' | sort -n -u | paste -sd, -)
else
    maxb=$(to_bytes "$max") || die "--max-bytes: '$max' is not a multiple of 8 bytes"
    list=$(awk -v m="$maxb" 'BEGIN { for (b = 8; b <= m; b *= 2) printf "%s%.0f", (b > 8 ? "," : ""), b }')
fi
maxb=${list##*,}

m=$(basename "$topo" .topo)
case $order in
tree) suffix= ;;
shuffled) suffix=-shuffled ;;
*) [ -r "$order" ] || die "--order '$order': expected tree, shuffled or a readable file"
   suffix=-$(basename "$order" .hosts) ;;
esac
out=${out:-$top/bench/results/three-way-$m$suffix}
mkdir -p "$out/smpi/runs"
out=$(cd "$out" && pwd)

# ---- model -------------------------------------------------------------------
"$gen" "$topo" ${alpha:+--alpha-r-ratio "$alpha"} --predict "$maxb" >"$out/predict.csv"

# ---- smpi --------------------------------------------------------------------
. "$top/bench/smpi_common.sh"
sbin=$out/smpi/bench_smpi
smpi_build_bench "$gen" "$topo" "$out/smpi/machine" "$sbin" "$smpi_build" ||
    die "building bench_smpi for $topo failed"
platform=$out/smpi/machine/$m.xml
hosts=$out/smpi/ranks.hosts
# one host name per rank, in rank order, as bench/cluster.sh places them
case $order in
tree) awk -F: 'NF { for (k = 0; k < $2; k++) print $1 }' "$out/smpi/machine/$m.hosts" ;;
shuffled)
    "$gen" "$topo" --emulate "$out/smpi/cluster.txt"
    # node INDEX HOSTNAME SWITCH CORES ...: the nodes of each leaf switch in
    # ring order, one of each leaf in turn (bench/cluster.sh's shuffled)
    awk '$1 == "node" { n++; name[n] = $3; sw[n] = $4; c[n] = $5
                        if (!($4 in seen)) { seen[$4] = 1; leaves[++nl] = $4 } }
        END { left = n
              while (left > 0)
                  for (l = 1; l <= nl; l++)
                      for (i = 1; i <= n; i++)
                          if (sw[i] == leaves[l] && !done[i]) {
                              done[i] = 1; left--
                              for (k = 0; k < c[i]; k++) print name[i]
                              break
                          } }' "$out/smpi/cluster.txt" ;;
*)
    awk 'NF { print $1 }' "$order"
    ;;
esac >"$out/smpi/ranks.txt"
if bad=$(awk -F: 'NR == FNR { ok[$1] = 1; next } !($1 in ok) { print $1; exit 1 }' \
    "$out/smpi/machine/$m.hosts" "$out/smpi/ranks.txt"); then :; else
    die "--order $order: '$bad' is not a node of $topo"
fi
# smpirun's hostfile: host:ranks for each run of equal hosts
awk '$1 != h { if (h != "") print h ":" n; h = $1; n = 0 } { n++ } END { if (h != "") print h ":" n }' \
    "$out/smpi/ranks.txt" >"$hosts"
np=$(wc -l <"$out/smpi/ranks.txt")

smpi() { # [VAR=VALUE...] -- bench_smpi options: one simulation in OUTDIR/smpi/runs
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    (cd "$out/smpi/runs" && env TREEDUCE_SHM=0 ${env[@]+"${env[@]}"} timeout "$limit" smpirun \
        -platform "$platform" -hostfile "$hosts" -np "$np" "${smpi_sim[@]}" --cfg=smpi/allreduce:rdb \
        "$sbin" "$@" </dev/null)
}
smpi -- --candidates >"$out/smpi/candidates.txt" 2>"$out/smpi/candidates.err" ||
    die "bench_smpi --candidates failed: $out/smpi/candidates.err"
mapfile -t algs <"$out/smpi/candidates.txt"
[ ${#algs[@]} -gt 0 ] || die "no algorithm can be forced on $np ranks of $topo ($out/smpi/candidates.err)"

key="sizes $list; ranks $(paste -sd' ' "$out/smpi/ranks.txt")"
t0=$SECONDS
ran_now=0
for a in "${algs[@]}"; do
    f=$out/smpi/runs/${a//[\/:,]/_}
    if [ -s "$f.csv" ] && [ "$f.csv" -nt "$sbin" ] && [ "$(cat "$f.key" 2>/dev/null)" = "$key" ]; then
        continue
    fi
    t1=$SECONDS rc=0
    smpi TREEDUCE_VERBOSE=2 TREEDUCE_ALGORITHM="$a" -- --sizes "$list" --iters 1 --fell-back \
        --shared-from 1G >"$f.out" 2>"$f.err" || rc=$?
    # what treeduce ran, from its notes (the forced algorithm, or a fallback)
    ran=$({ grep -ho 'MPI_Allreduce runs [^ ]*' "$f.err" || true; } | sed 's/.* runs //' | sort -u |
        paste -sd' ' - | tr , ';')
    # algorithm,bytes,smpi_us,status,ran
    awk -F, -v a="${a//,/;}" -v rc="$rc" -v ran="$ran" '
        /^[0-9]/ { st = $5 != 0 ? "wrong on " $5 " ranks" : $7 != 0 ? "fell back" : rc ? "exit " rc : "ok"
                   printf "%s,%s,%.4f,%s,%s\n", a, $1, $3 * 1e6, st, ran }' "$f.out" >"$f.csv"
    echo "$key" >"$f.key"
    ran_now=$((ran_now + 1))
    echo "$me: smpi $a: exit $rc, $((SECONDS - t1)) s" >&2
done
smpi_wall=$((SECONDS - t0))
{
    echo "algorithm,bytes,smpi_us,status,ran"
    for a in "${algs[@]}"; do cat "$out/smpi/runs/${a//[\/:,]/_}.csv"; done
} >"$out/smpi/smpi.csv"

# ---- emulated ----------------------------------------------------------------
# algorithm,bytes,us: the NAME_us columns after *_over_best, up to the first
# column that is not a time; '-' (fell back) and empty cells left out
if [ -n "$emulated" ]; then
    awk -F, -v np="$np" -v me="$me" '
        NR == 1 { for (i = 1; i <= NF; i++) {
                      if ($i == "bytes") bc = i; else if ($i == "ranks") rc = i
                      else if ($i ~ /_over_best$/) f = i
                      else if (f && !end && $i ~ /_us$/) { n = $i; sub(/_us$/, "", n); name[i] = n }
                      else if (f) end = 1 }
                  if (!bc || !f) { print me ": --emulated: no bytes column or no columns of bench_allreduce --also all" > "/dev/stderr"; exit 1 }
                  print "algorithm,bytes,emulated_us"; next }
        rc && $rc != np && !warned { warned = 1
                  print me ": --emulated: " $rc " ranks, the simulation " np > "/dev/stderr" }
        { for (i in name) if ($i != "-" && $i != "") print name[i] "," $bc "," $i }' "$emulated" \
        >"$out/emulated.csv" || exit 1
else
    echo "algorithm,bytes,emulated_us" >"$out/emulated.csv"
fi

# ---- the tables --------------------------------------------------------------
# shellcheck disable=SC2016
awk -F, -v sizes="$list" -v algs="$(printf '%s ' "${algs[@]//,/;}")" -v emul="${emulated:+1}" \
    -v machine="$m" -v order="$order" -v np="$np" -v out="$out" "$(cat "$top/bench/spearman.awk")"'
# a time of source src, "" where it has none (T[...] alone would make one)
function at(src, al, b) { return (src, al, b) in T ? T[src, al, b] : "" }
function us(v) { return v == "" ? "-" : sprintf("%.2f", v) }
function sz(b) { return b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B" }
function varies(n, x,    i) { for (i = 2; i <= n; i++) if (x[i] != x[1]) return 1; return 0 }
function rho(n, x, y) { return n >= 3 && varies(n, x) && varies(n, y) ? sprintf("%.3f", spearman(n, x, y)) : "-" }
function median(n, v,    i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n == 0 ? "" : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
# the fastest of source src at size b (the first of those tied); its time in
# bt, how many others tied with it in bk
function best(src, b,    a, v, nm) {
    bt = ""; bk = 0; nm = ""
    for (a = 1; a <= na; a++) {
        if (!((src, A[a], b) in T)) continue
        v = T[src, A[a], b]
        if (bt == "" || v < bt) { bt = v; nm = A[a]; bk = 0 } else if (v == bt) bk++
    }
    return nm
}
function tied(nm, k) { return nm == "" ? "-" : k ? nm " (+" k " tied)" : nm }
function wr(line) { sub(/ +$/, "", line); print line; print line > (out "/three_way.txt") }
FNR == 1 { file++; next }
file == 1 { if (!($1 in inmodel)) { inmodel[$1] = 1; morder[++nm] = $1 }; T["model", $1, $2] = $3; next }
file == 2 { if ($4 == "ok") T["smpi", $1, $2] = $3; else bad[$1, $2] = $4
            if ($5 != "" && $5 != $1) ran[$1] = $5; next }
file == 3 { if (!($1 in inemul)) { inemul[$1] = 1; eorder[++ne] = $1 }
            k = $1 SUBSEP $2; ev[k, ++en[k]] = $3; next }
END {
    ns = split(sizes, S, ",")
    na = split(algs, A, " ")
    for (a = 1; a <= na; a++) forced[A[a]] = 1
    for (e = 1; e <= ne; e++) if (!(eorder[e] in forced)) { A[++na] = eorder[e]; emulonly = emulonly " " eorder[e] }
    for (k in en) { split(k, kk, SUBSEP); delete v; for (i = 1; i <= en[k]; i++) v[i] = ev[k, i]; T["emul", kk[1], kk[2]] = median(en[k], v) }
    nsrc = emul ? 3 : 2; src[1] = "model"; src[2] = "smpi"; src[3] = "emul"
    printf "" > (out "/three_way.txt")
    print "bytes,algorithm,model_us,smpi_us,emulated_us" > (out "/three_way.csv")
    print "bytes,algorithms,rho_model_smpi,rho_model_emulated,rho_smpi_emulated,smpi_over_model," \
          "emulated_over_model,best_model,best_model_us,best_smpi,best_smpi_us,best_emulated,best_emulated_us" > (out "/three_way_summary.csv")
    wr(sprintf("%s, %d ranks in %s order: the model (treeduce-gen --predict), SMPI%s; times in us", machine, np, order,
        emul ? " and the emulated cluster" : ""))
    for (i = 1; i <= nm; i++) if (!(morder[i] in forced) && !(morder[i] in inemul)) modelonly = modelonly " " morder[i]
    if (modelonly != "") wr("the model only (not forced on this job):" modelonly)
    if (emulonly != "") wr("the emulated run only:" emulonly)
    for (a = 1; a <= na; a++) if (A[a] in ran) wr("forced " A[a] ", treeduce said it ran: " ran[A[a]])
    for (s = 1; s <= ns; s++) {
        b = S[s]
        # the algorithms every source timed, and their ranks in each source
        n = 0; delete C
        for (a = 1; a <= na; a++) {
            for (j = 1; j <= nsrc && ((src[j], A[a], b) in T); j++) ;
            if (j > nsrc) C[++n] = A[a]
        }
        for (j = 1; j <= nsrc; j++) {
            delete x; delete r
            for (i = 1; i <= n; i++) { x[i] = T[src[j], C[i], b]; X[j, i] = x[i] }
            avg_ranks(n, x, r)
            for (i = 1; i <= n; i++) R[src[j], C[i]] = r[i]
        }
        wr("")
        wr(sprintf("%s%s: %d algorithms timed by every source", b " B", b >= 1024 ? " (" sz(b) ")" : "", n))
        wr(sprintf("%-22s %12s %12s%s   %5s %5s%s", "algorithm", "model_us", "smpi_us", emul ? sprintf(" %12s", "emulated_us") : "",
            "model", "smpi", emul ? sprintf(" %5s", "emul") : ""))
        for (a = 1; a <= na; a++) {
            al = A[a]
            if (!(("model", al, b) in T) && !(("smpi", al, b) in T) && !(("emul", al, b) in T)) continue
            inC = 0; for (i = 1; i <= n; i++) if (C[i] == al) inC = 1
            line = sprintf("%-22s %12s %12s", al, us(at("model", al, b)), us(at("smpi", al, b)))
            if (emul) line = line sprintf(" %12s", us(at("emul", al, b)))
            line = line "   "
            for (j = 1; j <= nsrc; j++) line = line sprintf("%s%5s", j > 1 ? " " : "", inC ? sprintf("%g", R[src[j], al]) : "-")
            wr(line)
            printf "%s,%s,%s,%s,%s\n", b, al, at("model", al, b), at("smpi", al, b), at("emul", al, b) > (out "/three_way.csv")
        }
        for (a = 1; a <= na; a++) if ((A[a], b) in bad) wr(sprintf("  smpi %s: %s, not counted", A[a], bad[A[a], b]))
        # rho between each pair of sources
        delete x; delete y
        for (i = 1; i <= n; i++) { x[i] = X[1, i]; y[i] = X[2, i] }
        rms = rho(n, x, y); rme = rse = ""
        line = "rho: model~smpi " rms
        if (emul) {
            for (i = 1; i <= n; i++) y[i] = X[3, i]
            rme = rho(n, x, y)
            for (i = 1; i <= n; i++) x[i] = X[2, i]
            rse = rho(n, x, y)
            line = line ", model~emulated " rme ", smpi~emulated " rse
        }
        wr(line)
        # the median over those algorithms of smpi/model and emulated/model
        delete v; for (i = 1; i <= n; i++) v[i] = X[2, i] / X[1, i]
        q1[s] = median(n, v)
        delete v; if (emul) for (i = 1; i <= n; i++) v[i] = X[3, i] / X[1, i]
        q2[s] = emul ? median(n, v) : ""
        nC[s] = n; rho1[s] = rms; rho2[s] = rme; rho3[s] = rse
        bm = best("model", b); bmt = bt; tm[s] = tied(bm, bk)
        bs = best("smpi", b); bst = bt; ts[s] = tied(bs, bk)
        be = bet = ""; te[s] = "-"
        if (emul) { be = best("emul", b); bet = bt; te[s] = tied(be, bk) }
        printf "%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", b, n, rms == "-" ? "" : rms, rme == "-" ? "" : rme,
            rse == "-" ? "" : rse, q1[s] == "" ? "" : sprintf("%.4f", q1[s]), q2[s] == "" ? "" : sprintf("%.4f", q2[s]),
            bm, bmt, bs, bst, be, bet > (out "/three_way_summary.csv")
    }
    wr("")
    wr("summary: rho over the algorithms every source timed (n); the medians of smpi/model and emulated/model over them;")
    wr("the fastest algorithm of each source (+k: as many others tied with it)")
    wr(sprintf("%10s %3s %10s%s %10s%s   %-26s %-26s%s", "bytes", "n", "model~smpi", emul ? "  model~emul  smpi~emul" : "", "smpi/model",
        emul ? " emul/model" : "", "fastest: model", "smpi", emul ? " emulated" : ""))
    for (s = 1; s <= ns; s++) {
        line = sprintf("%10s %3d %10s", S[s], nC[s], rho1[s])
        if (emul) line = line sprintf(" %11s %10s", rho2[s], rho3[s])
        line = line sprintf(" %10s", q1[s] == "" ? "-" : sprintf("%.3f", q1[s]))
        if (emul) line = line sprintf(" %10s", q2[s] == "" ? "-" : sprintf("%.3f", q2[s]))
        line = line sprintf("   %-26s %-26s", tm[s], ts[s])
        if (emul) line = line " " te[s]
        wr(line)
        if (rho1[s] != "-") { m1 += rho1[s]; c1++ }
        if (rho2[s] != "-" && rho2[s] != "") { m2 += rho2[s]; c2++ }
        if (rho3[s] != "-" && rho3[s] != "") { m3 += rho3[s]; c3++ }
    }
    line = sprintf("mean rho over the sizes: model~smpi %s", c1 ? sprintf("%.3f (%d sizes)", m1 / c1, c1) : "-")
    if (emul) line = line sprintf(", model~emulated %s, smpi~emulated %s", c2 ? sprintf("%.3f (%d sizes)", m2 / c2, c2) : "-",
        c3 ? sprintf("%.3f (%d sizes)", m3 / c3, c3) : "-")
    wr(line)
}' "$out/predict.csv" "$out/smpi/smpi.csv" "$out/emulated.csv"
echo "SMPI: ${#algs[@]} algorithms on $np ranks, $ran_now simulated now in $smpi_wall s (the others kept)" |
    tee -a "$out/three_way.txt"

# ---- the picture -------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    f=$out/three_way_summary.csv
    {
        echo "set terminal pngcairo size 900,960 noenhanced font ',9'"
        echo "set output '$out/three_way.png.tmp'"
        echo "set datafile separator ','"
        echo "set multiplot layout 3,1 title \"$m, $np ranks, $order order: model, SMPI${emulated:+, emulated}\""
        # a tic every factor of 8 from the first size, named as the tables name sizes
        awk -v l="$list" 'BEGIN { n = split(l, S, ","); printf "set xtics ("
            for (b = S[1]; b <= S[n]; b *= 8)
                printf "%s\"%s\" %.0f", (b > S[1] ? ", " : ""), (b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B"), b
            print ")" }'
        echo "set logscale x 2; set grid; set key left top; set xlabel 'message size'"
        echo "set logscale y; set ylabel 'the fastest algorithm (us)'"
        printf "plot '%s' skip 1 using 1:9 with linespoints lt 1 title 'model', '' skip 1 using 1:11 with linespoints lt 2 title 'SMPI'" "$f"
        [ -z "$emulated" ] || printf ", '' skip 1 using 1:13 with linespoints lt 3 title 'emulated'"
        echo
        echo "unset logscale y; set ylabel 'median over the algorithms'; set key left bottom"
        printf "plot '%s' skip 1 using 1:6 with linespoints lt 2 title 'smpi/model'" "$f"
        [ -z "$emulated" ] || printf ", '' skip 1 using 1:7 with linespoints lt 3 title 'emulated/model'"
        echo
        echo "set yrange [-1:1.05]; set ylabel \"Spearman's rho over the algorithms\""
        printf "plot '%s' skip 1 using 1:3 with linespoints lt 4 title 'model~smpi'" "$f"
        [ -z "$emulated" ] || printf ", '' skip 1 using 1:4 with linespoints lt 5 title 'model~emulated', '' skip 1 using 1:5 with linespoints lt 6 title 'smpi~emulated'"
        echo
        echo "unset multiplot"
    } >"$out/three_way.gp"
    gnuplot "$out/three_way.gp" && mv "$out/three_way.png.tmp" "$out/three_way.png" &&
        echo "$out/three_way.png"
else
    echo "gnuplot not found: $out/three_way.png not written"
fi
