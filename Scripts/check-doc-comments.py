#!/usr/bin/env python3
"""Fails when a public symbol in the symbol graphs under DIR has no documentation comment.

DocC renders a page for every public symbol, but does not insist that it says anything:
this makes "every public symbol has a summary" a check.

    Scripts/check-doc-comments.py DIR
"""
import glob
import json
import sys

directory = sys.argv[1]
missing = []
count = 0
for path in sorted(glob.glob(f"{directory}/*.symbols.json")):
    graph = json.load(open(path))
    for symbol in graph["symbols"]:
        if symbol["accessLevel"] not in ("public", "open"):
            continue
        # Default implementations a protocol of another module gives a type here (the
        # literal initializers `ExpressibleByStringLiteral` brings): documented there.
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
            continue
        count += 1
        lines = (symbol.get("docComment") or {}).get("lines") or []
        if not any(line["text"].strip() for line in lines):
            missing.append("/".join(symbol["pathComponents"]) + f" ({symbol['kind']['displayName']})")
if count == 0:
    print(f"no public symbols in the symbol graphs under {directory}: was anything compiled?")
    sys.exit(1)
if missing:
    print(f"{len(missing)} of {count} public symbols have no documentation comment:")
    for name in missing:
        print("  " + name)
    sys.exit(1)
print(f"all {count} public symbols have a documentation comment")
