#!/usr/bin/env python3
"""The repository documents itself: every relative link in README.md and
docs/ leads to a file of the repository (and an #anchor to a heading of it),
and no text points outside the repository (to research notes that users do
not have).  usage: test_docs.py SOURCE_DIR"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1])
pages = [os.path.join(root, "README.md")]
for d, _, files in os.walk(os.path.join(root, "docs")):
    pages += [os.path.join(d, f) for f in files if f.endswith(".md")]


def anchors(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#+ (.*)", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(a)
    return out


bad = 0
checked = 0
outside = re.compile(r"\.\./shared|specs/[a-z_]+/NOTES|\bNOTES §|DESIGN\.md|STYLE_ANCHORS")
for page in pages:
    text = open(page, encoding="utf-8").read()
    for n, line in enumerate(text.splitlines(), 1):
        if outside.search(line):
            print(f"{os.path.relpath(page, root)}:{n}: points outside the repository: {line.strip()[:100]}")
            bad += 1
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        checked += 1
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not full.startswith(root) or not os.path.exists(full):
            print(f"{os.path.relpath(page, root)}: broken link {target}")
            bad += 1
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            print(f"{os.path.relpath(page, root)}: no heading for #{anchor} in {path or 'itself'}")
            bad += 1
# every text file of the source tree: no pointer to the outside notes either
scanned = 0
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if not (x.startswith("build") or x in (".git", "node_modules", "out"))]
    for f in files:
        if not re.search(r"\.(c|h|cpp|hpp|py|sh|md|txt|mjs|ksy|cmake|in)$", f) or os.path.join(d, f) in pages:
            continue
        scanned += 1
        for n, line in enumerate(open(os.path.join(d, f), encoding="utf-8", errors="replace"), 1):
            if outside.search(line) and not f == "test_docs.py":
                print(f"{os.path.relpath(os.path.join(d, f), root)}:{n}: points outside the repository: {line.strip()[:100]}")
                bad += 1
print(f"test_docs: {len(pages)} pages, {checked} links, {scanned} other files, {bad} problems")
print(f"{checked - bad if checked >= bad else 0} passed, {bad} failed")
sys.exit(1 if bad or checked < 10 else 0)
