#!/usr/bin/env bash
# The library's Darwin branches (`#if canImport(Darwin)`, `canImport(ObjectiveC)`,
# `os(iOS)`, …) never compile in a Linux build. Here they are type-checked, with warnings
# as errors, against Scripts/darwin-stub/ — the declarations of Darwin, the Objective-C
# runtime, libnotify, SwiftUI and Apple's Foundation additions the package calls — and
# Scripts/combine-stub/, for macOS and for iOS (the iOS family's own branches: the
# expiring background activity), then the tests for macOS. Scripts/darwin-sources.py
# rewrites each `#if` for the platform. The stubs prove the code type-checks against
# those signatures, not that it runs, nor that each API is available at the package's
# minimum versions (CONTRIBUTING.md, Platforms).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swiftc >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stub() { # MODULE FILE...
    swiftc -emit-module -parse-as-library -module-name "$1" -swift-version 6 -I "$work/modules" "${@:2}" -o "$work/modules/$1.swiftmodule"
}
mkdir -p "$work/modules"
stub Darwin Scripts/darwin-stub/Darwin.swift
stub ObjectiveC Scripts/darwin-stub/ObjectiveC.swift
stub notify Scripts/darwin-stub/notify.swift
stub AppleFoundation Scripts/darwin-stub/AppleFoundation.swift
stub Combine Scripts/combine-stub/Combine.swift
stub SwiftUI Scripts/darwin-stub/SwiftUI.swift
# The library's modules from the bottom: each is built for the platform against the
# stubs and the modules below it, as Package.swift builds them.
modules=(KeyValueCoders DefaultsCoderStorage DefaultsCoder DefaultsCoderSync DefaultsCoderTesting)
for platform in macOS iOS; do
    rm -rf "$work/sources" "$work/$platform"
    mkdir -p "$work/$platform"
    for module in "${modules[@]}"; do
        python3 Scripts/darwin-sources.py "$platform" "Sources/$module" "$work/sources/$module"
        files=()
        while IFS= read -r file; do files+=("$file"); done < <(find "$work/sources/$module" -name '*.swift' | sort)
        swiftc -emit-module -parse-as-library -module-name "$module" -package-name DefaultsCoder -swift-version 6 \
            -enable-upcoming-feature ExistentialAny -warnings-as-errors -enable-testing -I "$work/modules" -I "$work/$platform" \
            "${files[@]}" -o "$work/$platform/$module.swiftmodule"
    done
    echo "the Darwin branches type-check for $platform against the stubs"
done
# The tests, as the workflow's macOS job compiles them for `swift test` (the iOS jobs
# build the library only), against the macOS modules above; no traits.
python3 Scripts/darwin-sources.py macOS Tests/DefaultsCoderTests "$work/sources/DefaultsCoderTests" --without Combine SwiftUI
# SwiftPM generates `Bundle.module` for a target with resources.
echo 'import Foundation
extension Bundle { static let module = Bundle.main }' > "$work/sources/DefaultsCoderTests/resource_bundle_accessor.swift"
files=()
while IFS= read -r file; do files+=("$file"); done < <(find "$work/sources/DefaultsCoderTests" -name '*.swift' | sort)
# In batches, two at once: one frontend per file parses every file again for each.
swiftc -typecheck -j 2 -enable-batch-mode -parse-as-library -module-name DefaultsCoderTests -package-name DefaultsCoder -swift-version 6 \
    -enable-upcoming-feature ExistentialAny -warnings-as-errors -I "$work/modules" -I "$work/macOS" "${files[@]}"
echo "the tests' Darwin branches type-check for macOS against the stubs"
