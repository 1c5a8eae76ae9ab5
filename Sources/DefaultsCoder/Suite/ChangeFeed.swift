// One change feed per suite: the only owner of "what changed". It learns of changes
// from the package's own writes (published under the suite's lock, so in the order they
// reached the suite), from Foundation's announcements in this process, and from other
// processes (`ExternalChanges`); each becomes the value the suite holds for a key, read
// under the suite's lock in the same order. Subscribers — the observers of the layer
// above — receive those values one at a time, in that order, never on two threads at
// once, and compare them with what they last had. The suite layer calls nobody above
// it: subscribers are `ChangeSubscriber`s.

import Foundation

/// A key's value as the suite holds it after one change.
struct KeyChange: @unchecked Sendable {
    // Unchecked: `stored` is a property-list tree, never mutated.

    /// The key.
    let key: String
    /// What `object(forKey:)` gives after the change; `nil` when it gives nothing.
    let stored: Any?
    /// Whether subscribers take the value as where they stand without reporting it
    /// (a write made in `UserDefaults.withoutAnnouncing`).
    let isSilent: Bool
}

/// What hears a suite's changes of some keys.
protocol ChangeSubscriber: AnyObject, Sendable {
    /// Reads the key as the suite holds it now; called under the suite's lock when the
    /// subscriber joins, so that no change is between this value and the first one
    /// `receive(_:)` gets.
    func begin()
    /// The subscriber's first call, when it asked for one (`initial`), before any change.
    func start()
    /// One change of a key the subscriber listens to. Calls come one at a time, in the
    /// order the suite took the changes.
    func receive(_ change: KeyChange)
}

/// The changes of one suite.
final class ChangeFeed: @unchecked Sendable {
    // Unchecked: the mutable state is behind `state`'s lock; subscribers are called
    // outside it.

    private enum Event {
        case change(KeyChange)
        case start(any ChangeSubscriber)
        /// Where a subscriber stands now: what a reader of the key just read.
        case rebase(any ChangeSubscriber, KeyChange)
    }

    private struct State {
        var subscribers: [String: [ObjectIdentifier: any ChangeSubscriber]] = [:]
        /// How many changes of each key were published: a reader that finds the count
        /// moved across its read may have read the value from before a change.
        var counts: [String: UInt64] = [:]
        /// The value last published for each key listened to: a recheck hands on only
        /// the keys whose value differs, so that its cost grows with the keys that
        /// changed, not with the observers of others.
        var published: [String: Published] = [:]
        var queue: [Event] = []
        var first = 0
        var isDelivering = false
        var external: (any ExternalChangesToken)?

        /// Queues `changes`, each the value now last published for its key.
        mutating func append(_ changes: [KeyChange]) {
            for change in changes { published[change.key] = Published(change.stored) }
            queue += changes.map(Event.change)
        }
    }

    /// A key's value as last published: absent, or a tree.
    private enum Published {
        case absent
        case value(Any)

        init(_ stored: Any?) {
            self = stored.map { .value($0) } ?? .absent
        }

        func isSame(as stored: Any?) -> Bool {
            switch (self, stored) {
            case (.absent, nil): return true
            case (.value(let value), let stored?): return plistEqual(value, stored)
            default: return false
            }
        }
    }

    private let state = Locked(State())
    private let backend: any SuiteBackend
    /// A live object of the suite, to read through.
    private let anyObject: @Sendable () -> UserDefaults?

    init(backend: any SuiteBackend, anyObject: @escaping @Sendable () -> UserDefaults?) {
        self.backend = backend
        self.anyObject = anyObject
    }

    // MARK: - Subscribing

    /// Adds `subscriber` for `keys`: it reads its starting values under the suite's lock,
    /// and, with `initial`, its first call comes before any change after that read.
    func subscribe(_ subscriber: any ChangeSubscriber, to keys: [String], initial: Bool) {
        backend.withProcessLock {
            subscriber.begin()
            state.withLock { state in
                for key in keys { state.subscribers[key, default: [:]][ObjectIdentifier(subscriber)] = subscriber }
                if initial { state.queue.append(.start(subscriber)) }
            }
        }
        ChangeFeed.live.withLock { $0[ObjectIdentifier(self)] = self }
        FoundationAnnouncements.listen()
        startWatching()
        listenExternally()
        drain()
    }

    /// Tells the transport the keys listened to now.
    private func listenExternally() {
        let (external, keys) = state.withLock { ($0.external, Set($0.subscribers.keys)) }
        external?.listen(to: keys)
    }

    /// Removes `subscriber`; it receives nothing queued for it after this returns.
    func unsubscribe(_ subscriber: any ChangeSubscriber) {
        let id = ObjectIdentifier(subscriber)
        let (isEmpty, stop): (Bool, (any ExternalChangesToken)?) = state.withLock { state in
            for key in Array(state.subscribers.keys) {
                state.subscribers[key]?[id] = nil
                if state.subscribers[key]?.isEmpty == true {
                    state.subscribers[key] = nil
                    state.published[key] = nil
                }
            }
            guard state.subscribers.isEmpty else { return (false, nil) }
            defer { state.external = nil }
            return (true, state.external)
        }
        if isEmpty {
            stop?.cancel()
            ChangeFeed.live.withLock { $0[ObjectIdentifier(self)] = nil }
        } else {
            listenExternally()
        }
    }

    /// Whether anything listens to `key`.
    func isSubscribed(_ key: String) -> Bool {
        state.withLock { $0.subscribers[key] != nil }
    }

    /// How many changes of `key` this feed has published, plus how many changes
    /// Foundation announced in this process: an announcement names no key, and a
    /// reader of a key nobody listens to yet takes it as a possible change of its own.
    func changeCount(of key: String) -> UInt64 {
        state.withLock { $0.counts[key] ?? 0 } &+ FoundationAnnouncements.count.withLock { $0 }
    }

    /// Tells `subscriber` where it stands, in order with the changes: what a reader of
    /// the key read (`stored`), so that the next change is measured against it.
    func rebase(_ subscriber: any ChangeSubscriber, key: String, stored: Any?) {
        state.withLock { state in
            state.queue.append(.rebase(subscriber, KeyChange(key: key, stored: stored, isSilent: true)))
            // The reader may stand where nothing was published (a plain set): the next
            // recheck hands the key on whatever it finds.
            state.published[key] = nil
        }
        drain()
    }

    // MARK: - Publishing

    /// Publishes the values of keys a package write just wrote; called under the suite's
    /// lock, right after the write, so that changes queue in the order they reached the
    /// suite. A key whose written tree is not what a read gives — a removal (a
    /// registered default may show), a key `arguments` (the launch arguments) hides — is
    /// read back instead.
    func publish(written: [(key: String, tree: Any?)], through defaults: UserDefaults, arguments: [String: Any], silent: Bool) {
        let listened = state.withLock { state in
            for change in written { state.counts[change.key, default: 0] &+= 1 }
            return state.subscribers.isEmpty ? [] : written.filter { state.subscribers[$0.key] != nil }
        }
        guard !listened.isEmpty else { return }
        let changes = listened.map { key, tree in
            let stored = tree != nil && arguments[key] == nil ? tree : defaults.object(forKey: key)
            return KeyChange(key: key, stored: stored, isSilent: silent)
        }
        state.withLock { $0.append(changes) }
    }

    /// Reads the keys subscribers listen to, under the suite's lock, and publishes those
    /// whose value differs from the one last published: after a change this process did
    /// not make through the package (Foundation's announcement, another process).
    func recheck(through defaults: UserDefaults? = nil, reload: Bool = false) {
        guard let defaults = defaults ?? anyObject() else { return }
        backend.withProcessLock {
            let keys = state.withLock { Array($0.subscribers.keys) }
            guard !keys.isEmpty else { return }
            #if !canImport(Darwin)
            // Foundation on Linux reloads its cache of a file another process replaced
            // only when told.
            if reload { defaults.synchronize() }
            #endif
            let read = keys.map { KeyChange(key: $0, stored: defaults.object(forKey: $0), isSilent: false) }
            state.withLock { state in
                let changes = read.filter { state.published[$0.key]?.isSame(as: $0.stored) != true }
                for change in changes { state.counts[change.key, default: 0] &+= 1 }
                state.append(changes)
            }
        }
        drain()
    }

    // MARK: - Delivering

    /// Hands the queued events to subscribers, one at a time, on this thread, unless
    /// another thread is doing it already: that thread then hands over these too.
    func drain() {
        while let (event, subscribers) = takeNext() {
            switch event {
            case .change(let change): for subscriber in subscribers { subscriber.receive(change) }
            case .start(let subscriber): subscriber.start()
            case .rebase(let subscriber, let change): subscriber.receive(change)
            }
            state.withLock { $0.isDelivering = false }
        }
    }

    /// Whether every queued event has been handed over and none is being handed over.
    var isIdle: Bool {
        state.withLock { !$0.isDelivering && $0.first == $0.queue.count }
    }

    private func takeNext() -> (Event, [any ChangeSubscriber])? {
        state.withLock { state in
            guard !state.isDelivering, state.first < state.queue.count else { return nil }
            let event = state.queue[state.first]
            state.first += 1
            if state.first == state.queue.count { (state.queue, state.first) = ([], 0) }
            state.isDelivering = true
            if case .change(let change) = event {
                return (event, state.subscribers[change.key].map { Array($0.values) } ?? [])
            }
            return (event, [])
        }
    }

    // MARK: - Other processes

    private func startWatching() {
        let needed = state.withLock { !$0.subscribers.isEmpty && $0.external == nil }
        guard needed,
            // Strongly: the feed lives as long as its suite; the token, and with it this
            // closure, goes when the last observer does.
            let token = ExternalChanges.watch(backend, through: anyObject(), onChange: { self.recheck(reload: true) })
        else { return }
        let extra: (any ExternalChangesToken)? = state.withLock { state in
            if state.external == nil && !state.subscribers.isEmpty {
                state.external = token
                return nil
            }
            return token
        }
        extra?.cancel()
    }

    // MARK: - Every feed

    /// The feeds that have subscribers, for Foundation's announcements. (A feed lives as
    /// long as its suite, which lives as long as the process: no weak reference needed.)
    private static let live = Locked<[ObjectIdentifier: ChangeFeed]>([:])

    /// Rechecks every feed that has subscribers.
    static func recheckAll() {
        let feeds = live.withLock { Array($0.values) }
        for feed in feeds { feed.recheck() }
    }
}

/// Foundation's `didChangeNotification`, heard once per process from the first
/// subscription on: every feed with subscribers reads its keys again.
enum FoundationAnnouncements {
    private static let token = Locked<(any NSObjectProtocol)?>(nil)
    /// How many changes Foundation announced, the package's own aside.
    static let count = Locked<UInt64>(0)

    static func listen() {
        token.withLock { token in
            guard token == nil else { return }
            token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: nil, queue: nil) { _ in
                // A change the package is writing on this thread (Apple's Foundation
                // announces each of its `set(_:forKey:)` calls as it makes it) is
                // published by the package once it is written whole.
                if DefaultsSuite.isWriting { return }
                // Counted before the feeds read: a reader that then finds the count
                // unchanged read after the change.
                count.withLock { $0 &+= 1 }
                ChangeFeed.recheckAll()
            }
        }
    }
}
