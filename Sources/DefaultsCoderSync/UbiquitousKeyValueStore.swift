// Apple's iCloud key-value store as a `CloudKeyValueStore`: a forwarding to
// `NSUbiquitousKeyValueStore`, compiled where Foundation has it. Its logic — reading the
// change notification's `userInfo` (`CloudStoreChange(userInfo:)`), and hearing the
// store's notifications and the iCloud identity's on a queue of the package's
// (`UbiquitousStoreNotifications`) — is compiled and tested everywhere.

import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// How the iCloud adapter hears its store: `didChangeExternallyNotification` for the
/// store, and `NSUbiquityIdentityDidChange` for the account, which may make the store
/// able to sync (it reaches the engine as a server change that names no keys: every key
/// is reconciled). Both are delivered on one serial queue of the package's: Apple does not
/// say which thread posts them.
enum UbiquitousStoreNotifications {
    /// The queue handlers run on.
    static let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "DefaultsCoder.UbiquitousKeyValueStore"
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    /// Calls `handler` with each change `store` reports through `storeChange`, and with a
    /// server change naming no keys after each `identityChange`, on `queue`.
    static func observe(
        _ store: AnyObject, storeChange: Notification.Name, identityChange: Notification.Name, in center: NotificationCenter = .default,
        _ handler: @escaping @Sendable (CloudStoreChange) -> Void
    ) -> CloudStoreSubscription {
        let tokens = [
            center.addObserver(forName: storeChange, object: store, queue: queue) { notification in
                if let change = CloudStoreChange(userInfo: notification.userInfo) { handler(change) }
            },
            center.addObserver(forName: identityChange, object: nil, queue: queue) { _ in
                handler(CloudStoreChange(reason: .serverChange, keys: []))
            },
        ]
        let observers = Observers(tokens, center: center)
        return CloudStoreSubscription { observers.remove() }
    }

    /// The observers a subscription removes.
    private final class Observers: @unchecked Sendable {
        // Unchecked: constants, handed to `removeObserver(_:)` once the subscription ends
        // (which it does once); `NotificationCenter` is thread-safe.
        let tokens: [any NSObjectProtocol]
        let center: NotificationCenter
        init(_ tokens: [any NSObjectProtocol], center: NotificationCenter) {
            self.tokens = tokens
            self.center = center
        }
        func remove() {
            for token in tokens { center.removeObserver(token) }
        }
    }
}

#if canImport(Darwin)
/// iCloud's key-value storage, through `NSUbiquitousKeyValueStore`.
///
/// The app needs the iCloud key-value storage entitlement
/// (`com.apple.developer.ubiquity-kvstore-identifier`); without it `synchronize()`
/// returns `false` and `CloudSync.status` is `.unavailable`. Key-value storage does not
/// need iCloud Drive: the engine starts whenever `synchronize()` succeeds, and hears
/// account changes (`NSUbiquityIdentityDidChange`) to reconcile again.
@available(watchOS 9, *)
public final class UbiquitousKeyValueStore: CloudKeyValueStore, @unchecked Sendable {
    // Unchecked: Apple documents `NSUbiquitousKeyValueStore` as safe to use from any
    // thread.

    /// The store forwarded to.
    public let store: NSUbiquitousKeyValueStore

    /// Creates the adapter.
    ///
    /// - Parameter store: The store; the app's shared one unless a test chooses.
    public init(_ store: NSUbiquitousKeyValueStore = .default) {
        self.store = store
    }

    /// `store.object(forKey:)`.
    public func object(forKey key: String) -> Any? { store.object(forKey: key) }

    /// `store.set(_:forKey:)`.
    public func set(_ value: Any, forKey key: String) { store.set(value, forKey: key) }

    /// `store.removeObject(forKey:)`.
    public func removeObject(forKey key: String) { store.removeObject(forKey: key) }

    /// `store.dictionaryRepresentation`.
    public var dictionaryRepresentation: [String: Any] { store.dictionaryRepresentation }

    /// `store.synchronize()`.
    public func synchronize() -> Bool { store.synchronize() }

    /// Calls `handler`, on a serial queue of the package's, with each
    /// `didChangeExternallyNotification` of `store` that names its reason, and with a
    /// server change that names no keys after each `NSUbiquityIdentityDidChange`.
    public func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription {
        UbiquitousStoreNotifications.observe(
            store, storeChange: NSUbiquitousKeyValueStore.didChangeExternallyNotification, identityChange: .NSUbiquityIdentityDidChange, handler)
    }
}
#endif
