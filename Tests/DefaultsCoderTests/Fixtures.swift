//
//  Fixtures.swift
//  DefaultsCoderTests
//
//  Values the tests share: every case the UserDefaults contract promises to keep, and
//  models that read their properties through the doors Foundation's coders offer.
//

import DefaultsCoder
import Foundation

/// An enum with associated values.
public enum FixtureShape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case label(String, size: Int?)
    case empty
}

/// Every kind of value that `UserDefaults.encode(_:forKey:)` must store without loss.
public struct LosslessFixture: Codable, Equatable, Sendable {
    public var httpURL = URL(string: "https://fish.com/chips?x=1&y=%20#frag")!
    public var fileURL = URL(fileURLWithPath: "/tmp/fish & chips/menu.txt")
    public var relativeURL = URL(string: "chips?x=1", relativeTo: URL(string: "https://fish.com/a/")!)!
    public var nestedURLs = [URL(string: "https://a.example/x")!, URL(string: "b/c", relativeTo: URL(string: "file:///base/")!)!]
    public var decimals: [Decimal] = [
        Decimal(string: "1.5")!, Decimal(string: "-0.000001")!,
        Decimal(string: "12345678901234567890123456789012345678")!, Decimal(string: "-0.1")!,
    ]
    public var int64Min = Int64.min
    public var uint64Max = UInt64.max
    public var int8Values: [Int8] = [.min, .max]
    public var doubles: [Double] = [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, .infinity, -.infinity, 0.1, -1.5]
    public var floats: [Float] = [.greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1, -3.25]
    public var date = Date(timeIntervalSinceReferenceDate: 12_345.678_9)
    public var negativeDate = Date(timeIntervalSinceReferenceDate: -1.5)
    public var wholeDate = Date(timeIntervalSince1970: 1_700_000_000)
    public var data = Data([0, 1, 2, 0xFE, 0xFF])
    public var emptyArray: [Int] = []
    public var emptyDictionary: [String: String] = [:]
    public var intKeyed: [Int: String] = [1: "one", -2: "minus two"]
    public var uuidKeyed: [UUID: Int] = [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!: 7]
    public var shapes: [FixtureShape] = [.circle(radius: 2.5), .label("hi", size: nil), .label("$null", size: 3), .empty]
    public var outerNil: Int?? = .none
    public var innerNil: Int?? = .some(.none)
    public var someValue: Int?? = .some(.some(4))
    public var optionalStrings: [String?] = ["$null", nil, "x", "$$null"]
    public var nulAndEmoji = "a\u{0}b 🐟🍟 é"
    public var bools = [true, false]

    /// The fixture.
    public init() {}
}
