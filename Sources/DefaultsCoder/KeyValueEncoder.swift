//
//  KeyValueEncoder.swift
//  DefaultsCoder
//

import Foundation

/// Encodes `Encodable` values straight into plist-native `Any` trees: `[String: Any]`,
/// `[Any]`, `String`, numbers, `Bool`, `Date`, `Data`, `URL` — with no `Data` detour.
///
/// ```swift
/// struct User: Codable { var id: Int; var name: String }
///
/// // ["id": 1, "name": "Herbert"]
/// let any = try KeyValueEncoder().encode(User(id: 1, name: "Herbert"))
///
/// // ["fish", "chips"]
/// let list = try KeyValueEncoder().encode(["fish", "chips"])
/// ```
///
/// Structs and classes become `[String: Any]`, collections `[Any]`, `RawRepresentable`
/// enums their raw value, and top-level primitives stay primitives. Integers keep their
/// width (`Int8` stays `Int8`). Every strategy is a plain value, so an encoder can be
/// configured once and shared across tasks.
public struct KeyValueEncoder: Sendable {

    /// Values handed to every `encode(to:)` as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// How `nil` is written. Default: `.default`, which keeps `Optional<Any>.none`.
    public var nilEncodingStrategy: NilEncodingStrategy = .default

    /// How `Date` values are written. Default: `.date`, the native `Date`.
    public var dateEncodingStrategy: DateEncodingStrategy = .date

    /// How `URL` values are written. Default: `.url`, the native `URL`.
    public var urlEncodingStrategy: URLEncodingStrategy = .url

    /// How `Data` values are written. Default: `.data`, the native `Data`.
    public var dataEncodingStrategy: DataEncodingStrategy = .data

    /// How coding keys become dictionary keys. Applied to every keyed write: values,
    /// nils, nested containers and super encoders alike. Default: `.useDefaultKeys`.
    public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys

    /// Set by the `UserDefaults` extension: write only what a property list on this
    /// platform stores and reads back unchanged (see `UserDefaults+Codable.swift`).
    var isForUserDefaults = false

    /// Creates an encoder with the default strategies.
    public init() {}

    /// Encodes a value into a plist-native `Any` tree.
    ///
    /// - Parameter value: The value to encode: a primitive, an optional, a collection,
    ///   a struct, a class or an enum.
    /// - Returns: The tree, or `nil` when `value` encodes as `nil` and the nil strategy
    ///   has no placeholder.
    /// - Throws: `EncodingError.invalidValue`, naming the path, when a strategy or the
    ///   value's own `encode(to:)` fails.
    public func encode<T: Encodable>(_ value: T) throws -> Any? {
        guard let result = try EncoderImpl(options: self).box(value, step: nil) else {
            return nilEncodingStrategy.placeholderValue
        }
        return result
    }

    /// Encodes `value`, returning `nil` for a `nil` whatever the nil strategy.
    func encodeAllowingNil<T: Encodable>(_ value: T) throws -> Any? {
        try EncoderImpl(options: self).box(value, step: nil)
    }
}

// MARK: - Strategies

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
        /// its absolute string; or, when it has a base URL, the keyed form `URL`'s own
        /// `Codable` writes, so that the base survives.)
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

// MARK: - Encoder

/// What the value being encoded has written so far.
private enum Slot {
    case empty
    case value(Any?)
    case keyed(KeyedStorage)
    case unkeyed(UnkeyedStorage)
}

/// A value that is complete only when the encoding of its parent ends: a nested
/// container or a super encoder. Stored in its parent and flattened once.
private protocol DeferredValue: AnyObject {
    func resolve(_ encoder: EncoderImpl) throws -> Any?
}

/// The contents of a keyed container. Reused from a pool once flattened.
private final class KeyedStorage: DeferredValue {
    private let contents = Unchecked<[String: Any]>([:])
    var hasDeferred = false

    deinit { contents.release() }

    /// Written once per key, so kept `Unchecked`.
    var dictionary: [String: Any] {
        @inline(__always) get { contents.value }
        @inline(__always) _modify { yield &contents.value }
    }
    /// The size of the last dictionary built here: values of one type tend to come in a
    /// row (`[User]`), so reserving it saves the growth steps.
    var capacityHint = 0

    func finish(_ encoder: EncoderImpl) throws -> [String: Any] {
        var result = dictionary
        dictionary = [:]
        if hasDeferred {
            hasDeferred = false
            for (key, value) in result {
                guard let deferred = value as? any DeferredValue else { continue }
                if let resolved = try deferred.resolve(encoder) {
                    result[key] = resolved
                } else if let null = encoder.nullRepresentation {
                    result[key] = null
                } else {
                    result[key] = nil
                }
            }
        }
        capacityHint = result.count
        return result
    }

    func resolve(_ encoder: EncoderImpl) throws -> Any? { try finish(encoder) }
}

/// The contents of an unkeyed container. Reused from a pool once flattened.
private final class UnkeyedStorage: DeferredValue {
    private let contents = Unchecked<[Any]>([])
    var hasDeferred = false

    deinit { contents.release() }

    /// Written once per element, so kept `Unchecked`.
    var array: [Any] {
        @inline(__always) get { contents.value }
        @inline(__always) _modify { yield &contents.value }
    }
    /// How many values were encoded, including any that a nil strategy removed.
    var count = 0
    var capacityHint = 0

    func finish(_ encoder: EncoderImpl) throws -> [Any] {
        var result = array
        array = []
        count = 0
        if hasDeferred {
            hasDeferred = false
            var flattened: [Any] = []
            flattened.reserveCapacity(result.count)
            for value in result {
                guard let deferred = value as? any DeferredValue else {
                    flattened.append(value)
                    continue
                }
                if let resolved = try deferred.resolve(encoder) {
                    flattened.append(resolved)
                } else if let null = encoder.nullRepresentation {
                    flattened.append(null)
                }
            }
            result = flattened
        }
        capacityHint = result.count
        return result
    }

    func resolve(_ encoder: EncoderImpl) throws -> Any? { try finish(encoder) }
}

/// The one object that encodes a whole tree: it pushes and pops the path and the slot of
/// the current value instead of making an encoder per value.
private final class EncoderImpl: Encoder, SingleValueEncodingContainer {
    let options: KeyValueEncoder
    let userInfo: [CodingUserInfoKey: Any]

    /// The mutable state, pushed and popped for every nested value; `Unchecked`.
    private struct State {
        var path: PathStack
        var slot: Slot = .empty
        var deferredError: EncodingError?
        var keyedPool: [KeyedStorage] = []
        var unkeyedPool: [UnkeyedStorage] = []
    }

    private let state: Unchecked<State>

    var path: PathStack {
        @inline(__always) get { state.value.path }
        @inline(__always) _modify { yield &state.value.path }
    }
    var slot: Slot {
        @inline(__always) get { state.value.slot }
        @inline(__always) _modify { yield &state.value.slot }
    }
    /// An error found where the protocol gives no way to throw (a second container
    /// requested for one value); thrown as soon as that value's `encode(to:)` returns.
    var deferredError: EncodingError? {
        @inline(__always) get { state.value.deferredError }
        @inline(__always) _modify { yield &state.value.deferredError }
    }
    private var keyedPool: [KeyedStorage] {
        @inline(__always) get { state.value.keyedPool }
        @inline(__always) _modify { yield &state.value.keyedPool }
    }
    private var unkeyedPool: [UnkeyedStorage] {
        @inline(__always) get { state.value.unkeyedPool }
        @inline(__always) _modify { yield &state.value.unkeyedPool }
    }

    init(options: KeyValueEncoder, path: PathStack = PathStack()) {
        self.options = options
        self.userInfo = options.userInfo.isEmpty ? [:] : options.userInfo.mapValues { $0 as Any }
        state = Unchecked(State(path: path))
    }

    deinit { state.release() }

    var codingPath: [any CodingKey] { path.codingPath(depth: path.depth) }

    /// The value that stands for `nil` in a container, or `nil` to leave it out.
    var nullRepresentation: Any? {
        if options.isForUserDefaults { return storedNull }
        if case .default = options.nilEncodingStrategy { return Optional<Any>.none as Any }
        return options.nilEncodingStrategy.placeholderValue
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: KeyedStorage
        switch slot {
        case .keyed(let existing):
            storage = existing
        case .empty:
            storage = keyedPool.popLast() ?? KeyedStorage()
            if storage.capacityHint > 0 { storage.dictionary.reserveCapacity(storage.capacityHint) }
            slot = .keyed(storage)
        case .value, .unkeyed:
            storage = KeyedStorage()
            misuse("a keyed container was requested after another container was used")
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, storage: storage, depth: path.depth, extra: []))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: UnkeyedStorage
        switch slot {
        case .unkeyed(let existing):
            storage = existing
        case .empty:
            storage = unkeyedPool.popLast() ?? UnkeyedStorage()
            if storage.capacityHint > 0 { storage.array.reserveCapacity(storage.capacityHint) }
            slot = .unkeyed(storage)
        case .value, .keyed:
            storage = UnkeyedStorage()
            misuse("an unkeyed container was requested after another container was used")
        }
        return UnkeyedContainer(encoder: self, storage: storage, depth: path.depth, extra: [])
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func misuse(_ message: String) {
        if deferredError == nil {
            deferredError = .invalid(NSNullPlaceholder(), "Invalid use of Encoder: \(message)", at: codingPath)
        }
    }

    // MARK: SingleValueEncodingContainer

    private func setSingle(_ value: Any?) {
        guard case .empty = slot else {
            misuse("a single value was encoded after another value or container")
            return
        }
        slot = .value(value)
    }

    func encodeNil() throws { setSingle(nil) }
    func encode(_ value: Bool) throws { setSingle(value) }
    func encode(_ value: String) throws { setSingle(value) }
    func encode(_ value: Double) throws { setSingle(value) }
    func encode(_ value: Float) throws { setSingle(wrap(value)) }
    func encode(_ value: Int) throws { setSingle(value) }
    func encode(_ value: Int8) throws { setSingle(wrap(value)) }
    func encode(_ value: Int16) throws { setSingle(wrap(value)) }
    func encode(_ value: Int32) throws { setSingle(wrap(value)) }
    func encode(_ value: Int64) throws { setSingle(wrap(value)) }
    func encode(_ value: UInt) throws { setSingle(wrap(value)) }
    func encode(_ value: UInt8) throws { setSingle(wrap(value)) }
    func encode(_ value: UInt16) throws { setSingle(wrap(value)) }
    func encode(_ value: UInt32) throws { setSingle(wrap(value)) }
    func encode(_ value: UInt64) throws { setSingle(wrap(value)) }
    func encode<T: Encodable>(_ value: T) throws { setSingle(try box(value, step: nil)) }

    // MARK: Primitives

    // In the Any tree integers keep their width; in UserDefaults they become `Int`
    // (or `UInt64` above `Int64.max`), the forms a property list reads back.

    @inline(__always) func wrap(_ value: Float) -> Any { options.isForUserDefaults ? Double(value) : value }
    @inline(__always) func wrap(_ value: Int8) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: Int16) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: Int32) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: Int64) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: UInt8) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: UInt16) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: UInt32) -> Any { options.isForUserDefaults ? Int(value) : value }
    @inline(__always) func wrap(_ value: UInt) -> Any { options.isForUserDefaults ? wrap(UInt64(value)) : value }
    @inline(__always) func wrap(_ value: UInt64) -> Any {
        guard options.isForUserDefaults, value <= UInt64(Int64.max) else { return value }
        return Int(value)
    }

    // MARK: Boxing

    /// Encodes `value` one step below the current path and returns its tree, or `nil`
    /// for an encoded `nil`.
    func box<T: Encodable>(_ value: T, step: @autoclosure () -> PathStep?) throws -> Any? {
        // Metatype checks first: they cost a pointer compare and skip `encode(to:)`.
        if T.self == String.self { return value as! String }
        if T.self == Int.self { return value as! Int }
        if T.self == Double.self { return value as! Double }
        if T.self == Bool.self { return value as! Bool }
        if T.self == PrimitiveArrays.strings || T.self == PrimitiveArrays.ints
            || T.self == PrimitiveArrays.doubles || T.self == PrimitiveArrays.bools {
            // Homogeneous arrays of plist primitives are already a valid tree.
            return value
        }
        if T.self == Date.self { return try boxDate(value as! Date, step: step()) }
        if T.self == URL.self { return try boxURL(value as! URL, step: step()) }
        if T.self == Data.self { return try boxData(value as! Data, step: step()) }
        if T.self == Decimal.self { return try boxDecimal(value as! Decimal, step: step()) }
        if options.isForUserDefaults, let optional = value as? any StorableOptional {
            return try optional.boxForUserDefaults(self, step: step())
        }
        return try boxEncodable(value, step: step())
    }

    /// Runs `value.encode(to:)` with this encoder one level down, and flattens what it wrote.
    private func boxEncodable<T: Encodable>(_ value: T, step: @autoclosure () -> PathStep?) throws -> Any? {
        let saved = slot
        slot = .empty
        let pushed = step()
        if let pushed { path.push(pushed) }
        defer {
            if pushed != nil { path.pop() }
            slot = saved
        }
        if path.depth >= maximumNestingDepth { throw EncodingError.tooDeep(value, at: pathForError(nil)) }
        try value.encode(to: self)
        if let error = deferredError {
            deferredError = nil
            throw error
        }
        let written = slot
        slot = .empty
        switch consume written {
        case .empty:
            // As JSONEncoder does: a value that writes nothing is an empty dictionary.
            return [String: Any]()
        case .value(let single):
            return single
        case .keyed(var storage):
            let result = try storage.finish(self)
            if isKnownUniquelyReferenced(&storage) { keyedPool.append(storage) }
            return result
        case .unkeyed(var storage):
            let result = try storage.finish(self)
            if isKnownUniquelyReferenced(&storage) { unkeyedPool.append(storage) }
            return result
        }
    }

    /// The path of a value that is about to be written `step` below the current one.
    func pathForError(_ step: @autoclosure () -> PathStep?) -> [any CodingKey] {
        path.codingPath(depth: path.depth, last: step())
    }

    private func boxDate(_ date: Date, step: @autoclosure () -> PathStep?) throws -> Any? {
        switch options.dateEncodingStrategy {
        case .date:
            return options.isForUserDefaults ? storableDate(date) : date
        case .secondsSince1970:
            return date.timeIntervalSince1970
        case .millisecondsSince1970:
            return date.timeIntervalSince1970 * 1000
        case .iso8601(let fractional):
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: fractional))
        case .formatted(let formatter):
            return formatter.string(from: date)
        case .custom(let closure):
            return try custom(step()) { try closure(date) }
        }
    }

    private func boxURL(_ url: URL, step: @autoclosure () -> PathStep?) throws -> Any? {
        switch options.urlEncodingStrategy {
        case .url:
            return options.isForUserDefaults ? storableURL(url) : url
        case .absoluteString:
            return url.absoluteString
        case .custom(let closure):
            return try custom(step()) { try closure(url) }
        }
    }

    private func boxData(_ data: Data, step: @autoclosure () -> PathStep?) throws -> Any? {
        switch options.dataEncodingStrategy {
        case .data:
            return data
        case .base64:
            return data.base64EncodedString()
        case .custom(let closure):
            return try custom(step()) { try closure(data) }
        }
    }

    private func boxDecimal(_ decimal: Decimal, step: @autoclosure () -> PathStep?) throws -> Any? {
        guard options.isForUserDefaults else { return decimal }
        // A property list has no decimal type and Foundation on Linux stores a Decimal
        // as an integer (0.5 becomes 0): keep its exact text instead.
        let text = decimal.canonicalString
        guard !decimal.isNaN, Decimal(strictString: text) == decimal else {
            throw EncodingError.invalid(decimal, "Cannot store Decimal \(text) in UserDefaults", at: pathForError(step()))
        }
        return text
    }

    /// Runs a `.custom` strategy closure with the path of the value it encodes, and in
    /// UserDefaults checks that it returned something a property list can hold.
    private func custom(_ step: @autoclosure () -> PathStep?, _ closure: () throws -> Any) throws -> Any {
        let value: Any
        do {
            value = try closure()
        } catch let error as EncodingError {
            throw error
        } catch {
            throw EncodingError.invalid(NSNullPlaceholder(), "Custom strategy failed", at: pathForError(step()), underlyingError: error)
        }
        guard options.isForUserDefaults else { return value }
        return try storable(value, at: pathForError(step()))
    }

    // MARK: UserDefaults forms

    /// A date as this platform's property list keeps it.
    ///
    /// On Apple platforms preferences are binary plists, which keep a `Date` to the
    /// bit. Foundation on Linux writes XML, whose `<date>` keeps whole seconds only;
    /// there a date with a fraction is written as its `timeIntervalSinceReferenceDate`
    /// (what `Date`'s own `Codable` writes), which the `.date` decoding strategy reads.
    func storableDate(_ date: Date) -> Any {
        #if canImport(Darwin)
        return date
        #else
        let seconds = date.timeIntervalSinceReferenceDate
        if seconds.rounded(.down) == seconds, abs(seconds) < 60_000_000_000 {
            return date
        }
        return seconds
        #endif
    }

    /// A URL as a string, or with a base as `{relative, base}` like `URL`'s own `Codable`.
    func storableURL(_ url: URL) -> Any {
        guard let base = url.baseURL else { return url.absoluteString }
        return ["relative": url.relativeString, "base": storableURL(base)] as [String: Any]
    }

    /// Checks that a value made by a `.custom` strategy is one a property list holds,
    /// converting numbers and URLs to the forms `boxForUserDefaults` writes.
    func storable(_ value: Any, at path: [any CodingKey]) throws -> Any {
        guard let value = flattenOptional(value) else {
            throw EncodingError.invalid(NSNullPlaceholder(), "Cannot store nil in UserDefaults", at: path)
        }
        if value is String { return value }
        if let number = classifyNumber(value) {
            switch number {
            case .bool(let bool): return bool
            case .signed(let int, _): return Int(int)
            case .unsigned(let uint, _): return wrap(uint)
            case .double(let double): return double
            case .float(let float): return Double(float)
            case .decimal(let decimal): return try boxDecimal(decimal, step: nil)!
            }
        }
        if let date = value as? Date { return storableDate(date) }
        if let data = value as? Data { return data }
        if let url = value as? URL { return storableURL(url) }
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                result[key] = try storable(element, at: path + [KeyValueCodingKey(stringValue: key)])
            }
            return result
        }
        if let array = value as? [Any] {
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try storable(element, at: path + [IndexCodingKey(index)]))
            }
            return result
        }
        throw EncodingError.invalid(value, "Cannot store \(describeType(of: value)) in UserDefaults", at: path)
    }

    // MARK: Keys

    /// The dictionary key for `key`: the one place the key strategy is applied.
    @inline(__always)
    func keyString(_ key: some CodingKey, depth: Int, extra: [PathStep]) -> String {
        switch options.keyEncodingStrategy {
        case .useDefaultKeys:
            return key.stringValue
        case .convertToSnakeCase:
            return convertToSnakeCase(key.stringValue)
        case .custom(let closure):
            return closure(path.codingPath(depth: depth, extra: extra, last: .key(key))).stringValue
        }
    }

    /// Runs `body` with the path set to a container's own path, for containers made by
    /// `nestedContainer`, whose path goes beyond the stack.
    @inline(__always)
    func withExtra<R>(_ extra: [PathStep], _ body: () throws -> R) rethrows -> R {
        if extra.isEmpty { return try body() }
        path.push(extra)
        defer { path.pop(extra.count) }
        return try body()
    }

    /// A super encoder: its own object, since the caller may keep it after the call.
    func makeSuperEncoder(at prefix: [any CodingKey]) -> SuperEncoder {
        SuperEncoder(encoder: EncoderImpl(options: options, path: PathStack(prefix: prefix)))
    }
}

/// An encoder handed out by `superEncoder()`; what it writes is placed in its parent
/// when the parent is flattened.
private final class SuperEncoder: DeferredValue {
    let encoder: EncoderImpl
    init(encoder: EncoderImpl) { self.encoder = encoder }

    func resolve(_ parent: EncoderImpl) throws -> Any? {
        if let error = encoder.deferredError { throw error }
        switch encoder.slot {
        case .empty: return [String: Any]()
        case .value(let value): return value
        case .keyed(let storage): return try storage.finish(encoder)
        case .unkeyed(let storage): return try storage.finish(encoder)
        }
    }
}

// MARK: - Optionals in UserDefaults

/// Lets the encoder give each level of a nested optional its own form in UserDefaults.
private protocol StorableOptional {
    func boxForUserDefaults(_ encoder: EncoderImpl, step: @autoclosure () -> PathStep?) throws -> Any?
}

extension Optional: StorableOptional where Wrapped: Encodable {
    /// `nil` is written as `"$null"`; a value inside an optional that would itself read
    /// as `"$null"` (the string `"$null"`, or an inner `nil`) gets one more leading `$`.
    /// So `[String?]` keeps `"$null"` and `nil` apart, and `Int??` keeps both nils.
    fileprivate func boxForUserDefaults(_ encoder: EncoderImpl, step: @autoclosure () -> PathStep?) throws -> Any? {
        guard let wrapped = self else { return nil }
        guard let inner = try encoder.box(wrapped, step: step()) else { return "$" + storedNull }
        if let string = inner as? String, isEscapedNullForm(string) { return "$" + string }
        return inner
    }
}

// MARK: - Containers

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: EncoderImpl
    let storage: KeyedStorage
    let depth: Int
    /// Keys beyond the encoder's path stack, for nested containers.
    let extra: [PathStep]

    var codingPath: [any CodingKey] { encoder.path.codingPath(depth: depth, extra: extra) }

    @inline(__always) private func key(_ key: Key) -> String {
        encoder.keyString(key, depth: depth, extra: extra)
    }

    @inline(__always) private func write(_ value: Any?, forKey key: Key) {
        let name = self.key(key)
        if let value {
            storage.dictionary[name] = value
        } else if let null = encoder.nullRepresentation {
            storage.dictionary[name] = null
        }
    }

    mutating func encodeNil(forKey key: Key) throws { write(nil, forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.dictionary[self.key(key)] = value }
    mutating func encode(_ value: String, forKey key: Key) throws { storage.dictionary[self.key(key)] = value }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.dictionary[self.key(key)] = value }
    mutating func encode(_ value: Float, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.dictionary[self.key(key)] = value }
    mutating func encode(_ value: Int8, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { storage.dictionary[self.key(key)] = encoder.wrap(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = self.key(key)
        let boxed = try encoder.withExtra(extra) { try encoder.box(value, step: .key(key)) }
        if let boxed {
            storage.dictionary[name] = boxed
        } else if let null = encoder.nullRepresentation {
            storage.dictionary[name] = null
        }
    }

    // An absent optional leaves the key out. In UserDefaults a present one goes through
    // the optional's own form, so that `String?` holding "$null" is told from nil.
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        guard let value else { return }
        if encoder.options.isForUserDefaults {
            try encode(Optional(value), forKey: key)
        } else {
            storage.dictionary[self.key(key)] = value
        }
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return }
        if encoder.options.isForUserDefaults {
            try encode(Optional(value), forKey: key)
        } else {
            try encode(value, forKey: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = KeyedStorage()
        storage.dictionary[self.key(key)] = nested
        storage.hasDeferred = true
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, storage: nested, depth: depth, extra: extra + [.key(key)]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = UnkeyedStorage()
        storage.dictionary[self.key(key)] = nested
        storage.hasDeferred = true
        return UnkeyedContainer(encoder: encoder, storage: nested, depth: depth, extra: extra + [.key(key)])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: KeyValueCodingKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let name = encoder.keyString(key, depth: depth, extra: extra)
        let superEncoder = encoder.makeSuperEncoder(at: encoder.path.codingPath(depth: depth, extra: extra, last: .key(key)))
        storage.dictionary[name] = superEncoder
        storage.hasDeferred = true
        return superEncoder.encoder
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: EncoderImpl
    let storage: UnkeyedStorage
    let depth: Int
    let extra: [PathStep]

    var codingPath: [any CodingKey] { encoder.path.codingPath(depth: depth, extra: extra) }
    var count: Int { storage.count }

    @inline(__always) private func append(_ value: Any) {
        storage.array.append(value)
        storage.count += 1
    }

    mutating func encodeNil() throws {
        storage.count += 1
        if let null = encoder.nullRepresentation { storage.array.append(null) }
    }

    mutating func encode(_ value: Bool) throws { append(value) }
    mutating func encode(_ value: String) throws { append(value) }
    mutating func encode(_ value: Double) throws { append(value) }
    mutating func encode(_ value: Float) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: Int) throws { append(value) }
    mutating func encode(_ value: Int8) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: Int16) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: Int32) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: Int64) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: UInt) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: UInt8) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: UInt16) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: UInt32) throws { append(encoder.wrap(value)) }
    mutating func encode(_ value: UInt64) throws { append(encoder.wrap(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = storage.count
        let boxed = try encoder.withExtra(extra) { try encoder.box(value, step: .index(index)) }
        if let boxed {
            append(boxed)
        } else {
            try encodeNil()
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = KeyedStorage()
        let index = storage.count
        append(nested)
        storage.hasDeferred = true
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, storage: nested, depth: depth, extra: extra + [.index(index)]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = UnkeyedStorage()
        let index = storage.count
        append(nested)
        storage.hasDeferred = true
        return UnkeyedContainer(encoder: encoder, storage: nested, depth: depth, extra: extra + [.index(index)])
    }

    mutating func superEncoder() -> any Encoder {
        let index = storage.count
        let superEncoder = encoder.makeSuperEncoder(at: encoder.path.codingPath(depth: depth, extra: extra, last: .index(index)))
        append(superEncoder)
        storage.hasDeferred = true
        return superEncoder.encoder
    }
}
