// Launch arguments, read in a real child process launched with them: one grammar for
// every number type, and a write that a launch argument hides is reported.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Launch arguments")
struct LaunchArgumentTests {
    /// What the probe read, launched once with every argument below.
    static func read() async throws -> [String: String] {
        try await ProbeLaunch.shared.read()
    }

    @Test(
        "a launch-argument string reads as the number it spells, the same for every number type",
        arguments: ["Int", "Double", "CGFloat", "Int128", "UInt128", "Float16", "Mode"])
    func everyNumberType(type: String) async throws {
        let read = try await Self.read()
        #expect(!read.isEmpty, "the probe ran")
        let expected: [String: String] =
            switch type {
            case "Double", "CGFloat", "Float16": ["five": "5.0", "two": "2.0", "thousand": "1000.0"]
            case "Mode": ["five": "error", "two": "high", "thousand": "error"]
            default: ["five": "5", "two": "2", "thousand": "1000"]
            }
        for (key, value) in expected where read["\(key):\(type)"] != nil || type != "Float16" {
            #expect(read["\(key):\(type)"] == value, "\(key) as \(type)")
        }
    }

    @Test(
        "a string that is not a whole number in the grammar is no number, for any type",
        arguments: ["e", "eMinus", "ePlus"])
    func strictGrammar(key: String) async throws {
        let read = try await Self.read()
        for type in ["Int", "Double", "Bool", "CGFloat", "Mode", "Int128"] {
            #expect(read["\(key):\(type)"] == "error", "\(key) as \(type)")
        }
    }

    @Test("a fraction is no integer", arguments: ["Int", "Int128", "Mode"])
    func fraction(type: String) async throws {
        let read = try await Self.read()
        #expect(read["half:\(type)"] == "error")
        #expect(read["half:Double"] == "0.5")
    }

    @Test("a write that a launch argument hides is stored, and reported")
    func shadowedWrite() async throws {
        let read = try await Self.read()
        #expect(read["volume:written"] == "yes")
        #expect(read["volume:read"] == "5")
        #expect(read["reports"] == #"DefaultsCoder: "volume" was written, but the launch argument -volume 5 takes precedence in this process"#)
    }

    @Test(
        "the grammar of a number in a string",
        arguments: [
            ("1", true), ("-1", true), ("+2.5", true), (".5", true), ("5.", true), ("1e3", true), ("1E-3", true), ("-2.5e+10", true),
            ("1e", false), ("2E-", false), ("3e+", false), (".", false), ("", false), ("-", false), (" 1", false), ("1 ", false),
            ("0x1", false), ("1e3.5", false), ("1..2", false), ("e3", false), ("1e+-3", false), ("nan", false), ("inf", false),
        ])
    func grammar(text: String, isNumber: Bool) {
        #expect((Decimal(strictString: text) != nil) == isNumber, "\(text)")
        #expect(StoredForm.read(StoredForm.decimalPrefix + text).isDecimal == isNumber, "\(text)")
    }
}

extension StoredForm.Reading {
    fileprivate var isDecimal: Bool {
        if case .decimal = self { return true }
        return false
    }
}

/// One run of the probe, shared by the tests above.
private actor ProbeLaunch {
    static let shared = ProbeLaunch()
    private var cached: [String: String]?

    func read() async throws -> [String: String] {
        if let cached { return cached }
        let suite = "DefaultsCoderTests.launch.\(UUID().uuidString)"
        let arguments = [
            "launch", suite, "-five", "5", "-two", "2", "-e", "1e", "-eMinus", "2E-", "-ePlus", "3e+", "-thousand", "1e3", "-half", "0.5",
            "-volume", "5",
        ]
        let result = try await run("defaults-coder-probe", arguments)
        UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
        #if os(Linux)
        try? FileManager.default.removeItem(at: SuiteFile.configDirectory.appendingPathComponent(suite + ".plist"))
        try? FileManager.default.removeItem(at: SuiteFile.configDirectory.appendingPathComponent(suite + ".plist.lock"))
        #endif
        let values = try PropertyListSerialization.propertyList(from: result.output, format: nil) as? [String: String] ?? [:]
        cached = values
        return values
    }
}
