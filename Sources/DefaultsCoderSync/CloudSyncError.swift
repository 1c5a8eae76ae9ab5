import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// Why the sync engine could not sync a key, or could not start.
///
/// Thrown by `CloudSync.add(_:)` and `CloudSync.start()`; reported to
/// `DefaultsFailure.handler` (operation `.write`) when an upload is held back, once per
/// key until the key is edited again. The value stays on the device either way.
///
/// ```
/// DefaultsCoder: iCloud sync of "layout" held back: the value takes 1,100,023 bytes, over the 1,048,576 a value may take; it stays on this device
/// ```
public struct CloudSyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        /// The key and its value take more bytes than one value may (`CloudStoreLimits.valueBytes`).
        case valueTooLarge(bytes: Int, limit: Int)
        /// Uploading the key would make the store hold more keys than it may.
        case tooManyKeys(limit: Int)
        /// Uploading the value would make the store hold more bytes than it may.
        case storeFull(bytes: Int, limit: Int)
        /// The store reported that the app's storage is over its quota.
        case quotaViolation
        /// The key's name is longer than the store allows, in bytes of UTF-8.
        case keyTooLong(bytes: Int, limit: Int)
        /// The key is one of the package's own records, which are not synced.
        case reservedKey
        /// Another `CloudSync` already syncs this suite in this process.
        case suiteAlreadySynced
        /// The cloud holds, for the key, a value the suite cannot keep (not a property
        /// list, or nested too deep): it is not applied, and a value of this device
        /// replaces it.
        case unstorableRemoteValue
        /// The cloud holds, for the key, an entry whose stamp is malformed or out of range
        /// (before 1970 or after 9999): it is skipped, and a value of this device replaces
        /// it.
        case invalidRemoteEntry
        /// The suite could not be read or written (the underlying error's description).
        case suite(String)
    }

    /// The key, when the problem is one key's.
    public let key: String?
    /// What went wrong.
    public let problem: Problem

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - key: The key, when the problem is one key's.
    ///   - problem: What went wrong.
    public init(key: String?, problem: Problem) {
        self.key = key
        self.problem = problem
    }

    /// `iCloud sync of "layout" held back: …; it stays on this device`.
    public var description: String {
        let subject = key.map { "iCloud sync of \"\($0)\"" } ?? "iCloud sync"
        let kept = "; it stays on this device"
        switch problem {
        case .valueTooLarge(let bytes, let limit):
            return "\(subject) held back: the value takes \(bytes.grouped) bytes, over the \(limit.grouped) a value may take\(kept)"
        case .tooManyKeys(let limit):
            return "\(subject) held back: the store already holds its \(limit.grouped) keys\(kept)"
        case .storeFull(let bytes, let limit):
            return "\(subject) held back: the store would hold \(bytes.grouped) bytes, over its \(limit.grouped)\(kept)"
        case .quotaViolation:
            return "\(subject) held back: iCloud reported the app's storage over its quota\(kept)"
        case .keyTooLong(let bytes, let limit):
            return "\(subject) refused: the name takes \(bytes) bytes of UTF-8, over the \(limit) iCloud allows"
        case .reservedKey:
            return "\(subject) refused: the key holds the package's own record"
        case .suiteAlreadySynced:
            return "\(subject) not started: another CloudSync already syncs this suite in this process"
        case .unstorableRemoteValue:
            return "\(subject) skipped the value from iCloud: the suite cannot keep it (not a property list, or nested too deep)"
        case .invalidRemoteEntry:
            return "\(subject) skipped the entry from iCloud: its stamp is malformed or out of range"
        case .suite(let reason):
            return "\(subject) stopped for now: \(reason)"
        }
    }
}

extension CloudSyncError: DescribedFailure {}

extension Int {
    /// `1,048,576`: grouped by thousands whatever the locale, as error messages are
    /// asserted exactly.
    fileprivate var grouped: String {
        let digits = String(magnitude)
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (self < 0 ? "-" : "") + groups.joined(separator: ",")
    }
}
