// Apple's iCloud key-value store as a `CloudKeyValueStore`: a forwarding to
// `NSUbiquitousKeyValueStore`, compiled where Foundation has it. The one piece of logic,
// reading the change notification's `userInfo`, is `CloudStoreChange(userInfo:)`,
// compiled and tested everywhere.

#if canImport(Darwin)
import Foundation

/// iCloud's key-value storage, through `NSUbiquitousKeyValueStore`.
///
/// The app needs the iCloud key-value storage entitlement
/// (`com.apple.developer.ubiquity-kvstore-identifier`); without it `synchronize()`
/// returns `false` and `CloudSync.status` is `.unavailable`.
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

    /// Whether `FileManager.default.ubiquityIdentityToken` names a signed-in account.
    public var hasAccount: Bool { FileManager.default.ubiquityIdentityToken != nil }

    /// Calls `handler` with each `didChangeExternallyNotification` of `store` that names
    /// its reason.
    public func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription {
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { notification in
            if let change = CloudStoreChange(userInfo: notification.userInfo) { handler(change) }
        }
        let observer = ObserverToken(token)
        return CloudStoreSubscription { NotificationCenter.default.removeObserver(observer.token) }
    }

    /// A notification observer's token, which the subscription removes.
    private final class ObserverToken: @unchecked Sendable {
        // Unchecked: a constant, handed to `removeObserver(_:)` once.
        let token: any NSObjectProtocol
        init(_ token: any NSObjectProtocol) { self.token = token }
    }
}
#endif
