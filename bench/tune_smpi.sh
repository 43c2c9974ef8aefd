#!/usr/bin/env bash
# Measured tuning judged in SimGrid's SMPI: treeduce-tune (the SMPI build)
# under smpirun on a machine's exported platform, then the tuned library
# (treeduce-gen --wisdom) against the untuned one, every forced treeduce
# candidate and every SMPI built-in allreduce, on the same platform, with
# the same program (bench/bench_smpi.c: every rank's result checked) and the
# simulation settings of bench/scale.sh, so that the numbers compare.
#
#   bench/tune_smpi.sh [-o OUTDIR] [-H HOSTFILE] [-s SIZES] [-i ITERS] [-j JOBS]
#                      [-t SECONDS] [-T SECONDS] [-r REGEX] [-f] TOPOLOGY
#                      [-- TUNER-OPTIONS...]
#
# TOPOLOGY  a treeduce topology; its platform is treeduce-gen --simgrid's.
# -H HOSTFILE  smpirun hostfile (host or host:ranks a line) for a part of
#           the machine (bluewaters64: 16 nodes x 2 ranks); default every
#           node, as many ranks as it has cores, in ring order.
# -o OUTDIR  default bench/tune/results/NAME (NAME: the topology's file name
#           without .topo, then -HOSTFILE's without .hosts).
# -s SIZES  bench_smpi --sizes (default 8,1K,64K,1M,16M); -i ITERS timed
#           calls per size (default 1: simulated time repeats exactly).
# -j JOBS   simulations at once (default 1); -t SECONDS the limit of one
#           benchmark run (default 1800), -T of the tuner (default none).
# -r REGEX  rerun only the routines whose name matches (tuned, untuned,
#           forced:rm:a4,a2, smpi:mpich); without -r, runs/ is kept and a
#           second call resumes.  -f runs the tuner again (else an existing
#           OUTDIR/tune.wisdom is kept).
# -- TUNER-OPTIONS  passed to treeduce-tune after TOPOLOGY (its defaults
#           otherwise: every collective, shape and size, 3 passes).
#
# What it does:
# 1. treeduce-gen TOPOLOGY --simgrid: the platform and hostfile; smpirun runs
#    the SMPI build's treeduce-tune (TREEDUCE_TUNE, default
#    build/smpi/treeduce-tune: ctest --test-dir build -R smpi.build, then
#    cmake --build build/smpi --target treeduce-tune) on every rank slot of
#    the hostfile, its wall time (date +%s.%N around it) into tune.txt, its
#    stderr into tune.err, the wisdom into tune.wisdom.
# 2. Two programs, bench_smpi.c with the runtime and a generated machine,
#    compiled with smpicc as bench/scale.sh compiles them: untuned
#    (treeduce-gen TOPOLOGY) and tuned (treeduce-gen TOPOLOGY --wisdom
#    tune.wisdom), both --alpha-r-ratio 0 as bench/scale.sh's machines.
# 3. Each in host order and in a fixed shuffled order of the hostfile's lines
#    (bench/scale.sh's seed): the tuned and the untuned library's auto
#    choice, every allreduce candidate that can be forced
#    (TREEDUCE_ALGORITHM; the list trd_candidates gives on this job, from
#    bench_smpi --candidates: candidates.txt) and every SMPI built-in
#    (TREEDUCE_DISABLE=1, --cfg=smpi/allreduce:NAME).  A forced candidate
#    that fell back to the MPI library's routine at a size (bench_smpi
#    --fell-back), and a built-in whose result was wrong on some rank (SMPI's
#    smp_rsag family below one element per rank) do not count there.
# 4. OUTDIR/tune_smpi.csv (every run), summary.csv and summary.txt: per
#    order and size the tuned and untuned auto times, the best forced
#    candidate and the best correct built-in, tuned/best-forced,
#    tuned/untuned and tuned/best-built-in, and PASS or FAIL for: tuned
#    within 2% of the best forced candidate; tuned <= untuned; tuned <= the
#    best built-in (times compared to 1e-9 relative: simulated time is
#    exact).  The exit status is 0 even where a check fails.
#
# Simulation settings (bench/scale.sh's, which says why): SMPI's network
# factors 1, no cross traffic, no TCP window limit, no simulated computation,
# treeduce without shared memory (TREEDUCE_SHM=0), SMPI's reduce, bcast and
# barrier binomial and recursive doubling, and SMPI's allreduce rdb where
# treeduce runs: the tuner's "mpi" candidate is rdb too, and a tuned library
# that picks "mpi" runs it.
#
# Needs SimGrid (smpicc, smpirun), a host build's treeduce-gen
# (TREEDUCE_GEN, default build/treeduce-gen) and the SMPI build's treeduce-tune.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=
hostfile=
sizes=8,1K,64K,1M,16M
iters=1
jobs=1
limit=1800
tlimit=0
only=
force=0
usage() { sed -n '2,35p' "$0" >&2; exit 2; }
while getopts "o:H:s:i:j:t:T:r:f" o; do
    case $o in
    o) out=$OPTARG ;;
    H) hostfile=$OPTARG ;;
    s) sizes=$OPTARG ;;
    i) iters=$OPTARG ;;
    j) jobs=$OPTARG ;;
    t) limit=$OPTARG ;;
    T) tlimit=$OPTARG ;;
    r) only=$OPTARG ;;
    f) force=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
topo=$(realpath "$1")
shift
[ "${1:-}" != -- ] || shift
tuner_opts=("$@")
gen=${TREEDUCE_GEN:-$top/build/treeduce-gen}
tune=${TREEDUCE_TUNE:-$top/build/smpi/treeduce-tune}
for tool in smpicc smpirun "$gen" "$tune"; do
    command -v "$tool" >/dev/null || { echo "tune_smpi.sh: $tool not found" >&2; exit 1; }
done
name=$(basename "$topo" .topo)
[ -z "$hostfile" ] || name=$name-$(basename "$hostfile" .hosts)
out=${out:-$top/bench/tune/results/$name}
mkdir -p "$out/runs" "$out/bin"
out=$(realpath "$out")

sim=(--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=network/crosstraffic:0
    --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no --log=root.thres:warning
    --cfg=smpi/reduce:binomial --cfg=smpi/bcast:binomial_tree --cfg=smpi/barrier:ompi_recursivedoubling)
smpi_algs=(default mpich mvapich2 mvapich2_rs mvapich2_two_level rdb smp_rdb impi lr rab1 rab2
    rab_rdb smp_binomial smp_binomial_pipeline smp_rsag smp_rsag_lr smp_rsag_rab redbcast ompi
    ompi_ring_segmented rab)

# 1. the platform, the placements, the tuner
"$gen" "$topo" --simgrid "$out/platform.xml"
if [ -n "$hostfile" ]; then cp "$hostfile" "$out/host.hosts"; else cp "$out/platform.hosts" "$out/host.hosts"; fi
# the same lines in an order fixed by a seeded shuffle (bench/scale.sh's)
awk 'BEGIN { srand(20261125) } NF { print rand() "\t" $0 }' "$out/host.hosts" | sort -n | cut -f2- \
    >"$out/shuffled.hosts"
np=$(awk -F: 'NF { n += (NF > 1 ? $2 : 1) } END { print n }' "$out/host.hosts")

if [ "$force" = 1 ] || [ ! -s "$out/tune.wisdom" ]; then
    rm -f "$out/tune.wisdom"
    tcmd=(smpirun -platform "$out/platform.xml" -hostfile "$out/host.hosts" -np "$np" "${sim[@]}"
        --cfg=smpi/allreduce:rdb "$tune" "$topo" --alpha-r-ratio 0 -o "$out/tune.wisdom"
        ${tuner_opts[@]+"${tuner_opts[@]}"})
    echo "tune_smpi.sh: ${tcmd[*]}" >&2
    t0=$(date +%s.%N)
    rc=0
    if [ "$tlimit" -gt 0 ]; then
        (cd "$out" && TREEDUCE_SHM=0 timeout "$tlimit" "${tcmd[@]}") 2>"$out/tune.err" || rc=$?
    else
        (cd "$out" && TREEDUCE_SHM=0 "${tcmd[@]}") 2>"$out/tune.err" || rc=$?
    fi
    t1=$(date +%s.%N)
    {
        echo "command: TREEDUCE_SHM=0 ${tcmd[*]}"
        echo "ranks: $np"
        echo "exit: $rc"
        echo "wall_s: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
    } >"$out/tune.txt"
    cat "$out/tune.txt" >&2
    if [ "$rc" -ne 0 ] || [ ! -s "$out/tune.wisdom" ]; then
        echo "tune_smpi.sh: treeduce-tune failed (exit $rc): $out/tune.err" >&2
        exit 1
    fi
fi

# 2. the two programs: bench_smpi, the runtime and the machine's routines
build() { # kind [gen options...] -> bin/bench_smpi_KIND
    local kind=$1 dir=$out/bin/$1 m
    shift
    rm -rf "$dir" && mkdir -p "$dir"
    "$gen" "$topo" --alpha-r-ratio 0 "$@" -o "$dir" >/dev/null
    m=$(basename "$(ls "$dir"/trd_*_mpi.c)" _mpi.c)
    m=${m#trd_}
    smpicc -O2 -DNDEBUG -DSMPI_NO_OVERRIDE_MALLOC -DBENCH_SMPI_MACHINE="trd_${m}_machine" \
        -o "$out/bin/bench_smpi_$kind" "$top/bench/bench_smpi.c" "$top"/runtime/*.c \
        "$top"/runtime/algo/*.c "$dir/trd_$m.c" "$dir/trd_${m}_mpi.c" -I"$top/runtime" \
        -I"$top/runtime/algo" -I"$dir" -lm -lpthread
}
build untuned
build tuned --wisdom "$out/tune.wisdom"

smpi_run() { # hosts bin [env...] -- [cfg...] -- [args...]
    local hosts=$1 bin=$2
    shift 2
    local env=() cfg=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    while [ "$1" != -- ]; do cfg+=("$1"); shift; done
    shift
    env TREEDUCE_SHM=0 ${env[@]+"${env[@]}"} timeout "$limit" smpirun -platform "$out/platform.xml" -hostfile "$hosts" \
        -np "$np" "${sim[@]}" ${cfg[@]+"${cfg[@]}"} "$bin" "$@"
}

# the candidates that can be forced on this job (the same in both programs)
(cd "$out" && smpi_run "$out/host.hosts" "$out/bin/bench_smpi_untuned" -- --cfg=smpi/allreduce:rdb -- \
    --candidates) >"$out/candidates.txt" 2>"$out/candidates.err"
[ -s "$out/candidates.txt" ] || { echo "tune_smpi.sh: no candidates: $out/candidates.err" >&2; exit 1; }

# 3. one run: order routine
run_one() {
    local order=$1 r=$2 f env=() cfg=(--cfg=smpi/allreduce:rdb) bin=$out/bin/bench_smpi_untuned
    f=$out/runs/$order/${r//[\/:,]/_}
    [ -n "$only" ] && rm -f "$f.csv"
    [ -s "$f.csv" ] && return 0
    mkdir -p "$out/runs/$order"
    case $r in
    tuned) bin=$out/bin/bench_smpi_tuned ;;
    untuned) ;;
    forced:*) env=(TREEDUCE_ALGORITHM="${r#forced:}") ;;
    smpi:*) env=(TREEDUCE_DISABLE=1); cfg=(--cfg=smpi/allreduce:"${r#smpi:}") ;;
    esac
    local t0=$SECONDS rc=0
    (cd "$out/runs/$order" && smpi_run "$out/$order.hosts" "$bin" TREEDUCE_VERBOSE=2 ${env[@]+"${env[@]}"} \
        -- "${cfg[@]}" -- --sizes "$sizes" --iters "$iters" --shared-from 1G --fell-back \
        >"$f.out" 2>"$f.err") || rc=$?
    local ran
    ran=$({ grep -ho 'MPI_Allreduce runs [^ ]*' "$f.err" || true; } | sed 's/MPI_Allreduce runs //' | sort -u |
        tr '\n' ' ' | sed 's/,/;/g; s/ *$//')
    awk -F, -v o="$order" -v r="${r//,/;}" -v ran="$ran" -v rc="$rc" -v wall=$((SECONDS - t0)) '
        /^[0-9]/ { print o "," r "," $0 "," (rc ? "rc=" rc : "ok") "," wall "," ran }' "$f.out" >"$f.tmp"
    [ -s "$f.tmp" ] || echo "$order,${r//,/;},,,,,,,,rc=$rc,$((SECONDS - t0))," >"$f.tmp"
    mv "$f.tmp" "$f.csv"
    echo "$order $r: rc=$rc, $((SECONDS - t0)) s wall" >&2
}

routines=(tuned untuned)
while read -r c; do routines+=("forced:$c"); done <"$out/candidates.txt"
for a in "${smpi_algs[@]}"; do routines+=("smpi:$a"); done
for order in host shuffled; do
    for r in "${routines[@]}"; do
        [ -z "$only" ] || grep -Eq -- "$only" <<<"$r" || continue
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        run_one "$order" "$r" &
    done
done
wait

# 4. every run, and the summary per order and size
header="order,routine,bytes,ranks,median_s,min_s,wrong_ranks,checked,fell_back_ranks,status,wall_s,ran"
{
    echo "$header"
    for order in host shuffled; do
        for r in "${routines[@]}"; do cat "$out/runs/$order/${r//[\/:,]/_}.csv" 2>/dev/null || true; done
    done
} >"$out/tune_smpi.csv"
awk -F, -v cfile="$out/summary.csv" '
function us(t) { return sprintf("%.4g", t * 1e6) }
function sz(b) { return b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B" }
function le(a, b) { return a <= b * (1 + 1e-9) }
NR == 1 { next }
$3 == "" || $10 != "ok" { next }
{
    k = $1 SUBSEP $3
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    t = $5 + 0
    if ($2 == "tuned") tuned[k] = t
    else if ($2 == "untuned") untuned[k] = t
    else if ($2 ~ /^forced:/) {
        if ($7 == 0 && $9 == 0 && (!(k in bf) || t < bf[k])) { bf[k] = t; bfn[k] = substr($2, 8) }
    } else if ($2 ~ /^smpi:/) {
        if ($7 == 0 && (!(k in bb) || t < bb[k])) { bb[k] = t; bbn[k] = substr($2, 6) }
    }
}
END {
    print "order,bytes,tuned_s,untuned_s,best_forced,best_forced_s,best_builtin,best_builtin_s," \
          "tuned_over_forced,tuned_over_untuned,tuned_over_builtin,within_2pct_of_forced," \
          "le_untuned,le_builtin" >cfile
    printf "| order | size | tuned us | untuned us | best forced | best built-in | tuned/forced | tuned/untuned | tuned/built-in | <=1.02 forced | <= untuned | <= built-in |\n"
    printf "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    for (i = 1; i <= nk; i++) {
        k = keys[i]; split(k, kk, SUBSEP)
        if (!(k in tuned) || !(k in untuned) || !(k in bf) || !(k in bb)) {
            printf "| %s | %s | incomplete: %s%s%s%s|\n", kk[1], sz(kk[2]), (k in tuned) ? "" : "no tuned ",
                (k in untuned) ? "" : "no untuned ", (k in bf) ? "" : "no forced ", (k in bb) ? "" : "no built-in "
            continue
        }
        p1 = le(tuned[k], 1.02 * bf[k]) ? "PASS" : "FAIL"
        p2 = le(tuned[k], untuned[k]) ? "PASS" : "FAIL"
        p3 = le(tuned[k], bb[k]) ? "PASS" : "FAIL"
        printf "%s,%s,%.9e,%.9e,%s,%.9e,%s,%.9e,%.4f,%.4f,%.4f,%s,%s,%s\n", kk[1], kk[2], tuned[k],
            untuned[k], bfn[k], bf[k], bbn[k], bb[k], tuned[k] / bf[k], tuned[k] / untuned[k],
            tuned[k] / bb[k], p1, p2, p3 >cfile
        printf "| %s | %s | %s | %s | %s %s | %s %s | %.3f | %.3f | %.3f | %s | %s | %s |\n", kk[1], sz(kk[2]),
            us(tuned[k]), us(untuned[k]), bfn[k], us(bf[k]), bbn[k], us(bb[k]), tuned[k] / bf[k],
            tuned[k] / untuned[k], tuned[k] / bb[k], p1, p2, p3
    }
}' "$out/tune_smpi.csv" >"$out/summary.txt"
{
    echo
    cat "$out/tune.txt"
    echo "tuned ran: $(grep -h '^[a-z]*,tuned,' "$out/tune_smpi.csv" | cut -d, -f12 | sort -u | tr '\n' ' ')"
    echo "untuned ran: $(grep -h '^[a-z]*,untuned,' "$out/tune_smpi.csv" | cut -d, -f12 | sort -u | tr '\n' ' ')"
} >>"$out/summary.txt"
cat "$out/summary.txt"
