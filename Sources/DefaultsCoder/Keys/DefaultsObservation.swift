// Observation without KVO: each observer subscribes to its suite's change feed
// (`ChangeFeed`), which hands it every change of its key — the package's writes in the
// order they reached the suite, what Foundation announces, what other processes wrote —
// one at a time, and only values that differ from the one before (the feed compares
// them); the observer decodes each and reports it.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// A token for an observation; observing stops when it is cancelled or released.
///
/// ```swift
/// let observation = UserDefaults.standard.observe(.launchCount) { old, new in
///     print("launchCount went from \(old) to \(new)")
/// }
/// // Keep `observation` for as long as you want to hear about changes.
/// ```
public final class DefaultsObservation: Sendable {
    /// The observer of one key, and the feed it listens to; `nil` for an observation of
    /// several keys.
    private let observer: (any StoppableObserver)?
    private let feed: ChangeFeed?
    /// The observations of several keys, cancelled together.
    private let parts: [DefaultsObservation]

    fileprivate init(observer: any StoppableObserver, feed: ChangeFeed) {
        self.observer = observer
        self.feed = feed
        self.parts = []
    }

    fileprivate init(parts: [DefaultsObservation]) {
        self.observer = nil
        self.feed = nil
        self.parts = parts
    }

    /// Stops observing. Calling it again does nothing.
    public func cancel() {
        for part in parts { part.cancel() }
        guard let observer, let feed else { return }
        observer.cancel()
        feed.unsubscribe(observer)
    }

    deinit {
        cancel()
    }
}

/// Observing typed keys without KVO: by closure, or as an async sequence.
extension UserDefaults {

    /// Calls `handler` with the old and new value each time the value for `key` changes.
    ///
    /// Changes reach the handler one at a time, never on two threads at once, in the
    /// order the suite took them: the package's writes in this process in the order they
    /// reached the suite, even from several threads at once. A write through the package
    /// returns after its observers ran: the handler runs on the writing thread, or on a
    /// thread already handing an earlier change over, which the write waits for. A write
    /// made inside the handler is handed over right after the handler returns, so a
    /// handler must not wait for another thread that writes the same suite. Another
    /// process's change arrives on a queue of the package's. So do not assume a thread:
    /// hop to your actor inside the handler (`Task { @MainActor in … }`). It is not
    /// called for a write that leaves the stored value as it was (compared once, by the
    /// suite's change feed, as property lists), and never goes back to an older value.
    ///
    /// Seen: every change made through this package in this process — `write(_:to:)`, the
    /// subscript, `@UserDefault`, `reset()`, `reset(_:)`, `resetAll()`,
    /// `encode(_:forKey:)`, `register(_:)`, migrations; every change Foundation announces
    /// with `didChangeNotification` (on Apple platforms, also plain `set(_:forKey:)` calls
    /// in this process); and changes other processes make to the suite, once each, with
    /// the value the suite holds when it is read (two quick changes may arrive as one):
    /// on Linux any change of the suite's file (package writes and Foundation's
    /// `synchronize()` alike), on Apple platforms the package's writes and, for keys
    /// without a dot, other code's writes (key-value observing). Not seen: plain
    /// `set(_:forKey:)`/`removeObject(forKey:)` calls on Linux until they are
    /// synchronized, and, on Apple platforms, other code's writes in other processes to
    /// keys with a dot. See
    /// <doc:TypedKeysWrapperAndObservation> for the delays.
    ///
    /// With `initial` (the default, as for `updates(for:initial:)`), `handler` is first
    /// called once with the current value as both old and new, before `observe` returns
    /// (inside a handler of the same suite: right after that handler returns), and before
    /// any change.
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - initial: Whether to call `handler` at once with the current value.
    ///   - handler: Called with the old and the new value.
    /// - Returns: A token; observing stops when it is cancelled or released.
    public func observe<Value>(
        _ key: DefaultsKey<Value>,
        initial: Bool = true,
        handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> DefaultsObservation {
        startObserving(key, initial: initial, handler: handler)
    }

    /// Calls `handler` with the key each time the value of one of `keys` changes; the
    /// keys' value types may differ. What counts as a change is as for
    /// `observe(_:initial:handler:)`.
    ///
    /// ```swift
    /// let observation = defaults.observe([.launchCount, .theme]) { key in
    ///     print("\(key.name) changed")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys to observe.
    ///   - initial: Whether to call `handler` first, once for each key.
    ///   - handler: Called with the key whose value changed; never on two threads at once.
    /// - Returns: A token; observing stops for every key when it is cancelled or released.
    public func observe(
        _ keys: [DefaultsKeys],
        initial: Bool = true,
        handler: @escaping @Sendable (_ key: DefaultsKeys) -> Void
    ) -> DefaultsObservation {
        // A name listed twice, or under two types, is one key: one call per change.
        var names = Set<String>()
        let unique = keys.filter { names.insert($0.name).inserted }
        let parts = unique.compactMap { key in key.observeChanges(in: self, initial: initial) { handler(key) } }
        return DefaultsObservation(parts: parts)
    }

    /// The keys of `keys` whose value changes, one element per change, in order, for as
    /// long as the task that iterates runs.
    ///
    /// ```swift
    /// for await key in defaults.updates(for: [.launchCount, .theme]) {
    ///     print("\(key.name) changed")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys to observe.
    ///   - initial: Whether to start with each key once.
    /// - Returns: A sequence of keys.
    public func updates(for keys: [DefaultsKeys], initial: Bool = true) -> AsyncStream<DefaultsKeys> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let observation = observe(keys, initial: initial) { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Starts observing `key` for an observation of several keys: `handler` is called
    /// for each change, and first once with `initial`.
    func observeChanges<Value>(of key: DefaultsKey<Value>, initial: Bool, handler: @escaping @Sendable () -> Void) -> DefaultsObservation {
        startObserving(key, initial: initial) { _, _ in handler() }
    }

    /// The value for `key` now, and then each new value, for as long as the task that
    /// iterates runs. The sequence ends when that task is cancelled.
    ///
    /// ```swift
    /// for await count in UserDefaults.standard.updates(for: .launchCount) {
    ///     print(count)
    /// }
    /// ```
    ///
    /// Every change is delivered, in order (the buffer is unbounded); what counts as a
    /// change is as for `observe(_:initial:handler:)`.
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - initial: Whether to start with the current value (the default, as for
    ///     `observe(_:initial:handler:)`).
    /// - Returns: A sequence of values, starting with the current one unless `initial`
    ///   is `false`.
    public func updates<Value>(for key: DefaultsKey<Value>, initial: Bool = true) -> AsyncStream<Value> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let observation = startObserving(key, initial: initial) { _, new in
                continuation.yield(new)
            }
            continuation.onTermination = { _ in
                observation.cancel()
            }
        }
    }

    /// Subscribes an observer of `key` to this suite's feed; with `initial`, its first
    /// call is `handler(current, current)`, before any change.
    private func startObserving<Value>(
        _ key: DefaultsKey<Value>, initial: Bool, handler: @escaping @Sendable (Value, Value) -> Void
    ) -> DefaultsObservation {
        let feed = DefaultsSuite.of(self).feed
        let observer = KeyObserver(defaults: self, key: key, handler: handler)
        feed.subscribe(observer, to: [key.name], through: self, initial: initial)
        return DefaultsObservation(observer: observer, feed: feed)
    }
}

// MARK: - The package's other products

extension UserDefaults {
    /// Calls `handler` with the name of each of `keys` whose stored value changes, as
    /// `object(forKey:)` shows it, from the suite's change feed; values are not decoded.
    /// For the package's other products (a configuration provider's watches).
    ///
    /// - Parameters:
    ///   - keys: The names of the keys.
    ///   - handler: Called one change at a time, as for `observe(_:initial:handler:)`.
    /// - Returns: The observation; observing stops when it is cancelled or released.
    package func observeStoredValues(of keys: [String], _ handler: @escaping @Sendable (String) -> Void) -> DefaultsObservation {
        let feed = DefaultsSuite.of(self).feed
        let observer = NameObserver(handler: handler)
        feed.subscribe(observer, to: Array(Set(keys)), through: self, initial: false)
        return DefaultsObservation(observer: observer, feed: feed)
    }
}

// MARK: - Machinery

/// An observer of the feed that can be told to stop reporting.
private protocol StoppableObserver: ChangeSubscriber {
    func cancel()
}

/// One observation of one key: the feed hands it each change of its key — a value that
/// differs from the one before — one at a time, and it decodes and reports it.
private final class KeyObserver<Value: Codable & Sendable>: StoppableObserver, @unchecked Sendable {
    // `defaults` is thread-safe; the mutable state is behind `last`.
    private let defaults: UserDefaults
    private let key: DefaultsKey<Value>
    private let handler: @Sendable (Value, Value) -> Void
    /// The value the observer last had (`nil` until `begin`), and whether it stopped.
    private let last = Locked<(value: Value?, isCancelled: Bool)>((nil, false))

    init(defaults: UserDefaults, key: DefaultsKey<Value>, handler: @escaping @Sendable (Value, Value) -> Void) {
        self.defaults = defaults
        self.key = key
        self.handler = handler
    }

    func cancel() {
        last.withLock { $0.isCancelled = true }
    }

    func begin(key _: String, stored: Any?) {
        let (value, failure) = decode(stored)
        last.withLock { $0.value = value }
        if let failure { DefaultsFailure.report(failure) }
    }

    func start() {
        guard let value = last.withLock({ $0.isCancelled ? nil : $0.value }) else { return }
        handler(value, value)
    }

    func receive(_ change: KeyChange) {
        let (value, failure) = decode(change.stored)
        let old: Value? = last.withLock { last in
            guard !last.isCancelled else { return nil }
            defer { last.value = value }
            return change.isAnnounced ? last.value : nil
        }
        // The change first: a failure handler that repairs the value causes the next
        // change, which must be heard after this one.
        if let old { handler(old, value) }
        if let failure { DefaultsFailure.report(failure) }
    }

    /// The value `stored` reads as; a failure reads as the default, and is reported.
    /// The default is worked out only when nothing is stored, or the value fails.
    private func decode(_ stored: Any?) -> (Value, DefaultsFailure?) {
        do {
            return (try defaults.value(for: key, stored: stored), nil)
        } catch {
            return (key.defaultValue, DefaultsFailure(key: key.name, operation: .read, error: error))
        }
    }
}

/// An observer of keys by name: it reports which key changed, and decodes nothing.
private final class NameObserver: StoppableObserver, Sendable {
    private let handler: @Sendable (String) -> Void
    private let isCancelled = Locked(false)

    init(handler: @escaping @Sendable (String) -> Void) {
        self.handler = handler
    }

    func cancel() {
        isCancelled.withLock { $0 = true }
    }

    func begin(key _: String, stored _: Any?) {}
    func start() {}

    func receive(_ change: KeyChange) {
        guard !isCancelled.withLock({ $0 }), change.isAnnounced else { return }
        handler(change.key)
    }
}
