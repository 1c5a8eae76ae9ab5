#!/usr/bin/env python3
"""The platform rule of CONTRIBUTING.md, checked: no Apple machine builds here, so a
name that exists on one platform only is looked for, and must sit inside a `#if` that
compiles it only there.

- Linux-only names (the suite file, glibc, the test double of Apple's UserDefaults) sit
  under a Linux gate — `#if os(Linux)`, `#if !canImport(Darwin)`, `#if canImport(Glibc)`,
  or the `#else` of an Apple gate — in every Swift file of Sources/ and Tests/, which
  macOS compiles.
- macOS-only names sit under `#if os(macOS)` (or a Linux gate) in the library, which is
  built for iOS, tvOS, watchOS and visionOS too.
- An availability check newer than visionOS 1 elsewhere (macOS 15, iOS 18, …) names
  visionOS, in every Swift file: `*` would let visionOS 1 through.

Exits 1 and lists each name found outside its gate.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Names that exist on Linux only, or that this package compiles only there.
LINUX_ONLY = [
    r"\bSuiteFile\b", r"\)\.file\b", r"\bGlibc\b", r"\bMusl\b", r"\bAppleUserDefaults\b",
    # glibc's names where Darwin has others (`st_mtimespec`, …) or none.
    r"\bst_[amc]tim\b", r"\binotify_", r"\bIN_[A-Z_]+\b", r"\bCLOCK_MONOTONIC_COARSE\b",
]
# Foundation API that Apple documents for macOS only (unavailable on iOS, tvOS, watchOS,
# visionOS).
MACOS_ONLY = [
    r"\bhomeDirectoryForCurrentUser\b", r"\bhomeDirectory\(forUser:", r"\bNSUserName\(", r"\bNSFullUserName\(",
    r"\bfullUserName\b", r"\bProcess\(\)", r"\bProcess\.run\b", r"\bHost\.current\(", r"\bNSWorkspace\b",
    r"\bNSAppleScript\b", r"\bNSTask\b", r"\bDistributedNotificationCenter\b",
]

# Standard-library and Foundation API newer than the package's minimums (macOS 13,
# iOS 15, tvOS 15, watchOS 8, visionOS 1), with nothing on the same line saying
# `#available`/`@available`: `String(validating:as:)` is macOS 15, iOS 18; `Duration`
# and the clocks are iOS 16, tvOS 16, watchOS 9.
NEWER_THAN_MINIMUMS = [r"\bString\(validating:", r"\bDuration\b", r"\bContinuousClock\b", r"\bSuspendingClock\b"]

# An availability condition newer than visionOS 1 on the other platforms (macOS 15, iOS
# 18, tvOS 18, watchOS 11 and later) must name visionOS: `*` stands for visionOS 1.0.
AVAILABILITY = re.compile(r"[#@]available\(([^)]*)\)")
NEWER_THAN_VISIONOS_1 = {"macOS": 15, "iOS": 18, "tvOS": 18, "watchOS": 11}


def availability_problem(text):
    for match in AVAILABILITY.finditer(text):
        platforms = dict(re.findall(r"\b(macOS|iOS|tvOS|watchOS|visionOS)\s+(\d+)", match.group(1)))
        if "visionOS" in platforms:
            continue
        if any(int(platforms.get(name, 0)) >= floor for name, floor in NEWER_THAN_VISIONOS_1.items()):
            return match.group(0)
    return None


LINUX_GATES = [r"os\(Linux\)", r"!\s*canImport\(Darwin\)", r"canImport\(Glibc\)", r"canImport\(Musl\)"]
APPLE_GATES = [r"canImport\(Darwin\)", r"canImport\(ObjectiveC\)", r"os\(macOS\)"]
MACOS_GATES = [r"os\(macOS\)"]


def matches(condition, patterns):
    return any(re.search(pattern, condition) for pattern in patterns)


def gates(lines):
    """For each line, the `#if` conditions it sits in: (condition, in the #else branch)."""
    stack, result = [], []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#if "):
            stack.append([stripped[4:], False])
        elif stripped.startswith("#elseif "):
            stack[-1] = [stripped[8:], False]
        elif stripped.startswith("#else"):
            stack[-1][1] = True
        elif stripped.startswith("#endif"):
            stack.pop()
        result.append([tuple(frame) for frame in stack])
    return result


def linux_gated(frames):
    for condition, negated in frames:
        if not negated and matches(condition, LINUX_GATES) and not condition.lstrip().startswith("!os(Linux)"):
            return True
        if negated and matches(condition, APPLE_GATES) and not condition.lstrip().startswith("!"):
            return True
    return False


def macos_gated(frames):
    return linux_gated(frames) or any(not negated and matches(condition, MACOS_GATES) for condition, negated in frames)


def code(line):
    """The line without its comment and string literals."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


# The library's modules: what apps compile for Apple platforms at the package's minimums.
LIBRARY_MODULES = ("KeyValueCoders", "DefaultsCoderStorage", "DefaultsCoder", "DefaultsCoderSync", "DefaultsCoderTesting")


def main():
    problems = []
    swift_files = [path for folder in ("Sources", "Tests", "Benchmarks", "Fuzz") for path in sorted(ROOT.glob(f"{folder}/**/*.swift"))]
    for path in swift_files:
        if ".build" in path.parts:
            continue
        lines = path.read_text().splitlines()
        library = any(path.is_relative_to(ROOT / "Sources" / module) for module in LIBRARY_MODULES)
        for number, (line, frames) in enumerate(zip(lines, gates(lines)), start=1):
            text = code(line)
            unnamed = availability_problem(text)
            if unnamed:
                problems.append(f"{path.relative_to(ROOT)}:{number}: {unnamed} leaves visionOS at 1.0 (`*`); name visionOS")
            if text.lstrip().startswith("#"):
                continue
            for pattern in LINUX_ONLY:
                if re.search(pattern, text) and not linux_gated(frames):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: Linux-only {pattern} outside a Linux gate")
            if library:
                for pattern in NEWER_THAN_MINIMUMS:
                    if re.search(pattern, text) and not linux_gated(frames) and "available" not in text:
                        problems.append(f"{path.relative_to(ROOT)}:{number}: {pattern} is newer than the package's minimums")
                for pattern in MACOS_ONLY:
                    if re.search(pattern, text) and not macos_gated(frames):
                        problems.append(f"{path.relative_to(ROOT)}:{number}: macOS-only {pattern} outside #if os(macOS)")
    for problem in problems:
        print(problem)
    if problems:
        print("platform code outside its gate (above); see CONTRIBUTING.md, Platforms", file=sys.stderr)
        return 1
    print("every platform-only name sits inside its platform's #if")
    return 0


if __name__ == "__main__":
    sys.exit(main())
