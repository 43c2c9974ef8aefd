#!/usr/bin/env python3
"""Every header of the runtime, the generator, the tuner and the benchmarks,
and the one the MPI tests share, documented in one style (docs/headers.md):

- the file starts with a head comment;
- every function declared at file scope (a declaration `type name(...);`,
  possibly over several lines, or a static inline definition) has a
  `/* ... */` comment that ends on the line directly above it, or above a
  run of declarations with no blank line between them that the comment
  covers together; typedefs of function pointers are not functions;
- a table expansion, a line `TABLE(X)` of its own right after the
  `#define X(...)` it expands, declares what X declares: its comment ends
  directly above that `#define`;
- no `/** ... */` and no `//` comments.

The headers are found by glob (HEADERS), so a new one is held to it too.

usage: check_header_style.py SOURCE_DIR
Prints "header style: N headers, M functions, each with its comment" or,
for each fault, "path:line: ..." and exits 1.
"""
import glob
import os
import re
import sys

HEADERS = ["runtime/*.h", "runtime/algo/*.h", "gen/*/*.h", "measure/*.h", "bench/*.h",
           "tests/mpi/mpi_check.h"]
# Headers not yet held to the style.
SKIP = set()

FUNCTION = re.compile(r"(?:^|[\s*])([A-Za-z_]\w*)\s*\(")
EXPANSION = re.compile(r"([A-Z_][A-Z0-9_]*)\(\s*([A-Za-z_]\w*)\s*\)")
DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)\(")

src = sys.argv[1]
faults = []


def scan(text):
    """Split text into code (comments and strings blanked, same lines and
    columns) and the comments: a list of (first line, last line, opener,
    alone), alone when nothing but blanks precedes the opener on its line."""
    code, comments = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            body = text[i:end]
            start_of_line = text.rfind("\n", 0, i) + 1
            alone = text[start_of_line:i].strip() == ""
            opener = "/**" if body.startswith("/**") and not body.startswith("/**/") else "/*"
            comments.append((line, line + body.count("\n"), opener, alone))
            code.append("".join(ch if ch == "\n" else " " for ch in body))
            line += body.count("\n")
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append((line, line, "//", text[text.rfind("\n", 0, i) + 1:i].strip() == ""))
            code.append(" " * (end - i))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(c + " " * (min(j, n) - i - 1) + (c if j < n and text[j] == c else ""))
            i = min(j + 1, n) if j < n and text[j] == c else j
        else:
            code.append(c)
            line += c == "\n"
            i += 1
    return "".join(code).split("\n"), comments


def declarations(lines):
    """The file-scope statements that declare or define a function: (first
    line, last line, name), lines counted from 1."""
    out = []
    depth = 0  # braces, not counting extern "C" {
    extern_c = 0
    stmt, first = "", None
    in_macro = False
    macro = None  # (name, first line) of the #define being read, then of the last one
    macro_end = 0
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if in_macro or (not stmt and s.startswith("#")):
            if not in_macro:
                d = DEFINE.match(s)
                macro = (d.group(1), lineno) if d else None
            in_macro = raw.rstrip().endswith("\\")
            if not in_macro:
                macro_end = lineno
            continue
        x = EXPANSION.fullmatch(s)
        if depth == 0 and not stmt and x and macro and macro[0] == x.group(2) and \
                macro_end == lineno - 1:
            out.append((macro[1], lineno, x.group(1)))  # a table expansion of the macro above
            continue
        if depth == 0 and not stmt and re.match(r'extern\s*"[^"]*"\s*\{', s):
            extern_c += 1
            continue
        if depth == 0 and extern_c and not stmt and s == "}":
            extern_c -= 1
            continue
        for ch in raw:
            if depth == 0:
                if first is None:
                    if ch.isspace():
                        continue
                    first = lineno
                stmt += ch
                if ch == ";":
                    check_statement(stmt, first, lineno, out)
                    stmt, first = "", None
                elif ch == "{":
                    check_statement(stmt, first, lineno, out)
                    depth = 1
            else:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        stmt, first = "", None
        if depth == 0 and stmt:
            stmt += " "
    return out


def check_statement(stmt, first, last, out):
    """Records stmt if it declares or defines a function."""
    s = " ".join(stmt.split())
    if re.match(r"(typedef|struct|union|enum|_Static_assert|static_assert)\b", s) and \
            not re.match(r"(struct|union|enum)\s+\w+\s*\*?\s*\w+\s*\(", s):
        return
    if s.endswith("{") and not re.search(r"\)\s*\{$", s):
        return  # an initializer or a struct's body
    if not (s.endswith(");") or s.endswith("{")):
        return
    m = FUNCTION.search(s)
    if not m or m.group(1) in ("sizeof", "_Alignas", "__attribute__"):
        return
    if re.search(r"\(\s*\*", s[: m.end() + 2]):
        return  # a pointer to a function
    out.append((first, last, m.group(1)))


headers = sorted({h for pattern in HEADERS for h in glob.glob(os.path.join(src, pattern))})
nfunctions = 0
for path in headers:
    rel = os.path.relpath(path, src)
    if rel in SKIP:
        continue
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    lines, comments = scan(text)
    for first, _, opener, _ in comments:
        if opener == "/**":
            faults.append(f"{rel}:{first}: a /** comment; the headers use /* ... */")
        elif opener == "//":
            faults.append(f"{rel}:{first}: a // comment; the headers use /* ... */")
    head = next((i for i, l in enumerate(text.split("\n"), 1) if l.strip()), 1)
    if not any(c[0] == head and c[3] for c in comments):
        faults.append(f"{rel}:{head}: no head comment: the file starts with what it is")
    # the line each standalone comment ends on
    ends = {last for _, last, opener, alone in comments if alone and opener != "//"}
    decls = declarations(lines)
    nfunctions += len(decls)
    ends_decl = {last: first for first, last, _ in decls}
    for first, last, name in decls:
        above = first - 1
        while above not in ends and above in ends_decl:
            above = ends_decl[above] - 1  # the run of declarations a comment covers
        if above not in ends:
            faults.append(f"{rel}:{first}: {name}() has no /* ... */ comment directly above it")

for fault in faults:
    print(fault)
if faults:
    sys.exit(1)
print(f"header style: {len(headers) - len(SKIP & {os.path.relpath(h, src) for h in headers})} "
      f"headers, {nfunctions} functions, each with its comment")
