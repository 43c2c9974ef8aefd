#!/bin/bash
# The bytes one allreduce puts on every link of an emulated cluster, counted
# on the wire, beside what the model says they are.
#
#   bench/link_loads.sh TOPOLOGY [--bytes N] [--calls K] [--algorithm NAME]
#                       [--order tree|shuffled] [--mpi mpich|openmpi] [--build DIR]
#                       [--program PATH] [--tolerance X]
#
# The model: treeduce-gen TOPOLOGY --link-loads N (--algorithm, --order): the
# bytes the schedule's messages put on each directed link of the switch tree
# (gen/verify/linkload.h), the payload only.  The wire: bench/cluster.sh runs
# PROGRAM (tests/cluster/link_calls.c linked with the machine's library;
# default the build's cluster_link_calls, machine tests/cluster/tree4.topo)
# twice with TREEDUCE_ALGORITHM=NAME, once making no call and once K calls of
# N bytes (default 8 MiB, 4 calls), and takes the difference of the links'
# byte counters (--link-bytes) over K: what one call adds to each link, its
# TCP/IP and Ethernet headers (MTU 9000: 66 bytes per 8948) and the ACKs of
# the other direction included.  Each link's wire bytes over the model's must
# lie within 1 +- X (default 0.05); a link the model leaves empty must carry
# under X of the busiest link's.  Prints both per link and exits 0 when all
# agree, 1 when one does not, 77 when this host cannot emulate.
set -u
me=${0##*/}
die() { echo "$me: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
topo= bytes=8388608 calls=4 alg=ring order=tree mpi=mpich build=$here/build program= tol=0.05
[ $# -ge 1 ] || { sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
topo=$1
shift
while [ $# -gt 0 ]; do
    case $1 in
    --bytes) bytes=${2:?}; shift 2 ;;
    --calls) calls=${2:?}; shift 2 ;;
    --algorithm) alg=${2:?}; shift 2 ;;
    --order) order=${2:?}; shift 2 ;;
    --mpi) mpi=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --program) program=${2:?}; shift 2 ;;
    --tolerance) tol=${2:?}; shift 2 ;;
    *) die "unknown option '$1'" ;;
    esac
done
[[ $bytes =~ ^[0-9]+$ ]] && [ "$bytes" -ge 8 ] || die "--bytes '$bytes': expected a count of bytes >= 8"
[[ $calls =~ ^[1-9][0-9]*$ ]] || die "--calls '$calls': expected a positive integer"
program=${program:-$build/tests/cluster/cluster_link_calls}
[ -x "$program" ] || die "$program not found (build first, or give --program)"

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$build/treeduce-gen" "$topo" --link-loads "$bytes" --algorithm "$alg" --order "$order" \
    >"$tmp/model" || exit 2
run() { # run CALLS FILE
    bench/cluster.sh "$topo" --order "$order" --mpi "$mpi" --build "$build" --timeout 300 \
        --link-bytes "$2" --env TREEDUCE_ALGORITHM="$alg" --env TREEDUCE_VERBOSE=1 \
        -- "$program" "$bytes" "$1"
}
cd "$here" || exit 2
run 0 "$tmp/wire0"
rc=$?
[ "$rc" = 0 ] || exit "$rc"
run "$calls" "$tmp/wire1"
rc=$?
[ "$rc" = 0 ] || exit "$rc"

# the model's lines: nodes (by name), then the switches but the root, in the
# order of their indexes; the wire's: nodes by name, switches by index
awk -v calls="$calls" -v tol="$tol" -v alg="$alg" -v order="$order" -v bytes="$bytes" '
    FILENAME == ARGV[1] && $1 == "link" { nm++; mname[nm] = $2; mdir[nm] = $3; model[nm] = $4; next }
    FILENAME == ARGV[2] && NF == 4 && $1 != "#" { w0[$1 " " $2 " " $3] = $4; next }
    FILENAME == ARGV[3] && NF == 4 && $1 != "#" {
        nw++; key[nw] = $1 " " $2 " " $3; wire[nw] = ($4 - w0[key[nw]]) / calls; next }
    END {
        if (nm != nw) { printf "link_loads: %d links in the model, %d on the wire\n", nm, nw; exit 1 }
        for (i = 1; i <= nm; i++) {
            split(key[i], k, " ")
            if ((k[1] == "link" && k[2] != mname[i]) || k[3] != mdir[i]) {
                printf "link_loads: link %d: the model has %s %s, the wire %s\n", i, mname[i], mdir[i], key[i]
                exit 1
            }
            if (model[i] > max) max = model[i]
        }
        printf "# one allreduce of %d B, %s, %s order: bytes per link and direction\n", bytes, alg, order
        printf "%-16s %-5s %14s %14s %10s\n", "link", "dir", "model_B", "wire_B", "wire/model"
        bad = 0
        for (i = 1; i <= nm; i++) {
            r = model[i] > 0 ? wire[i] / model[i] : 0
            ok = model[i] > 0 ? (r >= 1 - tol && r <= 1 + tol) : (wire[i] < tol * max)
            rs = (model[i] > 0) ? sprintf("%.4f", r) : "-"
            printf "%-16s %-5s %14d %14.0f %10s%s\n", mname[i], mdir[i], model[i], wire[i], rs,
                   (ok ? "" : "   <- beyond " tol)
            bad += !ok
        }
        if (bad) printf "link_loads: %d of %d links differ from the model beyond %s\n", bad, nm, tol
        else printf "link_loads: all %d links within %s of the model\n", nm, tol
        exit bad > 0
    }' "$tmp/model" "$tmp/wire0" "$tmp/wire1"
