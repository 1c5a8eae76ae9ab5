//
//  DefaultsObservation.swift
//  DefaultsCoder
//
//  Observation without KVO: every write through this package announces the key it
//  changed, and observers re-read their key and compare. Foundation's
//  `UserDefaults.didChangeNotification` makes every observer re-read as well.
//

import Foundation

/// A token for an observation; observing stops when it is cancelled or released.
///
/// ```swift
/// let observation = UserDefaults.standard.observe(.launchCount) { old, new in
///     print("launchCount went from \(old) to \(new)")
/// }
/// // Keep `observation` for as long as you want to hear about changes.
/// ```
public final class DefaultsObservation: Sendable {
    private let name: String
    /// The observer of one key; `nil` for an observation of several keys.
    private let observer: (any Rechecking)?
    /// The observations of several keys, cancelled together.
    private let parts: [DefaultsObservation]

    fileprivate init(name: String, observer: any Rechecking) {
        self.name = name
        self.observer = observer
        self.parts = []
    }

    fileprivate init(parts: [DefaultsObservation]) {
        self.name = ""
        self.observer = nil
        self.parts = parts
    }

    /// Stops observing. Calling it again does nothing.
    public func cancel() {
        for part in parts { part.cancel() }
        guard let observer else { return }
        observer.cancel()
        ObservationRegistry.shared.remove(ObjectIdentifier(observer), for: name)
    }

    /// Tells the observation what a reader just read, so that the next change is
    /// measured against it: a value changed without an announcement (a plain
    /// `set(_:forKey:)` on Linux) and then changed back must still be heard.
    func noteRead(stored: Any?, value: Any) {
        observer?.noteRead(stored: stored, value: value)
    }

    /// Whether `observe` and `updates` start with the current value when not told:
    /// `true`, for both.
    public static let initialByDefault = true

    deinit {
        cancel()
    }
}

/// Observing typed keys without KVO: by closure, or as an async sequence.
extension UserDefaults {

    /// The notification this package posts after it changed a value, on every platform,
    /// with the key's name under `"key"` in `userInfo`. It is posted once on each
    /// `UserDefaults` object of the suite that the package has seen (any of its calls on an
    /// object registers it), whichever object made the change — a migration's target
    /// suite included. To hear every change whatever the object, observe with
    /// `object: nil`.
    ///
    /// Foundation's `didChangeNotification` is not enough: on Linux it is posted for
    /// `setPersistentDomain(_:forName:)` and `removePersistentDomain(forName:)` only, not
    /// for `set(_:forKey:)` or `removeObject(forKey:)`.
    public static let keyDidChangeNotification = Notification.Name("DefaultsCoder.keyDidChange")

    /// Calls `handler` with the old and new value each time the value for `key` changes.
    ///
    /// The handler runs synchronously, with no lock held, on the thread whose
    /// announcement found the change: for a write through this package that is normally
    /// the writing thread, before the write returns; for Foundation's
    /// `didChangeNotification`, the posting thread. When two announcements race, the
    /// change is still reported once, on whichever thread looked first. Changes reach the
    /// handler one at a time, in the order they were found: one found while the handler
    /// runs for an earlier one (on another thread, or by a write inside the handler) is
    /// handed over by the thread already calling it, once the handler returns. So do not
    /// assume a thread: hop to your actor inside the handler (`Task { @MainActor in … }`). It is
    /// not called for a write that leaves the value as it was (compared with `==` when
    /// `Value` is `Equatable`, otherwise by the stored property list).
    ///
    /// Seen: every change made through this package in this process — `write(_:to:)`, the
    /// subscript, `@UserDefault`, `reset()`, `reset(_:)`, `encode(_:forKey:)`,
    /// `register(_:)` — and every change that Foundation announces with
    /// `didChangeNotification` (on Apple platforms, also plain `set(_:forKey:)` calls in
    /// this process). Not seen: plain `set(_:forKey:)`/`removeObject(forKey:)` calls on
    /// Linux until the next change that is announced, and changes made by other processes.
    ///
    /// With `initial` (the default, as for `updates(for:initial:)`), `handler` is also
    /// called once at once, before `observe` returns, with the current value as both old
    /// and new.
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - initial: Whether to call `handler` at once with the current value.
    ///   - handler: Called with the old and the new value.
    /// - Returns: A token; observing stops when it is cancelled or released.
    public func observe<Value>(
        _ key: DefaultsKey<Value>,
        initial: Bool = DefaultsObservation.initialByDefault,
        handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> DefaultsObservation {
        let (observation, current) = startObserving(key, handler: handler)
        if initial { handler(current, current) }
        return observation
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
    ///   - initial: Whether to call `handler` at once, once for each key.
    ///   - handler: Called with the key whose value changed.
    /// - Returns: A token; observing stops for every key when it is cancelled or released.
    public func observe(
        _ keys: [DefaultsKeys],
        initial: Bool = DefaultsObservation.initialByDefault,
        handler: @escaping @Sendable (_ key: DefaultsKeys) -> Void
    ) -> DefaultsObservation {
        let parts = keys.compactMap { key in key.observeChanges(in: self) { handler(key) } }
        if initial { for key in keys { handler(key) } }
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
    public func updates(for keys: [DefaultsKeys], initial: Bool = DefaultsObservation.initialByDefault) -> AsyncStream<DefaultsKeys> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let observation = observe(keys, initial: initial) { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Starts observing `key` with no initial call, for an observation of several keys.
    func observeChanges<Value>(of key: DefaultsKey<Value>, handler: @escaping @Sendable () -> Void) -> DefaultsObservation {
        startObserving(key) { _, _ in handler() }.observation
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
    public func updates<Value>(for key: DefaultsKey<Value>, initial: Bool = DefaultsObservation.initialByDefault) -> AsyncStream<Value> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let (observation, current) = startObserving(key) { _, new in
                continuation.yield(new)
            }
            if initial { continuation.yield(current) }
            continuation.onTermination = { _ in
                observation.cancel()
            }
        }
    }

    /// Registers an observer and returns its token with the value it starts from.
    private func startObserving<Value>(
        _ key: DefaultsKey<Value>,
        handler: @escaping @Sendable (Value, Value) -> Void
    ) -> (observation: DefaultsObservation, current: Value) {
        let observer = KeyObserver(defaults: self, key: key, handler: handler)
        // Listening first, reading second: a write that lands in between is either read
        // here or announced to an observer that is already listening, never missed.
        ObservationRegistry.shared.add(observer, for: key.name)
        observer.recheck(written: nil, reporting: true)
        return (DefaultsObservation(name: key.name, observer: observer), observer.current)
    }
}

/// A tree this package just wrote, which an observer may take for what `object(forKey:)`
/// would return instead of reading it back. On Linux that read costs more than the write
/// of a small value: the first read after `synchronize()` parses the suite's file again.
struct WrittenTree {
    /// The object the tree was written through; observers of other objects read back.
    let defaults: UserDefaults
    let tree: Any
    /// Which package write of the key this was (`ObservationRegistry.beginWrite(of:)`).
    let write: UInt64
}

// MARK: - Machinery

/// An observer the registry can ask to look at its key again.
private protocol Rechecking: AnyObject, Sendable {
    /// Reads the key again; a change is reported unless `reporting` is false, when the
    /// observer only takes the new value as where it stands (a write made
    /// `withoutAnnouncing`).
    func recheck(written: WrittenTree?, reporting: Bool)
    func noteRead(stored: Any?, value: Any)
    func cancel()
}

/// The observers of all keys, by key name. An observer of suite A's `"k"` also rechecks
/// after a write to suite B's `"k"`, and finds nothing changed: two `UserDefaults`
/// objects can share a suite, and Foundation does not say which suite an object is.
final class ObservationRegistry: Sendable {
    static let shared = ObservationRegistry()

    private let observers = Locked<[String: [ObjectIdentifier: any Rechecking]]>([:])
    private let foundationObserver = Locked<(any NSObjectProtocol)?>(nil)
    /// How many package writes of each key name began, and how many ended, under a
    /// suite file's write lock. A written tree stands for the stored value only while
    /// its write is the last one begun: a later write to the key, in any suite, sends
    /// observers back to reading.
    ///
    /// Two counts, because two questions: an observer asks which writes a read may have
    /// seen (every write begun by the time the read ended), a reader of the value asks
    /// whether a change landed while it read (a write ended since it began reading).
    /// `announced` counts the changes Foundation announced (`didChangeNotification`),
    /// of any key: they are not counted by key, and a reader of any key takes one as a
    /// possible change of its own.
    private let writes = Locked<(byKey: [String: (begun: UInt64, ended: UInt64)], announced: UInt64)>(([:], 0))

    /// Counts the start of a write of `name`; called under the suite file's write lock,
    /// right before the write, so that counts follow the order the writes reach the file
    /// in, and a read that can have seen a write's value finds it begun.
    ///
    /// - Returns: Which write of `name` this is, for `WrittenTree.write`.
    func beginWrite(of name: String) -> UInt64 {
        writes.withLock { writes in
            writes.byKey[name, default: (0, 0)].begun &+= 1
            return writes.byKey[name]!.begun
        }
    }

    /// Counts the end of a write of each of `names`, whether it succeeded or threw.
    func endWrites(of names: [String]) {
        writes.withLock { writes in
            for name in names { writes.byKey[name, default: (0, 0)].ended &+= 1 }
        }
    }

    /// Keys being written `withoutAnnouncing` now, with how many such writes are under
    /// way: an observer that looks again meanwhile, for another reason, takes what it
    /// finds as where it stands instead of reporting a change nobody announced.
    private let silentWrites = Locked<[String: Int]>([:])

    /// Marks `names` as written silently until `endSilentWrites(of:)`.
    func beginSilentWrites(of names: [String]) {
        silentWrites.withLock { for name in names { $0[name, default: 0] += 1 } }
    }

    func endSilentWrites(of names: [String]) {
        silentWrites.withLock { writes in
            for name in names {
                let left = writes[name, default: 1] - 1
                writes[name] = left > 0 ? left : nil
            }
        }
    }

    /// Whether a silent write of `name` is under way.
    fileprivate func isWrittenSilently(_ name: String) -> Bool {
        silentWrites.withLock { !$0.isEmpty && $0[name] != nil }
    }

    /// How many package writes of `name` ended so far, plus how many changes Foundation
    /// announced: a reader that finds the count changed across its read may have read
    /// the value from before a change that was announced while it read.
    func changeCount(of name: String) -> UInt64 {
        writes.withLock { ($0.byKey[name]?.ended ?? 0) &+ $0.announced }
    }

    /// How many package writes of `name` began so far: the number the next one's
    /// `beginWrite(of:)` returns, less one.
    func begunWriteCount(of name: String) -> UInt64 {
        writes.withLock { $0.byKey[name]?.begun ?? 0 }
    }

    /// Whether `write` is still the last write of `name` begun.
    fileprivate func isLastWrite(_ write: UInt64, of name: String) -> Bool {
        writes.withLock { $0.byKey[name]?.begun == write }
    }

    fileprivate func add(_ observer: some Rechecking, for name: String) {
        observers.withLock { $0[name, default: [:]][ObjectIdentifier(observer)] = observer }
        listenToFoundation()
    }

    func remove(_ id: ObjectIdentifier, for name: String) {
        observers.withLock { observers in
            observers[name]?[id] = nil
            if observers[name]?.isEmpty == true { observers[name] = nil }
        }
    }

    /// Has the observers of `name` look again; called after this package wrote it.
    /// With `reporting` false they take the value as it is without reporting a change.
    func check(_ name: String, written: WrittenTree? = nil, reporting: Bool = true) {
        let interested = observers.withLock { $0[name].map { Array($0.values) } ?? [] }
        for observer in interested { observer.recheck(written: written, reporting: reporting) }
    }

    /// Has every observer look again.
    func checkAll() {
        let everyone = observers.withLock { $0.values.flatMap(\.values) }
        for observer in everyone { observer.recheck(written: nil, reporting: true) }
    }

    /// Starts hearing the changes Foundation announces, once: an observer needs them,
    /// and so does a reader that must know whether one came while it read.
    func listenToFoundation() {
        foundationObserver.withLock { token in
            guard token == nil else { return }
            token = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: nil, queue: nil
            ) { _ in
                // A change the package is writing on this thread (Apple's Foundation
                // announces each of its `set(_:forKey:)` calls as it makes it) is
                // announced by the package once it is written whole.
                if Suite.isWriting { return }
                // Counted before the observers look: a reader that then finds the count
                // unchanged read after the change.
                ObservationRegistry.shared.writes.withLock { $0.announced &+= 1 }
                ObservationRegistry.shared.checkAll()
            }
        }
    }
}

/// One observation of one key: remembers the last value it reported.
private final class KeyObserver<Value: Codable & Sendable>: Rechecking, @unchecked Sendable {
    // `defaults` is thread-safe; the mutable state is behind `last`.
    private let defaults: UserDefaults
    private let key: DefaultsKey<Value>
    private let handler: @Sendable (Value, Value) -> Void
    /// What the observer last read; `isRead` is false until its first read. `seenWrite`
    /// is how many package writes of the key had begun when that value was taken: a
    /// written tree is newer than the value only when its write began after that.
    private let last: Locked<(stored: Any?, value: Value, isCancelled: Bool, isRead: Bool, seenWrite: UInt64)>
    /// Changes found and not yet handed to the handler: two threads that find two
    /// changes one after the other hand them over in that order, and never at once.
    private let delivery: DemandBuffer<(old: Value, new: Value)>

    init(defaults: UserDefaults, key: DefaultsKey<Value>, handler: @escaping @Sendable (Value, Value) -> Void) {
        self.defaults = defaults
        self.key = key
        self.handler = handler
        last = Locked((nil, key.defaultValue, false, false, 0))
        delivery = DemandBuffer { change in
            handler(change.old, change.new)
            return 0
        }
        delivery.request(.max)
    }

    /// Under the same lock as `recheck`'s comparison: an announcement that took its list
    /// of observers before the token was cancelled finds this and reports nothing.
    func cancel() {
        last.withLock { $0.isCancelled = true }
        delivery.cancel()
    }

    func noteRead(stored: Any?, value: Any) {
        guard let value = value as? Value else { return }
        let seenWrite = ObservationRegistry.shared.begunWriteCount(of: key.name)
        last.withLock { last in
            guard !last.isCancelled else { return }
            (last.stored, last.value, last.isRead) = (stored, value, true)
            last.seenWrite = max(last.seenWrite, seenWrite)
        }
    }

    var current: Value {
        last.withLock { $0.value }
    }

    func recheck(written: WrittenTree?, reporting: Bool) {
        // Read and compare under the lock, so that two writers racing each report a
        // change once. Nothing that runs code of the app's — the handler, the failure
        // handler — runs under it: either may write again, which rechecks here.
        var failure: DefaultsFailure?
        let change: (old: Value, new: Value)? = last.withLock { last in
            if last.isCancelled { return nil }
            let stored: Any?
            if let written, let tree = storedValue(of: written, after: last.seenWrite) {
                (stored, last.seenWrite) = (tree, written.write)
            } else {
                stored = defaults.object(forKey: key.name)
                // Taken after the read: a write begun by then may be what was read, or
                // older than what was read, and its tree is not taken after it.
                last.seenWrite = ObservationRegistry.shared.begunWriteCount(of: key.name)
            }
            let value: Value
            do {
                value = try defaults.value(for: key, stored: stored)
            } catch {
                failure = DefaultsFailure(key: key.name, operation: .read, error: error)
                value = key.defaultValue
            }
            defer { (last.stored, last.value, last.isRead) = (stored, value, true) }
            // The first read sets where the observer starts; it is no change.
            if !last.isRead { return nil }
            // Checked after reading: a silent write that this read saw is still under
            // way (its observers are told after the write, before it ends).
            if !reporting || isSame(last.value, value, stored: last.stored, stored) { return nil }
            if ObservationRegistry.shared.isWrittenSilently(key.name) { return nil }
            // Queued under the observer's lock, so that changes queue in the order they
            // were found.
            delivery.enqueue((last.value, value))
            return (last.value, value)
        }
        // The change first: a failure handler that repairs the value causes the next
        // change, which must be heard after this one.
        if change != nil { delivery.drain() }
        if let failure { DefaultsFailure.report(failure) }
    }

    /// The tree just written, when it is what reading the key back would give: written
    /// through this observer's object, begun after the value the observer holds was
    /// taken (`seenWrite`), no package write of the key begun since, and no launch
    /// argument that overrides the key. Otherwise `nil`, and the key is read back.
    ///
    /// The count after the observer's own value matters because not every write is
    /// counted — the app's plain `set(_:forKey:)`, another process's write — and a
    /// write's announcement can come late: a read that already found a newer value must
    /// not be followed by the older tree, which would report the value going back.
    private func storedValue(of written: WrittenTree, after seenWrite: UInt64) -> Any? {
        guard written.defaults === defaults, written.write > seenWrite,
            ObservationRegistry.shared.isLastWrite(written.write, of: key.name),
            defaults.volatileDomain(forName: UserDefaults.argumentDomain)[key.name] == nil
        else { return nil }
        return written.tree
    }
}

/// Whether two values are the same: by `==` when the type is `Equatable`, otherwise by
/// their stored property lists.
private func isSame<Value>(_ old: Value, _ new: Value, stored oldStored: Any?, _ newStored: Any?) -> Bool {
    // Nothing stored, before and after: the default both times, even one worked out
    // anew at each read (a key made with a closure).
    if oldStored == nil && newStored == nil { return true }
    if let equal = equalIfEquatable(old, new) ?? equalIfEquatable(new, old) { return equal }
    switch (oldStored, newStored) {
    case (nil, nil): return true
    case (let old?, let new?): return plistEqual(old, new)
    default: return false
    }
}

/// Deep equality of two property lists as `UserDefaults` returns them.
func plistEqual(_ lhs: Any, _ rhs: Any) -> Bool {
    guard let lhs = flattenOptional(lhs), let rhs = flattenOptional(rhs) else {
        return flattenOptional(lhs) == nil && flattenOptional(rhs) == nil
    }
    if let lhs = lhs as? [String: Any] {
        guard let rhs = rhs as? [String: Any], lhs.count == rhs.count else { return false }
        return lhs.allSatisfy { key, value in rhs[key].map { plistEqual(value, $0) } ?? false }
    }
    if let lhs = lhs as? [Any] {
        guard let rhs = rhs as? [Any], lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy(plistEqual)
    }
    guard let lhs = lhs as? AnyHashable, let rhs = rhs as? AnyHashable else { return false }
    return lhs == rhs
}

/// `lhs == rhs` when `lhs` is `Equatable` (an `Optional` only when it holds a value);
/// `nil` otherwise.
private func equalIfEquatable<Value>(_ lhs: Value, _ rhs: Value) -> Bool? {
    guard let lhs = lhs as? any Equatable else { return nil }
    return lhs.isEqual(to: rhs)
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
