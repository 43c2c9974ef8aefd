#!/bin/sh
# check_killed.sh MPIEXEC TUNE SRC WORK
# tune.killed: a tuner killed while it measures (SIGKILL, as a batch job's
# time limit ends it) leaves nothing in the output's folder: the wisdom it
# writes has no name until it is complete (gen/out/outfile.h).  The ranks
# are killed once one of them holds a file open in that folder, which the
# tuner does before it measures anything.
mpiexec=$1 tune=$2 src=$3 work=$4
topo=$src/tests/data/testbed.topo
rm -rf "$work" && mkdir -p "$work/out" && cd "$work" || exit 1
out=$(cd out && pwd)
TREEDUCE_HOSTS=n0,n0 "$mpiexec" -n 2 "$tune" "$topo" -o "$out/w.wisdom" >tune.txt 2>&1 &
# ranks: the pids of the tuner's ranks (and its launcher), from /proc
ranks() {
  for d in /proc/[0-9]*; do
    tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF -- "$tune $topo -o $out/" && echo "${d#/proc/}"
  done
}
# holding: whether one of them holds a file open in $out
holding() {
  for p in $(ranks); do
    ls -l "/proc/$p/fd" 2>/dev/null | grep -qF -- "-> $out/" && return 0
  done
  return 1
}
i=0
while ! holding; do
  i=$((i + 1))
  if [ "$i" -gt 600 ]; then
    echo "FAIL: the tuner held no file in $out after 60 s"
    cat tune.txt
    kill -9 $(ranks) 2>/dev/null
    exit 1
  fi
  sleep 0.1
done
kill -9 $(ranks) 2>/dev/null
wait
sleep 0.5
left=$(ls -A "$out")
if [ -n "$left" ]; then
  echo "FAIL: left in the output's folder after SIGKILL: $left"
  exit 1
fi
echo "tune.killed: passed"
