// Events are awaited with `eventually`: a handler runs on the thread whose announcement
// found the change, and with tests running in parallel another test's announcement
// (removing its suite posts didChangeNotification) can find it first and deliver it
// from there, a moment later. Exact lists still catch a missing or an extra event.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultsObservation")
struct DefaultsObservationTests {

    init() {
        ReportedFailures.install()
    }

    @Test("a closure hears every real change once, with typed old and new values, and no no-op writes")
    func closureEvents() async throws {
        let suite = TestSuite()
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(.launchCount, initial: false) { old, new in
            events.withLock { $0.append([old, new]) }
        }
        suite.defaults[.launchCount] = 1  // subscript
        suite.defaults[.launchCount] = 1  // no change
        try suite.defaults.write(2, to: .launchCount)
        try suite.defaults.encode(3, forKey: "launchCount")
        try suite.defaults.encode(3, forKey: "launchCount")
        try suite.defaults.reset(.launchCount)
        try suite.defaults.reset(.launchCount)
        #expect(await eventually { events.withLock { $0 } == [[0, 1], [1, 2], [2, 3], [3, 0]] })
        withExtendedLifetime(observation) {}
    }

    // MARK: Re-entrancy: callbacks that call back into the package

    @Test("a failure handler that repairs the key an observer watches: no hang, every event once, in order")
    func repairingFailureHandler() async throws {
        let suite = TestSuite()
        let name = uniqueKey("repaired")
        let key = DefaultsKey<Int>(name, default: 0)
        try suite.defaults.write(1, to: key)
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        ReportedFailures.onFailure(of: name) { failure in
            guard failure.operation == .read else { return }
            try? suite.defaults.write(7, to: key)
        }
        suite.defaults.set("not a number", forKey: name)  // written by something else
        // A package write to the same key name, in another suite, makes the observer look again.
        let other = TestSuite()
        #expect(await finishes { try? other.defaults.write(5, to: key) })
        #expect(await eventually { events.withLock { $0 } == [[1, 0], [0, 7]] }, "\(events.withLock { $0 })")
        #expect(try suite.defaults.read(key) == 7)
        withExtendedLifetime(observation) {}
    }

    @Test("an observer that writes its own key again: no hang, both changes heard in order")
    func writingObserver() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("rewritten"), default: 0)
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in
            events.withLock { $0.append([old, new]) }
            if new == 1 { try? suite.defaults.write(2, to: key) }
        }
        #expect(await finishes { try? suite.defaults.write(1, to: key) })
        #expect(await eventually { events.withLock { $0 } == [[0, 1], [1, 2]] }, "\(events.withLock { $0 })")
        withExtendedLifetime(observation) {}
    }

    @Test("an update stream whose consumer writes the key it follows")
    func writingConsumer() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("streamed"), default: 0)
        let stream = suite.defaults.updates(for: key)
        let consumer = Task {
            var seen: [Int] = []
            for await value in stream {
                seen.append(value)
                if value == 1 { try? suite.defaults.write(2, to: key) }
                if value == 2 { break }
            }
            return seen
        }
        try suite.defaults.write(1, to: key)
        #expect(await consumer.value == [0, 1, 2])
    }

    @Test("optional struct values: set, change, remove")
    func optionalEvents() async throws {
        let suite = TestSuite()
        let events = Locked<[String]>([])
        let observation = suite.defaults.observe(.owner, initial: false) { old, new in
            events.withLock { $0.append("\(old?.name ?? "nil")→\(new?.name ?? "nil")") }
        }
        suite.defaults[.owner] = User(id: 1, name: "Ada")
        suite.defaults[.owner] = User(id: 1, name: "Ada")
        suite.defaults[.owner] = User(id: 1, name: "Bo")
        suite.defaults[.owner] = nil
        suite.defaults[.owner] = nil
        #expect(await eventually { events.withLock { $0 } == ["nil→Ada", "Ada→Bo", "Bo→nil"] })
        withExtendedLifetime(observation) {}
    }

    @Test("values that are not Equatable are compared by what is stored")
    func unequatable() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Unequatable>("u", default: Unequatable(value: 0))
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old.value, new.value]) } }
        suite.defaults[key] = Unequatable(value: 1)
        suite.defaults[key] = Unequatable(value: 1)
        suite.defaults[key] = Unequatable(value: 2)
        #expect(await eventually { events.withLock { $0 } == [[0, 1], [1, 2]] })
        withExtendedLifetime(observation) {}
    }

    @Test("observing stops when the token is cancelled or released")
    func tokenLifetime() async {
        let suite = TestSuite()
        let events = Locked(0)
        let cancelled = suite.defaults.observe(.launchCount, initial: false) { _, _ in events.withLock { $0 += 1 } }
        var released: DefaultsObservation? = suite.defaults.observe(.launchCount, initial: false) { _, _ in events.withLock { $0 += 10 } }
        suite.defaults[.launchCount] = 1
        #expect(await eventually { events.withLock { $0 } == 11 })

        cancelled.cancel()
        released = nil
        suite.defaults[.launchCount] = 2
        #expect(events.withLock { $0 } == 11)
        #expect(released == nil)
    }

    @Test("after cancel() returns, later changes are not reported, even by announcements already running")
    func cancelDuringAnnouncements() async throws {
        let suite = TestSuite()
        let seen = Locked<[Int]>([])
        let observation = suite.defaults.observe(.launchCount, initial: false) { _, new in seen.withLock { $0.append(new) } }
        // Announcements on other threads take their list of observers, then recheck each.
        let announce: @Sendable (Int) -> Void = { _ in ChangeFeed.recheckAll() }
        try await whileRepeating([announce, announce]) {
            for value in 1...20 { suite.defaults[.launchCount] = value }
            observation.cancel()
            for value in 100...400 { suite.defaults[.launchCount] = value }
        }
        #expect(seen.withLock { $0 }.allSatisfy { $0 <= 20 })
    }

    @Test("an observer of one suite does not hear writes to the same key in another")
    func otherSuite() {
        let suite = TestSuite()
        let other = TestSuite()
        let events = Locked(0)
        let observation = suite.defaults.observe(.launchCount, initial: false) { _, _ in events.withLock { $0 += 1 } }
        other.defaults[.launchCount] = 5
        #expect(events.withLock { $0 } == 0)
        withExtendedLifetime(observation) {}
    }

    @Test("writes from another thread are heard once")
    func otherThread() async {
        // Which thread runs the handler is not asserted: usually the writer's, but an
        // announcement racing on another thread (other tests remove their suites, which
        // posts didChangeNotification) may see the change first and run it there.
        let suite = TestSuite()
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(.launchCount, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        let defaults = SendableAny(suite.defaults)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                (defaults.value as! UserDefaults)[.launchCount] = 1
                continuation.resume()
            }.start()
        }
        #expect(await eventually { !events.withLock { $0.isEmpty } })
        #expect(events.withLock { $0 } == [[0, 1]])
        withExtendedLifetime(observation) {}
    }

    @Test("the package posts keyDidChangeNotification for its own writes")
    func ownNotification() throws {
        let suite = TestSuite()
        let keys = Locked<[String]>([])
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.keyDidChangeNotification, object: suite.defaults, queue: nil
        ) { note in keys.withLock { $0.append(note.userInfo?["key"] as? String ?? "?") } }
        defer { NotificationCenter.default.removeObserver(token) }
        suite.defaults[.theme] = .dark
        try suite.defaults.encode(1, forKey: "plain")
        #expect(keys.withLock { $0 } == ["app.appearance.theme", "plain"])
    }

    @Test("plain set(_:forKey:) is heard where Foundation announces it")
    func plainSet() async {
        let suite = TestSuite()
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(.launchCount, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        let announced = Locked(0)
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: suite.defaults, queue: nil
        ) { _ in announced.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(token) }

        suite.defaults.set(7, forKey: "launchCount")
        suite.defaults.removeObject(forKey: "other")
        #if os(Linux)
        if Backend.isEmulatedApple {
            #expect(announced.withLock { $0 } == 2)
        } else {
            // Measured: Foundation on Linux posts no didChangeNotification for
            // set(_:forKey:) or removeObject(forKey:). (Not asserted through `events`:
            // another test's announcement may make this observer look again at any time.)
            #expect(announced.withLock { $0 } == 0)
            // The next announced change makes every observer look again.
            NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: suite.defaults)
        }
        #else
        #expect(announced.withLock { $0 } == 2)
        #endif
        #expect(await eventually { events.withLock { $0 } == [[0, 7]] })
        withExtendedLifetime(observation) {}
    }

    @Test("updates(for:) starts with the current value and follows changes")
    func asyncUpdates() async {
        let suite = TestSuite()
        suite.defaults[.launchCount] = 4
        var iterator = suite.defaults.updates(for: .launchCount).makeAsyncIterator()
        #expect(await iterator.next() == 4)
        suite.defaults[.launchCount] = 5
        suite.defaults[.launchCount] = 5
        suite.defaults[.launchCount] = 6
        #expect(await iterator.next() == 5)
        #expect(await iterator.next() == 6)
    }

    @Test("updates(for:) ends when its task is cancelled, and stops observing")
    func asyncCancellation() async {
        let suite = TestSuite()
        let received = Locked<[Int]>([])
        let defaults = SendableAny(suite.defaults)
        let task = Task {
            for await value in (defaults.value as! UserDefaults).updates(for: .launchCount) {
                received.withLock { $0.append(value) }
            }
            return "ended"
        }
        #expect(await eventually { !received.withLock { $0.isEmpty } })
        task.cancel()
        #expect(await task.value == "ended")
        suite.defaults[.launchCount] = 1
        #expect(received.withLock { $0 } == [0])
    }

    @Test("many tasks writing with observers attached: no crash, no lost final value")
    func concurrentWriters() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>("counter", default: -1)
        let events = Locked(0)
        let observations = (0..<4).map { _ in
            suite.defaults.observe(key, initial: false) { old, new in
                #expect(old != new)
                events.withLock { $0 += 1 }
            }
        }
        let defaults = SendableAny(suite.defaults)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<16 {
                group.addTask {
                    let defaults = defaults.value as! UserDefaults
                    for round in 0..<25 {
                        defaults[key] = writer * 100 + round
                        _ = defaults[key]
                    }
                }
            }
        }
        suite.defaults[key] = 4242
        #expect(suite.defaults[key] == 4242)
        #expect(try suite.defaults.read(key) == 4242)
        #expect(events.withLock { $0 } > 0)
        withExtendedLifetime(observations) {}
    }
    // An observer takes the value a package write just made for what reading the key
    // back would give. Each test below is a case where a careless feed would be wrong.

    @Test("after racing writers through two objects of one suite, the observer's last value is the stored one")
    func racingObjectsLeaveNoStaleValue() async throws {
        let suite = TestSuite()
        let second = SendableAny(UserDefaults(suiteName: suite.name)!)
        let first = SendableAny(suite.defaults)
        let key = DefaultsKey<Int>("raced", default: -1)
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                // Writers wait for each other: on threads of their own, off the pool.
                group.addTask {
                    _ = try? await offPool {
                        let defaults = (writer.isMultiple(of: 2) ? first : second).value as! UserDefaults
                        for round in 0..<20 { defaults[key] = writer * 100 + round }
                    }
                }
            }
        }
        let stored = try suite.defaults.read(key)
        // The next change reports as its old value what the observer last saw.
        events.withLock { $0 = [] }
        suite.defaults[key] = 99_999
        #expect(await eventually { events.withLock { $0.contains { $0[1] == 99_999 } } })
        #expect(events.withLock { $0.last } == [stored, 99_999])
        withExtendedLifetime(observation) {}
    }

    @Test("threads writing distinct values of one key: every write is reported, in the suite's order, never backwards")
    func concurrentDistinctWrites() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("concurrent"), default: -1)
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    _ = try? await offPool {
                        for round in 0..<25 {
                            try? suite.defaults.write(writer * 100 + round, to: key)
                        }
                    }
                }
            }
        }
        #expect(await eventually { events.withLock { $0.count } == 100 })
        let reported = events.withLock { $0 }
        #expect(reported.count == 100)
        #expect(Set(reported.map { $0[1] }).count == 100)
        // A chain: each change starts where the one before it ended, from the default.
        #expect(reported.first?[0] == -1)
        for (earlier, later) in zip(reported, reported.dropFirst()) { #expect(earlier[1] == later[0]) }
        #expect(reported.last?[1] == (try suite.defaults.read(key)))
        withExtendedLifetime(observation) {}
    }

    @Test("a change the package did not make, read back, is reported once, and the next write is measured against it")
    func uncountedWriteReadBack() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("overtaken"), default: 0)
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        suite.defaults[key] = 1
        // The app's plain set, heard at the next recheck (an announcement, another process).
        suite.defaults.set(2, forKey: key.name)
        ChangeFeed.recheckAll()
        ChangeFeed.recheckAll()
        suite.defaults[key] = 3
        #expect(await eventually { events.withLock { $0.count } >= 3 })
        #expect(events.withLock { $0 } == [[0, 1], [1, 2], [2, 3]])
        withExtendedLifetime(observation) {}
    }

    @Test("a chain of observer writes, with announcements racing on other threads, is heard in the order written")
    func chainWithRacingAnnouncements() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("chained"), default: 0)
        let last = 60
        let events = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in
            events.withLock { $0.append([old, new]) }
            if new < last { try? suite.defaults.write(new + 1, to: key) }
        }
        let announce: @Sendable (Int) -> Void = { _ in ChangeFeed.recheckAll() }
        let (wrote, chained) = try await whileRepeating([announce, announce]) {
            // On a thread of its own, so that a deadlock fails the test instead of hanging it.
            let wrote = waitUntilFinished { try? suite.defaults.write(1, to: key) }
            return (wrote, waitUntil(within: 60) { events.withLock { $0.count } >= last })
        }
        #expect(wrote)
        #expect(chained)
        #expect(events.withLock { $0 } == (0..<last).map { [$0, $0 + 1] })
        withExtendedLifetime(observation) {}
    }

    @Test("a write that a launch argument hides is no change, and the argument's value is what observers see")
    func launchArgumentOverride() async throws {
        let suite = TestSuite()
        let name = "overridden.\(UUID().uuidString)"
        let key = DefaultsKey<Int>(name, default: 0)
        let events = Locked<[[Int]]>([])
        await ProcessWideState.withLaunchArguments([name: "7"], on: suite.defaults) {
            #expect(suite.defaults[key] == 7)
            let observation = suite.defaults.observe(key, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
            suite.defaults[key] = 8
            suite.defaults[key] = 9
            #expect(suite.defaults[key] == 7)
            #expect(events.withLock { $0 }.isEmpty)
            observation.cancel()
        }
    }

    @Test("an observer of another object of the same suite hears the write, with the value read back")
    func otherObjectOfTheSameSuite() async throws {
        let suite = TestSuite()
        let other = UserDefaults(suiteName: suite.name)!
        let events = Locked<[[Int]]>([])
        let observation = other.observe(.launchCount, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        suite.defaults[.launchCount] = 3
        suite.defaults[.launchCount] = 3
        #expect(await eventually { events.withLock { $0 } == [[0, 3]] })
        withExtendedLifetime(observation) {}
    }

    @Test("values that are not Equatable: a written tree and the same value read back are no change")
    func unequatableWrittenAndReadBack() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<UnequatableTree>("tree", default: UnequatableTree())
        let events = Locked(0)
        let observation = suite.defaults.observe(key, initial: false) { _, _ in events.withLock { $0 += 1 } }
        let value = UnequatableTree(
            flag: true, count: 3, ratio: 0.5, when: Date(timeIntervalSince1970: 1_000.25), bytes: Data([1, 2]),
            names: ["a", String(Unicode.Scalar(0xFDD0)!) + "b"], nested: ["x": [1, 2]], missing: nil, large: .max)
        suite.defaults[key] = value  // compared with the tree read at the start
        #expect(await eventually { events.withLock { $0 } == 1 })
        // Compared with the written tree: a read-back of the same value, then the same write.
        ChangeFeed.recheckAll()
        suite.defaults[key] = value
        ChangeFeed.recheckAll()
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(events.withLock { $0 } == 1)
        withExtendedLifetime(observation) {}
    }

    // MARK: - One feed per suite

    @Test("one handler of several keys never runs on two threads at once, and hears each change once")
    func severalKeysNeverOverlap() async throws {
        let suite = TestSuite()
        let keys = (0..<4).map { DefaultsKey<Int>(uniqueKey("overlap\($0)"), default: 0) }
        let inside = Locked(false)
        let overlaps = Locked(0)
        let heard = Locked(0)
        let observation = suite.defaults.observe(keys, initial: false) { _ in
            let entered = inside.withLock { was in
                defer { was = true }
                return was
            }
            if entered { overlaps.withLock { $0 += 1 } }
            usleep(200)
            heard.withLock { $0 += 1 }
            inside.withLock { $0 = false }
        }
        await withTaskGroup(of: Void.self) { group in
            for key in keys {
                group.addTask { _ = try? await offPool { for value in 1...25 { try? suite.defaults.write(value, to: key) } } }
            }
        }
        #expect(await eventually { heard.withLock { $0 } == 100 })
        #expect(overlaps.withLock { $0 } == 0)
        observation.cancel()
    }

    @Test("a key listed twice, or one name under two types, is heard once per change")
    func duplicateKeys() throws {
        let suite = TestSuite()
        let name = uniqueKey("twice")
        let asInt = DefaultsKey<Int>(name, default: 0)
        let asDouble = DefaultsKey<Double>(name, default: 0)
        let heard = Recorded<String>()
        let observation = suite.defaults.observe([asInt, asInt, asDouble], initial: false) { key in heard.append(key.name) }
        try suite.defaults.write(3, to: asInt)
        #expect(heard.values == [name])
        observation.cancel()
    }

    @Test("register(_:) inside withoutAnnouncing is silent, also where Foundation announces registrations (Apple)")
    func silentRegistration() async throws {
        let suite = TestSuite()
        let name = uniqueKey("registered")
        let key = DefaultsKey<Int>(name, default: 0)
        let registered = DefaultsKey<Int>(name, default: 7)
        let heard = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: false) { old, new in heard.withLock { $0.append([old, new]) } }
        try UserDefaults.withoutAnnouncing { try suite.defaults.register(registered) }
        #expect(heard.withLock { $0 } == [])
        #expect(suite.defaults[key] == 7)
        // Where observers stand now: the next change starts from the registered value.
        suite.defaults[key] = 8
        #expect(heard.withLock { $0 } == [[7, 8]])
        withExtendedLifetime(observation) {}
    }

    @Test("a write made withoutAnnouncing in one suite silences nothing in another")
    func silenceStaysInItsSuite() throws {
        let (silent, heard) = (TestSuite("silent"), TestSuite("heard"))
        let key = DefaultsKey<Int>(uniqueKey("shared.name"), default: 0)
        let events = Recorded<Int>()
        let silenced = Recorded<Int>()
        let observation = heard.defaults.observe(key, initial: false) { _, new in events.append(new) }
        let quiet = silent.defaults.observe(key, initial: false) { _, new in silenced.append(new) }
        for value in 1...20 {
            try UserDefaults.withoutAnnouncing { try silent.defaults.write(value, to: key) }
            try heard.defaults.write(value, to: key)
        }
        #expect(events.values == Array(1...20))
        #expect(silenced.values.isEmpty)
        // The silent suite's observer stands at its last value: the next change is measured from it.
        try silent.defaults.write(21, to: key)
        #expect(silenced.values == [21])
        observation.cancel()
        quiet.cancel()
    }

    @Test("an observer works out a dynamic default only while nothing is stored")
    func dynamicDefaultOnlyWhenAbsent() throws {
        let suite = TestSuite()
        let made = Locked(0)
        let key = DefaultsKey<Int>(uniqueKey("dynamic")) {
            made.withLock { $0 += 1 }
            return -1
        }
        try suite.defaults.write(5, to: key)
        let heard = Recorded<Int>()
        let observation = suite.defaults.observe(key) { _, new in heard.append(new) }
        try suite.defaults.write(6, to: key)
        ChangeFeed.recheckAll()
        #expect(heard.values == [5, 6])
        #expect(made.withLock { $0 } == 0)
        observation.cancel()
    }

    @Test("the initial value comes first, before any change, while another thread writes")
    func initialBeforeFirstChange() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("initial"), default: 0)
        let write: @Sendable (Int) -> Void = { value in try? suite.defaults.write(value, to: key) }
        let observed = try await whileRepeating([write]) {
            (0..<20).map { _ in
                let calls = Recorded<[Int]>()
                let observation = suite.defaults.observe(key) { old, new in calls.append([old, new]) }
                usleep(2_000)
                observation.cancel()
                return calls.values
            }
        }
        for seen in observed {
            guard let first = seen.first else { continue }
            // The initial call has old == new, and every change starts where the last ended.
            #expect(first[0] == first[1])
            for (earlier, later) in zip(seen, seen.dropFirst()) { #expect(earlier[1] == later[0]) }
        }
    }

}

/// Every kind of stored scalar and collection, in a type that is not `Equatable`.
private struct UnequatableTree: Codable, Sendable {
    var flag = false
    var count = 0
    var ratio = 0.0
    var when = Date(timeIntervalSince1970: 0)
    var bytes = Data()
    var names: [String] = []
    var nested: [String: [Int]] = [:]
    var missing: Int? = nil
    var large: UInt64 = 0
}

@Suite("DefaultsObservation: initial calls and several keys")
struct DefaultsObservationInitialAndKeysTests {
    @Test("observe and updates share one default: both start with the current value", arguments: [true, false])
    func initial(initial: Bool) async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("initial"), default: 0)
        try suite.defaults.write(4, to: key)
        let heard = Locked<[[Int]]>([])
        let observation = suite.defaults.observe(key, initial: initial) { old, new in heard.withLock { $0.append([old, new]) } }
        #expect(heard.withLock { $0 } == (initial ? [[4, 4]] : []))
        var iterator = suite.defaults.updates(for: key, initial: initial).makeAsyncIterator()
        try suite.defaults.write(5, to: key)
        #expect(await iterator.next() == (initial ? 4 : 5))
        #expect(heard.withLock { $0 } == (initial ? [[4, 4], [4, 5]] : [[4, 5]]))
        withExtendedLifetime(observation) {}
    }

    @Test("several keys of different types, one handler and one stream: each change once, in order")
    func severalKeys() async throws {
        let suite = TestSuite()
        let count = DefaultsKey<Int>(uniqueKey("count"), default: 0)
        let name = DefaultsKey<String?>(uniqueKey("name"))
        let heard = Locked<[String]>([])
        let observation = suite.defaults.observe([count, name], initial: false) { key in heard.withLock { $0.append(key.name) } }
        var iterator = suite.defaults.updates(for: [count, name], initial: false).makeAsyncIterator()
        try suite.defaults.write(1, to: count)
        try suite.defaults.write("Ada", to: name)
        try suite.defaults.write("Ada", to: name)  // no change
        try suite.defaults.write(2, to: count)
        #expect(await eventually { heard.withLock { $0 }.count >= 3 })
        #expect(heard.withLock { $0 } == [count.name, name.name, count.name])
        #expect(await iterator.next()?.name == count.name)
        #expect(await iterator.next()?.name == name.name)
        #expect(await iterator.next()?.name == count.name)
        observation.cancel()
        try suite.defaults.write(3, to: count)
        #expect(heard.withLock { $0 }.count == 3)
    }

    @Test("a write on another thread while a handler runs waits for it, and returns after its own change was handed over")
    func writesWaitForTheHandler() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("ordered"), default: 0)
        let heard = Locked<[Int]>([])
        let firstStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observation = suite.defaults.observe(key, initial: false) { _, new in
            if new == 1 {
                firstStarted.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            heard.withLock { $0.append(new) }
        }
        let defaults = SendableAny(suite.defaults)
        let heardWhenReturned = Locked<[Int]?>(nil)
        try await offPool {
            let first = Thread { (defaults.value as! UserDefaults)[key] = 1 }
            first.start()
            #expect(firstStarted.wait(timeout: .now() + 30) == .success)
            let second = Thread {
                (defaults.value as! UserDefaults)[key] = 2
                heardWhenReturned.withLock { $0 = heard.withLock { $0 } }
            }
            second.start()
            Thread.sleep(forTimeInterval: 0.2)
            // The second write waits for the handler still running for the first.
            #expect(heardWhenReturned.withLock { $0 } == nil)
            release.signal()
        }
        #expect(await eventually { heardWhenReturned.withLock { $0 } != nil })
        #expect(heardWhenReturned.withLock { $0 } == [1, 2])
        withExtendedLifetime(observation) {}
    }

    // MARK: - A write returns after its observers ran (the shapes of Defaults' own tests)

    /// Runs `body` `rounds` times on a thread of its own, while `busy` threads write other
    /// keys of the suite, each observed, so that a delivery is often under way on
    /// another thread when `body` writes.
    private func whileOthersWrite(
        in suite: TestSuite, busy: Int, rounds: Int = 50, _ body: @escaping @Sendable (UserDefaults, Int) -> Void
    ) async throws {
        let defaults = SendableAny(suite.defaults)
        let others = (0..<busy).map { DefaultsKey<Int>(uniqueKey("busy\($0)"), default: 0) }
        // Handlers that take a moment: a delivery is under way on a busy thread more often.
        let observations = others.map { suite.defaults.observe($0, initial: false) { _, _ in usleep(200) } }
        let writers = others.map { key in { @Sendable round in (defaults.value as! UserDefaults)[key] = round } }
        try await whileRepeating(writers) {
            for round in 0..<rounds { body(defaults.value as! UserDefaults, round) }
        }
        withExtendedLifetime(observations) {}
    }

    @Test("observe, write once, cancel at once, with a silent write in the handler", arguments: [0, 2])
    func silentWriteInHandler(busy: Int) async throws {
        let suite = TestSuite()
        let failures = Locked<[String]>([])
        try await whileOthersWrite(in: suite, busy: busy) { defaults, round in
            let key = DefaultsKey<Int>(uniqueKey("propagation\(round)"), default: 0)
            let confirmed = Locked(0)
            let store = SendableAny(defaults)
            let observation = defaults.observe(key, initial: false) { _, new in
                confirmed.withLock { $0 += 1 }
                UserDefaults.withoutAnnouncing { (store.value as! UserDefaults)[key] = new + 100 }
            }
            defaults[key] = 1
            observation.cancel()
            let count = confirmed.withLock { $0 }
            if count != 1 || defaults[key] != 101 { failures.withLock { $0.append("round \(round): confirmed \(count), stored \(defaults[key])") } }
        }
        #expect(failures.withLock { $0 } == [])
    }

    @Test("an initial call, then one write, then cancel: both calls made before the write returns", arguments: [0, 2])
    func initialThenWrite(busy: Int) async throws {
        let suite = TestSuite()
        let failures = Locked<[String]>([])
        try await whileOthersWrite(in: suite, busy: busy) { defaults, round in
            let key = DefaultsKey<Int>(uniqueKey("initial\(round)"), default: 0)
            let calls = Locked<[[Int]]>([])
            let observation = defaults.observe(key) { old, new in calls.withLock { $0.append([old, new]) } }
            defaults[key] = 1
            observation.cancel()
            let seen = calls.withLock { $0 }
            if seen != [[0, 0], [0, 1]] { failures.withLock { $0.append("round \(round): \(seen)") } }
        }
        #expect(failures.withLock { $0 } == [])
    }

    @Test("several keys: each write heard before it returns, then cancel", arguments: [0, 2])
    func severalKeysBeforeReturn(busy: Int) async throws {
        let suite = TestSuite()
        let failures = Locked<[String]>([])
        try await whileOthersWrite(in: suite, busy: busy) { defaults, round in
            let first = DefaultsKey<Int>(uniqueKey("first\(round)"), default: 0)
            let second = DefaultsKey<String>(uniqueKey("second\(round)"), default: "")
            let heard = Locked<[String]>([])
            let observation = defaults.observe([first, second], initial: false) { key in heard.withLock { $0.append(key.name) } }
            defaults[first] = 1
            let afterFirst = heard.withLock { $0 }
            defaults[second] = "x"
            observation.cancel()
            let all = heard.withLock { $0 }
            if afterFirst != [first.name] || all != [first.name, second.name] {
                failures.withLock { $0.append("round \(round): \(afterFirst) then \(all)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }

    @Test("an observer that writes another key: that key's observer heard every change before the writes returned", arguments: [0, 2])
    func chainedObserversBeforeReturn(busy: Int) async throws {
        let suite = TestSuite()
        let source = DefaultsKey<Int>(uniqueKey("source"), default: 0)
        let mirror = DefaultsKey<Int>(uniqueKey("mirror"), default: 0)
        let defaults = SendableAny(suite.defaults)
        let heard = Locked(0)
        let copier = suite.defaults.observe(source, initial: false) { _, new in (defaults.value as! UserDefaults)[mirror] = new }
        let listener = suite.defaults.observe(mirror, initial: false) { _, _ in heard.withLock { $0 += 1 } }
        let failures = Locked<[String]>([])
        try await whileOthersWrite(in: suite, busy: busy) { defaults, round in
            defaults[source] = round + 1
            let count = heard.withLock { $0 }
            if count != round + 1 { failures.withLock { $0.append("after write \(round + 1): heard \(count)") } }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(heard.withLock { $0 } == 50)
        withExtendedLifetime((copier, listener)) {}
    }

    @Test("several keys changed from several threads: every change delivered once, in order per key")
    func severalThreads() async throws {
        let suite = TestSuite()
        let keys = (0..<4).map { DefaultsKey<Int>(uniqueKey("thread\($0)"), default: 0) }
        let heard = Locked<[String: [Int]]>([:])
        let defaults = SendableAny(suite.defaults)
        let observation = suite.defaults.observe(keys, initial: false) { key in
            let value = (defaults.value as! UserDefaults).integer(forKey: key.name)
            heard.withLock { $0[key.name, default: []].append(value) }
        }
        await withTaskGroup(of: Void.self) { group in
            for key in keys {
                group.addTask {
                    _ = try? await offPool { for value in 1...20 { (defaults.value as! UserDefaults)[key] = value } }
                }
            }
        }
        for key in keys {
            let values = heard.withLock { $0[key.name] ?? [] }
            #expect(values.count == 20, "\(key.name): \(values)")
            #expect(values == values.sorted(), "\(key.name): \(values)")
        }
        withExtendedLifetime(observation) {}
    }
}
