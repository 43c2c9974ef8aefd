#!/bin/sh
# Sizes that are not 1 B .. 1 TiB are refused with the option's message and
# exit 1 (--predict inf used to print forever; --bytes nan or 1e19 was an
# undefined conversion to size_t).
#   check_bad_sizes.sh GEN TOPOLOGY
for v in inf nan 1e19 -5 0 2TiB 12Q; do
  out=$(timeout 20 "$1" "$2" --predict $v 2>&1); rc=$?
  [ $rc -eq 1 ] && [ "$out" = "treeduce-gen: --predict '$v': expected a size from 1 B to 1 TiB such as 4MiB" ] || { echo "--predict $v: rc $rc: $out"; exit 1; }
  out=$(timeout 20 "$1" "$2" --schedule 0 --bytes $v 2>&1); rc=$?
  [ $rc -eq 1 ] && [ "$out" = "treeduce-gen: --bytes '$v': expected a size from 1 B to 1 TiB such as 64KiB" ] || { echo "--bytes $v: rc $rc: $out"; exit 1; }
done
echo all refused
