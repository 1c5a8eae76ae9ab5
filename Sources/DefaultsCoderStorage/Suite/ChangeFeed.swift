// One change feed per suite, the only owner of "what changed": the backend hands it the
// values it found (after a package write, under the suite's lock; after a recheck), and
// it publishes each key whose value differs from the last it published. Subscribers are
// called one event at a time, in the suite's order, and a write returns once its event
// is handed over, so that it returns after its observers ran.

import Foundation
import KeyValueCoders

/// A key's value as the suite holds it after one change.
package struct KeyChange: @unchecked Sendable {
    // Unchecked: `stored` is a property-list tree, never mutated.

    /// The key.
    package let key: String
    /// What `object(forKey:)` gives after the change; `nil` when it gives nothing.
    package let stored: Any?
    /// Whether subscribers report the value; if not, they take it as where they stand (a
    /// write made in `UserDefaults.withoutAnnouncing`).
    package let isAnnounced: Bool
}

/// What hears a suite's changes of some keys.
package protocol ChangeSubscriber: AnyObject, Sendable {
    /// Where the subscriber starts: the value of `key` as the feed read it, under the
    /// suite's lock, when the subscriber joined; no change is between this value and the
    /// first one `receive(_:)` gets.
    func begin(key: String, stored: Any?)
    /// The subscriber's first call, when it asked for one (`initial`), before any change.
    func start()
    /// One change of a key the subscriber listens to: a value that differs from the one
    /// before it. Calls come one at a time, in the order the suite took the changes.
    func receive(_ change: KeyChange)
}

/// The changes of one suite.
package final class ChangeFeed: Sendable {

    fileprivate enum Event {
        /// A change, for the subscribers of its key when it was queued.
        case change(KeyChange, [ObjectIdentifier: any ChangeSubscriber])
        case start(any ChangeSubscriber)
    }

    /// One queued event of the feed's delivery.
    fileprivate typealias QueuedEvent = SerialDelivery<Event>.QueuedEvent

    private struct State {
        var subscribers: [String: [ObjectIdentifier: any ChangeSubscriber]] = [:]
        /// The value last published for each key listened to: what every change is
        /// compared with, once, here.
        var published: [String: PublishedValue] = [:]
        var external: (any ExternalChangesToken)?
        /// Subscriptions under way: the feed stays among the live ones while any is.
        var joining = 0
        /// How many values were published: each published value's number.
        var publications = 0

        /// Takes each of `read` whose value is not the one last published for its key as
        /// published, and returns the events to queue for them.
        mutating func publish(_ read: [KeyChange]) -> [Event] {
            var events: [Event] = []
            for change in read {
                let last = published[change.key]
                if last?.isSame(as: change.stored) == true { continue }
                publications += 1
                published[change.key] = PublishedValue(change.stored, number: publications)
                // A key first read here (its first subscriber is joining) is where
                // everyone starts: no one heard anything else.
                if last != nil, let targets = subscribers[change.key] { events.append(.change(change, targets)) }
            }
            return events
        }
    }

    /// A key's value as last published: absent, or a tree; and its number.
    private struct PublishedValue {
        let stored: Any?
        let number: Int

        init(_ stored: Any?, number: Int) {
            self.stored = stored
            self.number = number
        }

        func isSame(as other: Any?) -> Bool {
            sameStoredValue(stored, other)
        }
    }

    /// Behind its lock; subscribers are called outside it.
    private let state = Locked(State())
    /// Hands the queued events over, one at a time; queued under the state's lock, so in
    /// the order they were published.
    private let delivery = SerialDelivery<Event>()
    private let backend: any SuiteBackend
    /// The suite's objects (`DefaultsSuite`'s list): each keeps a cache of its own on
    /// Linux, which another process's change must reach.
    private let objects: Locked<[WeakReference]>

    init(backend: any SuiteBackend, objects: Locked<[WeakReference]>) {
        self.backend = backend
        self.objects = objects
    }

    /// A live object of the suite, to read through.
    func anyObject() -> UserDefaults? { objects.firstLive() }

    /// Publishes `read` and queues its events, under the feed's lock.
    private func publish(_ read: [KeyChange]) -> [QueuedEvent] {
        state.withLock { state in state.publish(read).map(delivery.enqueue) }
    }

    // MARK: - Subscribing

    /// Adds `subscriber` for `keys`, starting from their values read now under the
    /// suite's lock; with `initial`, its first call comes before any change after that
    /// read. A key whose value moved since it was last published (a change nobody
    /// announced) is published first, to the subscribers already there.
    ///
    /// - Returns: The number of each key's value as published when the subscriber joined
    ///   (see `publication(of:)`): it hears every publication after it.
    @discardableResult
    package func subscribe(_ subscriber: any ChangeSubscriber, to keys: [String], through defaults: UserDefaults, initial: Bool) -> [String: Int] {
        let (queued, joined) = backend.withProcessLock { () -> ([QueuedEvent], [String: Int]) in
            // Live before it reads: a registration either rechecks this feed after the
            // read, or was made before it.
            state.withLock { state in
                state.joining += 1
                ChangeFeed.live.withLock { $0[ObjectIdentifier(self)] = self }
            }
            let read = readValues(of: keys, through: defaults)
            for change in read { subscriber.begin(key: change.key, stored: change.stored) }
            return state.withLock { state in
                state.joining -= 1
                var queued = state.publish(read).map(delivery.enqueue)
                for key in keys { state.subscribers[key, default: [:]][ObjectIdentifier(subscriber)] = subscriber }
                if initial { queued.append(delivery.enqueue(.start(subscriber))) }
                let joined = keys.compactMap { key in state.published[key].map { (key, $0.number) } }
                return (queued, Dictionary(joined, uniquingKeysWith: { first, _ in first }))
            }
        }
        FoundationAnnouncements.listen()
        startWatching()
        listenExternally()
        deliver(queued)
        return joined
    }

    /// The number of `key`'s value as last published, counted across the feed's keys;
    /// `nil` when nothing listens to it. A subscriber that joined at an earlier number
    /// has a change of the key queued for it, or handed over.
    func publication(of key: String) -> Int? {
        state.withLock { $0.published[key]?.number }
    }

    /// Tells the transport the keys listened to now.
    private func listenExternally() {
        let external = state.withLock { $0.external }
        external?.listen { state.withLock { Set($0.subscribers.keys) } }
    }

    /// Removes `subscriber`; it receives nothing queued for it after this returns.
    package func unsubscribe(_ subscriber: any ChangeSubscriber) {
        let id = ObjectIdentifier(subscriber)
        let (isEmpty, stop): (Bool, (any ExternalChangesToken)?) = state.withLock { state in
            for key in Array(state.subscribers.keys) where state.subscribers[key]?.removeValue(forKey: id) != nil {
                if state.subscribers[key]?.isEmpty == true {
                    state.subscribers[key] = nil
                    state.published[key] = nil
                }
            }
            guard state.subscribers.isEmpty, state.joining == 0 else { return (false, nil) }
            ChangeFeed.live.withLock { $0[ObjectIdentifier(self)] = nil }
            defer { state.external = nil }
            return (true, state.external)
        }
        if isEmpty {
            stop?.cancel()
        } else {
            listenExternally()
        }
    }

    /// Whether anything listens to `key`.
    func isSubscribed(_ key: String) -> Bool {
        state.withLock { $0.subscribers[key] != nil }
    }

    /// How many keys something listens to, and whether other processes are being heard.
    var subscriptions: (keys: Int, isWatching: Bool) {
        state.withLock { ($0.subscribers.count, $0.external != nil) }
    }

    // MARK: - Publishing

    /// Publishes the values of keys a package write just wrote; called under the suite's
    /// lock, right after the write, so that changes queue in the order they reached the
    /// suite. A key whose written tree is not what a read gives — a removal (a
    /// registered default may show), a key `arguments` (the launch arguments) hides — is
    /// read back instead.
    ///
    /// - Returns: What was queued, to pass to `deliver(_:)` once the suite's lock is let go.
    func publish(written: [(key: String, tree: Any?)], through defaults: UserDefaults, arguments: [String: Any], announcing: Bool) -> Queued {
        let listened = state.withLock { state in
            state.subscribers.isEmpty ? [] : written.filter { state.subscribers[$0.key] != nil }
        }
        guard !listened.isEmpty else { return Queued(events: []) }
        let changes = listened.map { key, tree in
            let stored = tree != nil && arguments[key] == nil ? tree : defaults.object(forKey: key)
            return KeyChange(key: key, stored: stored, isAnnounced: announcing)
        }
        return Queued(events: publish(changes))
    }

    /// Events a change queued, for `deliver(_:)`.
    struct Queued {
        fileprivate let events: [QueuedEvent]
    }

    /// Publishes `key` anew when a reader found `stored` there, not the value last
    /// published: a change nobody announced (a plain `set` Foundation did not report),
    /// which the key's subscribers must hear before a later write is compared with it.
    /// Returns once it was handed over; costs one comparison when nothing changed.
    ///
    /// - Returns: The number of the key's value as published now (`publication(of:)`),
    ///   this read's included.
    @discardableResult
    package func noteRead(of key: String, stored: Any?, through defaults: UserDefaults) -> Int? {
        let current = state.withLock { state -> (isSame: Bool, number: Int?) in
            guard let last = state.published[key] else { return (true, nil) }
            return (last.isSame(as: stored), last.number)
        }
        guard !current.isSame else { return current.number }
        let queued = backend.withProcessLock { () -> [QueuedEvent] in
            guard state.withLock({ $0.subscribers[key] != nil }) else { return [] }
            return publish(readValues(of: [key], through: defaults))
        }
        deliver(queued)
        return publication(of: key)
    }

    /// Reads the keys subscribers listen to, under the suite's lock, after the backend
    /// took in what changed outside this process's package writes (`reload`: another
    /// process's write), and publishes those whose value differs from the one last
    /// published; returns once they were handed over. With `only`, just those of these
    /// keys: a feed that listens to none of them costs one look.
    func recheck(through defaults: UserDefaults? = nil, reload: Bool = false, only: Set<String>? = nil) {
        let listened = { (state: State) -> [String] in
            guard let only else { return Array(state.subscribers.keys) }
            return state.subscribers.count <= only.count
                ? state.subscribers.keys.filter(only.contains) : only.filter { state.subscribers[$0] != nil }
        }
        guard state.withLock({ !listened($0).isEmpty }), let defaults = defaults ?? anyObject() else { return }
        let queued = backend.withProcessLock { () -> [QueuedEvent] in
            let keys = state.withLock { listened($0) }
            guard !keys.isEmpty else { return [] }
            // Every object: a recheck or a read through one left stale would publish
            // the old value again, as a change.
            if reload { backend.reload(objects.live()) }
            return publish(readValues(of: keys, through: defaults))
        }
        deliver(queued)
    }

    /// What `keys` show now, read through `defaults`, for a recheck or a subscriber
    /// joining. A key that shows the value a registration made `withoutAnnouncing` is
    /// giving it is not announced: that registration is what changed it.
    private func readValues(of keys: [String], through defaults: UserDefaults) -> [KeyChange] {
        Self.keysRead?(keys)
        let values = keys.map { defaults.object(forKey: $0) }
        // Looked up after the read: a registration the read saw is still listed, since
        // it ends with a recheck of this suite, which waits for the suite's lock.
        let unannounced = Self.unannouncedRegistrations.withLock { Array($0.values.values) }
        return zip(keys, values).map { key, stored in
            let isRegistration = unannounced.contains { registered in registered[key].map { sameStoredValue($0, stored) } ?? false }
            return KeyChange(key: key, stored: stored, isAnnounced: !isRegistration)
        }
    }

    // MARK: - Delivering

    /// Returns once the events a change queued (`queued`) have been handed over to
    /// subscribers, with the events that writes in their calls queued: delivering them
    /// on this thread, one at a time, with every event queued before them, or waiting
    /// for the thread that is. On that thread (a write made in a handler) it returns at
    /// once, and the events are handed over right after the handler returns.
    ///
    /// A handler that waits for another thread that is writing this suite waits for
    /// itself: that thread's write returns only once its change was handed over, after
    /// the handler.
    func deliver(_ queued: Queued) {
        deliver(queued.events)
    }

    private func deliver(_ events: [QueuedEvent]) {
        delivery.deliver(events) { event in
            switch event {
            case .change(let change, let subscribers):
                // Not one that left since: it hears nothing queued after it left.
                let targets = state.withLock { state in
                    state.subscribers[change.key].map { current in subscribers.compactMap { current[$0.key] } } ?? []
                }
                for subscriber in targets { subscriber.receive(change) }
            case .start(let subscriber):
                subscriber.start()
            }
        }
    }

    /// Whether every queued event has been handed over and none is being handed over.
    var isIdle: Bool { delivery.isIdle }

    // MARK: - Other processes

    private func startWatching() {
        let key = state.withLock { $0.external == nil ? $0.subscribers.keys.min() : nil }
        guard let key,
            // Strongly: the feed lives as long as its suite; the token, and with it this
            // closure, goes when the last observer does.
            let token = ExternalChanges.watch(backend, through: anyObject(), reportingAs: key, onChange: { self.recheck(reload: true) })
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
}
