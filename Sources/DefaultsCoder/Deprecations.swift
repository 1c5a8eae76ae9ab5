// Every deprecated name, forwarding to the one that replaced it: together, so that the
// next major version deletes one file.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// The nil strategy's deprecated names.
extension KeyValueDecoder.NilDecodingStrategy {
    /// The encoder's `.removed` writes nothing to read: `.default`.
    @available(*, deprecated, renamed: "default")
    public static let removed = Self.default

    /// A strategy that takes `isNull`'s values for `nil`; the placeholder is unused.
    ///
    /// - Parameters:
    ///   - placeholder: Unused: the decoder only asks which values are `nil`.
    ///   - isNull: Which values stand for `nil`.
    /// - Returns: `.custom(isNull)`.
    @available(*, deprecated, renamed: "custom")
    public static func placeholder(_ placeholder: any Sendable, isNull: @escaping @Sendable (Any) -> Bool) -> Self {
        .custom(isNull)
    }
}

/// The integer strategy's deprecated names.
extension KeyValueDecoder.IntDecodingStrategy {
    /// Clamps values to the type's range; renamed `clamping(rule:)`, the label
    /// `rounding(rule:)` uses.
    ///
    /// - Parameter roundingRule: How fractions are rounded; `nil` throws for them.
    /// - Returns: `.clamping(rule: roundingRule)`.
    @available(*, deprecated, renamed: "clamping(rule:)")
    public static func clamping(roundingRule: FloatingPointRoundingRule?) -> Self {
        .clamping(rule: roundingRule)
    }
}

/// Typed-key access under its deprecated names.
extension UserDefaults {
    /// Reads the value for `key`; renamed `read(_:)`, since `value(forKey:)` is
    /// key-value coding's.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The decoded value, or `key.defaultValue` when the key is absent.
    /// - Throws: As `read(_:)`.
    @available(*, deprecated, renamed: "read(_:)")
    public func value<Value>(for key: DefaultsKey<Value>) throws -> Value {
        try read(key)
    }

    /// Stores `value` for `key`; renamed `write(_:to:)`, since `set(_:forKey:)` is
    /// Foundation's and does not throw.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: As `write(_:to:)`.
    @available(*, deprecated, renamed: "write(_:to:)")
    public func set<Value>(_ value: Value, for key: DefaultsKey<Value>) throws {
        try write(value, to: key)
    }

    /// Removes the stored value for `key`; renamed `reset(_:)`, since
    /// `removeObject(forKey:)` is Foundation's.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: As `reset(_:)`.
    @available(*, deprecated, renamed: "reset(_:)")
    public func removeValue<Value>(for key: DefaultsKey<Value>) throws {
        try reset(key)
    }
}

/// A migration step's deprecated names.
extension DefaultsMigration.Step {
    /// The typed-key conversion with its labels in the old order; renamed
    /// `convert(_:from:to:legacy:_:)`, the order of the other overload.
    ///
    /// - Parameters:
    ///   - name: The key the value is stored under now.
    ///   - type: The type it was stored as.
    ///   - legacy: The blob format it may be stored in.
    ///   - key: Where the converted value goes.
    ///   - transform: The conversion.
    /// - Returns: The step.
    @available(*, deprecated, renamed: "convert(_:from:to:legacy:_:)")
    public static func convert<Old: Decodable & Sendable, New>(
        _ name: String, from type: Old.Type, legacy: LegacyFormat?, to key: DefaultsKey<New>,
        _ transform: @escaping @Sendable (Old) throws -> New
    ) -> Self {
        convert(name, from: type, to: key, legacy: legacy, transform)
    }
}

/// An observation's deprecated names.
extension DefaultsObservation {
    /// Whether `observe` and `updates` start with the current value when not told:
    /// `true`, for both, as their default arguments say.
    @available(*, deprecated, message: "the default argument of observe and updates says it: initial: true")
    public static let initialByDefault = true
}
