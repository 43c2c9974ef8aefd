#!/usr/bin/env python3
"""Names that could become code, through every reader of treeduce-gen.

Each machine is written twice in the same shape: once with hostile names
(comment closers, quotes, backslashes, trigraphs, '#', '%', UTF-8, blanks,
a constructor that calls system()) and once with plain names.  Both are
generated with every output.  The generated C must compile with the build's
warnings as errors (also as ISO C11, where trigraphs are on), define exactly
the symbols of the plain twin, and hold the node names byte for byte (a
program prints them from the table; the functions that need the runtime
and MPI are dropped by the linker); the DOT output must pass
`dot`, the SimGrid platform xmllint and its host ids must be the names, the
MPICH file must be JSON, the Open MPI rules and the hostfile one rule or host
per line.  Names no output can carry (control characters, bytes that are
not UTF-8) and names the DSL and the XML schema do not take are refused with
a located error and nothing written.

usage: check_hostile_names.py GEN WORK CC CFLAGS INCLUDES
  (CFLAGS, INCLUDES: lists separated by '|')
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

GEN, WORK, CC = sys.argv[1], sys.argv[2], sys.argv[3]
CFLAGS = [f for f in sys.argv[4].split("|") if f]
INCLUDES = ["-I" + d for d in sys.argv[5].split("|") if d]
failures = []


def fail(case, what):
    failures.append(f"{case}: {what}")
    print(f"FAIL {case}: {what}")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


# ---- machines: a template, its hostile names and plain names ----------------

CTOR = "x*/ }; __attribute__((constructor)) static void x(void) { system(0); } /*"

SLURM = "SwitchName={L0} Nodes=x0,x1\nSwitchName={L1} Nodes=y0,y1\nSwitchName={R} Switches={L0},{L1}\n"
SLURM_ONE = "SwitchName={R} Nodes=x0,x1\n"  # the reported case

YAML = """- topology: {T}
  cluster_default: true
  block:
    block_sizes: [2]
    blocks:
      - block: {L0}
        nodes: x[0-1]
      - block: {L1}
        nodes: y[0-1]
"""

IBNET = """# hostile descriptions
Switch\t40 "S-0001"\t\t# "MF0;{R}:MQM8700/U1" enhanced port 0 lid 1 lmc 0
[1]\t"S-0002"[33]\t\t# "MF0;{L0}:MQM8700/U1" lid 100 4xHDR
[2]\t"S-0003"[33]\t\t# "MF0;{L1}:MQM8700/U1" lid 101 4xHDR

Switch\t40 "S-0002"\t\t# "MF0;{L0}:MQM8700/U1" enhanced port 0 lid 100 lmc 0
[1]\t"H-0001"[1](0001) \t\t# "{H0} mlx5_0" lid 1001 4xHDR
[2]\t"H-0002"[1](0002) \t\t# "{H1} HCA-1" lid 1002 4xHDR
[33]\t"S-0001"[1]\t\t# "MF0;{R}:MQM8700/U1" lid 1 4xHDR

Switch\t40 "S-0003"\t\t# "MF0;{L1}:MQM8700/U1" enhanced port 0 lid 101 lmc 0
[1]\t"H-0003"[1](0003) \t\t# "{H2} mlx5_0" lid 1011 4xHDR
[2]\t"H-0004"[1](0004) \t\t# "{H3} mlx5_0" lid 1012 4xHDR
[33]\t"S-0001"[2]\t\t# "MF0;{R}:MQM8700/U1" lid 1 4xHDR
"""


# an hwloc XML dump of one node: the node and the machine are named after its HostName
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "topologies",
                       "buildhost.xml"), encoding="utf-8") as f:
    HWLOC = f.read().replace("{", "{{").replace("}", "}}").replace(
        '<info name="HostName" value="vm"/>', '<info name="HostName" value="{H0}"/>')
assert "{H0}" in HWLOC


def xq(s):
    """An XML attribute value."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def yq(s):
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(s, ensure_ascii=False)


# name: (format, template, hostile names, plain names, node names, switch names)
ACCEPTED = {
    "slurm": ("slurm", SLURM,
              {"R": "a*/int/**/evil=1;/*\"q\"\\??/%n%s\u00e9", "L0": "l0", "L1": "l1"},
              {"R": "root", "L0": "l0", "L1": "l1"},
              ["x0", "x1", "y0", "y1"]),
    "slurm_one": ("slurm", SLURM_ONE,
                  {"R": "a*/int/**/evil=1;/*"}, {"R": "s"}, ["x0", "x1"]),
    # compiles when written raw into the comment: caught by its symbols
    "slurm_symbols": ("slurm", "SwitchName={R} Nodes=x0\n",
                      {"R": "*/};int/**/evil=1;const/**/struct{int/**/a;}z2={/*"}, {"R": "s"},
                      ["x0"]),
    "yaml": ("yaml", YAML,
             {"T": yq("m */ \"\\ ??/ #%s \u00e9"), "L0": yq(CTOR.replace(":", "")),
              "L1": yq("b\\\\??/ #1 %n \u6f22 \"q\"")},
             {"T": "m", "L0": "b0", "L1": "b1"},
             ["x0", "x1", "y0", "y1"]),
    "ibnet": ("ibnet", IBNET,
              {"R": CTOR.replace(":", ""), "L0": "leaf ??/ \\ #%s \u00e9 \u6f22",
               "L1": "*/#define X 1 /*", "H0": "h*/int/**/evil=1;/*",
               "H1": "h\\??/%n#", "H2": "h\u00e9\u6f22", "H3": "h/x.y-z"},
              {"R": "spine", "L0": "leaf1", "L1": "leaf2", "H0": "h0", "H1": "h1",
               "H2": "h2", "H3": "h3"},
              None),
    "hwloc": ("hwloc", HWLOC, {"H0": xq("h*/int/**/evil=1;/*\"\\??/#%s\u00e9")},
              {"H0": "h0"}, None),
}

# name: (format, file name, text): refused with FILE:LINE:COL: error:
REFUSED = {
    "dsl": ("dsl", "m.topo",
            'link l { latency 1us; bandwidth 1GB/s; }\n'
            'switch a*/int/**/evil=1;/* { link l; nodes x[0-1]; }\n'),
    "dsl_quote": ("dsl", "m.topo",
                  'link l { latency 1us; bandwidth 1GB/s; }\n'
                  'switch "s" { link l; nodes x[0-1]; }\n'),
    "xml": ("xml", "m.xml",
            '<?xml version="1.0"?>\n<machine name="m" xmlns="urn:treeduce:topology:1">\n'
            '  <link name="l" latency="1us" bandwidth="1GB/s"/>\n'
            '  <nodetype name="pc" cores="1"/>\n'
            '  <switch name="a*/&quot;\\" link="l"><nodes names="x[0-1]" type="pc"/></switch>\n'
            '</machine>\n'),
    "yaml_newline": ("yaml", "m.yaml",
                     YAML.format(T="m", L0=yq("a\n#define X"), L1="b")),
    "yaml_control": ("yaml", "m.yaml", YAML.format(T=yq("m\x1b[2J"), L0="a", L1="b")),
    "slurm_not_utf8": ("slurm", "m.conf", SLURM.format(R="r\xff", L0="a", L1="b")),
    "hwloc_control": ("hwloc", "m.xml", HWLOC.format(H0="h&#133;x")),
    "ibnet_control": ("ibnet", "m.ibnet",
                      IBNET.format(R="r\x07", L0="a", L1="b", H0="h0", H1="h1", H2="h2",
                                   H3="h3")),
}


def nodes_of(case, names):
    """Node names of an ibnet machine (the first word of each host
    description) or of an hwloc dump (its HostName)."""
    if case == "hwloc":
        return [names["H0"].replace("&quot;", '"').replace("&lt;", "<").replace("&amp;", "&")]
    return [names[h].split(" ")[0] for h in ("H0", "H1", "H2", "H3")]


def generate(case, fmt, text, d):
    """Write text as d/m.EXT and generate every output into d; the result."""
    os.makedirs(d)
    path = os.path.join(d, "m." + {"slurm": "conf", "yaml": "yaml", "ibnet": "ibnet",
                                   "hwloc": "xml"}[fmt])
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return run([GEN, "-f", fmt, path, "-o", os.path.join(d, "o"), "--name", "m",
                "--dot", os.path.join(d, "m.dot"), "--simgrid", os.path.join(d, "sg.xml"),
                "--export-mpich", os.path.join(d, "m.json"),
                "--export-ompi", os.path.join(d, "m.rules")])


def compile_symbols(case, d):
    """Compile the generated C as the build does (and as ISO C11) into a
    shared library; its defined symbols, or None."""
    o = os.path.join(d, "o")
    objs = []
    for src in ("trd_m.c", "trd_m_mpi.c"):
        for std in ("-std=gnu11", "-std=c11"):
            obj = os.path.join(o, src + std[5:] + ".o")
            r = run([CC, std, "-fPIC", *CFLAGS, *INCLUDES, "-I" + o, "-c", os.path.join(o, src),
                     "-o", obj])
            if r.returncode != 0:
                fail(case, f"{src} ({std}) does not compile:\n{r.stderr.decode(errors='replace')}")
                return None
            if std == "-std=gnu11":
                objs.append(obj)
    lib = os.path.join(o, "libtrd_m.so")
    r = run([CC, "-shared", "-o", lib, *objs])
    if r.returncode != 0:
        fail(case, f"shared library: {r.stderr.decode(errors='replace')}")
        return None
    syms = set()
    for f in objs + [lib]:
        r = run(["nm", "--defined-only", f])
        syms |= {(os.path.basename(f), l.split()[-2], l.split()[-1])
                 for l in r.stdout.decode().splitlines() if len(l.split()) >= 2}
    return syms


def names_in_library(case, d):
    """The node names the generated tables hold, printed by a program that
    links the table alone (sections of functions it does not call dropped)."""
    o = os.path.join(d, "o")
    main = os.path.join(o, "names.c")
    with open(main, "w") as f:
        f.write('#include <stdio.h>\n#include "trd_m.h"\n#include "treeduce_rt.h"\n'
                "int main(void)\n{\n    const trd_machine *m = trd_m_machine();\n"
                "    for (int i = 0; i < m->nnodes; i++)\n"
                '        printf("%s%c", m->node_names[i], 0);\n    return 0;\n}\n')
    exe = os.path.join(o, "names")
    r = run([CC, *CFLAGS, *INCLUDES, "-I" + o, "-ffunction-sections", "-fdata-sections", main,
             os.path.join(o, "trd_m.c"), "-o", exe, "-Wl,--gc-sections"])
    if r.returncode != 0:
        fail(case, f"names program: {r.stderr.decode(errors='replace')}")
        return None
    r = run([exe])
    return [n.decode("utf-8") for n in r.stdout.split(b"\0")[:-1]]


def check_other_outputs(case, d, nodes, switches):
    r = run(["dot", "-Tsvg", "-o", os.path.join(d, "m.svg"), os.path.join(d, "m.dot")])
    if r.returncode != 0 or r.stderr:
        fail(case, f"dot: {r.stderr.decode(errors='replace')}")
    else:
        svg = ET.parse(os.path.join(d, "m.svg")).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        # an id keeps the escaping backslash (DOT unescapes only \"), a
        # label shows the name as it is
        titles = {g.find(ns + "title").text for g in svg.iter(ns + "g")
                  if g.get("class") == "node"}
        want = {p + n.replace("\\", "\\\\") for p, ns_ in (("node:", nodes), ("sw:", switches))
                for n in ns_}
        if titles != want:
            fail(case, f"dot: node ids {sorted(titles)}, expected {sorted(want)}")
        texts = {t.text for t in svg.iter(ns + "text")}
        if not set(nodes) | set(switches) <= texts:
            fail(case, f"dot: labels {sorted(texts)}, expected the names")
    r = run(["xmllint", "--nonet", "--noout", os.path.join(d, "sg.xml")])
    if r.returncode != 0:
        fail(case, f"xmllint: {r.stderr.decode(errors='replace')}")
    else:
        zone = ET.parse(os.path.join(d, "sg.xml")).getroot().find("zone")
        hosts = [h.get("id") for h in zone.iter("host")]
        routers = {h.get("id") for h in zone.iter("router")}
        if hosts != nodes or routers != set(switches):
            fail(case, f"SimGrid hosts {hosts}, routers {sorted(routers)}")
    r = run([sys.executable, "-m", "json.tool", os.path.join(d, "m.json")])
    if r.returncode != 0:
        fail(case, f"json.tool: {r.stderr.decode(errors='replace')}")
    with open(os.path.join(d, "m.rules"), encoding="utf-8") as f:
        for line in f:
            if not re.fullmatch(r"(#.*|[0-9]+( [0-9]+)*( # .*)?)\n", line):
                fail(case, f"Open MPI rules line {line!r}")
    with open(os.path.join(d, "sg.hosts"), encoding="utf-8") as f:
        hostlines = f.read().splitlines()
    if [h.rsplit(":", 1)[0] for h in hostlines] != nodes:
        fail(case, f"hostfile {hostlines}")


shutil.rmtree(WORK, ignore_errors=True)
for case, (fmt, tmpl, hostile, plain, nodes) in ACCEPTED.items():
    syms = {}
    for kind, names in (("hostile", hostile), ("plain", plain)):
        d = os.path.join(WORK, case, kind)
        r = generate(case, fmt, tmpl.format(**names), d)
        if r.returncode != 0:
            fail(f"{case} ({kind})", f"treeduce-gen failed:\n{r.stderr.decode(errors='replace')}")
            continue
        syms[kind] = compile_symbols(f"{case} ({kind})", d)
        if kind != "hostile":
            continue
        want = nodes if nodes else nodes_of(case, names)
        got = names_in_library(case, d)
        if got is not None and got != want:
            fail(case, f"the generated table holds {got}, expected {want}")
        dec = {k: json.loads(v) if fmt == "yaml" and v.startswith('"') else v
               for k, v in names.items()}
        switches = [v for k, v in dec.items() if k in ("R", "L0", "L1")] or ["node-switch"]
        if case == "yaml":  # the block plugin's root is named after its first and last block
            switches = [dec["L0"], dec["L1"], dec["L0"] + ".." + dec["L1"]]
        check_other_outputs(case, d, want, switches)
    if syms.get("hostile") is not None and syms.get("hostile") != syms.get("plain"):
        extra = sorted(syms["hostile"] - (syms.get("plain") or set()))
        fail(case, f"symbols beyond the plain machine's: {extra}")
    print(f"{case}: checked")

for case, (fmt, name, text) in REFUSED.items():
    d = os.path.join(WORK, case)
    os.makedirs(d)
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(text.encode("latin-1") if "\xff" in text else text.encode("utf-8"))
    r = run([GEN, "-f", fmt, path, "-o", os.path.join(d, "o"), "--dot", os.path.join(d, "m.dot")])
    err = r.stderr.decode(errors="replace")
    where = "" if fmt == "hwloc" else ":[0-9]+:[0-9]+"  # hwloc names no line
    if r.returncode == 0 or not re.search("^" + re.escape(path) + where + ": error: ", err, re.M):
        fail(case, f"not refused with a located error (rc {r.returncode}):\n{err}")
    if sorted(os.listdir(d)) != [name]:
        fail(case, f"wrote {sorted(os.listdir(d))}")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", err):
        fail(case, f"the message holds a control character: {err!r}")
    print(f"{case}: refused: {err.splitlines()[0] if err else ''}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("hostile names: all outputs safe")
