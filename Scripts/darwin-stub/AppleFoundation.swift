// What Apple's Foundation has and swift-corelibs-foundation lacks, of what the package
// calls, with Apple's signatures: enough for the library's Darwin branches to type-check
// on Linux (Scripts/check-darwin.sh). Nothing here runs.

@_exported import Foundation

extension FileManager {
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { fatalError("stub") }
}

extension ProcessInfo {
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) { fatalError("stub") }
}

extension Notification.Name {
    public static let NSUbiquityIdentityDidChange = Notification.Name("NSUbiquityIdentityDidChangeNotification")
}

public struct NSKeyValueChangeKey: Hashable, Sendable {
    public let rawValue: String
}

public struct NSKeyValueObservingOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
}

extension NSObject {
    public func addObserver(_ observer: NSObject, forKeyPath keyPath: String, options: NSKeyValueObservingOptions = [], context: UnsafeMutableRawPointer?) {
        fatalError("stub")
    }
    public func removeObserver(_ observer: NSObject, forKeyPath keyPath: String) { fatalError("stub") }
}

public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
public var NSUbiquitousKeyValueStoreServerChange: Int { 0 }
public var NSUbiquitousKeyValueStoreInitialSyncChange: Int { 1 }
public var NSUbiquitousKeyValueStoreQuotaViolationChange: Int { 2 }
public var NSUbiquitousKeyValueStoreAccountChange: Int { 3 }

open class NSUbiquitousKeyValueStore: NSObject, @unchecked Sendable {
    open class var `default`: NSUbiquitousKeyValueStore { fatalError("stub") }
    public static let didChangeExternallyNotification = Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification")
    open func object(forKey aKey: String) -> Any? { fatalError("stub") }
    open func set(_ anObject: Any?, forKey aKey: String) { fatalError("stub") }
    open func removeObject(forKey aKey: String) { fatalError("stub") }
    open var dictionaryRepresentation: [String: Any] { fatalError("stub") }
    open func synchronize() -> Bool { fatalError("stub") }
}

/// A CoreFoundation string, toll-free bridged to `NSString` and so to `String`.
public typealias CFString = NSString
