// The stored tree handed to Foundation as its own collection classes: which values
// become which class, and that the suite's file ends up byte for byte as Foundation
// writes the Swift tree itself.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// A value to store, with what the package writes for it and Foundation's own write of
/// that same tree.
struct StoredSample: Sendable, CustomTestStringConvertible {
    let name: String
    let encode: @Sendable (UserDefaults, String) throws -> Void
    let tree: @Sendable () throws -> Any

    var testDescription: String { name }

    init<T: Encodable & Sendable>(_ name: String, _ value: T) {
        self.name = name
        encode = { defaults, key in try defaults.encode(value, forKey: key) }
        tree = {
            guard let tree = try KeyValueEncoder().encodeForUserDefaults(value) else {
                throw StoredFormLost()
            }
            return tree
        }
    }

    static let all: [StoredSample] = [
        StoredSample("every lossless kind of value", LosslessFixture()),
        StoredSample(
            "objects in arrays in objects, and empty ones",
            JSONValue.object([
                "rows": .array([.object(["a": .number(1), "b": .array([])]), .object([:]), .null]),
                "flags": .array([.bool(true), .bool(false), .number(0), .number(1)]),
                "name": .string("$null"),
            ])),
        StoredSample("an array at the top", [["x": 1], [:], ["y": -2]]),
        StoredSample("arrays of arrays", [[[1.5]], [], [[], [-0.0]]]),
        StoredSample("a string at the top", "a\u{0}b 🐟"),
        StoredSample("a number at the top", UInt64.max),
        StoredSample("a Bool at the top", true),
        StoredSample("primitive collections", PrimitiveCollections()),
    ]
}

/// The collections the encoder passes through whole, next to ones it builds.
struct PrimitiveCollections: Codable, Sendable {
    var strings = ["a", "$none", ""]
    var ints = [Int.min, 0, Int.max]
    var doubles = [0.5, -.infinity]
    var bools = [false, true]
    var byName: [String: Double] = ["x": 1, "y": -0.25]
    var flags: [String: Bool] = ["on": true]
    var labels: [String: String] = ["k": "$null"]
    var nested: [[String: Int]] = [["a": 1], ["b": 2]]
}

/// The XML with each `<real>`'s text replaced by the `Double` it reads as, and each
/// `<data>` without the line breaks Foundation puts in its Base64.
private func normalizingReals(_ data: Data) -> String {
    var text = String(decoding: data, as: UTF8.self)
    while let open = text.range(of: "<data>\n"), let close = text[open.upperBound...].range(of: "</data>") {
        let base64 = text[open.upperBound..<close.lowerBound].filter { !$0.isWhitespace }
        text.replaceSubrange(open.lowerBound..<close.upperBound, with: "<data>\(base64)</data>")
    }
    var result = ""
    var rest = Substring(text)
    while let open = rest.range(of: "<real>"), let close = rest[open.upperBound...].range(of: "</real>") {
        result += rest[..<open.upperBound]
        let digits = String(rest[open.upperBound..<close.lowerBound])
        // -0.0: Foundation writes 0.0; the package keeps the sign.
        result += Double(digits).map { $0 == 0 ? "0.0" : "\($0)" } ?? digits
        rest = rest[close.lowerBound...]
    }
    return result + rest
}

@Suite("Foundation collections")
struct FoundationCollectionsTests {

    @Test("the suite's file is what Foundation writes for the Swift tree, but for the digits of a real and the lines of Base64", arguments: StoredSample.all)
    func sameFileAsFoundation(sample: StoredSample) throws {
        let package = TestSuite("FoundationCollectionsPackage")
        let foundation = TestSuite("FoundationCollectionsFoundation")
        try sample.encode(package.defaults, "value")
        foundation.defaults.set(try sample.tree(), forKey: "value")
        package.defaults.synchronize()
        foundation.defaults.synchronize()

        let written = try Data(contentsOf: package.fileURL)
        let expected = try Data(contentsOf: foundation.fileURL)
        // The package writes the shortest digits that read back to the same Double (0.1),
        // Foundation 17 digits (0.10000000000000001): the same values.
        #expect(normalizingReals(written) == normalizingReals(expected))
        #expect(!written.isEmpty)
        let values = try PropertyListSerialization.propertyList(from: written, format: nil)
        let foundationValues = try PropertyListSerialization.propertyList(from: expected, format: nil)
        #expect(plistEqual(values, foundationValues))
    }

    #if !canImport(Darwin)
    @Test("a [String: Any] becomes an NSMutableDictionary and an [Any] an NSMutableArray; other values stay as they are")
    func classes() throws {
        let tree: [String: Any] = [
            "object": ["inner": [1, "two"] as [Any]] as [String: Any],
            "array": [["deep": true] as [String: Any], 3.5] as [Any],
            "text": "t",
        ]
        let top = try #require(FoundationCollections.make(tree) as? NSMutableDictionary)
        #expect(type(of: top) == NSMutableDictionary.self)
        #expect(plistEqual(top, tree))
        let array = try #require(FoundationCollections.make(tree["array"]!) as? NSMutableArray)
        #expect(type(of: array) == NSMutableArray.self)
        #expect(plistEqual(array, tree["array"]!))
        // Left for Foundation to bridge: they hold no container.
        #expect(type(of: FoundationCollections.make(["a", "b"])) == [String].self)
        #expect(type(of: FoundationCollections.make(["x": 1.5])) == [String: Double].self)
        #expect(type(of: FoundationCollections.make("t")) == String.self)
        #expect(type(of: FoundationCollections.make(7)) == Int.self)
    }
    #endif
}
