#!/bin/sh
# The generator at the scale of real clusters: plan, verify and emit large
# machines (bench/gen_topos.sh writes them) and print wall time and peak
# memory of each run as a table.  A benchmark, not a test.
#   bench/bench_gen.sh [BUILD]     (BUILD: a Release build, default build/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
gen=$build/treeduce-gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$top/bench/gen_topos.sh" "$tmp"
cp "$top/topologies/bluewaters64.topo" "$tmp/"
printf '%-18s %10s %10s %12s\n' machine ranks wall_s peak_MiB
for mr in bluewaters64:1024 tree1k:32000 tree10k:320000 tree100k:3200000 wide2:128000 \
    chain1000:32000; do
    m=${mr%:*} ranks=${mr#*:}
    out=$tmp/out-$m
    mkdir -p "$out"
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$gen" "$tmp/$m.topo" -o "$out" >/dev/null
    read -r wall kb <"$tmp/time"
    printf '%-18s %10s %10s %12d\n' "$m" "$ranks" "$wall" $((kb / 1024))
done
