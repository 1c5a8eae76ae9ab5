// The floor of a Codable coder between models and `[String: Any]` trees: as fast as a
// coder can be while staying safe Swift and producing this package's trees for the
// benchmark models. Not a product — no coding path, no strategies, no checks beyond the
// casts, errors without context, and containers that must not outlive their value — so
// that what `Codable` itself costs is told apart from what this package's features cost.

//  What it does that a naive coder does not: one coder object for a whole tree; keyed
//  encoding containers that hold only the coder and an index into its stack of
//  dictionaries (one allocation per container: the box `KeyedEncodingContainer` must be);
//  keyed decoding containers of one reference, an object reused at each depth, since the
//  box copies its container at every call (one retain and release, not two); typed overloads
//  for every primitive; leaves found by metatype; no runtime exclusivity checks on its
//  state (as in this package); one look-up per `decodeIfPresent`; arrays of structs
//  decoded in one loop into an array of the right size; dictionaries made with the size
//  last seen at their depth. What it does not do:
//  anything that relies on the standard library's private layout, or `unowned(unsafe)`.
//
//  `encodeReusingBoxes` and `decodeReusingBoxes` are not floors but a measurement: they
//  hand the box `KeyedEncodingContainer` or `KeyedDecodingContainer` made at a depth out
//  again for the next value there, without asking whether anybody still holds it — which
//  only the standard library's private layout could answer — so a container kept past
//  its value reads or writes the next value's entries. What they save is what Codable's
//  one box per keyed container costs a safe coder (`Benchmarks/README.md`).
//

import Foundation

struct FloorError: Error {}

/// The keyed-container boxes `encodeReusingBoxes` and `decodeReusingBoxes` hand out
/// again, by depth, with the key type each was made for.
final class BoxCache {
    @exclusivity(unchecked) var boxes: [Any?] = []
    @exclusivity(unchecked) var keys: [Any.Type?] = []

    /// Whether the box kept at `index` was made for `key`.
    @inline(__always)
    func holds(_ key: Any.Type, at index: Int) -> Bool { index < keys.count && keys[index] == key }

    /// Keeps `container`, made for `key`, at `index`.
    func keep(_ container: Any, at index: Int, for key: Any.Type) {
        while boxes.count <= index {
            boxes.append(nil)
            keys.append(nil)
        }
        boxes[index] = container
        keys[index] = key
    }
}

/// A value of exactly type `T`, or `nil`: opens the existential and compares metatypes.
@inline(__always)
func floorCast<T>(_ value: Any, to _: T.Type) -> T? {
    func open<V>(_ opened: V) -> T? { V.self == T.self ? unsafeBitCast(opened, to: T.self) : nil }
    return _openExistential(value, do: open)
}

extension Dictionary {
    /// `updateValue(_:forKey:)`, with the replaced value (almost always none) dropped by a
    /// switch: a discarded optional is destroyed through `Optional`'s generic witnesses.
    @inline(__always)
    mutating func floorSet(_ value: consuming Value, forKey key: Key) {
        switch updateValue(value, forKey: key) {
        case .some(let replaced): _ = consume replaced
        case .none: break
        }
    }
}

// MARK: - Encoder

final class FloorEncoder: Encoder, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the value being encoded wrote.
    private enum Written {
        case nothing
        case value(Any)
        case keyed(Int)
        case unkeyed(Int)
    }

    @exclusivity(unchecked) private var written = Written.nothing
    /// The dictionaries and arrays being filled, one per open container.
    @exclusivity(unchecked) fileprivate var dictionaries: [[String: Any]] = []
    @exclusivity(unchecked) fileprivate var arrays: [[Any]] = []
    /// How deep the value being encoded is, and the size of the last dictionary at each depth.
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private var sizes: [Int] = []

    /// The `KeyedEncodingContainer` made for each dictionary of the stack, handed out
    /// again unchecked, or `nil` for the floor (see `encodeReusingBoxes`).
    private var boxCache: BoxCache?

    static func encode<T: Encodable>(_ value: T) throws -> Any? { try FloorEncoder().box(value) }

    /// Not a floor: a measurement of what one box per keyed container costs (see the
    /// top of this file). The floor's keyed containers hold only an index, so that
    /// here reuse breaks nothing the floor promised; a coder whose kept containers
    /// write their own value's entries, as this package's do, would lose them.
    static func encodeReusingBoxes<T: Encodable>(_ value: T) throws -> Any? {
        let encoder = FloorEncoder()
        let cache = BoxCache()
        encoder.boxCache = cache
        // The boxes hold the encoder: let go of them when the encode ends.
        defer { cache.boxes = [] }
        return try encoder.box(value)
    }

    fileprivate func box<T: Encodable>(_ value: T) throws -> Any {
        if T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == Date.self
            || T.self == [String].self || T.self == Float.self || T.self == URL.self
        {
            return value
        }
        var outer = Written.nothing
        swap(&written, &outer)
        depth += 1
        defer {
            swap(&written, &outer)
            depth -= 1
        }
        try value.encode(to: self)
        switch written {
        case .nothing: return [String: Any]()
        case .value(let single): return single
        case .keyed:
            let dictionary = dictionaries.removeLast()
            sizes[depth - 1] = dictionary.count
            return dictionary
        case .unkeyed: return arrays.removeLast()
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed(let index) = written { return KeyedEncodingContainer(FloorKeyedEncoding<Key>(encoder: self, index: index)) }
        while sizes.count < depth { sizes.append(0) }
        dictionaries.append(Dictionary(minimumCapacity: depth > 0 ? sizes[depth - 1] : 0))
        written = .keyed(dictionaries.count - 1)
        if let boxCache { return reusedBox(keyedBy: type, in: boxCache) }
        return KeyedEncodingContainer(FloorKeyedEncoding<Key>(encoder: self, index: dictionaries.count - 1))
    }

    /// The container `encodeReusingBoxes` hands out for the newest dictionary: the last
    /// one made for it when its key type is the same. Out of line, as in the decoder.
    @inline(never)
    private func reusedBox<Key: CodingKey>(keyedBy _: Key.Type, in cache: BoxCache) -> KeyedEncodingContainer<Key> {
        let index = dictionaries.count - 1
        if cache.holds(Key.self, at: index) { return cache.boxes[index] as! KeyedEncodingContainer<Key> }
        let container = KeyedEncodingContainer(FloorKeyedEncoding<Key>(encoder: self, index: index))
        cache.keep(container, at: index, for: Key.self)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed(let index) = written { return FloorUnkeyedEncoding(encoder: self, index: index) }
        arrays.append([])
        written = .unkeyed(arrays.count - 1)
        return FloorUnkeyedEncoding(encoder: self, index: arrays.count - 1)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { written = .value(Optional<Any>.none as Any) }
    func encode(_ value: String) throws { written = .value(value) }
    func encode(_ value: Int) throws { written = .value(value) }
    func encode(_ value: Double) throws { written = .value(value) }
    func encode(_ value: Bool) throws { written = .value(value) }
    func encode<T: Encodable>(_ value: T) throws { written = .value(try box(value)) }
}

struct FloorKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FloorEncoder
    let index: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: String, forKey key: Key) throws { encoder.dictionaries[index].floorSet(value, forKey: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { encoder.dictionaries[index].floorSet(value, forKey: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { encoder.dictionaries[index].floorSet(value, forKey: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { encoder.dictionaries[index].floorSet(value, forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.dictionaries[index].floorSet(value, forKey: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let boxed = try encoder.box(value)
        encoder.dictionaries[index].floorSet(boxed, forKey: key.stringValue)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        fatalError("not used by the benchmark models")
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { fatalError("not used by the benchmark models") }
    mutating func superEncoder() -> any Encoder { fatalError("not used by the benchmark models") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("not used by the benchmark models") }
}

struct FloorUnkeyedEncoding: UnkeyedEncodingContainer {
    let encoder: FloorEncoder
    let index: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { encoder.arrays[index].count }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: String) throws { encoder.arrays[index].append(value) }
    mutating func encode(_ value: Int) throws { encoder.arrays[index].append(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let boxed = try encoder.box(value)
        encoder.arrays[index].append(boxed)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        fatalError("not used by the benchmark models")
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("not used by the benchmark models") }
    mutating func superEncoder() -> any Encoder { fatalError("not used by the benchmark models") }
}

// MARK: - Decoder

final class FloorDecoder: Decoder, SingleValueDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    @exclusivity(unchecked) private var value: Any
    /// How many values deep the value being decoded is.
    @exclusivity(unchecked) private var depth = 0
    /// The keyed containers' objects by depth, handed to the next container at the
    /// same depth once no container holds them (as this package's decoder does).
    @exclusivity(unchecked) private var levels: [FloorLevel?] = []
    /// The `KeyedDecodingContainer` made at each depth, handed out again unchecked for
    /// the next value of its key type there, or `nil` for the floor (see
    /// `decodeReusingBoxes`).
    private let boxCache: BoxCache?

    private init(value: Any, boxCache: BoxCache?) {
        self.value = value
        self.boxCache = boxCache
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
        try decode(type, from: value, boxCache: nil)
    }

    /// Not a floor: a measurement of what `Codable`'s one box per keyed container costs
    /// (its allocation and two generic-metadata look-ups; see the top of this file). A
    /// kept container reads the next value's entries, as `keptContainerReadsOwnValue`
    /// in `Instructions/main.swift` shows.
    static func decodeReusingBoxes<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
        try decode(type, from: value, boxCache: BoxCache())
    }

    private static func decode<T: Decodable>(_ type: T.Type, from value: Any, boxCache: BoxCache?) throws -> T {
        let decoder = FloorDecoder(value: value, boxCache: boxCache)
        // The levels and boxes hold the decoder: let go of them when the decode ends.
        defer {
            decoder.levels = []
            boxCache?.boxes = []
        }
        return try decoder.unbox(value, as: type)
    }

    private func level(_ dictionary: [String: Any]) -> FloorLevel {
        // The root value (depth 1) has one container: nothing to keep it for.
        guard depth > 1 else { return FloorLevel(decoder: self, dictionary: dictionary) }
        while levels.count <= depth { levels.append(nil) }
        if isKnownUniquelyReferenced(&levels[depth]), let level = levels[depth] {
            level.dictionary = dictionary
            return level
        }
        let level = FloorLevel(decoder: self, dictionary: dictionary)
        levels[depth] = level
        return level
    }

    fileprivate func unbox<T: Decodable>(_ value: Any, as type: T.Type) throws -> T {
        if T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == Date.self
            || T.self == [String].self || T.self == Float.self || T.self == URL.self
        {
            // `as!` once the type is known to match: a `T?` in this unspecialized
            // function would look up `Optional<T>`'s metadata at every call.
            guard Swift.type(of: value) == T.self else { throw FloorError() }
            return value as! T
        }
        if Swift.type(of: value) == [Any].self, let arrayType = type as? any FloorDecodableArray.Type {
            return try arrayType.unboxElements(value as! [Any], decoder: self) as! T
        }
        var outer = value
        swap(&self.value, &outer)
        depth += 1
        defer {
            swap(&self.value, &outer)
            depth -= 1
        }
        return try T(from: self)
    }

    /// An array of structs in one loop into an array of the right size.
    fileprivate func unboxElements<Element: Decodable>(_ array: [Any], as _: Element.Type) throws -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(array.count)
        // The elements sit one level below the array.
        depth += 1
        defer { depth -= 1 }
        for element in array { result.append(try unbox(element, as: Element.self)) }
        return result
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let dictionary = floorCast(value, to: [String: Any].self) else { throw FloorError() }
        if let boxCache { return reusedBox(dictionary, keyedBy: type, in: boxCache) }
        return KeyedDecodingContainer(FloorKeyedDecoding<Key>(level: level(dictionary)))
    }

    /// The container `decodeReusingBoxes` hands out: the last one made at this depth when
    /// its key type is the same. Out of line, so that the floor's own path stays as it was.
    @inline(never)
    private func reusedBox<Key: CodingKey>(_ dictionary: [String: Any], keyedBy _: Key.Type, in cache: BoxCache) -> KeyedDecodingContainer<Key> {
        // The box's container reads the object kept at its depth: give it the new entries.
        if depth > 1, cache.holds(Key.self, at: depth), let level = levels[depth] {
            level.dictionary = dictionary
            return cache.boxes[depth] as! KeyedDecodingContainer<Key>
        }
        let container = KeyedDecodingContainer(FloorKeyedDecoding<Key>(level: level(dictionary)))
        cache.keep(container, at: depth, for: Key.self)
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = floorCast(value, to: [Any].self) else { throw FloorError() }
        return FloorUnkeyedDecoding(decoder: self, array: array)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { floorCast(value, to: Optional<Any>.self).map { $0 == nil } ?? false }
    func decode(_ type: String.Type) throws -> String { try unbox(value, as: type) }
    func decode(_ type: Int.Type) throws -> Int { try unbox(value, as: type) }
    func decode(_ type: Double.Type) throws -> Double { try unbox(value, as: type) }
    func decode(_ type: Bool.Type) throws -> Bool { try unbox(value, as: type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type) }
}

private protocol FloorDecodableArray {
    static func unboxElements(_ array: [Any], decoder: FloorDecoder) throws -> Self
}

extension Array: FloorDecodableArray where Element: Decodable {
    fileprivate static func unboxElements(_ array: [Any], decoder: FloorDecoder) throws -> Self {
        try decoder.unboxElements(array, as: Element.self)
    }
}

/// What a keyed container reads, in one object: the box `KeyedDecodingContainer` makes
/// copies its container at every call, and a container of one reference is one retain.
final class FloorLevel {
    let decoder: FloorDecoder
    @exclusivity(unchecked) var dictionary: [String: Any]

    init(decoder: FloorDecoder, dictionary: [String: Any]) {
        self.decoder = decoder
        self.dictionary = dictionary
    }

    /// Looked up here, where the dictionary is borrowed rather than copied.
    func entry(_ name: String) -> Any? { dictionary[name] }
}

struct FloorKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let level: FloorLevel
    private var decoder: FloorDecoder { _read { yield level.decoder } }
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { level.dictionary.keys.compactMap { Key(stringValue: $0) } }

    @inline(__always)
    private func value(_ key: Key) throws -> Any {
        guard let value = level.entry(key.stringValue) else { throw FloorError() }
        return value
    }

    func contains(_ key: Key) -> Bool { level.entry(key.stringValue) != nil }
    func decodeNil(forKey key: Key) throws -> Bool { false }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let string = floorCast(try value(key), to: String.self) else { throw FloorError() }
        return string
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        guard let int = floorCast(try value(key), to: Int.self) else { throw FloorError() }
        return int
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard let double = floorCast(try value(key), to: Double.self) else { throw FloorError() }
        return double
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        guard let float = floorCast(try value(key), to: Float.self) else { throw FloorError() }
        return float
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard let bool = floorCast(try value(key), to: Bool.self) else { throw FloorError() }
        return bool
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.unbox(value(key), as: type) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = level.entry(key.stringValue) else { return nil }
        guard let string = floorCast(value, to: String.self) else { throw FloorError() }
        return string
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = level.entry(key.stringValue) else { return nil }
        return try decoder.unbox(value, as: type)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw FloorError()
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw FloorError() }
    func superDecoder() throws -> any Decoder { throw FloorError() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw FloorError() }
}

struct FloorUnkeyedDecoding: UnkeyedDecodingContainer {
    let decoder: FloorDecoder
    let array: [Any]
    var codingPath: [any CodingKey] { [] }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex == array.count }
    var currentIndex = 0

    init(decoder: FloorDecoder, array: [Any]) {
        self.decoder = decoder
        self.array = array
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw FloorError() }
        defer { currentIndex += 1 }
        return try decoder.unbox(array[currentIndex], as: type)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw FloorError()
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw FloorError() }
    mutating func superDecoder() throws -> any Decoder { throw FloorError() }
}
