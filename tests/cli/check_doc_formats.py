#!/usr/bin/env python3
"""The docs name the input formats and the defaults that treeduce-gen --help
prints.

check_doc_formats.py TREEDUCE_GEN SOURCE_DIR

treeduce-gen --help prints its formats from the readers' table
(gen/read/load.c): the --format list ("dsl, xml, ... ibnetdiscover (or
ibnet) or hwloc") and the TOPOLOGY list, whose labels carry the file name
extensions (FILE.topo, FILE.yaml, .yml) and the inputs that are no file
(local).  The pages that cannot read the table must say the same:

  docs/treeduce-gen.md         its --format entry is the list word for word;
                               its TOPOLOGY entry names every extension and
                               input;
  gen/man/treeduce-gen.1       its --format entry names the formats and
                               aliases in the list's order; its TOPOLOGY
                               entries are the extensions and inputs;
  gen/man/treeduce-topology.5  its DESCRIPTION has one entry per format in the
                               list's order, names each alias and extension
                               and input, and counts the formats in words.

The defaults of --nodetype, --latency and --bandwidth (TRD_DEFAULT_* of
gen/read/load.h) are those of --help in the entries of the first two pages.

Prints "doc formats: N formats, M extensions and inputs, K defaults, as
--help lists them" or each difference, and exits 1.
"""
import re
import subprocess
import sys

NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
           "ten", "eleven", "twelve"]

errors = []


def fail(where, msg):
    errors.append("%s: %s" % (where, msg))


def roff(text):
    """roff's minus signs as the plain text writes them."""
    return text.replace("\\-", "-")


def bold_words(text):
    """The first argument of each .B, .BR and .IB line (.IB's second too)."""
    words = []
    for line in text.split("\n"):
        m = re.match(r'\.(B|BR|RB|IB) (.*)$', line)
        if not m:
            continue
        args = re.findall(r'"[^"]*"|\S+', m.group(2))
        args = [a.strip('"') for a in args]
        if m.group(1) == "IB":
            words.extend(args[:2])
        elif m.group(1) == "RB":
            words.extend(args[1:2])
        else:
            words.extend(args[:1])
    return words


DEFAULTED = ["--nodetype", "--latency", "--bandwidth"]


def help_defaults(out):
    """{option: its default} of the options of DEFAULTED, from --help."""
    found = {}
    for opt in DEFAULTED:
        m = re.search(r'^ +%s .*?\(default "?([^")]+)"?\)' % opt, out, re.M | re.S)
        if not m:
            sys.exit("--help: no default of %s" % opt)
        found[opt] = m.group(1)
    return found


def check_defaults(path, text, entry_of, defaults):
    for opt, value in defaults.items():
        entry = entry_of(text, opt)
        if entry is None:
            fail(path, "no %s entry" % opt)
        elif value not in entry:
            fail(path, "the %s entry does not give its default %s" % (opt, value))


def md_entry(text, opt):
    """The lines of opt's entry in the usage block of a Markdown page."""
    m = re.search(r'^ +%s .*?\n(?= +-|```)' % opt, text, re.M | re.S)
    return m.group(0) if m else None


def man_entry(text, opt):
    """opt's .TP entry in a man page's OPTIONS (its minus signs plain)."""
    m = re.search(r'^\.TP\n\.BI? %s\b[^\n]*\n(.*?)(?=^\.TP|^\.SH|^\.PP)' % opt, text,
                  re.M | re.S)
    return m.group(1) if m else None


def help_formats(gen):
    out = subprocess.run([gen, "--help"], capture_output=True, text=True, check=True).stdout
    help_formats.defaults = help_defaults(out)
    m = re.search(r'^  -f, --format FMT +(.+)$', out, re.M)
    if not m:
        sys.exit("%s --help: no --format line" % gen)
    listed = m.group(1).strip()
    names, aliases = [], []
    for item in re.split(r', | or (?![^(]*\))', listed):
        im = re.fullmatch(r'([a-z0-9-]+)(?: \(or ([a-z0-9-]+)\))?', item)
        if not im:
            sys.exit("%s --help: cannot read the format '%s' of '%s'" % (gen, item, listed))
        names.append(im.group(1))
        if im.group(2):
            aliases.append(im.group(2))
    m = re.search(r'^TOPOLOGY is one of\n((?:  .*\n)+)', out, re.M)
    if not m:
        sys.exit("%s --help: no TOPOLOGY list" % gen)
    exts, inputs = [], []
    for line in m.group(1).split("\n"):
        if not re.match(r'  \S', line):
            continue
        label = line[2:19].strip()
        if label.startswith("FILE"):
            exts.extend(re.findall(r'\.[a-z0-9]+', label))
        else:
            inputs.append(label)
    return listed, names, aliases, exts, inputs


def check_md(path, listed, exts, inputs):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'-f, --format FMT\s+(.*?)\s*\(default', text, re.S)
    if not m:
        return fail(path, "no --format entry")
    doc = " ".join(m.group(1).split())
    if doc != listed:
        fail(path, "--format lists '%s', --help '%s'" % (doc, listed))
    m = re.search(r'TOPOLOGY:(.*?)\n\s*-o, --output', text, re.S)
    if not m:
        return fail(path, "no TOPOLOGY entry")
    for e in exts:
        if not re.search(re.escape(e) + r'\b', m.group(1)):
            fail(path, "the TOPOLOGY entry does not name %s" % e)
    for i in inputs:
        if "`%s`" % i not in m.group(1):
            fail(path, "the TOPOLOGY entry does not name `%s`" % i)
    check_defaults(path, text, md_entry, help_formats.defaults)


def section(text, path, start, end_pattern):
    """The text of the page from the line start to the next end_pattern line."""
    at = text.find("\n" + start + "\n")
    if at < 0:
        fail(path, "no '%s'" % start)
        return ""
    rest = text[at + len(start) + 2:]
    m = re.search(end_pattern, rest, re.M)
    return rest[:m.start()] if m else rest


def check_gen_page(path, names, aliases, exts, inputs):
    text = roff(open(path, encoding="utf-8").read())
    opts = section(text, path, ".SH OPTIONS", r'^\.SH ')
    m = re.search(r'^\.BR -f ", " --format[^\n]*\n(.*?)(?=^\.TP)', opts, re.M | re.S)
    if not m:
        return fail(path, "no --format entry in OPTIONS")
    words = bold_words(m.group(1))
    if [w for w in words if w in names] != names:
        fail(path, "--format names %s, --help %s" % (words, names))
    for a in aliases:
        if a not in words:
            fail(path, "--format does not name the alias %s" % a)
    topo = section(text, path, ".SS TOPOLOGY", r'^\.S[HS] ')
    found_exts, found_inputs = [], []
    for e in re.findall(r'^\.TP\n([^\n]*)', topo, re.M):
        if e.startswith(".IB FILE "):
            found_exts.extend(re.findall(r'\.[a-z0-9]+', e[len(".IB"):]))
        elif e.startswith(".B "):
            found_inputs.append(e[len(".B "):].strip())
    if sorted(found_exts) != sorted(exts):
        fail(path, "TOPOLOGY names the extensions %s, --help %s" % (found_exts, exts))
    for i in inputs:
        if i not in found_inputs:
            fail(path, "TOPOLOGY has no entry for %s" % i)
    check_defaults(path, opts, man_entry, help_formats.defaults)


def check_topology_page(path, names, aliases, exts, inputs):
    text = roff(open(path, encoding="utf-8").read())
    desc = section(text, path, ".SH DESCRIPTION", r'^\.SH ')
    entries = re.findall(r'^\.TP\n\.B (\S+)', desc, re.M)
    if entries != names:
        fail(path, "DESCRIPTION's entries are %s, --help's formats %s" % (entries, names))
    m = re.search(r'^(\w+) formats are read', desc, re.M)
    count = NUMBERS[len(names)] if len(names) < len(NUMBERS) else str(len(names))
    if not m or m.group(1).lower() != count:
        fail(path, "DESCRIPTION does not say '%s formats are read'" % count.capitalize())
    words = bold_words(desc)
    for w in aliases + exts + inputs:
        if w not in words:
            fail(path, "DESCRIPTION does not name %s" % w)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_doc_formats.py TREEDUCE_GEN SOURCE_DIR")
    gen, src = sys.argv[1], sys.argv[2]
    listed, names, aliases, exts, inputs = help_formats(gen)
    check_md(src + "/docs/treeduce-gen.md", listed, exts, inputs)
    check_gen_page(src + "/gen/man/treeduce-gen.1", names, aliases, exts, inputs)
    check_topology_page(src + "/gen/man/treeduce-topology.5", names, aliases, exts, inputs)
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print("doc formats: %d formats, %d extensions and inputs, %d defaults, as --help lists them" %
          (len(names), len(exts) + len(inputs), len(help_formats.defaults)))


main()
