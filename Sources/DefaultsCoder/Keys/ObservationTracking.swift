// The Observation framework without macros: a `@UserDefault` read inside
// `withObservationTracking` (a SwiftUI `body`) registers its key, and the key's next real
// change fires the tracking. Every wrapper of one key in one suite shares one tracker that
// listens from a read until that change, then stops, as the framework's trackings do.
// Observation cannot tell whether a tracking is in progress, so any read arms one: at most
// one per suite and key.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

#if canImport(Observation)
import Observation
#endif

enum ObservationTracking {
    /// Reads `key` from `store`, and registers the read with the tracking in progress, if
    /// any: the next change of the key after the read fires it.
    ///
    /// - Parameter reader: The reading wrapper's own registrar: trackings of the read end
    ///   with it, as trackings of an `@Observable` model's property end with the model.
    static func read<Value>(_ key: DefaultsKey<Value>, in store: UserDefaults, by reader: TrackedReader) -> Value {
        #if canImport(Observation)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            // Armed before the read, so that no change falls between them; read again
            // when one was published during the read (the tracking in progress is
            // installed only when its reading body returns, and would miss it; or the
            // tracker would fire for a value this read saw). A few tries; past them the
            // value read is at most one change old.
            var stale: KeyTracker?
            for attempt in 0..<4 {
                let last = reader.lastTracker(of: key.name, through: store, unless: stale)
                let tracker = last?.tracker ?? KeyTracker.armed(key.name, in: DefaultsSuite.of(store).feed, through: store, replacing: stale)
                let stored = store.object(forKey: key.name)
                // The tracking fires on the next change from what this read found: a value
                // set since the feed last published, unannounced, is published first (it
                // fires the tracker, and this read arms a new one).
                let value = store.valueReportingFailure(for: key, stored: stored)
                if !tracker.isStale(afterReading: stored, through: store) || attempt == 3 {
                    if let last { last.registrant.access() } else { tracker.access(by: reader, through: store) }
                    return value
                }
                stale = tracker
            }
        }
        #endif
        return store[key]
    }
}

/// One wrapper's registrars: a tracking registers with the wrapper that was read, so
/// that it ends when the wrapper (and the model holding it) goes, as Observation's own
/// trackings do. One registrar per tracker the wrapper was read through: a tracker that
/// fires for a change fires only the trackings armed before that change was published,
/// never one armed since on a read that already found the new value.
final class TrackedReader: @unchecked Sendable {
    // Unchecked: the list is locked; its registrants are `Registrant`s, held here alone
    // (a tracker holds them weakly), and its trackers `KeyTracker`s, held strongly (a
    // fired one is dropped as the next is added): a weakly held object costs more at
    // every retain.
    private let registrants = Locked<[(tracker: AnyObject, registrant: AnyObject, store: UserDefaults)]>([])

    init() {}

    #if canImport(Observation)
    /// The registrar of reads through `tracker`, made on first use; those of trackers
    /// gone (fired and let go) are dropped.
    ///
    /// - Returns: The registrar, and whether it was made now (and so is not yet among
    ///   the tracker's readers).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func registrant(for tracker: KeyTracker, through store: UserDefaults) -> (registrant: Registrant, isNew: Bool) {
        registrants.withLock { registrants in
            if let found = registrants.last(where: { $0.tracker === tracker }) {
                return (unsafeDowncast(found.registrant, to: Registrant.self), false)
            }
            registrants.removeAll { unsafeDowncast($0.tracker, to: KeyTracker.self).hasFired }
            let made = Registrant()
            registrants.append((tracker, made, store))
            return (made, true)
        }
    }

    /// The tracker this wrapper was last read through, and its registrar, when that read
    /// was of `key` through `store` and the tracker is not `stale`: a read then goes to
    /// it straight, without looking the suite or its trackers up. (The store is held, so
    /// another object cannot take its place at its address.)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func lastTracker(of key: String, through store: UserDefaults, unless stale: KeyTracker?) -> (tracker: KeyTracker, registrant: Registrant)? {
        registrants.withLock { registrants in
            guard let last = registrants.last, last.store === store, last.tracker !== stale else { return nil }
            let tracker = unsafeDowncast(last.tracker, to: KeyTracker.self)
            guard tracker.key == key else { return nil }
            return (tracker, unsafeDowncast(last.registrant, to: Registrant.self))
        }
    }

    /// The observable a tracking of a wrapper's read registers with.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    final class Registrant: Observable, Sendable {
        let registrar = ObservationRegistrar()
        /// The property tracked: the key's value, which lives in the store.
        var value: Void { () }

        func access() { registrar.access(self, keyPath: \.value) }
        func changed() { registrar.withMutation(of: self, keyPath: \.value) {} }
    }
    #endif
}

#if canImport(Observation)
/// The listener of one key of one suite, listening to the suite's feed until the key's
/// next change: the readers registered on each read, and a mutation of each reader that
/// is still there when the key changes.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class KeyTracker: ChangeSubscriber, @unchecked Sendable {
    // Unchecked: `isSubscribed` is behind `subscribing`; the rest are constants or locked.
    /// The readers that read since the tracker was armed, held weakly: a released model's
    /// trackings are not kept, nor fired.
    private let readers = Locked<[ObjectIdentifier: WeakReference]>([:])
    /// The key listened to.
    let key: String
    private let feed: ChangeFeed
    private let subscribing = NSLock()
    private var isSubscribed = false
    /// The number of the key's value as published when the tracker joined the feed
    /// (`nil` until it joined), that value, and whether the tracker fired: one lock for
    /// the look every read takes.
    private let state = Locked<(joined: Int?, value: Any?, fired: Bool)>((nil, nil, false))

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

    /// The tracker of `key` listening to `feed`, armed by this call when there was none,
    /// or when the one there is `stale` (a read found it so, `isStale(at:)`): a stale
    /// tracker fires at a change already published, and is left to fire for the reads
    /// before that change.
    static func armed(_ key: String, in feed: ChangeFeed, through store: UserDefaults, replacing stale: KeyTracker?) -> KeyTracker {
        let id = ID(feed: ObjectIdentifier(feed), key: key)
        let tracker = armed.withLock { armed in
            if let tracker = armed[id], tracker !== stale { return tracker }
            let tracker = KeyTracker(key: key, feed: feed)
            armed[id] = tracker
            return tracker
        }
        tracker.subscribe(through: store)
        return tracker
    }

    /// Whether a read that found `stored` must register with a newer tracker: a change
    /// of the key was published since the tracker joined the feed, so that it fired, or
    /// will fire once the change is handed over, for a value the read found.
    ///
    /// A read that finds the value the tracker joined at asks nothing of the feed: no
    /// change since the tracker joined shows there (one that was undone fires it once
    /// more than needed, never less). Any other value is told to the feed
    /// (`ChangeFeed.noteRead`), which publishes it when nobody announced it.
    func isStale(afterReading stored: Any?, through store: UserDefaults) -> Bool {
        let known = state.withLock { state -> Bool? in
            guard state.joined != nil else { return nil }
            if state.fired { return true }
            return sameStoredValue(state.value, stored) ? false : nil
        }
        if let known { return known }
        let published = feed.noteRead(of: key, stored: stored, through: store)
        return state.withLock { state in
            guard let joined = state.joined else { return false }
            return state.fired || published != joined
        }
    }

    /// Whether the tracker fired: it is done, and no read registers with it again.
    var hasFired: Bool {
        state.withLock { $0.fired }
    }

    /// Registers the tracking in progress with `reader`, and `reader` with this tracker,
    /// for reads through `store`.
    func access(by reader: TrackedReader, through store: UserDefaults) {
        let (registrant, isNew) = reader.registrant(for: self, through: store)
        if isNew { join(registrant) }
        registrant.access()
    }

    /// Adds `registrant` to the readers fired at the key's next change.
    private func join(_ registrant: TrackedReader.Registrant) {
        readers.withLock { readers in
            let id = ObjectIdentifier(registrant)
            // A released reader's address may be a new one's: the entry is replaced.
            guard readers[id]?.object !== registrant else { return }
            // Entries of released readers are dropped as the list grows, so that it stays
            // as long as the readers alive, doubled.
            if readers.count >= 64, readers.count.nonzeroBitCount == 1 { readers = readers.filter { $0.value.object != nil } }
            readers[id] = WeakReference(registrant)
        }
    }

    /// Subscribes once; readers that find the tracker before that wait for it, so that
    /// none reads before the tracker listens.
    private func subscribe(through store: UserDefaults) {
        if state.withLock({ $0.joined != nil }) { return }
        subscribing.lock()
        defer { subscribing.unlock() }
        guard !isSubscribed else { return }
        isSubscribed = true
        let number = feed.subscribe(self, to: [key], through: store, initial: false)[key]
        state.withLock { $0.joined = number }
    }

    // MARK: - ChangeSubscriber

    func begin(key _: String, stored: Any?) {
        state.withLock { $0.value = stored }
    }

    func start() {}

    func receive(_ change: KeyChange) {
        // A write made `withoutAnnouncing` is where trackings stand, as for observers.
        guard change.isAnnounced else { return }
        let first = state.withLock { state in
            defer { state.fired = true }
            return !state.fired
        }
        guard first else { return }
        Self.armed.withLock { armed in
            let id = ID(feed: ObjectIdentifier(feed), key: key)
            if armed[id] === self { armed[id] = nil }
        }
        feed.unsubscribe(self)
        let live = readers.withLock { readers in
            defer { readers = [:] }
            return readers.values.compactMap { $0.object as? TrackedReader.Registrant }
        }
        for registrant in live { registrant.changed() }
    }
}
#endif
