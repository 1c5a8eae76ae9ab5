// The change feed: what observers of a suite hear of changes made in this process and
// by other processes (`defaults-coder-probe`), through every kind of observer.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

#if canImport(Observation)
import Observation
#endif

/// A model as an app writes one for SwiftUI, over one key of the test's own.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
private final class SharedModel: @unchecked Sendable {
    @ObservationIgnored @UserDefault(DefaultsKey<Int>("unused", default: 0)) var count

    init(key: DefaultsKey<Int>, store: UserDefaults) {
        _count = UserDefault(key, store: store)
    }
}

/// Every kind of observer of one key, recording what each hears.
private final class Listeners: @unchecked Sendable {
    // The recorded lists are behind locks; the tokens are set once in `init`.
    let changes = Recorded<[Int]>()
    let streamed = Recorded<Int>()
    let keys = Recorded<String>()
    let tracked = Locked(0)
    private var tokens: [DefaultsObservation] = []
    private var task: Task<Void, Never>?
    private var model: AnyObject?

    init(_ key: DefaultsKey<Int>, in defaults: UserDefaults) {
        tokens.append(defaults.observe(key, initial: false) { [changes] old, new in changes.append([old, new]) })
        tokens.append(defaults.observe([key], initial: false) { [keys] key in keys.append(key.name) })
        let stream = defaults.updates(for: key, initial: false)
        task = Task { [streamed] in for await value in stream { streamed.append(value) } }
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            let model = SharedModel(key: key, store: defaults)
            self.model = model
            arm(model)
        }
    }

    /// Tracks the model's property, re-arming after each change, as SwiftUI does.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    private func arm(_ model: SharedModel) {
        withObservationTracking {
            _ = model.count
        } onChange: { [tracked, weak self] in
            tracked.withLock { $0 += 1 }
            // Re-armed off the notifying thread, once the change has landed.
            let listeners = self
            DispatchQueue.global().async { listeners?.arm(model) }
        }
    }

    /// How many times each observer has heard something.
    var counts: [Int] {
        [changes.values.count, streamed.values.count, keys.values.count, tracked.withLock { $0 }]
    }

    func cancel() {
        for token in tokens { token.cancel() }
        task?.cancel()
    }
}

@Suite("ChangeFeed")
struct ChangeFeedTests {

    /// How another process changes the key, and the value it reads as after.
    static let ways: [(how: String, value: Int)] = [
        ("encode", 2), ("subscript", 2), ("reset", 0), ("resetAll", 0), ("migrate", 2), ("foundation", 2),
    ]

    @Test(
        "another process's change is heard once, within a second, by every kind of observer; rewriting the value or another key is not",
        arguments: ways)
    func otherProcess(how: String, value: Int) async throws {
        let suite = TestSuite("other" + how)
        // A key without a dot: on Apple platforms another process's plain `set` ("foundation")
        // reaches this one through key-value observing alone, which takes a dot for a path.
        let key = DefaultsKey<Int>(plainKey("shared"), default: 0)
        try suite.defaults.write(1, to: key)
        let listeners = Listeners(key, in: suite.defaults)
        defer { listeners.cancel() }

        let result = try await run("defaults-coder-probe", ["change", suite.name, key.name, how, String(value)])
        #expect(result.status == 0, "\(result.errors)")
        #expect(await eventually(within: 10) { listeners.counts == [1, 1, 1, 1] }, "\(listeners.counts)")
        #expect(listeners.changes.values == [[1, value]])
        #expect(listeners.streamed.values == [value])
        #expect(listeners.keys.values == [key.name])
        #expect(try suite.defaults.read(key) == value)

        // The same change again, and another key: nothing to hear.
        _ = try await run("defaults-coder-probe", ["change", suite.name, key.name, how, String(value)])
        _ = try await run("defaults-coder-probe", ["change", suite.name, key.name + ".other", "encode", "5"])
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(listeners.counts == [1, 1, 1, 1])
    }

    @Test("another process's write that this process reads before it hears of it is still heard: 100 of 100 rounds")
    func readBeforeHeard() async throws {
        let suite = TestSuite()
        let watched = DefaultsKey<Int>(uniqueKey("watched"), default: 0)
        let gate = DefaultsKey<Int>(uniqueKey("gate"), default: 0)
        let absent = DefaultsKey<Int>(uniqueKey("absent"), default: 0)
        let heard = Recorded<Int>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observation = suite.defaults.observe(watched, initial: false) { _, new in heard.append(new) }
        // Heard on the thread that hears other processes: while it waits here, the
        // next change of the file waits behind it.
        let gatekeeper = suite.defaults.observe(gate, initial: false) { _, _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        defer {
            observation.cancel()
            gatekeeper.cancel()
        }
        var missed: [Int] = []
        let rounds = Stress.rounds(100)
        for round in 1...rounds {
            _ = try await run("defaults-coder-probe", ["change", suite.name, gate.name, "encode", String(round)])
            #expect(try await offPool { entered.wait(timeout: .now() + 30) } == .success)
            _ = try await run("defaults-coder-probe", ["change", suite.name, watched.name, "encode", String(round)])
            // This process reads the file the other wrote before it hears of the write.
            #expect(try suite.defaults.read(absent) == 0)
            release.signal()
            if !(await eventually(within: 10) { heard.values.last == round }) { missed.append(round) }
        }
        #expect(missed == [])
        #expect(heard.values == Array(1...rounds))
    }

    @Test("after two processes interleave 1,000 writes of one key, every observer's last value is what the suite holds")
    func interleavedProcesses() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("interleaved"), default: -1)
        let listeners = Listeners(key, in: suite.defaults)
        defer { listeners.cancel() }
        let arguments = ["count", suite.name, key.name, "10000", "500"]
        async let child = run("defaults-coder-probe", arguments)
        for value in 0..<500 { try suite.defaults.write(value, to: key) }
        let result = try await child
        #expect(result.status == 0, "\(result.errors)")
        let stored = try suite.defaults.read(key)
        #expect(await eventually(within: 5) { listeners.changes.values.last?[1] == stored }, "\(String(describing: listeners.changes.values.last)) \(stored)")
        #expect(await eventually(within: 5) { listeners.streamed.values.last == stored })
        // Never back to a value already left: each change starts where the last ended.
        let changes = listeners.changes.values
        for (earlier, later) in zip(changes, changes.dropFirst()) { #expect(earlier[1] == later[0]) }
    }

    @Test("a recheck hands on only the keys that changed: observers of the others decode nothing")
    func recheckCostsOnlyChangedKeys() async throws {
        let suite = TestSuite()
        let prefix = uniqueKey("bystander")
        let bystanders = (0..<50).map { DefaultsKey<CountedDecode>("\(prefix).\($0)", default: CountedDecode(value: 0)) }
        for key in bystanders { try suite.defaults.write(CountedDecode(value: 1), to: key) }
        let changed = DefaultsKey<Int>(uniqueKey("changed"), default: 0)
        let heard = Recorded<Int>()
        let observations = bystanders.map { suite.defaults.observe($0, initial: false) { _, _ in } }
        let watcher = suite.defaults.observe(changed, initial: false) { _, new in heard.append(new) }
        // The first recheck learns every key's value; after it, only changes count. A
        // recheck of the file watcher's may be handing events over on its own thread
        // meanwhile (another test's `synchronize()` writes this suite's unsaved value):
        // each step waits until the feed is idle.
        let feed = DefaultsSuite.of(suite.defaults).feed
        feed.recheck()
        #expect(await eventually(within: 10) { feed.isIdle })
        CountedDecode.count.withLock { $0[prefix] = 0 }
        suite.defaults.set(7, forKey: changed.name)
        feed.recheck()
        #expect(await eventually(within: 10) { feed.isIdle && heard.values == [7] }, "\(heard.values)")
        #expect(CountedDecode.count.withLock { $0[prefix] ?? 0 } == 0)
        for observation in observations { observation.cancel() }
        watcher.cancel()
    }

    @Test("a change another process makes while nothing observes starts nothing; observing afterwards reads it")
    func nothingRunsUnobserved() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("quiet"), default: 0)
        let observation = suite.defaults.observe(key, initial: false) { _, _ in }
        observation.cancel()
        #expect(!DefaultsSuite.of(suite.defaults).feed.isSubscribed(key.name))
        _ = try await run("defaults-coder-probe", ["change", suite.name, key.name, "encode", "4"])
        suite.defaults.synchronize()
        let first = Recorded<Int>()
        let again = suite.defaults.observe(key) { _, new in first.append(new) }
        #expect(first.values == [4])
        again.cancel()
    }

    // MARK: - Registrations

    /// What other threads do while registrations are made: each makes the feed read the
    /// suite again.
    enum Rechecker: String, CaseIterable, CustomTestStringConvertible {
        /// Foundation's `didChangeNotification`, which rechecks every feed.
        case announcements
        /// Other observers of the keys joining and leaving.
        case subscriptions

        var testDescription: String { rawValue }
    }

    @Test(
        "registrations made withoutAnnouncing stay silent while other threads recheck the suite, and observers stand on the registered values",
        arguments: Rechecker.allCases)
    func silentRegistrations(beside rechecker: Rechecker) async throws {
        let suite = TestSuite()
        let keys = (0..<300).map { DefaultsKey<Int>(uniqueKey("registered\($0)"), default: 0) }
        let heard = Recorded<String>()
        let observation = suite.defaults.observe(keys, initial: false) { key in heard.append(key.name) }
        let recheck: @Sendable (Int) -> Void = { _ in
            switch rechecker {
            case .announcements:
                NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: suite.defaults)
            case .subscriptions:
                suite.defaults.observe(keys, initial: false) { _ in }.cancel()
            }
            // Each recheck reads every observed suite of the process, other tests' too:
            // paced, so that they are not starved.
            usleep(100)
        }
        try await whileRepeating([recheck]) {
            for (index, key) in keys.enumerated() {
                let registered = DefaultsKey<Int>(key.name, default: index + 1)
                try UserDefaults.withoutAnnouncing { try suite.defaults.register(registered) }
            }
        }
        #expect(heard.values.isEmpty, "\(heard.values.count) of \(keys.count) silent registrations were announced")
        #expect(try keys.map { try suite.defaults.read($0) } == Array(1...keys.count))
        // The next change is heard, from the registered value.
        try suite.defaults.write(0, to: keys[0])
        #expect(heard.values == [keys[0].name])
        observation.cancel()
    }

    @Test(
        "a registration rechecks its own keys only, in every suite: another key's unannounced change is left to the next recheck, and heard there"
    )
    func registrationRechecksItsKeys() async throws {
        let suite = TestSuite()
        let registered = DefaultsKey<Int>(uniqueKey("registered"), default: 0)
        let other = DefaultsKey<Int>(uniqueKey("other"), default: 0)
        let heard = Recorded<[Int]>()
        let observations = [registered, other].map { key in
            suite.defaults.observe(key, initial: false) { old, new in heard.append([old, new]) }
        }
        // A plain write of Foundation's, which nothing announces on Linux (nor, in the
        // emulation of Apple's, for a key that is not observable).
        suite.defaults.set(5, forKey: other.name)
        // What the registration's rechecks read, on this task (other tests' rechecks,
        // from their own announcements, may read anything meanwhile).
        let read = Recorded<[String]>()
        let record: @Sendable ([String]) -> Void = { read.append($0) }
        try ChangeFeed.$keysRead.withValue(record) {
            try UserDefaults.withoutAnnouncing { try suite.defaults.register(DefaultsKey<Int>(registered.name, default: 7)) }
            try UserDefaults.withoutAnnouncing { try suite.defaults.register(DefaultsKey<Int>(uniqueKey("unobserved"), default: 1)) }
        }
        #expect(read.values.flatMap { $0 } == [registered.name])
        #expect(try suite.defaults.read(registered) == 7)
        // Another test's announcement may have its background pass recheck this suite
        // first, and hand the change over on its thread: heard once all is handed over.
        let feed = DefaultsSuite.of(suite.defaults).feed
        feed.recheck()
        #expect(await eventually { feed.isIdle && heard.values == [[0, 5]] }, "\(heard.values)")
        for observation in observations { observation.cancel() }
    }

    @Test(
        "Foundation's announcement of a change through an object rechecks that object's suite at once and every other observed suite in the background, once for a burst"
    )
    func announcementRechecksItsSuite() async throws {
        let (announced, other) = (TestSuite(), TestSuite())
        let key = DefaultsKey<Int>(uniqueKey("announced"), default: 0)
        let heard = Recorded<String>()
        let observations = [announced, other].map { suite in
            suite.defaults.observe(key, initial: false) { _, new in heard.append("\(suite === announced ? "announced" : "other") \(new)") }
        }
        // Plain writes of Foundation's that nothing announced (on Linux Foundation
        // announces none; in the emulation of Apple's, this key is not observable).
        announced.defaults.set(1, forKey: key.name)
        other.defaults.set(2, forKey: key.name)
        // What the announcements read on this task: the announced suite's key, once each.
        let read = Recorded<[String]>()
        let record: @Sendable ([String]) -> Void = { read.append($0) }
        ChangeFeed.$keysRead.withValue(record) {
            for _ in 0..<50 { NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: announced.defaults) }
        }
        #expect(read.values == Array(repeating: [key.name], count: 50))
        // Heard before the posts returned. (Not necessarily first: in a parallel run,
        // another test's announcement may recheck every suite, the other one included.)
        #expect(heard.values.contains("announced 1"))
        // The other suite is rechecked in the background, and its change heard there.
        #expect(await eventually(within: 10) { heard.values.contains("other 2") }, "\(heard.values)")
        #expect(heard.values.sorted() == ["announced 1", "other 2"])
        for observation in observations { observation.cancel() }
    }

    @Test("a migration step that registers and observes, while other threads register and recheck its suite, finishes")
    func registrationInsideWrite() async throws {
        let suite = TestSuite()
        let watched = DefaultsKey<Int>(uniqueKey("watched"), default: 0)
        let observation = suite.defaults.observe(watched, initial: false) { _, _ in }
        let busy: [@Sendable (Int) -> Void] = [
            { _ in
                NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: suite.defaults)
                usleep(500)
            },
            { round in
                #expect(throws: Never.self) { try suite.defaults.register(DefaultsKey<Int>(uniqueKey("elsewhere"), default: round)) }
                usleep(500)
            },
        ]
        let migrated = Locked(0)
        let failure = Locked<String?>(nil)
        let rounds = 20
        // On a thread of its own, so that a deadlock fails the test instead of hanging it.
        Thread {
            let outcome = thrown {
                for round in 1...rounds {
                    let old = uniqueKey("old")
                    suite.defaults.set(round, forKey: old)
                    let step = DefaultsMigration.Step.convert(old, from: Int.self, to: uniqueKey("new")) { value in
                        try UserDefaults.withoutAnnouncing { try suite.defaults.register(DefaultsKey<Int>(uniqueKey("inside"), default: value)) }
                        suite.defaults.observe(watched, initial: false) { _, _ in }.cancel()
                        return value
                    }
                    _ = try suite.defaults.migrate(DefaultsMigration(version: 1, step), versionKey: uniqueKey("version"))
                    migrated.withLock { $0 += 1 }
                }
            }
            failure.withLock { $0 = outcome }
        }.start()
        // Every registration rechecks every observed suite of the process, other tests'
        // too, so the busy threads stop after a while: what is slow then finishes, and
        // only a deadlock leaves the migrations stuck. The test fails rather than hangs.
        _ = try await whileRepeating(busy) { waitUntil(within: 10) { migrated.withLock { $0 } == rounds } }
        let finished = await eventually(within: 120) { migrated.withLock { $0 } == rounds }
        #expect(finished, "\(migrated.withLock { $0 }) of \(rounds) migrations finished")
        #expect(failure.withLock { $0 } == nil)
        observation.cancel()
    }
}

/// A value that counts its decodings, by the prefix of the key it is read for.
private struct CountedDecode: Codable, Sendable, Equatable {
    static let count = Locked<[String: Int]>([:])
    var value: Int

    init(value: Int) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        value = try Int(from: decoder)
        Self.count.withLock { counts in
            for prefix in counts.keys { counts[prefix, default: 0] += 1 }
        }
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}
