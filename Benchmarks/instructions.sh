#!/usr/bin/env bash
# Instruction counts of the coder and UserDefaults workloads, with valgrind's callgrind:
# repeatable to the instruction for the same build (the defaults-* workloads read and
# write a suite's file and vary by a few million). Prints, per workload, the
# instructions of ROUNDS rounds (default 20) minus those of a run that only sets up,
# then the ratios of the performance targets.
#
#   cd Benchmarks && ./instructions.sh [ROUNDS]
#   WORKLOADS="users-encode users-encode-hand" ./instructions.sh
set -euo pipefail
cd "$(dirname "$0")"
rounds="${1:-20}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
swift build -c release --product InstructionCounts >/dev/null
binary="$(swift build -c release --show-bin-path)/InstructionCounts"
count() {
    # Deterministic hashing: a dictionary's seed otherwise mixes in its storage's
    # address, so that any change to the code moves collisions, and counts, by ±1%.
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
all="users-encode users-encode-hand users-encode-floor users-decode users-decode-hand users-decode-floor users-encode-reusing-boxes users-decode-reusing-boxes
settings-encode settings-encode-hand settings-encode-floor settings-decode settings-decode-hand settings-decode-floor wide-encode wide-encode-hand wide-decode wide-decode-any wide-decode-any-hand
deep-encode deep-decode
defaults-write defaults-set-tree defaults-blob-write defaults-read defaults-blob-read defaults-subscript-read
defaults-tree-decode defaults-object defaults-write-typed defaults-write-observed"
declare -A work
printf '| workload (%s rounds) | instructions |\n|---|---:|\n' "$rounds"
for workload in ${WORKLOADS:-$all}; do
    work[$workload]=$(( $(count "$workload" "$rounds") - $(count "$workload" 0) ))
    printf '| %s | %s |\n' "$workload" "${work[$workload]}"
done
ratio() {  # NAME NUMERATOR DENOMINATOR TARGET
    if [[ -n "${work[$2]:-}" && -n "${work[$3]:-}" ]]; then
        printf '| %s | %s |  %s |\n' "$1" "$(awk -v a="${work[$2]}" -v b="${work[$3]}" 'BEGIN { printf "%.2f×", a / b }')" "$4"
    fi
}
printf '\n| ratio, in instructions | value | target |\n|---|---:|---:|\n'
ratio "Users encode ÷ hand-written" users-encode users-encode-hand "≤ 1.8 (wall clock)"
ratio "Users decode ÷ hand-written" users-decode users-decode-hand "≤ 2.1 (wall clock)"
ratio "Settings encode ÷ hand-written" settings-encode settings-encode-hand "≤ 2.5"
ratio "Settings decode ÷ hand-written" settings-decode settings-decode-hand "≤ 2.5"
ratio "Users encode, floor Codable ÷ hand-written" users-encode-floor users-encode-hand ""
ratio "Users decode, floor Codable ÷ hand-written" users-decode-floor users-decode-hand ""
ratio "Settings encode, floor Codable ÷ hand-written" settings-encode-floor settings-encode-hand ""
ratio "Settings decode, floor Codable ÷ hand-written" settings-decode-floor settings-decode-hand ""
ratio "Settings encode ÷ floor Codable" settings-encode settings-encode-floor "≤ 1.3 (wall clock)"
ratio "Settings decode ÷ floor Codable" settings-decode settings-decode-floor "≤ 1.3 (wall clock)"
ratio "Users encode ÷ floor Codable" users-encode users-encode-floor ""
ratio "Users decode ÷ floor Codable" users-decode users-decode-floor ""
ratio "Users encode, floor reusing boxes (not a floor) ÷ hand-written" users-encode-reusing-boxes users-encode-hand ""
ratio "Users decode, floor reusing boxes (not a floor) ÷ hand-written" users-decode-reusing-boxes users-decode-hand ""
ratio "[String: Double] encode ÷ hand-written" wide-encode wide-encode-hand "≤ 3.0"
ratio "[String: Double] decode of a [String: Any] ÷ hand-written" wide-decode-any wide-decode-any-hand "≤ 2.0"
ratio "encode(_:forKey:) ÷ Foundation set(tree) + synchronize" defaults-write defaults-set-tree "≤ 1.1"
ratio "encode(_:forKey:) ÷ Data blob + synchronize" defaults-write defaults-blob-write ""
ratio "decode(_:forKey:) ÷ PropertyListDecoder(data(forKey:))" defaults-read defaults-blob-read "≤ 0.8"
ratio "subscript read ÷ PropertyListDecoder(data(forKey:))" defaults-subscript-read defaults-blob-read "≤ 0.8"
ratio "subscript read ÷ decode(_:forKey:)" defaults-subscript-read defaults-read "≤ 1.1"
ratio "subscript write, 1 observer ÷ without" defaults-write-observed defaults-write-typed "≤ 1.5"
