#!/usr/bin/env bash
# The generator under AddressSanitizer and UndefinedBehaviorSanitizer: a gcc
# build with -DTREEDUCE_SANITIZE=ON (no recovery: the first report fails the
# test) in build-sanitize (or $TRD_SANITIZE_BUILD) of treeduce-gen and the
# CUnit tests only, then `ctest -L unit` (the CUnit tests, the style check,
# generated/ up to date) and the command-line tests (cli.*).  Leaks are
# reported (LeakSanitizer) and fail too.
#   tests/sanitize.sh [CTEST_ARGS...]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${TRD_SANITIZE_BUILD:-$src/build-sanitize}

mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="${CC:-gcc}" -DTREEDUCE_SANITIZE=ON \
    -DTREEDUCE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 2; }
# Every executable the unit and cli tests run, nothing that needs MPI,
targets=(treeduce-gen)
for t in "$src"/tests/unit/test_*.c; do
    t=$(basename "$t" .c)
    grep -qE "\b$t\b" "$src/tests/unit/CMakeLists.txt" && targets+=("$t")
done
# and the machines' pictures (Graphviz found), which cli.dot_svg.* check
mapfile -t svgs < <(cmake --build "$build" --target help | grep -oE '\btreeduce_[A-Za-z0-9_]+_svg\b' | sort -u)
targets+=("${svgs[@]}")
cmake --build "$build" -j2 --target "${targets[@]}" >"$build/build.log" 2>&1 ||
    { tail -40 "$build/build.log"; exit 2; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -R '^(unit|style|generated|cli)\.' "$@"
