//
//  BareCoders.swift
//  The least a Codable coder between models and `[String: Any]` trees does: what the
//  protocol itself costs. No coding path, no strategies, no checks beyond the casts,
//  errors without context; values are read with the same metatype tests and opened
//  existentials as DefaultsCoder's. Not a product: a floor for the benchmarks, so that
//  the cost of `Codable` (a boxed container per struct, generic metadata look-ups, three
//  calls per field) is told apart from the cost of this package's features.
//

import Foundation

struct BareError: Error {}

/// A value of exactly type `T`, or `nil`: opens the existential and compares metatypes.
@inline(__always)
func bareCast<T>(_ value: Any, to _: T.Type) -> T? {
    func open<V>(_ opened: V) -> T? { V.self == T.self ? unsafeBitCast(opened, to: T.self) : nil }
    return _openExistential(value, do: open)
}

// MARK: - Encoder

final class BareEncoder: Encoder, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What the value being encoded wrote: a value, or the storage of its container.
    var written: Any?

    static func encode<T: Encodable>(_ value: T) throws -> Any? { try BareEncoder().box(value) }

    func box<T: Encodable>(_ value: T) throws -> Any? {
        if T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == Date.self
            || T.self == [String].self || T.self == Float.self || T.self == URL.self
        {
            return value
        }
        var outer: Any? = nil
        swap(&written, &outer)
        defer { swap(&written, &outer) }
        try value.encode(to: self)
        if let written, let keyed = bareCast(written, to: BareKeyedStorage.self) {
            capacityHint = keyed.dictionary.count
            return keyed.dictionary
        }
        if let written, let unkeyed = bareCast(written, to: BareUnkeyedStorage.self) { return unkeyed.array }
        return written
    }

    /// The size of the last dictionary made: values of one type come in a row.
    var capacityHint = 0

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage = BareKeyedStorage()
        storage.dictionary.reserveCapacity(capacityHint)
        written = storage
        return KeyedEncodingContainer(BareKeyedEncoding<Key>(encoder: self, storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage = BareUnkeyedStorage()
        written = storage
        return BareUnkeyedEncoding(encoder: self, storage: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { written = nil }
    func encode<T: Encodable>(_ value: T) throws { written = try box(value) }
}

final class BareKeyedStorage { var dictionary: [String: Any] = [:] }
final class BareUnkeyedStorage { var array: [Any] = [] }

struct BareKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BareEncoder
    let storage: BareKeyedStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: String, forKey key: Key) throws { storage.dictionary[key.stringValue] = value }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.dictionary[key.stringValue] = value }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.dictionary[key.stringValue] = value }
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.dictionary[key.stringValue] = value }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let boxed = try encoder.box(value) { storage.dictionary[key.stringValue] = boxed }
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        fatalError("not used by the benchmark models")
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { fatalError("not used by the benchmark models") }
    mutating func superEncoder() -> any Encoder { fatalError("not used by the benchmark models") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("not used by the benchmark models") }
}

struct BareUnkeyedEncoding: UnkeyedEncodingContainer {
    let encoder: BareEncoder
    let storage: BareUnkeyedStorage
    var codingPath: [any CodingKey] { [] }
    var count: Int { storage.array.count }

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let boxed = try encoder.box(value) { storage.array.append(boxed) }
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        fatalError("not used by the benchmark models")
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("not used by the benchmark models") }
    mutating func superEncoder() -> any Encoder { fatalError("not used by the benchmark models") }
}

// MARK: - Decoder

final class BareDecoder: Decoder, SingleValueDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var value: Any

    init(value: Any) { self.value = value }

    static func decode<T: Decodable>(_ type: T.Type, from value: Any) throws -> T { try BareDecoder(value: value).unbox(value, as: type) }

    func unbox<T: Decodable>(_ value: Any, as type: T.Type) throws -> T {
        if T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == Date.self
            || T.self == [String].self || T.self == Float.self || T.self == URL.self
        {
            guard let result = bareCast(value, to: T.self) else { throw BareError() }
            return result
        }
        var outer = value
        swap(&self.value, &outer)
        defer { swap(&self.value, &outer) }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let dictionary = bareCast(value, to: [String: Any].self) else { throw BareError() }
        return KeyedDecodingContainer(BareKeyedDecoding<Key>(decoder: self, dictionary: dictionary))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = bareCast(value, to: [Any].self) else { throw BareError() }
        return BareUnkeyedDecoding(decoder: self, array: array)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { bareCast(value, to: Optional<Any>.self).map { $0 == nil } ?? false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type) }
}

struct BareKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: BareDecoder
    let dictionary: [String: Any]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { dictionary[key.stringValue] != nil }
    func decodeNil(forKey key: Key) throws -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let value = dictionary[key.stringValue] else { throw BareError() }
        return try decoder.unbox(value, as: type)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw BareError()
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw BareError() }
    func superDecoder() throws -> any Decoder { throw BareError() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw BareError() }
}

struct BareUnkeyedDecoding: UnkeyedDecodingContainer {
    let decoder: BareDecoder
    let array: [Any]
    var codingPath: [any CodingKey] { [] }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex == array.count }
    var currentIndex = 0

    init(decoder: BareDecoder, array: [Any]) {
        self.decoder = decoder
        self.array = array
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw BareError() }
        defer { currentIndex += 1 }
        return try decoder.unbox(array[currentIndex], as: type)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw BareError()
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw BareError() }
    mutating func superDecoder() throws -> any Decoder { throw BareError() }
}
