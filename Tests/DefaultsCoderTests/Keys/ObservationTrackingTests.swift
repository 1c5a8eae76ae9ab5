// `withObservationTracking`, as SwiftUI uses it, on `@UserDefault` properties in a plain
// class and in an `@Observable` one. `onChange` is one-shot: each test arms tracking,
// makes one change or none, and counts. Positive counts are awaited with `eventually`
// (another test's announcement may deliver a change from its own thread a moment later);
// zero counts are read after the writes, which deliver on the writing thread.

import Foundation
import Observation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// A settings model as an app would write one for SwiftUI: no macro of this package.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ObservedSettings {
    @ObservationIgnored @UserDefault(.launchCount) var launchCount
    @ObservationIgnored @UserDefault(.theme) var theme
    /// Ordinary observable state next to the stored settings.
    var isEditing = false

    init(store: UserDefaults) {
        _launchCount = UserDefault(.launchCount, store: store)
        _theme = UserDefault(.theme, store: store)
    }
}

/// Counts the `onChange` calls of one armed tracking.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class TrackingCount: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }

    /// Arms tracking of what `read` reads.
    init(_ read: () -> Void) {
        withObservationTracking(read) { [count] in count.withLock { $0 += 1 } }
    }
}

// The Observation framework needs macOS 14 and the like; the package supports older
// systems, so each test says so (Swift Testing takes `@available` on tests, not suites).
@Suite("ObservationTracking")
struct ObservationTrackingTests {

    /// Each way a key's value changes, with how to make it change to `value`.
    enum Writer: String, CaseIterable, CustomStringConvertible {
        case wrapper, otherWrapper, subscriptWrite, encode, setFor, foundationAnnounced
        var description: String { rawValue }

        func write(_ value: Int, model: WrappedSettings, suite: TestSuite) throws {
            switch self {
            case .wrapper: model.launchCount = value
            case .otherWrapper: WrappedSettings(store: suite.defaults).launchCount = value
            case .subscriptWrite: suite.defaults[.launchCount] = value
            case .encode: try suite.defaults.encode(value, forKey: "launchCount")
            case .setFor: try suite.defaults.write(value, to: .launchCount)
            case .foundationAnnounced:
                suite.defaults.set(value, forKey: "launchCount")
                NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: suite.defaults)
            }
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a change of the key fires onChange once, however it is written", arguments: Writer.allCases)
    func changeFiresOnce(writer: Writer) async throws {
        let suite = TestSuite()
        let model = WrappedSettings(store: suite.defaults)
        let tracking = TrackingCount { _ = model.launchCount }
        try writer.write(5, model: model, suite: suite)
        #expect(await eventually { tracking.value == 1 })
        try writer.write(6, model: model, suite: suite)  // onChange is one-shot
        #expect(tracking.value == 1)
        #expect(model.launchCount == 6)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a write of an equal value, or of another key, fires nothing", arguments: Writer.allCases)
    func noChangeFiresNothing(writer: Writer) async throws {
        let suite = TestSuite()
        let model = WrappedSettings(store: suite.defaults)
        model.launchCount = 3
        let tracking = TrackingCount { _ = model.launchCount }
        try writer.write(3, model: model, suite: suite)
        model.name = "Ada"
        suite.defaults[.theme] = .dark
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(tracking.value == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("only the keys read are tracked")
    func onlyKeysRead() async throws {
        let suite = TestSuite()
        let model = WrappedSettings(store: suite.defaults)
        let nameOnly = TrackingCount { _ = model.name }
        let both = TrackingCount {
            _ = model.name
            _ = model.launchCount
        }
        model.launchCount = 1
        #expect(await eventually { both.value == 1 })
        #expect(nameOnly.value == 0)
        model.name = "Ada"
        #expect(await eventually { nameOnly.value == 1 })
        #expect(both.value == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("in an @Observable class: stored settings and ordinary properties are both tracked")
    func observableClass() async throws {
        let suite = TestSuite()
        let model = ObservedSettings(store: suite.defaults)
        let settings = TrackingCount {
            _ = model.theme
            _ = model.launchCount
        }
        let editing = TrackingCount { _ = model.isEditing }
        model.theme = .dark
        #expect(await eventually { settings.value == 1 })
        #expect(editing.value == 0)
        model.isEditing = true
        #expect(editing.value == 1)
        #expect(settings.value == 1)
        #expect(model.theme == .dark)
        #expect(suite.defaults[.theme] == .dark)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("once the model is gone, a tracking armed on it fires at most once, and nothing is left listening")
    func modelGone() async throws {
        let suite = TestSuite()
        var model: WrappedSettings? = WrappedSettings(store: suite.defaults)
        let tracking = TrackingCount { _ = model?.launchCount }
        let released = WeakReference(model!)  // not `weak let`, which needs Swift 6.2
        model = nil
        #expect(released.object == nil)
        suite.defaults[.launchCount] = 9
        suite.defaults[.launchCount] = 10
        #expect(tracking.value <= 1)
        #expect(!DefaultsSuite.of(suite.defaults).feed.isSubscribed("launchCount"))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("10,000 wrappers read once: one tracker per key, none left after each key changed, and one decode per read")
    func manyWrappers() async throws {
        let suite = TestSuite()
        let prefix = uniqueKey("wrapped")
        let keys = (0..<10).map { DefaultsKey<CountedValue>("\(prefix).\($0)", default: CountedValue(value: 0)) }
        for key in keys { try suite.defaults.write(CountedValue(value: 1), to: key) }
        let feed = DefaultsSuite.of(suite.defaults).feed
        CountedValue.decodes.withLock { $0[prefix] = 0 }
        for index in 0..<10_000 {
            let wrapper = UserDefault(keys[index % keys.count], store: suite.defaults)
            #expect(wrapper.wrappedValue == CountedValue(value: 1))
        }
        #expect(CountedValue.decodes.withLock { $0[prefix] } == 10_000)
        #expect(feed.subscriptions.keys == keys.count)
        for key in keys { try suite.defaults.write(CountedValue(value: 2), to: key) }
        #expect(feed.subscriptions.keys == 0)
        #expect(!feed.subscriptions.isWatching)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("concurrent writers: one onChange per armed tracking, and the model reads the last value")
    func concurrentWriters() async throws {
        let suite = TestSuite()
        let model = WrappedSettings(store: suite.defaults)
        let defaults = SendableAny(suite.defaults)
        for round in 0..<5 {
            let tracking = TrackingCount { _ = model.launchCount }
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        _ = try? await offPool {
                            let defaults = defaults.value as! UserDefaults
                            for step in 0..<10 { defaults[.launchCount] = round * 1_000 + writer * 10 + step + 1 }
                        }
                    }
                }
            }
            #expect(await eventually { tracking.value == 1 })
            #expect(tracking.value == 1)
            #expect(model.launchCount == suite.defaults[.launchCount])
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    /// A change of a key that lands while a wrapper reads it.
    enum Interruption: String, CaseIterable, CustomStringConvertible {
        /// A package write that lands during the read.
        case packageWrite
        /// A change Foundation announces (`didChangeNotification`), of no key in particular.
        case foundationAnnounced
        var description: String { rawValue }

        /// Sets things up before the read; returns what changes the key during it.
        func prepare(_ name: String, in suite: TestSuite) -> @Sendable () -> Void {
            switch self {
            case .packageWrite:
                return { try? suite.defaults.encode(2, forKey: name) }
            case .foundationAnnounced:
                return {
                    suite.defaults.set(2, forKey: name)
                    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: suite.defaults)
                }
            }
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(
        "a change announced while a tracked read decodes is what the read returns, and onChange fires for the next",
        .serialized, arguments: Interruption.allCases)
    func changeLandingDuringRead(interruption: Interruption) async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Interrupted>(uniqueKey("interrupted"), default: Interrupted(value: 0))
        try suite.defaults.write(Interrupted(value: 1), to: key)
        let wrapper = UserDefault(key, store: suite.defaults)
        // The change lands while the wrapper decodes what it read: after its read,
        // before it registers with the tracking.
        let change = interruption.prepare(key.name, in: suite)
        Interrupted.duringNextDecode.withLock { $0 = change }
        // `onChange` is installed once the read returns: a change announced during the
        // read is lost to it, so the read must return the value after the change.
        let tracking = TrackingCount { #expect(wrapper.wrappedValue == Interrupted(value: 2)) }
        #expect(tracking.value == 0)
        try suite.defaults.write(Interrupted(value: 3), to: key)
        #expect(await eventually { tracking.value == 1 })
        #expect(wrapper.wrappedValue == Interrupted(value: 3))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("trackings end with their model: 3,000 models read under tracking and released hear nothing; one kept hears the change")
    func trackingsEndWithModel() async throws {
        let suite = TestSuite()
        let fired = Locked(0)
        for _ in 0..<3_000 {
            let model = ObservedSettings(store: suite.defaults)
            withObservationTracking {
                _ = model.launchCount
            } onChange: {
                fired.withLock { $0 += 1 }
            }
        }
        let kept = ObservedSettings(store: suite.defaults)
        let tracking = TrackingCount { _ = kept.launchCount }
        suite.defaults[.launchCount] = 1
        #expect(await eventually(within: 10) { tracking.value == 1 })
        #expect(fired.withLock { $0 } == 0)
        withExtendedLifetime(kept) {}
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a tracked read after a plain set nobody announced fires at the next change from what it read, also a package write of the value the feed last published")
    func readAfterUnannouncedSet() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(plainKey("count"), default: 0)
        let wrapper = UserDefault(key, store: suite.defaults)
        // A view drawn before the plain set, and one drawn after it.
        let before = TrackingCount { #expect(wrapper.wrappedValue == 0) }
        // A plain set, unannounced (Foundation on Linux announces none; none is posted).
        suite.defaults.set(5, forKey: key.name)
        let after = TrackingCount { #expect(wrapper.wrappedValue == 5) }
        // The first view showed 0: it is out of date, and hears so.
        #expect(await eventually(within: 10) { before.value == 1 })
        #expect(after.value == 0)
        // Back to 0, the value the feed had last published before the plain set.
        suite.defaults[key] = 0
        #expect(await eventually(within: 10) { after.value == 1 })
        #expect(wrapper.wrappedValue == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a read of a value whose change is published but not yet handed over is not fired by that change")
    func readWhileChangeQueued() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(plainKey("count"), default: 0)
        let blocker = DefaultsKey<Int>(plainKey("blocker"), default: 0)
        let wrapper = UserDefault(key, store: suite.defaults)
        let before = TrackingCount { #expect(wrapper.wrappedValue == 0) }
        // An observer that holds the delivery of the blocker's change, so that the next
        // change is published, and queued behind it.
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let observation = suite.defaults.observe(blocker, initial: false) { _, _ in
            entered.signal()
            gate.wait()
        }
        defer { observation.cancel() }
        let feed = DefaultsSuite.of(suite.defaults).feed
        let published = try #require(feed.publication(of: key.name))
        let blocking = Task { try await offPool { suite.defaults[blocker] = 1 } }
        try await offPool { entered.wait() }
        let writing = Task { try await offPool { suite.defaults[key] = 5 } }
        #expect(await eventually(within: 10) { feed.publication(of: key.name) != published })
        // Drawn now, the view shows 5: the change to 5, handed over later, is not news to it.
        let after = TrackingCount { #expect(wrapper.wrappedValue == 5) }
        gate.signal()
        try await blocking.value
        try await writing.value
        #expect(await eventually(within: 10) { before.value == 1 })
        #expect(after.value == 0)
        suite.defaults[key] = 6
        #expect(await eventually(within: 10) { after.value == 1 })
    }
}

/// An `Int` whose next decoding runs `duringNextDecode` first: a way in between a
/// wrapper's read of the stored value and what it does after. One hook for the type:
/// the test that uses it runs its cases one at a time.
private struct Interrupted: Codable, Sendable, Equatable {
    static let duringNextDecode = Locked<(@Sendable () -> Void)?>(nil)
    var value: Int

    init(value: Int) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let action = Self.duringNextDecode.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
        value = try Int(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// An `Int` that counts its decodings, by the prefix of the key it is read for.
private struct CountedValue: Codable, Sendable, Equatable {
    static let decodes = Locked<[String: Int]>([:])
    var value: Int

    init(value: Int) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        value = try Int(from: decoder)
        Self.decodes.withLock { counts in
            for prefix in counts.keys { counts[prefix, default: 0] += 1 }
        }
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}
