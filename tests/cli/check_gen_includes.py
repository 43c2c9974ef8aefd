#!/usr/bin/env python3
"""The rooms of gen/ (gen/README.md): no include from a lower room to a
higher one, no cycle among the generator's files.

The rooms in pipeline order are model, read, plan, verify and out; a file
may include its own room and the rooms before it.  gen/main.c and
measure/ stand above every room.  A file includes another by its bare
name (the build puts every room on the include path), so a name is looked
up among gen/'s files, which must be unique; a name that is not gen/'s
(runtime/, the system, the generated parser) is not followed.

A cycle is looked for among modules: a module is a stem of one room,
x.c with x.h, so that x.c including y.h and y.c including x.h is one.

No basename of gen/ may be one of runtime/'s either: two exec.c of
different meanings in one build are one too many.

Given the generator's library as built (and nm), the calls are held to the
rooms too, by the object files: a symbol that an object of one room uses
and an object of a higher room defines is a call upward, which a
declaration in a lower room's header hides from the includes; and no
objects use each other in a cycle, within a room or across rooms.

usage: check_gen_includes.py SOURCE_DIR [NM GEN_LIBRARY]
Prints "gen includes: N files in M rooms, downward only, no cycle" (and
"; calls: ...") or, for each fault, "path:line: ..." and exits 1.
"""
import os
import re
import subprocess
import sys

ROOMS = ["model", "read", "plan", "verify", "out"]
TOP = len(ROOMS)  # gen/main.c and measure/
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

src = sys.argv[1]
faults = []


def sources(folder):
    """The .c and .h files under folder, relative to src."""
    out = []
    for root, dirs, files in os.walk(os.path.join(src, folder)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return out


def room_of(path):
    """Rank of the room of a gen/ or measure/ file; None: in no room."""
    parts = path.split(os.sep)
    if parts[0] == "measure" or len(parts) == 2:
        return TOP
    return ROOMS.index(parts[1]) if parts[1] in ROOMS else None


def room_name(rank):
    return "gen/" + ROOMS[rank] + "/" if rank < TOP else "gen/main.c and measure/"


gen_files = sources("gen")
by_name = {}
for f in gen_files:
    by_name.setdefault(os.path.basename(f), []).append(f)
    if room_of(f) is None:
        faults.append(f"{f}:1: in no room of gen/ ({', '.join(ROOMS)})")
for name, paths in sorted(by_name.items()):
    if len(paths) > 1:
        faults.append(f"{paths[1]}:1: {name} is also {paths[0]}; gen/ includes by bare name")
runtime_names = {os.path.basename(f): f for f in sources("runtime")}
for name, paths in sorted(by_name.items()):
    if name in runtime_names:
        faults.append(f"{paths[0]}:1: {name} is also {runtime_names[name]}; name it for what it does")

# edges between modules: (from module, to module) -> where
edges = {}
checked = 0
for f in gen_files + sources("measure"):
    rank = room_of(f)
    if rank is None:
        continue
    checked += 1
    with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if not m or os.path.basename(m.group(1)) not in by_name:
                continue
            target = by_name[os.path.basename(m.group(1))][0]
            trank = room_of(target)
            if trank is not None and trank > rank:
                faults.append(
                    f"{f}:{lineno}: includes {target}, of a higher room: {room_name(rank)} may "
                    f"include {', '.join(ROOMS[: rank + 1])} only")
            if not f.startswith("measure"):
                a, b = os.path.splitext(f)[0], os.path.splitext(target)[0]
                if a != b:
                    edges.setdefault((a, b), f"{f}:{lineno}")

# cycles: a depth-first search that reports each cycle it closes once
graph = {}
for a, b in sorted(edges):
    graph.setdefault(a, []).append(b)
state, stack, seen_cycles = {}, [], set()


def visit(v):
    state[v] = 1
    stack.append(v)
    for w in graph.get(v, []):
        if state.get(w) == 1:
            cyc = stack[stack.index(w):] + [w]
            key = frozenset(cyc)
            if key not in seen_cycles:
                seen_cycles.add(key)
                hops = "; ".join(f"{edges[(cyc[i], cyc[i + 1])]} includes {cyc[i + 1]}"
                                 for i in range(len(cyc) - 1))
                faults.append(f"{edges[(cyc[0], cyc[1])]}: include cycle "
                              f"{' -> '.join(cyc)} ({hops})")
        elif w not in state:
            visit(w)
    stack.pop()
    state[v] = 2


sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in state:
        visit(v)



def line_of(path, symbol):
    """The first line of path that names symbol; 1 when none does."""
    word = re.compile(r"\b" + re.escape(symbol) + r"\b")
    with open(os.path.join(src, path), encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if word.search(line):
                return lineno
    return 1


def check_calls(nm, library):
    """Faults for calls upward between the objects of library; the number
    of objects of gen/ looked at.  An object is named by its source
    (topo.c.o is gen/model/topo.c); one of no gen/ source (the parser,
    embedded texts) is in no room and not followed."""
    out = subprocess.run([nm, "-A", "-P", library], check=True, capture_output=True,
                         text=True).stdout
    member = re.compile(r"\[([^\]]+)\]:$")
    defined, used, objects = {}, [], set()
    for line in out.splitlines():
        fields = line.split()
        m = member.search(fields[0]) if fields else None
        if not m or len(fields) < 3:
            continue
        name = m.group(1)[:-2] if m.group(1).endswith(".o") else m.group(1)
        if name not in by_name or room_of(by_name[name][0]) is None:
            continue
        f = by_name[name][0]
        objects.add(f)
        symbol, kind = fields[1], fields[2]
        if kind == "U":
            used.append((f, symbol))
        elif kind.isupper():
            defined.setdefault(symbol, f)
    calls = {}  # object -> {object it uses: the first symbol}
    for f, symbol in used:
        owner = defined.get(symbol)
        if owner and room_of(owner) > room_of(f):
            faults.append(
                f"{f}:{line_of(f, symbol)}: calls {symbol}, which {owner} defines, of a higher "
                f"room: {room_name(room_of(f))} may call {', '.join(ROOMS[: room_of(f) + 1])} only")
        if owner and owner != f:
            calls.setdefault(f, {}).setdefault(owner, symbol)
    # no cycle among the objects either, within a room or across rooms
    colour, path, closed = {}, [], set()

    def walk(f):
        colour[f] = 1
        path.append(f)
        for g in sorted(calls.get(f, {})):
            if colour.get(g) == 1:
                cyc = path[path.index(g):]
                key = frozenset(cyc)
                if key not in closed:
                    closed.add(key)
                    ring = cyc + [g]
                    steps = ", ".join(f"{a} uses {calls[a][b]} of {b}"
                                      for a, b in zip(ring, ring[1:]))
                    faults.append(f"{f}:{line_of(f, calls[f][g])}: call cycle: {steps}")
            elif g not in colour:
                walk(g)
        path.pop()
        colour[f] = 2

    for f in sorted(calls):
        if f not in colour:
            walk(f)
    return len(objects)


calls = ""
if len(sys.argv) > 3:
    calls = (f"; calls: {check_calls(sys.argv[2], sys.argv[3])} objects, downward only, "
             "no cycle")

for fault in faults:
    print(fault)
if faults:
    sys.exit(1)
print(f"gen includes: {checked} files in {len(ROOMS)} rooms, downward only, no cycle{calls}")
