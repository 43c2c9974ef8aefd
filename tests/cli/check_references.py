#!/usr/bin/env python3
r"""Every citation key in the sources has an entry in REFERENCES.md.

A citation is a key followed by a locator: `[TREE §3.2]`, `[NAP Eq. 3]`,
`[NAP Alg. 1, §III-A]`, `[TREE Lemma 5]`, `(RM §4, Fig. 7)`, `MPI-4.0 §5.1.3`.
A key is a word of capitals and digits (`NAP`, `RM`) or a standard with its
version (`MPI-4.1`, also written `MPI 3.1`); a locator is a section sign (in a
man page `\(sc`), Eq./Eqs., Alg., Fig./Figs., Lemma/Lemmas, Table or Sec.
A section sign with no key before it fails too, unless a key stands earlier
in the same bracket or parenthesis (`[NAP Alg. 1, §III-A; radix per step:
FLEX §2.1]`).  Array indexing (`a[i]`, `[n - 1]`, `[MAXN]`) has no locator
and is never a key.  Issue references of the form owner/repo#N must have an
entry too.

REFERENCES.md gives each entry a line starting `**[KEY]**`.

usage: check_references.py SOURCE_DIR
"""
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
REFS = os.path.join(SRC, "REFERENCES.md")
# What is searched: the sources, the tests, the man pages, the templates and
# topologies (they cite the papers' test machines), the checked-in generated
# code, the README and the user guide (docs/).
SCAN = ["gen", "runtime", "measure", "bench", "tests", "templates", "grammar", "topologies",
        "generated", "cmake", "docs", "README.md", "CMakeLists.txt"]
# Fuzzer inputs are data, any bytes at all, not text that cites.
SKIP = {os.path.join("tests", "fuzz", "corpus")}
SELF = os.path.abspath(__file__)

KEY = r"[A-Z][A-Z0-9]+(?:[- ][0-9]+(?:\.[0-9]+)+)?"
LOCATOR = r"(?:§|Eqs?\.|Algs?\.|Figs?\.|Lemmas?\b|Tables?\b|Sec\.)"
CITE = re.compile(rf"(?<![\w.\-/])({KEY})\s+(?={LOCATOR})")
ISSUE = re.compile(r"(?<![\w.\-/])([\w.-]+/[\w.-]+#[0-9]+)\b")
BLANK = re.compile(r"\n[ \t]*\n")
# Comment leaders, blanked so that a citation may run over lines.
LEADER = re.compile(r"^(\s*)(/\*+|\*+(?!/)|//+|#+|\.\\\")?")


def entries():
    try:
        with open(REFS, encoding="utf-8") as f:
            return set(re.findall(r"^\*\*\[([^\]]+)\]\*\*", f.read(), re.M))
    except OSError as e:
        print(f"{REFS}: {e.strerror}")
        return set()


def files():
    for top in SCAN:
        path = os.path.join(SRC, top)
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and os.path.relpath(os.path.join(root, d), SRC) not in SKIP)
            for n in sorted(names):
                p = os.path.join(root, n)
                if os.path.abspath(p) != SELF:
                    yield p


def text_of(path):
    try:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
    except (UnicodeDecodeError, OSError):
        return None
    # a man page's section sign is \(sc or \[sc]
    raw = raw.replace("\\(sc", "§").replace("\\[sc]", "§")
    # the same lines, the comment leaders blanked
    return "\n".join(LEADER.sub(lambda m: " " * len(m.group(0)), line) for line in raw.split("\n"))


def opener(text, pos):
    """The offset of the bracket or parenthesis still open at pos, looking
    back no further than the paragraph (a blank line) or 600 characters; -1
    where there is none."""
    para = max((m.end() for m in BLANK.finditer(text, max(0, pos - 600), pos)),
               default=max(0, pos - 600))
    depth = 0
    for i in range(pos - 1, para - 1, -1):
        if text[i] in ")]":
            depth += 1
        elif text[i] in "([":
            if depth == 0:
                return i
            depth -= 1
    return -1


def main():
    known = entries()
    errors = []
    for path in files():
        text = text_of(path)
        if text is None or ("§" not in text and not CITE.search(text) and "#" not in text):
            continue
        rel = os.path.relpath(path, SRC)

        def where(pos):
            return f"{rel}:{text.count(chr(10), 0, pos) + 1}"

        cites = [(m.start(), m.end(), m.group(1).replace(" ", "-")) for m in CITE.finditer(text)]
        for start, _, key in cites:
            if key not in known:
                errors.append(f"{where(start)}: citation key [{key}] has no entry in REFERENCES.md")
        for m in ISSUE.finditer(text):
            if m.group(1) not in known:
                errors.append(
                    f"{where(m.start())}: issue {m.group(1)} has no entry in REFERENCES.md")
        keyed = {end for _, end, _ in cites}
        for m in re.finditer("§", text):
            p = m.start()
            if p in keyed:
                continue
            o = opener(text, p)
            if o >= 0 and any(o < s < p for s, _, _ in cites):
                continue
            line = text[text.rfind("\n", 0, p) + 1:].split("\n", 1)[0].strip()
            errors.append(f"{where(p)}: section sign with no citation key: {line}")
    for e in errors:
        print(e)
    if errors:
        print(f"references: {len(errors)} citation(s) not traced to REFERENCES.md")
        return 1
    print(f"references: every citation has an entry ({len(known)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
