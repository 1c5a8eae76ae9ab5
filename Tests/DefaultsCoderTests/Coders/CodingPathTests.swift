import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

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
        var levels = PathLevels()
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
        var levels = PathLevels()
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

    @Test("settling a value's step moves it into a level once; the node names the same path")
    func settle() {
        var levels = PathLevels()
        var node: CodingPathNode? = levels.push(.key(KeyValueCodingKey(stringValue: "users")), below: nil)
        var step: PathStep? = .index(2)
        let settled = levels.settle(&step, below: &node)
        #expect(step == nil)
        #expect(settled?.depth == 2 && node?.depth == 2)
        #expect(readablePath(levels.codingPath(of: settled)) == "SELF.users[2]")
        #expect(levels.height == 2)
        // A second container of the same value finds nothing to push.
        let again = levels.settle(&step, below: &node)
        #expect(levels.height == 2)
        #expect(readablePath(levels.codingPath(of: again)) == "SELF.users[2]")
    }

    // MARK: The coders' paths, kept as levels

    /// A value with a keyed container of two levels, to encode and decode beside others.
    struct Sibling: Codable, Equatable {
        struct Inner: Codable, Equatable { var deep: [Int] }
        var inner: Inner
    }

    @Test("a nested container made before a sibling value is encoded keeps its own path")
    func encoderNestedAfterSibling() throws {
        var encoder = KeyValueEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let error = caught(EncodingError.self) {
            try encodeKeyed(with: encoder) { container, _ in
                var outer = container.nestedContainer(keyedBy: AnyKey.self, forKey: "outer")
                try container.encode(Sibling(inner: .init(deep: [1, 2])), forKey: "sibling")
                try container.encode([Sibling(inner: .init(deep: [3]))], forKey: "siblings")
                try outer.encode(Date(timeIntervalSinceReferenceDate: .infinity), forKey: "when")
            }
        }
        #expect(readablePath(of: error) == "SELF.outer.when")
        let tree = try encodeKeyed { container, _ in
            var outer = container.nestedContainer(keyedBy: AnyKey.self, forKey: "outer")
            try container.encode(Sibling(inner: .init(deep: [1])), forKey: "sibling")
            try outer.encode(5, forKey: "five")
            #expect(readablePath(outer.codingPath) == "SELF.outer")
        }
        #expect(Tree(tree) == Tree(["outer": ["five": 5], "sibling": ["inner": ["deep": [1]]]]))
    }

    @Test("a nested container made before a sibling value is decoded reads its own values, and names its own path")
    func decoderNestedAfterSibling() throws {
        let tree: [String: Any] = ["outer": ["x": "not a number", "y": 7], "sibling": ["inner": ["deep": [1, 2]]]]
        let read = try decodeWith(tree) { decoder -> [Any] in
            let container = try decoder.container(keyedBy: AnyKey.self)
            let outer = try container.nestedContainer(keyedBy: AnyKey.self, forKey: "outer")
            let sibling = try container.decode(Sibling.self, forKey: "sibling")
            let error = caught(DecodingError.self) { _ = try outer.decode(Int.self, forKey: "x") }
            return [sibling, try outer.decode(Int.self, forKey: "y"), readablePath(of: error) ?? "no error", readablePath(outer.codingPath)]
        }
        #expect(read[0] as? Sibling == Sibling(inner: .init(deep: [1, 2])))
        #expect(read[1] as? Int == 7)
        #expect(read[2] as? String == "SELF.outer.x")
        #expect(read[3] as? String == "SELF.outer")
    }

    /// A value that asks for its keyed container twice, and notes the paths it sees.
    struct TwoContainers: Codable {
        /// The paths seen: the coder's before its first container, after it, and the
        /// second container's; then an error's from the second container, when decoding.
        nonisolated(unsafe) static var paths: [String] = []

        init() {}

        init(from decoder: any Decoder) throws {
            Self.paths = [readablePath(decoder.codingPath)]
            _ = try decoder.container(keyedBy: AnyKey.self)
            Self.paths.append(readablePath(decoder.codingPath))
            let second = try decoder.container(keyedBy: AnyKey.self)
            Self.paths.append(readablePath(second.codingPath))
            let error = caught(DecodingError.self) { _ = try second.decode(Int.self, forKey: "a") }
            Self.paths.append(readablePath(of: error) ?? "no error")
        }

        func encode(to encoder: any Encoder) throws {
            Self.paths = [readablePath(encoder.codingPath)]
            var first = encoder.container(keyedBy: AnyKey.self)
            try first.encode(1, forKey: "one")
            Self.paths.append(readablePath(encoder.codingPath))
            var second = encoder.container(keyedBy: AnyKey.self)
            try second.encode(2, forKey: "two")
            Self.paths.append(readablePath(second.codingPath))
        }
    }

    @Test("a value that asks for its container twice sees one path, before and after, in both coders")
    func containersAskedForTwice() throws {
        let tree = try KeyValueEncoder().encode(["list": [TwoContainers()]])
        #expect(TwoContainers.paths == ["SELF.list[0]", "SELF.list[0]", "SELF.list[0]"])
        #expect(Tree(tree) == Tree(["list": [["one": 1, "two": 2]]]))
        _ = try KeyValueDecoder().decode([String: [TwoContainers]].self, from: ["list": [["a": "text"]]])
        #expect(TwoContainers.paths == ["SELF.list[0]", "SELF.list[0]", "SELF.list[0]", "SELF.list[0].a"])
    }

    /// Keeps the keyed container its `init(from:)` or `encode(to:)` was given.
    final class Kept: @unchecked Sendable {
        var decoding: KeyedDecodingContainer<AnyKey>?
        var encoding: KeyedEncodingContainer<AnyKey>?
    }

    @Test("a container used after its value is complete does not crash: a decoding one reads its values, and names only the key")
    func containerKeptPastItsValue() throws {
        let kept = Kept()
        let tree: [String: Any] = ["first": ["a": 1, "b": "two"], "second": ["c": [3]]]
        _ = try decodeWith(tree) { decoder -> Int in
            let container = try decoder.container(keyedBy: AnyKey.self)
            kept.decoding = try container.nestedContainer(keyedBy: AnyKey.self, forKey: "first")
            return try decodeWith(tree["second"]!) { inner in
                try inner.container(keyedBy: AnyKey.self).decode([Int].self, forKey: "c").count
            }
        }
        _ = try KeyValueDecoder().decode([Sibling].self, from: [["inner": ["deep": [1]]], ["inner": ["deep": [2]]]])
        let container = try #require(kept.decoding)
        #expect(try container.decode(Int.self, forKey: "a") == 1)
        let error = caught(DecodingError.self) { _ = try container.decode(Int.self, forKey: "b") }
        #expect(readablePath(of: error) == "SELF.b")

        _ = try encodeKeyed { container, _ in
            kept.encoding = container.nestedContainer(keyedBy: AnyKey.self, forKey: "later")
        }
        _ = try KeyValueEncoder().encode([Sibling(inner: .init(deep: [1]))])
        var encoding = try #require(kept.encoding)
        try encoding.encode(1, forKey: "late")
        #expect(readablePath(encoding.codingPath) == "SELF")
        // The kept containers refer to their coders, whose user info holds the closures
        // that refer to `kept`: letting go of them breaks the cycle.
        (kept.decoding, kept.encoding) = (nil, nil)
    }

    @Test("index keys print as subscripts, integer dictionary keys as members")
    func indexKeys() {
        #expect(IndexCodingKey(3).intValue == 3)
        #expect(IndexCodingKey(stringValue: "3") == nil)
        #expect(KeyValueCodingKey(intValue: 3).stringValue == "3")
        #expect(KeyValueCodingKey.super.stringValue == "super")
    }
}
