// How a suite hears of changes the package did not write, while something observes it:
// on Linux an inotify watch of the suite's file (`FileWatcher`); on Apple platforms a
// Darwin notification each package write posts (through libnotify, which delivers on a
// queue; CoreFoundation's center would need the main run loop), and key-value observing
// of the observed keys for other code's changes. Either way the feed rechecks the keys.

import Foundation
import KeyValueCoders

#if canImport(notify)
import notify
#elseif canImport(Darwin)
// libnotify is on every Apple platform (Darwin Notify: iOS 9.3, macOS 10.14, tvOS 9.2,
// watchOS 2.2, visionOS 1): a build that cannot import it would hear no other process.
#error("libnotify's module (notify) cannot be imported: other processes' changes would not be heard")
#endif

/// Hears of a suite's external changes until cancelled.
package protocol ExternalChangesToken: Sendable {
    /// Tells a transport that watches keys to watch the ones `keys` gives: the keys the
    /// suite's observers listen to, read when the transport takes its turn, so that of
    /// two threads changing them, the later call sees the later keys.
    func listen(to keys: () -> Set<String>)
    func cancel()
}

extension ExternalChangesToken {
    func listen(to keys: () -> Set<String>) {}
}

enum ExternalChanges {
    /// Starts hearing of changes other processes make to the suite `backend` keeps;
    /// `onChange` runs on a queue of the package's. `nil` where nothing can be heard. A
    /// transport that falls back to something poorer (polling) says so once, through
    /// `DefaultsFailure.handler`, as a read failure of `key`.
    static func watch(
        _ backend: any SuiteBackend, through defaults: UserDefaults?, reportingAs key: String, onChange: @escaping @Sendable () -> Void
    ) -> (any ExternalChangesToken)? {
        #if canImport(ObjectiveC)
        // Apple's `UserDefaults` is key-value observable itself.
        let observable: (any KeyValueObservable)? = defaults
        #else
        // Here only the tests' double of Apple's is.
        let observable = defaults as? any KeyValueObservable
        #endif
        let observations = observable.map { KeyValueObservations(defaults: $0, onChange: onChange) }
        let notifications = backend.watchOtherProcesses(
            onFailure: { error in DefaultsFailure.report(DefaultsFailure(key: key, operation: .read, error: error)) }, onChange)
        if notifications == nil && observations == nil { return nil }
        return Watch(notifications: notifications, observations: observations)
    }

    /// The Darwin notification of a suite's changes.
    static func notificationName(_ suite: String) -> String {
        "DefaultsCoder.changed." + suite
    }
}

/// What a suite listens to: other processes' announcements, and key-value observing of
/// the keys observed.
private struct Watch: ExternalChangesToken {
    let notifications: (any ExternalChangesToken)?
    let observations: KeyValueObservations?

    func listen(to keys: () -> Set<String>) {
        observations?.listen(to: keys)
    }

    func cancel() {
        notifications?.cancel()
        observations?.cancel()
    }
}

/// A `UserDefaults` that reports changes of a key to observers of that key, wherever the
/// change was made: Apple's, through key-value observing (another process's plain
/// `set(_:forKey:)` included); on Linux, the tests' double of Apple's.
protocol KeyValueObservable: AnyObject {
    /// Starts calling `observer.keyDidChange()` after each change of `key`.
    func addKeyObserver(_ observer: KeyValueObservations, forKey key: String)
    /// Stops what `addKeyObserver(_:forKey:)` started; removing an observer that was not
    /// added raises `NSRangeException` on Apple platforms.
    func removeKeyObserver(_ observer: KeyValueObservations, forKey key: String)
}

/// Key-value observing of a suite's observed keys. Keys with a dot, keys beginning with
/// `@` and the empty key are left out: key-value observing takes the dot for a path and
/// `@` for a collection operator, and the empty key path names no property.
final class KeyValueObservations: @unchecked Sendable {
    // Unchecked: `defaults` and `recheckSoon` are constants; `observed` is
    // behind a lock. Apple's key-value observing does not retain its observers: this
    // object keeps the trampoline it registers, and the token keeps this object.
    private let defaults: any KeyValueObservable
    /// The recheck each change heard schedules: coalesced, on a queue of the package's.
    private let recheckSoon: CoalescingRunner
    private let observed = Locked<(keys: Set<String>, isCancelled: Bool)>(([], false))
    #if canImport(ObjectiveC)
    fileprivate private(set) lazy var trampoline = KeyValueTrampoline(self)
    #endif

    init(defaults: any KeyValueObservable, onChange: @escaping @Sendable () -> Void) {
        self.defaults = defaults
        recheckSoon = CoalescingRunner(on: .global(), onChange)
    }

    /// Whether key-value observing can observe `key` as one key.
    static func isObservable(_ key: String) -> Bool {
        !key.isEmpty && !key.contains(".") && !key.hasPrefix("@")
    }

    func listen(to keys: () -> Set<String>) {
        // Added and removed under the lock, from the keys read under it: a removal racing
        // the addition it undoes would remove an observer never added, and keys read
        // before another thread's change would undo it.
        observed.withLock { observed in
            guard !observed.isCancelled else { return }
            update(&observed.keys, to: keys().filter(Self.isObservable))
        }
    }

    func cancel() {
        observed.withLock { observed in
            update(&observed.keys, to: [])
            observed.isCancelled = true
        }
    }

    private func update(_ observed: inout Set<String>, to wanted: Set<String>) {
        for key in wanted.subtracting(observed) { defaults.addKeyObserver(self, forKey: key) }
        for key in observed.subtracting(wanted) { defaults.removeKeyObserver(self, forKey: key) }
        observed = wanted
    }

    /// A change of an observed key, on the thread that made it, inside Foundation's
    /// callback: rechecked on a queue of the package's, never here. Foundation may hold a
    /// lock of its own while it calls, and a recheck takes the suite's lock, which a
    /// package write on another thread holds while it calls into Foundation. A change
    /// made during a package write of this thread (its own, published when written whole,
    /// or another process's that Apple's preferences hand over from inside `set`) is
    /// rechecked once the write is done, never dropped; the feed publishes only what
    /// differs from what it published.
    func keyDidChange() {
        recheckSoon.call()
    }
}

#if canImport(ObjectiveC)
/// What Apple's key-value observing calls: an `NSObject`, forwarding to its owner.
private final class KeyValueTrampoline: NSObject, @unchecked Sendable {
    // Unchecked: a weak reference, which the runtime reads safely on any thread.
    weak var owner: KeyValueObservations?

    init(_ owner: KeyValueObservations) {
        self.owner = owner
    }

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        owner?.keyDidChange()
    }
}

extension UserDefaults: KeyValueObservable {
    func addKeyObserver(_ observer: KeyValueObservations, forKey key: String) {
        addObserver(observer.trampoline, forKeyPath: key, options: [], context: nil)
    }

    func removeKeyObserver(_ observer: KeyValueObservations, forKey key: String) {
        removeObserver(observer.trampoline, forKeyPath: key)
    }
}
#endif

#if canImport(notify)
/// Darwin notifications through libnotify, which reaches every process, delivered on a
/// serial queue of the package's: no run loop needed.
///
/// A process hears its own posts too. Skipping them cannot be done without loss: a
/// name's state (`notify_set_state`) holds one value, which a post from this process can
/// overwrite before the delivery of another process's post reads it, and deliveries to
/// one token may be coalesced, so what the process sees of its own post alone and of its
/// post coalesced with another's can be the same (`ExternalChangesTests`, "a process
/// cannot tell its own Darwin notification…"). An own post costs a recheck, which reads
/// the observed keys and publishes nothing.
enum DarwinNotifications {
    private struct Token: ExternalChangesToken {
        let token: Int32
        func cancel() { notify_cancel(token) }
    }

    static func observe(_ name: String, _ onChange: @escaping @Sendable () -> Void) -> (any ExternalChangesToken)? {
        // A serial queue per observation, as the Linux watcher has: a handler that takes
        // its time holds up only its own suite.
        let queue = DispatchQueue(label: "DefaultsCoder.DarwinNotifications.observe")
        var token: Int32 = 0
        let status = notify_register_dispatch(name, &token, queue) { _ in onChange() }
        return status == NOTIFY_STATUS_OK ? Token(token: token) : nil
    }

    static func post(_ name: String) {
        notify_post(name)
    }
}
#endif
