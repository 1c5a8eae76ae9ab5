//
//  CoderSupportTests.swift
//  DefaultsCoderTests
//

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("CoderSupport")
struct CoderSupportTests {

    struct Foreign: Error {}

    @Test("a custom strategy's coding errors pass through; any other error is wrapped")
    func customStrategies() throws {
        let coding = DecodingError.corrupted("inner", at: [])
        #expect(throws: DecodingError.self) {
            try runCustomStrategy({ throw coding }, wrap: { _ in CocoaError(.coderInvalidValue) })
        }
        let wrapped = caught(CocoaError.self) {
            try runCustomStrategy({ throw Foreign() }, wrap: { _ in CocoaError(.coderInvalidValue) })
        }
        #expect(wrapped?.code == .coderInvalidValue)
        #expect(try runCustomStrategy({ 5 }, wrap: { $0 }) == 5)
    }

    @Test("userInfo reaches both coders' values as given")
    func userInfo() throws {
        let key = CodingUserInfoKey(rawValue: "k")!
        #expect(codingUserInfo([:]).isEmpty)
        #expect(codingUserInfo([key: 3])[key] as? Int == 3)
        var decoder = KeyValueDecoder()
        decoder.userInfo[key] = "value"
        #expect(try decodeWith(1, decoder: decoder) { $0.userInfo[key] as? String } == "value")
    }
}
