#!/usr/bin/env python3
"""Reads the text output of `swift package benchmark` and prints, per workload and
direction, each competitor's median wall clock and total mallocs with its ratio to
the hand-written floor. Usage: swift package benchmark --no-progress | python3 ratios.py"""
import re
import sys

UNITS = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
SCALE = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}

results = {}
name = None
for line in sys.stdin:
    line = line.rstrip("\n")
    if re.match(r"^\S.* (encode|decode|write|read): .+$", line):
        name = line.strip()
        results[name] = {}
        continue
    if name is None or not line.startswith("│"):
        continue
    cells = [c.strip() for c in line.strip("│").split("│")]
    if len(cells) < 4:
        continue
    metric = cells[0]
    m = re.match(r"Time \(wall clock\) \((\w+)\)", metric)
    if m:
        results[name]["time_us"] = float(cells[3]) * UNITS[m.group(1)]
    if metric.startswith("Ratio (thousandths)"):
        results[name]["ratio"] = float(cells[3]) / 1000
    m = re.match(r"Malloc \(total\)(?: \((\w)\))?", metric)
    if m:
        results[name]["mallocs"] = float(cells[3]) * SCALE[m.group(1) or ""]

def fmt_time(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} µs"

groups = {}
for full, values in results.items():
    if "ratio" in values:
        continue
    m = re.match(r"^(.* (?:encode|decode|write|read)): (.*)$", full)
    group, competitor = m.group(1), m.group(2)
    groups.setdefault(group, {})[competitor] = values

print("| workload | competitor | median time | × hand-written | mallocs | × hand-written |")
print("|---|---|---:|---:|---:|---:|")
for group, competitors in groups.items():
    floor = competitors.get("HandWritten")
    for competitor, values in competitors.items():
        t, a = values.get("time_us"), values.get("mallocs")
        rt = f"{t / floor['time_us']:.2f}×" if floor and t else ""
        ra = f"{a / floor['mallocs']:.2f}×" if floor and a and floor.get("mallocs") else ""
        print(f"| {group} | {competitor} | {fmt_time(t) if t else ''} | {rt} | {int(a) if a is not None else ''} | {ra} |")

# The UserDefaults layer against Foundation and the Data-blob habit, from the same run.
def median(name):
    return results.get(name, {}).get("time_us")

layer = [
    ("encode(_:forKey:) ÷ Foundation set(tree) + synchronize",
     "Settings defaults write: DefaultsCoder encode(_:forKey:)", "Settings defaults write: Foundation set(tree) + synchronize", "≤ 1.10"),
    ("encode(_:forKey:) ÷ set(PropertyListEncoder Data) + synchronize",
     "Settings defaults write: DefaultsCoder encode(_:forKey:)", "Settings defaults write: set(PropertyListEncoder Data) + synchronize", ""),
    ("decode(_:forKey:) ÷ PropertyListDecoder(data(forKey:))",
     "Settings defaults read: DefaultsCoder decode(_:forKey:)", "Settings defaults read: PropertyListDecoder(data(forKey:))", "≤ 0.80"),
    ("subscript read ÷ PropertyListDecoder(data(forKey:))",
     "Settings defaults read: DefaultsCoder subscript[key]", "Settings defaults read: PropertyListDecoder(data(forKey:))", "≤ 0.80"),
    ("subscript read ÷ decode(_:forKey:)",
     "Settings defaults read: DefaultsCoder subscript[key]", "Settings defaults read: DefaultsCoder decode(_:forKey:)", "≤ 1.10"),
    ("write with one observer ÷ write without",
     "Settings defaults write: DefaultsCoder subscript[key], 1 observer", "Settings defaults write: DefaultsCoder subscript[key]", "≤ 1.50"),
]
rows = [(label, median(a), median(b), target) for label, a, b, target in layer if median(a) and median(b)]
if rows:
    print()
    print("| UserDefaults layer | ratio | target |")
    print("|---|---:|---:|")
    for label, a, b, target in rows:
        print(f"| {label} | {a / b:.2f}× | {target} |")

# The ratio benchmarks: A ÷ B taken within each iteration, so the machine's drift between
# benchmarks cannot skew them. These are the numbers the targets are checked against.
TARGETS = {
    "Users ratio encode: KeyValueCoder ÷ HandWritten": "≤ 1.8", "Users ratio decode: KeyValueCoder ÷ HandWritten": "≤ 2.1",
    "Settings ratio encode: KeyValueCoder ÷ HandWritten": "≤ 2.5", "Settings ratio decode: KeyValueCoder ÷ HandWritten": "≤ 2.5",
    "Settings ratio encode: KeyValueCoder ÷ Floor Codable": "≤ 1.3", "Settings ratio decode: KeyValueCoder ÷ Floor Codable": "≤ 1.3",
    "Wide [String: Double] ratio encode": "≤ 3.0", "from [String: Any] ratio decode": "≤ 2.0",
    "encode(_:forKey:) ÷ Foundation set(tree) + synchronize": "≤ 1.1",
    "decode(_:forKey:) ÷ PropertyListDecoder(data(forKey:))": "≤ 0.8",
    "subscript ÷ PropertyListDecoder(data(forKey:))": "≤ 0.8",
    "subscript ÷ decode(_:forKey:)": "≤ 1.1",
    "subscript with 1 observer ÷ without": "≤ 1.5",
}
paired = [(name, values["ratio"]) for name, values in results.items() if "ratio" in values]
if paired:
    print()
    print("| ratio, taken within each iteration (median) | value | target |")
    print("|---|---:|---:|")
    for name, value in paired:
        target = next((t for key, t in TARGETS.items() if key in name), "")
        print(f"| {name} | {value:.2f}× | {target} |")

