#!/usr/bin/env bash
# The coders know nothing of UserDefaults, and the compiler says so: the files of
# Sources/DefaultsCoder/Coders/ are type-checked alone, as a module of their own, so a
# reference to the stored form, the suite, keys or migrations does not compile; and no
# line of their code (comments aside) names UserDefaults.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swiftc >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi

swiftc -typecheck -parse-as-library -module-name CodersAlone -swift-version 6 \
    -enable-upcoming-feature ExistentialAny Sources/DefaultsCoder/Coders/*.swift

if grep -nE "UserDefaults|StoredForm|Suite" Sources/DefaultsCoder/Coders/*.swift | grep -vE '^[^:]+:[0-9]+:\s*//'; then
    echo "the coders name another layer (above)" >&2
    exit 1
fi
echo "the coders compile alone and name no other layer"
