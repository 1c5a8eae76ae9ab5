// Random `Codable` values over a recursive schema, drawn from an entropy source: a
// seeded generator in the round-trip tests, the fuzzer's input bytes in `Fuzz/`
// (which compiles this file too, so it imports nothing but Foundation and the library).

import Foundation

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

// MARK: - Entropy

/// Where generated values get their randomness from.
protocol Entropy {
    /// The next 64 random bits.
    mutating func next() -> UInt64
}

extension Entropy {
    /// A number in `0..<bound`; `bound` must be positive.
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// `true` about once in `n` draws.
    mutating func oneIn(_ n: Int) -> Bool {
        below(n) == 0
    }

    /// One of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[below(choices.count)]
    }
}

/// SplitMix64: small, fast, and the same sequence for the same seed on every platform.
struct SeededEntropy: Entropy {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The fuzzer's input read eight bytes at a time; zeros once it runs out, so every
/// input makes a finite value.
struct ByteEntropy: Entropy {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isExhausted: Bool { offset >= bytes.count }

    mutating func next() -> UInt64 {
        var result: UInt64 = 0
        for _ in 0..<8 {
            let byte = offset < bytes.count ? bytes[offset] : 0
            offset += 1
            result = result << 8 | UInt64(byte)
        }
        return result
    }

    /// One byte, for choices that need no more.
    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }
}

// MARK: - Schema

/// A floating-point number that equals itself when it is NaN, so generated values
/// compare with `==`. (`-0.0` still equals `0.0`.)
struct Real<Value: BinaryFloatingPoint & Codable & Sendable>: Codable, Equatable, Sendable, CustomStringConvertible {
    var value: Value

    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Value.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.value == rhs.value || (lhs.value.isNaN && rhs.value.isNaN)
    }
    var description: String { "\(value)" }
}

/// One value of the recursive schema: every primitive, containers, optionals, enums
/// with and without payloads, and structs.
indirect enum GeneratedValue: Codable, Equatable, Sendable {
    case int(Int), int8(Int8), int16(Int16), int32(Int32), int64(Int64)
    case uint(UInt), uint8(UInt8), uint16(UInt16), uint32(UInt32), uint64(UInt64)
    case double(Real<Double>), float(Real<Float>)
    case bool(Bool)
    case string(String)
    case date(Date)
    case data(Data)
    case url(URL)
    case decimal(Decimal)
    case color(Color)
    case empty
    case labelled(name: String, value: GeneratedValue)
    case optional(GeneratedValue?)
    case array([GeneratedValue])
    case optionals([GeneratedValue?])
    /// `.some(nil)` inside an array: kept by the UserDefaults form only.
    case doubleOptionals([GeneratedValue??])
    case dictionary([String: GeneratedValue])
    case intKeyed([Int: GeneratedValue])
    case record(GeneratedRecord)
    case profile(GeneratedProfile)
    /// Containers nested close to the limit of the stored form.
    case deep(DeepNesting)
}

/// Written with `encode(_:forKey:)`, `nil` included, and read with `decodeIfPresent`:
/// the doors differ, the value must not.
struct GeneratedProfile: Codable, Equatable, Sendable {
    var nickname: String?
    var value: GeneratedValue?

    enum CodingKeys: String, CodingKey { case nickname, value }

    init(nickname: String?, value: GeneratedValue?) {
        self.nickname = nickname
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
        value = try container.decodeIfPresent(GeneratedValue.self, forKey: .value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(value, forKey: .value)
    }
}

/// `levels` arrays, each holding the next, made with nested containers rather than
/// recursion: `[[[…]]]`.
struct DeepNesting: Codable, Equatable, Sendable {
    var levels: Int

    init(levels: Int) { self.levels = levels }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var levels = 1
        while !container.isAtEnd {
            container = try container.nestedUnkeyedContainer()
            levels += 1
        }
        self.levels = levels
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for _ in 1..<max(levels, 1) { container = container.nestedUnkeyedContainer() }
    }
}

/// A struct of the schema, with optional and collection properties.
struct GeneratedRecord: Codable, Equatable, Sendable {
    var id: Int64
    var name: String?
    var tags: [String]
    var flags: [Bool?]
    var child: GeneratedValue?
}

/// An enum stored as its raw value.
enum Color: String, Codable, Equatable, Sendable, CaseIterable {
    case red, green, blue
}

// MARK: - Generator

/// Draws `GeneratedValue`s from an entropy source.
struct ValueGenerator<Source: Entropy> {
    var source: Source
    /// Whether `.some(nil)` inside arrays may appear (the UserDefaults form keeps it).
    var nestedNils: Bool
    /// How deep containers may nest.
    var maxDepth: Int
    /// The most containers the rare deep value sits in: the stored form's limit where the
    /// values go to a suite (`nestedNils`), the coders' otherwise.
    var deepest: Int

    init(source: Source, nestedNils: Bool, maxDepth: Int = 5, deepest: Int? = nil) {
        self.source = source
        self.nestedNils = nestedNils
        self.maxDepth = maxDepth
        self.deepest = deepest ?? (nestedNils ? StoredForm.containerDepthLimit : NestingGuard.maximumContainers)
    }

    mutating func value(depth: Int = 0) -> GeneratedValue {
        let leaf = depth >= maxDepth || source.below(3) == 0
        if leaf {
            return primitive()
        }
        if depth == 0, source.oneIn(60) {
            // An enum case adds two containers above the nesting: stay within `deepest`.
            return .deep(DeepNesting(levels: deepest - 52 + source.below(48)))
        }
        switch source.below(nestedNils ? 10 : 9) {
        case 0: return .array(list(depth) { $0.value(depth: depth + 1) })
        case 1: return .optionals(list(depth) { $0.source.oneIn(3) ? nil : $0.value(depth: depth + 1) })
        case 2:
            var dictionary: [String: GeneratedValue] = [:]
            for _ in 0..<source.below(5) { dictionary[key()] = value(depth: depth + 1) }
            return .dictionary(dictionary)
        case 3:
            var dictionary: [Int: GeneratedValue] = [:]
            for _ in 0..<source.below(5) { dictionary[int()] = value(depth: depth + 1) }
            return .intKeyed(dictionary)
        case 4: return .record(record(depth: depth))
        case 5: return .optional(source.oneIn(2) ? nil : value(depth: depth + 1))
        case 6: return .labelled(name: string(), value: value(depth: depth + 1))
        case 7: return .record(record(depth: depth))
        case 8: return .profile(GeneratedProfile(nickname: source.oneIn(3) ? nil : string(), value: source.oneIn(3) ? nil : value(depth: depth + 1)))
        default:
            return .doubleOptionals(
                list(depth) {
                    switch $0.source.below(3) {
                    case 0: return .none
                    case 1: return .some(.none)
                    default: return .some(.some($0.value(depth: depth + 1)))
                    }
                })
        }
    }

    mutating func record(depth: Int) -> GeneratedRecord {
        GeneratedRecord(
            id: int64(),
            name: source.oneIn(3) ? nil : string(),
            tags: list(depth) { $0.string() },
            flags: list(depth) { $0.source.oneIn(3) ? nil : $0.source.oneIn(2) },
            child: source.oneIn(2) ? nil : value(depth: depth + 1)
        )
    }

    mutating func primitive() -> GeneratedValue {
        switch source.below(18) {
        case 0: return .int(int())
        case 1: return .int8(Int8(truncatingIfNeeded: int64()))
        case 2: return .int16(Int16(truncatingIfNeeded: int64()))
        case 3: return .int32(Int32(truncatingIfNeeded: int64()))
        case 4: return .int64(int64())
        case 5: return .uint(UInt(truncatingIfNeeded: uint64()))
        case 6: return .uint8(UInt8(truncatingIfNeeded: uint64()))
        case 7: return .uint16(UInt16(truncatingIfNeeded: uint64()))
        case 8: return .uint32(UInt32(truncatingIfNeeded: uint64()))
        case 9: return .uint64(uint64())
        case 10: return .double(Real(double()))
        case 11: return .float(Real(float()))
        case 12: return .bool(source.oneIn(2))
        case 13: return .string(string())
        case 14: return .date(date())
        case 15: return .data(data())
        case 16: return source.oneIn(2) ? .url(url()) : .decimal(decimal())
        default: return source.oneIn(3) ? .empty : .color(source.pick(Color.allCases))
        }
    }

    /// Zero to four elements, fewer deep down.
    private mutating func list<T>(_ depth: Int, _ element: (inout Self) -> T) -> [T] {
        let count = source.below(max(2, 6 - depth))
        var result: [T] = []
        for _ in 0..<count { result.append(element(&self)) }
        return result
    }

    // MARK: Primitives, with their edge values drawn often

    mutating func int64() -> Int64 {
        switch source.below(6) {
        case 0: return source.pick([Int64.min, Int64.max, 0, -1, 1, Int64(Int32.max) + 1, -9_007_199_254_740_993])
        case 1: return Int64(bitPattern: source.next())
        default: return Int64(source.below(2001)) - 1000
        }
    }

    mutating func int() -> Int { Int(truncatingIfNeeded: int64()) }

    mutating func uint64() -> UInt64 {
        switch source.below(5) {
        case 0: return source.pick([UInt64.max, UInt64(Int64.max), UInt64(Int64.max) + 1, 0])
        case 1: return source.next()
        default: return UInt64(source.below(1000))
        }
    }

    mutating func double() -> Double {
        switch source.below(6) {
        case 0:
            return source.pick([
                -0.0, 0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
                .infinity, -.infinity, .nan, .ulpOfOne, 0.1, 1e300, -2.5, 9_007_199_254_740_992,
            ])
        case 1: return Double(bitPattern: source.next())
        default: return Double(source.below(100_000) - 50_000) / 64
        }
    }

    mutating func float() -> Float {
        switch source.below(4) {
        case 0: return source.pick([-0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, .nan, 0.1, 3.4e38])
        case 1: return Float(bitPattern: UInt32(truncatingIfNeeded: source.next()))
        default: return Float(source.below(10_000)) / 8
        }
    }

    mutating func string() -> String {
        switch source.below(8) {
        case 0:
            return source.pick(["", "$null", "$$null", "null", "true", "1", "a.b.c", "é", "日本語", "🇺🇦👩‍👩‍👧", "<key>&amp;</key>", " \t\n", "\r\n"])
        case 3 where source.oneIn(2):
            // Strings that look like the stored form's reserved forms, or that begin
            // with U+FEFF, which the property list file would drop.
            let marker = String(Unicode.Scalar(0xFDD0)!)
            return source.pick([
                marker, marker + "none", marker + "null", marker + "some(none)", marker + "some(some(null))",
                marker + "decimal:1.5", marker + marker + "none", marker + "\u{FEFF}x",
                "\u{FEFF}", "\u{FEFF}x", "\u{FEFF}" + marker + "null", "x\u{FEFF}",
            ]) + (source.oneIn(2) ? "" : string())
        case 1:
            // Any Unicode scalars, control characters included.
            var scalars = String.UnicodeScalarView()
            for _ in 0..<source.below(12) {
                let raw = UInt32(truncatingIfNeeded: source.next()) % 0x11_0000
                scalars.append(Unicode.Scalar(raw) ?? "?")
            }
            return String(scalars)
        case 2:
            return String(repeating: source.pick(["a", "ü", "字", "🙂"]), count: 200 + source.below(2000))
        default:
            let letters = Array("abcdefghijklmnopqrstuvwxyz_ABCXYZ")
            return String((0..<source.below(10)).map { _ in letters[source.below(letters.count)] })
        }
    }

    /// A dictionary key. Never one that begins with U+FEFF: the stored form refuses
    /// those (the property list file drops the mark), so they cannot round trip there.
    mutating func key() -> String {
        let key = source.oneIn(4) ? source.pick(["", ".", "a.b", "$null", "id", "_0", "ключ"]) : string()
        return key.unicodeScalars.first == "\u{FEFF}" ? "k" + key : key
    }

    mutating func date() -> Date {
        switch source.below(5) {
        case 0:
            return Date(timeIntervalSinceReferenceDate: source.pick([0, -978_307_200, 1e-9, 0.5, 7e10, -7e10, 1e16, .infinity, -.infinity]))
        case 1:
            let bits = Double(bitPattern: source.next())
            return Date(timeIntervalSinceReferenceDate: bits.isNaN ? 0 : bits)
        case 2:
            return Date(timeIntervalSinceReferenceDate: Double(source.below(2_000_000_000)) / 1000)
        default:
            return Date(timeIntervalSinceReferenceDate: Double(source.below(2_000_000_000)) - 1_000_000_000)
        }
    }

    mutating func data() -> Data {
        Data((0..<source.below(40)).map { _ in UInt8(truncatingIfNeeded: source.next()) })
    }

    mutating func url() -> URL {
        let base = source.pick(["https://example.com", "file:///tmp", "http://[::1]:8080", "mailto:a@b.c", "x:"])
        let path = string().addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
        let query = source.oneIn(2) ? "?q=\(source.below(100))&lang=de" : ""
        if source.oneIn(4), let baseURL = URL(string: "https://example.com/a/") {
            return URL(string: "b/\(path)", relativeTo: baseURL) ?? baseURL
        }
        return URL(string: base + "/" + path + query) ?? URL(fileURLWithPath: "/")
    }

    mutating func decimal() -> Decimal {
        switch source.below(4) {
        case 0: return source.pick([Decimal(0), Decimal(string: "0.1")!, Decimal(string: "-1.5")!, .greatestFiniteMagnitude, .leastNonzeroMagnitude])
        default:
            let significand = Decimal(UInt64(truncatingIfNeeded: source.next()) >> UInt64(source.below(64)))
            return Decimal(sign: source.oneIn(2) ? .minus : .plus, exponent: source.below(41) - 20, significand: significand)
        }
    }
}

// MARK: - The trip through a suite's file

/// The stored form did not come back out of the plist it was written into.
struct StoredFormLost: Error {}

/// Encodes `value` in the UserDefaults form, writes it into an XML plist as a suite's
/// file holds it, parses that and decodes it again; `nil` when the value stores as
/// nothing (a `nil` removes the key).
func throughXMLPlist<T: Codable>(_ value: T) throws -> T? {
    guard let stored = try KeyValueEncoder().encodeForUserDefaults(value) else { return nil }
    let data = try PropertyListSerialization.data(fromPropertyList: ["key": stored], format: .xml, options: 0)
    let parsed = try PropertyListSerialization.propertyList(from: data, format: nil)
    guard let object = (parsed as? [String: Any])?["key"] else { throw StoredFormLost() }
    return try KeyValueDecoder().decodeFromUserDefaults(T.self, from: object)
}

// MARK: - Lossless strategies

/// A pair of coders whose strategies claim to give back every value they take.
struct LosslessCoders: Sendable, CustomStringConvertible {
    var encoder = KeyValueEncoder()
    var decoder = KeyValueDecoder()
    var description = "default strategies"

    /// Every combination of strategies that claims to be lossless for the plain tree.
    static let all: [LosslessCoders] = {
        var result: [LosslessCoders] = []
        let nils: [(String, KeyValueEncoder.NilEncodingStrategy)] = [("default", .default), ("nsNull", .nsNull)]
        let datas: [(String, KeyValueEncoder.DataEncodingStrategy, KeyValueDecoder.DataDecodingStrategy)] = [
            ("data", .data, .data), ("base64", .base64, .base64),
        ]
        let ints: [(String, KeyValueDecoder.IntDecodingStrategy)] = [
            ("exact", .exact), ("rounding", .rounding(rule: .toNearestOrAwayFromZero)), ("clamping", .clamping(rule: nil)),
        ]
        for (nilName, nilStrategy) in nils {
            for (dataName, dataEncoding, dataDecoding) in datas {
                for (intName, intStrategy) in ints {
                    var coders = LosslessCoders(description: "nil: \(nilName), data: \(dataName), int: \(intName)")
                    coders.encoder.nilEncodingStrategy = nilStrategy
                    coders.decoder.nilDecodingStrategy = .init(matching: nilStrategy)
                    coders.encoder.dataEncodingStrategy = dataEncoding
                    coders.decoder.dataDecodingStrategy = dataDecoding
                    coders.decoder.intDecodingStrategy = intStrategy
                    result.append(coders)
                }
            }
        }
        return result
    }()
}
