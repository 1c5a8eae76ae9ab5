#!/usr/bin/env bash
# Builds the DocC documentation of the DefaultsCoder target with warnings treated as
# errors (an unresolved link, a broken topic), checks that every public symbol has a
# documentation comment, and renders a static site.
#
#   Scripts/build-docs.sh [OUTPUT]        # OUTPUT defaults to .build-docs
#   python3 -m http.server --directory .build-docs/site 8000
#   open http://localhost:8000/documentation/defaultscoder/
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
output="${1:-.build-docs}"
graphs="$output/symbol-graphs"
# From nothing each time: a build that finds nothing to compile emits no symbol graphs.
# A scratch path of its own, so that the symbol-graph flags do not make the next plain
# `swift build` start again from nothing either.
rm -rf "$output"
mkdir -p "$graphs"

swift build --target DefaultsCoder --scratch-path "$output/build" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -emit-extension-block-symbols
python3 Scripts/check-doc-comments.py "$graphs"

docc convert Sources/DefaultsCoder/DefaultsCoder.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name DefaultsCoder \
    --fallback-bundle-identifier org.defaultscoder.DefaultsCoder \
    --warnings-as-errors \
    --transform-for-static-hosting \
    --output-path "$output/site"
echo "documentation: $output/site (open documentation/defaultscoder/ under a local web server)"
