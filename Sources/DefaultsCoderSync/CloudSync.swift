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

    let defaults: UserDefaults
    let store: any CloudKeyValueStore
    let limits: CloudStoreLimits
    private let retryDelay: TimeInterval
    let clock: @Sendable () -> Date
    private let refreshesWhenActive: Bool
    let state = Locked(State())
    /// The engine's events, handed over one at a time.
    private let delivery = SerialDelivery<Event>(merge: CloudSync.merge)

    struct State {
        var keys: [String] = []
        var status = Status.stopped
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

    enum Event {
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
        await delivery.waitUntilIdle()
    }

    // MARK: - Events

    /// Queues `event`, and handles what is queued on this thread unless another thread
    /// is: events are handled one at a time, in the order they came (local changes heard
    /// in a row, together). A stopped engine queues nothing, and handles nothing it had
    /// queued.
    func enqueue(_ event: Event) {
        guard state.withLock({ $0.subscriber != nil }) else { return }
        delivery.post(event) { event in
            guard state.withLock({ $0.subscriber != nil }) else { return }
            handle(event)
        }
    }

    /// Two local changes heard in a row are reconciled as one.
    private static func merge(_ first: Event, _ second: Event) -> Event? {
        guard case .local(let keys) = first, case .local(let more) = second else { return nil }
        return .local(keys + more.filter { !keys.contains($0) })
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
}
