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
    /// nils, nested containers and super encoders alike. The keys of a `[String: V]` are
    /// data and are left as they are, as Foundation's coders leave them. Two keys that
    /// become the same dictionary key throw `EncodingError.invalidValue` instead of one
    /// replacing the other. Default: `.useDefaultKeys`.
    public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys

    /// Creates an encoder with the default strategies.
    public init() {}

    /// Encodes a value into a plist-native `Any` tree.
    ///
    /// - Parameter value: The value to encode: a primitive, an optional, a collection,
    ///   a struct, a class or an enum.
    /// - Returns: The tree, or `nil` when `value` encodes as `nil` and the nil strategy
    ///   has no placeholder.
    /// - Throws: `EncodingError.invalidValue`, naming the path, when a strategy or the
    ///   value's own `encode(to:)` fails, or when the value nests too deep.
    public func encode<T: Encodable>(_ value: T) throws -> Any? {
        let form = PlainEncodingForm.form(nilStrategy: nilEncodingStrategy)
        guard let result = try encode(value, form: form) else {
            return nilEncodingStrategy.placeholderValue
        }
        return result
    }

    /// Encodes `value` in `form`; `nil` when it encoded `nil`.
    package func encode<T: Encodable>(_ value: T, form: any EncodingForm) throws -> Any? {
        try EncoderImpl(options: self, form: form, levels: PathLevels(), parent: nil, step: nil).box(value, parent: nil, step: nil)
    }
}

// MARK: - Encoder

/// What the value being encoded has written so far. A single value's tree is kept
/// beside it (`EncoderImpl.single`): an enum whose payloads are all references copies
/// and destroys inline, where one holding an `Any?` goes through value witnesses at
/// every value the encoder enters and leaves.
enum Slot {
    case empty
    case value
    case keyed(KeyedStorage)
    case unkeyed(UnkeyedStorage)
}

/// A value that is complete only when its parent is flattened: a nested container or a
/// super encoder, which the caller may go on writing to after the call that made it.
enum Pending {
    case keyed(KeyedStorage)
    case unkeyed(UnkeyedStorage)
    case encoder(EncoderImpl)
}

/// The contents of a keyed container. Reused from a pool once flattened.
final class KeyedStorage {
    @exclusivity(unchecked) var dictionary: [String: Any] = [:]
    @exclusivity(unchecked) var pending: [String: Pending] = [:]
    /// The coding key each dictionary key came from, when a key strategy converts
    /// them: two keys that become one would otherwise lose a value.
    @exclusivity(unchecked) var sourceKeys: [String: String] = [:]
    /// An error found where the protocol gives no way to throw (an `EncodingError`);
    /// thrown on flattening. Held as `any Error`, a single reference: testing an
    /// `EncodingError?` at every flattening copied it through value witnesses.
    @exclusivity(unchecked) var error: (any Error)?
    /// The size of the last dictionary built here: values of one type tend to come in a
    /// row (`[User]`), so reserving it saves the growth steps.
    @exclusivity(unchecked) var capacityHint = 0

    required init() {}

    init(merging dictionary: [String: Any]) {
        self.dictionary = dictionary
    }

    func record(_ error: @autoclosure () -> EncodingError) {
        if self.error == nil { self.error = error() }
    }

    /// Empty dictionaries with room for up to 32 entries, to start a container's
    /// dictionary from. A copy of one is a retain, and the first insertion makes the
    /// storage in code specialized for `[String: Any]`; `init(minimumCapacity:)` runs
    /// the standard library's unspecialized version, which looks up the generic metadata
    /// of its storage class on every call. Never mutated, so safe to share.
    nonisolated(unsafe) private static let emptyDictionaries: [[String: Any]] = (0...32).map { [String: Any](minimumCapacity: $0) }

    /// An empty dictionary with room for `capacity` entries.
    static func emptyDictionary(capacity: Int) -> [String: Any] {
        capacity < emptyDictionaries.count ? emptyDictionaries[capacity] : Dictionary(minimumCapacity: capacity)
    }

    func finish(_ encoder: EncoderImpl) throws -> [String: Any] {
        if let error = self.error {
            self.error = nil
            throw error
        }
        // Swapped out, not copied: a copy would retain the storage and the reset release it.
        var result: [String: Any] = [:]
        swap(&result, &dictionary)
        if !sourceKeys.isEmpty { sourceKeys = [:] }
        if !pending.isEmpty {
            let items = pending
            pending = [:]
            for (key, item) in items {
                result[key] = try encoder.resolve(item) ?? encoder.form.null
            }
        }
        capacityHint = result.count
        return result
    }
}

/// The contents of an unkeyed container. Reused from a pool once flattened.
final class UnkeyedStorage {
    @exclusivity(unchecked) var array: [Any] = []
    /// Nested containers and super encoders, by their place in `array`.
    @exclusivity(unchecked) var pending: [(position: Int, item: Pending)] = []
    /// How many values were encoded, including any that a nil strategy left out.
    @exclusivity(unchecked) var count = 0
    /// As in `KeyedStorage`: an `EncodingError`, held as a single reference.
    @exclusivity(unchecked) var error: (any Error)?
    @exclusivity(unchecked) var capacityHint = 0

    required init() {}

    init(merging array: [Any]) {
        self.array = array
        self.count = array.count
    }

    func record(_ error: @autoclosure () -> EncodingError) {
        if self.error == nil { self.error = error() }
    }

    func finish(_ encoder: EncoderImpl) throws -> [Any] {
        if let error = self.error {
            self.error = nil
            throw error
        }
        var result = array
        array = []
        count = 0
        if !pending.isEmpty {
            let items = pending
            pending = []
            var leftOut: [Int] = []
            for (position, item) in items {
                if let value = try encoder.resolve(item) ?? encoder.form.null {
                    result[position] = value
                } else {
                    leftOut.append(position)
                }
            }
            for position in leftOut.reversed() { result.remove(at: position) }
        }
        capacityHint = result.count
        return result
    }
}

/// The one object that encodes a whole tree: it saves and restores the path and slot of
/// the current value around each nested value instead of making an encoder per value.
final class EncoderImpl: Encoder, SingleValueEncodingContainer {
    let options: KeyValueEncoder
    let form: any EncodingForm
    /// Converted when a value's `encode(to:)` first asks for it, not for every coder.
    private(set) lazy var userInfo: [CodingUserInfoKey: Any] = codingUserInfo(options.userInfo)
    /// Whether a coding key's `stringValue` is the dictionary key, with nothing to check.
    let usesKeysAsTheyAre: Bool
    /// Whether the key strategy changes keys (and so must leave `[String: V]` keys alone).
    let convertsKeys: Bool
    /// The path of the value being encoded; a super encoder starts from a copy.
    @exclusivity(unchecked) var levels: PathLevels
    // The form's constant answers, kept here: asking the form is a call through its
    // protocol, with a retain and a release of it, for every field.
    /// Whether strings are written as they are (the plain tree).
    let writesStringsAsTheyAre: Bool
    let wrapsOptionals: Bool
    let containerDepthLimit: Int

    // The state below is written several times per value; it is only ever touched by
    // the thread running the encode, so runtime exclusivity checks are switched off.

    /// The node of the container that holds the value being encoded.
    @exclusivity(unchecked) var parent: CodingPathNode?
    /// The value's step below `parent`, or `nil` when it is the same value (the root, or
    /// a value encoded through a single value container).
    @exclusivity(unchecked) var step: PathStep?
    @exclusivity(unchecked) var slot: Slot = .empty
    /// The tree written through the single value container, while `slot` is `.value`.
    @exclusivity(unchecked) var single: Any?
    /// A misuse of this value's encoder (a second kind of container, a container too
    /// deep), thrown as soon as its `encode(to:)` returns: the protocol gives those
    /// calls no way to throw.
    @exclusivity(unchecked) var misuse: CoderMisuse?
    @exclusivity(unchecked) var nesting = NestingGuard()
    @exclusivity(unchecked) var modelTypes = ModelTypes()
    @exclusivity(unchecked) var keyedPool: [KeyedStorage] = []
    @exclusivity(unchecked) var unkeyedPool: [UnkeyedStorage] = []

    init(options: KeyValueEncoder, form: any EncodingForm, levels: PathLevels, parent: CodingPathNode?, step: PathStep?) {
        self.options = options
        self.form = form
        self.levels = levels
        writesStringsAsTheyAre = form is PlainEncodingForm
        wrapsOptionals = form.wrapsOptionals
        containerDepthLimit = form.containerDepthLimit
        if case .useDefaultKeys = options.keyEncodingStrategy {
            usesKeysAsTheyAre = !form.checksKeys
            convertsKeys = false
        } else {
            usesKeysAsTheyAre = false
            convertsKeys = true
        }
        self.parent = parent
        self.step = step
    }

    var codingPath: [any CodingKey] { levels.codingPath(of: parent, then: step) }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let node = levels.settle(&step, below: &parent)
        let storage: KeyedStorage
        switch slot {
        case .keyed(let existing):
            storage = existing
        case .empty:
            storage = keyedPool.popLast() ?? KeyedStorage()
            // With no size to go by, a value at the top (a settings struct, typically)
            // gets room for a dozen keys: growing from nothing rehashes them three or four
            // times. Nested containers start empty, since deep values are mostly small.
            let capacity = storage.capacityHint > 0 ? storage.capacityHint : (node == nil ? 12 : 0)
            if capacity > 0 { storage.dictionary = KeyedStorage.emptyDictionary(capacity: capacity) }
            slot = .keyed(storage)
            checkContainerDepth(node)
        case .value, .unkeyed:
            storage = KeyedStorage()
            misuse = misuse ?? .keyedAfterOther
        }
        return KeyedEncodingContainer(EncodingKeyedContainer<Key>(encoder: self, storage: storage, node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let node = levels.settle(&step, below: &parent)
        let storage: UnkeyedStorage
        switch slot {
        case .unkeyed(let existing):
            storage = existing
        case .empty:
            storage = unkeyedPool.popLast() ?? UnkeyedStorage()
            if storage.capacityHint > 0 { storage.array.reserveCapacity(storage.capacityHint) }
            slot = .unkeyed(storage)
            checkContainerDepth(node)
        case .value, .keyed:
            storage = UnkeyedStorage()
            misuse = misuse ?? .unkeyedAfterOther
        }
        return EncodingUnkeyedContainer(encoder: self, storage: storage, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// Records the problem when a container for the value at `node` would sit deeper
    /// than the form allows.
    private func checkContainerDepth(_ node: CodingPathNode?) {
        if !allowsContainer(at: node) {
            misuse = misuse ?? .tooDeep(message: form.depthProblem)
        }
    }

    /// Whether a container for the value at `node` (`depth` containers deep) stays
    /// within the form's depth.
    @inline(__always)
    func allowsContainer(at node: CodingPathNode?) -> Bool {
        (node?.depth ?? 0) < containerDepthLimit
    }

    /// Whether a container nested in the container at `node` stays within the form's depth.
    @inline(__always)
    func allowsNesting(below node: CodingPathNode?) -> Bool {
        (node?.depth ?? 0) + 1 < containerDepthLimit
    }

    /// `value` as the form writes a string.
    @inline(__always)
    func string(_ value: String) -> Any {
        writesStringsAsTheyAre ? value : form.string(value)
    }

    // MARK: SingleValueEncodingContainer

    private func setSingle(_ value: Any?) {
        guard case .empty = slot else {
            misuse = misuse ?? .valueAfterOther
            return
        }
        slot = .value
        single = value
    }

    /// A `PropertyListValue`'s date: as any date, but one the form would write as a
    /// number is marked as a date, since a `PropertyListValue` reads a number back as
    /// `.double`.
    func encodeKeptDate(_ date: Date) throws {
        guard case .date = options.dateEncodingStrategy else { return try encode(date) }
        setSingle(form.keptDate(date))
    }

    func encodeNil() throws { setSingle(nil) }
    func encode(_ value: Bool) throws { setSingle(value) }
    func encode(_ value: String) throws { setSingle(string(value)) }
    func encode(_ value: Double) throws { setSingle(value) }
    func encode(_ value: Float) throws { setSingle(form.float(value)) }
    func encode(_ value: Int) throws { setSingle(value) }
    func encode(_ value: Int8) throws { setSingle(form.integer(value)) }
    func encode(_ value: Int16) throws { setSingle(form.integer(value)) }
    func encode(_ value: Int32) throws { setSingle(form.integer(value)) }
    func encode(_ value: Int64) throws { setSingle(form.integer(value)) }
    func encode(_ value: UInt) throws { setSingle(form.integer(value)) }
    func encode(_ value: UInt8) throws { setSingle(form.integer(value)) }
    func encode(_ value: UInt16) throws { setSingle(form.integer(value)) }
    func encode(_ value: UInt32) throws { setSingle(form.integer(value)) }
    func encode(_ value: UInt64) throws { setSingle(form.integer(value)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws { setSingle(form.integer(value)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws { setSingle(form.integer(value)) }
    func encode<T: Encodable>(_ value: T) throws { setSingle(try box(value, parent: parent, step: step)) }

    // MARK: Keys

    /// The dictionary key for `key` in the container at `node`: the one place the key
    /// strategy is applied. Returns the problem instead when the key cannot be written.
    func dictionaryKey(_ key: some CodingKey, in storage: KeyedStorage, at node: CodingPathNode?) -> (String, EncodingError?) {
        let name: String
        switch options.keyEncodingStrategy {
        case .useDefaultKeys:
            name = key.stringValue
            if let problem = form.problem(withKey: name) {
                return (name, .invalid(key.stringValue, form.message(for: problem), in: levels, at: node, .key(key)))
            }
            return (name, nil)
        case .convertToSnakeCase:
            name = convertToSnakeCase(key.stringValue)
        case .custom(let closure):
            name = closure(levels.codingPath(of: node, then: .key(key))).stringValue
        }
        if let previous = storage.sourceKeys.updateValue(key.stringValue, forKey: name), previous != key.stringValue {
            return (name, .invalid(key.stringValue, "Keys \"\(previous)\" and \"\(key.stringValue)\" both become \"\(name)\"", in: levels, at: node, .key(key)))
        }
        if let problem = form.problem(withKey: name) {
            return (name, .invalid(key.stringValue, form.message(for: problem), in: levels, at: node, .key(key)))
        }
        return (name, nil)
    }

    /// A super encoder for the value `step` below the container at `node`, starting from
    /// what is already there (`existing`), as Foundation's coders merge into it.
    func makeSuperEncoder(at node: CodingPathNode?, step: PathStep, existing: Any?) -> EncoderImpl {
        let encoder = EncoderImpl(options: options, form: form, levels: levels, parent: node, step: step)
        encoder.nesting = nesting
        if let existing {
            if let dictionary = existing as? [String: Any] {
                encoder.slot = .keyed(KeyedStorage(merging: dictionary))
            } else if let array = existing as? [Any] {
                encoder.slot = .unkeyed(UnkeyedStorage(merging: array))
            } else {
                encoder.slot = .value
                encoder.single = existing
            }
        }
        return encoder
    }
}
