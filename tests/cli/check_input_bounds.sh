#!/bin/sh
# Bounds on what treeduce-gen reads: usage: check_input_bounds.sh GEN CASE
#   size_*      inputs past the size cap refused before they are read whole
#   fifo_xml    a FIFO named .xml read once, whichever XML it holds
#   nul_*       a NUL byte refused with its line and column, in every reader
#   yaml_depth  YAML nested past the depth cap refused at the level past it
#   scale_*     100,000 links, node types, switches or hosts read (or errors
#               printed) in a few seconds (the test's TIMEOUT), generated here
#   lazy_types  1,000 hwloc node types, one used: only that one is built
# Prints "ok CASE" on success; anything else is a failure.
gen=$1
case=$2
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cap=268435456 # TRD_MAX_INPUT_BYTES

# expect FILE-ARGS... : run the generator, want exit 1, the exact message
# in $want (stderr's first line) and no output directory written
expect() {
    out=$("$gen" -o "$d/out" "$@" 2>&1 </dev/null)
    rc=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    if [ $rc -ne 1 ] || [ "$first" != "$want" ]; then
        echo "$*: rc $rc, expected 1 and '$want', got:"
        printf '%s\n' "$out" | head -n 5
        exit 1
    fi
    if [ -e "$d/out" ]; then
        echo "$*: wrote $d/out"
        exit 1
    fi
}

# the text of a small good machine in each format
good_dsl='link eth { latency 2us; bandwidth 10GB/s; }
nodetype pc { packages 1; cores 1; }
switch s0 { link eth; nodes n[0-3] : pc; }'

case $case in
size_dev_zero)
    for f in dsl xml slurm yaml ibnetdiscover hwloc; do
        want="/dev/zero: error: file is larger than $cap bytes"
        expect -f "$f" /dev/zero
    done
    want="/dev/zero: error: file is larger than $cap bytes"
    expect /dev/zero
    ;;
size_fifo)
    # a FIFO fed more than the cap: refused, and the writer sees the pipe
    # closed rather than the whole stream read
    mkfifo "$d/in.conf"
    (head -c $((cap + 4096)) /dev/zero | tr '\0' ' ' >"$d/in.conf") 2>/dev/null &
    want="$d/in.conf: error: file is larger than $cap bytes"
    expect "$d/in.conf"
    wait
    # a FIFO of a good machine is read once, whole
    mkfifo "$d/good.topo"
    printf '%s\n' "$good_dsl" >"$d/good.topo" &
    "$gen" "$d/good.topo" --explain >"$d/explain" 2>&1 || { cat "$d/explain"; exit 1; }
    wait
    grep -q '4 nodes, 1 switch' "$d/explain" || { cat "$d/explain"; exit 1; }
    ;;
fifo_xml)
    # a FIFO named .xml is read once: its root element (a treeduce machine or
    # an hwloc dump) told from the text read, not by reading the FIFO twice
    mkfifo "$d/m.xml" "$d/node.xml"
    cat >"$d/m.src" <<'XML'
<?xml version="1.0"?>
<machine name="m" xmlns="urn:treeduce:topology:1">
  <link name="eth" latency="1us" bandwidth="1GB/s"/>
  <nodetype name="pc" cores="4"/>
  <switch name="r" link="eth"><nodes names="n[0-3]" type="pc"/></switch>
</machine>
XML
    cat >"$d/node.src" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <info name="HostName" value="fifohost"/>
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3"/>
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="7"/>
      </object>
    </object>
  </object>
</topology>
XML
    for f in m node; do
        timeout 20 cat "$d/$f.src" >"$d/$f.xml" &
        timeout 20 "$gen" "$d/$f.xml" --explain >"$d/$f.out" 2>&1
        rc=$?
        wait
        [ $rc -eq 0 ] || { echo "$f.xml: rc $rc"; head -3 "$d/$f.out"; exit 1; }
    done
    grep -q 'machine m (from .*m.xml): 4 nodes, 1 switch' "$d/m.out" || { head -3 "$d/m.out"; exit 1; }
    grep -q 'machine fifohost (from .*node.xml): 1 node, 1 switch' "$d/node.out" || { head -3 "$d/node.out"; exit 1; }
    ;;
size_sparse)
    # a regular file past the cap: refused from its size, never read
    printf '%s\n' "$good_dsl" >"$d/big.topo"
    truncate -s $((cap + 1)) "$d/big.topo" || exit 1
    want="$d/big.topo: error: file is larger than $cap bytes"
    expect "$d/big.topo"
    # an hwloc node type's XML file alike
    truncate -s $((cap + 1)) "$d/node.xml"
    printf 'link eth { latency 2us; bandwidth 10GB/s; }\nnodetype big { hwloc "node.xml"; }\nswitch s0 { link eth; nodes n0 : big; }\n' >"$d/hw.topo"
    want="$d/hw.topo:2:22: error: cannot read hwloc XML '$d/node.xml': file is larger than $cap bytes"
    expect "$d/hw.topo"
    ;;
nul_*)
    f=${case#nul_}
    case $f in
    dsl) printf 'link eth { latency 2us;\0 bandwidth 10GB/s; }\n' >"$d/in" && at=1:24 ;;
    slurm) printf 'SwitchName=s0 Nodes=n[0-3]\0,m[0-3]\n' >"$d/in" && at=1:27 ;;
    yaml) printf -- '- topology: t\n  tree:\n    switches:\n      - switch: s0\n        children: n[0-3]\0\n' >"$d/in" && at=5:25 ;;
    xml) printf '<?xml version="1.0"?>\n<machine>\0</machine>\n' >"$d/in" && at=2:10 ;;
    ibnetdiscover) printf '# Topology file: x\n\nvendid=0x2c9\0\n' >"$d/in" && at=3:13 ;;
    hwloc) printf '<?xml version="1.0"?>\n<topology version="2.0">\0</topology>\n' >"$d/in" && at=2:25 ;;
    esac
    want="$d/in:$at: error: unexpected character '\\x00'"
    expect -f "$f" "$d/in"
    ;;
yaml_depth)
    # 257 levels are refused at the 257th, at once; 256 are read
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' >"$d/deep.yaml"
    want="$d/deep.yaml:1:257: error: nested more than 256 levels deep"
    expect "$d/deep.yaml"
    awk 'BEGIN { printf "- topology: t\n  tree:\n    switches:\n      - switch: s0\n        children: "; for (i = 0; i < 251; i++) printf "["; for (i = 0; i < 251; i++) printf "]"; print "" }' >"$d/ok.yaml"
    out=$("$gen" "$d/ok.yaml" --explain 2>&1)
    case $out in *"nested more than"*) echo "256 levels refused: $out"; exit 1 ;; esac
    ;;
scale_links)
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "link l%d { latency 2us; bandwidth 10GB/s; }\n", i
                 print "nodetype pc { packages 1; cores 1; }"
                 print "switch s0 { link l99999; nodes n[0-3] : pc; }" }' >"$d/in.topo"
    "$gen" "$d/in.topo" --explain >"$d/explain" 2>&1 || { tail -5 "$d/explain"; exit 1; }
    grep -q 'link l99999' "$d/explain" || { head "$d/explain"; exit 1; }
    # a name defined twice is still found, at its second definition
    echo 'link l5 { latency 2us; bandwidth 10GB/s; }' >>"$d/in.topo"
    want="$d/in.topo:100003:6: error: link 'l5' is already defined"
    expect "$d/in.topo"
    ;;
scale_nodetypes)
    awk 'BEGIN { print "link eth { latency 2us; bandwidth 10GB/s; }"
                 for (i = 0; i < 100000; i++) printf "nodetype t%d { packages 1; cores %d; }\n", i, 1 + i % 4
                 print "switch s0 { link eth; nodes n0 : t99999; nodes n1 : t7; }" }' >"$d/in.topo"
    "$gen" "$d/in.topo" --explain >"$d/explain" 2>&1 || { tail -5 "$d/explain"; exit 1; }
    grep -q 't99999' "$d/explain" || { head "$d/explain"; exit 1; }
    ;;
scale_switches)
    # 100,000 leaf switches of one node under one root, in Slurm's format
    # (the root names its children before they are defined)
    awk 'BEGIN { print "SwitchName=root Switches=s[0-99999]"
                 for (i = 0; i < 100000; i++) printf "SwitchName=s%d Nodes=n%d\n", i, i }' >"$d/in.conf"
    "$gen" "$d/in.conf" --dot "$d/dot" >"$d/log" 2>&1 || { tail -5 "$d/log"; exit 1; }
    grep -q 's99999' "$d/dot" || { tail -5 "$d/dot"; exit 1; }
    ;;
scale_hosts)
    # ibnetdiscover output of 1,000 leaves of 100 hosts each: hosts named by
    # the switches' port lines only (ibnetdiscover -S)
    awk 'BEGIN { print "# Topology file: generated"
                 printf "\nswitchguid=0x1000\nSwitch\t1001 \"S-1000\"\t\t# \"spine\"\n"
                 for (l = 0; l < 1000; l++) printf "[%d]\t\"S-%x\"[101]\t\t# \"leaf%d\" lid 2 4xHDR\n", l + 1, 0x2000 + l, l
                 for (l = 0; l < 1000; l++) {
                   printf "\nswitchguid=0x%x\nSwitch\t101 \"S-%x\"\t\t# \"leaf%d\"\n", 0x2000 + l, 0x2000 + l, l
                   for (h = 0; h < 100; h++)
                     printf "[%d]\t\"H-%x\"[1](%x)\t\t# \"node%d mlx5_0\" lid 3 4xHDR\n", h + 1, 0x100000 + l * 100 + h, 0x100000 + l * 100 + h, l * 100 + h
                   printf "[101]\t\"S-1000\"[%d]\t\t# \"spine\" lid 1 4xHDR\n", l + 1
                 } }' >"$d/fabric"
    "$gen" "$d/fabric" --dot "$d/dot" >"$d/log" 2>&1 || { tail -5 "$d/log"; exit 1; }
    grep -q 'node99999' "$d/dot" || { tail -5 "$d/dot"; exit 1; }
    ;;
scale_errors)
    # 100,000 located errors, each quoted with its line
    awk 'BEGIN { print "nodetype pc { packages 1; cores 1; }"
                 printf "switch root { switches"; for (i = 0; i < 100000; i++) printf " s%d", i; print "; }"
                 for (i = 0; i < 100000; i++) printf "switch s%d { link nope; nodes n%d : pc; }\n", i, i }' >"$d/in.topo"
    "$gen" "$d/in.topo" --explain >"$d/log" 2>&1
    [ $? -eq 1 ] || { tail -3 "$d/log"; exit 1; }
    [ "$(grep -c "error: unknown link 'nope'" "$d/log")" -eq 100000 ] || { tail -3 "$d/log"; exit 1; }
    [ "$(tail -n 1 "$d/log")" = "treeduce-gen: 100000 errors; nothing written" ] || { tail -3 "$d/log"; exit 1; }
    ;;
lazy_types)
    # 1,000 node types that hwloc would build, one of them used; an unused
    # one with a missing XML file is not opened
    awk 'BEGIN { print "link eth { latency 2us; bandwidth 10GB/s; }"
                 for (i = 0; i < 1000; i++) printf "nodetype t%d { synthetic \"package:%d core:%d\"; }\n", i, 1 + i % 4, 1 + i % 16
                 print "nodetype gone { hwloc \"no-such-file.xml\"; }"
                 print "switch s0 { link eth; nodes n[0-1] : t5; }" }' >"$d/in.topo"
    "$gen" "$d/in.topo" --explain >"$d/explain" 2>&1 || { tail -5 "$d/explain"; exit 1; }
    grep -q 't5 .*synthetic "package:2 core:6"' "$d/explain" || { grep -A3 'node types' "$d/explain"; exit 1; }
    # a used type's bad description is still refused at the description
    printf 'link eth { latency 2us; bandwidth 10GB/s; }\nnodetype bad { synthetic "package:2 banana:3"; }\nswitch s0 { link eth; nodes n0 : bad; }\n' >"$d/bad.topo"
    want="$d/bad.topo:2:26: error: hwloc cannot parse synthetic description 'package:2 banana:3'"
    expect "$d/bad.topo"
    ;;
*)
    echo "unknown case $case"
    exit 1
    ;;
esac
echo "ok $case"
