// Every malformed input gets a DecodingError with the exact case, coding path and
// message, never a trap. One row per input.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// The case of a `DecodingError`, for comparing.
enum DecodingErrorCase: String, Sendable {
    case typeMismatch, valueNotFound, keyNotFound, dataCorrupted

    init?(_ error: DecodingError?) {
        switch error {
        case .typeMismatch?: self = .typeMismatch
        case .valueNotFound?: self = .valueNotFound
        case .keyNotFound?: self = .keyNotFound
        case .dataCorrupted?: self = .dataCorrupted
        default: return nil
        }
    }
}

/// One malformed input: what decoding it must throw. (`@unchecked`: the closure only
/// reads its captures, and a generic closure would capture a metatype, which Swift 6.2
/// warns is not `Sendable`.)
struct BadInput: @unchecked Sendable, CustomTestStringConvertible {
    let errorCase: DecodingErrorCase
    let path: String
    let message: String
    let decode: () throws -> Any

    var testDescription: String { message }
}

/// A row: decode `value` as `T` with `decoder`, expecting `errorCase` at `path` with `message`.
func bad<T: Decodable>(
    _ type: T.Type,
    _ value: SendableAny,
    decoder: KeyValueDecoder = KeyValueDecoder(),
    _ errorCase: DecodingErrorCase,
    _ path: String,
    _ message: String
) -> BadInput {
    BadInput(errorCase: errorCase, path: path, message: message) { try decoder.decode(T.self, from: value.value) }
}

/// Decoders with one strategy changed.
enum Decoders {
    static func int(_ strategy: KeyValueDecoder.IntDecodingStrategy) -> KeyValueDecoder {
        var decoder = KeyValueDecoder()
        decoder.intDecodingStrategy = strategy
        return decoder
    }
    static func null(_ strategy: KeyValueDecoder.NilDecodingStrategy) -> KeyValueDecoder {
        var decoder = KeyValueDecoder()
        decoder.nilDecodingStrategy = strategy
        return decoder
    }
    static func date(_ strategy: KeyValueDecoder.DateDecodingStrategy) -> KeyValueDecoder {
        var decoder = KeyValueDecoder()
        decoder.dateDecodingStrategy = strategy
        return decoder
    }
    static let absoluteURL: KeyValueDecoder = {
        var decoder = KeyValueDecoder()
        decoder.urlDecodingStrategy = .absoluteString
        return decoder
    }()
    static let base64: KeyValueDecoder = {
        var decoder = KeyValueDecoder()
        decoder.dataDecodingStrategy = .base64
        return decoder
    }()
}

/// A row read in the UserDefaults stored form.
func badStored<T: Decodable>(
    _ type: T.Type,
    _ value: SendableAny,
    _ errorCase: DecodingErrorCase,
    _ path: String,
    _ message: String
) -> BadInput {
    BadInput(errorCase: errorCase, path: path, message: message) { try KeyValueDecoder().decodeFromUserDefaults(T.self, from: value.value) }
}

private func any(_ value: Any) -> SendableAny { SendableAny(value) }
private let none = SendableAny(Optional<Any>.none as Any)

@Suite("Bad inputs")
struct BadInputTests {

    static let rows: [BadInput] = [
        // Wrong types, at every depth.
        bad(String.self, any(1), .typeMismatch, "SELF", "Expected String at SELF, found Int"),
        bad(User.self, any([1, 2]), .typeMismatch, "SELF", "Expected Dictionary at SELF, found Array"),
        bad([Int].self, any(["a": 1]), .typeMismatch, "SELF", "Expected Array at SELF, found Dictionary"),
        bad([String].self, any(["fish", 1]), .typeMismatch, "SELF[1]", "Expected String at SELF[1], found Int"),
        bad([User].self, any([["id": 1, "name": "Herbert"], ["id": 2, "name": 5]]), .typeMismatch, "SELF[1].name", "Expected String at SELF[1].name, found Int"),
        bad([[Int]].self, any([[1], "x"]), .typeMismatch, "SELF[1]", "Expected Array at SELF[1], found String"),
        bad(
            Team.self, any(["name": "A", "members": [["id": 1, "name": 2]], "scores": [:]]), .typeMismatch, "SELF.members[0].name",
            "Expected String at SELF.members[0].name, found Int"),
        bad(Team.self, any(["name": "A", "members": [], "lead": "x", "scores": [:]]), .typeMismatch, "SELF.lead", "Expected Dictionary at SELF.lead, found String"),
        bad(
            Team.self, any(["name": "A", "members": [], "scores": ["q": [1, "2"]]]), .typeMismatch, "SELF.scores.q[1]", "Expected BinaryInteger at SELF.scores.q[1], found String"),
        bad([String: [String: Int]].self, any(["a": ["b": ["c"]]]), .typeMismatch, "SELF.a.b", "Expected BinaryInteger at SELF.a.b, found Array"),
        // Dictionaries of primitives read entry by entry from a [String: Any] or
        // Foundation's [AnyHashable: Any?] name the entry that fails.
        bad([String: Double].self, any(["a": 1.5, "b": "x"] as [String: Any]), .typeMismatch, "SELF.b", "Expected Double at SELF.b, found String"),
        bad([String: Int].self, any(["a": 1, "b": 2.5] as [String: Any]), .typeMismatch, "SELF.b", "Double at SELF.b, cannot be exactly represented by Int"),
        bad([String: Bool].self, any(["a": true, "b": 1] as [String: Any]), .typeMismatch, "SELF.b", "Expected Bool at SELF.b, found Int"),
        bad([String: String].self, any(["a": "x", "b": 2] as [String: Any]), .typeMismatch, "SELF.b", "Expected String at SELF.b, found Int"),
        bad([String: Double].self, any(["a": Optional<Any>.none] as [AnyHashable: Any?]), .valueNotFound, "SELF.a", "Expected Double at SELF.a, found nil"),
        bad([String: Double].self, any([1.5]), .typeMismatch, "SELF", "Expected Dictionary at SELF, found Array"),
        bad(
            [String: Double].self, any(["a": 1.5, 7: 2.5] as [AnyHashable: Any?]), .typeMismatch, "SELF",
            "Expected Dictionary with String keys at SELF, found Dictionary with Int keys"),
        bad(
            User.self, any(["id": 1, "name": "x", 7: 2.5] as [AnyHashable: Any?]), .typeMismatch, "SELF",
            "Expected Dictionary with String keys at SELF, found Dictionary with Int keys"),
        bad([String: [String: Bool]].self, any(["a": ["b": NSNumber(value: 2)]] as [String: Any]), .typeMismatch, "SELF.a.b", "Expected Bool at SELF.a.b, found Int"),
        bad(URL.self, any(5), .typeMismatch, "SELF", "Expected URL at SELF, found Int"),
        bad(Date.self, any("2001"), .typeMismatch, "SELF", "Expected Date at SELF, found String"),
        bad(Data.self, any(5), .typeMismatch, "SELF", "Expected Data at SELF, found Int"),
        bad(Decimal.self, any([1]), .typeMismatch, "SELF", "Expected Decimal at SELF, found Array"),
        bad(Double.self, any("1.5"), .typeMismatch, "SELF", "Expected Double at SELF, found String"),
        bad([Int].self, any([1, NSNull()]), .typeMismatch, "SELF[1]", "Expected BinaryInteger at SELF[1], found NSNull"),

        // Missing keys, extra keys.
        bad(User.self, any(["id": 1]), .keyNotFound, "SELF.name", "Dictionary does not contain key SELF.name"),
        bad([User].self, any([["id": 1, "name": "Herbert"], ["id": 2]]), .keyNotFound, "SELF[1].name", "Dictionary does not contain key SELF[1].name"),
        bad(Team.self, any(["name": "A", "members": []]), .keyNotFound, "SELF.scores", "Dictionary does not contain key SELF.scores"),
        bad(User.self, any([:]), .keyNotFound, "SELF.id", "Dictionary does not contain key SELF.id"),
        bad(Shape.self, any(["circle": ["radius": 1.0], "square": ["side": 2.0]]), .typeMismatch, "SELF", "Invalid number of keys found, expected one."),
        bad(Shape.self, any([:]), .typeMismatch, "SELF", "Invalid number of keys found, expected one."),
        // An unknown case leaves no key the enum knows: the standard library's own message.
        bad(Shape.self, any(["triangle": [:]]), .typeMismatch, "SELF", "Invalid number of keys found, expected one."),
        bad(Shape.self, any(["circle": ["diameter": 1.0]]), .keyNotFound, "SELF.circle.radius", "Dictionary does not contain key SELF.circle.radius"),

        // Out of range for every integer width.
        bad(Int8.self, any(128), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by Int8"),
        bad(Int8.self, any(-129), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by Int8"),
        bad(Int16.self, any(32_768), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by Int16"),
        bad(Int32.self, any(Int64(Int32.min) - 1), .typeMismatch, "SELF", "Int64 at SELF, cannot be exactly represented by Int32"),
        bad(Int64.self, any(UInt64(Int64.max) + 1), .typeMismatch, "SELF", "UInt64 at SELF, cannot be exactly represented by Int64"),
        bad(Int.self, any(UInt64.max), .typeMismatch, "SELF", "UInt64 at SELF, cannot be exactly represented by Int"),
        bad(UInt8.self, any(256), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by UInt8"),
        bad([UInt8].self, any([10, 100, 1000]), .typeMismatch, "SELF[2]", "Int at SELF[2], cannot be exactly represented by UInt8"),
        bad(UInt16.self, any(-1), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by UInt16"),
        bad(UInt32.self, any(Int64(UInt32.max) + 1), .typeMismatch, "SELF", "Int64 at SELF, cannot be exactly represented by UInt32"),
        bad(UInt64.self, any(Int64.min), .typeMismatch, "SELF", "Int64 at SELF, cannot be exactly represented by UInt64"),
        bad(UInt.self, any(-1), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by UInt"),
        bad(Int8.self, any(1e10), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int8"),
        bad(Int8.self, any(300), decoder: Decoders.int(.rounding(rule: .down)), .typeMismatch, "SELF", "Int at SELF, cannot be exactly represented by Int8"),
        bad(Int.self, any(1e19), decoder: Decoders.int(.rounding(rule: .down)), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),

        // Fractions with .exact, NaN and infinity into integers.
        bad(Int.self, any(1.5), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(UInt8.self, any(Float(0.5)), .typeMismatch, "SELF", "Float at SELF, cannot be exactly represented by UInt8"),
        bad(Int64.self, any(Decimal(string: "2.25")!), .typeMismatch, "SELF", "Decimal at SELF, cannot be exactly represented by Int64"),
        bad(Int.self, any(NSNumber(value: 0.1)), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(Int.self, any(Double.nan), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(Int.self, any(Double.infinity), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(Int16.self, any(-Double.infinity), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int16"),
        bad(Int.self, any(Double.nan), decoder: Decoders.int(.clamping(rule: .down)), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(Int.self, any(2.5), decoder: Decoders.int(.clamping(rule: nil)), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),
        bad(Int.self, any(Double.nan), decoder: Decoders.int(.rounding(rule: .toNearestOrEven)), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Int"),

        // Floating point and decimal targets keep exactness.
        bad(Double.self, any(Int64.max), .typeMismatch, "SELF", "Int64 at SELF, cannot be exactly represented by Double"),
        bad(Float.self, any(0.123456789), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Float"),
        bad(Float.self, any(1e300), .typeMismatch, "SELF", "Double at SELF, cannot be exactly represented by Float"),
        bad(Decimal.self, any("1.5"), .typeMismatch, "SELF", "Expected Decimal at SELF, found String"),
        badStored(Decimal.self, any("1.5"), .typeMismatch, "SELF", "Expected Decimal at SELF, found String"),
        badStored(Decimal.self, any(StoredForm.decimalPrefix + "1.5abc"), .typeMismatch, "SELF", "Expected Decimal at SELF, found String"),

        // Bool and numbers are never each other.
        bad(Bool.self, any(1), .typeMismatch, "SELF", "Expected Bool at SELF, found Int"),
        bad(Bool.self, any(NSNumber(value: 1)), .typeMismatch, "SELF", "Expected Bool at SELF, found Int"),
        bad(Bool.self, any("true"), .typeMismatch, "SELF", "Expected Bool at SELF, found String"),
        bad(Int.self, any(NSNumber(value: true)), .typeMismatch, "SELF", "Expected BinaryInteger at SELF, found Bool"),
        bad([Int].self, any([1, 2, true]), .typeMismatch, "SELF[2]", "Expected BinaryInteger at SELF[2], found Bool"),
        bad(Double.self, any(true), .typeMismatch, "SELF", "Expected Double at SELF, found Bool"),
        bad(Decimal.self, any(false), .typeMismatch, "SELF", "Expected Decimal at SELF, found Bool"),

        // Dictionaries whose keys are not strings say so.
        bad([String: Int].self, any([1: 2]), .typeMismatch, "SELF", "Expected Dictionary with String keys at SELF, found Dictionary with Int keys"),
        bad([Int: String].self, any([1: "a"]), .typeMismatch, "SELF", "Expected Dictionary with String keys at SELF, found Dictionary with Int keys"),
        bad(User.self, any(NSDictionary(dictionary: [1: "a"])), .typeMismatch, "SELF", "Expected Dictionary with String keys at SELF, found Dictionary with Int keys"),
        // Strings that are not URLs, dates, or Base64.
        bad(URL.self, any(""), .dataCorrupted, "SELF", "Invalid URL string \"\" at SELF"),
        bad(URL.self, any("hello"), .dataCorrupted, "SELF", "Expected an absolute URL, found the relative URL string \"hello\" at SELF"),
        badStored(URL.self, any("hello"), .dataCorrupted, "SELF", "Expected an absolute URL, found the relative URL string \"hello\" at SELF"),
        bad([URL].self, any(["https://a.b", "http://[::1"]), .dataCorrupted, "SELF[1]", "Invalid URL string \"http://[::1\" at SELF[1]"),
        bad(URL.self, any(["relative": 5]), decoder: Decoders.absoluteURL, .typeMismatch, "SELF", "Expected String at SELF, found Dictionary"),
        bad(Data.self, any("not base64!"), decoder: Decoders.base64, .dataCorrupted, "SELF", "Encountered Data is not valid Base64 at SELF"),
        bad(Data.self, any("AQID"), .typeMismatch, "SELF", "Expected Data at SELF, found String"),
        bad(Data.self, any(Data([1])), decoder: Decoders.base64, .typeMismatch, "SELF", "Expected String at SELF, found Data"),
        bad(Date.self, any("yesterday"), decoder: Decoders.date(.iso8601), .dataCorrupted, "SELF", "Expected date string to be ISO8601-formatted at SELF"),
        bad(Date.self, any(true), decoder: Decoders.date(.secondsSince1970), .typeMismatch, "SELF", "Expected Date at SELF, found Bool"),

        // Unkeyed containers too short.
        bad(Point3.self, any([1, 2]), .valueNotFound, "SELF[2]", "Expected Int at SELF[2], found end of array"),
        bad(Point3.self, any([Any]()), .valueNotFound, "SELF[0]", "Expected Int at SELF[0], found end of array"),
        bad([Point3].self, any([[1, 2, 3], [4]]), .valueNotFound, "SELF[1][1]", "Expected Int at SELF[1][1], found end of array"),

        // nil where a value is required.
        bad(String.self, none, .valueNotFound, "SELF", "Expected String at SELF, found nil"),
        bad(
            [User].self, any([["id": 1, "name": "Herbert"], ["id": 2, "name": Optional<Any>.none as Any]]), .valueNotFound, "SELF[1].name",
            "Expected String at SELF[1].name, found nil"),
        bad([Int].self, any([1, Optional<Int>.none as Any]), .valueNotFound, "SELF[1]", "Expected BinaryInteger at SELF[1], found nil"),
        bad(Int.self, any(NSNull()), decoder: Decoders.null(.nsNull), .valueNotFound, "SELF", "Expected BinaryInteger at SELF, found nil"),
        // A placeholder stands for nil only where nil can be: a non-optional String
        // "$null" is that string (the encoders write it so), so these rows use Int.
        bad([Int].self, any([1, "$null"]), decoder: Decoders.null(.stringNull), .valueNotFound, "SELF[1]", "Expected BinaryInteger at SELF[1], found nil"),
        badStored(User.self, any(["id": StoredForm.null, "name": "a"]), .valueNotFound, "SELF.id", "Expected BinaryInteger at SELF.id, found nil"),
        badStored(User.self, any(["id": StoredForm.none, "name": "a"]), .valueNotFound, "SELF.id", "Expected BinaryInteger at SELF.id, found nil"),
        badStored(User.self, any(["id": 1, "name": StoredForm.decimalPrefix + "1.5"]), .typeMismatch, "SELF.name", "Expected String at SELF.name, found Decimal"),
        // "$null" is a plain string in the stored form: only the reserved U+FDD0 forms mean nil.
        badStored(User.self, any(["id": "$null", "name": "a"]), .typeMismatch, "SELF.id", "Expected BinaryInteger at SELF.id, found String"),

        // Dictionary keys that are not valid for [Int: …]: the standard library's
        // Dictionary decoding reports them, with the path.
        bad([Int: String].self, any(["x": "a"]), .typeMismatch, "SELF.x", "Expected Int key but found String key instead."),
        bad([Int: String].self, any(["1.5": "a"]), .typeMismatch, "SELF.1.5", "Expected Int key but found String key instead."),
        bad([Int: String].self, any(["99999999999999999999": "a"]), .typeMismatch, "SELF.99999999999999999999", "Expected Int key but found String key instead."),
        bad([Int: [Int: Int]].self, any(["1": ["": 2]]), .typeMismatch, "SELF.1.", "Expected Int key but found String key instead."),

        // Too deep.
        bad(Link.self, any(Link.tree(length: 600)), .dataCorrupted, Link.path(512), "Nesting deeper than 512 levels at \(Link.messagePath(512))"),
    ]

    @Test("every malformed input throws its exact error", arguments: rows)
    func badInput(_ row: BadInput) {
        let error = caught(DecodingError.self) { try row.decode() }
        #expect(DecodingErrorCase(error) == row.errorCase)
        #expect(readablePath(of: error) == row.path)
        #expect(debugDescription(of: error) == row.message)
    }

    @Test("the table has at least 60 rows")
    func tableSize() {
        #expect(Self.rows.count >= 60)
    }
}
