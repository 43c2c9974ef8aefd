#!/bin/sh
# bench/cluster.sh leaves nothing behind when a run is killed:
#   term   SIGTERM to cluster.sh while its ranks run
#   kill   SIGKILL to one rank's program (the launcher then ends the run)
# Each rank writes a file into its node's /dev/shm first.  Afterwards no
# namespace, root veth, /etc/netns entry or folder of the run, no process of
# it and no such /dev/shm file may be left.  Exit 77 when cluster.sh cannot
# emulate here (its reason printed).
#   check_teardown.sh CLUSTER_SH TOPOLOGY BUILD MPI CASE
set -u
CLUSTER=$1 TOPO=$2 BUILD=$3 MPI=$4 CASE=$5
tag=trdprobe$$
log=$(mktemp)
"$CLUSTER" "$TOPO" --mpi "$MPI" --build "$BUILD" --timeout 120 -- \
    sh -c "touch /dev/shm/$tag.\$\$ && exec sleep 100" 2>"$log" &
pid=$!
id=
for i in $(seq 1 300); do
    if ! kill -0 $pid 2>/dev/null; then
        wait $pid
        rc=$?
        cat "$log"
        rm -f "$log"
        [ $rc = 77 ] && exit 77
        echo "cluster.sh ended early with status $rc"
        exit 1
    fi
    id=$(sed -n 's/^cluster.sh: run \([0-9a-f]*\):.*/\1/p' "$log")
    # every node's sleep running
    if [ -n "$id" ] && [ "$(for ns in $(ip netns list | awk -v p="trd-$id-n" 'index($1, p) == 1 { print $1 }'); do
            ip netns pids "$ns"; done | xargs -r ps -o comm= -p 2>/dev/null | grep -c '^sleep$')" -ge 2 ]; then
        break
    fi
    sleep 0.1
done
cat "$log"
rm -f "$log"
[ -n "$id" ] || { echo "no run id"; kill -TERM $pid; exit 1; }
case $CASE in
term) kill -TERM $pid ;;
kill)
    ns=$(ip netns list | awk -v p="trd-$id-n" 'index($1, p) == 1 { print $1; exit }')
    victim=$(ip netns pids "$ns" | xargs -r ps -o pid=,comm= -p | awk '$2 == "sleep" { print $1; exit }')
    echo "SIGKILL to rank process $victim in $ns"
    kill -KILL "$victim"
    ;;
esac
wait $pid
echo "cluster.sh ended with status $?"
bad=0
left() { echo "left behind: $*"; bad=1; }
ip netns list | grep -q "^trd-$id-" && left "namespaces $(ip netns list | grep "^trd-$id-" | tr '\n' ' ')"
ip link show "trd${id}h" >/dev/null 2>&1 && left "veth trd${id}h"
ls -d /etc/netns/trd-"$id"-* >/dev/null 2>&1 && left "/etc/netns/trd-$id-*"
[ -e "/tmp/treeduce-cluster-$id" ] && left "/tmp/treeduce-cluster-$id"
ls /dev/shm/"$tag".* >/dev/null 2>&1 && left "/dev/shm/$tag.*"
pgrep -f "$tag" >/dev/null && left "processes $(pgrep -f "$tag" | tr '\n' ' ')"
[ $bad = 0 ] && echo "run $id: nothing left"
exit $bad
