#!/usr/bin/env bash
# The seeds' machines at scale in SimGrid's SMPI: treeduce's auto choice and
# every forced treeduce allreduce algorithm against every SMPI built-in
# allreduce (--cfg=smpi/allreduce:NAME), on the same exported platform, with
# the same program (bench/bench_smpi.c: every rank's result checked), at 8 B,
# 1 KiB, 64 KiB, 1 MiB and 16 MiB where the case allows.
#
#   bench/scale.sh [-j JOBS] [-t SECONDS] [-o OUTDIR] [-r REGEX] [-a ROUTINE]...
#                  [-s SIZES] [CASE...]
#
# -r REGEX runs only the routines whose name (treeduce:auto, smpi:mpich,
# treeduce:nap:16,4/2) matches the extended regular expression, again even
# where runs/ has them: the way to redo some rows of the checked-in results
# (runs/ is not checked in, and a call without -r would run every routine).
# -a ROUTINE adds a routine to every case's list: treeduce:ALG with ALG any
# TREEDUCE_ALGORITHM value, parameters included, or smpi:NAME.  E.g.
#   bench/scale.sh -j1 -a treeduce:nap:16,4/2 -r '^treeduce:(auto|nap:16,4/2)$' bw64
# -s SIZES runs these sizes (bench_smpi --sizes) instead of the case's.
#
# Cases (default: all):
#   eth32          TREE's 32-node Gigabit Ethernet tree, ranks in tree order
#   eth32-shuffled the same, ranks placed on nodes in a fixed random order
#   bw64           NAP's bluewaters64, 64 x 16 = 1,024 ranks, tree order (8 B, 1 KiB, 2 KiB)
#   bw64-shuffled  the same, nodes in a fixed random order
#   bw64-large     bluewaters64 at 64 KiB and 1 MiB, tree order
#   bw64-large-shuffled  the same, nodes in the shuffled order
#   bw256          bluewaters256, 256 x 16 = 4,096 ranks (8 B, 1 KiB)
#   epyc8192       3-level fat tree, 64 x 2 x 64 = 8,192 ranks (8 B)
#
# Needs SimGrid (smpicc, smpirun) and a host build of treeduce-gen
# (TREEDUCE_GEN, default build/treeduce-gen).  Writes OUTDIR (default
# bench/scale/results, where the results quoted in docs/scale.md are checked in):
# one CSV per run under runs/ (kept: a second call resumes), scale.csv with
# every run (a run's rows replace those of the same case and routine that
# scale.csv had, in place; the other rows stay: a routine's commas are
# written as semicolons there), summary.csv and summary.txt (per case
# and size: auto, the best correct built-in, their ratio, the best forced
# treeduce algorithm, the model's pick against the simulation's), and
# scale.png (gnuplot, when installed).
#
# The machines are generated for the simulated network: SimGrid's links
# overlap the messages a rank posts together for free (no per-message issue
# cost), so the model is told alpha_r = 0 (--alpha-r-ratio 0) where the
# topology gives none.
#
# Simulation settings, the same for every run: SMPI's network factors set to
# 1 and no cross traffic, so that links cost what the topology says (the
# platform's comment, gen/out/simgrid.h); no simulated computation (reductions
# and copies are free for everyone, built-ins included); treeduce without
# shared memory (TREEDUCE_SHM=0): its node phases move data through the
# simulated loopback link as the built-ins' do, instead of through memory the
# simulator does not time.  SMPI's own reduce, bcast and barrier (the
# benchmark's bookkeeping, and the parts of SMPI's default allreduce) are
# binomial trees and recursive doubling: SMPI's defaults are linear (p^2 work
# for the simulator); treeduce's runs take SMPI's rdb for the allreduces of
# its setup.  16 MiB runs at 32 ranks only: at 1,024 ranks the
# buffers (and the algorithms' temporaries) do not fit in this machine's
# memory; bench_smpi --shared-from would time them unchecked.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=1
limit=1800
out=$top/bench/scale/results
only=
extra=()
sizes=
while getopts "j:t:o:r:a:s:" o; do
    case $o in
    j) jobs=$OPTARG ;;
    t) limit=$OPTARG ;;
    o) out=$OPTARG ;;
    r) only=$OPTARG ;;
    a) extra+=("$OPTARG") ;;
    s) sizes=$OPTARG ;;
    *) sed -n '2,40p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(eth32 eth32-shuffled bw64 bw64-shuffled bw256 epyc8192 bw64-large
    bw64-large-shuffled)
gen=${TREEDUCE_GEN:-$top/build/treeduce-gen}
for tool in smpicc smpirun "$gen"; do
    command -v "$tool" >/dev/null || { echo "scale.sh: $tool not found" >&2; exit 1; }
done

treeduce_algs=(auto nap rm flex smp rd rabenseifner ring hring)
# the built-ins that were the best at 1,024 ranks first, so that a case cut
# short by the time available has them
smpi_algs=(default mpich mvapich2 mvapich2_rs mvapich2_two_level rdb smp_rdb impi lr rab1 rab2
    rab_rdb smp_binomial smp_binomial_pipeline smp_rsag smp_rsag_lr smp_rsag_rab redbcast ompi
    ompi_ring_segmented rab)
# the simulation settings (sim) and the build of bench_smpi, shared with
# bench/three_way.sh
. "$top/bench/smpi_common.sh"
sim=("${smpi_sim[@]}")

# case -> topology, placement, sizes, --shared-from
case_topo() {
    case $1 in
    eth32*) echo "$top/topologies/ethernet32.topo" ;;
    bw64*) echo "$top/topologies/bluewaters64.topo" ;;
    bw256) echo "$top/bench/scale/bluewaters256.topo" ;;
    epyc8192) echo "$top/bench/scale/epyc8192.topo" ;;
    *) echo "scale.sh: unknown case $1" >&2; exit 2 ;;
    esac
}
case_sizes() {
    case $1 in
    eth32*) echo "8,1K,64K,1M,16M" ;;
    bw64-large*) echo "64K,1M" ;;
    bw64*) echo "8,1K,2K" ;;
    bw256) echo "8,1K" ;;
    epyc8192) echo "8" ;;
    esac
}
case_iters() { # simulated time repeats exactly: more calls only where they are cheap
    case $1 in
    eth32*) echo 3 ;;
    *) echo 1 ;;
    esac
}
# Routines a case does not run, with why: at 4,096 ranks and more, those
# that took 1 ms to 16 ms at 1,024 ranks and 8 B against the best's tens of
# microseconds (treeduce's ring and hring, p and 2 p steps; SMPI's smp_rsag
# and smp_rsag_lr), and SMPI's rab1 and rab2, past the time limit already at
# 1,024 ranks: their simulations would take hours.
case_skip() { # case routine -> 0 when skipped
    case $1:$2 in
    bw256:* | epyc8192:*)
        case $2 in
        treeduce:ring | treeduce:hring | smpi:smp_rsag | smpi:smp_rsag_lr | smpi:rab1 | \
            smpi:rab2) return 0 ;;
        esac
        ;;
    esac
    return 1
}
case_shared() {
    case $1 in
    *) echo 1G ;;
    esac
}

mkdir -p "$out/runs" "$out/bin"

# The model's predicted times, for the summary: DIR/bin/MACHINE/predict.csv,
# 8 B to BYTES, an algorithm's commas written as semicolons, as scale.csv
# writes them.  (Every candidate of bluewaters256 to 16 MiB had not been
# predicted after 20 minutes here; to 1 KiB it took 4 minutes.)
predict_machine() { # topo bytes
    local topo=$1 max=$2 m
    m=$(basename "$topo" .topo)
    local f=$out/bin/$m/predict.csv
    if [ ! -s "$f" ] || [ "$topo" -nt "$f" ] || [ "$gen" -nt "$f" ] ||
        [ "$(cut -d, -f2 "$f" | sort -n | tail -1)" -lt "$max" ]; then
        mkdir -p "$out/bin/$m"
        "$gen" "$topo" --alpha-r-ratio 0 --predict "$max" >"$f.tmp"
        mv "$f.tmp" "$f"
    fi
}

# One program per machine: bench_smpi.c, the runtime, the machine's generated
# routines, compiled with smpicc.
build_machine() { # topo -> prints the binary
    local topo=$1 m
    m=$(basename "$topo" .topo)
    smpi_build_bench "$gen" "$topo" "$out/bin/$m" "$out/bin/bench_smpi_$m"
    echo "$out/bin/bench_smpi_$m"
}

hostfile_for() { # case dir m -> prints the hostfile
    local c=$1 dir=$2 m=$3
    case $c in
    *-shuffled)
        # the same nodes, in an order fixed by a seeded shuffle
        awk 'BEGIN { srand(20261125) } { print rand() "\t" $0 }' "$dir/$m.hosts" | sort -n |
            cut -f2- >"$dir/$m.shuffled.hosts"
        echo "$dir/$m.shuffled.hosts"
        ;;
    *) echo "$dir/$m.hosts" ;;
    esac
}

run_one() { # case routine
    local c=$1 r=$2 topo m bin dir hosts np f
    topo=$(case_topo "$c")
    m=$(basename "$topo" .topo)
    bin=$out/bin/bench_smpi_$m
    dir=$out/bin/$m
    hosts=$(hostfile_for "$c" "$dir" "$m")
    np=$(awk -F: '{ n += $2 } END { print n }' "$hosts")
    f=$out/runs/$c/${r//\//_}
    [ -n "$only" ] && rm -f "$f.csv"
    [ -s "$f.csv" ] && return 0
    mkdir -p "$out/runs/$c"
    local rc_=${r//,/;} # the routine as scale.csv writes it
    if case_skip "$c" "$r"; then
        echo "$c,$m,$rc_,,,,,,,skipped,0," >"$f.csv"
        return 0
    fi
    local env=(TREEDUCE_SHM=0 TREEDUCE_VERBOSE=2) cfg=()
    case $r in
    smpi:*) env+=(TREEDUCE_DISABLE=1); cfg=(--cfg=smpi/allreduce:"${r#smpi:}") ;;
    treeduce:auto) cfg=(--cfg=smpi/allreduce:rdb) ;;
    treeduce:*) env+=(TREEDUCE_ALGORITHM="${r#treeduce:}"); cfg=(--cfg=smpi/allreduce:rdb) ;;
    esac
    local t0=$SECONDS rc=0
    env "${env[@]}" timeout "$limit" smpirun -platform "$dir/$m.xml" -hostfile "$hosts" -np "$np" \
        "${sim[@]}" "${cfg[@]}" "$bin" --sizes "${sizes:-$(case_sizes "$c")}" --iters "$(case_iters "$c")" \
        --shared-from "$(case_shared "$c")" >"$f.out" 2>"$f.err" || rc=$?
    # the algorithms treeduce ran, and any fallback, from its notes
    local ran
    ran=$(grep -ho 'MPI_Allreduce runs [^ ]*\|uses the MPI library.s routine: .*' "$f.err" |
        sed 's/MPI_Allreduce runs //' | sort -u | tr '\n' ' ' | sed 's/,/;/g; s/ *$//')
    awk -F, -v c="$c" -v m="$m" -v r="$rc_" -v ran="$ran" -v rc="$rc" -v wall=$((SECONDS - t0)) '
        /^[0-9]/ { print c "," m "," r "," $0 "," (rc ? "rc=" rc : "ok") "," wall "," ran }' \
        "$f.out" >"$f.tmp"
    if [ "$rc" -ne 0 ] && ! [ -s "$f.tmp" ]; then
        echo "$c,$m,$rc_,,,,,,,rc=$rc,$((SECONDS - t0))," >"$f.tmp"
    fi
    mv "$f.tmp" "$f.csv"
    echo "$c $r: rc=$rc, $((SECONDS - t0)) s wall" >&2
}

for c in "${cases[@]}"; do
    build_machine "$(case_topo "$c")" >/dev/null
done
# every (case, routine), JOBS at a time
tasks=()
for c in "${cases[@]}"; do
    for a in "${treeduce_algs[@]}"; do tasks+=("$c treeduce:$a"); done
    for a in "${smpi_algs[@]}"; do tasks+=("$c smpi:$a"); done
    for r in "${extra[@]}"; do tasks+=("$c $r"); done
done
for t in "${tasks[@]}"; do
    [ -z "$only" ] || grep -Eq -- "$only" <<<"${t#* }" || continue
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    # shellcheck disable=SC2086
    run_one $t &
done
wait

header="case,machine,routine,bytes,ranks,median_s,min_s,wrong_ranks,checked,status,wall_s,ran"
# every run so far in OUTDIR, not only this call's, over the rows scale.csv
# had: a (case, routine) that runs/ has takes its place, at its first row
# (new ones after their case's last row, or at the end); the others stay
for d in "$out"/runs/*/; do cat "$d"*.csv 2>/dev/null || true; done >"$out/runs.csv"
[ -s "$out/scale.csv" ] || echo "$header" >"$out/scale.csv"
awk -F, -v header="$header" '
FILENAME == ARGV[1] { k = $1 FS $3; if (!(k in nw)) ko[++nk] = k; nw[k] = nw[k] $0 "\n"; next }
FNR == 1 { next }
{ k = $1 FS $3; old[++n] = $0; key[n] = k; lastc[$1] = n; if (k in nw) had[k] = 1 }
END {
    for (i = 1; i <= nk; i++) if (!(ko[i] in had)) { split(ko[i], kc, FS); tail[kc[1]] = tail[kc[1]] nw[ko[i]] }
    print header
    for (i = 1; i <= n; i++) {
        k = key[i]; c = substr(k, 1, index(k, FS) - 1)
        if (k in nw) { if (!(k in done)) { printf "%s", nw[k]; done[k] = 1 } }
        else print old[i]
        if (lastc[c] == i && (c in tail)) { printf "%s", tail[c]; delete tail[c] }
    }
    for (i = 1; i <= nk; i++) { split(ko[i], kc, FS); if (kc[1] in tail) { printf "%s", tail[kc[1]]; delete tail[kc[1]] } }
}' "$out/runs.csv" "$out/scale.csv" >"$out/scale.csv.new"
mv "$out/scale.csv.new" "$out/scale.csv"
rm -f "$out/runs.csv"
# per machine, up to the largest size of its cases in scale.csv
declare -A pmax
for c in $(tail -n +2 "$out/scale.csv" | cut -d, -f1 | sort -u); do
    t=$(case_topo "$c")
    b=$(case_sizes "$c" | tr , '\n' | numfmt --from=iec | sort -n | tail -1)
    [ "${pmax[$t]:-0}" -ge "$b" ] || pmax[$t]=$b
done
for t in "${!pmax[@]}"; do predict_machine "$t" "${pmax[$t]}"; done
sh "$top/bench/scale_summary.sh" "$out"
