//
//  KeyValueDecoder.swift
//  DefaultsCoder
//

import Foundation

/// Decodes `Decodable` values straight from plist-native `Any` trees.
///
/// ```swift
/// let food = try KeyValueDecoder().decode(Food.self, from: "fish")
/// let meals = try KeyValueDecoder().decode([String].self, from: ["fish", "chips"])
/// let user = try KeyValueDecoder().decode(User.self, from: ["id": 1, "name": "Herbert"])
///
/// // throws DecodingError.typeMismatch 'Expected String at SELF[1], found Int'
/// _ = try KeyValueDecoder().decode([String].self, from: ["fish", 1])
/// ```
///
/// Numbers convert between widths only when the value is represented exactly (see
/// `intDecodingStrategy`), a `Bool` is never read as a number nor a number as a `Bool`,
/// and every error names the path of the value that failed.
public struct KeyValueDecoder: Sendable {

    /// Values handed to every `init(from:)` as `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Which values stand for `nil`. Default: `.default`, only `Optional<Any>.none`.
    public var nilDecodingStrategy: NilDecodingStrategy = .default

    /// How `Date` values are read. Default: `.date`.
    public var dateDecodingStrategy: DateDecodingStrategy = .date

    /// How `URL` values are read. Default: `.url`, which accepts every form the encoder writes.
    public var urlDecodingStrategy: URLDecodingStrategy = .url

    /// How `Data` values are read. Default: `.data`, which accepts every form the encoder writes.
    public var dataDecodingStrategy: DataDecodingStrategy = .data

    /// How dictionary keys become coding keys. Default: `.useDefaultKeys`.
    public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys

    /// How numbers become integers. Default: `.exact`.
    public var intDecodingStrategy: IntDecodingStrategy = .exact

    /// Set by the `UserDefaults` extension: read the forms it writes (see `KeyValueEncoder`).
    var isForUserDefaults = false

    /// Creates a decoder with the default strategies.
    public init() {}

    /// Decodes a value of the given type from a plist-native `Any` tree.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The tree: a dictionary, an array, a primitive or `nil`.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` with the path of the value that failed: `typeMismatch`,
    ///   `valueNotFound`, `keyNotFound` or `dataCorrupted`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from value: Any) throws -> T {
        // An `Any?` passed as `Any` arrives wrapped: unwrap it once here so the fast
        // paths below see the tree itself.
        let value = flattenOptional(value) ?? value
        let decoder = DecoderImpl(options: self, value: value)
        return try decoder.unbox(value, as: T.self, step: nil)
    }
}

// MARK: - Strategies

extension KeyValueDecoder {

    /// Which values stand for `nil`; the same cases as the encoder's.
    public typealias NilDecodingStrategy = KeyValueEncoder.NilEncodingStrategy

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
        /// A native `URL`, an absolute-URL `String`, or the keyed `{relative, base}` form
        /// that `URL`'s own `Codable` and `PropertyListEncoder` write.
        case url
        /// A `String` only.
        case absoluteString
        /// Whatever the closure makes of the raw value.
        case custom(@Sendable (Any) throws -> URL)
    }

    /// How `Data` values are read.
    public enum DataDecodingStrategy: Sendable {
        /// A native `Data`, a Base64 `String`, or an array of bytes (`Data`'s own `Codable`).
        case data
        /// A Base64 `String` only.
        case base64
        /// Whatever the closure makes of the raw value.
        case custom(@Sendable (Any) throws -> Data)
    }

    /// How dictionary keys become coding keys. `allKeys` reports the converted keys,
    /// so a `[String: V]` and a struct read the same data the same way.
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
        case clamping(roundingRule: FloatingPointRoundingRule?)
    }
}

// MARK: - Decoder

/// The one object that decodes a whole tree: it pushes and pops the current value and
/// path instead of making a decoder per value. It is also its own single value container.
private final class DecoderImpl: Decoder, SingleValueDecodingContainer {
    let options: KeyValueDecoder
    let userInfo: [CodingUserInfoKey: Any]

    /// The mutable state, pushed and popped for every nested value; `Unchecked`.
    private struct State {
        var path: PathStack
        var value: Any
    }

    private let state: Unchecked<State>

    var path: PathStack {
        @inline(__always) get { state.value.path }
        @inline(__always) _modify { yield &state.value.path }
    }
    var value: Any {
        @inline(__always) get { state.value.value }
        @inline(__always) _modify { yield &state.value.value }
    }

    init(options: KeyValueDecoder, value: Any, path: PathStack = PathStack()) {
        self.options = options
        self.userInfo = options.userInfo.isEmpty ? [:] : options.userInfo.mapValues { $0 as Any }
        state = Unchecked(State(path: path, value: value))
    }

    deinit { state.release() }

    var codingPath: [any CodingKey] { path.codingPath(depth: path.depth) }

    // MARK: Nil

    @inline(__always)
    func isNull(_ value: Any) -> Bool {
        if options.isForUserDefaults {
            guard let value = flattenOptional(value) else { return true }
            return (value as? String) == storedNull
        }
        return options.nilDecodingStrategy.isNull(value)
    }

    /// Undoes one level of the escaping that `StorableOptional` applies in UserDefaults.
    func unescapeStoredNull(_ value: Any) -> Any {
        if let string = value as? String, string.hasPrefix("$$"), isEscapedNullForm(string) {
            return String(string.dropFirst())
        }
        return value
    }

    // MARK: Errors

    func errorPath(_ step: @autoclosure () -> PathStep?) -> [any CodingKey] {
        path.codingPath(depth: path.depth, last: step())
    }

    @inline(never)
    func mismatch(_ expected: String, _ type: Any.Type, _ value: Any, _ step: @autoclosure () -> PathStep?) -> DecodingError {
        if isNull(value) {
            return .nullFound(expected: expected, type: type, at: errorPath(step()))
        }
        return .mismatch(expected: expected, type: type, found: value, at: errorPath(step()))
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let dictionary = try unboxDictionary(value, step: nil, depth: path.depth, extra: [])
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, dictionary: dictionary, depth: path.depth, extra: []))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let array = try unboxArray(value, step: nil)
        return UnkeyedContainer(decoder: self, array: array, depth: path.depth, extra: [])
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { isNull(value) }
    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, step: nil) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, step: nil) }
    func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value, step: nil) }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, step: nil) }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, step: nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, step: nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, step: nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, step: nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, step: nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, step: nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, step: nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, step: nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, step: nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, step: nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: T.self, step: nil) }

    // MARK: Unboxing

    /// Decodes `value` as `T`, one `step` below the current path.
    func unbox<T: Decodable>(_ value: Any, as _: T.Type, step: @autoclosure () -> PathStep?) throws -> T {
        // Metatype checks first: a pointer compare, and no `init(from:)` round trip.
        if T.self == String.self { return try unboxString(value, step: step()) as! T }
        if T.self == Int.self { return try unboxInteger(value, step: step()) as Int as! T }
        if T.self == Double.self { return try unboxDouble(value, step: step()) as! T }
        if T.self == Bool.self { return try unboxBool(value, step: step()) as! T }
        if T.self == PrimitiveArrays.strings, let strings = value as? [String] { return strings as! T }
        if T.self == PrimitiveArrays.ints || T.self == PrimitiveArrays.doubles || T.self == PrimitiveArrays.bools,
           type(of: value) == T.self {
            return value as! T
        }
        if T.self == Date.self { return try unboxDate(value, step: step()) as! T }
        if T.self == URL.self, let url = try unboxURL(value, step: step()) { return url as! T }
        if T.self == Data.self, let data = try unboxData(value, step: step()) { return data as! T }
        if T.self == Decimal.self { return try unboxDecimal(value, step: step()) as! T }
        if options.isForUserDefaults, let optional = T.self as? any StoredOptional.Type {
            return try optional.unboxForUserDefaults(value, decoder: self, step: step()) as! T
        }
        return try decodeWithSelf(value, as: T.self, step: step())
    }

    /// Runs `T.init(from:)` with this decoder one level down.
    func decodeWithSelf<T: Decodable>(_ value: Any, as _: T.Type, step: @autoclosure () -> PathStep?) throws -> T {
        let saved = self.value
        self.value = value
        let pushed = step()
        if let pushed { path.push(pushed) }
        defer {
            if pushed != nil { path.pop() }
            self.value = saved
        }
        if path.depth >= maximumNestingDepth { throw DecodingError.tooDeep(at: errorPath(nil)) }
        return try T(from: self)
    }

    func unboxString(_ value: Any, step: @autoclosure () -> PathStep?) throws -> String {
        if let string = value as? String { return string }
        throw mismatch("String", String.self, value, step())
    }

    func unboxBool(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Bool {
        if type(of: value) == Bool.self { return value as! Bool }
        if case .bool(let bool)? = classifyNumber(value) { return bool }
        throw mismatch("Bool", Bool.self, value, step())
    }

    func unboxInteger<T: FixedWidthInteger>(_ value: Any, step: @autoclosure () -> PathStep?) throws -> T {
        if type(of: value) == T.self { return value as! T }
        guard let number = classifyNumber(value), !number.isBool else {
            throw mismatch("BinaryInteger", T.self, value, step())
        }
        guard let result: T = integer(from: number) else {
            throw DecodingError.notRepresentable(number, as: T.self, at: errorPath(step()))
        }
        return result
    }

    func unboxDouble(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Double {
        if type(of: value) == Double.self { return value as! Double }
        guard let number = classifyNumber(value), !number.isBool else {
            throw mismatch("Double", Double.self, value, step())
        }
        guard let result = number.exactDouble else {
            throw DecodingError.notRepresentable(number, as: Double.self, at: errorPath(step()))
        }
        return result
    }

    func unboxFloat(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Float {
        if type(of: value) == Float.self { return value as! Float }
        guard let number = classifyNumber(value), !number.isBool else {
            throw mismatch("Float", Float.self, value, step())
        }
        guard let result = number.exactFloat else {
            throw DecodingError.notRepresentable(number, as: Float.self, at: errorPath(step()))
        }
        return result
    }

    func unboxDecimal(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Decimal {
        if let number = classifyNumber(value), !number.isBool {
            guard let result = number.exactDecimal else {
                throw DecodingError.notRepresentable(number, as: Decimal.self, at: errorPath(step()))
            }
            return result
        }
        if let string = value as? String {
            // The form UserDefaults storage gives a Decimal.
            guard let decimal = Decimal(strictString: string) else {
                throw DecodingError.corrupted("Invalid decimal string \"\(string)\"", at: errorPath(step()))
            }
            return decimal
        }
        throw mismatch("Decimal", Decimal.self, value, step())
    }

    func unboxDate(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Date {
        switch options.dateDecodingStrategy {
        case .date:
            if let date = value as? Date { return date }
            if let number = classifyNumber(value), !number.isBool, let seconds = number.exactDouble {
                return Date(timeIntervalSinceReferenceDate: seconds)
            }
        case .secondsSince1970:
            if let number = classifyNumber(value), !number.isBool, let seconds = number.exactDouble {
                return Date(timeIntervalSince1970: seconds)
            }
        case .millisecondsSince1970:
            if let number = classifyNumber(value), !number.isBool, let milliseconds = number.exactDouble {
                return Date(timeIntervalSince1970: milliseconds / 1000)
            }
        case .iso8601(let fractional):
            if let string = value as? String {
                let first = Date.ISO8601FormatStyle(includingFractionalSeconds: fractional)
                let second = Date.ISO8601FormatStyle(includingFractionalSeconds: !fractional)
                if let date = (try? first.parse(string)) ?? (try? second.parse(string)) { return date }
                throw DecodingError.corrupted("Expected date string to be ISO8601-formatted", at: errorPath(step()))
            }
            throw mismatch("String", Date.self, value, step())
        case .formatted(let formatter):
            if let string = value as? String {
                if let date = formatter.date(from: string) { return date }
                throw DecodingError.corrupted("Date string does not match format expected by formatter", at: errorPath(step()))
            }
            throw mismatch("String", Date.self, value, step())
        case .custom(let closure):
            return try custom(step()) { try closure(value) }
        }
        throw mismatch("Date", Date.self, value, step())
    }

    /// A URL, or `nil` for the keyed form, which `URL.init(from:)` reads.
    func unboxURL(_ value: Any, step: @autoclosure () -> PathStep?) throws -> URL? {
        switch options.urlDecodingStrategy {
        case .url:
            if let url = value as? URL { return url }
            if let string = value as? String { return try url(from: string, step: step()) }
            if isDictionary(value) { return nil }
        case .absoluteString:
            if let string = value as? String { return try url(from: string, step: step()) }
            throw mismatch("String", URL.self, value, step())
        case .custom(let closure):
            return try custom(step()) { try closure(value) }
        }
        throw mismatch("URL", URL.self, value, step())
    }

    private func url(from string: String, step: @autoclosure () -> PathStep?) throws -> URL {
        guard let url = URL(string: string) else {
            throw DecodingError.corrupted("Invalid URL string \"\(string)\"", at: errorPath(step()))
        }
        return url
    }

    /// Data, or `nil` for an array of bytes, which `Data.init(from:)` reads.
    func unboxData(_ value: Any, step: @autoclosure () -> PathStep?) throws -> Data? {
        switch options.dataDecodingStrategy {
        case .data:
            if let data = value as? Data { return data }
            if let string = value as? String { return try data(fromBase64: string, step: step()) }
            if isArray(value) { return nil }
        case .base64:
            if let string = value as? String { return try data(fromBase64: string, step: step()) }
            throw mismatch("String", Data.self, value, step())
        case .custom(let closure):
            return try custom(step()) { try closure(value) }
        }
        throw mismatch("Data", Data.self, value, step())
    }

    private func data(fromBase64 string: String, step: @autoclosure () -> PathStep?) throws -> Data {
        guard let data = Data(base64Encoded: string) else {
            throw DecodingError.corrupted("Encountered Data is not valid Base64", at: errorPath(step()))
        }
        return data
    }

    /// Runs a `.custom` strategy closure, giving foreign errors the path of the value.
    private func custom<R>(_ step: @autoclosure () -> PathStep?, _ closure: () throws -> R) throws -> R {
        do {
            return try closure()
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError.corrupted("Custom strategy failed", at: errorPath(step()), underlyingError: error)
        }
    }

    func unboxDictionary(_ value: Any, step: @autoclosure () -> PathStep?, depth: Int, extra: [PathStep]) throws -> [String: Any] {
        guard let dictionary = value as? [String: Any] else {
            throw mismatch("Dictionary", [String: Any].self, value, step())
        }
        switch options.keyDecodingStrategy {
        case .useDefaultKeys:
            return dictionary
        case .convertFromSnakeCase:
            var converted: [String: Any] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, element) in dictionary { converted[convertFromSnakeCase(key)] = element }
            return converted
        case .custom(let closure):
            var base = path.codingPath(depth: depth, extra: extra)
            if let step = step() { base.append(step.codingKey) }
            var converted: [String: Any] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                converted[closure(base + [KeyValueCodingKey(stringValue: key)]).stringValue] = element
            }
            return converted
        }
    }

    func unboxArray(_ value: Any, step: @autoclosure () -> PathStep?) throws -> [Any] {
        guard let array = value as? [Any] else {
            throw mismatch("Array", [Any].self, value, step())
        }
        return array
    }

    // MARK: Numbers

    func integer<T: FixedWidthInteger>(from number: NumberValue) -> T? {
        switch number {
        case .bool:
            return nil
        case .signed(let int, _):
            if case .clamping = options.intDecodingStrategy { return T(clamping: int) }
            return T(exactly: int)
        case .unsigned(let uint, _):
            if case .clamping = options.intDecodingStrategy { return T(clamping: uint) }
            return T(exactly: uint)
        case .double(let double):
            return integer(fromDouble: double)
        case .float(let float):
            return integer(fromDouble: Double(float))
        case .decimal(let decimal):
            if case .exact = options.intDecodingStrategy {
                return T(decimal.canonicalString)
            }
            if let whole = T(decimal.canonicalString) { return whole }
            return integer(fromDouble: NSDecimalNumber(decimal: decimal).doubleValue)
        }
    }

    private func integer<T: FixedWidthInteger>(fromDouble double: Double) -> T? {
        switch options.intDecodingStrategy {
        case .exact:
            return T(exactly: double)
        case .rounding(let rule):
            guard double.isFinite else { return nil }
            return T(exactly: double.rounded(rule))
        case .clamping(let rule):
            guard !double.isNaN else { return nil }
            let rounded = rule.map { double.rounded($0) } ?? double
            if rounded <= Double(T.min) { return T.min }
            if rounded >= Double(T.max) { return T.max }
            return T(exactly: rounded)
        }
    }

    // MARK: Keys

    @inline(__always)
    func withExtra<R>(_ extra: [PathStep], _ body: () throws -> R) rethrows -> R {
        if extra.isEmpty { return try body() }
        path.push(extra)
        defer { path.pop(extra.count) }
        return try body()
    }

    /// A decoder of its own for `superDecoder()`, since the caller may keep it.
    func makeSuperDecoder(value: Any, at prefix: [any CodingKey]) -> DecoderImpl {
        DecoderImpl(options: options, value: value, path: PathStack(prefix: prefix))
    }
}

// MARK: - Numbers

extension NumberValue {
    var isBool: Bool {
        if case .bool = self { return true }
        return false
    }

    /// The value as a `Double`, if one represents it exactly. A `Decimal` counts as
    /// exact when the `Double` with the same shortest decimal form reads back equal.
    var exactDouble: Double? {
        switch self {
        case .bool: return nil
        case .signed(let int, _): return Double(exactly: int)
        case .unsigned(let uint, _): return Double(exactly: uint)
        case .double(let double): return double
        case .float(let float): return Double(float)
        case .decimal(let decimal):
            guard let double = Double(decimal.canonicalString),
                  Decimal(strictString: "\(double)") == decimal else { return nil }
            return double
        }
    }

    /// The value as a `Float`, if one represents it exactly, or if the `Float`'s
    /// shortest decimal form names exactly the same `Double` (so `0.1` stored as a
    /// `Double` reads as `Float(0.1)`, and `0.123456789` throws).
    var exactFloat: Float? {
        switch self {
        case .float(let float): return float
        default:
            guard let double = exactDouble else { return nil }
            if double.isNaN { return .nan }
            if let float = Float(exactly: double) { return float }
            let float = Float(double)
            guard float.isFinite, Double("\(float)") == double else { return nil }
            return float
        }
    }

    /// The value as a `Decimal`: integers exactly; binary floating point by its
    /// shortest decimal form (`0.1` becomes `0.1`).
    var exactDecimal: Decimal? {
        switch self {
        case .bool: return nil
        case .signed(let int, _): return Decimal(int)
        case .unsigned(let uint, _): return Decimal(uint)
        case .double(let double):
            guard double.isFinite else { return nil }
            return Decimal(strictString: "\(double)")
        case .float(let float):
            guard float.isFinite else { return nil }
            return Decimal(strictString: "\(float)")
        case .decimal(let decimal): return decimal
        }
    }
}

// MARK: - Optionals in UserDefaults

/// Lets the decoder read each level of a nested optional as `StorableOptional` wrote it.
private protocol StoredOptional {
    static func unboxForUserDefaults(_ value: Any, decoder: DecoderImpl, step: @autoclosure () -> PathStep?) throws -> Self
}

extension Optional: StoredOptional where Wrapped: Decodable {
    fileprivate static func unboxForUserDefaults(_ value: Any, decoder: DecoderImpl, step: @autoclosure () -> PathStep?) throws -> Self {
        if decoder.isNull(value) { return nil }
        return .some(try decoder.unbox(decoder.unescapeStoredNull(value), as: Wrapped.self, step: step()))
    }
}

// MARK: - Containers

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: DecoderImpl
    let dictionary: [String: Any]
    let depth: Int
    let extra: [PathStep]

    var codingPath: [any CodingKey] { decoder.path.codingPath(depth: depth, extra: extra) }

    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { dictionary[key.stringValue] != nil }

    @inline(__always)
    private func value(for key: Key) throws -> Any {
        guard let value = dictionary[key.stringValue] else {
            throw DecodingError.missingKey(key, containerPath: codingPath)
        }
        return value
    }

    @inline(__always)
    private func unbox<R>(_ key: Key, _ body: (Any) throws -> R) throws -> R {
        let value = try value(for: key)
        return try decoder.withExtra(extra) { try body(value) }
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.isNull(try value(for: key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try unbox(key) { try decoder.unboxBool($0, step: .key(key)) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try unbox(key) { try decoder.unboxString($0, step: .key(key)) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try unbox(key) { try decoder.unboxDouble($0, step: .key(key)) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try unbox(key) { try decoder.unboxFloat($0, step: .key(key)) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try unbox(key) { try decoder.unboxInteger($0, step: .key(key)) } }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try unbox(key) { try decoder.unbox($0, as: T.self, step: .key(key)) }
    }

    /// An absent key or a nil value gives `nil`; in UserDefaults a present value goes
    /// through the optional's own form, so `"$$null"` reads as the string `"$null"`.
    private func decodeIfPresent<R>(_ key: Key, _ body: (Any) throws -> R) throws -> R? {
        guard let value = dictionary[key.stringValue], !decoder.isNull(value) else { return nil }
        let unescaped = decoder.options.isForUserDefaults ? decoder.unescapeStoredNull(value) : value
        return try decoder.withExtra(extra) { try body(unescaped) }
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try decodeIfPresent(key) { try decoder.unboxString($0, step: .key(key)) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try decodeIfPresent(key) { try decoder.unboxInteger($0, step: .key(key)) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try decodeIfPresent(key) { try decoder.unboxDouble($0, step: .key(key)) }
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try decodeIfPresent(key) { try decoder.unboxBool($0, step: .key(key)) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decodeIfPresent(key) { try decoder.unbox($0, as: T.self, step: .key(key)) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(for: key)
        let nested = try decoder.withExtra(extra) {
            try decoder.unboxDictionary(value, step: .key(key), depth: depth, extra: extra)
        }
        return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: decoder, dictionary: nested, depth: depth, extra: extra + [.key(key)]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try value(for: key)
        let nested = try decoder.withExtra(extra) { try decoder.unboxArray(value, step: .key(key)) }
        return UnkeyedContainer(decoder: decoder, array: nested, depth: depth, extra: extra + [.key(key)])
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(named: KeyValueCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key)
    }

    private func superDecoder(named key: some CodingKey) throws -> any Decoder {
        // As JSONDecoder does: a missing key gives a decoder of nil, not an error.
        let value = dictionary[key.stringValue] ?? (Optional<Any>.none as Any)
        return decoder.makeSuperDecoder(value: value, at: decoder.path.codingPath(depth: depth, extra: extra, last: .key(key)))
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: DecoderImpl
    let array: [Any]
    let depth: Int
    let extra: [PathStep]
    private(set) var currentIndex = 0

    init(decoder: DecoderImpl, array: [Any], depth: Int, extra: [PathStep]) {
        self.decoder = decoder
        self.array = array
        self.depth = depth
        self.extra = extra
    }

    var codingPath: [any CodingKey] { decoder.path.codingPath(depth: depth, extra: extra) }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    /// Decodes the next element; the index moves on only when that succeeds.
    @inline(__always)
    private mutating func next<R>(_ expected: @autoclosure () -> String, _ type: Any.Type, _ body: (DecoderImpl, Any, PathStep) throws -> R) throws -> R {
        let step = PathStep.index(currentIndex)
        guard currentIndex < array.count else {
            throw DecodingError.endOfArray(expected: expected(), type: type, at: decoder.path.codingPath(depth: depth, extra: extra, last: step))
        }
        let value = array[currentIndex]
        let decoder = self.decoder
        let result = try decoder.withExtra(extra) { try body(decoder, value, step) }
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < array.count else {
            throw DecodingError.endOfArray(expected: "nil", type: Any?.self, at: decoder.path.codingPath(depth: depth, extra: extra, last: .index(currentIndex)))
        }
        if decoder.isNull(array[currentIndex]) {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next("Bool", type) { try $0.unboxBool($1, step: $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try next("String", type) { try $0.unboxString($1, step: $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next("Double", type) { try $0.unboxDouble($1, step: $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next("Float", type) { try $0.unboxFloat($1, step: $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next("Int", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next("Int8", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next("Int16", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next("Int32", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next("Int64", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next("UInt", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next("UInt8", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next("UInt16", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next("UInt32", type) { try $0.unboxInteger($1, step: $2) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next("UInt64", type) { try $0.unboxInteger($1, step: $2) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(String(describing: T.self), T.self) { decoder, value, step in
            try decoder.unbox(value, as: T.self, step: step)
        }
    }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        if try decodeNil() { return nil }
        return try next(String(describing: T.self), T.self) { decoder, value, step in
            let unescaped = decoder.options.isForUserDefaults ? decoder.unescapeStoredNull(value) : value
            return try decoder.unbox(unescaped, as: T.self, step: step)
        }
    }

    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        if try decodeNil() { return nil }
        return try next("String", type) { decoder, value, step in
            let unescaped = decoder.options.isForUserDefaults ? decoder.unescapeStoredNull(value) : value
            return try decoder.unboxString(unescaped, step: step)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let depth = self.depth, extra = self.extra
        let nested = try next("Dictionary", [String: Any].self) { decoder, value, step in
            try decoder.unboxDictionary(value, step: step, depth: depth, extra: extra)
        }
        return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: decoder, dictionary: nested, depth: depth, extra: extra + [.index(currentIndex - 1)]))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let nested = try next("Array", [Any].self) { decoder, value, step in try decoder.unboxArray(value, step: step) }
        return UnkeyedContainer(decoder: decoder, array: nested, depth: depth, extra: extra + [.index(currentIndex - 1)])
    }

    mutating func superDecoder() throws -> any Decoder {
        let depth = self.depth, extra = self.extra
        return try next("Decoder", (any Decoder).self) { decoder, value, step in
            decoder.makeSuperDecoder(value: value, at: decoder.path.codingPath(depth: depth, extra: extra, last: step))
        }
    }
}
