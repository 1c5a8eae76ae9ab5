// The deprecated names of `Deprecations.swift`: each still compiles and does what the
// name it forwards to does. Each is called through a protocol, so that the deprecated
// name is used without a warning (the build treats warnings as errors).

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Deprecations, strategies")
struct DeprecatedStrategyNamesTests {
    @Test("the renamed strategies' old spellings still work")
    func oldSpellings() throws {
        let old = try (OldStrategySpellings() as any StrategySpellings).strategies()
        #expect(old.nilIsNull("x") && !old.nilIsNull("y"))
        #expect(!old.removedIsNull("x"))
        var decoder = KeyValueDecoder()
        decoder.intDecodingStrategy = old.clamping
        #expect(try decoder.decode(Int8.self, from: 300) == 127)
    }
}

/// Called through a protocol, so that the deprecated names are used without a warning
/// (the build treats warnings as errors).
private protocol StrategySpellings {
    func strategies() throws -> (nilIsNull: (Any) -> Bool, removedIsNull: (Any) -> Bool, clamping: KeyValueDecoder.IntDecodingStrategy)
}

private struct OldStrategySpellings: StrategySpellings {
    @available(*, deprecated, message: "uses the deprecated names on purpose")
    func strategies() throws -> (nilIsNull: (Any) -> Bool, removedIsNull: (Any) -> Bool, clamping: KeyValueDecoder.IntDecodingStrategy) {
        let placeholder = KeyValueDecoder.NilDecodingStrategy.placeholder("x") { ($0 as? String) == "x" }
        let removed = KeyValueDecoder.NilDecodingStrategy.removed
        return (placeholder.isNull, removed.isNull, .clamping(roundingRule: nil))
    }
}

/// The names renamed in 0.4 still compile, deprecated, and do what the new ones do.
@Suite("UserDefaults+Keys, deprecated names")
struct DeprecatedKeyNamesTests {
    @Test("value(for:), set(_:for:) and removeValue(for:) forward to read, write and reset")
    func oldSpellings() throws {
        let suite = TestSuite()
        try (OldSpellings() as any SpellingRoundTrip).run(suite.defaults)
        #expect(try suite.defaults.read(DefaultsKey<Int>("old", default: 7)) == 7)
        #expect(suite.defaults.object(forKey: "old") == nil)
    }
}

/// Called through a protocol, so that the deprecated names are used without a warning
/// (the build treats warnings as errors).
private protocol SpellingRoundTrip {
    func run(_ defaults: UserDefaults) throws
}

private struct OldSpellings: SpellingRoundTrip {
    @available(*, deprecated, message: "uses the deprecated names on purpose")
    func run(_ defaults: UserDefaults) throws {
        let key = DefaultsKey<Int>("old", default: 7)
        try defaults.set(3, for: key)
        #expect(try defaults.value(for: key) == 3)
        try defaults.removeValue(for: key)
    }
}

/// The typed-key conversion's old label order still compiles, deprecated.
@Suite("DefaultsMigration, deprecated names")
struct DeprecatedMigrationNamesTests {
    @Test("convert(_:from:legacy:to:_:) forwards to convert(_:from:to:legacy:_:)")
    func oldLabelOrder() throws {
        let suite = TestSuite()
        suite.defaults.set(3, forKey: "old")
        let key = DefaultsKey<Int>(uniqueKey("new"), default: 0)
        let step = (OldConvertSpelling() as any ConvertSpelling).step(to: key)
        #expect(try suite.defaults.migrate(DefaultsMigration(version: 1, step)) == 1)
        #expect(suite.defaults[key] == 6)
    }
}

/// Called through a protocol, so that the deprecated name is used without a warning.
private protocol ConvertSpelling {
    func step(to key: DefaultsKey<Int>) -> DefaultsMigration.Step
}

private struct OldConvertSpelling: ConvertSpelling {
    @available(*, deprecated, message: "uses the deprecated name on purpose")
    func step(to key: DefaultsKey<Int>) -> DefaultsMigration.Step {
        .convert("old", from: Int.self, legacy: nil, to: key) { $0 * 2 }
    }
}

@Suite("Deprecations, observation")
struct DeprecatedObservationNamesTests {
    @Test("initialByDefault says what observe's and updates' default argument says")
    func initialByDefault() {
        #expect((OldObservationSpelling() as any ObservationSpelling).initialByDefault() == true)
    }
}

private protocol ObservationSpelling {
    func initialByDefault() -> Bool
}

private struct OldObservationSpelling: ObservationSpelling {
    @available(*, deprecated, message: "uses the deprecated name on purpose")
    func initialByDefault() -> Bool { DefaultsObservation.initialByDefault }
}
