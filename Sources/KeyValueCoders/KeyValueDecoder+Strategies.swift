// The public strategies of `KeyValueDecoder`, each case documented.

import Foundation

extension KeyValueDecoder {

    /// Which values in a tree stand for `nil`. `Optional<Any>.none` always does.
    ///
    /// ```swift
    /// var decoder = KeyValueDecoder()
    /// decoder.nilDecodingStrategy = .stringNull            // "$null" is nil
    /// decoder.nilDecodingStrategy = .init(matching: encoder.nilEncodingStrategy)
    /// ```
    public enum NilDecodingStrategy: Sendable {
        /// Only `Optional<Any>.none`: what the encoder's `.default` writes (and
        /// `.removed` leaves nothing to find).
        case `default`
        /// `Optional<Any>.none`, and every value the closure says stands for `nil`.
        case custom(@Sendable (Any) -> Bool)

        /// The string `"$null"`, as `PropertyListEncoder` writes `nil`.
        public static let stringNull = NilDecodingStrategy.custom { ($0 as? String) == "$null" }

        /// `NSNull`, as `JSONSerialization` reads `null`.
        public static let nsNull = NilDecodingStrategy.custom { isNSNull($0) }

        /// The strategy that reads back what `strategy` writes.
        ///
        /// - Parameter strategy: The encoder's nil strategy.
        public init(matching strategy: KeyValueEncoder.NilEncodingStrategy) {
            switch strategy {
            case .default, .removed: self = .default
            case .placeholder(_, let isNull): self = .custom(isNull)
            }
        }

        /// Whether `value` stands for `nil` under this strategy.
        /// - Parameter value: A value from a tree.
        /// - Returns: `true` when the value is `nil`.
        public func isNull(_ value: Any) -> Bool {
            guard let value = flattenOptional(value) else { return true }
            switch self {
            case .default: return false
            case .custom(let isNull): return isNull(value)
            }
        }

    }

    /// How `Date` values are read.
    public enum DateDecodingStrategy: Sendable {
        /// A native `Date`, or a number of seconds since 1 January 2001 (the form of
        /// `Date`'s own `Codable`).
        case date
        /// A number of seconds since 1 January 1970.
        case secondsSince1970
        /// A number of milliseconds since 1 January 1970.
        case millisecondsSince1970
        /// An ISO 8601 `String`, with or without fractional seconds.
        case iso8601(includingFractionalSeconds: Bool)
        /// A `String` read by the formatter.
        case formatted(DateFormatter)
        /// Whatever the closure makes of the raw value.
        case custom(@Sendable (Any) throws -> Date)

        /// An ISO 8601 `String`, with or without fractional seconds.
        public static let iso8601 = DateDecodingStrategy.iso8601(includingFractionalSeconds: false)
    }

    /// How `URL` values are read.
    public enum URLDecodingStrategy: Sendable {
        /// A native `URL`, a `String` holding an absolute URL (one with a scheme), or the
        /// keyed `{relative, base}` form that `URL`'s own `Codable` and
        /// `PropertyListEncoder` write. A relative string such as `"hello"` is refused,
        /// so that a value tried as a `URL` first is not taken for one by mistake.
        case url
        /// A `String`, absolute or relative, as `URL(string:)` reads it.
        case absoluteString
        /// Whatever the closure makes of the raw value.
        case custom(@Sendable (Any) throws -> URL)
    }

    /// How `Data` values are read.
    public enum DataDecodingStrategy: Sendable {
        /// A native `Data`, or an array of bytes (`Data`'s own `Codable`). A `String` is
        /// refused, even one that happens to be valid Base64: use `.base64` for those.
        case data
        /// A Base64 `String` only.
        case base64
        /// Whatever the closure makes of the raw value.
        case custom(@Sendable (Any) throws -> Data)
    }

    /// How dictionary keys become coding keys, for structs and other keyed types. The
    /// keys of a `[String: V]` are data and are left as they are, as Foundation's
    /// decoders leave them.
    public enum KeyDecodingStrategy: Sendable {
        /// Each key as it is.
        case useDefaultKeys
        /// `my_url_value` becomes `myUrlValue`.
        case convertFromSnakeCase
        /// The closure gets the path ending with the stored key and returns the key to use.
        case custom(@Sendable ([any CodingKey]) -> any CodingKey)
    }

    /// How numbers become `BinaryInteger` values.
    public enum IntDecodingStrategy: Sendable {
        /// Accepts any number the type represents exactly, including whole floating-point
        /// values such as `20.0`; anything else throws.
        case exact
        /// Rounds fractional values with the rule; values out of range still throw.
        case rounding(rule: FloatingPointRoundingRule)
        /// Clamps values to the type's range, rounding fractions with the rule. With a
        /// `nil` rule, fractional values throw. `NaN` always throws.
        case clamping(rule: FloatingPointRoundingRule?)

    }
}
