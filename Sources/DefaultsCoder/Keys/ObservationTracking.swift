// The Observation framework without macros: reading a `@UserDefault` property inside
// `withObservationTracking` (what a SwiftUI `body` does) registers its key, and the next
// real change of that key fires the tracking's `onChange`. Each wrapper has a registrar
// of its own, made on its first read, which hears of changes through the same observers
// as `observe(_:initial:handler:)`: so a write of an equal value, or of another key, fires
// nothing.

import Foundation

#if canImport(Observation)
import Observation
#endif

/// What a `UserDefault` keeps for the Observation framework: nothing until its first read
/// on a system that has the framework, then a `KeyTracker` for as long as the wrapper
/// lives. A class, so that a wrapper copied into a SwiftUI `@State` or a model keeps one.
final class KeyTracking: Sendable {
    /// The `KeyTracker`, typed as `AnyObject` so that this class needs no availability.
    private let tracker = Locked<(any AnyObject & Sendable)?>(nil)

    /// Tells the Observation framework that the value for `key` in `store` was read.
    /// Registers a read of `key` with the tracking in progress, if any: `stored` is what
    /// the reader got, and the next change is measured against it. A change the suite's
    /// `feed` (the store's suite's) published since `changesBefore`
    /// (`ChangeFeed.changeCount(of:)`) fires at once for the trackings already installed:
    /// the reader may have read the value before it. (The tracking in progress is
    /// installed only when its reading body returns, and hears nothing before then: the
    /// wrapper reads again instead, while changes are published during its read.)
    func access<Value>(_ key: DefaultsKey<Value>, in store: UserDefaults, feed: ChangeFeed, read stored: Any?, changesBefore: UInt64) {
        #if canImport(Observation)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            let tracker = tracker(for: key, in: store)
            tracker.access(key: key.name, read: stored)
            if feed.changeCount(of: key.name) != changesBefore { tracker.changed() }
        }
        #endif
    }

    #if canImport(Observation)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    private func tracker<Value>(for key: DefaultsKey<Value>, in store: UserDefaults) -> KeyTracker {
        if let existing = tracker.withLock({ $0 }) as? KeyTracker { return existing }
        // Made outside the lock: starting to observe reads and decodes the value, which
        // runs the app's `init(from:)`. Two first reads racing keep the first tracker.
        let made = KeyTracker(key: key, store: store)
        return tracker.withLock { tracker in
            if let existing = tracker as? KeyTracker { return existing }
            tracker = made
            return made
        }
    }
    #endif
}

#if canImport(Observation)
/// One wrapper's registrar: `access` on each read, and a mutation each time its key's
/// value really changes, as `observe(_:initial:handler:)` sees changes.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class KeyTracker: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let observation = Locked<DefaultsObservation?>(nil)

    /// The property the registrar tracks: the key's value, which lives in the store.
    var value: Void { () }

    init<Value>(key: DefaultsKey<Value>, store: UserDefaults) {
        // The handler holds the tracker weakly: when the wrapper goes, the tracker goes,
        // and with it the observation.
        let observation = store.observe(key, initial: false) { [weak self] _, _ in self?.changed() }
        self.observation.withLock { $0 = observation }
    }

    func access(key: String, read stored: Any?) {
        registrar.access(self, keyPath: \.value)
        observation.withLock { $0 }?.noteRead(key: key, stored: stored)
    }

    func changed() {
        registrar.withMutation(of: self, keyPath: \.value) {}
    }
}
#endif
