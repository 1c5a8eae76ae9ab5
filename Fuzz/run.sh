#!/usr/bin/env bash
# Builds the libFuzzer target and runs it for SECONDS (default 60) over the seed corpus.
#
#   Fuzz/run.sh 60            # a short pass, as CI runs it
#   Fuzz/run.sh 1800 -jobs=2  # longer; extra arguments go to libFuzzer
#
# New inputs go to Fuzz/out/corpus (ignored by git); Fuzz/corpus holds the committed seeds.
# A crash leaves its input in Fuzz/out/ and makes the script exit non-zero; replay it with
# `Fuzz/out/fuzz-decoder Fuzz/out/crash-…`.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true

if ! command -v swiftc >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

out=Fuzz/out
mkdir -p "$out/module" "$out/corpus"

flags=(-sanitize=fuzzer,address -O -g -swift-version 6 -enable-upcoming-feature ExistentialAny)

echo "== Building the library with coverage instrumentation"
# Its modules from the bottom, each against the ones below it, as Package.swift builds them.
modules=(KeyValueCoders DefaultsCoderStorage DefaultsCoder)
for module in "${modules[@]}"; do
    sources=()
    while IFS= read -r file; do sources+=("$file"); done < <(find "Sources/$module" -name '*.swift' | sort)
    swiftc "${flags[@]}" -parse-as-library -enable-testing -I "$out/module" \
        -module-name "$module" -package-name DefaultsCoder -emit-module -emit-module-path "$out/module/$module.swiftmodule" \
        -emit-library -static -o "$out/lib$module.a" \
        "${sources[@]}"
done

echo "== Building the fuzz target"
swiftc "${flags[@]}" -parse-as-library -I "$out/module" -L "$out" -lDefaultsCoder -lDefaultsCoderStorage -lKeyValueCoders \
    -o "$out/fuzz-decoder" \
    Fuzz/FuzzTarget.swift Tests/DefaultsCoderTests/Coders/GeneratedValues.swift

echo "== Fuzzing for $seconds s"
# Foundation's PropertyListSerialization leaks on some inputs; leaks in this package's
# own code would show up under the test suite's address sanitizer pass instead.
# Swift's own backtracer trips AddressSanitizer after a fatalError; libFuzzer prints the stack.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$out/fuzz-decoder" "$out/corpus" Fuzz/corpus \
    -max_total_time="$seconds" -detect_leaks=0 -timeout=20 -rss_limit_mb=4096 \
    -max_len=8192 -artifact_prefix="$out/" -print_final_stats=1 "$@"
