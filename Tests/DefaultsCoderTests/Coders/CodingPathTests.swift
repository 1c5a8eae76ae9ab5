//
//  CodingPathTests.swift
//  DefaultsCoderTests
//

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("CodingPath")
struct CodingPathTests {

    @Test(
        "readable paths",
        arguments: [
            ([], "SELF"),
            ([IndexCodingKey(1), KeyValueCodingKey(stringValue: "name")], "SELF[1].name"),
            ([KeyValueCodingKey(stringValue: "a"), IndexCodingKey(0), IndexCodingKey(2)], "SELF.a[0][2]"),
            ([KeyValueCodingKey(intValue: 3)], "SELF.3"),
        ] as [([any CodingKey], String)])
    func readablePaths(path: [any CodingKey], expected: String) {
        #expect(readablePath(path) == expected)
    }

    @Test("a node's path is built only when asked for, from the root down")
    func nodes() {
        let users = CodingPathNode(parent: nil, step: .key(KeyValueCodingKey(stringValue: "users")))
        let fourth = CodingPathNode(parent: users, step: .index(4))
        #expect(fourth.depth == 2)
        #expect(readablePath(CodingPathNode.codingPath(of: fourth)) == "SELF.users[4]")
        #expect(readablePath(CodingPathNode.codingPath(of: fourth, then: .key(KeyValueCodingKey(stringValue: "zip")))) == "SELF.users[4].zip")
        #expect(CodingPathNode.codingPath(of: nil).isEmpty)
        #expect(CodingPathNode.appending(nil, to: fourth) === fourth)
    }

    @Test("index keys print as subscripts, integer dictionary keys as members")
    func indexKeys() {
        #expect(IndexCodingKey(3).intValue == 3)
        #expect(IndexCodingKey(stringValue: "3") == nil)
        #expect(KeyValueCodingKey(intValue: 3).stringValue == "3")
        #expect(KeyValueCodingKey.super.stringValue == "super")
    }
}
