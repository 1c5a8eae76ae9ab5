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

    /// How `URL` values are read. Default: `.url`.
    public var urlDecodingStrategy: URLDecodingStrategy = .url

    /// How `Data` values are read. Default: `.data`.
    public var dataDecodingStrategy: DataDecodingStrategy = .data

    /// How dictionary keys become coding keys. Default: `.useDefaultKeys`.
    public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys

    /// How numbers become integers. Default: `.exact`.
    public var intDecodingStrategy: IntDecodingStrategy = .exact

    /// Creates a decoder with the default strategies.
    public init() {}

    /// Decodes a value of the given type from a plist-native `Any` tree.
    ///
    /// The type is used as given: a metatype held in a variable of a superclass type
    /// (`let type: Person.Type = Employee.self`) decodes an `Employee`, as with
    /// `JSONDecoder`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The tree: a dictionary, an array, a primitive or `nil`.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` with the path of the value that failed: `typeMismatch`,
    ///   `valueNotFound`, `keyNotFound` or `dataCorrupted`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from value: Any) throws -> T {
        try decode(type, from: value, form: PlainDecodingForm(nilStrategy: nilDecodingStrategy))
    }

    /// Decodes `type` from `value` read in `form`.
    package func decode<T: Decodable>(_ type: T.Type, from value: Any, form: any DecodingForm) throws -> T {
        // An `Any?` passed as `Any` arrives wrapped: unwrap it once here so the fast
        // paths below see the tree itself.
        let value = flattenOptional(value) ?? value
        let decoder = DecoderImpl(options: self, form: form, levels: PathLevels(), value: value, parent: nil, step: nil, reusesKeyedLevels: true)
        defer { decoder.releaseKeyedLevels() }
        return try decoder.unbox(value, as: type, parent: nil, step: nil)
    }
}

// MARK: - Decoder

/// What a value read as an `Optional` holds.
package enum UnwrappedValue {
    /// `nil`.
    case none
    /// A value: the tree of the wrapped value.
    case some(Any)
    /// A `nil` that a non-optional value wrote (a JSON-like `.null`): the wrapped type
    /// may read a value of its own from it; if it cannot, the optional is `nil`.
    case null(Any)
}

/// The one object that decodes a whole tree: it saves and restores the current value and
/// its path around each nested value instead of making a decoder per value. It is also
/// its own single value container.
private final class DecoderImpl: Decoder, SingleValueDecodingContainer {
    let options: KeyValueDecoder
    let form: any DecodingForm
    /// Converted when a value's `init(from:)` first asks for it, not for every coder.
    private(set) lazy var userInfo: [CodingUserInfoKey: Any] = codingUserInfo(options.userInfo)
    /// Whether the key strategy changes keys (and so must leave `[String: V]` keys alone).
    /// Computed, not stored: with a stored `Bool` here, Swift 6.3.1's optimizer emitted
    /// invalid code for this module in release builds (an LLVM verifier failure).
    var convertsKeys: Bool {
        if case .useDefaultKeys = options.keyDecodingStrategy { return false }
        return true
    }

    // Written for every nested value, by the one thread running the decode only, so
    // runtime exclusivity checks are switched off.

    /// The node of the container that holds the value being decoded.
    @exclusivity(unchecked) private var parent: CodingPathNode?
    /// The value's step below `parent`, or `nil` when it is the same value.
    @exclusivity(unchecked) private var step: PathStep?
    @exclusivity(unchecked) private var value: Any
    @exclusivity(unchecked) private var nesting = NestingGuard()
    @exclusivity(unchecked) private var modelTypes = ModelTypes()
    /// The path of the value being decoded; a super decoder starts from a copy.
    @exclusivity(unchecked) var levels: PathLevels
    /// The keyed containers' objects by depth (from depth 1), for the next container at
    /// the same depth. Each holds this decoder: `releaseKeyedLevels()` ends the cycle
    /// when the decode ends.
    @exclusivity(unchecked) private var keyedLevels: [KeyedLevel?] = []
    /// Whether this decoder keeps `keyedLevels`: a super decoder, whose end nobody sees,
    /// makes a new object for each container instead.
    private let reusesKeyedLevels: Bool

    init(options: KeyValueDecoder, form: any DecodingForm, levels: PathLevels, value: Any, parent: CodingPathNode?, step: PathStep?, reusesKeyedLevels: Bool) {
        self.options = options
        self.reusesKeyedLevels = reusesKeyedLevels
        self.form = form
        self.levels = levels
        self.value = value
        self.parent = parent
        self.step = step
    }

    var codingPath: [any CodingKey] { levels.codingPath(of: parent, then: step) }

    @inline(never)
    func mismatch(_ type: Any.Type, expected: Any.Type? = nil, _ value: Any, _ node: CodingPathNode?, _ step: PathStep?) -> DecodingError {
        .mismatch(type, expected: expected, found: form.describe(value), in: levels, at: node, step)
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let node = levels.settle(&step, below: &parent)
        try checkContainerDepth(node)
        let dictionary = try keyedEntries(value, parent: node, step: nil, node: node)
        return KeyedDecodingContainer(KeyedContainer<Key>(keyedLevel(dictionary, node: node)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let node = levels.settle(&step, below: &parent)
        try checkContainerDepth(node)
        let array = try unboxArray(value, parent: node, step: nil)
        return UnkeyedContainer(decoder: self, array: array, node: node)
    }

    /// The object for a keyed container of `dictionary` at `node`: the one the last
    /// container at that depth had, when no container holds it any more (one kept past
    /// its value, or one still reading at that depth, keeps its own), else a new one.
    func keyedLevel(_ dictionary: [String: Any], node: CodingPathNode?) -> KeyedLevel {
        // The root value's containers (no node) are made once per decode: nothing to
        // keep them for, and keeping them would cost the array an allocation.
        guard reusesKeyedLevels, let node else { return KeyedLevel(decoder: self, dictionary: dictionary, node: node) }
        let index = node.depth - 1
        while keyedLevels.count <= index { keyedLevels.append(nil) }
        if isKnownUniquelyReferenced(&keyedLevels[index]), let level = keyedLevels[index] {
            level.dictionary = dictionary
            level.node = node
            return level
        }
        let level = KeyedLevel(decoder: self, dictionary: dictionary, node: node)
        keyedLevels[index] = level
        return level
    }

    /// Drops the kept keyed containers' objects, which hold this decoder.
    func releaseKeyedLevels() {
        keyedLevels = []
    }

    /// Throws when a container for the value at `node` would sit deeper than data may nest.
    func checkContainerDepth(_ node: CodingPathNode?) throws {
        if let node, node.depth >= NestingGuard.maximumContainers {
            throw DecodingError.tooDeep(.containers, at: levels.codingPath(of: node))
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { form.isNull(value) }
    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, parent: parent, step: step) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, parent: parent, step: step) }
    func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value, parent: parent, step: step) }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, parent: parent, step: step) }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, parent: parent, step: step) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, parent: parent, step: step) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try unboxInteger(value, parent: parent, step: step) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try unboxInteger(value, parent: parent, step: step) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type, parent: parent, step: step) }

    // MARK: Unboxing

    /// Decodes `value`, which sits `step` below the container at `parent`, as `type`.
    func unbox<T: Decodable>(_ value: Any, as type: T.Type, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> T {
        // Metatype checks first: a pointer compare, and no `init(from:)` round trip.
        if T.self == String.self { return sameType(try unboxString(value, parent: parent, step: step()), as: T.self) }
        if T.self == Int.self { return sameType(try unboxInteger(value, parent: parent, step: step()) as Int, as: T.self) }
        if T.self == Double.self { return sameType(try unboxDouble(value, parent: parent, step: step()), as: T.self) }
        if T.self == Bool.self { return sameType(try unboxBool(value, parent: parent, step: step()), as: T.self) }
        if modelTypes.contains(T.self) { return try decodeWithSelf(value, as: type, parent: parent, step: step()) }
        // The other leaves before the collections: their metatypes need no look-up.
        if T.self == Date.self { return sameType(try unboxDate(value, parent: parent, step: step()), as: T.self) }
        if T.self == URL.self, let url = try unboxURL(value, parent: parent, step: step()) { return sameType(url, as: T.self) }
        if T.self == Data.self, let data = try unboxData(value, parent: parent, step: step()) { return sameType(data, as: T.self) }
        if T.self == Decimal.self { return sameType(try unboxDecimal(value, parent: parent, step: step()), as: T.self) }
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        // `Float16.init(from:)` rounds the `Float` it reads: read here, exactly.
        if T.self == Float16.self {
            return sameType(try unboxNumber(value, parent: parent, step: step()) { $0.exactFloat16 }, as: T.self)
        }
        #endif
        // Arrays and String-keyed dictionaries of primitives that are already of the
        // exact Swift type pass through whole (no NSNumber bridging: a Bool must not
        // become a number).
        if (parent?.depth ?? 0) + 1 < NestingGuard.maximumContainers {
            if T.self == PrimitiveArrays.strings, let strings = form.strings(value) { return sameType(strings, as: T.self) }
            if T.self == PrimitiveArrays.ints || T.self == PrimitiveArrays.doubles || T.self == PrimitiveArrays.bools, Swift.type(of: value) == T.self {
                // `as!`, not `exactCast`: a `T?` in this unspecialized function would look
                // up `Optional<T>`'s metadata at every call, whatever `T` is.
                return value as! T
            }
            if T.self == PrimitiveDictionaries.ints || T.self == PrimitiveDictionaries.doubles || T.self == PrimitiveDictionaries.bools
                || T.self == PrimitiveDictionaries.strings
            {
                return try unboxPrimitiveDictionary(value, as: type, parent: parent, step: step())
            }
        }
        // The tree as it is: `init(from:)` can only try kinds in turn, and would read a
        // whole double as an integer.
        // Under the same nesting limit and stack guard as every value: one too deep for
        // them goes the long way, which throws where it is too deep.
        if T.self == PropertyListValue.self,
            let plist = PropertyListValue.make(
                value, containersLeft: NestingGuard.maximumContainers - (parent?.depth ?? 0), nesting: &nesting, reading: form.plain)
        {
            return sameType(plist, as: T.self)
        }
        if form.unwrapsOptionals, let optional = type as? any UnwrappableOptional.Type {
            return try optional.unbox(form.unwrap(value), decoder: self, parent: parent, step: step()) as! T
        }
        if convertsKeys, let dictionary = type as? any StringKeyedDictionaryDecodable.Type {
            return try dictionary.unboxEntries(value, decoder: self, parent: parent, step: step()) as! T
        }
        // An array of values that are not plist primitives (`[User]`): asked only of a
        // value that is an array, since the conformance look-up costs more than the
        // metatype compares above.
        let isArray = Swift.type(of: value) == [Any].self
        if isArray, let arrayType = type as? any DecodableArray.Type {
            return try arrayType.unboxElements(value as! [Any], decoder: self, parent: parent, step: step()) as! T
        }
        // Every compare above but these depends on the type alone. An array type is
        // remembered only when its value is not an array: the loop above is quicker.
        // The root value is read once, and not worth remembering.
        if parent != nil && !isArray && T.self != URL.self && T.self != Data.self && T.self != PropertyListValue.self && !isPassedThrough(T.self) {
            modelTypes.remember(T.self)
        }
        return try decodeWithSelf(value, as: type, parent: parent, step: step())
    }

    /// A `[String: String]`, `[String: Int]`, `[String: Double]` or `[String: Bool]`:
    /// passed through whole when it is of that very type, and otherwise (a
    /// `[String: Any]`, as Foundation hands one back) read entry by entry into one
    /// dictionary, rather than through `Dictionary.init(from:)`, which makes a coding
    /// key for every entry and looks each one up again.
    @inline(never)
    private func unboxPrimitiveDictionary<T: Decodable>(_ value: Any, as type: T.Type, parent: CodingPathNode?, step: PathStep?) throws -> T {
        if T.self == PrimitiveDictionaries.strings {
            if let strings = form.stringDictionary(value) { return sameType(strings, as: T.self) }
            return sameType(try unboxDictionary(value, as: String.self, parent: parent, step: step), as: T.self)
        }
        if Swift.type(of: value) == T.self { return value as! T }
        if T.self == PrimitiveDictionaries.doubles { return sameType(try unboxDictionary(value, as: Double.self, parent: parent, step: step), as: T.self) }
        if T.self == PrimitiveDictionaries.ints { return sameType(try unboxDictionary(value, as: Int.self, parent: parent, step: step), as: T.self) }
        return sameType(try unboxDictionary(value, as: Bool.self, parent: parent, step: step), as: T.self)
    }

    /// Runs `body` with the node of a container for the value `step` below `parent`,
    /// one level down: as `decodeWithSelf` and `container(keyedBy:)` or
    /// `unkeyedContainer()` would, for the values read here in one loop.
    private func inContainer<R>(parent: CodingPathNode?, step: PathStep?, _ body: (CodingPathNode?) throws -> R) throws -> R {
        try nesting.enter { DecodingError.tooDeep($0, in: levels, at: parent, step) }
        let height = levels.height
        defer {
            levels.pop(to: height)
            nesting.leave()
        }
        let node = levels.appending(step, to: parent)
        try checkContainerDepth(node)
        return try body(node)
    }

    /// A `[String: V]`, whose keys are data: the key strategy leaves them as they are,
    /// as in Foundation's coders.
    func unboxDictionary<Value: Decodable>(_ value: Any, as _: Value.Type, parent: CodingPathNode?, step: PathStep?) throws -> [String: Value] {
        try inContainer(parent: parent, step: step) { node in
            let dictionary = try entries(value, parent: parent, step: step)
            var result = [String: Value](minimumCapacity: dictionary.count)
            for (key, element) in dictionary {
                result.setEntry(try unbox(element, as: Value.self, parent: node, step: .key(KeyValueCodingKey(stringValue: key))), forKey: key)
            }
            return result
        }
    }

    /// The elements of `array` as an `[Element]`, as `Array.init(from:)` reads them —
    /// an unkeyed container, then `decode(Element.self)` until its end — in one loop
    /// into an array of the right size, without a call through the container protocol
    /// and a copy for each element.
    func unboxElements<Element: Decodable>(_ array: [Any], as _: Element.Type, parent: CodingPathNode?, step: PathStep?) throws -> [Element] {
        try inContainer(parent: parent, step: step) { node in
            var result: [Element] = []
            result.reserveCapacity(array.count)
            for index in array.indices {
                result.append(try unbox(array[index], as: Element.self, parent: node, step: .index(index)))
            }
            return result
        }
    }

    /// Runs `type.init(from:)` with this decoder one level down.
    private func decodeWithSelf<T: Decodable>(_ value: Any, as type: T.Type, parent: CodingPathNode?, step: consuming PathStep?) throws -> T {
        try nesting.enter { DecodingError.tooDeep($0, in: levels, at: parent, step) }
        // The levels this value's containers push are dropped once it is read.
        let height = levels.height
        // Swapped in and out, not copied, as in the encoder: each copy of a step's
        // existential key is a call through its type's value witnesses. Each `other…`
        // holds what the decoder does not: this value's state until the first swap,
        // then the outer value's.
        var otherParent = parent
        var otherStep = step
        var otherValue = value
        swap(&self.parent, &otherParent)
        swap(&self.step, &otherStep)
        swap(&self.value, &otherValue)
        defer {
            swap(&self.parent, &otherParent)
            swap(&self.step, &otherStep)
            swap(&self.value, &otherValue)
            levels.pop(to: height)
            nesting.leave()
        }
        return try type.init(from: self)
    }

    /// Decodes an optional's wrapped value: `nil` for `.none`, and for a `nil` a
    /// non-optional value wrote, whatever the wrapped type makes of it, or `nil`.
    func unboxWrapped<T: Decodable>(_ unwrapped: UnwrappedValue, as type: T.Type, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> T? {
        switch unwrapped {
        case .none:
            return nil
        case .some(let wrapped):
            return try unbox(wrapped, as: type, parent: parent, step: step())
        case .null(let null):
            do {
                return try unbox(null, as: type, parent: parent, step: step())
            } catch is DecodingError {
                return nil
            }
        }
    }

    func unboxString(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> String {
        if let string = form.string(value) { return string }
        throw mismatch(String.self, value, parent, step())
    }

    func unboxBool(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Bool {
        if let bool = exactCast(value, to: Bool.self) { return bool }
        if case .bool(let bool)? = classifyNumber(value) { return bool }
        throw mismatch(Bool.self, value, parent, step())
    }

    func unboxInteger<T: FixedWidthInteger>(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> T {
        try unboxNumber(value, parent: parent, step: step()) { $0.integer(T.self, strategy: options.intDecodingStrategy) }
    }

    func unboxDouble(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Double {
        try unboxNumber(value, parent: parent, step: step()) { $0.exactDouble }
    }

    func unboxFloat(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Float {
        try unboxNumber(value, parent: parent, step: step()) { $0.exactFloat }
    }

    /// A number of type `T`: the value itself when it is one, otherwise whatever
    /// `convert` makes of the number it is, which must not be a `Bool`.
    @inline(__always)
    private func unboxNumber<T>(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?, _ convert: (NumberValue) -> T?) throws -> T {
        if let number = exactCast(value, to: T.self) { return number }
        guard let number = classifyNumber(value) ?? form.number(value), !number.isBool else {
            throw mismatch(T.self, value, parent, step())
        }
        guard let result = convert(number) else {
            throw DecodingError.notRepresentable(number, as: T.self, in: levels, at: parent, step())
        }
        return result
    }

    private func unboxDecimal(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Decimal {
        if let number = classifyNumber(value) ?? form.number(value), !number.isBool {
            guard let result = number.exactDecimal else {
                throw DecodingError.notRepresentable(number, as: Decimal.self, in: levels, at: parent, step())
            }
            return result
        }
        if let decimal = form.decimal(value) { return decimal }
        throw mismatch(Decimal.self, value, parent, step())
    }

    private func unboxDate(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Date {
        switch options.dateDecodingStrategy {
        case .date:
            if let date = cast(value, to: Date.self) ?? form.date(value) { return date }
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
            guard let string = form.string(value) else { throw mismatch(Date.self, expected: String.self, value, parent, step()) }
            let first = Date.ISO8601FormatStyle(includingFractionalSeconds: fractional)
            let second = Date.ISO8601FormatStyle(includingFractionalSeconds: !fractional)
            if let date = (try? first.parse(string)) ?? (try? second.parse(string)) { return date }
            throw DecodingError.corrupted("Expected date string to be ISO8601-formatted", in: levels, at: parent, step())
        case .formatted(let formatter):
            guard let string = form.string(value) else { throw mismatch(Date.self, expected: String.self, value, parent, step()) }
            if let date = formatter.date(from: string) { return date }
            throw DecodingError.corrupted("Date string does not match format expected by formatter", in: levels, at: parent, step())
        case .custom(let closure):
            return try custom(value, parent: parent, step: step(), closure)
        }
        throw mismatch(Date.self, value, parent, step())
    }

    /// A URL, or `nil` for the keyed form, which `URL.init(from:)` reads.
    private func unboxURL(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> URL? {
        switch options.urlDecodingStrategy {
        case .url:
            // A URL by metatype, then a string, and only then the runtime's cast (an
            // `NSURL`): no string is a URL, and asking the cast costs more than the rest.
            if let url = exactCast(value, to: URL.self) { return url }
            if let string = form.string(value) {
                if let url = form.url(string) { return url }
                let message =
                    URL(string: string) == nil
                    ? "Invalid URL string \"\(string)\""
                    : "Expected an absolute URL, found the relative URL string \"\(string)\""
                throw DecodingError.corrupted(message, in: levels, at: parent, step())
            }
            if let url = cast(value, to: URL.self) { return url }
            if isDictionary(value) { return nil }
        case .absoluteString:
            guard let string = form.string(value) else { throw mismatch(URL.self, expected: String.self, value, parent, step()) }
            if let url = URL(string: string) { return url }
            throw DecodingError.corrupted("Invalid URL string \"\(string)\"", in: levels, at: parent, step())
        case .custom(let closure):
            return try custom(value, parent: parent, step: step(), closure)
        }
        throw mismatch(URL.self, value, parent, step())
    }

    /// Data, or `nil` for an array of bytes, which `Data.init(from:)` reads.
    private func unboxData(_ value: Any, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Data? {
        switch options.dataDecodingStrategy {
        case .data:
            if let data = cast(value, to: Data.self) { return data }
            if isArray(value) { return nil }
        case .base64:
            guard let string = form.string(value) else { throw mismatch(Data.self, expected: String.self, value, parent, step()) }
            if let data = Data(base64Encoded: string) { return data }
            throw DecodingError.corrupted("Encountered Data is not valid Base64", in: levels, at: parent, step())
        case .custom(let closure):
            return try custom(value, parent: parent, step: step(), closure)
        }
        throw mismatch(Data.self, value, parent, step())
    }

    /// Runs a `.custom` strategy closure on the plain form of `value`.
    private func custom<R>(_ value: Any, parent: CodingPathNode?, step: PathStep?, _ closure: (Any) throws -> R) throws -> R {
        let plain = form.plain(value)
        return try runCustomStrategy(
            { try closure(plain) },
            wrap: { error in DecodingError.corrupted("Custom strategy failed", in: levels, at: parent, step, underlyingError: error) }
        )
    }

    /// The entries of a keyed container for the value at `node`, with their keys
    /// converted by the key strategy.
    func keyedEntries(_ value: Any, parent: CodingPathNode?, step: PathStep?, node: CodingPathNode?) throws -> [String: Any] {
        if case .useDefaultKeys = options.keyDecodingStrategy {
            // The common case, inline: `[String: Any]` handed back as it is.
            if let dictionary = exactCast(value, to: [String: Any].self) { return dictionary }
            return try entries(value, parent: parent, step: step)
        }
        return try convertKeys(of: entries(value, parent: parent, step: step), node: node)
    }

    /// The entries of the dictionary `value`, with their keys as they are.
    private func entries(_ value: Any, parent: CodingPathNode?, step: PathStep?) throws -> [String: Any] {
        if let dictionary = exactCast(value, to: [String: Any].self) { return dictionary }
        // What Foundation's `object(forKey:)` hands back on Linux. Copied into a
        // `[String: Any]` by hand: each look-up in it would compare `AnyHashable`s,
        // which looks up generic metadata at every comparison, and a bridging cast
        // (`as? [String: Any]`) costs more still. A key that is not a string is
        // thrown, as a bridging cast would find it.
        if let unwrapped = flattenOptional(value), let foundation = exactCast(unwrapped, to: [AnyHashable: Any?].self) {
            var entries = [String: Any](minimumCapacity: foundation.count)
            for (key, entry) in foundation {
                guard let name = key.base as? String else { throw mismatch([String: Any].self, value, parent, step) }
                entries[name] = entry ?? (Optional<Any>.none as Any)
            }
            return entries
        }
        guard let dictionary = cast(value, to: [String: Any].self) else {
            throw mismatch([String: Any].self, value, parent, step)
        }
        return dictionary
    }

    /// `dictionary` with its keys converted by the key strategy.
    private func convertKeys(of dictionary: [String: Any], node: CodingPathNode?) throws -> [String: Any] {
        switch options.keyDecodingStrategy {
        case .useDefaultKeys:
            return dictionary
        case .convertFromSnakeCase:
            // As Foundation's decoders: when two keys convert to one, the first is kept.
            var converted: [String: Any] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                let name = convertFromSnakeCase(key)
                if converted[name] == nil { converted[name] = element }
            }
            return converted
        case .custom(let closure):
            let base = levels.codingPath(of: node)
            var converted: [String: Any] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                converted[closure(base + [KeyValueCodingKey(stringValue: key)]).stringValue] = element
            }
            return converted
        }
    }

    func unboxArray(_ value: Any, parent: CodingPathNode?, step: PathStep?) throws -> [Any] {
        guard let array = cast(value, to: [Any].self) else {
            throw mismatch([Any].self, value, parent, step)
        }
        return array
    }

    /// A decoder of its own for `superDecoder()`, since the caller may keep it.
    func makeSuperDecoder(value: Any, at node: CodingPathNode?, step: PathStep) -> DecoderImpl {
        let decoder = DecoderImpl(options: options, form: form, levels: levels, value: value, parent: node, step: step, reusesKeyedLevels: false)
        decoder.nesting = nesting
        return decoder
    }
}

// MARK: - Optionals

/// Lets a form that writes `Optional` values itself read each level of a nested optional.
private protocol UnwrappableOptional {
    static func unbox(_ unwrapped: UnwrappedValue, decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self
}

extension Optional: UnwrappableOptional where Wrapped: Decodable {
    fileprivate static func unbox(_ unwrapped: UnwrappedValue, decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self {
        try decoder.unboxWrapped(unwrapped, as: Wrapped.self, parent: parent, step: step)
    }
}

// MARK: - Arrays

/// `[Element]`, found by a cast where the value is an array.
private protocol DecodableArray {
    static func unboxElements(_ array: [Any], decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self
}

extension Array: DecodableArray where Element: Decodable {
    fileprivate static func unboxElements(_ array: [Any], decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self {
        try decoder.unboxElements(array, as: Element.self, parent: parent, step: step)
    }
}

// MARK: - Dictionaries with String keys

/// `[String: V]`, found by a cast where a key strategy must leave its keys alone.
private protocol StringKeyedDictionaryDecodable {
    static func unboxEntries(_ value: Any, decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self
}

extension Dictionary: StringKeyedDictionaryDecodable where Key == String, Value: Decodable {
    fileprivate static func unboxEntries(_ value: Any, decoder: DecoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Self {
        try decoder.unboxDictionary(value, as: Value.self, parent: parent, step: step)
    }
}

// MARK: - Containers

/// What a keyed container reads, in one object: `KeyedDecodingContainer`'s box copies
/// its container out of itself at every `decode` call, and a container of one reference
/// costs one atomic retain and release there, where the decoder and the dictionary
/// held apart cost two of each. The decoder hands the same object to the next container
/// at the same depth once no container holds it any more (`DecoderImpl.keyedLevel`), so
/// that it is allocated once per depth, not once per keyed value.
private final class KeyedLevel {
    let decoder: DecoderImpl
    // Written only while the decoder holds the one reference to this object.
    @exclusivity(unchecked) var dictionary: [String: Any]
    /// The path of the value the container reads.
    @exclusivity(unchecked) var node: CodingPathNode?

    init(decoder: DecoderImpl, dictionary: [String: Any], node: CodingPathNode?) {
        self.decoder = decoder
        self.dictionary = dictionary
        self.node = node
    }

    /// The value under `name`, looked up here, where Swift borrows the dictionary: read
    /// out of this object for the look-up, it is retained and released at every field.
    func entry(_ name: String) -> Any? { dictionary[name] }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let level: KeyedLevel

    init(_ level: KeyedLevel) {
        self.level = level
    }

    // Borrowed, not copied: a copy is a retain and a release for each value read.
    private var decoder: DecoderImpl { _read { yield level.decoder } }
    private var dictionary: [String: Any] { _read { yield level.dictionary } }

    /// The value under `name`; the name is asked of the key before the look-up starts.
    @inline(__always)
    private func entry(_ name: String) -> Any? { level.entry(name) }
    private var node: CodingPathNode? { level.node }

    var codingPath: [any CodingKey] { decoder.levels.codingPath(of: node) }

    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entry(key.stringValue) != nil }

    @inline(__always)
    private func value(for key: Key) throws -> Any {
        guard let value = entry(key.stringValue) else {
            throw DecodingError.missingKey(key, containerPath: codingPath)
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.form.isNull(try value(for: key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.unboxBool(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.unboxString(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.unboxDouble(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.unboxFloat(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try decoder.unboxInteger(value(for: key), parent: node, step: .key(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(value(for: key), as: type, parent: node, step: .key(key))
    }

    /// An absent key or a `nil` gives `nil`. Read as the optional itself would be, so
    /// that what `encodeIfPresent` and `encode` wrote read back the same.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = entry(key.stringValue) else { return nil }
        return try decoder.unboxWrapped(decoder.form.unwrap(value), as: type, parent: node, step: .key(key))
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = entry(key.stringValue) else { return nil }
        return try decoder.unboxWrapped(decoder.form.unwrap(value), as: type, parent: node, step: .key(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(for: key)
        let nestedNode = decoder.levels.push(.key(key), below: node)
        try decoder.checkContainerDepth(nestedNode)
        let nested = try decoder.keyedEntries(value, parent: node, step: .key(key), node: nestedNode)
        return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder.keyedLevel(nested, node: nestedNode)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try value(for: key)
        let nestedNode = decoder.levels.push(.key(key), below: node)
        try decoder.checkContainerDepth(nestedNode)
        let nested = try decoder.unboxArray(value, parent: node, step: .key(key))
        return UnkeyedContainer(decoder: decoder, array: nested, node: nestedNode)
    }

    func superDecoder() throws -> any Decoder {
        superDecoder(named: KeyValueCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(named: key)
    }

    private func superDecoder(named key: some CodingKey) -> any Decoder {
        // As JSONDecoder does: a missing key gives a decoder of nil, not an error.
        let value = entry(key.stringValue) ?? (Optional<Any>.none as Any)
        return decoder.makeSuperDecoder(value: value, at: node, step: .key(key))
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: DecoderImpl
    let array: [Any]
    /// The path of the value this container reads.
    let node: CodingPathNode?
    private(set) var currentIndex = 0

    init(decoder: DecoderImpl, array: [Any], node: CodingPathNode?) {
        self.decoder = decoder
        self.array = array
        self.node = node
    }

    var codingPath: [any CodingKey] { decoder.levels.codingPath(of: node) }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    /// Decodes the next element; the index moves on only when that succeeds.
    @inline(__always)
    private mutating func next<R>(_ type: Any.Type, _ body: (DecoderImpl, Any, CodingPathNode?, PathStep) throws -> R) throws -> R {
        let step = PathStep.index(currentIndex)
        guard currentIndex < array.count else {
            throw DecodingError.mismatch(type, found: .endOfArray, in: decoder.levels, at: node, step)
        }
        let result = try body(decoder, array[currentIndex], node, step)
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < array.count else {
            throw DecodingError.mismatch(Optional<Any>.self, found: .endOfArray, in: decoder.levels, at: node, .index(currentIndex))
        }
        if decoder.form.isNull(array[currentIndex]) {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.unboxBool($1, parent: $2, step: $3) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.unboxString($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.unboxDouble($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.unboxFloat($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { try $0.unboxInteger($1, parent: $2, step: $3) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { decoder, value, node, step in
            try decoder.unbox(value, as: type, parent: node, step: step)
        }
    }

    /// `nil` at the end of the array, as Foundation's decoders give, and for a `nil`;
    /// otherwise read as the optional itself would be.
    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        guard !isAtEnd else { return nil }
        return try next(type) { decoder, value, node, step in
            try decoder.unboxWrapped(decoder.form.unwrap(value), as: type, parent: node, step: step)
        }
    }

    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        guard !isAtEnd else { return nil }
        return try next(type) { decoder, value, node, step in
            try decoder.unboxWrapped(decoder.form.unwrap(value), as: type, parent: node, step: step)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let node = self.node
        let nestedNode = decoder.levels.push(.index(currentIndex), below: node)
        try decoder.checkContainerDepth(nestedNode)
        let nested = try next([String: Any].self) { decoder, value, node, step in
            try decoder.keyedEntries(value, parent: node, step: step, node: nestedNode)
        }
        return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder.keyedLevel(nested, node: nestedNode)))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let node = self.node
        let nestedNode = decoder.levels.push(.index(currentIndex), below: node)
        try decoder.checkContainerDepth(nestedNode)
        let nested = try next([Any].self) { decoder, value, node, step in try decoder.unboxArray(value, parent: node, step: step) }
        return UnkeyedContainer(decoder: decoder, array: nested, node: nestedNode)
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { decoder, value, node, step in
            decoder.makeSuperDecoder(value: value, at: node, step: step)
        }
    }
}
