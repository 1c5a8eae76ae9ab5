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
    @exclusivity(unchecked) private var parent: CodingPathNode?
    /// The value's step below `parent`, or `nil` when it is the same value (the root, or
    /// a value encoded through a single value container).
    @exclusivity(unchecked) private var step: PathStep?
    @exclusivity(unchecked) private var slot: Slot = .empty
    /// The tree written through the single value container, while `slot` is `.value`.
    @exclusivity(unchecked) private var single: Any?
    /// A misuse of this value's encoder (a second kind of container, a container too
    /// deep), thrown as soon as its `encode(to:)` returns: the protocol gives those
    /// calls no way to throw.
    @exclusivity(unchecked) private var misuse: CoderMisuse?
    @exclusivity(unchecked) private var nesting = NestingGuard()
    @exclusivity(unchecked) private var modelTypes = ModelTypes()
    @exclusivity(unchecked) private var keyedPool: [KeyedStorage] = []
    @exclusivity(unchecked) private var unkeyedPool: [UnkeyedStorage] = []

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

    // MARK: Boxing

    /// Encodes `value`, which sits `step` below the container at `parent`, and returns
    /// its tree, or `nil` for an encoded `nil`.
    func box<T: Encodable>(_ value: T, parent: CodingPathNode?, step: @autoclosure () -> PathStep?) throws -> Any? {
        // Metatype checks first: they cost a pointer compare and skip `encode(to:)`.
        if T.self == String.self { return string(sameType(value, as: String.self)) }
        if T.self == Int.self { return sameType(value, as: Int.self) }
        if T.self == Double.self { return sameType(value, as: Double.self) }
        if T.self == Bool.self { return sameType(value, as: Bool.self) }
        if modelTypes.contains(T.self) { return try boxEncodable(value, parent: parent, step: step()) }
        // The other leaves before the collections: their metatypes need no look-up.
        if T.self == Date.self { return try boxDate(sameType(value, as: Date.self), parent: parent, step: step()) }
        if T.self == URL.self { return try boxURL(sameType(value, as: URL.self), parent: parent, step: step()) }
        if T.self == Data.self { return try boxData(sameType(value, as: Data.self), parent: parent, step: step()) }
        if T.self == Decimal.self {
            let step = step()
            return try form.decimal(sameType(value, as: Decimal.self)) { levels.codingPath(of: parent, then: step) }
        }
        // Homogeneous arrays and String-keyed dictionaries of plist primitives are
        // already a valid tree, unless they would sit deeper than the form allows (the
        // long way then throws with the path).
        if allowsNesting(below: parent) {
            if T.self == PrimitiveArrays.strings {
                let strings = sameType(value, as: [String].self)
                return writesStringsAsTheyAre ? strings : form.strings(strings)
            }
            if T.self == PrimitiveArrays.ints || T.self == PrimitiveArrays.doubles || T.self == PrimitiveArrays.bools {
                return value
            }
            if T.self == PrimitiveDictionaries.strings,
                let whole = form.primitiveDictionary(value, strings: sameType(value, as: [String: String].self))
            {
                return whole
            }
            if T.self == PrimitiveDictionaries.ints || T.self == PrimitiveDictionaries.doubles || T.self == PrimitiveDictionaries.bools,
                let whole = form.primitiveDictionary(value, strings: nil)
            {
                return whole
            }
        }
        if wrapsOptionals, let optional = value as? any WrappableOptional {
            return try optional.box(into: self, parent: parent, step: step())
        }
        if convertsKeys, let dictionary = value as? any StringKeyedDictionary {
            return try dictionary.boxEntries(into: self, parent: parent, step: step())
        }
        // Every compare above but the pass-through ones depends on the type alone. The
        // root value is written once, and not worth remembering.
        if parent != nil && !isPassedThrough(T.self) { modelTypes.remember(T.self) }
        return try boxEncodable(value, parent: parent, step: step())
    }

    /// A `[String: V]`, whose keys are data: the key strategy leaves them as they are,
    /// as in Foundation's coders.
    func boxDictionary<Value: Encodable>(_ dictionary: [String: Value], parent: CodingPathNode?, step: PathStep?) throws -> Any {
        try nesting.enter { EncodingError.tooDeep(dictionary, $0, in: levels, at: parent, step) }
        let height = levels.height
        defer {
            levels.pop(to: height)
            nesting.leave()
        }
        let node = levels.appending(step, to: parent)
        if !allowsContainer(at: node) {
            throw EncodingError.invalid(dictionary, form.depthProblem, in: levels, at: parent, step)
        }
        var result: [String: Any] = [:]
        result.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            if let problem = form.problem(withKey: key).map(form.message(for:)) {
                throw EncodingError.invalid(value, problem, in: levels, at: node, .key(KeyValueCodingKey(stringValue: key)))
            }
            if let boxed = try box(value, parent: node, step: .key(KeyValueCodingKey(stringValue: key))) {
                result.setEntry(boxed, forKey: key)
            } else if let null = form.null {
                result.setEntry(null, forKey: key)
            }
        }
        return result
    }

    /// Runs `value.encode(to:)` with this encoder one level down, and flattens what it wrote.
    private func boxEncodable<T: Encodable>(_ value: T, parent: CodingPathNode?, step: consuming PathStep?) throws -> Any? {
        // The value being encoded was already misused (a container past the depth
        // limit): going on into its children would recurse until the stack ends, and
        // report a reference cycle as the stack's fault rather than the nesting's.
        if misuse != nil { throw misused(value) }
        try nesting.enter { EncodingError.tooDeep(value, $0, in: levels, at: parent, step) }
        // The levels this value's containers push are dropped once it is flattened.
        let height = levels.height
        // The state is swapped in and out, not copied: a step holds an existential
        // key, and each copy of one (and each test of its optional) is a call through
        // the key type's value witnesses. Each `other…` holds the state the encoder
        // does not: this value's until the first swap, then the outer value's.
        var otherParent = parent
        var otherStep = step
        var otherSlot = Slot.empty
        var otherMisuse: CoderMisuse?
        swap(&self.parent, &otherParent)
        swap(&self.step, &otherStep)
        swap(&self.slot, &otherSlot)
        swap(&self.misuse, &otherMisuse)
        // The outer value's single tree, when it has one, waits here too: a container
        // kept from another value may still encode into this encoder.
        var otherSingle: Any?
        if case .value = otherSlot { swap(&self.single, &otherSingle) }
        defer {
            swap(&self.parent, &otherParent)
            swap(&self.step, &otherStep)
            swap(&self.slot, &otherSlot)
            swap(&self.misuse, &otherMisuse)
            if case .value = self.slot { swap(&self.single, &otherSingle) }
            levels.pop(to: height)
            nesting.leave()
        }
        try value.encode(to: self)
        if misuse != nil { throw misused(value) }
        return try finishSlot()
    }

    /// The error for the misuse of the value being encoded. Not inlined: its locals would
    /// grow the frame of every level of `boxEncodable`, and so how deep the stack lets a
    /// value go (several hundred bytes a level under AddressSanitizer).
    @inline(never)
    private func misused<T>(_ value: T) -> EncodingError {
        EncodingError.invalid(value, misuse?.message ?? "", at: codingPath)
    }

    /// Flattens what the current value wrote, and clears it.
    private func finishSlot() throws -> Any? {
        var written = Slot.empty
        swap(&slot, &written)
        switch consume written {
        case .empty:
            // As JSONEncoder does: a value that writes nothing is an empty dictionary.
            return [String: Any]()
        case .value:
            return single.take()
        case .keyed(let storage):
            let result = try storage.finish(self)
            // Moved, not copied, into the pool: each copy is a retain and a release.
            var pooled = consume storage
            if isKnownUniquelyReferenced(&pooled) { keyedPool.append(consume pooled) }
            return result
        case .unkeyed(let storage):
            let result = try storage.finish(self)
            var pooled = consume storage
            if isKnownUniquelyReferenced(&pooled) { unkeyedPool.append(consume pooled) }
            return result
        }
    }

    /// The tree of a nested container or super encoder, once its parent is complete.
    fileprivate func resolve(_ item: Pending) throws -> Any? {
        switch item {
        case .keyed(let storage):
            return try storage.finish(self)
        case .unkeyed(let storage):
            return try storage.finish(self)
        case .encoder(let encoder):
            if let misuse = encoder.misuse {
                throw EncodingError.invalid(Optional<Any>.none as Any, misuse.message, at: encoder.codingPath)
            }
            return try encoder.finishSlot()
        }
    }

    private func boxDate(_ date: Date, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.dateEncodingStrategy {
        case .date:
            return form.date(date)
        case .secondsSince1970:
            return date.timeIntervalSince1970
        case .millisecondsSince1970:
            return date.timeIntervalSince1970 * 1000
        case .iso8601(let fractional):
            // The text must read back as this date, to the strategy's precision: a NaN
            // or infinite date, or one outside the years ISO 8601 writes, does not.
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: fractional)
            let text = date.formatted(style)
            guard let back = try? style.parse(text), Self.isSameDate(back, date, within: fractional ? 0.001 : 1) else {
                throw EncodingError.unwritableDate(date, strategy: ".iso8601", text: text, in: levels, at: parent, step)
            }
            return form.string(text)
        case .formatted(let formatter):
            // A format may keep less than the date (a day, say), but what it reads back
            // must be the same date to within a year: a format without the era, or with
            // two-digit years, reads another date outside its range.
            let text = formatter.string(from: date)
            guard let back = formatter.date(from: text), Self.isSameDate(back, date, within: 366 * 86_400) else {
                throw EncodingError.unwritableDate(date, strategy: ".formatted", text: text, in: levels, at: parent, step)
            }
            return form.string(text)
        case .custom(let closure):
            return try custom(date, parent: parent, step: step) { try closure(date) }
        }
    }

    /// Whether `a` and `b` are the same date to within `precision` seconds; never for a
    /// date that is not finite.
    private static func isSameDate(_ a: Date, _ b: Date, within precision: Double) -> Bool {
        let difference = abs(a.timeIntervalSinceReferenceDate - b.timeIntervalSinceReferenceDate)
        return difference.isFinite && difference < precision
    }

    private func boxURL(_ url: URL, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.urlEncodingStrategy {
        case .url:
            return try form.url(url, depth: depth(parent, step)) { levels.codingPath(of: parent, then: step) }
        case .absoluteString:
            return form.string(url.absoluteString)
        case .custom(let closure):
            return try custom(url, parent: parent, step: step) { try closure(url) }
        }
    }

    private func boxData(_ data: Data, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        switch options.dataEncodingStrategy {
        case .data:
            return data
        case .base64:
            return form.string(data.base64EncodedString())
        case .custom(let closure):
            return try custom(data, parent: parent, step: step) { try closure(data) }
        }
    }

    /// Runs a `.custom` strategy closure for `value`, and has the form check what it made.
    private func custom(_ value: Any, parent: CodingPathNode?, step: PathStep?, _ closure: () throws -> Any) throws -> Any {
        let output = try runCustomStrategy(closure) { error in
            EncodingError.invalid(value, "Custom strategy failed", in: levels, at: parent, step, underlyingError: error)
        }
        return try form.custom(output, depth: depth(parent, step)) { levels.codingPath(of: parent, then: step) }
    }

    /// How many containers the value `step` below the container at `node` sits in.
    private func depth(_ node: CodingPathNode?, _ step: PathStep?) -> Int {
        (node?.depth ?? 0) + (step == nil ? 0 : 1)
    }

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

// MARK: - Optionals

/// Lets a form that writes `Optional` values itself see each level of a nested optional.
private protocol WrappableOptional {
    func box(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any
}

extension Optional: WrappableOptional where Wrapped: Encodable {
    fileprivate func box(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        guard let wrapped = self else { return encoder.form.none }
        return encoder.form.wrapSome(try encoder.box(wrapped, parent: parent, step: step))
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

// MARK: - Dictionaries with String keys

/// `[String: V]`, found by a cast where a key strategy must leave its keys alone.
private protocol StringKeyedDictionary {
    func boxEntries(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func boxEntries(into encoder: EncoderImpl, parent: CodingPathNode?, step: PathStep?) throws -> Any {
        try encoder.boxDictionary(self, parent: parent, step: step)
    }
}
