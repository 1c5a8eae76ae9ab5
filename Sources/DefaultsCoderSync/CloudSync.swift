// The sync engine: keeps the keys a user opts in equal between a suite and a cloud
// key-value store. It hears the suite through its change feed (so every write, also
// plain `set` and other processes'), and the store through its changes. Every decision
// is made in one place, `reconcile`, which reads a key's value, its record and the
// cloud's entry, and writes what wins — locally as one announced change of the suite
// with its record, upwards as one entry — so that nothing is decided twice and nothing
// echoes. The rules are the table in the "Syncing with iCloud" article.

import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// Syncs chosen keys of a suite with iCloud's key-value storage (or any
/// `CloudKeyValueStore`), so that settings follow the user to their other devices.
///
/// ```swift
/// let sync = CloudSync(.standard, store: UbiquitousKeyValueStore())
/// try sync.add(.theme, .fontSize)
/// try sync.start()
/// ```
///
/// A running engine refreshes each time the app becomes active (UIKit's, an app
/// extension's host's, WatchKit's or AppKit's notification), unless it was made with
/// `refreshesWhenActive: false`.
///
/// A key that holds no stored value (it shows its default) is never uploaded; the last
/// edit wins, on every device; removals travel; and a value another device wrote is
/// stored as one change its observers hear once. Keys that were not added are never
/// read or written.
public final class CloudSync: @unchecked Sendable {
    // Unchecked: `defaults` is used as Foundation allows from any thread; every mutable
    // field is behind `state`.

    /// Whether the engine syncs, and if not, why.
    public enum Status: Sendable, Equatable {
        /// Not started, or stopped.
        case stopped
        /// Syncing.
        case running
        /// No iCloud account is signed in: nothing is uploaded, local use is untouched,
        /// and sync begins when an account appears.
        case noAccount
        /// The store cannot sync (`synchronize()` returned `false`): most often the app
        /// lacks the iCloud key-value storage entitlement. Local use is untouched.
        case unavailable
    }

    private let defaults: UserDefaults
    private let store: any CloudKeyValueStore
    private let limits: CloudStoreLimits
    private let retryDelay: TimeInterval
    private let clock: @Sendable () -> Date
    private let refreshesWhenActive: Bool
    private let state = Locked(State())

    private struct State {
        var keys: [String] = []
        var status = Status.stopped
        var queue: [Event] = []
        var isDraining = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var subscriber: FeedSubscriber?
        var storeSubscription: CloudStoreSubscription?
        var activation: AppActivation.Observation?
        /// Whether writes were discarded before the first download; until it is seen
        /// complete, the next server change or retry reconciles every key.
        var awaitsDownload = false
        var isRetryScheduled = false
        /// The keys sent up since the store last reported a change: the ones a quota
        /// violation that names no keys is about.
        var uploadedSinceChange: [String] = []
        /// The remote values the engine wrote into the suite, until the suite's change
        /// feed hands them back: its own writes are no edits to reconcile.
        var written: [String: Any?] = [:]
        /// How many reconciling changes of the suite the engine made.
        var reconciles = 0
    }

    private enum Event {
        case start
        case refresh
        case local([String])
        /// Keys added while running: what they hold predates their sync.
        case added([String])
        case remote(CloudStoreChange)
        case retry
    }

    /// The suites synced in this process, so that two engines never sync one suite.
    private static let synced = Locked<Set<ObjectIdentifier>>([])

    /// Creates an engine for `defaults` and `store`; it syncs nothing until keys are
    /// added and it is started.
    ///
    /// - Parameters:
    ///   - defaults: The suite.
    ///   - store: The cloud store: `UbiquitousKeyValueStore()` for iCloud, a
    ///     `SimulatedCloud.Device` in tests and previews.
    ///   - limits: The limits checked before each upload; iCloud's.
    ///   - retryDelay: How long after writes were discarded before the first download
    ///     the engine makes them again, in seconds, unless a server change comes first.
    ///   - clock: The clock edits are stamped with.
    ///   - refreshesWhenActive: Whether a running engine calls `refresh()` each time the
    ///     app becomes active.
    public init(
        _ defaults: UserDefaults, store: any CloudKeyValueStore, limits: CloudStoreLimits = .iCloud,
        retryDelay: TimeInterval = 10, clock: @escaping @Sendable () -> Date = { Date() }, refreshesWhenActive: Bool = true
    ) {
        self.defaults = defaults
        self.store = store
        self.limits = limits
        self.retryDelay = retryDelay
        self.clock = clock
        self.refreshesWhenActive = refreshesWhenActive
        // Edits of the suite's synced keys are stamped as they are written, by this
        // clock in this process from now on, whether or not the engine runs.
        DefaultsSuite.of(defaults).editClock = clock
    }

    deinit {
        stop()
    }

    // MARK: - Keys

    /// The names of the keys synced, in the order they were added.
    public var keys: [String] { state.withLock { $0.keys } }

    /// Adds keys to sync; a running engine reconciles them at once.
    ///
    /// - Parameter keys: The keys.
    /// - Throws: `CloudSyncError` (`.keyTooLong`, `.reservedKey`) naming the first key that
    ///   cannot be synced; then none is added.
    public func add(_ keys: DefaultsKeys...) throws {
        try add(keys)
    }

    /// Adds keys to sync; a running engine reconciles them at once.
    ///
    /// - Parameter keys: The keys.
    /// - Throws: `CloudSyncError` (`.keyTooLong`, `.reservedKey`) naming the first key that
    ///   cannot be synced; then none is added.
    public func add(_ keys: [DefaultsKeys]) throws {
        for key in keys.map(\.name) {
            if DefaultsSuite.isSyncRecord(key) { throw CloudSyncError(key: key, problem: .reservedKey) }
            if key.utf8.count > limits.keyBytes {
                throw CloudSyncError(key: key, problem: .keyTooLong(bytes: key.utf8.count, limit: limits.keyBytes))
            }
        }
        let (added, subscriber) = state.withLock { state -> ([String], FeedSubscriber?) in
            let added = keys.map(\.name).reduce(into: [String]()) { added, key in
                if !state.keys.contains(key) && !added.contains(key) { added.append(key) }
            }
            state.keys += added
            return (added, state.subscriber)
        }
        guard let subscriber, !added.isEmpty else { return }
        DefaultsSuite.of(defaults).feed.subscribe(subscriber, to: added, through: defaults, initial: false)
        enqueue(.added(added))
    }

    /// Stops syncing keys. Their values and their entries in the cloud stay as they are.
    ///
    /// - Parameter keys: The keys.
    public func remove(_ keys: DefaultsKeys...) {
        remove(keys)
    }

    /// Stops syncing keys. Their values and their entries in the cloud stay as they are.
    ///
    /// - Parameter keys: The keys.
    public func remove(_ keys: [DefaultsKeys]) {
        let names = Set(keys.map(\.name))
        let (remaining, subscriber) = state.withLock { state -> ([String], FeedSubscriber?) in
            state.keys.removeAll { names.contains($0) }
            return (state.keys, state.subscriber)
        }
        guard let subscriber else { return }
        let feed = DefaultsSuite.of(defaults).feed
        feed.unsubscribe(subscriber)
        if !remaining.isEmpty { feed.subscribe(subscriber, to: remaining, through: defaults, initial: false) }
    }

    // MARK: - Running

    /// Whether the engine syncs, and if not, why.
    public var status: Status { state.withLock { $0.status } }

    /// Starts syncing: hears the suite and the store, and reconciles every key.
    ///
    /// - Throws: `CloudSyncError` (`.suiteAlreadySynced`) when another engine syncs this
    ///   suite in this process.
    public func start() throws {
        let suite = ObjectIdentifier(DefaultsSuite.of(defaults))
        let subscriber = FeedSubscriber(self)
        let started = state.withLock { state -> [String]? in
            guard state.subscriber == nil else { return nil }
            state.subscriber = subscriber
            state.status = .running
            return state.keys
        }
        guard let keys = started else { return }
        guard CloudSync.synced.withLock({ $0.insert(suite).inserted }) else {
            state.withLock { state in
                state.subscriber = nil
                state.status = .stopped
            }
            throw CloudSyncError(key: nil, problem: .suiteAlreadySynced)
        }
        if !keys.isEmpty { DefaultsSuite.of(defaults).feed.subscribe(subscriber, to: keys, through: defaults, initial: false) }
        let subscription = store.observeChanges { [weak self] change in self?.enqueue(.remote(change)) }
        let activation = refreshesWhenActive ? AppActivation.observe { [weak self] in self?.refresh() } : nil
        state.withLock { ($0.storeSubscription, $0.activation) = (subscription, activation) }
        enqueue(.start)
    }

    /// Stops syncing. Values stay as they are; records of what is still to upload stay
    /// in the suite, for the next start.
    public func stop() {
        let (subscriber, subscription, activation) = state.withLock { state in
            defer {
                state.subscriber = nil
                state.storeSubscription = nil
                state.activation = nil
                state.status = .stopped
                state.queue = []
            }
            return (state.subscriber, state.storeSubscription, state.activation)
        }
        subscription?.cancel()
        activation?.cancel()
        guard let subscriber else { return }
        let suite = DefaultsSuite.of(defaults)
        suite.feed.unsubscribe(subscriber)
        _ = CloudSync.synced.withLock { $0.remove(ObjectIdentifier(suite)) }
    }

    /// Exchanges changes with the cloud and reconciles every key. A running engine calls
    /// it each time the app becomes active, unless made with `refreshesWhenActive: false`.
    public func refresh() {
        enqueue(.refresh)
    }

    /// Returns once the engine has nothing queued and nothing running: every change it
    /// heard so far has been reconciled. A retry scheduled after discarded writes is not
    /// waited for.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { state in
                guard state.isDraining || !state.queue.isEmpty else { return true }
                state.waiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    // MARK: - Events

    /// Queues `event`, and handles the queue on this thread unless another thread is:
    /// events are handled one at a time, in the order they came.
    private func enqueue(_ event: Event) {
        let drains = state.withLock { state -> Bool in
            guard state.subscriber != nil else { return false }
            state.queue.append(event)
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        guard drains else { return }
        while true {
            let (next, waiters) = state.withLock { state -> (Event?, [CheckedContinuation<Void, Never>]) in
                guard !state.queue.isEmpty else {
                    state.isDraining = false
                    defer { state.waiters = [] }
                    return (nil, state.waiters)
                }
                var next = state.queue.removeFirst()
                // Local changes heard in a row are reconciled together.
                while case .local(let keys) = next, case .local(let more)? = state.queue.first {
                    state.queue.removeFirst()
                    next = .local(keys + more.filter { !keys.contains($0) })
                }
                return (next, [])
            }
            guard let next else {
                for waiter in waiters { waiter.resume() }
                return
            }
            handle(next)
        }
    }

    private func handle(_ event: Event) {
        let (keys, awaitsDownload) = state.withLock { ($0.keys, $0.awaitsDownload) }
        switch event {
        case .start, .refresh:
            if updateStatus() == .running { reconcile(keys) }
        case .local(let changed):
            // Not running, edits are still recorded, so that they go up later as edits
            // of their time rather than as values that predate sync.
            reconcile(keys.filter(changed.contains), heardEdits: true, recordOnly: status != .running)
        case .added(let added):
            if status == .running { reconcile(keys.filter(added.contains)) }
        case .retry:
            state.withLock { state in
                state.isRetryScheduled = false
                state.awaitsDownload = false
            }
            if status == .running { reconcile(keys) }
        case .remote(let change):
            state.withLock { $0.uploadedSinceChange = change.reason == .quotaViolation ? $0.uploadedSinceChange : [] }
            switch change.reason {
            case .serverChange:
                // The store may have become able to sync (an account signed in); a change
                // that names no keys may be of any (Apple documents the keys as optional).
                guard status == .running || updateStatus() == .running else { return }
                state.withLock { $0.awaitsDownload = false }
                reconcile(awaitsDownload || change.keys.isEmpty ? keys : keys.filter(change.keys.contains))
            case .initialSync:
                state.withLock { $0.awaitsDownload = true }
                scheduleRetry()
            case .quotaViolation:
                holdBack(change.keys.isEmpty ? state.withLock { $0.uploadedSinceChange } : keys.filter(change.keys.contains))
            case .accountChange:
                if updateStatus() == .running { reconcile(keys, accountChanged: true) }
            }
        }
    }

    /// Reads whether the store can sync, and records it.
    private func updateStatus() -> Status {
        let status: Status = !store.hasAccount ? .noAccount : store.synchronize() ? .running : .unavailable
        return state.withLock { state in
            guard state.subscriber != nil else { return .stopped }
            state.status = status
            return status
        }
    }

    private func scheduleRetry() {
        let schedules = state.withLock { state in
            defer { state.isRetryScheduled = true }
            return !state.isRetryScheduled
        }
        guard schedules else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + retryDelay) { [weak self] in self?.enqueue(.retry) }
    }

    // MARK: - Reconciling

    /// Brings each of `keys` to what wins between the suite and the cloud: the local
    /// value and records in one change of the suite, then the uploads.
    ///
    /// - Parameters:
    ///   - heardEdits: Whether the suite's feed reported the keys changed while the
    ///     engine ran: a value of a key with no record is then an edit, not a value that
    ///     predates sync.
    ///   - accountChanged: Whether the store now holds another account's values: they
    ///     win whatever their stamps, and what only this device holds stays here.
    ///   - recordOnly: Whether only edits are recorded, and the cloud left alone (the
    ///     store cannot sync now).
    ///
    /// When the change fails (a value the cloud holds that the suite cannot keep), each
    /// key is reconciled on its own, so that one key's failure, reported, stops no other.
    private func reconcile(_ keys: [String], heardEdits: Bool = false, accountChanged: Bool = false, recordOnly: Bool = false) {
        guard !keys.isEmpty else { return }
        var uploads: [(key: String, entry: CloudEntry)] = []
        var heldBack: [CloudSyncError] = []
        var applied: [String: Any?] = [:]
        state.withLock { $0.reconciles += 1 }
        do {
            // The engine's own change: what it writes are remote values and records, not
            // edits to stamp.
            try DefaultsSuite.change([defaults], stampingEdits: false) { values in
                let storedClock = values.value(forKey: SyncClock.key)
                var syncClock = SyncClock(stored: storedClock)
                let clockBefore = syncClock.last
                var usage: CloudUsage?
                for key in keys {
                    let current = values.value(forKey: key)
                    let recorded = SyncRecord(stored: values.value(forKey: SyncRecord.key(for: key)))
                    let object = recordOnly ? nil : store.object(forKey: key)
                    var remote = object.flatMap(CloudEntry.init(cloud:))
                    if object != nil && remote == nil {
                        heldBack.append(CloudSyncError(key: key, problem: .invalidRemoteEntry))
                    }
                    if let value = remote?.value, !StoredForm.isStorable(value) {
                        heldBack.append(CloudSyncError(key: key, problem: .unstorableRemoteValue))
                        remote = nil
                    }
                    if let remote { syncClock.saw(remote.stamp) }
                    // What this device holds: its record, or an edit made since.
                    var record: SyncRecord?
                    if let recorded, sameStoredValue(current, recorded.value) {
                        record = recorded
                    } else if recorded != nil || (heardEdits && current != nil) {
                        record = SyncRecord(stamp: syncClock.stamp(now: clock()), value: current, state: .pending)
                    } else if let current {
                        record = SyncRecord(stamp: .adopted(by: syncClock.device), value: current, state: .pending)
                    }
                    var next = record
                    // After an account change the new account's values win, except over an
                    // edit still to go up (one made while signed out, say): stamps decide
                    // for it, as they would had sign-in been found by `refresh()`.
                    let isEdit = record.map { $0.state == .pending && !$0.isAdoptedOnly } ?? false
                    let takesAccount = accountChanged && !isEdit
                    if recordOnly {
                        // The edit, recorded; nothing else until the store can sync.
                    } else if let remote, takesAccount || record.map({ $0.isAdoptedOnly || remote.outranks($0.stamp, value: $0.value) }) ?? true {
                        if !sameStoredValue(current, remote.value) {
                            try values.set(remote.value, forKey: key)
                            applied[key] = .some(remote.value)
                        }
                        next = SyncRecord(stamp: remote.stamp, value: remote.value, state: .synced)
                    } else if takesAccount {
                        next?.state = .localOnly
                    } else if var mine = record, !(remote.map { $0.stamp == mine.stamp && sameStoredValue($0.value, mine.value) } ?? false),
                        mine.state == .pending || mine.state == .synced
                    {
                        // Remote is absent or older: this device's value goes up (again,
                        // when an upload was discarded).
                        let entry = CloudEntry(stamp: mine.stamp, value: mine.value)
                        if usage == nil { usage = CloudUsage(store.dictionaryRepresentation) }
                        if let problem = usage!.problem(storing: entry.cloudValue, forKey: key, within: limits) {
                            heldBack.append(CloudSyncError(key: key, problem: problem))
                            mine.state = .overQuota
                        } else {
                            usage!.store(entry.cloudValue, forKey: key)
                            uploads.append((key, entry))
                            mine.state = .synced
                        }
                        next = mine
                    } else if var mine = record, mine.stamp == remote?.stamp, mine.state == .pending {
                        mine.state = .synced
                        next = mine
                    }
                    if let next, !next.isSame(as: recorded) { try values.set(next.stored, forKey: SyncRecord.key(for: key)) }
                }
                if storedClock == nil || syncClock.last != clockBefore { try values.set(syncClock.stored, forKey: SyncClock.key) }
                // Noted before the change is published, which happens once it is written.
                if !applied.isEmpty { self.state.withLock { $0.written.merge(applied) { _, new in new } } }
            }
        } catch {
            // Nothing was written: nothing comes back.
            state.withLock { state in for key in applied.keys { state.written[key] = nil } }
            guard keys.count == 1 else {
                for key in keys { reconcile([key], heardEdits: heardEdits, accountChanged: accountChanged, recordOnly: recordOnly) }
                return
            }
            DefaultsFailure.report(DefaultsFailure(key: keys[0], operation: .write, error: CloudSyncError(key: keys[0], problem: .suite("\(error)"))))
            return
        }
        for (key, entry) in uploads { store.set(entry.cloudValue, forKey: key) }
        state.withLock { $0.uploadedSinceChange += uploads.map(\.key) }
        for error in heldBack {
            let isRead = error.problem == .unstorableRemoteValue || error.problem == .invalidRemoteEntry
            let operation: DefaultsFailure.Operation = isRead ? .read : .write
            DefaultsFailure.report(DefaultsFailure(key: error.key ?? keys[0], operation: operation, error: error))
        }
    }

    /// Marks `keys`, which the store refused, as over quota and reports each once.
    private func holdBack(_ keys: [String]) {
        var heldBack: [String] = []
        do {
            try DefaultsSuite.change([defaults], stampingEdits: false) { values in
                for key in keys {
                    guard var record = SyncRecord(stored: values.value(forKey: SyncRecord.key(for: key))),
                        record.state == .synced || record.state == .pending
                    else { continue }
                    record.state = .overQuota
                    try values.set(record.stored, forKey: SyncRecord.key(for: key))
                    heldBack.append(key)
                }
            }
        } catch {
            return
        }
        for key in heldBack {
            DefaultsFailure.report(DefaultsFailure(key: key, operation: .write, error: CloudSyncError(key: key, problem: .quotaViolation)))
        }
    }

    /// Hears the suite's changes of the synced keys, for the engine.
    private final class FeedSubscriber: ChangeSubscriber, @unchecked Sendable {
        // Unchecked: `engine` is a weak reference set once.
        private weak var engine: CloudSync?

        init(_ engine: CloudSync) {
            self.engine = engine
        }

        func begin(key _: String, stored _: Any?) {}
        func start() {}
        func receive(_ change: KeyChange) {
            guard let engine, !engine.isOwnWrite(change) else { return }
            engine.enqueue(.local([change.key]))
        }
    }

    /// Whether `change` is the engine's own write of a remote value coming back through
    /// the suite's feed, which the feed hands over in the order the suite changed: the
    /// first change of the key after that write. Any other change of the key ends the wait.
    private func isOwnWrite(_ change: KeyChange) -> Bool {
        state.withLock { state in
            guard let written = state.written.removeValue(forKey: change.key) else { return false }
            return sameStoredValue(written, change.stored)
        }
    }

    /// How many reconciling changes of the suite the engine made, for the tests.
    var reconcileCount: Int { state.withLock { $0.reconciles } }
}

/// What the store holds, by key, in bytes as the limits count them; taken once per
/// reconcile and kept up to date with its uploads.
private struct CloudUsage {
    private var sizes: [String: Int]
    private var total: Int

    init(_ values: [String: Any]) {
        sizes = values.reduce(into: [:]) { $0[$1.key] = CloudStoreLimits.size(of: $1.key, $1.value) }
        total = sizes.values.reduce(0, +)
    }

    func problem(storing value: Any, forKey key: String, within limits: CloudStoreLimits) -> CloudSyncError.Problem? {
        let size = CloudStoreLimits.size(of: key, value)
        if size > limits.valueBytes { return .valueTooLarge(bytes: size, limit: limits.valueBytes) }
        if sizes[key] == nil && sizes.count >= limits.keys { return .tooManyKeys(limit: limits.keys) }
        let newTotal = total - (sizes[key] ?? 0) + size
        if newTotal > limits.totalBytes { return .storeFull(bytes: newTotal, limit: limits.totalBytes) }
        return nil
    }

    mutating func store(_ value: Any, forKey key: String) {
        let size = CloudStoreLimits.size(of: key, value)
        total += size - (sizes[key] ?? 0)
        sizes[key] = size
    }
}
