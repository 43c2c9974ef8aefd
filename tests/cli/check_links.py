#!/usr/bin/env python3
"""Every link of the project's Markdown resolves.

check_links.py SOURCE_DIR

For README.md, REFERENCES.md, every docs/*.md and every README.md below
the top (bench/, gen/, ...): each link and image whose target is not a URL
names a file or folder that exists (relative to the page), and its #anchor,
if any, a heading of the target page (GitHub's anchors: lower case, spaces to
hyphens, punctuation dropped).  README.md must stay under 400 lines.  Prints
"links: N checked, all resolve" or each broken link as FILE:LINE: and exits 1.
"""
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
README_MAX_LINES = 400


def slug(title):
    t = title.strip().lower()
    t = re.sub(r'[^\w\- ]', '', t)
    return t.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        found, seen, code = set(), {}, False
        with open(path, encoding='utf-8') as f:
            for line in f:
                if line.startswith('```'):
                    code = not code
                    continue
                m = None if code else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    found.add(s if n == 0 else '%s-%d' % (s, n))
        cache[path] = found
    return cache[path]


def pages(top):
    out = [os.path.join(top, 'README.md'), os.path.join(top, 'REFERENCES.md')]
    docs = os.path.join(top, 'docs')
    if os.path.isdir(docs):
        out += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith('.md'))
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if not x.startswith(('.', 'build')) and x != 'docs']
        if d != top and 'README.md' in files:
            out.append(os.path.join(d, 'README.md'))
    return [p for p in out if os.path.isfile(p)]


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    bad, n = [], 0
    for page in pages(top):
        rel = os.path.relpath(page, top)
        code = False
        with open(page, encoding='utf-8') as f:
            lines = f.read().split('\n')
        if rel == 'README.md' and len(lines) - 1 >= README_MAX_LINES:
            bad.append('README.md: %d lines, at most %d' % (len(lines) - 1, README_MAX_LINES - 1))
        for no, line in enumerate(lines, 1):
            if line.startswith('```'):
                code = not code
                continue
            if code:
                continue
            for m in LINK.finditer(re.sub(r'`[^`]*`', '', line)):
                target = m.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    continue  # a URL: not checked (no network)
                n += 1
                path, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(dest):
                    bad.append('%s:%d: %s: no such file' % (rel, no, target))
                elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
                    bad.append('%s:%d: %s: no heading #%s in %s'
                               % (rel, no, target, anchor, os.path.relpath(dest, top)))
    for b in bad:
        print(b)
    if bad:
        return 1
    print('links: %d checked, all resolve' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
