import Foundation
import KeyValueCoders

/// A failure met by the non-throwing API (the subscript, `@UserDefault`, observation):
/// a stored value that does not decode, or a value that cannot be stored.
///
/// The failure goes to `DefaultsFailure.handler`; the read returns the key's default and
/// the stored value is left as it is. The default handler writes each key's first
/// failure to standard error:
///
/// ```
/// DefaultsCoder: cannot read "owner", returning its default: Expected String at SELF.name, found Int
/// ```
public struct DefaultsFailure: Error, Sendable, CustomStringConvertible {
    /// What was being done when the failure happened.
    public enum Operation: Sendable, Equatable {
        /// Reading a stored value.
        case read
        /// Storing a value.
        case write
    }

    /// The name of the key.
    public let key: String
    /// Whether it happened reading or writing.
    public let operation: Operation
    /// The `DecodingError` or `EncodingError`, naming the path inside the value.
    public let error: any Error

    /// Creates a failure report.
    ///
    /// - Parameters:
    ///   - key: The name of the key.
    ///   - operation: Whether it happened reading or writing.
    ///   - error: The underlying error.
    public init(key: String, operation: Operation, error: any Error) {
        self.key = key
        self.operation = operation
        self.error = error
    }

    /// The coding path inside the value where the error happened, when it has one.
    public var codingPath: [any CodingKey] {
        codingErrorContext(of: error)?.codingPath ?? []
    }

    /// `DefaultsCoder: cannot read "owner", returning its default: Expected … at SELF.name, found Int`.
    public var description: String {
        if let report = error as? any DescribedFailure { return "DefaultsCoder: \(report)" }
        if let report = error as? DefaultsSuiteError, report.isReportOnly { return "DefaultsCoder: \(report)" }
        let message = codingErrorContext(of: error)?.debugDescription ?? "\(error)"
        switch operation {
        case .read: return "DefaultsCoder: cannot read \"\(key)\", returning its default: \(message)"
        case .write: return "DefaultsCoder: cannot store \"\(key)\", leaving it as it was: \(message)"
        }
    }

    /// Receives every failure of the non-throwing API; replace it to log, assert or
    /// count failures your own way. It may be called on any thread.
    ///
    /// The default, `DefaultsFailure.logOncePerKey`, writes the first read failure and the
    /// first write failure of each key to standard error.
    public static var handler: @Sendable (DefaultsFailure) -> Void {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// Writes each key's first read failure and first write failure to standard error.
    public static let logOncePerKey: @Sendable (DefaultsFailure) -> Void = { failure in
        logOnce(failure) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    }

    /// Passes `failure.description` to `write` unless this key and operation were
    /// logged before.
    static func logOnce(_ failure: DefaultsFailure, write: (String) -> Void) {
        let isFirst = state.withLock { $0.logged.insert("\(failure.operation):\(failure.key)").inserted }
        if isFirst { write(failure.description) }
    }

    private static let state = Locked<(handler: @Sendable (DefaultsFailure) -> Void, logged: Set<String>)>(
        (logOncePerKey, [])
    )

    package static func report(_ failure: DefaultsFailure) {
        handler(failure)
    }
}

/// An error whose description is the whole report (a launch argument that hides a write,
/// a sync engine's failure): `DefaultsFailure.description` is "DefaultsCoder: " and it.
package protocol DescribedFailure: Error, CustomStringConvertible {}
