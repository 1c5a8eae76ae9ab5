// A property-list value as a Swift enum: what the coders' `Any` trees hold, typed, so
// that it can be compared, hashed, sent across tasks and written as a literal.

import Foundation

/// Any value a property list can hold: a string, an integer, a double, a `Bool`, a date,
/// data, or an array or dictionary of them.
///
/// ```swift
/// let settings: PropertyListValue = ["volume": 0.8, "tags": ["a", "b"], "beta": true]
/// let tree: PropertyListValue = try KeyValueEncoder().encode(user)     // one call
/// let back = try KeyValueDecoder().decode(User.self, from: tree)       // and back
/// try UserDefaults.standard.encode(settings, forKey: "settings")      // stored natively
/// ```
///
/// It is `Codable`, so it goes through typed keys and `@UserDefault` like any value, and
/// is stored in its native form: a dictionary as a plist dictionary.
public enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer up to `Int.max`.
    case integer(Int)
    /// An integer above `Int.max`, which only an unsigned 64-bit integer holds
    /// (`UInt64.max`, as a suite keeps it). An integer that `Int` holds is always
    /// `.integer`.
    case unsignedInteger(UInt64)
    /// A floating-point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An array of values.
    case array([PropertyListValue])
    /// A dictionary of values by string keys.
    case dictionary([String: PropertyListValue])

    /// The value of an `Any` tree as the coders and `UserDefaults` hand one over, or `nil`
    /// when the tree holds something a property list cannot (`nil`, a `URL`, a set, a
    /// number wider than 64 bits) or is nested deeper than 512 containers, or than the
    /// running thread's stack allows.
    ///
    /// - Parameter tree: A tree of strings, numbers, `Bool`s, dates, data, arrays and
    ///   dictionaries with string keys.
    public init?(_ tree: Any) {
        var nesting = NestingGuard()
        guard let value = Self.make(tree, containersLeft: NestingGuard.maximumContainers, nesting: &nesting, reading: { $0 }) else {
            return nil
        }
        self = value
    }

    /// The value of `tree`, each string leaf first read by `reading` (a form's plain
    /// value: a stored decimal, date or wide integer); `nil` for what a property list
    /// cannot hold, or for a tree nested deeper than `containersLeft` or than `nesting`
    /// lets the stack go.
    static func make(_ tree: Any, containersLeft: Int, nesting: inout NestingGuard, reading: (Any) -> Any) -> PropertyListValue? {
        var node = TreeValue(tree)
        if case .string? = node { node = TreeValue(reading(tree)) }
        switch node {
        case .string(let string)?: return .string(string)
        case .number(let number)?:
            switch number {
            case .bool(let bool): return .bool(bool)
            case .signed(let int, _): return Int(exactly: int).map(PropertyListValue.integer)
            case .unsigned(let uint, _): return Int(exactly: uint).map(PropertyListValue.integer) ?? .unsignedInteger(uint)
            case .double(let double): return .double(double)
            case .float(let float): return .double(Double(float))
            case .decimal, .wide, .text: return nil
            }
        case .date(let date)?: return .date(date)
        case .data(let data)?: return .data(data)
        case .dictionary(let dictionary)?:
            guard containersLeft > 0, nesting.tryEnter() else { return nil }
            defer { nesting.leave() }
            var values: [String: PropertyListValue] = [:]
            values.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let element = make(element, containersLeft: containersLeft - 1, nesting: &nesting, reading: reading) else { return nil }
                values[key] = element
            }
            return .dictionary(values)
        case .array(let array)?:
            guard containersLeft > 0, nesting.tryEnter() else { return nil }
            defer { nesting.leave() }
            var values: [PropertyListValue] = []
            values.reserveCapacity(array.count)
            for element in array {
                guard let element = make(element, containersLeft: containersLeft - 1, nesting: &nesting, reading: reading) else { return nil }
                values.append(element)
            }
            return .array(values)
        case nil:
            return nil
        }
    }

    /// The value as an `Any` tree, as `PropertyListSerialization` and the coders use.
    public var tree: Any {
        switch self {
        case .string(let string): return string
        case .integer(let int): return int
        case .unsignedInteger(let uint): return uint
        case .double(let double): return double
        case .bool(let bool): return bool
        case .date(let date): return date
        case .data(let data): return data
        case .array(let array): return array.map(\.tree)
        case .dictionary(let dictionary): return dictionary.mapValues(\.tree)
        }
    }

    // MARK: - Typed accessors

    /// The string, or `nil` for another kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, or `nil` for another kind of value.
    public var intValue: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`: a double, or an integer a `Double` holds exactly.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .integer(let value): return Double(exactly: value)
        case .unsignedInteger(let value): return Double(exactly: value)
        default: return nil
        }
    }

    /// The Boolean, or `nil` for another kind of value.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The date, or `nil` for another kind of value.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, or `nil` for another kind of value.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The array, or `nil` for another kind of value.
    public var arrayValue: [PropertyListValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The dictionary, or `nil` for another kind of value.
    public var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The value under `key` in a dictionary; `nil` for a missing key or another kind.
    ///
    /// - Parameter key: The key.
    public subscript(key: String) -> PropertyListValue? {
        dictionaryValue?[key]
    }

    /// The element at `index` in an array; `nil` out of range or for another kind.
    ///
    /// - Parameter index: The index.
    public subscript(index: Int) -> PropertyListValue? {
        guard let array = arrayValue, array.indices.contains(index) else { return nil }
        return array[index]
    }
}

// MARK: - Codable

extension PropertyListValue: Codable {
    /// Writes the value as what it holds: a string as a string, a dictionary as a keyed
    /// container, and so on.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        // A date that the stored form writes as a number is marked as a date there.
        if case .date(let date) = self, let encoder = encoder as? EncoderImpl { return try encoder.encodeKeptDate(date) }
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsignedInteger(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .data(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .dictionary(let value): try container.encode(value)
        }
    }

    /// Reads whatever the decoder holds, trying the kinds in turn: a `Bool` before a
    /// number, an integer before a double, an array before bytes (an array of small
    /// integers could read as `Data`).
    ///
    /// A decoder that reads a whole real as an integer too cannot say which of the two it
    /// holds. Foundation's `PropertyListDecoder` is one: measured (Swift 6.3.1), a
    /// `<real>5</real>` and an `<integer>5</integer>`, XML or binary, answer every
    /// single-value decode alike (`Int`, `Int8`, `UInt64`, `Double`, `Float`, `Float16`
    /// succeed; `Bool`, `String`, `Date`, `Data` fail), so no order of tries tells them
    /// apart, and a whole `.double` read this way comes back as `.integer` (`-0.0`, which
    /// no integer is, stays a double). `KeyValueDecoder`, a suite's typed reads, and this
    /// package's reads of legacy `.propertyList` blobs read the tree itself, and keep
    /// every kind: integer and real, and the whole unsigned range.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError.typeMismatch` when the value is none of the kinds.
    public init(from decoder: any Decoder) throws {
        if let tree = decoder.userInfo[.propertyListTree] as? PropertyListTree, let node = Self.node(in: tree.value, at: decoder.codingPath),
            let value = PropertyListValue(node)
        {
            self = value
            return
        }
        // A foreign decoder recurses into this initializer once per level, with no guard
        // of the package's: a binary property list has no depth limit, and a few hundred
        // levels overflow a 512 KiB thread. Checked here, at each level.
        if decoder.codingPath.count >= NestingGuard.maximumContainers {
            throw DecodingError.tooDeep(.containers, at: decoder.codingPath)
        }
        if ThreadStack.isNearlyExhausted() { throw DecodingError.tooDeep(.stack, at: decoder.codingPath) }
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            if value == 0, let double = try? container.decode(Double.self), double.sign == .minus {
                self = .double(double)
            } else {
                self = .integer(value)
            }
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsignedInteger(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Date.self) {
            self = .date(value)
        } else if var elements = try? decoder.unkeyedContainer() {
            // Through the containers, so that an element's own error (nested too deep)
            // is thrown as it is rather than taken for another kind.
            var values: [PropertyListValue] = []
            while !elements.isAtEnd { values.append(try elements.decode(PropertyListValue.self)) }
            self = .array(values)
        } else if let entries = try? decoder.container(keyedBy: KeyValueCodingKey.self) {
            var values: [String: PropertyListValue] = [:]
            for key in entries.allKeys { values[key.stringValue] = try entries.decode(PropertyListValue.self, forKey: key) }
            self = .dictionary(values)
        } else if let value = try? container.decode(Data.self) {
            self = .data(value)
        } else {
            throw DecodingError.typeMismatch(
                PropertyListValue.self,
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "Expected a property-list value at \(messagePath(decoder.codingPath))"))
        }
    }
}

extension PropertyListValue {
    /// The value at `path` in `tree`: keys of dictionaries, indexes of arrays.
    fileprivate static func node(in tree: Any, at path: [any CodingKey]) -> Any? {
        var node = tree
        for key in path {
            switch TreeValue(node) {
            case .dictionary(let dictionary)?:
                guard let next = dictionary[key.stringValue] else { return nil }
                node = next
            case .array(let array)?:
                guard let index = key.intValue, array.indices.contains(index) else { return nil }
                node = array[index]
            default:
                return nil
            }
        }
        return node
    }
}

/// A tree read from property-list bytes, handed to a decoder in its `userInfo`.
package struct PropertyListTree: @unchecked Sendable {
    // Unchecked: a tree of Foundation's property-list values, never mutated once read.
    let value: Any

    package init(value: Any) { self.value = value }
}

extension CodingUserInfoKey {
    /// The tree a foreign decoder (`PropertyListDecoder`) reads, set by this package
    /// where it has one, so that a `PropertyListValue` in it reads the kind it was.
    package static let propertyListTree = CodingUserInfoKey(rawValue: "DefaultsCoder.propertyListTree")!
}

// MARK: - Literals

extension PropertyListValue: ExpressibleByStringLiteral {
    /// A string value.
    ///
    /// - Parameter value: The string.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension PropertyListValue: ExpressibleByIntegerLiteral {
    /// An integer value.
    ///
    /// - Parameter value: The integer.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension PropertyListValue: ExpressibleByFloatLiteral {
    /// A double value.
    ///
    /// - Parameter value: The number.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension PropertyListValue: ExpressibleByBooleanLiteral {
    /// A Boolean value.
    ///
    /// - Parameter value: The Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PropertyListValue: ExpressibleByArrayLiteral {
    /// An array value.
    ///
    /// - Parameter elements: The elements.
    public init(arrayLiteral elements: PropertyListValue...) { self = .array(elements) }
}

extension PropertyListValue: ExpressibleByDictionaryLiteral {
    /// A dictionary value; a key given twice keeps its last value.
    ///
    /// - Parameter elements: The keys and values.
    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

// MARK: - The coders, in one call

extension KeyValueEncoder {
    /// Encodes a value into a `PropertyListValue`.
    ///
    /// ```swift
    /// let value: PropertyListValue = try KeyValueEncoder().encode(user)
    /// ```
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: Its tree, typed.
    /// - Throws: `EncodingError.invalidValue` when the tree holds what a property list
    ///   cannot (`nil` under the default nil strategy, a `URL` under `.url`, a
    ///   `Decimal`); use `.removed` or `.absoluteString` strategies for those.
    @_disfavoredOverload
    public func encode<T: Encodable>(_ value: T) throws -> PropertyListValue {
        let tree: Any? = try encode(value)
        guard let tree, let plist = PropertyListValue(tree) else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: [], debugDescription: "The tree of \(T.self) holds a value a property list cannot"))
        }
        return plist
    }
}

extension KeyValueDecoder {
    /// Decodes a value from a `PropertyListValue`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The value to read.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` naming the path of what does not decode.
    public func decode<T: Decodable>(_ type: T.Type, from value: PropertyListValue) throws -> T {
        try decode(type, from: value.tree)
    }
}
