// The Observation framework without macros: reading a `@UserDefault` property inside
// `withObservationTracking` (what a SwiftUI `body` does) registers its key, and the next
// real change of that key fires the tracking's `onChange`.
//
// A read costs a read. Every wrapper of one key in one suite shares one tracker, which
// listens to the suite's feed from a read until the key's next change: the feed has
// already compared the value, so the tracker decodes nothing and fires. Then it stops
// listening, as the framework's own trackings end when they fire; the next read arms a
// new one. Observation has no public way to ask whether a tracking is in progress
// (`ObservationRegistrar` offers `access`, `willSet`, `didSet` and `withMutation`), so a
// read outside any tracking arms one too: at most one per suite and key, until the key
// changes.

import Foundation

#if canImport(Observation)
import Observation
#endif

enum KeyTracking {
    /// Reads `key` from `store`, and registers the read with the tracking in progress, if
    /// any: the next change of the key after the read fires it.
    static func read<Value>(_ key: DefaultsKey<Value>, in store: UserDefaults) -> Value {
        #if canImport(Observation)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            // Armed before the read, so that no change falls between them; read again
            // when one fired during the read (the tracking in progress is installed only
            // when its reading body returns, and would miss it). A few tries; past them
            // the value read is at most one change old.
            let feed = DefaultsSuite.of(store).feed
            for attempt in 0..<4 {
                let tracker = KeyTracker.armed(key.name, in: feed, through: store)
                let stored = store.object(forKey: key.name)
                // The tracking fires on the next change from what this read found: a value
                // set since the feed last published, unannounced, is published first (it
                // fires the tracker, and this read arms a new one).
                feed.noteRead(of: key.name, stored: stored, through: store)
                let value = store.valueReportingFailure(for: key, stored: stored)
                if !tracker.hasFired || attempt == 3 {
                    tracker.access()
                    return value
                }
            }
        }
        #endif
        return store[key]
    }
}

#if canImport(Observation)
/// The registrar of one key of one suite, listening to the suite's feed until the key's
/// next change: `access` on each read, and a mutation when the key changes.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class KeyTracker: Observable, ChangeSubscriber, @unchecked Sendable {
    // Unchecked: `isSubscribed` is behind `subscribing`; the rest are constants or locked.
    private let registrar = ObservationRegistrar()
    private let key: String
    private let feed: ChangeFeed
    private let subscribing = NSLock()
    private var isSubscribed = false
    private let fired = Locked(false)

    /// The property the registrar tracks: the key's value, which lives in the store.
    var value: Void { () }

    private init(key: String, feed: ChangeFeed) {
        self.key = key
        self.feed = feed
    }

    /// The trackers listening now, by feed and key.
    private static let armed = Locked<[ID: KeyTracker]>([:])

    private struct ID: Hashable {
        let feed: ObjectIdentifier
        let key: String
    }

    /// The tracker of `key` listening to `feed`, armed by this call when there was none.
    static func armed(_ key: String, in feed: ChangeFeed, through store: UserDefaults) -> KeyTracker {
        let id = ID(feed: ObjectIdentifier(feed), key: key)
        let tracker = armed.withLock { armed in
            if let tracker = armed[id] { return tracker }
            let tracker = KeyTracker(key: key, feed: feed)
            armed[id] = tracker
            return tracker
        }
        tracker.subscribe(through: store)
        return tracker
    }

    /// Whether the key changed since the tracker was armed.
    var hasFired: Bool {
        fired.withLock { $0 }
    }

    func access() {
        registrar.access(self, keyPath: \.value)
    }

    /// Subscribes once; readers that find the tracker before that wait for it, so that
    /// none reads before the tracker listens.
    private func subscribe(through store: UserDefaults) {
        subscribing.lock()
        defer { subscribing.unlock() }
        guard !isSubscribed else { return }
        isSubscribed = true
        feed.subscribe(self, to: [key], through: store, initial: false)
    }

    // MARK: - ChangeSubscriber

    func begin(key _: String, stored _: Any?) {}

    func start() {}

    func receive(_ change: KeyChange) {
        // A write made `withoutAnnouncing` is where trackings stand, as for observers.
        guard !change.isSilent else { return }
        let first = fired.withLock { fired in
            defer { fired = true }
            return !fired
        }
        guard first else { return }
        Self.armed.withLock { armed in
            let id = ID(feed: ObjectIdentifier(feed), key: key)
            if armed[id] === self { armed[id] = nil }
        }
        feed.unsubscribe(self)
        registrar.withMutation(of: self, keyPath: \.value) {}
    }
}
#endif
