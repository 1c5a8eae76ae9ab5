//
//  KeyConversionTests.swift
//  DefaultsCoderTests
//

import Foundation
import Testing
@testable import DefaultsCoder

@Suite("KeyConversion")
struct KeyConversionTests {

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
}
