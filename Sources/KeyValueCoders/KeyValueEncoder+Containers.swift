// The encoder's keyed and unkeyed containers: thin views of the encoder (`EncoderImpl`)
// and the storage of the container they write (`KeyedStorage`, `UnkeyedStorage`), kept
// in a file of their own so that each file stays readable.

import Foundation

// MARK: - Containers

struct EncodingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: EncoderImpl
    let storage: KeyedStorage
    /// The path of the value this container belongs to.
    let node: CodingPathNode?

    var codingPath: [any CodingKey] { encoder.levels.codingPath(of: node) }

    /// The dictionary key for `key`, or the error that it cannot be written.
    @inline(__always)
    private func name(_ key: Key) throws -> String {
        if encoder.usesKeysAsTheyAre {
            return key.stringValue
        }
        return try checkedName(key)
    }

    /// The dictionary key for `key` converted or checked. Out of line, so that the
    /// common case above does not set up room for an `EncodingError` at every field.
    @inline(never)
    private func checkedName(_ key: Key) throws -> String {
        let (name, problem) = encoder.dictionaryKey(key, in: storage, at: node)
        if let problem { throw problem }
        return name
    }

    /// The dictionary key for `key` where the protocol gives no way to throw: the
    /// problem is thrown when the value this container belongs to is complete.
    private func nameRecordingProblem(_ key: Key) -> String {
        let (name, problem) = encoder.dictionaryKey(key, in: storage, at: node)
        if let problem { storage.record(problem) }
        return name
    }

    /// Takes `value` over, so that a string or array in it moves into the dictionary
    /// instead of being retained once more and released (`setEntry(_:forKey:)`).
    @inline(__always)
    private func set(_ value: consuming Any, at name: String) {
        storage.dictionary.setEntry(consume value, forKey: name)
        if !storage.pending.isEmpty { storage.pending[name] = nil }
    }

    mutating func encodeNil(forKey key: Key) throws {
        let name = try name(key)
        if let null = encoder.form.null { set(null, at: name) }
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { set(value, at: try name(key)) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(encoder.string(value), at: try name(key)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(value, at: try name(key)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(encoder.form.float(value), at: try name(key)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(value, at: try name(key)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { set(encoder.form.integer(value), at: try name(key)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = try name(key)
        if let boxed = try encoder.box(value, parent: node, step: .key(key)) {
            set(boxed, at: name)
        } else if let null = encoder.form.null {
            set(null, at: name)
        }
    }

    // An absent optional leaves the key out. Where the form writes optionals itself, a
    // present one goes through the optional's own form, so that a value that encodes
    // `nil` (a JSON-like `.null`) is told apart from an absent one.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return }
        if encoder.wrapsOptionals {
            try encode(Optional(value), forKey: key)
        } else {
            try encode(value, forKey: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let (nested, nestedNode) = nestedStorage(KeyedStorage.self, for: key)
        return KeyedEncodingContainer(EncodingKeyedContainer<NestedKey>(encoder: encoder, storage: nested, node: nestedNode))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let (nested, nestedNode) = nestedStorage(UnkeyedStorage.self, for: key)
        return EncodingUnkeyedContainer(encoder: encoder, storage: nested, node: nestedNode)
    }

    /// The storage of a nested container for `key`, as Foundation's coders find it: the
    /// pending container of the same kind asked for before, or one holding what is
    /// already there (a finished dictionary or array), or a new one. A key that holds
    /// another kind of value, or a container too deep, is recorded as a problem.
    private func nestedStorage<Storage: NestedStorage>(_: Storage.Type, for key: Key) -> (Storage, CodingPathNode) {
        let kind = Storage.kind
        let name = nameRecordingProblem(key)
        let nestedNode = encoder.levels.push(.key(key), below: node)
        let nested: Storage
        if let item = storage.pending[name] {
            if let found = Storage.existing(in: item) {
                nested = found
            } else {
                nested = Storage()
                storage.record(
                    .invalid(key.stringValue, CoderMisuse.nested(kind: kind).message, at: encoder.levels.codingPath(of: nestedNode)))
            }
        } else if let value = storage.dictionary[name] {
            if let merged = Storage.merging(value) {
                nested = merged
                storage.dictionary[name] = nil
                storage.pending[name] = merged.asPending
            } else {
                nested = Storage()
                storage.record(
                    .invalid(key.stringValue, CoderMisuse.nested(kind: kind).message, at: encoder.levels.codingPath(of: nestedNode)))
            }
        } else {
            nested = Storage()
            storage.pending[name] = nested.asPending
        }
        if !encoder.allowsNesting(below: node) {
            storage.record(.invalid(key.stringValue, encoder.form.depthProblem, at: encoder.levels.codingPath(of: nestedNode)))
        }
        return (nested, nestedNode)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: KeyValueCodingKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let (name, problem) = encoder.dictionaryKey(key, in: storage, at: node)
        if let problem { storage.record(problem) }
        if case .encoder(let existing)? = storage.pending[name] { return existing }
        let existing = storage.pending[name] == nil ? storage.dictionary[name] : nil
        if storage.pending[name] != nil {
            storage.record(
                .invalid(key.stringValue, CoderMisuse.superEncoderForTakenKey.message, in: encoder.levels, at: node, .key(key)))
        }
        let superEncoder = encoder.makeSuperEncoder(at: node, step: .key(key), existing: existing)
        storage.dictionary[name] = nil
        storage.pending[name] = .encoder(superEncoder)
        return superEncoder
    }
}

struct EncodingUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: EncoderImpl
    let storage: UnkeyedStorage
    /// The path of the value this container belongs to.
    let node: CodingPathNode?

    var codingPath: [any CodingKey] { encoder.levels.codingPath(of: node) }
    var count: Int { storage.count }

    @inline(__always) private func append(_ value: Any) {
        storage.array.append(value)
        storage.count += 1
    }

    mutating func encodeNil() throws {
        storage.count += 1
        if let null = encoder.form.null { storage.array.append(null) }
    }

    mutating func encode(_ value: Bool) throws { append(value) }
    mutating func encode(_ value: String) throws { append(encoder.string(value)) }
    mutating func encode(_ value: Double) throws { append(value) }
    mutating func encode(_ value: Float) throws { append(encoder.form.float(value)) }
    mutating func encode(_ value: Int) throws { append(value) }
    mutating func encode(_ value: Int8) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: Int16) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: Int32) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: Int64) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: UInt8) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: UInt16) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: UInt32) throws { append(encoder.form.integer(value)) }
    mutating func encode(_ value: UInt64) throws { append(encoder.form.integer(value)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { append(encoder.form.integer(value)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { append(encoder.form.integer(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = storage.count
        if let boxed = try encoder.box(value, parent: node, step: .index(index)) {
            append(boxed)
        } else {
            try encodeNil()
        }
    }

    /// Adds `item` at the next place; it is written when the parent is flattened.
    private func appendPending(_ item: Pending) {
        storage.pending.append((storage.array.count, item))
        append(Optional<Any>.none as Any)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nestedNode = encoder.levels.push(.index(storage.count), below: node)
        let nested = KeyedStorage()
        if !encoder.allowsNesting(below: node) {
            storage.record(.invalid(storage.count, encoder.form.depthProblem, at: encoder.levels.codingPath(of: nestedNode)))
        }
        appendPending(.keyed(nested))
        return KeyedEncodingContainer(EncodingKeyedContainer<NestedKey>(encoder: encoder, storage: nested, node: nestedNode))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nestedNode = encoder.levels.push(.index(storage.count), below: node)
        let nested = UnkeyedStorage()
        if !encoder.allowsNesting(below: node) {
            storage.record(.invalid(storage.count, encoder.form.depthProblem, at: encoder.levels.codingPath(of: nestedNode)))
        }
        appendPending(.unkeyed(nested))
        return EncodingUnkeyedContainer(encoder: encoder, storage: nested, node: nestedNode)
    }

    mutating func superEncoder() -> any Encoder {
        let superEncoder = encoder.makeSuperEncoder(at: node, step: .index(storage.count), existing: nil)
        appendPending(.encoder(superEncoder))
        return superEncoder
    }
}

/// What `nestedStorage(_:for:)` needs of the two kinds of container storage.
protocol NestedStorage: AnyObject {
    /// `a keyed container`, for messages.
    static var kind: String { get }
    init()
    /// Storage holding `value`, when it is a finished container of this kind.
    static func merging(_ value: Any) -> Self?
    /// The storage inside `pending`, when it is of this kind.
    static func existing(in pending: Pending) -> Self?
    /// This storage as a pending item of its parent.
    var asPending: Pending { get }
}

extension KeyedStorage: NestedStorage {
    static var kind: String { "a keyed container" }
    static func merging(_ value: Any) -> Self? {
        guard let dictionary = value as? [String: Any] else { return nil }
        return Self(merging: dictionary)
    }
    static func existing(in pending: Pending) -> Self? {
        guard case .keyed(let storage) = pending else { return nil }
        return storage as? Self
    }
    var asPending: Pending { .keyed(self) }
}

extension UnkeyedStorage: NestedStorage {
    static var kind: String { "an unkeyed container" }
    static func merging(_ value: Any) -> Self? {
        guard let array = value as? [Any] else { return nil }
        return Self(merging: array)
    }
    static func existing(in pending: Pending) -> Self? {
        guard case .unkeyed(let storage) = pending else { return nil }
        return storage as? Self
    }
    var asPending: Pending { .unkeyed(self) }
}
