import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("CodingErrors")
struct CodingErrorsTests {

    @Test(
        "values are described by Swift names",
        arguments: [
            (SendableAny(1), "Int"),
            (SendableAny("x"), "String"),
            (SendableAny(true), "Bool"),
            (SendableAny(NSNumber(value: false)), "Bool"),
            (SendableAny(["a": 1]), "Dictionary"),
            (SendableAny([1, 2]), "Array"),
            (SendableAny(Optional<Any>.none as Any), "nil"),
            (SendableAny(NSNull()), "NSNull"),
            (SendableAny(NSArray(array: [1])), "Array"),
            (SendableAny(NSDictionary(dictionary: ["a": 1])), "Dictionary"),
            (SendableAny(Date(timeIntervalSince1970: 0)), "Date"),
            (SendableAny([1: "one"]), "Dictionary with Int keys"),
            (SendableAny(NSDictionary(dictionary: [1: "one"])), "Dictionary with Int keys"),
            (SendableAny([AnyHashable(1.5): "x"]), "Dictionary with Double keys"),
            // Foundation's own classes and their subclasses (on Apple platforms a date is
            // an `__NSTaggedDate`, data an `__NSCFData`) are named as the Swift types.
            (SendableAny(NSDate(timeIntervalSince1970: 0)), "Date"),
            (SendableAny(NSData(data: Data([1]))), "Data"),
            (SendableAny(NSMutableData(data: Data([1]))), "Data"),
            (SendableAny(Data([1])), "Data"),
            (SendableAny(NSMutableArray(array: [1])), "Array"),
            (SendableAny(NSMutableDictionary(dictionary: ["a": 1])), "Dictionary"),
            (SendableAny(NSMutableString(string: "x")), "String"),
            (SendableAny(NSString(string: "x")), "String"),
        ])
    func describing(value: SendableAny, expected: String) {
        #expect(FoundValue.describing(value.value).description == expected)
    }

    @Test(
        "expected names come from types",
        arguments: [
            (Int8.self as Any.Type, "BinaryInteger"),
            (UInt64.self, "BinaryInteger"),
            ([String: Any].self, "Dictionary"),
            ([String: Int].self, "Dictionary"),
            ([Any].self, "Array"),
            (String.self, "String"),
            (URL.self, "URL"),
        ] as [(Any.Type, String)])
    func expected(type: Any.Type, name: String) {
        #expect(expectedName(type) == name)
    }

    @Test("an inexact number says so by a case, not only by its message")
    func inexactIsACase() throws {
        let error = caught(DecodingError.self) { try KeyValueDecoder().decode(UInt8.self, from: 1000) }
        guard case .typeMismatch(_, let context)? = error else {
            Issue.record("expected a type mismatch, got \(String(describing: error))")
            return
        }
        #expect(context.underlyingError as? CodingProblem == .inexactNumber)
        #expect(context.debugDescription == "Int at SELF, cannot be exactly represented by UInt8")
        let other = caught(DecodingError.self) { try KeyValueDecoder().decode(UInt8.self, from: "x") }
        guard case .typeMismatch(_, let otherContext)? = other else { return }
        #expect(otherContext.underlyingError == nil)
    }

    @Test("the case follows what was found: nil and the end of an array are valueNotFound")
    func cases() {
        let path: [any CodingKey] = [IndexCodingKey(1)]
        guard case .valueNotFound = DecodingError.mismatch(String.self, found: .null, at: path) else {
            Issue.record("nil is valueNotFound")
            return
        }
        guard case .valueNotFound(_, let context) = DecodingError.mismatch(Int.self, found: .endOfArray, at: path) else {
            Issue.record("the end of an array is valueNotFound")
            return
        }
        #expect(context.debugDescription == "Expected Int at SELF[1], found end of array")
        guard case .typeMismatch(_, let mismatch) = DecodingError.mismatch(Int.self, found: .value(String.self), at: path) else {
            Issue.record("a String is typeMismatch")
            return
        }
        #expect(mismatch.debugDescription == "Expected BinaryInteger at SELF[1], found String")
        let date = DecodingError.mismatch(Date.self, expected: String.self, found: .value(Int.self), at: path)
        #expect(debugDescription(of: date) == "Expected String at SELF[1], found Int")
    }
}
