//
//  CodableUtilities.swift
//  DefaultsCoder
//
//  Shared machinery of KeyValueEncoder and KeyValueDecoder: coding keys, the coding path,
//  the error builders, number classification and key conversion.
//

import Foundation

// MARK: - Coding keys

/// A coding key made from a string or an integer.
///
/// Hand one back from a `.custom` key strategy, or use it to build coding paths in tests.
///
/// ```swift
/// encoder.keyEncodingStrategy = .custom { path in
///     KeyValueCodingKey(stringValue: path.last!.stringValue.uppercased())
/// }
/// ```
public struct KeyValueCodingKey: CodingKey, Hashable, Sendable {
    /// The key as a string.
    public let stringValue: String
    /// The key as an integer, when it has one.
    public let intValue: Int?

    /// Creates a key from a string.
    /// - Parameter stringValue: The key.
    public init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    /// Creates a key from an integer, such as an array index.
    /// - Parameter intValue: The key; its `stringValue` is the decimal form.
    public init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    /// Creates a key with both forms.
    /// - Parameters:
    ///   - stringValue: The string form.
    ///   - intValue: The integer form.
    public init(stringValue: String, intValue: Int?) {
        self.stringValue = stringValue
        self.intValue = intValue
    }

    /// The key that superclass values are stored under, as in Foundation's coders.
    public static let `super` = KeyValueCodingKey(stringValue: "super")
}

/// The key of an element of an unkeyed container. Kept apart from `KeyValueCodingKey`
/// so that readable paths print it as `[3]`, and a dictionary key `"3"` as `.3`.
struct IndexCodingKey: CodingKey, Sendable {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(intValue: Int) { self.index = intValue }
    init?(stringValue: String) { nil }
    var intValue: Int? { index }
    var stringValue: String { "Index \(index)" }
}

// MARK: - Coding path

/// One step down a coding path.
///
/// Coders keep the path of the value they are working on as a stack of steps that is
/// pushed and popped as they descend, and turn it into `[any CodingKey]` only when an
/// error is thrown or `codingPath` is read. A step holds a key existential inline, so
/// going one level deeper allocates nothing: this keeps a `[User]` of 1,000 values from
/// paying a heap node per value.
enum PathStep {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): return key
        case .index(let index): return IndexCodingKey(index)
        }
    }
}

/// The stack of steps from the root to the value being coded.
/// How many levels deep the coders go; deeper, they throw instead of recursing on.
///
/// Every level costs stack: measured on Linux x86_64, about 1 KB in a release build and
/// 4 KB in a debug build, so an unchecked tree 2,000 levels deep overflowed the 8 MB main
/// thread in a debug build. A stored tree that deep is damaged, not a settings model, and
/// reading it must not crash the app at launch. 512 is also the nesting `JSONDecoder`
/// accepts when parsing.
let maximumNestingDepth = 512

struct PathStack {
    private(set) var steps: ContiguousArray<PathStep> = []

    init() { steps.reserveCapacity(16) }

    init(prefix: [any CodingKey]) {
        steps.reserveCapacity(prefix.count + 16)
        for key in prefix {
            if let index = key as? IndexCodingKey {
                steps.append(.index(index.index))
            } else {
                steps.append(.key(key))
            }
        }
    }

    var depth: Int { steps.count }

    @inline(__always) mutating func push(_ step: PathStep) { steps.append(step) }
    @inline(__always) mutating func pop() { steps.removeLast() }

    mutating func push(_ extra: [PathStep]) {
        for step in extra { steps.append(step) }
    }

    mutating func pop(_ count: Int) {
        steps.removeLast(count)
    }

    /// The keys of the first `depth` steps, followed by `extra` and `last`.
    func codingPath(depth: Int, extra: [PathStep] = [], last: PathStep? = nil) -> [any CodingKey] {
        var path: [any CodingKey] = []
        let upTo = Swift.min(depth, steps.count)
        path.reserveCapacity(upTo + extra.count + 1)
        for step in steps[..<upTo] { path.append(step.codingKey) }
        for step in extra { path.append(step.codingKey) }
        if let last { path.append(last.codingKey) }
        return path
    }
}

/// The readable form of a coding path used in every error message: `SELF[1].name`.
func readablePath(_ path: [any CodingKey]) -> String {
    var text = "SELF"
    for key in path {
        if let index = key as? IndexCodingKey {
            text += "[\(index.index)]"
        } else {
            text += ".\(key.stringValue)"
        }
    }
    return text
}

// MARK: - Asking what a value is

/// Whether `value` is an instance of a class.
///
/// On Linux, asking a Swift `Array` or `Dictionary` whether it `is NSNull`, `is NSArray`
/// or `as? NSNumber` first bridges the whole container to Foundation (measured: 35 ms for
/// an array of 100,000 numbers, for every such question), which made decoding deep trees
/// quadratic. Only class instances can be those classes, so every such test asks this first.
@inline(__always)
func isObject(_ value: Any) -> Bool {
    type(of: value) is AnyObject.Type
}

/// Whether `value` is an `NSNull`.
@inline(__always)
func isNSNull(_ value: Any) -> Bool {
    isObject(value) && value is NSNull
}

/// Whether `value` is a dictionary with `String` keys, Swift's or Foundation's.
@inline(__always)
func isDictionary(_ value: Any) -> Bool {
    value is [String: Any] || (isObject(value) && value is NSDictionary)
}

/// Whether `value` is an array, Swift's or Foundation's.
@inline(__always)
func isArray(_ value: Any) -> Bool {
    value is [Any] || (isObject(value) && value is NSArray)
}

// MARK: - Reading coding errors

/// The path and message of a `DecodingError` or `EncodingError` (for `keyNotFound`, the
/// path ends with the missing key), or `nil` for any other error.
func codingErrorContext(of error: any Error) -> (codingPath: [any CodingKey], debugDescription: String)? {
    switch error {
    case let error as DecodingError:
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            return (context.codingPath + [key], context.debugDescription)
        @unknown default:
            return nil
        }
    case let error as EncodingError:
        switch error {
        case .invalidValue(_, let context): return (context.codingPath, context.debugDescription)
        @unknown default: return nil
        }
    default:
        return nil
    }
}

// MARK: - Describing values

/// The name of a value's type as error messages show it: `Int`, `String`, `Bool`,
/// `Dictionary`, `Array`, `nil`. Foundation's bridged classes are named after the
/// Swift type they stand for, so messages read the same on Apple platforms and Linux.
func describeType(of value: Any) -> String {
    guard let value = flattenOptional(value) else { return "nil" }
    let type = type(of: value)
    if type == String.self { return "String" }
    if let number = classifyNumber(value) { return number.typeName }
    if isNSNull(value) { return "NSNull" }
    if isDictionary(value) { return "Dictionary" }
    if isArray(value) { return "Array" }
    if value is String { return "String" }
    if value is Date { return "Date" }
    if value is Data { return "Data" }
    if value is URL { return "URL" }
    return String(describing: type)
}

// MARK: - Optionals inside Any

/// Lets the coders see through an `Optional` that was stored in an `Any`.
///
/// Foundation on Linux hands back dictionaries read from a plist as
/// `[AnyHashable: Optional<Any>]`, so values arrive wrapped; and the `.default` nil
/// strategy stores `Optional<Any>.none` itself.
protocol OptionalInAny {
    var flattened: Any? { get }
}

extension Optional: OptionalInAny {
    var flattened: Any? {
        switch self {
        case .none: return nil
        case .some(let wrapped): return flattenOptional(wrapped)
        }
    }
}

/// `value` with every `Optional` layer removed, or `nil` if one of them was `.none`.
@inline(__always)
func flattenOptional(_ value: Any) -> Any? {
    if let optional = value as? any OptionalInAny {
        return optional.flattened
    }
    return value
}

/// The form `UserDefaults` storage gives `nil`: a plist has no null.
let storedNull = "$null"

/// Whether `string` is the stored null with zero or more extra leading `$`:
/// `$null`, `$$null`, `$$$null`, …
func isEscapedNullForm(_ string: String) -> Bool {
    guard string.hasSuffix("null"), string.utf8.count > 4 else { return false }
    return string.utf8.dropLast(4).allSatisfy { $0 == UInt8(ascii: "$") }
}

// MARK: - Unchecked storage

/// A value kept behind a pointer, for the coders' state and their containers' contents.
///
/// A class's stored `var` is checked for exclusive access at run time on every write,
/// and the coders write their state several times per value they code: callgrind put
/// those checks at 13% of the instructions of encoding `[User]`. A pointer's `pointee`
/// is not checked. The owner calls `release()` in its `deinit`.
struct Unchecked<Value> {
    private let pointer: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    var value: Value {
        @inline(__always) get { pointer.pointee }
        @inline(__always) nonmutating _modify { yield &pointer.pointee }
    }

    func release() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

// MARK: - Fast paths

/// The array types both coders pass through whole. Kept as metatype values: spelling
/// `[String].self` in a generic function asks the runtime for the metadata each time.
enum PrimitiveArrays {
    static let strings: Any.Type = [String].self
    static let ints: Any.Type = [Int].self
    static let doubles: Any.Type = [Double].self
    static let bools: Any.Type = [Bool].self
}

// MARK: - Numbers

/// A number found in an `Any` tree, with the width it was stored at.
///
/// `NSNumber` bridges freely to every Swift number type and to `Bool`, so the coders
/// never ask `value as? Int` of an unknown value: they classify it here first, and a
/// `Bool` never passes for a number nor a number for a `Bool`.
enum NumberValue {
    case bool(Bool)
    case signed(Int64, name: String)
    case unsigned(UInt64, name: String)
    case double(Double)
    case float(Float)
    case decimal(Decimal)

    var typeName: String {
        switch self {
        case .bool: return "Bool"
        case .signed(_, let name), .unsigned(_, let name): return name
        case .double: return "Double"
        case .float: return "Float"
        case .decimal: return "Decimal"
        }
    }
}

/// The class Foundation uses for `NSNumber(value: true)`; booleans read from a plist
/// are of this class on Apple platforms and on Linux.
private let booleanNumberType: AnyClass = type(of: NSNumber(value: true))

/// Classifies `value` as a number, or returns `nil` when it is not one.
func classifyNumber(_ value: Any) -> NumberValue? {
    let type = type(of: value)
    if type == Int.self { return .signed(Int64(value as! Int), name: "Int") }
    if type == Double.self { return .double(value as! Double) }
    if type == Bool.self { return .bool(value as! Bool) }
    if type == Int64.self { return .signed(value as! Int64, name: "Int64") }
    if type == UInt64.self { return .unsigned(value as! UInt64, name: "UInt64") }
    if type == Float.self { return .float(value as! Float) }
    if type == Int32.self { return .signed(Int64(value as! Int32), name: "Int32") }
    if type == Int16.self { return .signed(Int64(value as! Int16), name: "Int16") }
    if type == Int8.self { return .signed(Int64(value as! Int8), name: "Int8") }
    if type == UInt.self { return .unsigned(UInt64(value as! UInt), name: "UInt") }
    if type == UInt32.self { return .unsigned(UInt64(value as! UInt32), name: "UInt32") }
    if type == UInt16.self { return .unsigned(UInt64(value as! UInt16), name: "UInt16") }
    if type == UInt8.self { return .unsigned(UInt64(value as! UInt8), name: "UInt8") }
    if type == Decimal.self { return .decimal(value as! Decimal) }
    if type == String.self { return nil }
    // Unwrap before asking for NSNumber: a wrapped Int64 would bridge and lose its name.
    if let optional = value as? any OptionalInAny {
        return optional.flattened.flatMap(classifyNumber)
    }
    if type == CGFloat.self { return .double(Double(value as! CGFloat)) }
    if isObject(value), let number = value as? NSNumber {
        return classifyNSNumber(number)
    }
    return nil
}

private func classifyNSNumber(_ number: NSNumber) -> NumberValue {
    if type(of: number) == booleanNumberType { return .bool(number.boolValue) }
    if let decimal = number as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
    switch UInt8(bitPattern: number.objCType.pointee) {
    case UInt8(ascii: "d"): return .double(number.doubleValue)
    case UInt8(ascii: "f"): return .float(number.floatValue)
    case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
        return .unsigned(number.uint64Value, name: "UInt64")
    default:
        return .signed(number.int64Value, name: "Int")
    }
}

extension Decimal {
    /// Parses the whole of `string` as a decimal number, or returns `nil`.
    ///
    /// `Decimal(string:)` accepts a valid prefix (`"1.5abc"` gives 1.5); this does not.
    init?(strictString string: String) {
        var sawDigit = false
        var sawPoint = false
        var sawExponent = false
        var previous: UInt8 = 0
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard previous == 0 || previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E") else { return nil }
            case UInt8(ascii: "."):
                guard !sawPoint, !sawExponent else { return nil }
                sawPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard sawDigit, !sawExponent else { return nil }
                sawExponent = true
            default:
                return nil
            }
            previous = byte
        }
        guard sawDigit, let value = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) else {
            return nil
        }
        self = value
    }

    /// The text form that `Decimal(strictString:)` reads back to an equal value.
    var canonicalString: String {
        var value = self
        return NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
    }
}

// MARK: - Key conversion

/// `myURLValue` → `my_url_value`, as `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`
/// documents it: words split at each lower-to-upper change and before the last capital
/// of a run of capitals; leading and trailing underscores are kept.
func convertToSnakeCase(_ key: String) -> String {
    guard !key.isEmpty else { return key }
    let characters = Array(key)
    var words: [Range<Int>] = []
    var wordStart = 0
    var index = 1
    while index < characters.count {
        let current = characters[index]
        let previous = characters[index - 1]
        if current.isUppercase {
            if previous.isLowercase || previous.isNumber {
                words.append(wordStart..<index)
                wordStart = index
            } else if previous.isUppercase, index + 1 < characters.count, characters[index + 1].isLowercase {
                words.append(wordStart..<index)
                wordStart = index
            }
        }
        index += 1
    }
    words.append(wordStart..<characters.count)
    return words.map { String(characters[$0]).lowercased() }.joined(separator: "_")
}

/// `one_two_three` → `oneTwoThree`, as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`
/// documents it: leading and trailing underscores are kept, and a key with no
/// underscore inside is left as it is.
func convertFromSnakeCase(_ key: String) -> String {
    guard !key.isEmpty, let first = key.firstIndex(where: { $0 != "_" }) else { return key }
    var last = key.index(before: key.endIndex)
    while last > first, key[last] == "_" { last = key.index(before: last) }
    let core = key[first...last]
    let parts = core.split(separator: "_", omittingEmptySubsequences: true)
    guard parts.count > 1 else { return key }
    var result = String(key[..<first])
    result += parts[0].lowercased()
    for part in parts.dropFirst() {
        result += part.prefix(1).uppercased() + part.dropFirst().lowercased()
    }
    result += key[key.index(after: last)...]
    return result
}

// MARK: - Errors

// Error builders live here so that every message has the same shape and names the
// path in its readable form. They are cold: kept out of line so the hot paths stay small.

extension DecodingError {
    /// `Expected String at SELF[1].name, found Int` (or `valueNotFound` if it found nil).
    @inline(never)
    static func mismatch(expected: String, type: Any.Type, found value: Any, at path: [any CodingKey]) -> DecodingError {
        let found = describeType(of: value)
        let context = Context(
            codingPath: path,
            debugDescription: "Expected \(expected) at \(readablePath(path)), found \(found)"
        )
        if found == "nil" {
            return .valueNotFound(type, context)
        }
        return .typeMismatch(type, context)
    }

    /// `Expected String at SELF[1].name, found nil`.
    @inline(never)
    static func nullFound(expected: String, type: Any.Type, at path: [any CodingKey]) -> DecodingError {
        .valueNotFound(type, Context(
            codingPath: path,
            debugDescription: "Expected \(expected) at \(readablePath(path)), found nil"
        ))
    }

    /// `Int at SELF[2], cannot be exactly represented by UInt8`.
    @inline(never)
    static func notRepresentable(_ number: NumberValue, as type: Any.Type, at path: [any CodingKey]) -> DecodingError {
        .typeMismatch(type, Context(
            codingPath: path,
            debugDescription: "\(number.typeName) at \(readablePath(path)), cannot be exactly represented by \(type)"
        ))
    }

    /// `Dictionary does not contain key SELF[1].name`; the context's path is the container's.
    @inline(never)
    static func missingKey(_ key: any CodingKey, containerPath: [any CodingKey]) -> DecodingError {
        .keyNotFound(key, Context(
            codingPath: containerPath,
            debugDescription: "Dictionary does not contain key \(readablePath(containerPath + [key]))"
        ))
    }

    /// `Expected Int at SELF[3], found end of array`.
    @inline(never)
    static func endOfArray(expected: String, type: Any.Type, at path: [any CodingKey]) -> DecodingError {
        .valueNotFound(type, Context(
            codingPath: path,
            debugDescription: "Expected \(expected) at \(readablePath(path)), found end of array"
        ))
    }

    /// A tree nested deeper than `maximumNestingDepth`.
    @inline(never)
    static func tooDeep(at path: [any CodingKey]) -> DecodingError {
        corrupted("Nesting deeper than \(maximumNestingDepth) levels", at: path)
    }

    /// `Invalid URL string at SELF.home: "ht tp://"` and the like.
    @inline(never)
    static func corrupted(_ message: String, at path: [any CodingKey], underlyingError: (any Error)? = nil) -> DecodingError {
        .dataCorrupted(Context(
            codingPath: path,
            debugDescription: "\(message) at \(readablePath(path))",
            underlyingError: underlyingError
        ))
    }
}

extension EncodingError {
    /// A value nested deeper than `maximumNestingDepth`.
    @inline(never)
    static func tooDeep(_ value: Any, at path: [any CodingKey]) -> EncodingError {
        invalid(value, "Nesting deeper than \(maximumNestingDepth) levels", at: path)
    }

    /// `Cannot store Double.nan at SELF.score in UserDefaults` and the like.
    @inline(never)
    static func invalid(_ value: Any, _ message: String, at path: [any CodingKey], underlyingError: (any Error)? = nil) -> EncodingError {
        .invalidValue(value, Context(
            codingPath: path,
            debugDescription: "\(message) at \(readablePath(path))",
            underlyingError: underlyingError
        ))
    }
}
