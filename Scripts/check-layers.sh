#!/usr/bin/env bash
# The layers call only downwards, and the compiler says so: each layer's folder is
# type-checked together with the layers below it and nothing above, as a module of its
# own, so a reference to a higher layer does not compile. From the bottom:
#   Coders/ → StoredForm/ → Suite/ → Keys/ → Migration/ → Sync/
# And no line of the coders' code (comments aside) names UserDefaults.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swiftc >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi

layers=(Coders StoredForm Suite Keys Migration Sync)
files=()
for layer in "${layers[@]}"; do
    # A layer's folder with its subfolders (the suite's Linux file, its plist readers).
    while IFS= read -r file; do files+=("$file"); done < <(find Sources/DefaultsCoder/"$layer" -name '*.swift' | sort)
    swiftc -typecheck -parse-as-library -module-name "Through$layer" -package-name DefaultsCoder -swift-version 6 \
        -enable-upcoming-feature ExistentialAny "${files[@]}"
    echo "$layer compiles with the layers below it alone"
done

if grep -nE "UserDefaults|StoredForm|Suite" Sources/DefaultsCoder/Coders/*.swift | grep -vE '^[^:]+:[0-9]+:\s*//'; then
    echo "the coders name another layer (above)" >&2
    exit 1
fi
echo "the coders name no other layer"
