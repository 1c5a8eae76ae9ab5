#!/usr/bin/env bash
# Builds the DocC documentation of the DefaultsCoder target with warnings treated as
# errors (an unresolved link, a broken topic), checks that every public symbol has a
# documentation comment, and renders a static site.
#
#   Scripts/build-docs.sh [OUTPUT [TARGET [TRAITS]]]   # .build-docs, DefaultsCoder, no trait
#   Scripts/build-docs.sh .build-docs-configuration DefaultsCoderConfiguration SwiftConfiguration
#   python3 -m http.server --directory .build-docs/site 8000
#   open http://localhost:8000/documentation/defaultscoder/
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
output="${1:-.build-docs}"
target="${2:-DefaultsCoder}"
traits=()
if [ -n "${3:-}" ]; then traits=(--traits "$3"); fi
graphs="$output/symbol-graphs"
# From nothing each time: a build that finds nothing to compile emits no symbol graphs.
# A scratch path of its own, so that the symbol-graph flags do not make the next plain
# `swift build` start again from nothing either.
rm -rf "$output"
mkdir -p "$graphs"

swift build --target "$target" ${traits[@]+"${traits[@]}"} --scratch-path "$output/build" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -emit-extension-block-symbols
# The target's own graphs (its module, and its extensions of other modules): building it
# also compiles, and emits graphs for, the modules it depends on.
mkdir -p "$graphs/$target"
find "$graphs" -maxdepth 1 \( -name "$target.symbols.json" -o -name "$target@*.symbols.json" \) -exec mv {} "$graphs/$target/" \;
graphs="$graphs/$target"
python3 Scripts/check-doc-comments.py "$graphs"

docc convert "Sources/$target/$target.docc" \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name "$target" \
    --fallback-bundle-identifier "org.defaultscoder.$target" \
    --warnings-as-errors \
    --transform-for-static-hosting \
    --output-path "$output/site"
echo "documentation: $output/site (open documentation/defaultscoder/ under a local web server)"
