//
//  ReadmeTests.swift
//  DefaultsCoderTests
//
//  The README's examples, run as shown, with the outputs it shows.
//

import Foundation
import Testing
import DefaultsCoder

@Suite("README examples")
struct ReadmeTests {

    @Test("KeyValueEncoder")
    func encoder() throws {
        let encoder = KeyValueEncoder()
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(try encoder.encode(["fish", "chips"])) == .array([.string("fish"), .string("chips")]))
        #expect(Tree(try encoder.encode(Food(rawValue: "fish"))) == .string("fish"))
        #expect(Tree(try encoder.encode(Int8(5))) == .int8(5))
        #expect(Tree(try encoder.encode([1: "one"])) == .dictionary(["1": .string("one")]))
    }

    @Test("strategies")
    func strategies() throws {
        var encoder = KeyValueEncoder()
        encoder.dateEncodingStrategy = .iso8601(includingFractionalSeconds: true)
        encoder.urlEncodingStrategy = .absoluteString
        encoder.dataEncodingStrategy = .base64
        encoder.keyEncodingStrategy = .convertToSnakeCase

        struct Upload: Codable {
            var fileName: String
            var sentAt: Date
            var source: URL
            var checksum: Data
        }

        let upload = try encoder.encode(Upload(
            fileName: "a.txt",
            sentAt: Date(timeIntervalSince1970: 0.25),
            source: URL(string: "https://fish.com/a.txt")!,
            checksum: Data([1, 2, 3])
        ))
        #expect(Tree(upload) == .dictionary([
            "file_name": .string("a.txt"), "sent_at": .string("1970-01-01T00:00:00.250Z"),
            "source": .string("https://fish.com/a.txt"), "checksum": .string("AQID"),
        ]))

        encoder.keyEncodingStrategy = .custom { path in
            KeyValueCodingKey(stringValue: path.last!.stringValue.uppercased())
        }
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["ID": .int(1), "NAME": .string("Herbert")]))
    }

    @Test("KeyValueDecoder")
    func decoder() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Food.self, from: "fish") == Food(rawValue: "fish"))
        #expect(try decoder.decode([String].self, from: ["fish", "chips"]) == ["fish", "chips"])
        #expect(try decoder.decode(User.self, from: ["id": 1, "name": "Herbert"]) == User(id: 1, name: "Herbert"))
        #expect(try decoder.decode([Int8].self, from: [10, 20.0, -30.0, Int64(50)]) == [10, 20, -30, 50])

        var rounding = KeyValueDecoder()
        rounding.intDecodingStrategy = .rounding(rule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int].self, from: [10.1, -20.9, 50.00001]) == [10, -21, 50])
        rounding.intDecodingStrategy = .clamping(roundingRule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int8].self, from: [10, 20.5, 1000, -Double.infinity]) == [10, 21, 127, -128])
    }

    @Test("UserDefaults")
    func userDefaults() throws {
        let suite = TestSuite()
        let defaults = suite.defaults

        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner")
        try defaults.encode(URL(string: "https://fish.com/chips?x=1")!, forKey: "url")
        try defaults.encode(Duration.nanoseconds(1), forKey: "duration")

        let all = defaults.dictionaryRepresentation()
        #expect(Tree(all["owner"]) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(all["url"]) == .string("https://fish.com/chips?x=1"))
        #expect(Tree(all["duration"]) == .array([.int(0), .int(1_000_000_000)]))

        #expect(try defaults.decode(User.self, forKey: "owner") == User(id: 1, name: "Herbert"))
        #expect(try defaults.decode(URL.self, forKey: "url") == URL(string: "https://fish.com/chips?x=1"))
        #expect(try defaults.decode(Duration.self, forKey: "duration") == .nanoseconds(1))
        #expect(try defaults.decode(User.self, forKey: "nobody") == nil)

        try defaults.encode(User?.none, forKey: "owner")
        #expect(defaults.object(forKey: "owner") == nil)

        var encoder = KeyValueEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner", encoder: encoder)
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try defaults.decode(User.self, forKey: "owner", decoder: decoder) == User(id: 1, name: "Herbert"))
    }
}
