// The public strategies of `KeyValueEncoder`, each case documented.

import Foundation

extension KeyValueEncoder {

    /// How `nil` is written into the tree.
    public enum NilEncodingStrategy: Sendable {
        /// Keeps `nil` as `Optional<Any>.none` inside arrays and dictionaries.
        case `default`
        /// Leaves `nil` out: dictionary entries are dropped and array elements skipped.
        case removed
        /// Writes `placeholder`; when decoding, `isNull` says which values are `nil`.
        case placeholder(any Sendable, isNull: @Sendable (Any) -> Bool)

        /// Writes the string `"$null"`, as `PropertyListEncoder` does.
        public static let stringNull = NilEncodingStrategy.placeholder("$null") { ($0 as? String) == "$null" }

        /// Writes `NSNull()`, as `JSONSerialization` does.
        public static let nsNull = NilEncodingStrategy.placeholder(NSNullPlaceholder()) { isNSNull($0) }

        /// The value written for `nil`, or `nil` for the strategies without a placeholder.
        var placeholderValue: Any? {
            guard case .placeholder(let placeholder, _) = self else { return nil }
            // `.nsNull` keeps a Sendable stand-in and makes the NSNull here.
            return placeholder is NSNullPlaceholder ? NSNull() : placeholder
        }

        /// Whether `value` stands for `nil` under this strategy. `Optional<Any>.none`
        /// always does.
        /// - Parameter value: A value from a tree.
        /// - Returns: `true` when the value is `nil`.
        public func isNull(_ value: Any) -> Bool {
            switch self {
            case .default, .removed:
                return flattenOptional(value) == nil
            case .placeholder(_, let isNull):
                guard let value = flattenOptional(value) else { return true }
                return isNull(value)
            }
        }
    }

    /// How `Date` values are written.
    public enum DateEncodingStrategy: Sendable {
        /// The native `Date`; a property list stores it as a date.
        case date
        /// A `Double` of seconds since 1 January 1970.
        case secondsSince1970
        /// A `Double` of milliseconds since 1 January 1970.
        case millisecondsSince1970
        /// An ISO 8601 `String`, such as `2001-01-01T00:00:00Z`, optionally with
        /// fractional seconds (`2001-01-01T00:00:00.250Z`).
        case iso8601(includingFractionalSeconds: Bool)
        /// A `String` made by the formatter.
        case formatted(DateFormatter)
        /// Whatever the closure returns.
        case custom(@Sendable (Date) throws -> Any)

        /// An ISO 8601 `String` with whole seconds, such as `2001-01-01T00:00:00Z`.
        public static let iso8601 = DateEncodingStrategy.iso8601(includingFractionalSeconds: false)
    }

    /// How `URL` values are written.
    public enum URLEncodingStrategy: Sendable {
        /// The native `URL`. (In `UserDefaults`, where a property list has no URL type,
        /// an absolute URL's string; a URL with a base, or a relative one, in the keyed
        /// form `URL`'s own `Codable` writes, so that nothing of it is lost.)
        case url
        /// Its `absoluteString`.
        case absoluteString
        /// Whatever the closure returns.
        case custom(@Sendable (URL) throws -> Any)
    }

    /// How `Data` values are written.
    public enum DataEncodingStrategy: Sendable {
        /// The native `Data`.
        case data
        /// A Base64 `String`.
        case base64
        /// Whatever the closure returns.
        case custom(@Sendable (Data) throws -> Any)
    }

    /// How coding keys become dictionary keys.
    public enum KeyEncodingStrategy: Sendable {
        /// Each key's `stringValue`.
        case useDefaultKeys
        /// `myURLValue` becomes `my_url_value`.
        case convertToSnakeCase
        /// The closure gets the full coding path, ending with the key being written,
        /// and returns the key to write.
        case custom(@Sendable ([any CodingKey]) -> any CodingKey)
    }
}

/// `NSNull` is not `Sendable` everywhere; the strategy only needs to make new ones.
struct NSNullPlaceholder: Sendable {}
