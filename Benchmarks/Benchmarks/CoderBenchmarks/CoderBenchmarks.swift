// Each workload is encoded and decoded by every competitor, on the same data.
// Run: cd Benchmarks && swift package benchmark

import Benchmark
import DefaultsCoder
import Foundation

/// One way of turning a model into an `Any` tree and back.
struct Competitor<T: Codable & Sendable>: Sendable {
    var name: String
    var encode: @Sendable (T) throws -> Any
    var decode: @Sendable (Any) throws -> T
}

func competitors<T: Codable & Sendable>(hand: Competitor<T>) -> [Competitor<T>] {
    // Metatypes are captured through a Sendable box (T.Type is not Sendable in Swift 6.2+).
    let type = TypeBox<T>()
    return [
        Competitor(
            name: "KeyValueCoder", encode: { try KeyValueEncoder().encode($0)! },
            decode: { try KeyValueDecoder().decode(type.type, from: $0) }),
        hand,
        Competitor(
            name: "PropertyList",
            encode: {
                try PropertyListSerialization.propertyList(from: PropertyListEncoder().encode($0), format: nil)
            },
            decode: {
                try PropertyListDecoder().decode(type.type, from: PropertyListSerialization.data(fromPropertyList: $0, format: .binary, options: 0))
            }),
        Competitor(
            name: "JSON",
            encode: {
                try JSONSerialization.jsonObject(with: JSONEncoder().encode($0))
            },
            decode: {
                try JSONDecoder().decode(type.type, from: JSONSerialization.data(withJSONObject: $0))
            }),
    ]
}

struct TypeBox<T>: @unchecked Sendable { var type: T.Type { T.self } }

/// The tree a competitor decodes from: made by that competitor's own encoder, once.
struct Tree: @unchecked Sendable { let value: Any }

func register<T: Codable & Sendable>(_ workload: String, _ value: T, hand: Competitor<T>, metrics: [BenchmarkMetric]) {
    let configuration = Benchmark.Configuration(metrics: metrics, maxDuration: .seconds(2), maxIterations: 5_000)
    for competitor in competitors(hand: hand) {
        Benchmark("\(workload) encode: \(competitor.name)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try competitor.encode(value))
            }
        }
        let tree = Tree(value: try! competitor.encode(value))
        Benchmark("\(workload) decode: \(competitor.name)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try competitor.decode(tree.value))
            }
        }
    }
}

/// The custom metric of the ratio benchmarks: A ÷ B in thousandths.
let ratioMetric = BenchmarkMetric.custom("Ratio (thousandths)", polarity: .prefersSmaller, useScalingFactor: false)

/// A benchmark that times `a` and `b` in every iteration and records `a ÷ b`: on a
/// shared machine whose speed drifts between benchmarks, only a ratio taken within one
/// iteration compares like with like. Which runs first alternates, so that neither
/// always finds the caches as the other left them. The median of these is what
/// `ratios.py` reports.
///
/// Work that consumes its input (removing every key of a suite) passes `setup`, which
/// runs before each side, outside the measurement, with fewer, longer iterations.
func ratio(
    _ name: String, setup: (() throws -> Void)? = nil, _ a: @escaping () throws -> Void, _ b: @escaping () throws -> Void,
    maxIterations: Int? = nil
) {
    let clock = ContinuousClock()
    timedRatio(
        name, long: setup != nil,
        {
            try setup?()
            return try clock.measure(a)
        },
        {
            try setup?()
            return try clock.measure(b)
        }, maxIterations: maxIterations)
}

/// `ratio`, where each side times itself: the part worth timing is not the whole of it
/// (hearing a write, after a burst of files that is not part of hearing).
func timedRatio(
    _ name: String, long: Bool, _ a: @escaping () throws -> Duration, _ b: @escaping () throws -> Duration, maxIterations: Int? = nil
) {
    // One sample of work that takes minutes: no warm-up round either.
    let configuration = Benchmark.Configuration(
        metrics: [ratioMetric], warmupIterations: maxIterations == 1 ? 0 : 1, maxDuration: .seconds(long ? 30 : 2),
        maxIterations: maxIterations ?? (long ? 20 : 1_000))
    Benchmark(name, configuration: configuration) { benchmark in
        var aFirst = true
        for _ in benchmark.scaledIterations {
            var (timeA, timeB) = (Duration.zero, Duration.zero)
            if aFirst {
                timeA = try a()
                timeB = try b()
            } else {
                timeB = try b()
                timeA = try a()
            }
            aFirst.toggle()
            benchmark.measurement(ratioMetric, Int((timeA / timeB * 1_000).rounded()))
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    let standard: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]

    register("Users", users, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeUsers($0) }), metrics: standard)
    register("Settings", settings, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeSettings($0) }), metrics: standard)
    register(
        "Wide [Int]", wideInts, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeInts($0) }),
        metrics: standard + [.peakMemoryResident])
    register(
        "Wide [String: Double]", wideDoubles, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeDoubles($0) }),
        metrics: standard + [.peakMemoryResident])
    register("Deep 8", deep8, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeNested($0) }), metrics: standard)
    register("Deep 64", deep64, hand: Competitor(name: "HandWritten", encode: { HandWritten.encode($0) }, decode: { try HandWritten.decodeNested($0) }), metrics: standard)

    // The targets' ratios, each taken within one iteration (see `ratio`).
    let usersTree = Tree(value: try! KeyValueEncoder().encode(users)!)
    let handUsersTree = Tree(value: HandWritten.encode(users))
    let settingsTree = Tree(value: try! KeyValueEncoder().encode(settings)!)
    let handSettingsTree = Tree(value: HandWritten.encode(settings))
    ratio("Users ratio encode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueEncoder().encode(users)) }, { blackHole(HandWritten.encode(users)) })
    ratio(
        "Users ratio decode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueDecoder().decode([User].self, from: usersTree.value)) },
        { blackHole(try HandWritten.decodeUsers(handUsersTree.value)) })
    // A [String: Double] that arrives as a [String: Any], as Foundation and hand-written
    // code hand one over (the coder's own tree is a [String: Double], passed through).
    let anyDoubles = Tree(value: HandWritten.encode(wideDoubles))
    let wideConfiguration = Benchmark.Configuration(metrics: standard, maxDuration: .seconds(2), maxIterations: 5_000)
    Benchmark("Wide [String: Double] from [String: Any] decode: KeyValueCoder", configuration: wideConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try KeyValueDecoder().decode([String: Double].self, from: anyDoubles.value)) }
    }
    Benchmark("Wide [String: Double] from [String: Any] decode: HandWritten", configuration: wideConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try HandWritten.decodeDoubles(anyDoubles.value)) }
    }
    ratio(
        "Wide [String: Double] ratio encode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueEncoder().encode(wideDoubles)) },
        { blackHole(HandWritten.encode(wideDoubles)) })
    ratio(
        "Wide [String: Double] from [String: Any] ratio decode: KeyValueCoder ÷ HandWritten",
        { blackHole(try KeyValueDecoder().decode([String: Double].self, from: anyDoubles.value)) }, { blackHole(try HandWritten.decodeDoubles(anyDoubles.value)) })
    ratio("Settings ratio encode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueEncoder().encode(settings)) }, { blackHole(HandWritten.encode(settings)) })
    ratio(
        "Settings ratio decode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueDecoder().decode(Settings.self, from: settingsTree.value)) },
        { blackHole(try HandWritten.decodeSettings(handSettingsTree.value)) })

    // Big trees (issue 54): 10,000 records, and the same from a 5 MB plist Foundation
    // parsed. The bytes malloc'd per iteration bound the memory a coder's peak adds:
    // the hand-written encode's are the tree's own.
    let big: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .mallocBytesCount]
    let bigConfiguration = Benchmark.Configuration(metrics: big, maxDuration: .seconds(2), maxIterations: 200)
    let recordsTree = Tree(value: try! KeyValueEncoder().encode(records)!)
    let handRecordsTree = Tree(value: HandWritten.encode(records))
    let plistTree = Tree(value: parsedRecords)
    Benchmark("Records 10,000 encode: KeyValueCoder", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try KeyValueEncoder().encode(records)) }
    }
    Benchmark("Records 10,000 encode: HandWritten", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(HandWritten.encode(records)) }
    }
    Benchmark("Records 10,000 decode: KeyValueCoder", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try KeyValueDecoder().decode([User].self, from: recordsTree.value)) }
    }
    Benchmark("Records 10,000 decode: HandWritten", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try HandWritten.decodeUsers(handRecordsTree.value)) }
    }
    Benchmark("Plist 5 MB decode: KeyValueCoder", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try KeyValueDecoder().decode([User].self, from: plistTree.value)) }
    }
    Benchmark("Plist 5 MB decode: HandWritten", configuration: bigConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try HandWritten.decodeUsers(plistTree.value)) }
    }
    ratio(
        "Records 10,000 ratio encode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueEncoder().encode(records)) },
        { blackHole(HandWritten.encode(records)) }, maxIterations: 200)
    ratio(
        "Records 10,000 ratio decode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueDecoder().decode([User].self, from: recordsTree.value)) },
        { blackHole(try HandWritten.decodeUsers(handRecordsTree.value)) }, maxIterations: 200)
    ratio(
        "Plist 5 MB ratio decode: KeyValueCoder ÷ HandWritten", { blackHole(try KeyValueDecoder().decode([User].self, from: plistTree.value)) },
        { blackHole(try HandWritten.decodeUsers(plistTree.value)) }, maxIterations: 200)

    // The floor of Codable itself: a minimal coder of the same trees (FloorCoders.swift)
    // against the hand-written code, and this package against that floor.
    let floorUsersTree = Tree(value: try! FloorEncoder.encode(users)!)
    let floorSettingsTree = Tree(value: try! FloorEncoder.encode(settings)!)
    ratio("Users ratio encode: Floor Codable ÷ HandWritten", { blackHole(try FloorEncoder.encode(users)) }, { blackHole(HandWritten.encode(users)) })
    ratio("Users ratio encode: KeyValueCoder ÷ Floor Codable", { blackHole(try KeyValueEncoder().encode(users)) }, { blackHole(try FloorEncoder.encode(users)) })
    ratio(
        "Users ratio decode: Floor Codable ÷ HandWritten", { blackHole(try FloorDecoder.decode([User].self, from: floorUsersTree.value)) },
        { blackHole(try HandWritten.decodeUsers(handUsersTree.value)) })
    ratio(
        "Users ratio decode: KeyValueCoder ÷ Floor Codable", { blackHole(try KeyValueDecoder().decode([User].self, from: usersTree.value)) },
        { blackHole(try FloorDecoder.decode([User].self, from: floorUsersTree.value)) })
    // Not a floor: the floor handing out each depth's container box again, unchecked (a
    // kept container then reads or writes the next value's entries). What is left
    // between it and the floor is what Codable's one box per keyed container costs.
    ratio("Users ratio encode: Reusing boxes ÷ HandWritten", { blackHole(try FloorEncoder.encodeReusingBoxes(users)) }, { blackHole(HandWritten.encode(users)) })
    ratio(
        "Users ratio decode: Reusing boxes ÷ HandWritten", { blackHole(try FloorDecoder.decodeReusingBoxes([User].self, from: floorUsersTree.value)) },
        { blackHole(try HandWritten.decodeUsers(handUsersTree.value)) })
    ratio("Settings ratio encode: Floor Codable ÷ HandWritten", { blackHole(try FloorEncoder.encode(settings)) }, { blackHole(HandWritten.encode(settings)) })
    ratio("Settings ratio encode: KeyValueCoder ÷ Floor Codable", { blackHole(try KeyValueEncoder().encode(settings)) }, { blackHole(try FloorEncoder.encode(settings)) })
    ratio(
        "Settings ratio decode: Floor Codable ÷ HandWritten", { blackHole(try FloorDecoder.decode(Settings.self, from: floorSettingsTree.value)) },
        { blackHole(try HandWritten.decodeSettings(handSettingsTree.value)) })
    ratio(
        "Settings ratio decode: KeyValueCoder ÷ Floor Codable", { blackHole(try KeyValueDecoder().decode(Settings.self, from: settingsTree.value)) },
        { blackHole(try FloorDecoder.decode(Settings.self, from: floorSettingsTree.value)) })

    // The UserDefaults path: the package against the Data-blob habit.
    let configuration = Benchmark.Configuration(metrics: standard, maxDuration: .seconds(2), maxIterations: 2_000)
    let suite = "defaults-coder-benchmarks"
    let defaults = UserDefaults(suiteName: suite)!
    // The same suite in every run, as issue 13 measured it: whatever an earlier run or
    // experiment left in it would make every synchronize() read a different file.
    defaults.removePersistentDomain(forName: suite)
    for index in 0..<20 { defaults.set("filler \(index)", forKey: "filler.\(index)") }
    try! defaults.encode(settings, forKey: "native")
    defaults.set(try! PropertyListEncoder().encode(settings), forKey: "blob")
    defaults.synchronize()

    Benchmark("Settings defaults write: DefaultsCoder encode(_:forKey:)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { try defaults.encode(settings, forKey: "native") }
    }
    Benchmark("Settings defaults write: set(PropertyListEncoder Data)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { defaults.set(try PropertyListEncoder().encode(settings), forKey: "blob") }
    }
    Benchmark("Settings defaults write: set(PropertyListEncoder Data) + synchronize", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            defaults.set(try PropertyListEncoder().encode(settings), forKey: "blob")
            defaults.synchronize()
        }
    }
    // Foundation's own write and read of the same tree the package stores: what the
    // package adds on top of Foundation. (The tree as Swift collections, as the package
    // hands it over: what object(forKey:) returns wraps every value in an Optional,
    // which Foundation's set then has to unwrap again.)
    nonisolated(unsafe) let storedTree = swiftTree(defaults.object(forKey: "native")!)
    Benchmark("Settings defaults write: Foundation set(tree)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { defaults.set(storedTree, forKey: "foundation") }
    }
    Benchmark("Settings defaults write: Foundation set(tree) + synchronize", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            defaults.set(storedTree, forKey: "foundation")
            defaults.synchronize()
        }
    }
    Benchmark("Settings defaults read: Foundation object(forKey:)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults.object(forKey: "native")) }
    }
    Benchmark("Settings defaults read: DefaultsCoder decode(_:forKey:)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try defaults.decode(Settings.self, forKey: "native")) }
    }
    Benchmark("Settings defaults read: PropertyListDecoder(data(forKey:))", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try PropertyListDecoder().decode(Settings.self, from: defaults.data(forKey: "blob")!)) }
    }

    // Typed keys: the subscript, and what an observer adds to a write (it re-reads and
    // compares; the value written is the same each time, so no event is delivered).
    let typed = DefaultsKey<Settings?>("typed")
    defaults[typed] = settings
    Benchmark("Settings defaults write: DefaultsCoder subscript[key]", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { defaults[typed] = settings }
    }
    // The observer is made once, outside the measured closure: the plugin runs that
    // closure once per sample, and starting to observe reads and decodes the value.
    let observed = DefaultsKey<Settings?>("observed")
    defaults[observed] = settings
    let observation = defaults.observe(observed) { _, new in blackHole(new) }
    Benchmark("Settings defaults write: DefaultsCoder subscript[key], 1 observer", configuration: configuration) { benchmark in
        // The observation lives as long as the benchmarks that need it: they run after
        // this closure returns.
        withExtendedLifetime(observation) {}
        for _ in benchmark.scaledIterations { defaults[observed] = settings }
    }
    Benchmark("Settings defaults read: DefaultsCoder subscript[key]", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(defaults[typed]) }
    }

    // The UserDefaults layer's targets, each ratio taken within one iteration.
    ratio(
        "Settings defaults ratio write: encode(_:forKey:) ÷ Foundation set(tree) + synchronize",
        { try defaults.encode(settings, forKey: "native") },
        {
            defaults.set(storedTree, forKey: "foundation")
            defaults.synchronize()
        })
    // Against the Data-blob habit (issue 54): each side in a suite of its own, of the
    // same 20 keys and its value, so that neither reads the file the other just wrote.
    // The same value each time, which both leave unwritten, and two values in turn,
    // which both write.
    func suiteOfItsOwn(_ name: String, _ value: (UserDefaults) throws -> Void) -> UserDefaults {
        let own = UserDefaults(suiteName: name)!
        own.removePersistentDomain(forName: name)
        for index in 0..<20 { own.set("filler \(index)", forKey: "filler.\(index)") }
        try! value(own)
        own.synchronize()
        return own
    }
    let packageSuite = suiteOfItsOwn(suite + "-package") { try $0.encode(settings, forKey: "settings") }
    let blobSuite = suiteOfItsOwn(suite + "-blob") { $0.set(try PropertyListEncoder().encode(settings), forKey: "settings") }
    ratio(
        "Settings defaults ratio write: encode(_:forKey:) ÷ set(PropertyListEncoder Data) + synchronize",
        { try packageSuite.encode(settings, forKey: "settings") },
        {
            blobSuite.set(try PropertyListEncoder().encode(settings), forKey: "settings")
            blobSuite.synchronize()
        })
    var otherSettings = settings
    otherSettings.launchCount += 1
    let alternating = [settings, otherSettings]
    // A turn of each side's own: which side runs first alternates.
    nonisolated(unsafe) var turns = (package: 0, blob: 0)
    ratio(
        "Settings defaults ratio write, a changed value: encode(_:forKey:) ÷ set(PropertyListEncoder Data) + synchronize",
        {
            turns.package += 1
            try packageSuite.encode(alternating[turns.package % 2], forKey: "settings")
        },
        {
            turns.blob += 1
            blobSuite.set(try PropertyListEncoder().encode(alternating[turns.blob % 2]), forKey: "settings")
            blobSuite.synchronize()
        })
    // The floor of a crash-safe write on this file system: the same bytes, bare system
    // calls only (`FileFloor.swift`).
    let suiteFile = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/\(suite).plist")
    let floorBytes = (try? Data(contentsOf: suiteFile)).map { [UInt8]($0) } ?? [UInt8](repeating: 0x78, count: 3_000)
    let floorPath = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/defaults-coder-floor.plist").path
    ratio(
        "Suite file floor ratio write: atomic replace ÷ in-place rewrite",
        { FileFloor.replace(floorBytes, at: floorPath) },
        { FileFloor.rewrite(floorBytes, at: floorPath) })
    // The same write in a suite of 2,000 keys: each write reads and rewrites the file.
    let large = UserDefaults(suiteName: suite + "-2000")!
    large.removePersistentDomain(forName: suite + "-2000")
    for index in 0..<2_000 { large.set("filler \(index)", forKey: "filler.\(index)") }
    large.synchronize()
    ratio(
        "Settings defaults, 2,000 keys, ratio write: encode(_:forKey:) ÷ Foundation set(tree) + synchronize",
        { try large.encode(settings, forKey: "native") },
        {
            large.set(storedTree, forKey: "foundation")
            large.synchronize()
        })
    ratio(
        "Settings defaults ratio read: decode(_:forKey:) ÷ PropertyListDecoder(data(forKey:))",
        { blackHole(try defaults.decode(Settings.self, forKey: "native")) },
        { blackHole(try PropertyListDecoder().decode(Settings.self, from: defaults.data(forKey: "blob")!)) })
    ratio(
        "Settings defaults ratio read: subscript ÷ PropertyListDecoder(data(forKey:))",
        { blackHole(defaults[typed]) },
        { blackHole(try PropertyListDecoder().decode(Settings.self, from: defaults.data(forKey: "blob")!)) })
    // Would Foundation write faster if handed its own collection classes? (Issue 13's
    // question: below the Data-blob habit?)
    ratio(
        "Settings defaults ratio write: Foundation set(NSDictionary tree) + synchronize ÷ set(Swift tree) + synchronize",
        {
            defaults.set(foundationClasses(storedTree), forKey: "foundation")
            defaults.synchronize()
        },
        {
            defaults.set(storedTree, forKey: "foundation")
            defaults.synchronize()
        })
    ratio(
        "Settings defaults ratio write: Foundation set(NSDictionary tree) + synchronize ÷ set(PropertyListEncoder Data) + synchronize",
        {
            defaults.set(foundationClasses(storedTree), forKey: "foundation")
            defaults.synchronize()
        },
        {
            defaults.set(try PropertyListEncoder().encode(settings), forKey: "blob")
            defaults.synchronize()
        })
    ratio("Settings defaults ratio read: subscript ÷ decode(_:forKey:)", { blackHole(defaults[typed]) }, { blackHole(try defaults.decode(Settings.self, forKey: "typed")) })
    ratio(
        "Settings defaults ratio write: subscript with 1 observer ÷ without",
        {
            withExtendedLifetime(observation) {}
            defaults[observed] = settings
        },
        { defaults[typed] = settings })

    // Reads take no lock and never wait for a writer (issue 35): a typed read against
    // Foundation's own `object(forKey:)`, 1,000 reads per measurement (one read is below
    // the clock's resolution).
    let absent = DefaultsKey<Int>("absent.key", default: 0)
    let present = DefaultsKey<Int>("present.key", default: 0)
    try! defaults.write(42, to: present)
    ratio(
        "Typed read ratio: absent key read(_:) ÷ Foundation object(forKey:)",
        { for _ in 0..<1_000 { blackHole(try defaults.read(absent)) } },
        { for _ in 0..<1_000 { blackHole(defaults.object(forKey: absent.name)) } })
    ratio(
        "Typed read ratio: present key read(_:) ÷ Foundation object(forKey:) as? Int",
        { for _ in 0..<1_000 { blackHole(try defaults.read(present)) } },
        { for _ in 0..<1_000 { blackHole(defaults.object(forKey: present.name) as? Int) } })
    // A `@UserDefault` read costs a read: against the typed subscript, and, for a wrapper
    // made, read once and dropped (as a SwiftUI view struct is), against Foundation's
    // `object(forKey:)`.
    let wrapped = UserDefault(present, store: defaults)
    ratio(
        "Typed read ratio: @UserDefault read ÷ subscript read",
        { for _ in 0..<1_000 { blackHole(wrapped.wrappedValue) } },
        { for _ in 0..<1_000 { blackHole(defaults[present]) } })
    ratio(
        "Typed read ratio: @UserDefault made, read once and dropped ÷ Foundation object(forKey:) as? Int",
        { for _ in 0..<1_000 { blackHole(UserDefault(present, store: defaults).wrappedValue) } },
        { for _ in 0..<1_000 { blackHole(defaults.object(forKey: present.name) as? Int) } })
    // A write costs the same whatever observes other keys: two suites of the same
    // contents, one with 1,000 observers of keys the write does not touch.
    let observedSuite = UserDefaults(suiteName: suite + "-observed")!
    let quietSuite = UserDefaults(suiteName: suite + "-quiet")!
    for other in [observedSuite, quietSuite] {
        other.removePersistentDomain(forName: other === observedSuite ? suite + "-observed" : suite + "-quiet")
        for index in 0..<20 { other.set("filler \(index)", forKey: "filler.\(index)") }
        other.synchronize()
    }
    let bystanders = (0..<1_000).map { index in
        observedSuite.observe(DefaultsKey<Int>("other.\(index)", default: 0), initial: false) { _, new in blackHole(new) }
    }
    ratio(
        "Settings defaults ratio write: encode(_:forKey:) with 1,000 observers of other keys ÷ with none",
        {
            withExtendedLifetime(bystanders) {}
            try observedSuite.encode(settings, forKey: "native")
        },
        { try quietSuite.encode(settings, forKey: "native") })

    // A change costs in proportion to the keys it changes (issue 43): removing every key
    // of a suite, by `resetAll()` (one observer attached) and by a migration of one
    // `.remove` step per key, against Foundation's `removeObject(forKey:)` of each key
    // and one `synchronize()`. The suite is filled anew before each side.
    // The sizes issue 43 names (20,000 steps, 50,000 keys), one sample each, with
    // DEFAULTSCODER_LARGE_SUITES=1: Foundation's own removal of 50,000 keys takes minutes.
    let largeSuites = ProcessInfo.processInfo.environment["DEFAULTSCODER_LARGE_SUITES"] != nil
    for count in [2_000, 8_000] + (largeSuites ? [20_000, 50_000] : []) {
        let samples = count > 10_000 ? 1 : nil
        let name = suite + "-remove-\(count)"
        let removed = UserDefaults(suiteName: name)!
        let filled = Dictionary(uniqueKeysWithValues: (0..<count).map { ("key.\($0)", $0) })
        let fill = {
            removed.setPersistentDomain(filled, forName: name)
            removed.synchronize()
        }
        let foundation = {
            for key in filled.keys { removed.removeObject(forKey: key) }
            removed.synchronize()
        }
        let watcher = removed.observe(DefaultsKey<Int>("key.0", default: -1), initial: false) { _, new in blackHole(new) }
        if count != 20_000 {
            ratio(
                "Suite of \(count) keys ratio remove all: resetAll() with 1 observer ÷ Foundation removeObject + synchronize", setup: fill,
                {
                    withExtendedLifetime(watcher) {}
                    try removed.resetAll()
                }, foundation, maxIterations: samples)
        }
        guard count != 50_000 else { continue }
        let steps = filled.keys.sorted().map { DefaultsMigration.Step.remove($0) }
        let versionKey = "remove.version"
        ratio(
            "Suite of \(count) keys ratio remove all: migration of \(count) .remove steps ÷ Foundation removeObject + synchronize",
            setup: {
                fill()
                removed.removeObject(forKey: versionKey)
            },
            { try removed.migrate([DefaultsMigration(version: 1, steps: steps)], versionKey: versionKey) }, foundation,
            maxIterations: samples)
    }

    #if os(Linux)
    // Hearing another process's write costs no more after 5,000 files were made and
    // removed beside the suite's file (issue 43), where the watcher's queue holds their
    // events before the write's, than after the same burst in a directory it does not
    // watch: a burst slows what follows it (hearing after one elsewhere takes several
    // times as long as after none), so the burst elsewhere is the baseline that isolates
    // the watcher's share. Each side rewrites the file as another process does (a new
    // file renamed over it) and times from the rename to the observer having the value.
    let heardName = suite + "-heard"
    let heardDefaults = UserDefaults(suiteName: heardName)!
    heardDefaults.set(0, forKey: "heard")
    heardDefaults.synchronize()
    let configDirectory = URL(
        fileURLWithPath: ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] ?? (NSHomeDirectory() + "/.config"))
    // A subdirectory: inotify reports what happens in the watched directory, not below it.
    let elsewhere = configDirectory.appendingPathComponent(suite + "-burst")
    try? FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
    let heard = Heard()
    let hearing = heardDefaults.observe(DefaultsKey<Int>("heard", default: 0), initial: false) { _, new in heard.put(new) }
    let written = Counter(0)
    let hear = { (burstIn: URL) throws -> Duration in
        let burst = (0..<5_000).map { burstIn.appendingPathComponent("burst-\($0).tmp").path }
        for path in burst { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        for path in burst { try FileManager.default.removeItem(atPath: path) }
        let value = written.next()
        let data = try PropertyListSerialization.data(fromPropertyList: ["heard": value], format: .xml, options: 0)
        let temporary = configDirectory.appendingPathComponent("\(heardName).\(value).new")
        try data.write(to: temporary)
        guard rename(temporary.path, configDirectory.appendingPathComponent("\(heardName).plist").path) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
        // From the moment the write is done: a rename in a directory that just had
        // thousands of entries is slower, but that is the writer's cost, not hearing's.
        let start = ContinuousClock.now
        try heard.wait(for: value)
        withExtendedLifetime(hearing) {}
        return ContinuousClock.now - start
    }
    timedRatio(
        "Hearing ratio: another process's write after 5,000 files made and removed beside the suite ÷ after them elsewhere",
        long: true, { try hear(configDirectory) }, { try hear(elsewhere) })
    #endif
}

/// The values an observer heard, for a benchmark to wait on.
final class Heard: @unchecked Sendable {
    // Unchecked: behind `condition`.
    private let condition = NSCondition()
    private var latest = 0

    func put(_ value: Int) {
        condition.lock()
        latest = value
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `value` was heard; throws after 60 s.
    func wait(for value: Int) throws {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(60)
        while latest != value {
            guard condition.wait(until: deadline) else { throw CocoaError(.fileReadUnknown) }
        }
    }
}

/// A counter that hands out 1, 2, 3…
final class Counter: @unchecked Sendable {
    // Unchecked: behind `lock`.
    private let lock = NSLock()
    private var count: Int

    init(_ start: Int) { count = start }

    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
