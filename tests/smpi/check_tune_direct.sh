#!/bin/sh
# check_tune_direct.sh SMPI_BUILD
# smpi.tune_direct: the SMPI build's treeduce-tune run directly, not by
# smpirun: --help and --version print their text and exit 0, an unknown
# option and a missing TOPOLOGY print the error and the usage and exit 1, a
# good command line says to run it under smpirun and exits 1; never a crash.
# Exits 77 (skipped) without the SMPI build (smpi.build).
bin=$1
if [ ! -f "$bin/CMakeCache.txt" ]; then
  echo "skipped: the SMPI build (smpi.build) missing"; exit 77
fi
cmake --build "$bin" --target treeduce-tune || { echo "FAIL: building the SMPI treeduce-tune"; exit 1; }
tune=$bin/treeduce-tune
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail=0
# expect NAME STATUS STREAM REGEX ARGS...: exit status and a line of stdout or stderr
expect() {
  name=$1 want=$2 stream=$3 re=$4
  shift 4
  "$tune" "$@" >"$out" 2>"$err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $name: exit status $rc, expected $want"; cat "$out" "$err"; fail=1
  elif ! grep -Eq -- "$re" "$stream"; then
    echo "FAIL: $name: no line matching '$re'"; cat "$out" "$err"; fail=1
  else
    echo "ok: $name"
  fi
}
expect --help 0 "$out" '^usage: mpiexec -n P treeduce-tune TOPOLOGY' --help
expect -h 0 "$out" '^Exit: 0 written; 1 usage' -h
expect --version 0 "$out" '^treeduce-tune [0-9]+\.[0-9]+' --version
expect 'unknown option' 1 "$err" "^treeduce-tune: unknown option '--no-such-option'" --no-such-option t.topo
expect 'usage after an error' 1 "$err" '^usage: mpiexec -n P treeduce-tune' --no-such-option t.topo
expect 'bad value' 1 "$err" "^treeduce-tune: --max-bytes '3': expected bytes" --max-bytes 3 t.topo
expect 'no TOPOLOGY' 1 "$err" '^treeduce-tune: expected one TOPOLOGY argument'
expect 'not under smpirun' 1 "$err" 'run it under smpirun' t.topo
[ "$fail" -eq 0 ] || exit 1
echo "smpi.tune_direct: passed"
