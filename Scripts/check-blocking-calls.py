#!/usr/bin/env python3
"""The tests' rule of CONTRIBUTING.md (Tests never starve), checked: an async test never
blocks the cooperative thread it runs on. With two cores Swift's pool has two threads;
a test that waits on one for a process, a semaphore, a sleep or a spin starves every
other test's tasks. Blocking work goes through `offPool { … }` (TestSupport.swift), which
runs it on a thread of its own and awaits it.

A blocking call is reported when it sits in the body of an `async` function, under
control flow only (`if`, `for`, `do`, …) — not inside a closure, which runs where its
caller puts it (`offPool`, a thread, an observer's handler). Exits 1 and lists each.

A busy thread — a `Thread { … }` that loops until told to stop — is reported outside
TestSupport.swift: busy threads go through `whileRepeating(_:_:)`, which stops them as
the work they press on returns, never once a starved task resumes.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

BLOCKING = [
    r"\.wait\(", r"\bThread\.sleep\(", r"\busleep\(", r"(?<![.\w])sleep\(", r"\.waitUntilExit\(", r"\bconcurrentPerform\(",
    r"\.readDataToEndOfFile\(", r"\bpthread_join\(", r"\bflock\(",
]
CONTROL = re.compile(r"^\s*(\}\s*)?(if|else|for|while|repeat|guard|do|catch|switch|case|default|defer)\b")
ASYNC_FUNC = re.compile(r"\bfunc\s+\w+[^{]*\basync\b")


def code(line):
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


def kind_of_block(head, line):
    """What a `{` opens, from the text since the last brace (`head`, which may span lines:
    a signature) and the part of it on the brace's line."""
    declaration = re.search(r"\bfunc\b(?!.*\bfunc\b)", head, re.S)
    if declaration:
        return "async" if re.search(r"\basync\b", head[declaration.start():]) else "function"
    if re.search(r"\b(init|deinit)\b", head) or re.search(r"\b(get|set|willSet|didSet)\s*$", line):
        return "function"
    head = line
    if CONTROL.match(head) or re.search(r"\b(else|do|defer|repeat)\s*$", head):
        return "control"
    if re.search(r"^\s*(struct|class|enum|extension|actor|protocol)\b|\b(struct|final class|enum|extension)\s+\w", head):
        return "type"
    return "closure"


def check(path):
    problems = []
    stack, head = [], ""
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        text = code(raw)
        segment, line = "", ""
        for character in text + "\n":
            if character in "{}\n":
                # The segment just read runs in the innermost function or closure.
                context = next((kind for kind in reversed(stack) if kind != "control"), None)
                if context == "async" and any(re.search(pattern, segment) for pattern in BLOCKING):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {raw.strip()}")
                if character == "{":
                    stack.append(kind_of_block(head, line))
                elif character == "}" and stack:
                    stack.pop()
                segment = ""
                if character in "{}":
                    head, line = "", ""
                else:
                    head += "\n"
            else:
                segment += character
                head += character
                line += character
    return sorted(set(problems), key=problems.index)


def busy_threads(path):
    """Each `Thread {` whose block holds a `while` loop: a thread that runs until stopped."""
    text = "\n".join(code(line) for line in path.read_text().splitlines())
    problems = []
    for match in re.finditer(r"\bThread\s*\{", text):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        if re.search(r"\bwhile\b", text[match.end():end]):
            number = text.count("\n", 0, match.start()) + 1
            problems.append(f"{path.relative_to(ROOT)}:{number}: a busy thread; run it through whileRepeating")
    return problems


def main():
    problems = []
    for path in sorted(ROOT.glob("Tests/DefaultsCoderTests/**/*.swift")):
        problems += check(path)
        if path.name != "TestSupport.swift":
            problems += busy_threads(path)
    for problem in problems:
        print(problem)
    if problems:
        print("blocking calls on the cooperative pool in async tests, or busy threads (above): run them through offPool or whileRepeating", file=sys.stderr)
        return 1
    print("no async test blocks a cooperative thread, and busy threads run through whileRepeating")
    return 0


if __name__ == "__main__":
    sys.exit(main())
