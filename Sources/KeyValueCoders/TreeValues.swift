// Asking what a value in an `Any` tree is, without paying for Foundation's bridging.

import Foundation

/// Whether `value` is an instance of a class.
///
/// On Linux, asking a Swift `Array` or `Dictionary` whether it `is NSNull`, `is NSArray`
/// or `as? NSNumber` first bridges the whole container to Foundation, for every such
/// question, which made decoding deep trees quadratic. Only class instances can be those
/// classes, so every such test asks this first.
@inline(__always)
package func isObject(_ value: Any) -> Bool {
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
package func isArray(_ value: Any) -> Bool {
    value is [Any] || (isObject(value) && value is NSArray)
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
        // Not `flattenOptional(wrapped)` for an `Optional<Any>`: that would put the
        // wrapped `Any` inside another `Any`, which opening sees as of type `Any`.
        case .some(let wrapped):
            return Wrapped.self == Any.self ? flattenOptional(sameType(wrapped, as: Any.self)) : flattenOptional(wrapped)
        }
    }
}

/// `value` with every `Optional` layer removed, or `nil` if one of them was `.none`.
@inline(__always)
package func flattenOptional(_ value: Any) -> Any? {
    // The common leaves are told apart by a metatype compare each: asking whether a
    // value conforms to a protocol costs the runtime's conformance look-up, and a cast
    // to one costs several times that again.
    let type = type(of: value)
    if type == String.self || type == Int.self || type == Double.self || type == Bool.self { return value }
    if type == [String: Any].self || type == [Any].self { return value }
    if type is any OptionalInAny.Type, let optional = value as? any OptionalInAny {
        return optional.flattened
    }
    return value
}

// MARK: - Fast paths

/// The array types both coders pass through whole. Computed: `[String].self` reads
/// the metadata through its accessor's cache, which costs less than the once-check of a
/// `static let` at every value (measured in the history of `Benchmarks/README.md`).
enum PrimitiveArrays {
    static var strings: Any.Type { [String].self }
    static var ints: Any.Type { [Int].self }
    static var doubles: Any.Type { [Double].self }
    static var bools: Any.Type { [Bool].self }
}

/// The dictionary types both coders pass through whole: their keys are data, which no
/// key strategy changes, and their values are plist primitives.
enum PrimitiveDictionaries {
    static var strings: Any.Type { [String: String].self }
    static var ints: Any.Type { [String: Int].self }
    static var doubles: Any.Type { [String: Double].self }
    static var bools: Any.Type { [String: Bool].self }
}

/// Whether `type` is one the coders pass through whole when it is not too deep.
func isPassedThrough(_ type: Any.Type) -> Bool {
    type == PrimitiveArrays.strings || type == PrimitiveArrays.ints || type == PrimitiveArrays.doubles || type == PrimitiveArrays.bools
        || type == PrimitiveDictionaries.strings || type == PrimitiveDictionaries.ints || type == PrimitiveDictionaries.doubles
        || type == PrimitiveDictionaries.bools
}

// MARK: - Classifying a value

/// What a value of a property-list tree is: the one place a walk of a tree tells its
/// values apart, so that every walk (the file's writer, the stored form, comparisons,
/// `PropertyListValue`) agrees on what is a number, a `Bool` or a dictionary.
package enum TreeValue {
    case string(String)
    /// A number or a `Bool`, told apart by `classifyNumber`.
    case number(NumberValue)
    case date(Date)
    case data(Data)
    case dictionary([String: Any])
    case array([Any])

    /// `value` classified, through any `Optional` around it; `nil` for `nil` and for a
    /// value of no property-list type.
    package init?(_ value: Any) {
        guard let value = flattenOptional(value) else { return nil }
        // The exact Swift types first, each a metatype compare; then what bridges.
        if let string = exactCast(value, to: String.self) {
            self = .string(string)
        } else if let dictionary = exactCast(value, to: [String: Any].self) {
            self = .dictionary(dictionary)
        } else if let array = exactCast(value, to: [Any].self) {
            self = .array(array)
        } else if let number = classifyNumber(value) {
            self = .number(number)
        } else if isDictionary(value), let dictionary = value as? [String: Any] {
            self = .dictionary(dictionary)
        } else if isArray(value), let array = value as? [Any] {
            self = .array(array)
        } else if let string = value as? String {
            self = .string(string)
        } else if let date = value as? Date {
            self = .date(date)
        } else if let data = value as? Data {
            self = .data(data)
        } else {
            return nil
        }
    }
}
