#!/bin/sh
# Outputs to a file that is not regular (a FIFO here; /dev/null alike) are
# written through it, never replaced by rename (as root, --dot /dev/null
# replaced the system's /dev/null with a regular file).
#   check_write_through.sh GEN TOPOLOGY
d=$(mktemp -d) && mkfifo "$d/dot" "$d/json" || exit 1
timeout 20 cat "$d/dot" > "$d/dot.out" & timeout 20 cat "$d/json" > "$d/json.out" &
timeout 20 "$1" "$2" --dot "$d/dot" --export-mpich "$d/json" || exit 1
wait
test -p "$d/dot" && test -p "$d/json" || { echo 'a FIFO was replaced'; exit 1; }
grep -q digraph "$d/dot.out" && grep -q collective=allreduce "$d/json.out" || exit 1
test -z "$(ls "$d" | grep tmp)" || exit 1
rm -rf "$d"
echo written through
