// The swift-configuration provider over a suite (the `SwiftConfiguration` trait):
// swift-configuration's own conformance test over a suite and over managed app
// configuration, each type's conversions and refusals, registered defaults, launch
// arguments, key mappings, secrets, and watches that hear every kind of write once.

#if SwiftConfiguration
import Configuration
import ConfigurationTesting
import DefaultsCoderConfiguration
import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultsSuiteProvider")
struct DefaultsSuiteProviderTests {

    /// The values `ProviderCompatTest` expects, as native property-list values.
    static func compatValues() -> [String: Any] {
        let magic = Data([0x6d, 0x61, 0x67, 0x69, 0x63])
        let magic2 = Data([0x6d, 0x61, 0x67, 0x69, 0x63, 0x32])
        return [
            "string": "Hello", "other.string": "Other Hello", "int": 42, "other.int": 24, "double": 3.14,
            "other.double": 2.72, "bool": true, "other.bool": false, "bytes": magic, "other.bytes": magic2,
            "stringy.array": ["Hello", "World"], "other.stringy.array": ["Hello", "Swift"], "inty.array": [42, 24],
            "other.inty.array": [16, 32], "doubly.array": [3.14, 2.72], "other.doubly.array": [0.9, 1.8],
            "booly.array": [true, false], "other.booly.array": [false, true, true], "byteChunky.array": [magic, magic2],
            "other.byteChunky.array": [magic, magic2, magic],
        ]
    }

    /// A lookup that swift-configuration's own `UserDefaultsProvider` is tested with:
    /// what the suite holds, the dictionary read instead of the suite (its nested mode),
    /// the key asked for, and what is found.
    struct UpstreamLookup: Sendable, CustomTestStringConvertible {
        let stored: [String: SendableAny]
        var dictionaryKey: String?
        let key: String
        let type: ConfigType
        let found: ConfigContent?

        var testDescription: String { "\(key) as \(type)\(dictionaryKey.map { " in \($0)" } ?? "")" }

        static let managed = DefaultsSuiteProvider.managedAppConfigurationKey
        static let all: [UpstreamLookup] = [
            UpstreamLookup(stored: ["app.name": SendableAny("MyApp")], key: "app.name", type: .string, found: .string("MyApp")),
            UpstreamLookup(stored: ["http.timeout": SendableAny(30)], key: "http.timeout", type: .int, found: .int(30)),
            UpstreamLookup(stored: ["rate.limit": SendableAny(3.14)], key: "rate.limit", type: .double, found: .double(3.14)),
            UpstreamLookup(stored: ["feature.enabled": SendableAny(true)], key: "feature.enabled", type: .bool, found: .bool(true)),
            UpstreamLookup(stored: [:], key: "nonexistent", type: .string, found: nil),
            UpstreamLookup(stored: ["tags": SendableAny(["swift", "ios"])], key: "tags", type: .stringArray, found: .stringArray(["swift", "ios"])),
            UpstreamLookup(
                stored: [managed: SendableAny(["http.timeout": 60, "app.name": "NestedApp"] as [String: Any])], dictionaryKey: managed,
                key: "http.timeout", type: .int, found: .int(60)),
            UpstreamLookup(
                stored: [managed: SendableAny(["http.timeout": 60, "app.name": "NestedApp"] as [String: Any])], dictionaryKey: managed,
                key: "app.name", type: .string, found: .string("NestedApp")),
            UpstreamLookup(stored: [:], dictionaryKey: "nonexistent.dict", key: "some.key", type: .string, found: nil),
            UpstreamLookup(stored: ["port": SendableAny("8080")], key: "port", type: .int, found: .int(8080)),
            UpstreamLookup(stored: ["debug": SendableAny("yes")], key: "debug", type: .bool, found: .bool(true)),
        ]

        init(stored: [String: SendableAny], dictionaryKey: String? = nil, key: String, type: ConfigType, found: ConfigContent?) {
            (self.stored, self.dictionaryKey, self.key, self.type, self.found) = (stored, dictionaryKey, key, type, found)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("the lookups swift-configuration's own UserDefaultsProvider is tested with find the same here", arguments: UpstreamLookup.all)
    func upstreamLookups(_ lookup: UpstreamLookup) async throws {
        let suite = TestSuite()
        for (key, value) in lookup.stored { suite.defaults.set(value.value, forKey: key) }
        let provider = DefaultsSuiteProvider(suite.defaults, dictionaryKey: lookup.dictionaryKey)
        let key = AbsoluteConfigKey(lookup.key.split(separator: ".").map(String.init))
        let result = try provider.value(forKey: key, type: lookup.type)
        #expect(result.value?.content == lookup.found)
        #expect(try await provider.fetchValue(forKey: key, type: lookup.type) == result)
        #expect(try provider.snapshot().value(forKey: key, type: lookup.type).value?.content == lookup.found)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a string asked for as an array of integers is a type mismatch, as upstream's provider throws one")
    func upstreamMismatch() throws {
        let suite = TestSuite()
        suite.defaults.set("hello", forKey: "name")
        let error = caught(DefaultsSuiteProvider.TypeMismatch.self) {
            try DefaultsSuiteProvider(suite.defaults).value(forKey: AbsoluteConfigKey(["name"]), type: .intArray)
        }
        #expect(error == DefaultsSuiteProvider.TypeMismatch(key: "name", type: .intArray, found: "a string"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("swift-configuration's conformance test passes over a suite's own values")
    func compatibilityOverASuite() async throws {
        let suite = TestSuite()
        for (key, value) in Self.compatValues() { suite.defaults.set(value, forKey: key) }
        try await ProviderCompatTest(provider: DefaultsSuiteProvider(suite.defaults)).runTest()
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("swift-configuration's conformance test passes over managed app configuration")
    func compatibilityOverManagedConfiguration() async throws {
        let suite = TestSuite()
        suite.defaults.set(Self.compatValues(), forKey: DefaultsSuiteProvider.managedAppConfigurationKey)
        let provider = DefaultsSuiteProvider.managedAppConfiguration(suite.defaults)
        #expect(provider.providerName == "DefaultsSuiteProvider[com.apple.configuration.managed]")
        try await ProviderCompatTest(provider: provider).runTest()
    }

    // MARK: - Types

    /// A stored value, the type asked for (a `ConfigType`'s raw value), and what it reads
    /// as (a `ConfigContent` as Swift prints it) or what the mismatch says the suite
    /// holds. Plain values, as swift-configuration's types need macOS 15 and the tests
    /// build for macOS 13.
    struct Conversion: Sendable, CustomTestStringConvertible {
        let stored: SendableAny
        let type: String
        let content: String?
        let found: String?
        var testDescription: String { "\(stored.value) as \(type)" }

        init(_ stored: Any, _ type: String, _ content: String) {
            (self.stored, self.type, self.content, found) = (SendableAny(stored), type, content, nil)
        }

        init(_ stored: Any, _ type: String, mismatch found: String) {
            (self.stored, self.type, content, self.found) = (SendableAny(stored), type, nil, found)
        }
    }

    static let conversions: [Conversion] = [
        Conversion("text", "string", #"string("text")"#),
        Conversion(5, "string", mismatch: "a number"),
        Conversion(5, "int", "int(5)"),
        Conversion(5.0, "int", "int(5)"),
        Conversion(5.5, "int", mismatch: "a number"),
        Conversion("42", "int", "int(42)"),
        Conversion("1e3", "int", "int(1000)"),
        Conversion("forty", "int", mismatch: "a string"),
        Conversion(true, "int", mismatch: "a Boolean"),
        Conversion(3, "double", "double(3.0)"),
        Conversion("2.5", "double", "double(2.5)"),
        Conversion(9_007_199_254_740_992, "double", "double(9007199254740992.0)"),
        // Integers a Double would round: refused, as the package's coders refuse them.
        Conversion(9_007_199_254_740_993, "double", mismatch: "a number"),
        Conversion(Int64.max, "double", mismatch: "a number"),
        Conversion(UInt64.max, "double", mismatch: "a number"),
        Conversion(true, "bool", "bool(true)"),
        Conversion(1, "bool", "bool(true)"),
        Conversion(0, "bool", "bool(false)"),
        Conversion(2, "bool", mismatch: "a number"),
        Conversion("YES", "bool", "bool(true)"),
        Conversion("no", "bool", "bool(false)"),
        Conversion("true", "bool", "bool(true)"),
        Conversion("0", "bool", "bool(false)"),
        Conversion("maybe", "bool", mismatch: "a string"),
        Conversion(Data([1, 2]), "bytes", "bytes([1, 2])"),
        Conversion("AQI=", "bytes", mismatch: "a string"),
        Conversion(Date(timeIntervalSince1970: 0), "string", mismatch: "a date"),
        Conversion(Date(timeIntervalSince1970: 0), "double", mismatch: "a date"),
        Conversion(["a": 1], "int", mismatch: "a dictionary"),
        Conversion([1, 2], "int", mismatch: "an array"),
        Conversion([1, "2", 3.0], "intArray", "intArray([1, 2, 3])"),
        Conversion([1, 2.5], "intArray", mismatch: "an array"),
        Conversion(["a", "b"], "stringArray", #"stringArray(["a", "b"])"#),
        Conversion([true, 0, "yes"], "boolArray", "boolArray([true, false, true])"),
        Conversion([1.5, 2], "doubleArray", "doubleArray([1.5, 2.0])"),
        Conversion([Data([1]), Data([2, 3])], "byteChunkArray", "byteChunkArray([[1], [2, 3]])"),
        Conversion("a", "stringArray", mismatch: "a string"),
    ]

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("each type's conversions and refusals, as stored and as the snapshot reads them", arguments: conversions)
    func conversion(_ conversion: Conversion) throws {
        let suite = TestSuite()
        suite.defaults.set(conversion.stored.value, forKey: "k")
        let provider = DefaultsSuiteProvider(suite.defaults)
        let type = try #require(ConfigType(rawValue: conversion.type))
        for read in [provider.value, provider.snapshot().value] {
            if let content = conversion.content {
                #expect(try read(AbsoluteConfigKey(["k"]), type).value.map { "\($0.content)" } == content)
            } else {
                let mismatch = DefaultsSuiteProvider.TypeMismatch(key: "k", type: type, found: conversion.found ?? "")
                #expect(throws: mismatch) { try read(AbsoluteConfigKey(["k"]), type) }
            }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a mismatch fails its own lookup only, and says what the suite holds")
    func mismatchIsOneLookup() throws {
        let suite = TestSuite()
        suite.defaults.set(Date(timeIntervalSince1970: 0), forKey: "when")
        suite.defaults.set(7, forKey: "count")
        let config = ConfigReader(provider: DefaultsSuiteProvider(suite.defaults))
        #expect(config.int(forKey: "count") == 7)
        #expect(config.string(forKey: "when", default: "fallback") == "fallback")
        #expect("\(DefaultsSuiteProvider.TypeMismatch(key: "when", type: .string, found: "a date"))" == "\"when\" holds a date, not string")
    }

    // MARK: - What is read

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("registered defaults are left out unless asked for")
    func registeredDefaults() async throws {
        let suite = TestSuite()
        let key = uniqueKey("registered")
        let stored = uniqueKey("registeredAndStored")
        try await ProcessWideState.exclusively { () throws in
            let saved = suite.defaults.volatileDomain(forName: UserDefaults.registrationDomain)
            defer { suite.defaults.setVolatileDomain(saved, forName: UserDefaults.registrationDomain) }
            suite.defaults.register(defaults: [key: 5, stored: 1])
            suite.defaults.set(2, forKey: stored)
            let plain = DefaultsSuiteProvider(suite.defaults)
            #expect(try plain.value(forKey: AbsoluteConfigKey([key]), type: .int).value == nil)
            #expect(try plain.value(forKey: AbsoluteConfigKey([stored]), type: .int).value?.content == .int(2))
            #expect(try plain.snapshot().value(forKey: AbsoluteConfigKey([key]), type: .int).value == nil)
            let asked = DefaultsSuiteProvider(suite.defaults, includesRegisteredDefaults: true)
            #expect(try asked.value(forKey: AbsoluteConfigKey([key]), type: .int).value?.content == .int(5))
            #expect(try asked.snapshot().value(forKey: AbsoluteConfigKey([key]), type: .int).value?.content == .int(5))
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("launch arguments are read, as strings read by the package's grammar")
    func launchArguments() async throws {
        let suite = TestSuite()
        let timeout = uniqueKey("timeout")
        let verbose = uniqueKey("verbose")
        suite.defaults.set(10, forKey: timeout)
        try await ProcessWideState.withLaunchArguments([timeout: "2.5e1", verbose: "YES"], on: suite.defaults) { () throws in
            let provider = DefaultsSuiteProvider(suite.defaults)
            #expect(try provider.value(forKey: AbsoluteConfigKey([timeout]), type: .int).value?.content == .int(25))
            #expect(try provider.value(forKey: AbsoluteConfigKey([verbose]), type: .bool).value?.content == .bool(true))
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("keys: the flat key first, then nested dictionaries; other separators; a custom mapping")
    func keys() throws {
        let suite = TestSuite()
        suite.defaults.set(["timeout": 30, "retry": ["count": 3]], forKey: "http")
        suite.defaults.set(["retry.count": 4], forKey: "db")
        suite.defaults.set(9, forKey: "db.retry.count")
        suite.defaults.set("x", forKey: "log_level")
        let dotted = DefaultsSuiteProvider(suite.defaults)
        #expect(try dotted.value(forKey: AbsoluteConfigKey(["http", "timeout"]), type: .int).value?.content == .int(30))
        #expect(try dotted.value(forKey: AbsoluteConfigKey(["http", "retry", "count"]), type: .int).value?.content == .int(3))
        #expect(try dotted.value(forKey: AbsoluteConfigKey(["db", "retry", "count"]), type: .int).value?.content == .int(9))
        #expect(try dotted.value(forKey: AbsoluteConfigKey(["http", "absent"]), type: .int).value == nil)
        let underscored = DefaultsSuiteProvider(suite.defaults, keys: .separated(by: "_"))
        let level = try underscored.value(forKey: AbsoluteConfigKey(["log", "level"]), type: .string)
        #expect(level == LookupResult(encodedKey: "log_level", value: "x"))
        let custom = DefaultsSuiteProvider(suite.defaults, keys: .custom { "log_" + $0.components.joined() })
        #expect(try custom.value(forKey: AbsoluteConfigKey(["level"]), type: .string).value?.content == .string("x"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("values marked secret are redacted")
    func secrets() throws {
        let suite = TestSuite()
        suite.defaults.set("s3cr3t", forKey: "api.token")
        suite.defaults.set("eu", forKey: "api.region")
        let provider = DefaultsSuiteProvider(suite.defaults, secretsSpecifier: .specific(["api.token"]))
        let token = try provider.value(forKey: AbsoluteConfigKey(["api", "token"]), type: .string).value
        #expect(token?.isSecret == true)
        #expect(token?.description == "[string: <REDACTED>]")
        #expect(try provider.value(forKey: AbsoluteConfigKey(["api", "region"]), type: .string).value?.isSecret == false)
    }

    // MARK: - Watching

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a watch hears a package write, a plain set and another process's write, once each, and nothing for another key")
    func watchValue() async throws {
        let suite = TestSuite()
        let name = plainKey("level")
        let key = DefaultsKey<Int>(name, default: 0)
        suite.defaults.set(1, forKey: name)
        let provider = DefaultsSuiteProvider(suite.defaults)
        let seen = try await provider.watchValue(forKey: AbsoluteConfigKey([name]), type: .int) { updates in
            var seen: [Int?] = []
            for await update in updates {
                seen.append(try update.get().value.flatMap { if case .int(let int) = $0.content { int } else { nil } })
                switch seen.count {
                case 1: suite.defaults[key] = 2
                case 2:
                    suite.defaults.set(true, forKey: name + "Other")
                    suite.defaults.set(3, forKey: name)
                    suite.defaults.synchronize()  // On Linux, a plain set is heard once synchronized.
                case 3: try await SecondProcess.write([name: 4], into: suite)
                default: return seen
                }
            }
            return seen
        }
        #expect(seen == [1, 2, 3, 4])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a value watch emits only changes that alter the result, and unsubscribes when it ends")
    func watchValueDeduplicates() async throws {
        let suite = TestSuite()
        suite.defaults.set(["timeout": 30, "other": 1], forKey: "http")
        let provider = DefaultsSuiteProvider(suite.defaults)
        let seen = try await provider.watchValue(forKey: AbsoluteConfigKey(["http", "timeout"]), type: .int) { updates in
            var seen: [ConfigContent?] = []
            for await update in updates {
                seen.append(try update.get().value?.content)
                if seen.count == 1 {
                    suite.defaults.set(["timeout": 30, "other": 2], forKey: "http")
                    suite.defaults.set(["timeout": 31, "other": 2], forKey: "http")
                    suite.defaults.synchronize()
                } else {
                    break
                }
            }
            return seen
        }
        #expect(seen == [.int(30), .int(31)])
        #expect(!DefaultsSuite.of(suite.defaults).feed.isSubscribed("http"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a snapshot watch starts with the current values and hears a change")
    func watchSnapshot() async throws {
        let suite = TestSuite()
        let name = plainKey("mode")
        suite.defaults.set("a", forKey: name)
        let provider = DefaultsSuiteProvider(suite.defaults)
        let modes = try await provider.watchSnapshot { updates in
            var modes: [String?] = []
            for await snapshot in updates {
                let value = try snapshot.value(forKey: AbsoluteConfigKey([name]), type: .string).value
                modes.append(value.flatMap { if case .string(let string) = $0.content { string } else { nil } })
                guard modes.count == 1 else { break }
                suite.defaults.set("b", forKey: name)
                suite.defaults.synchronize()
            }
            return modes
        }
        #expect(modes == ["a", "b"])
        #expect(!DefaultsSuite.of(suite.defaults).feed.isSubscribed(name))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a snapshot watch hears a key that appears, written by this process through the package")
    func watchSnapshotHearsNewKey() async throws {
        let suite = TestSuite()
        let (shown, appearing) = (plainKey("shown"), plainKey("appearing"))
        suite.defaults.set("a", forKey: shown)
        let provider = DefaultsSuiteProvider(suite.defaults)
        let seen = try await provider.watchSnapshot { updates in
            var seen: [String?] = []
            for await snapshot in updates {
                let value = try snapshot.value(forKey: AbsoluteConfigKey([appearing]), type: .int).value
                seen.append(value.map { "\($0.content)" })
                if seen.count == 1 { try suite.defaults.encode(5, forKey: appearing) } else { break }
            }
            return seen
        }
        #expect(seen == [nil, "int(5)"])
    }

    // MARK: - The article's examples

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Reading configuration: managed configuration above the suite above the environment")
    func articleLayers() throws {
        let suite = TestSuite()
        let config = ConfigReader(providers: [
            DefaultsSuiteProvider.managedAppConfiguration(suite.defaults),
            DefaultsSuiteProvider(suite.defaults),
            EnvironmentVariablesProvider(environmentVariables: ["HTTP_TIMEOUT": "10", "HTTP_RETRIES": "2"]),
        ])
        #expect(config.int(forKey: "http.timeout", default: 30) == 10)
        suite.defaults.set(20, forKey: "http.timeout")
        #expect(config.int(forKey: "http.timeout", default: 30) == 20)
        suite.defaults.set(["http": ["timeout": 5]], forKey: DefaultsSuiteProvider.managedAppConfigurationKey)
        #expect(config.int(forKey: "http.timeout", default: 30) == 5)
        #expect(config.int(forKey: "http.retries", default: 0) == 2)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Reading configuration: watching a level")
    func articleWatch() async throws {
        let suite = TestSuite()
        let config = ConfigReader(provider: DefaultsSuiteProvider(suite.defaults))
        let levels = try await config.watchInt(forKey: "log.level", default: 0) { updates in
            var levels: [Int] = []
            for await level in updates {
                levels.append(level)
                guard levels.count == 1 else { break }
                suite.defaults.set(3, forKey: "log.level")
                suite.defaults.synchronize()
            }
            return levels
        }
        #expect(levels == [0, 3])
    }
}
#endif
