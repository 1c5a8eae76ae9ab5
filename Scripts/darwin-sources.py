#!/usr/bin/env python3
"""Copies the library's sources as an Apple platform's build sees them, for
Scripts/check-darwin.sh: in every `#if` and `#elseif`, `os(…)`, `canImport(…)` and
`targetEnvironment(…)` become `true` or `false` for the platform named, so that the
Swift compiler on Linux takes the Apple branches. Each file also imports the stub of
Apple's Foundation additions (Scripts/darwin-stub/AppleFoundation.swift), and a
key-value observing `override` is kept as a plain method (see CONTRIBUTING.md,
Platforms: what the stubs cannot check).

Usage: darwin-sources.py PLATFORM SOURCE_DIR OUTPUT_DIR [--without MODULE...]

`--without` takes modules as missing (`canImport` false): the tests' Combine
pipelines and SwiftUI views use more of those frameworks than the stubs declare.
"""

import pathlib
import re
import sys

# What each platform's SDK can import, of the modules the package names; the stubs
# stand in for those Linux lacks (Darwin, ObjectiveC, notify, Combine, SwiftUI).
MODULES = {
    "macOS": {"Darwin", "ObjectiveC", "Foundation", "Dispatch", "notify", "Combine", "Observation", "SwiftUI"},
    "iOS": {"Darwin", "ObjectiveC", "Foundation", "Dispatch", "notify", "Combine", "Observation", "SwiftUI"},
}


def rewrite_condition(condition, platform, modules):
    condition = re.sub(r"\bos\(\s*(\w+)\s*\)", lambda m: "true" if m.group(1) == platform else "false", condition)
    condition = re.sub(r"\bcanImport\(\s*(\w+)\s*\)", lambda m: "true" if m.group(1) in modules else "false", condition)
    return re.sub(r"\btargetEnvironment\(\s*\w+\s*\)", "false", condition)


def rewrite(text, platform, modules):
    lines = []
    for line in text.split("\n"):
        match = re.match(r"(\s*#(?:if|elseif)\s)(.*)$", line)
        if match:
            line = match.group(1) + rewrite_condition(match.group(2), platform, modules)
        # Linux's NSObject declares no key-value observing to override.
        line = re.sub(r"\boverride func observeValue\(", "func observeValue(", line)
        lines.append(line)
    return "import AppleFoundation\n" + "\n".join(lines)


def main():
    platform, source, output = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    without = sys.argv[5:] if sys.argv[4:5] == ["--without"] else []
    modules = MODULES[platform] - set(without)
    for path in sorted(source.rglob("*.swift")):
        target = output / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rewrite(path.read_text(), platform, modules))


if __name__ == "__main__":
    main()
