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
final class DecoderImpl: Decoder, SingleValueDecodingContainer {
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
    @exclusivity(unchecked) var parent: CodingPathNode?
    /// The value's step below `parent`, or `nil` when it is the same value.
    @exclusivity(unchecked) var step: PathStep?
    @exclusivity(unchecked) var value: Any
    @exclusivity(unchecked) var nesting = NestingGuard()
    @exclusivity(unchecked) var modelTypes = ModelTypes()
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

    /// A decoder of its own for `superDecoder()`, since the caller may keep it.
    func makeSuperDecoder(value: Any, at node: CodingPathNode?, step: PathStep) -> DecoderImpl {
        let decoder = DecoderImpl(options: options, form: form, levels: levels, value: value, parent: node, step: step, reusesKeyedLevels: false)
        decoder.nesting = nesting
        return decoder
    }
}
