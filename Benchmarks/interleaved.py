#!/usr/bin/env python3
"""Wall clock of `Instructions/` workloads, interleaved: each workload is run N rounds
and 0 rounds in turn, REPS times, and the minimum of each is kept; the difference is the
time of the work alone. Interleaving and minimums let a shared machine's drift hit
every workload alike. A workload written `BINARY:workload` runs another build's binary
(a baseline built in a `git worktree`), to compare before and after in one run.

    cd Benchmarks && swift build -c release --product InstructionCounts
    python3 interleaved.py 300 9 users-decode users-decode-floor users-decode-hand
    python3 interleaved.py 300 9 /tmp/base/Benchmarks/.build/release/InstructionCounts:users-decode users-decode

Prints milliseconds per round and each workload's ratio to the last one given."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.path.join(HERE, ".build", "release", "InstructionCounts")


def run(spec, rounds):
    binary, _, workload = spec.rpartition(":")
    start = time.perf_counter()
    subprocess.run([binary or BINARY, workload, str(rounds)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, reps, specs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    best = {}
    for _ in range(reps):
        for spec in specs:
            for count in (0, rounds):
                elapsed = run(spec, count)
                best[(spec, count)] = min(best.get((spec, count), elapsed), elapsed)
    per_round = {spec: (best[(spec, rounds)] - best[(spec, 0)]) / rounds * 1e3 for spec in specs}
    for spec in specs:
        print(f"{spec:40s} {per_round[spec]:.4f} ms  {per_round[spec] / per_round[specs[-1]]:.2f}×")


if __name__ == "__main__":
    main()
