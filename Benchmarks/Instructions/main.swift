// Runs one workload a given number of times, for `valgrind --tool=callgrind`: instruction
// counts repeat exactly from run to run, where wall-clock medians on a shared machine
// do not. `instructions.sh` runs every workload twice (N rounds and none) and prints
// the difference, the instructions of N rounds of the work alone.

import DefaultsCoder
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let rounds = Int(arguments[2]) else {
    print("usage: InstructionCounts WORKLOAD ROUNDS")
    exit(2)
}
/// Whether, decoded by `decode`, the first of two values that keep their keyed container
/// still reads its own entry through it once the second is decoded.
func keptContainerReadsOwnValue(_ decode: ([Keeper].Type, Any) throws -> [Keeper]) throws -> Bool {
    let keepers = try decode([Keeper].self, [["value": 1] as [String: Any], ["value": 2] as [String: Any]] as [Any])
    return try keepers[0].container.decode(Int.self, forKey: .value) == 1
}

/// A value that keeps its keyed container, to read from it later.
struct Keeper: Decodable {
    enum CodingKeys: String, CodingKey { case value }
    let container: KeyedDecodingContainer<CodingKeys>
    init(from decoder: any Decoder) throws { container = try decoder.container(keyedBy: CodingKeys.self) }
}

let encoder = KeyValueEncoder()
let decoder = KeyValueDecoder()
let usersTree = try encoder.encode(users)!
let settingsTree = try encoder.encode(settings)!
// Each competitor decodes the tree its own encoder made, as in the benchmarks.
let handUsersTree = HandWritten.encode(users)
// The big trees, made only for their workloads (and before the rounds).
let isBig = arguments[1].hasPrefix("records") || arguments[1].hasPrefix("plist")
let recordsTree: Any = isBig ? try encoder.encode(records)! : [Any]()
let handRecordsTree: Any = isBig ? HandWritten.encode(records) : [Any]()
let floorRecordsTree: Any = isBig ? try FloorEncoder.encode(records)! : [Any]()
if arguments[1].hasPrefix("plist") { _ = parsedRecords }
let handSettingsTree = HandWritten.encode(settings)
let floorUsersTree = try FloorEncoder.encode(users)!
let floorSettingsTree = try FloorEncoder.encode(settings)!
// The floor makes trees this package reads, and reads this package's trees: a fair floor.
precondition(PropertyListValue(floorUsersTree) == PropertyListValue(usersTree), "floor Users tree")
let floorUsers = try FloorDecoder.decode([User].self, from: usersTree)
let floorSettings = try FloorDecoder.decode(Settings.self, from: settingsTree)
let settingsFromFloor = try decoder.decode(Settings.self, from: floorSettingsTree)
precondition(floorUsers == users && floorSettings == settings && settingsFromFloor == settings, "floor round trips")
let usersReusingBoxes = try FloorDecoder.decodeReusingBoxes([User].self, from: usersTree)
let usersTreeReusingBoxes = try FloorEncoder.encodeReusingBoxes(users)!
precondition(PropertyListValue(usersTreeReusingBoxes) == PropertyListValue(usersTree), "reusing boxes Users tree")
// Why reusing boxes is not a floor: a container kept past its value must read its own.
let floorKeeps = try keptContainerReadsOwnValue { try FloorDecoder.decode($0, from: $1) }
let reusingBoxesKeeps = try keptContainerReadsOwnValue { try FloorDecoder.decodeReusingBoxes($0, from: $1) }
let packageKeeps = try keptContainerReadsOwnValue { try decoder.decode($0, from: $1) }
precondition(usersReusingBoxes == users && floorKeeps && packageKeeps && !reusingBoxesKeeps, "reusing boxes")
let wideTree = try encoder.encode(wideDoubles)!
// The same values as a `[String: Any]`, as Foundation and hand-written code hand them over.
let anyWideTree = HandWritten.encode(wideDoubles)
let deepTree = try encoder.encode(deep64)!
var sink = 0
/// Keeps a whole result alive, so that the optimizer cannot drop the parts of a
/// hand-written conversion that `sink` does not read.
@inline(never) func keep<T>(_ value: T) -> Int { withExtendedLifetime(value) { 1 } }
/// Hands back its argument where the optimizer cannot see it, so that work on an input
/// that does not change from round to round is not hoisted out of the loop.
@inline(never) @_optimize(none) func opaque<T>(_ value: T) -> T { value }
let defaults = UserDefaults(suiteName: "defaults-coder-instructions")!
for index in 0..<20 { defaults.set("filler \(index)", forKey: "filler.\(index)") }
try defaults.encode(settings, forKey: "native")
// The tree as Swift collections, as the package hands it to Foundation (what
// object(forKey:) returns wraps every value in an Optional, which set would unwrap).
let storedTree = swiftTree(defaults.object(forKey: "native")!)
let foundationTree = defaults.object(forKey: "native")!
defaults.set(try PropertyListEncoder().encode(settings), forKey: "blob")
defaults[DefaultsKey<Settings?>("typed")] = settings
// Two values in turn, for writes that change what is stored (Foundation writes nothing
// for a value it already holds, and neither does the package).
var otherSettings = settings
otherSettings.launchCount += 1
let alternating = [settings, otherSettings]
var turn = 0
// Foundation's announcement of a change with 1 or 400 observed suites (issue 53).
let announcedSuites = (0..<(["announce-1": 1, "announce-400": 400][arguments[1]] ?? 0)).map { index in
    UserDefaults(suiteName: "defaults-coder-instructions-announced-\(index)")!
}
let announcedObservations = announcedSuites.map { $0.observe(DefaultsKey<Int?>("announced")) { _, new in _ = new } }
// 1 or 1,000 observers of other keys, for the workloads that measure what they add to a write
// (the hearing of each write on the watcher's thread included: instruction counts and
// CPU time take every thread).
let othersObserved = (0..<(["defaults-write-others-observed": 1_000, "defaults-write-other-observed": 1][arguments[1]] ?? 0)).map { index in
    defaults.observe(DefaultsKey<Int?>("other.\(index)")) { _, new in _ = new }
}

// 1,000 other suites the process has opened and read, as a process that opens a suite
// per account or per document has: on Linux every `synchronize()` goes through each suite
// Foundation has opened, for the package's writes and the Data-blob habit's alike.
let otherSuites = (0..<(arguments[1].hasSuffix("-1000-suites") ? 1_000 : 0)).map { index in
    let suite = UserDefaults(suiteName: "defaults-coder-instructions-other-\(index)")!
    sink &+= suite.object(forKey: "absent") == nil ? 1 : 0
    return suite
}

// A writer whose every change is handed to one observer of its key: the delivery's cost.
let nativeObserved = arguments[1] == "defaults-write-changing-observed" ? defaults.observe(DefaultsKey<Settings?>("native")) { _, new in _ = new } : nil

for _ in 0..<rounds {
    switch arguments[1] {
    case "users-encode": sink &+= (try encoder.encode(users) as? [Any])?.count ?? 0
    case "records-encode": sink &+= (try encoder.encode(records) as? [Any])?.count ?? 0
    case "records-encode-hand": sink &+= HandWritten.encode(opaque(records)).count
    case "records-decode": sink &+= keep(try decoder.decode([User].self, from: recordsTree))
    case "records-encode-floor": sink &+= keep(try FloorEncoder.encode(opaque(records)))
    case "records-decode-floor": sink &+= keep(try FloorDecoder.decode([User].self, from: opaque(floorRecordsTree)))
    case "records-decode-hand": sink &+= keep(try HandWritten.decodeUsers(opaque(handRecordsTree)))
    case "plist-decode": sink &+= keep(try decoder.decode([User].self, from: parsedRecords))
    case "plist-decode-hand": sink &+= keep(try HandWritten.decodeUsers(opaque(parsedRecords)))
    case "users-decode": sink &+= keep(try decoder.decode([User].self, from: usersTree))
    case "settings-encode":
        for _ in 0..<50 { sink &+= (try encoder.encode(settings) as? [String: Any])?.count ?? 0 }
    case "settings-decode":
        for _ in 0..<50 { sink &+= keep(try decoder.decode(Settings.self, from: settingsTree)) }
    case "wide-encode": sink &+= keep(try encoder.encode(wideDoubles))
    case "wide-encode-hand": sink &+= keep(HandWritten.encode(opaque(wideDoubles)))
    case "wide-decode": sink &+= try decoder.decode([String: Double].self, from: wideTree).count
    case "wide-decode-any": sink &+= try decoder.decode([String: Double].self, from: anyWideTree).count
    case "wide-decode-any-hand": sink &+= try HandWritten.decodeDoubles(opaque(anyWideTree)).count
    case "deep-encode":
        for _ in 0..<20 { sink &+= (try encoder.encode(deep64) as? [String: Any])?.count ?? 0 }
    case "deep-decode":
        for _ in 0..<20 { if case .node = try decoder.decode(Nested.self, from: deepTree) { sink &+= 1 } }
    case "users-encode-floor": sink &+= keep(try FloorEncoder.encode(opaque(users)))
    case "users-encode-reusing-boxes": sink &+= keep(try FloorEncoder.encodeReusingBoxes(opaque(users)))
    case "users-decode-reusing-boxes": sink &+= keep(try FloorDecoder.decodeReusingBoxes([User].self, from: opaque(floorUsersTree)))
    case "users-decode-floor": sink &+= keep(try FloorDecoder.decode([User].self, from: opaque(floorUsersTree)))
    case "settings-encode-floor":
        for _ in 0..<50 { sink &+= keep(try FloorEncoder.encode(opaque(settings))) }
    case "settings-decode-floor":
        for _ in 0..<50 { sink &+= keep(try FloorDecoder.decode(Settings.self, from: opaque(floorSettingsTree))) }
    case "users-encode-hand": sink &+= HandWritten.encode(opaque(users)).count
    case "users-decode-hand": sink &+= keep(try HandWritten.decodeUsers(opaque(handUsersTree)))
    case "settings-encode-hand":
        for _ in 0..<50 { sink &+= keep(HandWritten.encode(opaque(settings))) }
    case "settings-decode-hand":
        for _ in 0..<50 { sink &+= keep(try HandWritten.decodeSettings(opaque(handSettingsTree))) }
    case "defaults-blob-write":
        // The Data-blob habit, with the synchronize() the package does on Linux.
        for _ in 0..<10 {
            defaults.set(try PropertyListEncoder().encode(settings), forKey: "blob")
            defaults.synchronize()
        }
    case "defaults-blob-read":
        for _ in 0..<10 { sink &+= try PropertyListDecoder().decode(Settings.self, from: defaults.data(forKey: "blob")!).retries }
    case "defaults-subscript-read":
        let typed = DefaultsKey<Settings?>("typed")
        for _ in 0..<10 { sink &+= defaults[typed]?.retries ?? 0 }
    case "defaults-write":
        for _ in 0..<10 { try defaults.encode(settings, forKey: "native") }
    case "defaults-write-changing", "defaults-write-changing-observed", "defaults-write-other-observed", "defaults-write-others-observed",
        "defaults-write-changing-1000-suites":
        for _ in 0..<10 {
            turn += 1
            try defaults.encode(alternating[turn % 2], forKey: "native")
        }
    case "defaults-blob-write-changing", "defaults-blob-write-changing-1000-suites":
        for _ in 0..<10 {
            turn += 1
            defaults.set(try PropertyListEncoder().encode(alternating[turn % 2]), forKey: "blob")
            defaults.synchronize()
        }
    case "defaults-set-tree":
        // Foundation's own write of the same tree, as the package writes it.
        for _ in 0..<10 {
            defaults.set(storedTree, forKey: "native")
            defaults.synchronize()
        }
    case "defaults-read":
        for _ in 0..<10 { sink &+= try defaults.decode(Settings.self, forKey: "native")?.retries ?? 0 }
    case "defaults-tree-decode":
        // The decoder alone, on the tree object(forKey:) returns.
        for _ in 0..<10 { sink &+= try decoder.decode(Settings.self, from: foundationTree).retries }
    case "defaults-write-observed", "defaults-write-typed":
        // A typed write, with one observer attached or none: what the observer adds.
        let typed = DefaultsKey<Settings?>("typed")
        let observation = arguments[1] == "defaults-write-typed" ? nil : defaults.observe(typed) { _, new in _ = new }
        for _ in 0..<10 { defaults[typed] = settings }
        observation?.cancel()
    case "announce-1", "announce-400":
        for _ in 0..<10 { NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: announcedSuites[0]) }
    case "defaults-object":
        for _ in 0..<10 { sink &+= defaults.object(forKey: "native") == nil ? 0 : 1 }
    default:
        print("unknown workload \(arguments[1])")
        exit(2)
    }
}
for observation in othersObserved + announcedObservations { observation.cancel() }
nativeObserved?.cancel()
withExtendedLifetime(otherSuites) {}
print(sink)
