#!/usr/bin/env bash
# The README's Swift examples, as a new user pastes them: every ```swift block in order,
# less the manifest (`// Package.swift`) and the blocks marked `// Apple platforms only`,
# becomes the main.swift of a new package that depends on this repository the way the
# README's install line does (the `main` branch, through a file URL: what is committed),
# which is built and run, twice (the second run finds the first run's values).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/ReadmeExamples"
# Named as the repository is, so that the package's identity is the install line's.
ln -s "$root" "$work/DefaultsCoder"
python3 - "$root/README.md" > "$work/Sources/ReadmeExamples/main.swift" <<'PYTHON'
import re, sys
text = open(sys.argv[1]).read()
for block in re.findall(r"```swift\n(.*?)```", text, re.S):
    first = block.split("\n", 1)[0].strip()
    if first in ("// Package.swift", "// Apple platforms only"):
        continue
    print(block)
PYTHON
# The branch checked out (the README names `main`), or the commit where none is.
branch="$(git rev-parse --abbrev-ref HEAD)"
if [ "$branch" = HEAD ]; then requirement="revision: \"$(git rev-parse HEAD)\""; else requirement="branch: \"$branch\""; fi
cat > "$work/Package.swift" <<SWIFT
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "ReadmeExamples",
    platforms: [.macOS(.v13), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    dependencies: [
        .package(url: "file://$work/DefaultsCoder", $requirement),
    ],
    targets: [
        .executableTarget(name: "ReadmeExamples", dependencies: ["DefaultsCoder"]),
    ]
)
SWIFT
# A config directory of its own: the examples write the program's own suite.
export XDG_CONFIG_HOME="$work/config"
# Warnings as errors: an example that warns when pasted is a bug of the README's.
swift build --package-path "$work" -Xswiftc -warnings-as-errors
swift run --package-path "$work" --skip-build -Xswiftc -warnings-as-errors ReadmeExamples
swift run --package-path "$work" --skip-build -Xswiftc -warnings-as-errors ReadmeExamples
echo "the README's examples build and run as pasted"
