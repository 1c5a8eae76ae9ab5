#!/usr/bin/env bash
# Builds the DocC documentation of the DefaultsCoder target with warnings treated as
# errors (an unresolved link, a broken topic), checks that every public symbol has a
# documentation comment, and renders a static site.
#
#   Scripts/build-docs.sh [OUTPUT [TARGETS [TRAITS]]]   # .build-docs, the three products, no trait
#   Scripts/build-docs.sh .build-docs-traits "DefaultsCoder DefaultsCoderConfiguration" SwiftConfiguration,OpenCombine
#   SYMBOL_GRAPHS=DIR Scripts/build-docs.sh …   # from the graphs another build emitted (.ci/run)
#   python3 -m http.server --directory .build-docs/site/DefaultsCoder 8000
#   open http://localhost:8000/documentation/defaultscoder/
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
output="${1:-.build-docs}"
read -r -a targets <<< "${2:-DefaultsCoder DefaultsCoderSync DefaultsCoderTesting}"
traits=()
if [ -n "${3:-}" ]; then traits=(--traits "$3"); fi
source Scripts/symbol-graph-flags.sh
graphs="$output/symbol-graphs"
case "$graphs" in /*) ;; *) graphs="$PWD/$graphs" ;; esac # the compiler writes there from elsewhere
# From nothing each time: a build that finds nothing to compile emits no symbol graphs.
# A scratch path of its own, so that the symbol-graph flags do not make the next plain
# `swift build` start again from nothing either. Targets share it: each compiles only
# what the ones before it did not.
rm -rf "$output"
mkdir -p "$graphs" "$output/site"
# SYMBOL_GRAPHS: the graphs another build with the same traits emitted (with
# Scripts/symbol-graph-flags.sh's flags), as .ci/run's sanitizer builds do; a target whose
# graph is not there is built here.
if [ -n "${SYMBOL_GRAPHS:-}" ] && [ -d "$SYMBOL_GRAPHS" ]; then
    find "$SYMBOL_GRAPHS" -maxdepth 1 -name '*.symbols.json' -exec cp {} "$graphs/" \;
fi

for target in "${targets[@]}"; do
    if [ ! -e "$graphs/$target.symbols.json" ]; then
        swift build --target "$target" ${traits[@]+"${traits[@]}"} --scratch-path "$output/build" "${symbol_graph_flags[@]}" "$graphs"
    fi
    # The target's own graphs (its module, and its extensions of other modules): building
    # it also compiles, and emits graphs for, the modules it depends on.
    mkdir -p "$graphs/$target"
    find "$graphs" -maxdepth 1 \( -name "$target.symbols.json" -o -name "$target@*.symbols.json" \) -exec mv {} "$graphs/$target/" \;
    python3 Scripts/check-doc-comments.py "$graphs/$target"

    docc convert "Sources/$target/$target.docc" \
        --additional-symbol-graph-dir "$graphs/$target" \
        --fallback-display-name "$target" \
        --fallback-bundle-identifier "org.defaultscoder.$target" \
        --warnings-as-errors \
        --transform-for-static-hosting \
        --output-path "$output/site/$target"
    echo "documentation: $output/site/$target (open documentation/$(echo "$target" | tr '[:upper:]' '[:lower:]')/ under a local web server)"
done
