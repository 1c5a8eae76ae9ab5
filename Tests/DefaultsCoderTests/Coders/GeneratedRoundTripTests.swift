// Round trips of generated values (see GeneratedValues.swift): every value the encoder
// takes must come back equal, as a plain tree under every lossless combination of
// strategies, and through a real UserDefaults suite and its plist file.
//
// A failure names its seed. Replay one seed with
// `DEFAULTSCODER_SEED=1234 swift test --filter GeneratedRoundTripTests`.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Generated round trips")
struct GeneratedRoundTripTests {

    /// Values per strategy combination for the plain tree: 12 combinations × 1,500.
    static let plainCount: UInt64 = 1_500
    /// Values through the UserDefaults form, written as XML and parsed again.
    static let storedCount: UInt64 = 2_000
    /// Values through a real suite and its file (each write rewrites the file on Linux).
    static let suiteCount: UInt64 = 300

    /// The seeds to run: `offset..<offset + count` (a tenth of them in a short run, see
    /// `Stress`), or only the one in `DEFAULTSCODER_SEED`.
    static func seeds(_ count: UInt64, offset: UInt64) -> [UInt64] {
        if let replay = ProcessInfo.processInfo.environment["DEFAULTSCODER_SEED"], let seed = UInt64(replay) {
            return [seed]
        }
        return Array(offset..<offset + Stress.rounds(count))
    }

    /// Generates a value for each seed and expects `roundTrip` to give it back, recording
    /// each failure with its seed (at most five). The values go round on a thread of
    /// their own: thousands of them would hold one of the cooperative pool's few threads
    /// for long, and starve other tests' tasks (CONTRIBUTING.md, "Tests never starve").
    func expectRoundTrips(
        seeds: [UInt64],
        nestedNils: Bool,
        _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ roundTrip: @escaping @Sendable (GeneratedValue) throws -> GeneratedValue
    ) async throws {
        let failures = try await offPool { () -> [String] in
            var failures: [String] = []
            for seed in seeds where failures.count < 5 {
                var generator = ValueGenerator(source: SeededEntropy(seed: seed), nestedNils: nestedNils)
                let value = generator.value()
                do {
                    let back = try roundTrip(value)
                    if back != value { failures.append("seed \(seed), \(context): \(value) came back as \(back)") }
                } catch {
                    failures.append("seed \(seed), \(context): \(value) threw \(error)")
                }
            }
            return failures
        }
        for failure in failures { Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation) }
    }

    @Test("Plain tree", arguments: LosslessCoders.all)
    func plainTree(_ coders: LosslessCoders) async throws {
        try await expectRoundTrips(seeds: Self.seeds(Self.plainCount, offset: 0), nestedNils: false, "\(coders)") { value in
            let tree = try coders.encoder.encode(value)
            return try coders.decoder.decode(GeneratedValue.self, from: tree as Any)
        }
    }

    /// Why a value did not come back through the XML plist at all.
    struct NotReadBack: Error {}

    @Test("UserDefaults form through an XML plist")
    func storedForm() async throws {
        try await expectRoundTrips(seeds: Self.seeds(Self.storedCount, offset: 1_000_000), nestedNils: true, "stored form") { value in
            guard let back = try throughXMLPlist(value) else { throw NotReadBack() }
            return back
        }
    }

    @Test("Through a real suite, its file, and a fresh read")
    func throughSuiteFile() async throws {
        let suite = TestSuite()
        // 300 writes, each rewriting the file: on a thread of their own, off the pool.
        let written = try await offPool { () throws -> [(seed: UInt64, value: GeneratedValue)] in
            var written: [(seed: UInt64, value: GeneratedValue)] = []
            for seed in Self.seeds(Self.suiteCount, offset: 2_000_000) {
                var generator = ValueGenerator(source: SeededEntropy(seed: seed), nestedNils: true)
                let value = generator.value()
                try suite.defaults.encode(value, forKey: "value.\(seed)")
                written.append((seed, value))
            }
            return written
        }

        // What the same process reads back.
        for (seed, value) in written {
            let back = try suite.defaults.decode(GeneratedValue.self, forKey: "value.\(seed)")
            #expect(back == value, "seed \(seed)")
        }

        // What the file holds, parsed on its own, as another process or launch sees it.
        #if !canImport(Darwin)
        let data = try Data(contentsOf: suite.fileURL)
        let file = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(file.count == written.count)
        for (seed, value) in written {
            let object = try #require(file["value.\(seed)"], "seed \(seed) missing from the file")
            let back = try KeyValueDecoder().decodeFromUserDefaults(GeneratedValue.self, from: object)
            #expect(back == value, "seed \(seed)")
        }
        #endif

        // What a second process reads from the file.
        let there = try await SecondProcess.read(suite)
        #expect(there.count == written.count)
        for (seed, value) in written {
            let object = try #require(there["value.\(seed)"], "seed \(seed) missing in a new process")
            let back = try KeyValueDecoder().decodeFromUserDefaults(GeneratedValue.self, from: object)
            #expect(back == value, "seed \(seed), read in a new process")
        }
    }

    @Test("The generator is deterministic and reaches every case")
    func generatorCoverage() {
        var first = ValueGenerator(source: SeededEntropy(seed: 42), nestedNils: true)
        var second = ValueGenerator(source: SeededEntropy(seed: 42), nestedNils: true)
        #expect(first.value() == second.value())

        var seen = Set<String>()
        func visit(_ value: GeneratedValue) {
            let name = String(describing: value).prefix { $0 != "(" }
            seen.insert(String(name))
            switch value {
            case .labelled(_, let inner): visit(inner)
            case .optional(let inner): inner.map(visit)
            case .array(let values): values.forEach(visit)
            case .optionals(let values):
                for value in values { value.map(visit) }
            case .doubleOptionals(let values):
                for value in values { value.flatMap { $0 }.map(visit) }
            case .dictionary(let values): values.values.forEach(visit)
            case .intKeyed(let values): values.values.forEach(visit)
            case .record(let record):
                seen.insert("record")
                record.child.map(visit)
            case .profile(let profile):
                seen.insert("profile")
                profile.value.map(visit)
                if let nickname = profile.nickname, nickname.unicodeScalars.first?.value == 0xFDD0 { seen.insert("reserved-looking string") }
            case .string(let string):
                if string.unicodeScalars.first?.value == 0xFDD0 { seen.insert("reserved-looking string") }
                if string.unicodeScalars.first == "\u{FEFF}" { seen.insert("leading U+FEFF") }
            default: break
            }
        }
        for seed in 0..<UInt64(2_000) {
            var generator = ValueGenerator(source: SeededEntropy(seed: seed), nestedNils: true)
            visit(generator.value())
        }
        let expected: Set<String> = [
            "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
            "double", "float", "bool", "string", "date", "data", "url", "decimal", "color", "empty",
            "labelled", "optional", "array", "optionals", "doubleOptionals", "dictionary", "intKeyed", "record",
            "profile", "deep", "reserved-looking string", "leading U+FEFF",
        ]
        #expect(expected.subtracting(seen).isEmpty, "never generated: \(expected.subtracting(seen).sorted())")
    }

    /// Seconds since 2001 for a generated date: the edges, non-finite ones included, and
    /// random ones of every magnitude.
    static func dateSeconds(_ entropy: inout SeededEntropy) -> Double {
        let edges: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1e15, -1e15, 0.5, -0.001, 253_402_300_799, -63_114_076_800]
        let pick = entropy.next()
        if pick % 3 == 0 { return edges[Int(pick / 3 % UInt64(edges.count))] }
        let magnitude = Double(entropy.next() % 14)
        let fraction = Double(entropy.next() % 1_000_000) / 1_000_000
        return (pick % 2 == 0 ? 1 : -1) * (pow(10, magnitude) * fraction).rounded(.down) + (pick % 5 == 0 ? fraction : 0)
    }

    @Test("Dates under every strategy, non-finite ones included: written faithfully or refused at encode time, in both trees")
    func generatedDates() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let strategies: [(String, KeyValueEncoder.DateEncodingStrategy, KeyValueDecoder.DateDecodingStrategy, Double)] = [
            ("date", .date, .date, 0),
            ("secondsSince1970", .secondsSince1970, .secondsSince1970, 1e-6),
            ("millisecondsSince1970", .millisecondsSince1970, .millisecondsSince1970, 1e-6),
            ("iso8601", .iso8601, .iso8601, 1),
            ("iso8601 fractional", .iso8601(includingFractionalSeconds: true), .iso8601(includingFractionalSeconds: true), 0.001),
            ("formatted", .formatted(formatter), .formatted(formatter), 1),
        ]
        var failures: [String] = []
        for seed in Self.seeds(400, offset: 3_000_000) {
            var entropy = SeededEntropy(seed: seed)
            let date = Date(timeIntervalSinceReferenceDate: Self.dateSeconds(&entropy))
            for (name, encoding, decoding, precision) in strategies {
                var encoder = KeyValueEncoder()
                encoder.dateEncodingStrategy = encoding
                var decoder = KeyValueDecoder()
                decoder.dateDecodingStrategy = decoding
                let trees: [(String, () throws -> Any?)] = [
                    ("plain", { try encoder.encode([date]) }),
                    (
                        "stored",
                        {
                            guard let tree = try encoder.encodeForUserDefaults([date]) else { return nil }
                            return tree
                        }
                    ),
                ]
                for (treeName, encode) in trees {
                    let tree: Any?
                    do {
                        tree = try encode()
                    } catch is EncodingError {
                        continue  // refused: nothing is written
                    } catch {
                        failures.append("seed \(seed), \(name), \(treeName): \(error)")
                        continue
                    }
                    do {
                        let back =
                            try treeName == "plain"
                            ? decoder.decode([Date].self, from: tree as Any)[0]
                            : decoder.decodeFromUserDefaults([Date].self, from: tree as Any)[0]
                        let a = date.timeIntervalSinceReferenceDate
                        let b = back.timeIntervalSinceReferenceDate
                        let same = (a.isNaN && b.isNaN) || a == b || abs(a - b) < max(precision, abs(a) * 1e-15)
                        if !same { failures.append("seed \(seed), \(name), \(treeName): \(a) read back as \(b)") }
                    } catch {
                        failures.append("seed \(seed), \(name), \(treeName): \(date.timeIntervalSinceReferenceDate) was written but does not read back: \(error)")
                    }
                }
            }
        }
        #expect(failures.prefix(10) == [], "\(failures.count) failures")
    }

    @Test("Typed keys with a legacy format of their own stored kind: every value written reads back, or is refused", arguments: [LegacyFormat.json, .propertyList, .jsonString])
    func generatedLegacyKeys(format: LegacyFormat) throws {
        let suite = TestSuite("legacy\(format)")
        let dataKey = DefaultsKey<Data?>(uniqueKey("data"), legacy: format)
        let stringKey = DefaultsKey<String>(uniqueKey("string"), default: "", legacy: format)
        var failures: [String] = []
        for seed in Self.seeds(200, offset: 4_000_000) {
            var entropy = SeededEntropy(seed: seed)
            // Blobs of every legacy kind, and plain bytes and text.
            let number = Int(entropy.next() % 1000)
            let candidates: [String] = ["\(number)", "\"s\(number)\"", "[\(number)]", "plain \(number)", "", "\"\""]
            let text = candidates[Int(entropy.next() % UInt64(candidates.count))]
            let blobs: [Data] = [
                Data(text.utf8), try JSONEncoder().encode(Data([UInt8(number % 256)])), try PropertyListEncoder().encode(Data([UInt8(number % 256)])),
                Data((0..<(number % 7)).map { UInt8($0 * 37 % 256) }),
            ]
            let data = blobs[Int(entropy.next() % UInt64(blobs.count))]
            for (name, write, read) in [
                ("data", { try suite.defaults.write(data, to: dataKey) }, { try suite.defaults.read(dataKey) == data }),
                ("string", { try suite.defaults.write(text, to: stringKey) }, { try suite.defaults.read(stringKey) == text }),
            ] as [(String, () throws -> Void, () throws -> Bool)] {
                do {
                    try write()
                } catch is EncodingError {
                    continue
                }
                if try !read() { failures.append("seed \(seed), \(name): \(name == "data" ? "\(data as NSData)" : text) read back as another value") }
            }
        }
        #expect(failures.prefix(10) == [], "\(failures.count) failures")
    }
}
