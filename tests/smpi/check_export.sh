#!/bin/sh
# treeduce-gen --simgrid on a two-node machine, loaded by SimGrid's SMPI:
#   - smpirun accepts the platform and the hostfile;
#   - every rank's MPI_Get_processor_name is the node the hostfile puts it on
#     (ranks in ring order, a node's cores consecutive);
#   - the simulated one-way time between the two nodes, with SMPI's network
#     factors set to 1, is the cost model's for the topology's path
#     (pingpong_expect) within 1% + 0.5 us.
# Exit 77 (ctest: skipped) when SimGrid's smpicc/smpirun are not installed.
#   check_export.sh GEN EXPECT SRCDIR WORKDIR
set -eu
GEN=$1 EXPECT=$2 SRC=$3 WORK=$4
if ! command -v smpicc >/dev/null 2>&1 || ! command -v smpirun >/dev/null 2>&1; then
    echo "SKIP: SimGrid's smpicc/smpirun not found (Debian: libsimgrid-dev)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
topo=$SRC/tests/data/simgrid_2node.topo
"$GEN" "$topo" --simgrid sg2.xml
test -s sg2.xml && test -s sg2.hosts
printf 'cn01:8\ncn02:8\n' | cmp - sg2.hosts
smpicc -O2 -o pingpong "$SRC/tests/smpi/pingpong.c"
timeout 120 smpirun -platform sg2.xml -hostfile sg2.hosts -np 16 \
    --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=network/crosstraffic:0 \
    --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no ./pingpong >out.txt 2>err.txt ||
    { cat err.txt; exit 1; }
cat out.txt
# hosts: ranks 0-7 on cn01, 8-15 on cn02
awk '/^host /{ want = ($2 < 8) ? "cn01" : "cn02"; n++
              if ($3 != want) { print "rank " $2 " runs on " $3 ", expected " want; bad = 1 } }
     END { if (n != 16) { print n " host lines, expected 16"; bad = 1 } exit bad }' out.txt
"$EXPECT" "$topo" cn01 cn02 8 65536 4194304 >expect.txt
cat expect.txt
grep '^pingpong' out.txt | paste - expect.txt | awk '
    { if ($2 != $5) { print "size mismatch"; bad = 1; next }
      d = $3 - $6; if (d < 0) d = -d
      if (d > 0.01 * $6 + 0.5e-6) { printf "%s B: simulated %.4g s, model %.4g s\n", $2, $3, $6; bad = 1 }
      n++ }
    END { if (n != 3) { print "expected 3 sizes, got " n; bad = 1 } exit bad }'
echo "platform export checked: host names, one-way times within 1% of the model"
