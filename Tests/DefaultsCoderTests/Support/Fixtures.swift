// Values the tests share: every case the UserDefaults contract promises to keep, and
// models that read their properties through the doors Foundation's coders offer.

import Foundation

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

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

// MARK: - Doors

/// A JSON-like value: its `init(from:)` asks `decodeNil()` first, and `.null` encodes
/// `nil` although the type is not optional.
public indirect enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// `.array` nested `levels` deep around `inner`: `levels` containers.
    public static func nested(_ levels: Int, _ inner: JSONValue = .string("x")) -> JSONValue {
        (0..<levels).reduce(inner) { value, _ in .array([value]) }
    }
}

/// v1 of a profile: writes its nickname with `encode(_:forKey:)`.
public struct ProfileV1: Codable, Equatable, Sendable {
    public var nickname: String
    public var note: JSONValue
    public init(nickname: String, note: JSONValue) {
        self.nickname = nickname
        self.note = note
    }
}

/// v2 of the same profile: reads both properties with `decodeIfPresent`.
public struct ProfileV2: Codable, Equatable, Sendable {
    public var nickname: String
    public var note: JSONValue?

    enum CodingKeys: String, CodingKey { case nickname, note }

    public init(nickname: String, note: JSONValue?) {
        self.nickname = nickname
        self.note = note
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nickname = try container.decodeIfPresent(String.self, forKey: .nickname) ?? "(none)"
        note = try container.decodeIfPresent(JSONValue.self, forKey: .note)
    }
}

/// Strings that look like the stored form's reserved forms, or that a property list
/// file changes.
public enum TrickyStrings {
    public static let marker = String(Unicode.Scalar(0xFDD0)!)
    public static let all: [String] = [
        "$null", "$$null", "$$$null", "null", "",
        marker, marker + "none", marker + "null", marker + "some(none)", marker + "some(null)",
        marker + "decimal:1.5", marker + marker + "null", marker + "\u{FEFF}", marker + "other",
        "\u{FEFF}", "\u{FEFF}x", "\u{FEFF}\u{FEFF}", "x\u{FEFF}", "\u{FEFF}" + marker + "null",
        "42", "1.5", "hello", "https://fish.com/x", "/chips", "AQID",
    ]
}

// MARK: - Models the tests share

struct User: Codable, Equatable {
    var id: Int
    var name: String
}

struct Food: RawRepresentable, Codable, Equatable {
    var rawValue: String
}

enum Event: Codable, Equatable {
    case tap(x: Int, y: Int)
    case message(String)
    case reset
}

class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class Dog: Animal {
    var breed: String
    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }
    private enum CodingKeys: String, CodingKey { case breed }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

/// Writes through every kind of keyed write: value, nil, nested containers, super encoder.
struct EveryKeyedWrite: Encodable {
    enum Keys: String, CodingKey { case firstValue, missingValue, nestedBox, nestedList, superKey }
    enum Inner: String, CodingKey { case innerValue }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .firstValue)
        try container.encodeNil(forKey: .missingValue)
        var nested = container.nestedContainer(keyedBy: Inner.self, forKey: .nestedBox)
        try nested.encode("x", forKey: .innerValue)
        var list = container.nestedUnkeyedContainer(forKey: .nestedList)
        try list.encode(true)
        var superContainer = container.superEncoder(forKey: .superKey).container(keyedBy: Inner.self)
        try superContainer.encode(2, forKey: .innerValue)
    }
}

/// Requests two different containers for one value: a misuse that must throw, not trap.
struct TwoContainers: Encodable {
    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(1)
        var unkeyed = encoder.unkeyedContainer()
        try unkeyed.encode(2)
    }
}

struct Failing: Encodable {
    struct Boom: Error {}
    func encode(to encoder: any Encoder) throws { throw Boom() }
}

struct Dated: Codable, Equatable { var when: Date }

enum Theme: String, Codable, Sendable {
    case system, light, dark
}

enum Level: Int, Codable, Sendable {
    case low = 1, high = 10
}

extension DefaultsKeys {
    static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
    static let owner = DefaultsKey<User?>("owner")
    static let theme = DefaultsKey<Theme>("app.appearance.theme", default: .system)
    static let level = DefaultsKey<Level>("level", default: .low)
}

struct SnakeModel: Codable, Equatable {
    var firstName: String
    var homeURL: String
}

struct Bookmark: Codable, Equatable {
    var title: String
    var link: URL
}

struct Price: Codable, Equatable {
    var amount: Decimal
}

/// A value that is not `Equatable`: changes are found by the stored property list.
struct Unequatable: Codable, Sendable {
    var value: Int
}

/// A singly linked chain of values, for nesting limits: `Link(length: 3)` encodes as
/// `["next": ["next": [:]]]`.
final class Link: Codable, Sendable {
    let next: Link?

    init(length: Int) {
        var link: Link? = nil
        for _ in 1..<length { link = Link(next: link) }
        next = link
    }

    private init(next: Link?) { self.next = next }

    var length: Int {
        var count = 1
        var link = next
        while let current = link {
            count += 1
            link = current.next
        }
        return count
    }

    /// The tree `Link(length:)` encodes to, built without the encoder.
    static func tree(length: Int) -> [String: Any] {
        var tree: [String: Any] = [:]
        for _ in 1..<length { tree = ["next": tree] }
        return tree
    }

    /// The readable path of the link at `index` (0 is the top).
    static func path(_ index: Int) -> String {
        "SELF" + String(repeating: ".next", count: index)
    }

    /// The path as error messages print it (`messagePath`).
    static func messagePath(_ index: Int) -> String {
        guard index > 16 else { return path(index) }
        return "SELF" + String(repeating: ".next", count: 6) + " … " + String(repeating: ".next", count: 6) + " (\(index) deep)"
    }
}

/// Writes its value with `encodeNil(forKey:)` when it has none, as JSON-minded models do.
struct ExplicitNull: Encodable {
    var value: String?
    enum CodingKeys: String, CodingKey { case nickname }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let value { try container.encode(value, forKey: .nickname) } else { try container.encodeNil(forKey: .nickname) }
    }
}

/// A class whose `encode(to:)` reaches itself through a reference cycle.
final class Cyclic: Codable, @unchecked Sendable {
    var next: Cyclic?
    init() {}
}

/// Arrays of arrays around a string, read without `try?`, so that the first error is
/// the one thrown.
indirect enum StrictNest: Decodable, Sendable {
    case leaf(String)
    case branch([StrictNest])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .leaf(string)
        } else {
            self = .branch(try container.decode([StrictNest].self))
        }
    }
}

/// A value whose `encode(to:)` encodes itself through a single value container: the
/// path never grows, only the stack.
struct SelfEncoding: Codable, Sendable {
    init() {}
    init(from decoder: any Decoder) throws { self = try decoder.singleValueContainer().decode(SelfEncoding.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self)
    }
}

/// Models for the rows.
struct Point3: Decodable {
    var x: Int, y: Int, z: Int
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        x = try container.decode(Int.self)
        y = try container.decode(Int.self)
        z = try container.decode(Int.self)
    }
}

struct Team: Decodable {
    var name: String
    var members: [User]
    var lead: User?
    var scores: [String: [Int]]
}

enum Shape: Decodable {
    case circle(radius: Double)
    case square(side: Double)
}
