#!/bin/bash
# An emulated cluster on this one Linux host, and an MPI program run on it.
#
#   bench/cluster.sh TOPOLOGY [--ppn K] [--order tree|shuffled|FILE] [--mpi mpich|openmpi]
#                    [--rate-scale X] [--env NAME=VALUE]... [--timeout S] [--build DIR]
#                    [--link-bytes FILE] [--keep] -- PROGRAM [ARGS]
#   bench/cluster.sh TOPOLOGY --rates [--rate-scale X] [--build DIR]
#   bench/cluster.sh --teardown RUNID
#
# treeduce-gen TOPOLOGY --emulate (gen/out/emulate.h) gives the switch tree,
# the nodes and the link rates.  Each node becomes a network namespace whose
# processes see the node's name as their host name, each switch a bridge (all
# bridges in one "fabric" namespace), each link a veth pair shaped in both
# directions (tbf on the egress of each end) to the topology's bandwidth
# divided by the rate scale.  One veth end in this (the root) namespace,
# attached to the root bridge, carries the launcher's control traffic: mpiexec
# and mpirun run here and their proxies call back.  Addresses come from one
# /24 of 198.18.0.0/15 (RFC 2544's benchmarking range) that no address or
# route of this host uses; the namespaces have no default route and nothing
# is forwarded to a real interface.
#
# Every process of a node gets a private mount and IPC namespace: its own
# /dev/shm (a tmpfs that dies with the node's processes) and System V IPC,
# and its own /proc/sys/kernel/random/boot_id, which UCX takes for the
# machine's identity: without it UCX sees one machine and moves the bytes
# between "nodes" through shared memory, past the shaped links.  Names
# resolve through /etc/netns/NS/hosts (bind-mounted by ip netns exec); the
# launcher runs in a private mount namespace whose /etc/hosts names the
# nodes too.  The real /etc/hosts is never written.
#
# Ranks: nodes x ppn (ppn: the node type's cores unless given), in tree order
# (ring order, a node's ranks consecutive), shuffled (nodes taken one per leaf
# switch in turn, so that consecutive nodes sit on different leaves), or as a
# FILE of host names, one per rank.
#
# Rates: each byte of each link crosses this host's kernel, on its CPUs.  One
# TCP stream between two nodes of different leaves, unshaped (--rate-scale
# 1e-6), carried about 450 MB/s on this 2-CPU host, and that is shared by every
# link busy at once (docs/scale.md): links of at most 50 MB/s are kept as
# written, so that some eight busy links stay within it, and when
# the fastest is faster, every rate is divided by fastest / 50 MB/s (one
# factor, so the ratios between links stay), unless --rate-scale X is given.
#
# --link-bytes FILE: after the program, the bytes each link carried since
# the cluster came up, per direction, from tc's counters on the egress of its
# two ends (headers included): "link NODE up|down BYTES" for a node's link
# (up: from the node to its switch), "switch INDEX up|down BYTES" for the
# uplink of the switch of that index (treeduce-gen --emulate's, DFS order).
#
# --rates: nothing is brought up or run (no root needed); prints the rate
# scale, "scale X", and each link's shaped rate in bytes per second, "node
# NAME BPS" (its link to its switch) and "switch INDEX BPS" (the uplink of
# that switch), e.g. for the link bound of a benchmark (bench/cluster_run.sh).
#
# Exit status: the program's (the launcher's); 124 on --timeout (default
# 600 s); 77, with one line saying why, when this host cannot emulate (not
# root, no ip netns, no tc, no launcher).  Everything is torn down on every
# exit, SIGINT, SIGTERM and SIGHUP included: the processes of the run's
# namespaces killed, the namespaces (with their bridges and veths), the root
# veth, /etc/netns entries and the run's folder removed; --keep leaves it up
# and prints the teardown command.
set -u

me=${0##*/}
die() { echo "$me: $*" >&2; exit 2; }
skip() { echo "$me: skipped: $*" >&2; exit 77; }

usage() {
    sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# ---- the names of one run -----------------------------------------------------
# RUNID: 4 hex digits.  Namespaces trd-RUNID-fab and trd-RUNID-nI; the root
# veth trdRUNIDh (IFNAMSIZ is 15); the folder /tmp/treeduce-cluster-RUNID.
# Bridges and the other veths live inside the run's namespaces, so their
# names cannot meet another run's.
set_names() {
    RUNID=$1
    NSP=trd-$RUNID
    FAB=$NSP-fab
    HOSTIF=trd${RUNID}h
    DIR=/tmp/treeduce-cluster-$RUNID
}

# Kill every process of the run's namespaces, delete the namespaces, the
# root veth, the /etc/netns entries and the folder.  Safe to call twice.
teardown() {
    local ns pids i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        pids=
        for ns in $(ip netns list 2>/dev/null | awk -v p="$NSP-" 'index($1, p) == 1 { print $1 }'); do
            pids="$pids $(ip netns pids "$ns" 2>/dev/null)"
        done
        pids=$(echo $pids)
        [ -z "$pids" ] && break
        kill -KILL $pids 2>/dev/null
        sleep 0.2
    done
    for ns in $(ip netns list 2>/dev/null | awk -v p="$NSP-" 'index($1, p) == 1 { print $1 }'); do
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    rm -rf /etc/netns/"$NSP"-*
    ip link del "$HOSTIF" 2>/dev/null
    rm -rf "$DIR"
    return 0
}

if [ "${1:-}" = --teardown ]; then
    [ $# -eq 2 ] && [[ $2 =~ ^[0-9a-f]{4}$ ]] || die "--teardown RUNID: expected the 4 hex digits a --keep run printed"
    [ "$(id -u)" = 0 ] || skip "not root"
    set_names "$2"
    teardown
    echo "$me: run $RUNID torn down"
    exit 0
fi

# ---- options -----------------------------------------------------------------
topo= ppn= order=tree mpi=mpich scale= timeout_s=600 keep=0 linkbytes= rates=0
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
envs=()
[ $# -ge 1 ] || usage
topo=$1
shift
while [ $# -gt 0 ]; do
    case $1 in
    --ppn) ppn=${2:?}; shift 2 ;;
    --order) order=${2:?}; shift 2 ;;
    --mpi) mpi=${2:?}; shift 2 ;;
    --rate-scale) scale=${2:?}; shift 2 ;;
    --env) envs+=("${2:?}"); shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --link-bytes) linkbytes=${2:?}; shift 2 ;;
    --keep) keep=1; shift ;;
    --rates) rates=1; shift ;;
    --) shift; break ;;
    *) usage ;;
    esac
done
[ $# -ge 1 ] || [ "$rates" = 1 ] || die "no PROGRAM after --"
[ -z "$ppn" ] || [[ $ppn =~ ^[1-9][0-9]*$ ]] || die "--ppn '$ppn': expected a positive integer"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout '$timeout_s': expected seconds"
[ -z "$scale" ] || awk -v x="$scale" 'BEGIN { exit !(x + 0 > 0) }' || die "--rate-scale '$scale': expected a number > 0"
for e in ${envs[@]+"${envs[@]}"}; do
    [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env '$e': expected NAME=VALUE"
done
case $mpi in
mpich) launcher=mpiexec.mpich ;;
openmpi) launcher=mpirun.openmpi ;;
*) die "--mpi '$mpi': expected mpich or openmpi" ;;
esac
gen=$build/treeduce-gen
[ -x "$gen" ] || die "$gen not found (build first, or give --build DIR)"
[ -r "$topo" ] || die "$topo: cannot read"

# default_scale DESCRIPTION: links up to 50 MB/s as written, else the
# fastest at 50 MB/s
default_scale() {
    awk '$1 == "switch" && $4 > m { m = $4 } $1 == "node" && $6 > m { m = $6 }
         END { print (m > 50e6) ? m / 50e6 : 1 }' "$1"
}
if [ "$rates" = 1 ]; then
    desc=$(mktemp) || exit 1
    trap 'rm -f "$desc"' EXIT
    "$gen" "$topo" --emulate "$desc" || exit 1
    [ -n "$scale" ] || scale=$(default_scale "$desc")
    awk -v s="$scale" 'BEGIN { print "scale", s }
        $1 == "node" { printf "node %s %.0f\n", $3, $6 / s }
        $1 == "switch" && $3 >= 0 { printf "switch %s %.0f\n", $2, $4 / s }' "$desc"
    exit 0
fi

# ---- can this host emulate? -----------------------------------------------------
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need root)"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v tc >/dev/null || skip "no tc (iproute2)"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
command -v "$launcher" >/dev/null || skip "no $launcher"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"

# a run id whose names are all free
for try in 1 2 3 4 5 6 7 8; do
    set_names "$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')"
    ip netns list | grep -q "^$NSP-" && continue
    ip link show "$HOSTIF" >/dev/null 2>&1 && continue
    mkdir -m 700 "$DIR" 2>/dev/null && break
done
[ -d "$DIR" ] || die "no free run id"

status=1
on_exit() {
    if [ "$keep" = 1 ] && [ "${torn:-0}" = 0 ]; then
        echo "$me: run $RUNID kept up; tear it down with: $0 --teardown $RUNID" >&2
    else
        teardown
    fi
}
on_signal() {
    trap - INT TERM HUP
    [ -n "${lpid:-}" ] && kill -TERM "$lpid" 2>/dev/null
    keep=0
    teardown
    exit "$1"
}
trap on_exit EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

# ---- the description ---------------------------------------------------------------
"$gen" "$topo" --emulate "$DIR/cluster" || exit 1
awk '$1 == "switch" { print $2, $3, $4 }' "$DIR/cluster" >"$DIR/switches"
awk '$1 == "node" { print $2, $3, $4, $5, $6 }' "$DIR/cluster" >"$DIR/nodes"
nnodes=$(wc -l <"$DIR/nodes")
[ "$nnodes" -le 250 ] || die "$nnodes nodes: at most 250 are emulated (one /24)"

[ -n "$scale" ] || scale=$(default_scale "$DIR/cluster")

# a /24 of 198.18.0.0/15 that no address or route of this host uses
used=$( { ip -4 addr; ip -4 route; } 2>/dev/null)
net=
start=$((16#$RUNID % 256))
for k in $(seq 0 255); do
    x=$(((start + k) % 256))
    case $used in *"198.18.$x."*) continue ;; esac
    net=198.18.$x
    break
done
[ -n "$net" ] || die "no free /24 in 198.18.0.0/15"
hostip=$net.254

# ---- the network ---------------------------------------------------------------------
MTU=9000
# shape NS DEV BYTES_PER_S: tbf on the egress of DEV at the scaled rate
shape() {
    local r
    r=$(awk -v b="$3" -v s="$scale" -v m=$MTU 'BEGIN {
        r = b / s; burst = r / 500; if (burst < 4 * m) burst = 4 * m
        printf "rate %dbit burst %d latency 100ms", r * 8, burst }')
    # shellcheck disable=SC2086
    tc -n "$1" qdisc add dev "$2" root tbf $r || return 1
}
quiet_ns() { # no IPv6 in the namespace: no link-local addresses, no noise on the links
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}

ip netns add "$FAB" 2>/dev/null || skip "ip netns add failed"
quiet_ns "$FAB"
ip -n "$FAB" link set lo up
while read -r sw parent up_bps; do
    ip -n "$FAB" link add "b$sw" mtu $MTU type bridge stp_state 0 forward_delay 0 || exit 1
    ip -n "$FAB" link set "b$sw" up
    if [ "$parent" -ge 0 ]; then
        ip -n "$FAB" link add "u$sw" mtu $MTU type veth peer name "d$sw" mtu $MTU || exit 1
        ip -n "$FAB" link set "u$sw" master "b$sw" up
        ip -n "$FAB" link set "d$sw" master "b$parent" up
        shape "$FAB" "u$sw" "$up_bps" || skip "tc cannot shape a veth here"
        shape "$FAB" "d$sw" "$up_bps" || exit 1
    fi
done <"$DIR/switches"

# the launcher's side: one veth end here, the other on the root bridge
ip link add "$HOSTIF" mtu $MTU type veth peer name host mtu $MTU netns "$FAB" || exit 1
sysctl -qw "net.ipv6.conf.$HOSTIF.disable_ipv6=1" >/dev/null
ip addr add "$hostip/24" dev "$HOSTIF"
ip link set "$HOSTIF" up
ip -n "$FAB" link set host master b0 up

{
    echo "127.0.0.1 localhost"
    while read -r i name sw cores bps; do echo "$net.$((i + 1)) $name"; done <"$DIR/nodes"
} >"$DIR/hosts"
while read -r i name sw cores bps; do
    ns=$NSP-n$i
    ip netns add "$ns" || exit 1
    mkdir -p "/etc/netns/$ns"
    cp "$DIR/hosts" "/etc/netns/$ns/hosts"
    quiet_ns "$ns"
    ip -n "$ns" link set lo up
    ip -n "$FAB" link add "n$i" mtu $MTU type veth peer name eth0 mtu $MTU netns "$ns" || exit 1
    ip -n "$FAB" link set "n$i" master "b$sw" up
    ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "$bps" || skip "tc cannot shape a veth here"
    shape "$FAB" "n$i" "$bps" || exit 1
    cat /proc/sys/kernel/random/uuid >"$DIR/boot_id.$i"
done <"$DIR/nodes"

# ---- entering a node: the launcher's remote shell ---------------------------------------
# Called as "rsh [-options] HOST COMMAND...": COMMAND is a shell command line,
# as ssh takes it.  Unknown hosts are refused.
{
    echo '#!/bin/sh'
    echo '# enter an emulated node (bench/cluster.sh): rsh [-options] HOST COMMAND...'
    echo 'while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done'
    echo 'host=$1; shift'
    echo 'case $host in'
    while read -r i name sw cores bps; do
        echo "$name | $net.$((i + 1))) i=$i node=$name ;;"
    done <"$DIR/nodes"
    echo '*) echo "not an emulated node: $host" >&2; exit 255 ;;'
    echo 'esac'
    echo "exec ip netns exec $NSP-n\$i unshare --uts --ipc --mount --propagation private \\"
    echo "    sh -c 'hostname \"\$1\" && mount -t tmpfs -o mode=1777,size=50% shm /dev/shm &&"
    echo "           mount --bind \"\$2\" /proc/sys/kernel/random/boot_id && shift 2 && exec sh -c \"\$*\"' \\"
    echo "    node \"\$node\" $DIR/boot_id.\$i \"\$@\""
} >"$DIR/rsh"
chmod 755 "$DIR/rsh"

# ---- ranks ---------------------------------------------------------------------------
# one host name per rank, in rank order
case $order in
tree)
    awk -v p="$ppn" '{ for (k = 0; k < (p ? p : $4); k++) print $2 }' "$DIR/nodes" >"$DIR/ranks" ;;
shuffled)
    # the nodes of each leaf switch in ring order; one of each leaf in turn
    awk -v p="$ppn" '{ sw[NR] = $3; name[NR] = $2; c[NR] = $4
                       if (!($3 in seen)) { seen[$3] = 1; leaves[++nl] = $3 } }
        END { left = NR
              while (left > 0)
                  for (l = 1; l <= nl; l++)
                      for (n = 1; n <= NR; n++)
                          if (sw[n] == leaves[l] && !done[n]) {
                              done[n] = 1; left--
                              for (k = 0; k < (p ? p : c[n]); k++) print name[n]
                              break
                          } }' "$DIR/nodes" >"$DIR/ranks" ;;
*)
    [ -r "$order" ] || die "--order '$order': expected tree, shuffled or a readable file"
    awk 'NF' "$order" >"$DIR/ranks"
    if bad=$(awk 'NR == FNR { ok[$2] = 1; next } !($1 in ok) { print $1; exit 1 }' "$DIR/nodes" "$DIR/ranks"); then :; else
        die "--order $order: '$bad' is not a node of $topo"
    fi ;;
esac
nranks=$(wc -l <"$DIR/ranks")

# ---- launch --------------------------------------------------------------------------
case $mpi in
mpich)
    # one hostfile line per run of equal hosts, host:count, in rank order
    awk '$1 != h { if (h != "") print h ":" n; h = $1; n = 0 } { n++ } END { print h ":" n }' \
        "$DIR/ranks" >"$DIR/hostfile"
    # UCX over TCP on the node's link only (docs/scale.md, An emulated cluster)
    cmd=("$launcher" -launcher ssh -launcher-exec "$DIR/rsh" -iface "$HOSTIF" -f "$DIR/hostfile"
         -n "$nranks" -genv UCX_TLS tcp,self,sm -genv UCX_NET_DEVICES eth0)
    # Each rank preloads the build's libtrd_cluster_finalize.so, which stands
    # between MPICH and UCX (the file says how; docs/scale.md):
    # - MPICH before 4.2 can deadlock in MPI_Finalize between hosts: the
    #   library holds each rank in a barrier that progresses UCX before
    #   MPICH's PMI barrier;
    # - a rank whose UCX progress finds nothing 64 times in a row yields its
    #   CPU: MPICH's ch4 polls without yielding, and with more ranks than
    #   CPUs a waiting rank kept the one it waits for off the CPU for a
    #   scheduler slice (4 ms) per message.
    preload=$build/libtrd_cluster_finalize.so
    [ -r "$preload" ] || die "$preload not found: the MPICH launch needs it (build it, or give --build DIR)"
    cmd+=(-genv TRD_CLUSTER_YIELD 64)
    if "$launcher" --version 2>/dev/null | grep -Eq 'Version: *4\.[01]\.'; then
        mkdir -m 1777 "$DIR/finalize"
        cmd+=(-genv TRD_FINALIZE_DIR "$DIR/finalize")
    fi
    for e in ${envs[@]+"${envs[@]}"}; do
        if [ "${e%%=*}" = LD_PRELOAD ]; then
            preload="$preload ${e#*=}"
            continue
        fi
        cmd+=(-genv "${e%%=*}" "${e#*=}")
    done
    cmd+=(-genv LD_PRELOAD "$preload")
    ;;
openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmd=("$launcher" --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$DIR/rsh"
         --mca rmaps seq --hostfile "$DIR/ranks" -np "$nranks" --bind-to none
         --mca pml ob1 --mca btl tcp,self,vader --mca osc ^ucx --mca mpi_yield_when_idle 1
         --mca btl_tcp_if_include "$net.0/24" --mca oob_tcp_if_include "$net.0/24")
    for e in ${envs[@]+"${envs[@]}"}; do cmd+=(-x "$e"); done
    ;;
esac

# the launcher sees the nodes' names through its own /etc/hosts
cat /etc/hosts "$DIR/hosts" | grep -v '^127.0.0.1 localhost$' >"$DIR/hosts.launcher"
echo "127.0.0.1 localhost" >>"$DIR/hosts.launcher"
echo "$me: run $RUNID: $nnodes nodes, $nranks ranks, $mpi, links / $scale, $net.0/24" >&2
timeout -k 5 "$timeout_s" unshare --mount --propagation private \
    sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' launch "$DIR/hosts.launcher" \
    "${cmd[@]}" "$@" &
lpid=$!
wait "$lpid"
status=$?
lpid=
[ "$status" = 124 ] && echo "$me: run $RUNID: timed out after $timeout_s s" >&2
if [ -n "$linkbytes" ]; then
    # qdisc_bytes NS DEV: the bytes tbf sent on DEV's egress
    qdisc_bytes() { tc -n "$1" -s qdisc show dev "$2" | awk '/Sent/ { print $2; exit }'; }
    {
        echo "# bytes on each link since run $RUNID came up, per direction (tc -s qdisc)"
        while read -r i name sw cores bps; do
            echo "link $name up $(qdisc_bytes "$NSP-n$i" eth0)"
            echo "link $name down $(qdisc_bytes "$FAB" "n$i")"
        done <"$DIR/nodes"
        while read -r sw parent up_bps; do
            [ "$parent" -ge 0 ] || continue
            echo "switch $sw up $(qdisc_bytes "$FAB" "u$sw")"
            echo "switch $sw down $(qdisc_bytes "$FAB" "d$sw")"
        done <"$DIR/switches"
    } >"$linkbytes" || echo "$me: --link-bytes $linkbytes: not written" >&2
fi
exit "$status"
