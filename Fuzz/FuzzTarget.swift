//
//  FuzzTarget.swift
//  DefaultsCoder fuzzing
//
//  A libFuzzer target. The first input byte picks one of three modes:
//
//  - plist: the rest is handed to `PropertyListSerialization`, as a suite file would be;
//  - tree:  the rest drives a builder that makes `Any` trees no plist parser makes
//           (deep nesting, every number type, NSNull, Optional.none, mixed arrays);
//  - value: the rest drives `ValueGenerator` (shared with the tests); the value must
//           come back equal from the plain tree and from the UserDefaults form written
//           out as an XML plist and parsed again.
//
//  The trees of the first two modes are decoded into the models below under a set of
//  decoders picked by the second byte. Every decode either succeeds or throws a
//  `DecodingError`; anything else, or a value that does not survive a second round
//  trip, stops the fuzzer. Build and run with `Fuzz/run.sh SECONDS`.
//

import Foundation

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    guard bytes.count >= 2 else { return 0 }
    let decoders = FuzzDecoders.pick(bytes[1])
    let rest = Array(bytes[2...])
    switch bytes[0] % 3 {
    case 0:
        // Not every byte string is a plist; those that are not are not the coder's business.
        guard !holdsBinarySet(rest),
            let tree = try? PropertyListSerialization.propertyList(from: Data(rest), format: nil)
        else { return 0 }
        decodeEverything(tree, with: decoders)
    case 1:
        var builder = TreeBuilder(ByteEntropy(rest))
        decodeEverything(builder.tree(depth: 0), with: decoders)
    default:
        roundTripGeneratedValue(rest)
    }
    return 0
}

/// Whether `bytes` are a binary plist with a set among its objects.
///
/// Found by this fuzzer: `PropertyListSerialization` on Linux crashes (SEGV in
/// `swift_dynamicCast`, bridging `NSSet` to `Set<AnyHashable>`) on such input, before any
/// of this package's code runs. Preferences files hold no sets, and `UserDefaults` reads a
/// suite file whose top level is a set as an empty suite, so the harness skips them.
func holdsBinarySet(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 40, bytes.starts(with: Array("bplist".utf8)) else { return false }
    let trailer = bytes.count - 32
    func integer(at offset: Int, size: Int) -> Int? {
        guard size > 0, size <= 8, offset >= 0, offset + size <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | Int(byte) }
        return value >= 0 ? value : nil
    }
    let offsetSize = Int(bytes[trailer + 6])
    guard let objectCount = integer(at: trailer + 8, size: 8),
        let tableStart = integer(at: trailer + 24, size: 8),
        objectCount <= bytes.count
    else { return true }  // Malformed: nothing to learn from it.
    for index in 0..<objectCount {
        guard let offset = integer(at: tableStart + index * offsetSize, size: offsetSize) else { return true }
        guard offset < bytes.count else { return true }
        if bytes[offset] & 0xF0 == 0xC0 { return true }
    }
    return false
}

// MARK: - Decoding arbitrary trees

/// Decodes `tree` as every model with every decoder; each decode must succeed or throw
/// a `DecodingError`, and what it decodes must survive encoding and decoding again.
func decodeEverything(_ tree: Any, with decoders: [FuzzDecoder]) {
    for decoder in decoders {
        attempt(Profile.self, tree, decoder)
        attempt(Widths.self, tree, decoder)
        attempt(Kind.self, tree, decoder)
        attempt(GeneratedValue.self, tree, decoder)
        attempt([Int: String].self, tree, decoder)
        attempt([String: [Int?]].self, tree, decoder)
        attempt([Int??].self, tree, decoder)
        attempt([[String: Date]].self, tree, decoder)
        attempt(Settings.self, tree, decoder)
        attempt(URL.self, tree, decoder)
        attempt(Decimal.self, tree, decoder)
        attempt(Data.self, tree, decoder)
        attempt([Color].self, tree, decoder)
        attempt([UInt8].self, tree, decoder)
        attempt(Int64.self, tree, decoder)
        attempt(Bool.self, tree, decoder)
        attempt(String.self, tree, decoder)
        attempt(Float.self, tree, decoder)
    }
}

/// Decodes `tree` as a `T`, which must succeed or throw a `DecodingError`.
func decodeOrStop<T: Decodable>(_: T.Type, _ tree: Any, _ decoder: FuzzDecoder) -> T? {
    do {
        return try decoder.decode(T.self, from: tree)
    } catch is DecodingError {
        return nil
    } catch {
        fatalError("decoding \(T.self) threw a \(type(of: error)), not a DecodingError: \(error)")
    }
}

func attempt<T: Decodable>(_: T.Type, _ tree: Any, _ decoder: FuzzDecoder) {
    _ = decodeOrStop(T.self, tree, decoder)
}

/// Decodes, then checks that what was decoded survives a round trip of its own.
func attempt<T: Codable & Equatable>(_: T.Type, _ tree: Any, _ decoder: FuzzDecoder) {
    guard let decoded = decodeOrStop(T.self, tree, decoder) else { return }
    checkRoundTrip(decoded)
}

/// Whether a round trip gave back the same value. NaN is not equal to itself, the
/// payload of a NaN is not kept (a `Float` NaN passes through `Double`), and the XML
/// plist on Linux reads `-0.0` as `0.0` (documented); so when `==` says no, the two are
/// encoded and their trees compared with those allowances. (Not by their descriptions:
/// `Date.description` traps for a NaN date in Foundation on Linux.)
func same<T: Codable & Equatable>(_ lhs: T, _ rhs: T) -> Bool {
    if lhs == rhs { return true }
    guard let left = try? KeyValueEncoder().encode(lhs), let right = try? KeyValueEncoder().encode(rhs) else {
        return false
    }
    return treesMatch(left as Any, right as Any)
}

private func treesMatch(_ lhs: Any, _ rhs: Any) -> Bool {
    switch (flattenOptional(lhs), flattenOptional(rhs)) {
    case (nil, nil):
        return true
    case (let lhs?, let rhs?):
        if let lhs = lhs as? [String: Any], let rhs = rhs as? [String: Any] {
            return lhs.count == rhs.count && lhs.allSatisfy { key, value in rhs[key].map { treesMatch(value, $0) } ?? false }
        }
        if let lhs = lhs as? [Any], let rhs = rhs as? [Any] {
            return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy(treesMatch)
        }
        if let lhs = lhs as? Date, let rhs = rhs as? Date {
            return sameNumber(lhs.timeIntervalSinceReferenceDate, rhs.timeIntervalSinceReferenceDate)
        }
        if let lhs = lhs as? Double, let rhs = rhs as? Double { return sameNumber(lhs, rhs) }
        if let lhs = lhs as? Float, let rhs = rhs as? Float { return sameNumber(lhs, rhs) }
        if let lhs = lhs as? AnyHashable, let rhs = rhs as? AnyHashable { return lhs == rhs }
        return false
    default:
        return false
    }
}

private func sameNumber<F: FloatingPoint>(_ lhs: F, _ rhs: F) -> Bool {
    lhs == rhs || (lhs.isNaN && rhs.isNaN)
}

/// Encodes `value` and decodes it again, as a plain tree and through the UserDefaults
/// form written out as an XML plist and parsed back; both must equal `value`.
func checkRoundTrip<T: Codable & Equatable>(_ value: T, plain: LosslessCoders = LosslessCoders()) {
    do {
        let tree = try plain.encoder.encode(value)
        let back = try plain.decoder.decode(T.self, from: tree as Any)
        if !same(back, value) {
            fatalError("plain round trip (\(plain)) changed \(T.self): \(value) became \(back); tree \(String(describing: tree))")
        }
    } catch is EncodingError {
        // A value the plain encoder refuses (such as a nil top level) is not a loss.
    } catch {
        fatalError("plain round trip (\(plain)) of \(T.self) threw \(error) for \(value)")
    }
    checkUserDefaultsRoundTrip(value)
}

func checkUserDefaultsRoundTrip<T: Codable & Equatable>(_ value: T) {
    do {
        guard let back = try throughXMLPlist(value) else { return }
        if !same(back, value) {
            fatalError("UserDefaults round trip changed \(T.self): \(value) became \(back)")
        }
    } catch is EncodingError {
        // Refusing to store (such as `Decimal.nan`) is the contract, not a loss.
    } catch {
        fatalError("UserDefaults round trip of \(T.self) threw \(error) for \(value)")
    }
}

// MARK: - Generated values

func roundTripGeneratedValue(_ bytes: [UInt8]) {
    var entropy = ByteEntropy(bytes)
    let strategies = LosslessCoders.all[Int(entropy.byte()) % LosslessCoders.all.count]
    var plain = ValueGenerator(source: entropy, nestedNils: false, maxDepth: 6)
    checkRoundTrip(plain.value(), plain: strategies)
    // The UserDefaults form also keeps `.some(nil)` inside arrays.
    var stored = ValueGenerator(source: entropy, nestedNils: true, maxDepth: 6)
    checkUserDefaultsRoundTrip(stored.value())
}

// MARK: - Decoders

enum FuzzDecoders {
    /// Four decoders, their strategies picked by the bits of `byte`.
    static func pick(_ byte: UInt8) -> [FuzzDecoder] {
        var plain = KeyValueDecoder()
        let dates: [KeyValueDecoder.DateDecodingStrategy] = [
            .date, .secondsSince1970, .millisecondsSince1970, .iso8601(includingFractionalSeconds: true),
        ]
        plain.dateDecodingStrategy = dates[Int(byte & 3)]
        plain.dataDecodingStrategy = byte & 4 == 0 ? .data : .base64
        plain.urlDecodingStrategy = byte & 8 == 0 ? .url : .absoluteString
        plain.keyDecodingStrategy = byte & 16 == 0 ? .useDefaultKeys : .convertFromSnakeCase
        let ints: [KeyValueDecoder.IntDecodingStrategy] = [
            .exact, .rounding(rule: .down), .clamping(rule: nil), .clamping(rule: .toNearestOrEven),
        ]
        plain.intDecodingStrategy = ints[Int(byte >> 5 & 3)]
        plain.nilDecodingStrategy = byte & 128 == 0 ? .stringNull : .nsNull

        var custom = KeyValueDecoder()
        custom.dateDecodingStrategy = .custom { value in
            guard let seconds = value as? Double else { throw CustomFailure() }
            return Date(timeIntervalSince1970: seconds)
        }
        custom.keyDecodingStrategy = .custom { path in
            KeyValueCodingKey(stringValue: path.last!.stringValue.lowercased())
        }
        custom.dataDecodingStrategy = .custom { _ in throw CustomFailure() }

        return [FuzzDecoder(), FuzzDecoder(decoder: plain), FuzzDecoder(decoder: custom), FuzzDecoder(stored: true)]
    }
}

/// A decoder of the plain tree, or of the UserDefaults stored form.
struct FuzzDecoder {
    var decoder = KeyValueDecoder()
    var stored = false

    func decode<T: Decodable>(_: T.Type, from tree: Any) throws -> T {
        stored ? try decoder.decodeFromUserDefaults(T.self, from: tree) : try decoder.decode(T.self, from: tree)
    }
}

/// What the custom strategies throw; the decoder must pass it on inside a `DecodingError`.
struct CustomFailure: Error {}

// MARK: - Models

/// A struct with every kind of property a settings model has.
struct Profile: Codable, Equatable {
    var id: Int
    var name: String
    var email: String?
    var nickname: String??
    var scores: [Double]?
    var byID: [Int: String]?
    var homepage: URL?
    var balance: Decimal?
    var created: Date?
    var avatar: Data?
    var widths: Widths?
    var kind: Kind?
    var color: Color?
    var children: [Profile]?
}

/// Every integer width and both floating-point types.
struct Widths: Codable, Equatable {
    var i8: Int8
    var i16: Int16
    var i32: Int32?
    var i64: Int64
    var u8: UInt8
    var u16: UInt16?
    var u32: UInt32
    var u64: UInt64
    var u: UInt?
    var f: Float?
    var d: Double?
}

/// An enum with associated values, nested.
indirect enum Kind: Codable, Equatable {
    case none
    case user(name: String, age: Int)
    case group([Kind])
    case tagged(Int?, String)
    case pair(Kind, Kind?)
}

/// A model with a snake-case-friendly shape and nested collections.
struct Settings: Codable, Equatable {
    var userName: String?
    var volumeLevel: Double?
    var recentFiles: [URL]?
    var windowFrames: [String: [Int]]?
    var lastOpened: Date?
    var flags: Set<String>?
}

// MARK: - Tree builder

/// Builds `Any` trees from bytes: the shapes no plist parser makes, and deep ones.
struct TreeBuilder {
    var source: ByteEntropy
    /// Levels of towers left to build. Swift frees nested containers recursively, so a
    /// tree tens of thousands of levels deep overflows the stack in the harness itself.
    var towerBudget = 4_000

    init(_ source: ByteEntropy) {
        self.source = source
    }

    mutating func tree(depth: Int) -> Any {
        if source.isExhausted { return "" }
        let op = source.byte()
        switch op % 24 {
        case 0 where depth < 64, 1 where depth < 64:
            var dictionary: [String: Any] = [:]
            for _ in 0..<Int(source.byte() % 6) { dictionary[key()] = tree(depth: depth + 1) }
            return dictionary
        case 2 where depth < 64, 3 where depth < 64:
            return (0..<Int(source.byte() % 6)).map { _ in tree(depth: depth + 1) }
        case 4:
            // A tower of single-element containers, up to a few thousand deep.
            let height = min(Int(source.byte()) * 12, towerBudget)
            towerBudget -= height
            var inner: Any = tree(depth: depth + 1)
            for level in 0..<height {
                inner = level % 2 == 0 ? [inner] as [Any] : ["_0": inner] as [String: Any]
            }
            return inner
        case 5: return key()
        case 6: return Int(truncatingIfNeeded: source.next())
        case 7: return source.next()
        case 8: return Double(bitPattern: source.next())
        case 9: return source.byte() & 1 == 1
        case 10: return NSNumber(value: Int64(bitPattern: source.next()))
        case 11: return NSNumber(value: source.byte() & 1 == 1)
        case 12: return NSNumber(value: Double(bitPattern: source.next()))
        case 13: return NSNull()
        case 14: return Optional<Any>.none as Any
        case 15: return Date(timeIntervalSinceReferenceDate: Double(bitPattern: source.next()))
        case 16: return Data((0..<Int(source.byte() % 16)).map { _ in source.byte() })
        case 17: return URL(string: key()) ?? URL(fileURLWithPath: "/")
        case 18: return Decimal(sign: source.byte() & 1 == 1 ? .minus : .plus, exponent: Int(Int8(bitPattern: source.byte())), significand: Decimal(source.next()))
        case 19: return Int8(bitPattern: source.byte())
        case 20: return Float(bitPattern: UInt32(truncatingIfNeeded: source.next()))
        case 21: return UInt16(source.byte()) << 8 | UInt16(source.byte())
        case 22: return Optional<Any>.some(tree(depth: depth + 1)) as Any
        default:
            return ["$null", "1", "1.5", "-0", "true", "YES", "2001-01-01T00:00:00Z", "AQID", "https://a.b/c?d", "1e400", "NaN"][Int(source.byte()) % 11]
        }
    }

    mutating func key() -> String {
        let length = Int(source.byte() % 12)
        let pool = Array("abcdefghijklmnopqrstuvwxyz_ABCD0123456789.$-é ")
        return String((0..<length).map { _ in pool[Int(source.byte()) % pool.count] })
    }
}
