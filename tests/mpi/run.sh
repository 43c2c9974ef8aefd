#!/bin/sh
# run.sh [--status N] COMMAND [ARGS...]
# Runs an MPI test's command (its launcher: mpiexec, smpirun) and passes its
# exit status on.  mpiexec ends non-zero when any rank exits non-zero or is
# killed; when the status is not the one expected (0, or N), this prints
#   treeduce-test: exit status S
# which every test lists in FAIL_REGULAR_EXPRESSION (trd_exit_status_fails in
# tests/CMakeLists.txt): a test that matches its output alone still fails
# when a rank crashes after printing its results.  With --status N, the
# expected status N exits 0.
expect=0
if [ "$1" = "--status" ]; then
    expect=$2
    shift 2
fi
"$@"
rc=$?
if [ "$rc" -ne "$expect" ]; then
    if [ "$expect" -ne 0 ]; then
        echo "treeduce-test: exit status $rc, not $expect"
    else
        echo "treeduce-test: exit status $rc"
    fi
    [ "$rc" -ne 0 ] && exit "$rc"
    exit 1
fi
exit 0
