#!/bin/sh
# Regenerate every machine under generated/ with the command in its banner.
# Run from anywhere; needs a built treeduce-gen (default: build/treeduce-gen).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
gen=${TREEDUCE_GEN:-$top/build/treeduce-gen}
cd "$top"
for d in generated/*/; do
    m=$(basename "$d")
    cmd=$(sed -n 's/^ \* command: treeduce-gen //p' "$d/trd_$m.c" | head -n 1)
    echo "treeduce-gen $cmd"
    eval "\"$gen\" $cmd"
done
