#!/bin/sh
# kill -9 one rank in the middle of shared-memory allreduces: the job ends and
# no shared-memory object is left behind in /dev/shm.
#   check_shm_cleanup.sh MPIEXEC PROGRAM
set -u
mpiexec=$1
prog=$2
work=$(mktemp -d)
ls -a /dev/shm | sort > "$work/before"
TREEDUCE_VERBOSE=2 "$mpiexec" -n 2 "$prog" "$work/pid" > "$work/out" 2>&1 &
job=$!
i=0
while [ ! -s "$work/pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -s "$work/pid" ]; then
    echo "the program did not start"; kill -9 $job 2>/dev/null; cat "$work/out"; exit 1
fi
sleep 0.5
kill -9 "$(cat "$work/pid")"
i=0
while kill -0 $job 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $job 2>/dev/null; then
    echo "the job did not end after one rank was killed"; kill -9 $job; exit 1
fi
sleep 0.5
ls -a /dev/shm | sort > "$work/after"
left=$(comm -13 "$work/before" "$work/after")
if ! grep -q "MPI_Allreduce runs shm" "$work/out"; then
    echo "shared memory was not used:"; cat "$work/out"; exit 1
fi
if [ -n "$left" ]; then
    echo "left in /dev/shm: $left"; exit 1
fi
echo "killed rank 1 mid-collective; nothing left in /dev/shm"
echo "1 passed, 0 failed"
rm -rf "$work"
