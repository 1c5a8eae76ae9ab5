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
        let levels = PathLevels()
        let users = levels.push(.key(KeyValueCodingKey(stringValue: "users")), below: nil)
        let fourth = levels.push(.index(4), below: users)
        #expect(fourth.depth == 2)
        #expect(readablePath(levels.codingPath(of: fourth)) == "SELF.users[4]")
        #expect(readablePath(levels.codingPath(of: fourth, then: .key(KeyValueCodingKey(stringValue: "zip")))) == "SELF.users[4].zip")
        #expect(levels.codingPath(of: nil).isEmpty)
        #expect(levels.appending(nil, to: fourth)?.depth == 2)
        #expect(levels.height == 2)
    }

    @Test("a node whose level was popped names only what follows it, even once its place is taken again")
    func poppedLevels() {
        let levels = PathLevels()
        let users = levels.push(.key(KeyValueCodingKey(stringValue: "users")), below: nil)
        let height = levels.height
        let first = levels.push(.index(0), below: users)
        levels.pop(to: height)
        let second = levels.push(.index(1), below: users)
        #expect(readablePath(levels.codingPath(of: second)) == "SELF.users[1]")
        #expect(readablePath(levels.codingPath(of: first, then: .key(KeyValueCodingKey(stringValue: "id")))) == "SELF.id")
        // A level pushed below a node that is gone starts a path of its own: the walk
        // up never leaves the stack.
        levels.pop(to: 0)
        let orphan = levels.push(.key(KeyValueCodingKey(stringValue: "late")), below: second)
        #expect(orphan.depth == 3)
        #expect(readablePath(levels.codingPath(of: orphan)) == "SELF.late")
        levels.pop(to: 10)
        #expect(levels.height == 1)
    }

    @Test("index keys print as subscripts, integer dictionary keys as members")
    func indexKeys() {
        #expect(IndexCodingKey(3).intValue == 3)
        #expect(IndexCodingKey(stringValue: "3") == nil)
        #expect(KeyValueCodingKey(intValue: 3).stringValue == "3")
        #expect(KeyValueCodingKey.super.stringValue == "super")
    }
}
