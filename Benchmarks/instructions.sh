#!/usr/bin/env bash
# Instruction counts of the coder workloads, with valgrind's callgrind: repeatable to the
# instruction for the same build. Prints, per workload, the instructions of ROUNDS rounds
# (default 20) minus those of a run that only sets up.
#
#   cd Benchmarks && ./instructions.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")"
rounds="${1:-20}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
swift build -c release --product InstructionCounts >/dev/null
binary="$(swift build -c release --show-bin-path)/InstructionCounts"
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '| workload (%s rounds) | instructions |\n|---|---:|\n' "$rounds"
for workload in ${WORKLOADS:-users-encode users-decode settings-encode settings-decode wide-encode wide-decode deep-encode deep-decode defaults-write defaults-set-tree defaults-read defaults-tree-decode defaults-object}; do
    work=$(( $(count "$workload" "$rounds") - $(count "$workload" 0) ))
    printf '| %s | %s |\n' "$workload" "$work"
done
