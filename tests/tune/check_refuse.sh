#!/bin/sh
# check_refuse.sh MPIEXEC TUNE SRC WORK
# tune.refuse: treeduce-tune refuses, with a clear message from rank 0, a
# non-zero exit on every rank and no wisdom written: ranks with other
# options (an MPMD launch), another description of the machine, another
# TREEDUCE_HOSTS, a rank on no node of the machine, a bad option or budget,
# an output that cannot be created (before anything is measured).
mpiexec=$1 tune=$2 src=$3 work=$4
topo=$src/tests/data/testbed.topo other=$src/tests/data/two-level.topo
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failed=0
# expect STATUS MESSAGE -- COMMAND...: the exit status, a line of stderr, no file
expect() {
  status=$1 msg=$2
  shift 3
  "$@" >out.txt 2>&1
  rc=$?
  if [ "$rc" -ne "$status" ] || ! grep -qF -- "$msg" out.txt || ls ./*.wisdom >/dev/null 2>&1; then
    echo "FAIL: exit $rc (expected $status), expected \"$msg\", files: $(ls)"
    cat out.txt
    failed=1
  else
    echo "ok: $msg"
  fi
  rm -f ./*.wisdom
}
expect 2 "treeduce-tune: rank 1 has other options than rank 0: '--max-bytes 1024', rank 0 '--max-bytes 65536'" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 1 "$tune" "$topo" --max-bytes 64K -o w.wisdom : \
  -n 1 "$tune" "$topo" --max-bytes 1K -o w.wisdom
expect 2 "treeduce-tune: rank 1 read another description of the machine (digest" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 1 "$tune" "$topo" -o w.wisdom : \
  -n 1 "$tune" "$other" -o w.wisdom
expect 2 "treeduce-tune: rank 1 has TREEDUCE_HOSTS 'n1,n0', rank 0 'n0,n1'" -- \
  "$mpiexec" -n 1 -env TREEDUCE_HOSTS n0,n1 "$tune" "$topo" : \
  -n 1 -env TREEDUCE_HOSTS n1,n0 "$tune" "$topo"
expect 2 "treeduce-tune: rank 1: host 'elsewhere' is not a node of machine 'testbed'" -- \
  env TREEDUCE_HOSTS=n0,elsewhere "$mpiexec" -n 2 "$tune" "$topo"
expect 2 "treeduce-tune: the ranks do not agree; nothing measured" -- \
  env TREEDUCE_HOSTS=n0,elsewhere "$mpiexec" -n 2 "$tune" "$topo"
expect 1 "treeduce-tune: --budget '10x': expected a duration such as 90s, 10m, 1h or plain seconds" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$topo" --budget 10x
expect 1 "treeduce-tune: --passes '0': expected a whole number from 1 to 9" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$topo" --passes 0
expect 2 "treeduce-tune: rank 1 has other options than rank 0: '--passes 2', rank 0 '--passes 3'" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 1 "$tune" "$topo" -o w.wisdom : \
  -n 1 "$tune" "$topo" --passes 2 -o w.wisdom
expect 1 "treeduce-tune: unknown option '--frobnicate'" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$topo" --frobnicate
expect 1 "treeduce-tune: --shapes: this job cannot form 4x1 (2 nodes, 1 rank on rank 0's node, 1 on the smallest)" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$topo" --shapes 4x1
expect 2 "error" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$src/tests/data/bad_cluster.topo"
expect 3 "treeduce-tune: $work/none/w.wisdom: cannot create a temporary file beside it: No such file or directory; nothing measured" -- \
  env TREEDUCE_HOSTS=n0,n1 "$mpiexec" -n 2 "$tune" "$topo" -o "$work/none/w.wisdom"
[ $failed -eq 0 ] && echo "tune.refuse: passed"
exit $failed
