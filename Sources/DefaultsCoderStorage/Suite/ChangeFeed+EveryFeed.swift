// What reaches every feed of the process at once: Foundation's announcements, the app's
// return to the foreground, and registrations, whose values may show in every suite.

import Foundation
import KeyValueCoders

extension ChangeFeed {
    /// The feeds that have subscribers, for Foundation's announcements. (A feed lives as
    /// long as its suite, which lives as long as the process: no weak reference needed.)
    static let live = Locked<[ObjectIdentifier: ChangeFeed]>([:])

    /// Called with the keys each recheck or joining subscriber on this task reads, for
    /// the tests (other tasks' rechecks are not seen).
    @TaskLocal static var keysRead: (@Sendable ([String]) -> Void)?

    /// Rechecks every feed that has subscribers.
    static func recheckAll() {
        let feeds = live.withLock { Array($0.values) }
        for feed in feeds { feed.recheck() }
    }

    /// Rechecks what Foundation announced a change of: the suite of `object` at once, and
    /// every other observed suite in the background, once for the announcements of a
    /// quarter of a second. An object's plain `set` changes its own suite; what else an
    /// object may change (the registration or a volatile domain, another suite's
    /// persistent domain) may show in any suite, and is heard that much later.
    /// Without an object, or with one the package has not met (its suite is not made
    /// here: that would look for its file and lock), every suite is rechecked at once.
    static func recheck(announcedBy object: Any?) {
        guard let defaults = object as? UserDefaults, let suite = DefaultsSuite.known(defaults) else {
            recheckAll()
            return
        }
        suite.feed.recheck(through: defaults)
        let othersObserved = live.withLock { $0.count > ($0[ObjectIdentifier(suite.feed)] == nil ? 0 : 1) }
        if othersObserved { recheckOthers.call() }
    }

    /// The background recheck of every feed: one for the announcements of a quarter of a
    /// second. Each pass reads every observed key, and on Linux every read takes one
    /// lock of Foundation's for all suites; a pass every few milliseconds kept that lock
    /// contended enough to starve a parallel test run's threads for a minute.
    private static let recheckOthers = CoalescingRunner(
        on: DispatchQueue(label: "DefaultsCoder.ChangeFeed.recheckOthers", qos: .utility), after: .milliseconds(250), recheckAll)

    // MARK: - Registrations

    /// The registrations made `withoutAnnouncing` that are being published, by number.
    /// The registration domain is the process's: any recheck of any suite, on any thread,
    /// may read a registered value before the registration's own recheck of that suite.
    /// It must not announce it then either.
    static let unannouncedRegistrations = Locked<(next: Int, values: [Int: [String: Any]])>((0, [:]))

    /// Runs `register`, the registration of `values` on `defaults`, then rechecks `feed`,
    /// read through `defaults`, and every other feed that has subscribers: the values
    /// may show in every suite. Returns once what changed was handed over. Unless
    /// `announcing`, a key that shows its registered value is where subscribers stand, not
    /// a change, in every recheck until this returns; other changes are heard as usual.
    static func register(
        _ values: [String: Any], on feed: ChangeFeed, through defaults: UserDefaults, announcing: Bool, _ register: () -> Void
    ) {
        let number = unannouncedRegistrations.withLock { registrations -> Int? in
            guard !announcing else { return nil }
            defer { registrations.next += 1 }
            registrations.values[registrations.next] = values
            return registrations.next
        }
        defer { if let number { _ = unannouncedRegistrations.withLock { $0.values.removeValue(forKey: number) } } }
        register()
        // Taken after the registration: a feed that joins later reads the values itself.
        // A registration changes what its own keys show, and nothing else.
        let others = live.withLock { Array($0.values) }.filter { $0 !== feed }
        let registered = Set(values.keys)
        feed.recheck(through: defaults, only: registered)
        for other in others { other.recheck(only: registered) }
    }
}

/// Foundation's `didChangeNotification`, heard once per process from the first
/// subscription on: every feed with subscribers reads its keys again. (What an object
/// announces may show in every suite: a registration, a launch argument.) So does the
/// app's return to the foreground: key-value observing may not deliver what changed
/// while the app was suspended.
enum FoundationAnnouncements {
    private static let observers = Locked<(token: (any NSObjectProtocol)?, activation: AppActivation.Observation?)>((nil, nil))

    static func listen() {
        observers.withLock { observers in
            guard observers.token == nil else { return }
            observers.token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: nil, queue: nil) { notification in
                // A change the package is writing on this thread (Apple's Foundation
                // announces each of its `set(_:forKey:)` calls as it makes it) is
                // published by the package once it is written whole.
                if DefaultsSuite.isWriting { return }
                ChangeFeed.recheck(announcedBy: notification.object)
            }
            observers.activation = AppActivation.observe { ChangeFeed.recheckAll() }
        }
    }
}
