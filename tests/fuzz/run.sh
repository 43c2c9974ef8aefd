#!/usr/bin/env bash
# Fuzz the generator's input readers: configure and build the clang fuzz
# build (TREEDUCE_FUZZ=ON, in build-fuzz or $TRD_FUZZ_BUILD), then run each
# libFuzzer harness of tests/fuzz/CMakeLists.txt (or only those named after
# the time) for SECONDS_PER_READER seconds (default 60), one after the
# other, one process each, from its seed corpus (tests/fuzz/corpus/NAME, read
# only) and dictionary.  New corpus entries go to BUILD/fuzz/NAME/corpus,
# crash, leak and timeout reproducers to BUILD/fuzz/NAME/ (crash-*, leak-*,
# timeout-*), the log to BUILD/fuzz/NAME/log.  Prints executions, coverage
# and wall time per harness; exits 1 when any harness found something.  An
# input counts as a hang after TRD_FUZZ_TIMEOUT seconds (default 20): the
# readers take machines of up to 2^20 nodes, which take about 5 s under the
# sanitizers on an idle core.
#   tests/fuzz/run.sh [SECONDS_PER_READER [NAME...]]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
shift || true
build=${TRD_FUZZ_BUILD:-$src/build-fuzz}
cc=${CC:-clang}
timeout=${TRD_FUZZ_TIMEOUT:-20}

mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DTREEDUCE_FUZZ=ON -DTREEDUCE_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 2; }
cmake --build "$build" -j2 >"$build/build.log" 2>&1 || { tail -40 "$build/build.log"; exit 2; }

if [ $# -gt 0 ]; then
    names=("$@")
else
    mapfile -t names <"$build/fuzz_harnesses.txt"
fi

status=0
printf '%-10s %8s %10s %8s %6s %7s  %s\n' harness seconds execs exec/s cov corpus result
for h in "${names[@]}"; do
    out=$build/fuzz/$h
    mkdir -p "$out/corpus"
    dict=()
    [ -f "$src/tests/fuzz/$h.dict" ] && dict=(-dict="$src/tests/fuzz/$h.dict")
    start=$(date +%s)
    rc=0
    "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=2048 \
        -max_len=8192 -print_final_stats=1 -artifact_prefix="$out/" \
        "${dict[@]}" "$out/corpus" "$src/tests/fuzz/corpus/$h" >"$out/log" 2>&1 || rc=$?
    wall=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1 || true)
    cov=$(grep -oE 'cov: [0-9]+' "$out/log" | tail -1 | cut -d' ' -f2 || true)
    corp=$(grep -oE 'corp: [0-9]+' "$out/log" | tail -1 | cut -d' ' -f2 || true)
    result=ok
    if [ "$rc" -ne 0 ]; then
        result="FAILED (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|SUMMARY|ALARM|out-of-memory' "$out/log" || true)"
        status=1
    fi
    printf '%-10s %8s %10s %8s %6s %7s  %s\n' "$h" "$wall" "${execs:-?}" \
        "$(( ${execs:-0} / (wall > 0 ? wall : 1) ))" "${cov:-?}" "${corp:-?}" "$result"
    if [ "$rc" -ne 0 ]; then
        (ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null || true) |
            sed "s/^/  reproducer: /"
        grep -A12 -m1 -E '^==[0-9]+==ERROR|runtime error' "$out/log" | sed 's/^/  /' || true
    fi
done
exit $status
