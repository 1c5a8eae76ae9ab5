// The suite file's XML writer, compiled on Linux only as the file is.

#if os(Linux)
import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("PropertyListXML")
struct PropertyListXMLTests {

    @Test(
        "a whole-second date is written in the proleptic Gregorian calendar Foundation's readers read",
        arguments: [
            (0.0, "2001-01-01T00:00:00Z"),
            (-1.0, "2000-12-31T23:59:59Z"),
            (Date.distantPast.timeIntervalSinceReferenceDate, "0000-12-30T00:00:00Z"),
            (Date.distantFuture.timeIntervalSinceReferenceDate, "4001-01-01T00:00:00Z"),
            (-60_937_747_200, "0069-12-17T00:00:00Z"),
            (-63_177_062_400, "-0001-01-01T00:00:00Z"),
            (-12_649_219_200, "1600-03-01T00:00:00Z"),
            (-378_683_424_000, "-9999-01-01T00:00:00Z"),
            (252_423_993_599, "9999-12-31T23:59:59Z"),
        ] as [(Double, String)])
    func dateText(seconds: Double, text: String) {
        #expect(PropertyListXML.dateText(Date(timeIntervalSinceReferenceDate: seconds)) == text)
    }

    @Test("a date a <date> cannot keep has no text", arguments: [0.5, -1.5, -378_683_424_001, 252_423_993_600, 1e300])
    func unwritableDate(seconds: Double) {
        #expect(PropertyListXML.dateText(Date(timeIntervalSinceReferenceDate: seconds)) == nil)
    }

    @Test(
        "the scan finds each top-level key as written and its value's bytes, or gives up on what it does not read",
        arguments: [
            ("<plist version=\"1.0\"><dict/></plist>", [] as [String]?),
            ("<?xml version=\"1.0\"?>\n<!DOCTYPE plist>\n<!-- c --><plist><dict>\n<key>a</key>\n<integer>1</integer></dict></plist>\n", ["a=<integer>1</integer>"]),
            (
                "<plist><dict><key>a&amp;&#233;&#x301;</key><string>x<!--<-->y</string><key>b</key><true/></dict></plist>",
                ["a&\u{E9}\u{301}=<string>x<!--<-->y</string>", "b=<true/>"]
            ),
            (
                "<plist><dict><key>n</key><dict><key>x</key><array><dict/><string><![CDATA[</dict>]]></string></array></dict></dict></plist>",
                ["n=<dict><key>x</key><array><dict/><string><![CDATA[</dict>]]></string></array></dict>"]
            ),
            ("<plist><array/></plist>", nil),
            ("<plist><dict><key>a</key><string>x</string>", nil),
            ("<plist><dict><key><![CDATA[a]]></key><true/></dict></plist>", nil),
            ("<plist><dict><key>a&nbsp;</key><true/></dict></plist>", nil),
            ("bplist00", nil),
        ] as [(String, [String]?)])
    func entries(xml: String, expected: [String]?) {
        let entries = PropertyListXML.entries(in: Data(xml.utf8))
        let found = entries?.map { entry -> String in
            guard case .verbatim(let bytes) = entry.value else { return entry.key + "=?" }
            return entry.key + "=" + String(decoding: bytes, as: UTF8.self)
        }
        #expect(found?.map { Array($0.unicodeScalars) } == expected?.map { Array($0.unicodeScalars) })
    }

    // MARK: - The writer against Foundation's

    /// How many generated suites the differential test writes.
    static let differentialCount: UInt64 = 40

    @Test(
        "generated entries written by the package and by Foundation's own writer read back the same through Foundation's reader, keys by Unicode scalars",
        .enabled(if: Backend.isFile, "the file backend's"))
    func sameAsFoundation() throws {
        for seed in GeneratedRoundTripTests.seeds(Self.differentialCount, offset: 0) {
            var generator = PlistGenerator(source: SeededEntropy(seed: seed))
            let entries = generator.entries()
            // Suites named by absolute paths in a directory of their own: the config
            // directory, which other tests and their child processes watch, stays quiet.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("PropertyListXMLTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let package = try #require(UserDefaults(suiteName: directory.appendingPathComponent("package").path))
            let foundation = try #require(UserDefaults(suiteName: directory.appendingPathComponent("foundation").path))
            // The package's writes first: each begins with a `synchronize()`, which would
            // write Foundation's suite too while it has unsaved changes.
            for (key, tree) in entries {
                try DefaultsSuite.change([package]) { try $0.set(tree, forKey: key) }
            }
            for (key, tree) in entries { foundation.set(tree, forKey: key) }
            foundation.synchronize()

            let packageFile = try Data(contentsOf: directory.appendingPathComponent("package.plist"))
            let foundationFile = try Data(contentsOf: directory.appendingPathComponent("foundation.plist"))
            let packageKeys = try #require(PropertyListXML.entries(in: packageFile)).map { Array($0.key.unicodeScalars) }
            let foundationKeys = try #require(PropertyListXML.entries(in: foundationFile)).map { Array($0.key.unicodeScalars) }
            #expect(packageKeys.sorted(by: scalarOrder) == entries.map { Array($0.key.unicodeScalars) }.sorted(by: scalarOrder), "seed \(seed): the package's file's keys")
            // Foundation's own writer, set in one process, merges some keys that are
            // canonically equal and gives the key it kept the other's value (measured):
            // every key it kept the package keeps too, and the same value for each key
            // that has no canonically equal sibling.
            #expect(Set(foundationKeys).isSubset(of: Set(packageKeys)), "seed \(seed): Foundation's file's keys")

            let packageRead = try freshRead(packageFile, in: directory)
            let foundationRead = try freshRead(foundationFile, in: directory)
            for (key, tree) in entries {
                let scalars = key.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
                let read = packageRead.object(forKey: key)
                #expect(read.map { exactlyEqual($0, tree) } == true, "seed \(seed), key \(scalars): \(tree) read back as \(read as Any)")
                // Foundation's own writer loses the sign of -0.0; otherwise the same.
                let alone = !entries.contains { $0.key == key && !$0.key.unicodeScalars.elementsEqual(key.unicodeScalars) }
                if alone, foundationKeys.contains(Array(key.unicodeScalars)), let theirs = foundationRead.object(forKey: key), let read {
                    #expect(exactlyEqual(theirs, read) || plistEqual(theirs, read), "seed \(seed), key \(scalars): Foundation's writer wrote \(theirs)")
                }
            }
        }
    }

    /// The file read by Foundation as a new process would: a suite of its own, named by
    /// the absolute path of a copy in `directory`.
    private func freshRead(_ file: Data, in directory: URL) throws -> UserDefaults {
        let base = directory.appendingPathComponent("fresh-\(UUID().uuidString)")
        try file.write(to: base.appendingPathExtension("plist"))
        return try #require(UserDefaults(suiteName: base.path))
    }
}

private func scalarOrder(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar]) -> Bool {
    lhs.lexicographicallyPrecedes(rhs) { $0.value < $1.value }
}

/// Equal as the same property-list types with the same values: `Bool` apart from numbers,
/// a `Double` to the bit (`-0.0`, NaN), dates to the bit, keys by Unicode scalars.
private func exactlyEqual(_ lhs: Any, _ rhs: Any) -> Bool {
    switch (TreeValue(lhs), TreeValue(rhs)) {
    case (.string(let a)?, .string(let b)?):
        return Array(a.unicodeScalars) == Array(b.unicodeScalars)
    case (.number(let a)?, .number(let b)?):
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.signed(let x, _), .signed(let y, _)): return x == y
        case (.unsigned(let x, _), .unsigned(let y, _)): return x == y
        case (.signed(let x, _), .unsigned(let y, _)), (.unsigned(let y, _), .signed(let x, _)): return x >= 0 && UInt64(x) == y
        default: return false
        }
    case (.date(let a)?, .date(let b)?):
        return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
    case (.data(let a)?, .data(let b)?):
        return a == b
    case (.dictionary(let a)?, .dictionary(let b)?):
        let order = { (dictionary: [String: Any]) in dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        return order(a).map { Array($0.unicodeScalars) } == order(b).map { Array($0.unicodeScalars) }
            && a.keys.allSatisfy { exactlyEqual(a[$0]!, b[$0]!) }
    case (.array(let a)?, .array(let b)?):
        return a.count == b.count && zip(a, b).allSatisfy(exactlyEqual)
    default:
        return false
    }
}

/// Generates top-level entries of a suite: keys that are canonically equal but spelled
/// apart, and trees of every property-list type with their extremes.
struct PlistGenerator<Source: Entropy> {
    var source: Source

    /// "é" precomposed and decomposed, "Å" and the ångström sign, "ﬁ" and "fi", "K" and
    /// the kelvin sign, a reserved U+FDD0 key, and plain ones.
    static var keys: [String] {
        [
            "caf\u{E9}", "cafe\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "\u{FB01}", "fi", "K", "\u{212A}",
            TrickyStrings.marker + "k", "plain", "a&b<c>", "tab\tkey", "",
        ]
    }

    /// Strings that begin with U+FEFF are left out: Foundation's reader drops the mark,
    /// however it is written, so the stored form escapes them (`StoredForm`).
    static var strings: [String] {
        keys + TrickyStrings.all.filter { !$0.hasPrefix("\u{FEFF}") } + ["line\r\nbreak\r", "]]>", "\u{1F600}", "\u{7}bell", " lead and trail "]
    }

    mutating func entries() -> [(key: String, tree: Any)] {
        let keys = Self.keys.filter { _ in !source.oneIn(3) }
        return keys.map { ($0, tree(depth: 0)) }
    }

    mutating func tree(depth: Int) -> Any {
        if depth < 4 && source.oneIn(4) {
            if source.oneIn(2) {
                var dictionary: [String: Any] = [:]
                for _ in 0..<source.below(4) { dictionary[source.pick(Self.keys)] = tree(depth: depth + 1) }
                return dictionary
            }
            return (0..<source.below(4)).map { _ in tree(depth: depth + 1) }
        }
        if depth == 0 && source.oneIn(20) {
            // Deep, though within what a suite's file keeps.
            var deep: Any = "bottom"
            for level in 0..<120 { deep = level.isMultiple(of: 2) ? [deep] : ["k": deep] }
            return deep
        }
        switch source.below(7) {
        case 0: return source.pick(Self.strings)
        case 1: return source.pick([Int.min, Int.max, 0, -1, 1 << 53, Int(Int32.min)])
        case 2: return source.pick([UInt64.max, UInt64(Int64.max) + 1])
        case 3:
            return source.pick([
                -0.0, 0.1, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                .leastNonzeroMagnitude, .leastNormalMagnitude, 2.0, 1e200, -1e-200,
            ])
        case 4: return source.oneIn(2)
        case 5: return Data((0..<source.below(80)).map { _ in UInt8(truncatingIfNeeded: source.next()) })
        default: return date()
        }
    }

    /// A whole-second date of any era a `<date>` keeps, or one of the extremes.
    mutating func date() -> Date {
        if source.oneIn(4) {
            return source.pick([Date.distantPast, Date.distantFuture, Date(timeIntervalSinceReferenceDate: 0)])
        }
        let range = StoredEncodingForm.wholeSecondDates
        let span = UInt64(range.upperBound - range.lowerBound)
        return Date(timeIntervalSinceReferenceDate: range.lowerBound + Double(source.next() % span))
    }
}

@Suite("PropertyListXML through a suite")
struct PropertyListXMLSuiteTests {
    @Test(
        "keys spelled with other scalars stay apart through package writes, and every era's date stays a date",
        .enabled(if: Backend.isFile, "the file backend's"))
    func keysAndDatesThroughPublicAPI() throws {
        let suite = TestSuite()
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        let early = Date(timeIntervalSinceReferenceDate: -60_937_747_200)  // 0069-12-17
        try suite.defaults.encode(1, forKey: composed)
        try suite.defaults.encode(2, forKey: decomposed)
        try suite.defaults.encode(early, forKey: "early")
        try suite.defaults.encode(3, forKey: "other")

        let base = FileManager.default.temporaryDirectory.appendingPathComponent("PropertyListXMLSuite-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: suite.fileURL, to: base.appendingPathExtension("plist"))
        defer { try? FileManager.default.removeItem(at: base.appendingPathExtension("plist")) }
        let fresh = try #require(UserDefaults(suiteName: base.path))
        #expect(fresh.object(forKey: composed) as? Int == 1)
        #expect(fresh.object(forKey: decomposed) as? Int == 2)
        #expect(fresh.object(forKey: "early") as? Date == early)
        #expect(try fresh.decode(Date.self, forKey: "early") == early)
    }
}
#endif
