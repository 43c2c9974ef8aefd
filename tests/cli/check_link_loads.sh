#!/bin/sh
# --link-loads on tests/data/leaf2x2.topo: the exact lines of the ring and
# Rabenseifner at 8 MiB in tree and shuffled order, the selected algorithm,
# two ranks per node and a placement file, against tests/data/leaf2x2.linkloads
# (TRD_UPDATE_LINK_LOADS=1 rewrites it); then each refusal's exact message
# and exit status.
#   check_link_loads.sh GEN DATA   (GEN an absolute path)
gen=$1 data=$(cd "$2" && pwd) || exit 1
topo=$data/leaf2x2.topo golden=$data/leaf2x2.linkloads
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
run() {
  echo "\$ treeduce-gen leaf2x2.topo $*" >>"$out"
  timeout 60 "$gen" "$topo" "$@" >>"$out" 2>&1 || echo "exit $?" >>"$out"
}
run --link-loads 8MiB --algorithm ring
run --link-loads 8MiB --algorithm ring --order shuffled
run --link-loads 8MiB --algorithm rabenseifner
run --link-loads 8MiB --algorithm rabenseifner --order shuffled
run --link-loads 8MiB
run --link-loads 8MiB --algorithm rd --ppn 2 --order shuffled
(cd "$data" && run --link-loads 1MiB --algorithm ring --order leaf2x2.hosts)
if [ "$TRD_UPDATE_LINK_LOADS" = 1 ]; then
  cp "$out" "$golden" && echo "rewrote $golden"
elif ! diff -u "$golden" "$out"; then
  echo "link loads differ from $golden"; exit 1
fi

# refusals: exit status and message, exactly
fail() {
  want_rc=$1 want=$2; shift 2
  got=$(cd "$data" && timeout 60 "$gen" "$topo" "$@" 2>&1); rc=$?
  [ $rc -eq "$want_rc" ] && [ "$got" = "$want" ] || { printf '%s: rc %s:\n%s\n' "$*" $rc "$got"; exit 1; }
}
fail 1 "treeduce-gen: --link-loads '0': expected a size from 1 B to 1 TiB such as 8MiB" --link-loads 0
fail 1 "treeduce-gen: --ppn '0': expected a number of ranks from 1 to 4096" --link-loads 1MiB --ppn 0
fail 1 "treeduce-gen: --ppn '2x': expected a number of ranks from 1 to 4096" --link-loads 1MiB --ppn 2x
fail 1 "treeduce-gen: --ppn: the file of --order places every rank; give one or the other" \
  --link-loads 1MiB --order leaf2x2.hosts --ppn 2
fail 2 "treeduce-gen: --order: goes with --link-loads N" --order shuffled --explain
fail 2 "treeduce-gen: --ppn: goes with --link-loads N" --ppn 2 --explain
fail 1 "treeduce-gen: --link-loads: mpi is the MPI library's own routine: treeduce plans no schedule for it" \
  --link-loads 1MiB --algorithm mpi
fail 1 "treeduce-gen: --link-loads: shm needs a communicator on one node with shared memory" \
  --link-loads 1MiB --algorithm shm
fail 1 "treeduce-gen: --link-loads: the placement has 1 rank; an allreduce between ranks needs 2 or more" \
  --link-loads 1MiB --order leaf2x2-one.hosts
fail 1 "leaf2x2-bad.hosts:2:1: error: host 'n9' is not a node of machine 'leaf2x2'
  n9
  ^
leaf2x2-bad.hosts:3:6: error: host 'gpu7' is not a node of machine 'leaf2x2'
    n1,gpu7
       ^" --link-loads 1MiB --order leaf2x2-bad.hosts
echo "link loads: as expected"
