#!/usr/bin/env bash
# Combine exists only on Apple platforms, so the package's Combine code
# (`#if canImport(Combine)`) never compiles in a Linux build. Here it is type-checked
# against Scripts/combine-stub/, the declarations of Combine it uses: a refactor that
# breaks it fails here rather than on the first Mac that builds it. The stub proves the
# code type-checks against those signatures, not that it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swiftc >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
stub="$(mktemp -d)"
trap 'rm -rf "$stub"' EXIT
swiftc -emit-module -parse-as-library -module-name Combine -swift-version 6 \
    Scripts/combine-stub/Combine.swift -o "$stub/Combine.swiftmodule"
# Every source file of the library, its folders' subfolders included.
files=()
while IFS= read -r file; do files+=("$file"); done < <(find Sources/DefaultsCoder -name '*.swift' | sort)
swiftc -typecheck -parse-as-library -module-name DefaultsCoder -package-name DefaultsCoder -swift-version 6 \
    -enable-upcoming-feature ExistentialAny -I "$stub" "${files[@]}"
echo "the Combine code type-checks against the stub"
