// The seam between the sync engine and a cloud key-value store: Apple's
// `NSUbiquitousKeyValueStore` on Apple platforms (`UbiquitousKeyValueStore`), the
// in-memory `SimulatedCloud` anywhere. The protocol names what `NSUbiquitousKeyValueStore`
// offers, so that the adapter is a forwarding, and a test or a preview swaps the store
// instead of a global singleton.

import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// A cloud key-value store the sync engine (`CloudSync`) keeps a suite's keys in.
///
/// Values are property lists. The requirements mirror `NSUbiquitousKeyValueStore`:
/// `UbiquitousKeyValueStore` forwards to it, and `SimulatedCloud.Device` implements them
/// in memory for tests and previews.
public protocol CloudKeyValueStore: Sendable {
    /// The value stored under `key` in this device's copy of the store.
    ///
    /// - Parameter key: The key.
    /// - Returns: The property list stored under `key`, or `nil`.
    func object(forKey key: String) -> Any?

    /// Stores `value` under `key`, to be uploaded when the store next can.
    ///
    /// - Parameters:
    ///   - value: A property list.
    ///   - key: The key.
    func set(_ value: Any, forKey key: String)

    /// Removes the value stored under `key`.
    ///
    /// - Parameter key: The key.
    func removeObject(forKey key: String)

    /// Every key and value in this device's copy of the store.
    var dictionaryRepresentation: [String: Any] { get }

    /// Exchanges changes with the cloud when the store can.
    ///
    /// - Returns: `false` when the store cannot sync at all, most often because the app
    ///   lacks the iCloud key-value storage entitlement.
    func synchronize() -> Bool

    /// Whether an iCloud account is signed in on this device. `true` unless the store
    /// knows otherwise.
    var hasAccount: Bool { get }

    /// Calls `handler` with each change that reaches this device's copy from outside:
    /// another device's write, the initial download, a quota violation, an account switch.
    ///
    /// - Parameter handler: Called on any thread, one change at a time.
    /// - Returns: The subscription; the handler is called until it is cancelled or
    ///   released.
    func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription
}

extension CloudKeyValueStore {
    /// `true`: a store that cannot tell has an account.
    public var hasAccount: Bool { true }

    /// The changes `observeChanges(_:)` reports, as an asynchronous sequence that ends
    /// its subscription when the iterating task ends or is cancelled.
    public var changes: AsyncStream<CloudStoreChange> {
        AsyncStream { continuation in
            let subscription = observeChanges { continuation.yield($0) }
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }
}

/// A change that reached a device's copy of a cloud key-value store from outside, with
/// its reason and the keys it touched.
public struct CloudStoreChange: Sendable, Equatable, CustomStringConvertible {
    /// Why the store changed, as `NSUbiquitousKeyValueStore` reports it.
    public enum Reason: Int, Sendable, Equatable, CaseIterable {
        /// Another device changed values (`NSUbiquitousKeyValueStoreServerChange`).
        case serverChange = 0
        /// Writes were discarded because the first download from iCloud had not
        /// happened yet (`NSUbiquitousKeyValueStoreInitialSyncChange`); they must be
        /// made again once it has.
        case initialSync = 1
        /// The app's store is over its quota (`NSUbiquitousKeyValueStoreQuotaViolationChange`).
        case quotaViolation = 2
        /// The user switched iCloud accounts: every value is now the new account's
        /// (`NSUbiquitousKeyValueStoreAccountChange`).
        case accountChange = 3

        /// The reason Apple's constant `code` stands for (`NSUbiquitousKeyValueStoreServerChange`
        /// and the others: 0 to 3); `nil` for another.
        ///
        /// - Parameter code: The constant's value, as the notification's `userInfo` holds it.
        public init?(rawValue code: Int) {
            switch code {
            case 0: self = .serverChange
            case 1: self = .initialSync
            case 2: self = .quotaViolation
            case 3: self = .accountChange
            default: return nil
            }
        }
    }

    /// Why the store changed.
    public var reason: Reason
    /// The keys whose values changed; empty when the store did not say.
    public var keys: [String]

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - reason: Why the store changed.
    ///   - keys: The keys whose values changed.
    public init(reason: Reason, keys: [String]) {
        self.reason = reason
        self.keys = keys
    }

    /// The change `NSUbiquitousKeyValueStore.didChangeExternallyNotification` describes
    /// in `userInfo`: its reason under `NSUbiquitousKeyValueStoreChangeReasonKey`, its keys
    /// under `NSUbiquitousKeyValueStoreChangedKeysKey`. `nil` when the reason is missing
    /// or unknown (Apple's documentation says the reason "can" be present).
    ///
    /// - Parameter userInfo: The notification's `userInfo`.
    public init?(userInfo: [AnyHashable: Any]?) {
        guard let number = userInfo?[Self.reasonKey] as? NSNumber,
            let code = Int(exactly: number.int64Value), let reason = Reason(rawValue: code)
        else { return nil }
        self.reason = reason
        keys = userInfo?[Self.changedKeysKey] as? [String] ?? []
    }

    /// `NSUbiquitousKeyValueStoreChangeReasonKey` and `NSUbiquitousKeyValueStoreChangedKeysKey`:
    /// Apple's constants where Foundation has them, their names spelled out elsewhere, so
    /// that the translation compiles, and is tested, where Foundation has no iCloud store.
    #if canImport(Darwin)
    static let reasonKey = NSUbiquitousKeyValueStoreChangeReasonKey
    static let changedKeysKey = NSUbiquitousKeyValueStoreChangedKeysKey
    #else
    static let reasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
    static let changedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
    #endif

    /// `serverChange ["theme", "volume"]`.
    public var description: String { "\(reason) \(keys)" }
}

/// A subscription to a store's changes; the handler is called until `cancel()` or until
/// the subscription is released.
public final class CloudStoreSubscription: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    /// Creates a subscription that runs `cancel` once, when cancelled or released.
    ///
    /// - Parameter cancel: What ends the subscription.
    public init(cancel: @escaping @Sendable () -> Void) {
        onCancel = Locked(cancel)
    }

    /// Ends the subscription; the handler is not called after this returns.
    public func cancel() {
        let cancel = onCancel.withLock { cancel in
            defer { cancel = nil }
            return cancel
        }
        cancel?()
    }

    deinit { cancel() }
}

/// The limits iCloud's key-value storage sets, checked before each upload so that a
/// value over them stays on the device and is reported once, instead of being refused by
/// the store. Apple's documentation: at most 1,024 keys, 1 MB in all, 1 MB per value,
/// keys of at most 64 bytes in UTF-8.
public struct CloudStoreLimits: Sendable, Equatable {
    /// The most keys the store holds.
    public var keys: Int
    /// The most bytes all keys and values take together.
    public var totalBytes: Int
    /// The most bytes one key and its value take.
    public var valueBytes: Int
    /// The longest key, in bytes of UTF-8.
    public var keyBytes: Int

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - keys: The most keys the store holds.
    ///   - totalBytes: The most bytes all keys and values take together.
    ///   - valueBytes: The most bytes one key and its value take.
    ///   - keyBytes: The longest key, in bytes of UTF-8.
    public init(keys: Int, totalBytes: Int, valueBytes: Int, keyBytes: Int) {
        self.keys = keys
        self.totalBytes = totalBytes
        self.valueBytes = valueBytes
        self.keyBytes = keyBytes
    }

    /// iCloud's: 1,024 keys, 1 MB (1,048,576 bytes) in all and per value, 64-byte keys.
    public static let iCloud = CloudStoreLimits(keys: 1024, totalBytes: 1 << 20, valueBytes: 1 << 20, keyBytes: 64)

    /// What `key` and `value` take against the limits: the key's UTF-8 bytes and the
    /// value's size as a binary property list. An estimate of iCloud's own count, which
    /// remains the authority (`CloudStoreChange.Reason.quotaViolation`).
    package static func size(of key: String, _ value: Any) -> Int {
        let bytes = (try? PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))?.count
        return key.utf8.count + (bytes ?? Int.max / 4)
    }
}
