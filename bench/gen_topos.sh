#!/bin/sh
# Write the large machines the generator's benchmark plans into DIR:
#   tree1k.topo, tree10k.topo, tree100k.topo  1,000 / 10,000 / 100,000 nodes of
#       2 x 16 cores under a three-level switch tree (root, one spine switch per
#       1,000 nodes, leaves of 50 nodes)
#   wide2.topo       2 nodes of 2 x 32,000 cores under one switch
#   chain1000.topo   1,000 nested switches, each holding one node (2 x 16
#                    cores) and the next switch
#   flat100k.topo    100,000 single-core nodes, two-level tree (1,000 leaves)
#   bench/gen_topos.sh DIR
set -eu
dir=${1:?usage: gen_topos.sh DIR}
mkdir -p "$dir"
tree() { # nodes name
    awk -v n="$1" -v name="$2" 'BEGIN {
        print "machine " name ";"
        print "link ib { latency 1.5us; bandwidth 12GB/s; injection 24GB/s; }"
        print "link socket { latency 0.3us; bandwidth 20GB/s; }"
        print "link numa { latency 0.6us; bandwidth 10GB/s; }"
        print "nodetype cn { packages 2; cores 16 16; package socket; node numa; }"
        leaf = 50; perspine = 1000; nl = 0
        for (s = 0; s * perspine < n; s++) {
            list = ""
            for (l = 0; l * leaf < perspine && s * perspine + l * leaf < n; l++) {
                lo = s * perspine + l * leaf; hi = lo + leaf - 1
                if (hi >= n) hi = n - 1
                printf "switch leaf%d { link ib; nodes cn[%06d-%06d] : cn; }\n", nl, lo, hi
                list = list " leaf" nl; nl++
            }
            printf "switch spine%d { link ib; switches%s; }\n", s, list
            spines = spines " spine" s
        }
        print "switch root { link ib; switches" spines "; }"
    }' >"$dir/$2.topo"
}
tree 1000 tree1k
tree 10000 tree10k
tree 100000 tree100k
cat >"$dir/wide2.topo" <<'T'
machine wide2;
link ib { latency 1.5us; bandwidth 12GB/s; injection 24GB/s; }
link socket { latency 0.3us; bandwidth 20GB/s; }
link numa { latency 0.6us; bandwidth 10GB/s; }
nodetype fat { packages 2; cores 32000 32000; package socket; node numa; }
switch root { link ib; nodes fat[0-1] : fat; }
T
awk 'BEGIN {
    print "machine chain1000;"
    print "link ib { latency 1.5us; bandwidth 12GB/s; injection 24GB/s; }"
    print "link socket { latency 0.3us; bandwidth 20GB/s; }"
    print "link numa { latency 0.6us; bandwidth 10GB/s; }"
    print "nodetype cn { packages 2; cores 16 16; package socket; node numa; }"
    for (i = 0; i < 1000; i++) {
        if (i < 999)
            printf "switch s%d { link ib; nodes c%d : cn; switches s%d; }\n", i, i, i + 1
        else
            printf "switch s%d { link ib; nodes c%d : cn; }\n", i, i
    }
}' >"$dir/chain1000.topo"
awk 'BEGIN {
    print "machine flat100k;"
    print "link eth { latency 2us; bandwidth 10GB/s; }"
    for (l = 0; l < 1000; l++) {
        printf "switch leaf%d { link eth; nodes n[%06d-%06d]; }\n", l, l * 100, l * 100 + 99
        list = list " leaf" l
    }
    print "switch root { link eth; switches" list "; }"
}' >"$dir/flat100k.topo"
