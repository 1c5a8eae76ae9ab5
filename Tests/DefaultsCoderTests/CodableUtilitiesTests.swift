//
//  CodableUtilitiesTests.swift
//  DefaultsCoderTests
//

import Foundation
import Testing
@testable import DefaultsCoder

@Suite("CodableUtilities")
struct CodableUtilitiesTests {

    @Test("readable paths", arguments: [
        ([], "SELF"),
        ([IndexCodingKey(1), KeyValueCodingKey(stringValue: "name")], "SELF[1].name"),
        ([KeyValueCodingKey(stringValue: "a"), IndexCodingKey(0), IndexCodingKey(2)], "SELF.a[0][2]"),
        ([KeyValueCodingKey(intValue: 3)], "SELF.3"),
    ] as [([any CodingKey], String)])
    func readablePaths(path: [any CodingKey], expected: String) {
        #expect(readablePath(path) == expected)
    }

    @Test("path stack materialises only the requested depth")
    func pathStack() {
        var stack = PathStack()
        stack.push(.key(KeyValueCodingKey(stringValue: "users")))
        stack.push(.index(4))
        stack.push(.key(KeyValueCodingKey(stringValue: "address")))
        #expect(readablePath(stack.codingPath(depth: 2)) == "SELF.users[4]")
        #expect(readablePath(stack.codingPath(depth: 3, last: .key(KeyValueCodingKey(stringValue: "zip")))) == "SELF.users[4].address.zip")
        stack.pop()
        #expect(stack.depth == 2)
        let rebuilt = PathStack(prefix: stack.codingPath(depth: 2))
        #expect(readablePath(rebuilt.codingPath(depth: rebuilt.depth)) == "SELF.users[4]")
    }

    @Test("convert to snake case", arguments: [
        ("oneTwoThree", "one_two_three"),
        ("myURLProperty", "my_url_property"),
        ("URLValue", "url_value"),
        ("already_snake", "already_snake"),
        ("single", "single"),
        ("_leading", "_leading"),
        ("value2Go", "value2_go"),
        ("", ""),
    ])
    func snakeCase(input: String, expected: String) {
        #expect(convertToSnakeCase(input) == expected)
    }

    @Test("convert from snake case", arguments: [
        ("one_two_three", "oneTwoThree"),
        ("my_url_property", "myUrlProperty"),
        ("_leading_under", "_leadingUnder"),
        ("trailing_under_", "trailingUnder_"),
        ("__both__", "__both__"),
        ("plain", "plain"),
        ("camelCase", "camelCase"),
        ("", ""),
        ("_", "_"),
    ])
    func fromSnakeCase(input: String, expected: String) {
        #expect(convertFromSnakeCase(input) == expected)
    }

    @Test("strict decimal parsing", arguments: [
        ("1.5", Decimal(string: "1.5")),
        ("-0.000001", Decimal(string: "-0.000001")),
        ("1e3", Decimal(1000)),
        ("12345678901234567890123456789012345678", Decimal(string: "12345678901234567890123456789012345678")),
        ("1.5abc", nil),
        ("", nil),
        ("-", nil),
        ("1..5", nil),
        ("e5", nil),
        ("NaN", nil),
    ] as [(String, Decimal?)])
    func strictDecimal(input: String, expected: Decimal?) {
        #expect(Decimal(strictString: input) == expected)
    }

    @Test("decimal canonical text reads back equal", arguments: ["1.5", "-0.000001", "12345678901234567890123456789012345678", "0", "-3e-20"])
    func decimalCanonical(input: String) throws {
        let decimal = try #require(Decimal(string: input))
        #expect(Decimal(strictString: decimal.canonicalString) == decimal)
    }

    @Test("stored null forms", arguments: [
        ("$null", true), ("$$null", true), ("$$$null", true),
        ("null", false), ("$nul", false), ("x$null", false), ("$null$", false), ("$", false),
    ])
    func nullForms(input: String, expected: Bool) {
        #expect(isEscapedNullForm(input) == expected)
    }

    @Test("numbers are classified by what they are, not what they bridge to")
    func classification() {
        #expect(classifyNumber(NSNumber(value: true))?.typeName == "Bool")
        #expect(classifyNumber(true)?.typeName == "Bool")
        #expect(classifyNumber(NSNumber(value: 1))?.isBool == false)
        #expect(classifyNumber(NSNumber(value: 1.5))?.typeName == "Double")
        #expect(classifyNumber(UInt8(3))?.typeName == "UInt8")
        #expect(classifyNumber(Optional<Any>.some(Int64(2)) as Any)?.typeName == "Int64")
        #expect(classifyNumber("1") == nil)
        #expect(classifyNumber(Date()) == nil)
        #expect(classifyNumber(CGFloat(2.5))?.typeName == "Double")
        #expect(classifyNumber([1, 2]) == nil)
        #expect(classifyNumber(NSArray(array: [1])) == nil)
    }

    @Test("class checks answer for Swift containers and Foundation objects alike")
    func objectChecks() {
        #expect(isObject(NSNull()))
        #expect(!isObject([1, 2]))
        #expect(!isObject(["a": 1]))
        #expect(isNSNull(NSNull()))
        #expect(!isNSNull([NSNull()]))
        #expect(!isNSNull(Optional<Any>.none as Any))
        #expect(isDictionary(["a": 1]))
        #expect(isDictionary(NSDictionary(dictionary: ["a": 1])))
        #expect(!isDictionary([1]))
        #expect(isArray([1]))
        #expect(isArray(NSArray(array: [1])))
        #expect(!isArray(["a": 1]))
    }

    @Test("types are described as Swift names", arguments: [
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
    ])
    func describing(value: SendableAny, expected: String) {
        #expect(describeType(of: value.value) == expected)
    }
}
