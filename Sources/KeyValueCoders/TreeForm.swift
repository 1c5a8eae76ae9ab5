// The points at which the coders ask how a value is written into, or read from, a tree.
// The plain forms here are the `Any` tree as the strategies describe it; the stored
// forms (in `StoredForm.swift`) are what `UserDefaults` keeps. The coders hold a form as
// an existential rather than a type parameter: generic coders paid for the runtime's
// metadata look-ups of every generic container type on every value. Encoding forms are
// classes, shared where they hold nothing that varies: a call through an existential of
// a struct copied the struct out of the encoder first, at every string written. Decoding
// forms stay structs, which measured cheaper for the decoder.

import Foundation

/// How the encoder writes the values whose tree form is a choice.
package protocol EncodingForm: AnyObject {
    /// The value written for `nil` inside a container, or `nil` to leave it out.
    var null: Any? { get }
    /// Whether `Optional` values are written by `wrapSome(_:)`/`none` rather than by
    /// their own `encode(to:)`, which cannot tell `.some(nil)` from `nil`.
    var wrapsOptionals: Bool { get }
    /// Whether dictionary keys are checked with `problem(withKey:)`.
    var checksKeys: Bool { get }
    /// The value written for `Optional.none`, when `wrapsOptionals`.
    var none: Any { get }
    /// The value written for `Optional.some(wrapped)`, given the tree of `wrapped`
    /// (`nil` when it encoded `nil`), when `wrapsOptionals`.
    func wrapSome(_ wrapped: Any?) -> Any
    /// The most containers a value may sit in.
    var containerDepthLimit: Int { get }
    /// The message for a container deeper than that.
    var depthProblem: String { get }

    func string(_ value: String) -> Any
    func strings(_ value: [String]) -> Any
    /// A `[String: String]`, `[String: Int]`, `[String: Double]` or `[String: Bool]`
    /// written whole, or `nil` to write it entry by entry (a key to check).
    func primitiveDictionary(_ value: Any, strings: [String: String]?) -> Any?
    func integer<T: FixedWidthInteger>(_ value: T) -> Any
    func float(_ value: Float) -> Any
    /// A `Date` under the `.date` strategy.
    func date(_ value: Date) -> Any
    /// A `Date` that must read back as a date, never as a number: a
    /// `PropertyListValue`'s, which reads a number as `.double`.
    func keptDate(_ value: Date) -> Any
    /// A `URL` under the `.url` strategy, `depth` containers deep.
    func url(_ value: URL, depth: Int, path: () -> [any CodingKey]) throws -> Any
    func decimal(_ value: Decimal, path: () -> [any CodingKey]) throws -> Any
    /// What a `.custom` strategy returned, `depth` containers deep.
    func custom(_ value: Any, depth: Int, path: () -> [any CodingKey]) throws -> Any
    /// Why `key` cannot be a dictionary key in this form, or `nil` when it can.
    func problem(withKey key: String) -> KeyProblem?
    /// The words of an error for `problem`, which this form found.
    func message(for problem: KeyProblem) -> String
}

/// How the decoder reads the values whose tree form is a choice.
package protocol DecodingForm {
    /// Whether `value` stands for `nil`.
    func isNull(_ value: Any) -> Bool
    /// Whether `Optional` values are read by `unwrap(_:)` rather than by their own
    /// `init(from:)`.
    var unwrapsOptionals: Bool { get }
    /// What a value read as an `Optional` (or with `decodeIfPresent`) holds.
    func unwrap(_ value: Any) -> UnwrappedValue
    /// The string `value` stands for, or `nil` when it is not a string.
    func string(_ value: Any) -> String?
    /// The strings `value` stands for when it is an array of strings that need no
    /// reading; `nil` sends it the long way, element by element.
    func strings(_ value: Any) -> [String]?
    /// `value` as a `[String: String]` when its strings need no reading, or `nil`.
    func stringDictionary(_ value: Any) -> [String: String]?
    /// The decimal a value that is not a number stands for, or `nil` (numbers are read
    /// as decimals in every form).
    func decimal(_ value: Any) -> Decimal?
    /// The number a value that is not a plain number stands for (an integer wider
    /// than 64 bits, in the stored form), or `nil`.
    func number(_ value: Any) -> NumberValue?
    /// The URL a string stands for, under the `.url` strategy.
    func url(_ string: String) -> URL?
    /// The date a value that is not a `Date` stands for (`keptDate`), or `nil`.
    func date(_ value: Any) -> Date?
    /// The plain tree of `value`, for a `.custom` strategy closure.
    func plain(_ value: Any) -> Any
    /// What `value` is, for error messages.
    func describe(_ value: Any) -> FoundValue
}

// MARK: - The plain tree

/// The `Any` tree as the encoder's and decoder's strategies describe it.
// Immutable; its placeholder is `Sendable`, as the nil strategy requires.
final class PlainEncodingForm: EncodingForm, @unchecked Sendable {
    let null: Any?

    /// The form of the `.default` nil strategy, which most encoders use.
    private static let standard = PlainEncodingForm(nilStrategy: .default)

    /// The form for `nilStrategy`.
    static func form(nilStrategy: KeyValueEncoder.NilEncodingStrategy) -> PlainEncodingForm {
        if case .default = nilStrategy { return standard }
        return PlainEncodingForm(nilStrategy: nilStrategy)
    }

    init(nilStrategy: KeyValueEncoder.NilEncodingStrategy) {
        if case .default = nilStrategy {
            null = Optional<Any>.none as Any
        } else {
            null = nilStrategy.placeholderValue
        }
    }

    var wrapsOptionals: Bool { false }
    var checksKeys: Bool { false }
    var none: Any { Optional<Any>.none as Any }
    func wrapSome(_ wrapped: Any?) -> Any { wrapped as Any }
    var containerDepthLimit: Int { NestingGuard.maximumContainers }
    var depthProblem: String { NestingGuard.Reason.containers.message }

    @inline(__always) func string(_ value: String) -> Any { value }
    @inline(__always) func strings(_ value: [String]) -> Any { value }
    @inline(__always) func primitiveDictionary(_ value: Any, strings: [String: String]?) -> Any? { value }
    @inline(__always) func integer<T: FixedWidthInteger>(_ value: T) -> Any { value }
    @inline(__always) func float(_ value: Float) -> Any { value }
    @inline(__always) func date(_ value: Date) -> Any { value }
    func keptDate(_ value: Date) -> Any { value }
    func url(_ value: URL, depth: Int, path: () -> [any CodingKey]) throws -> Any { value }
    func decimal(_ value: Decimal, path: () -> [any CodingKey]) throws -> Any { value }
    func custom(_ value: Any, depth: Int, path: () -> [any CodingKey]) throws -> Any { value }
    @inline(__always) func problem(withKey key: String) -> KeyProblem? { nil }
    func message(for problem: KeyProblem) -> String { "\(problem)" }
}

/// The `Any` tree as the decoder's strategies describe it.
struct PlainDecodingForm: DecodingForm {
    let nilStrategy: KeyValueDecoder.NilDecodingStrategy

    @inline(__always) func isNull(_ value: Any) -> Bool { nilStrategy.isNull(value) }
    var unwrapsOptionals: Bool { false }
    func unwrap(_ value: Any) -> UnwrappedValue { isNull(value) ? .none : .some(value) }
    @inline(__always) func string(_ value: Any) -> String? { cast(value, to: String.self) }
    @inline(__always) func strings(_ value: Any) -> [String]? { cast(value, to: [String].self) }
    @inline(__always) func stringDictionary(_ value: Any) -> [String: String]? { cast(value, to: [String: String].self) }

    func decimal(_ value: Any) -> Decimal? { nil }
    func number(_ value: Any) -> NumberValue? { nil }

    func url(_ string: String) -> URL? {
        guard let url = URL(string: string), url.scheme != nil else { return nil }
        return url
    }

    func date(_ value: Any) -> Date? { nil }
    func plain(_ value: Any) -> Any { value }
    func describe(_ value: Any) -> FoundValue { isNull(value) ? .null : .describing(value) }
}
