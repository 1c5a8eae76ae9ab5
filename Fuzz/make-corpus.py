#!/usr/bin/env python3
"""Writes the seed corpus in Fuzz/corpus/.

Each seed starts with two bytes the fuzz target reads first: the mode (0 = plist bytes,
1 = tree builder, 2 = generated value) and the byte that picks the decoders' strategies.

    python3 Fuzz/make-corpus.py [PLIST ...]

The plists are preference-style files of the kinds apps write, in XML and binary form;
files given as arguments (such as the demo's own suite, ~/.config/defaults-coder-demo.plist)
are added as they are. The output is the same every time.
"""
import datetime
import hashlib
import os
import plistlib
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

PREFERENCES = [
    {"NSWindow Frame MainWindow": "120 300 800 600 0 0 1440 875 ", "WebKitDefaultFontSize": 16,
     "AppleLanguages": ["en-GB", "de-DE"], "NSNavLastRootDirectory": "~/Documents"},
    {"launchCount": 12, "hasSeenOnboarding": True, "lastLaunch": datetime.datetime(2024, 5, 1, 8, 30, 0),
     "volume": 0.75, "token": b"\x00\x01\x02\xff", "theme": "dark"},
    {"owner": {"id": 1, "name": "Herbert", "email": "$null", "tags": ["a", "b"]},
     "recentFiles": ["file:///tmp/a.txt", "https://example.com/?q=1&lang=de"],
     "windowFrames": {"main": [0, 0, 800, 600], "inspector": [800, 0, 300, 600]}},
    {"user_name": "ada", "volume_level": 11.0, "last_opened": 7.5e8, "flags": ["beta", "debug"]},
    {"byID": {"1": "one", "-2": "two", "x": "bad"}, "balance": "1234.5678", "created": 0.5,
     "kind": {"user": {"name": "a", "age": 3}}, "widths": {"i8": 127, "i16": -32768, "i64": -9223372036854775808,
     "u8": 255, "u32": 4294967295, "u64": 18446744073709551615, "f": 3.4e38}},
    {"id": 7, "name": "x", "nickname": "$null", "children": [{"id": 8, "name": "y", "color": "red"}],
     "homepage": {"relative": "b/c", "base": "https://example.com/a/"}, "avatar": "AQID"},
    [1, "two", 3.0, True, None or "$null", [], {}],
    {"": {"": [{"": 0}]}, "a.b.c": {"$null": "$$null"}, "deep": [[[[[[[[[[1]]]]]]]]]]},
    {"scores": [1.5, -0.0, 1e308, 5e-324], "i": 9007199254740993, "neg": -1},
]


def write(name, payload):
    os.makedirs(CORPUS, exist_ok=True)
    with open(os.path.join(CORPUS, name), "wb") as f:
        f.write(payload)


def main():
    for index, plist in enumerate(PREFERENCES):
        for kind, fmt in (("xml", plistlib.FMT_XML), ("binary", plistlib.FMT_BINARY)):
            body = plistlib.dumps(plist, fmt=fmt, sort_keys=True)
            for strategies in (0, 0x9B):
                write(f"plist-{index}-{kind}-{strategies:02x}", bytes([0, strategies]) + body)
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            body = f.read()
        digest = hashlib.sha1(body).hexdigest()[:12]
        write(f"plist-package-{digest}", bytes([0, 0]) + body)
    rng = random.Random(20261122)
    for mode, count, length in ((1, 24, 96), (2, 24, 160)):
        for index in range(count):
            body = bytes(rng.randrange(256) for _ in range(length))
            write(f"{'tree' if mode == 1 else 'value'}-{index:02d}", bytes([mode, rng.randrange(256)]) + body)


if __name__ == "__main__":
    main()
