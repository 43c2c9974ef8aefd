#!/bin/sh
# run_smpi.sh SMPIRUN PROGRAM PLATFORM.xml HOSTFILE [PROGRAM ARGS...]
# Runs an SMPI program on every rank slot of HOSTFILE (host or host:ranks per
# line) on the simulated PLATFORM; exits 77 (skipped) when SimGrid or the
# program is missing, and fails through tests/mpi/run.sh on any other
# status but 0.  Simulated computation is off (the host's speed would
# only add noise) and the output is SMPI's, unfiltered.
smpirun=$1 prog=$2 platform=$3 hosts=$4
shift 4
if ! command -v "$smpirun" >/dev/null 2>&1; then
  echo "skipped: smpirun not found"; exit 77
fi
if [ ! -f "$prog" ]; then
  echo "skipped: $prog not built (smpi.build)"; exit 77
fi
np=$(awk -F: 'NF { n += (NF > 1 ? $2 : 1) } END { print n }' "$hosts")
exec sh "$(dirname "$0")/../mpi/run.sh" "$smpirun" -np "$np" -platform "$platform" -hostfile "$hosts" \
  --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
  --log=root.thres:warning --log=xbt_cfg.thres:warning \
  "$prog" "$@"
