// The decoder's keyed and unkeyed containers: views of the decoder (`DecoderImpl`) and
// the value they read, in a file of their own as the encoder's are.

import Foundation

// MARK: - Containers

/// What a keyed container reads, in one object: `KeyedDecodingContainer`'s box copies
/// its container out of itself at every `decode` call, and a container of one reference
/// costs one atomic retain and release there, where the decoder and the dictionary
/// held apart cost two of each. The decoder hands the same object to the next container
/// at the same depth once no container holds it any more (`DecoderImpl.keyedLevel`), so
/// that it is allocated once per depth, not once per keyed value.
final class KeyedLevel {
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

struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
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

struct UnkeyedContainer: UnkeyedDecodingContainer {
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
