// How the decoder reads each kind of value: the metatype checks first, then numbers,
// strings, dates, data, URLs, and collections, each with its strategy.

import Foundation

extension DecoderImpl {
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
