// The documentation articles' examples (Sources/DefaultsCoder/DefaultsCoder.docc), run as
// shown, with the outputs they show. Each test names its article. Code that shows another
// library's API ("before") is not compiled; SwiftUI code is compiled where SwiftUI exists.

import Foundation
import Observation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

#if canImport(SwiftUI)
import SwiftUI
#endif

@Suite("Documentation examples")
struct DocumentationTests {

    @Test("Using the coders: the encoder")
    func encoder() throws {
        let encoder = KeyValueEncoder()
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(try encoder.encode(["fish", "chips"])) == .array([.string("fish"), .string("chips")]))
        #expect(Tree(try encoder.encode(Food(rawValue: "fish"))) == .string("fish"))
        #expect(Tree(try encoder.encode(Int8(5))) == .int8(5))
        #expect(Tree(try encoder.encode([1: "one"])) == .dictionary(["1": .string("one")]))
    }

    @Test("Using the coders: strategies")
    func strategies() throws {
        var encoder = KeyValueEncoder()
        encoder.dateEncodingStrategy = .iso8601(includingFractionalSeconds: true)
        encoder.urlEncodingStrategy = .absoluteString
        encoder.dataEncodingStrategy = .base64
        encoder.keyEncodingStrategy = .convertToSnakeCase

        struct Upload: Codable {
            var fileName: String
            var sentAt: Date
            var source: URL
            var checksum: Data
        }

        let upload = try encoder.encode(
            Upload(
                fileName: "a.txt",
                sentAt: Date(timeIntervalSince1970: 0.25),
                source: URL(string: "https://fish.com/a.txt")!,
                checksum: Data([1, 2, 3])
            ))
        #expect(
            Tree(upload)
                == .dictionary([
                    "file_name": .string("a.txt"), "sent_at": .string("1970-01-01T00:00:00.250Z"),
                    "source": .string("https://fish.com/a.txt"), "checksum": .string("AQID"),
                ]))

        encoder.keyEncodingStrategy = .custom { path in
            KeyValueCodingKey(stringValue: path.last!.stringValue.uppercased())
        }
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["ID": .int(1), "NAME": .string("Herbert")]))
    }

    @Test("Using the coders: the decoder")
    func decoder() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Food.self, from: "fish") == Food(rawValue: "fish"))
        #expect(try decoder.decode([String].self, from: ["fish", "chips"]) == ["fish", "chips"])
        #expect(try decoder.decode(User.self, from: ["id": 1, "name": "Herbert"]) == User(id: 1, name: "Herbert"))
        #expect(try decoder.decode([Int8].self, from: [10, 20.0, -30.0, Int64(50)]) == [10, 20, -30, 50])

        var rounding = KeyValueDecoder()
        rounding.intDecodingStrategy = .rounding(rule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int].self, from: [10.1, -20.9, 50.00001]) == [10, -21, 50])
        rounding.intDecodingStrategy = .clamping(rule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int8].self, from: [10, 20.5, 1000, -Double.infinity]) == [10, 21, 127, -128])
    }

    @Test("The storage contract: storing and reading")
    func userDefaults() throws {
        let suite = TestSuite()
        let defaults = suite.defaults

        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner")
        try defaults.encode(URL(string: "https://fish.com/chips?x=1")!, forKey: "url")
        try defaults.encode(Duration.nanoseconds(1), forKey: "duration")

        let all = defaults.dictionaryRepresentation()
        #expect(Tree(all["owner"]) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(all["url"]) == .string("https://fish.com/chips?x=1"))
        #expect(Tree(all["duration"]) == .array([.int(0), .int(1_000_000_000)]))

        #expect(try defaults.decode(User.self, forKey: "owner") == User(id: 1, name: "Herbert"))
        #expect(try defaults.decode(URL.self, forKey: "url") == URL(string: "https://fish.com/chips?x=1"))
        #expect(try defaults.decode(Duration.self, forKey: "duration") == .nanoseconds(1))
        #expect(try defaults.decode(User.self, forKey: "nobody") == nil)

        try defaults.encode(User?.none, forKey: "owner")
        #expect(defaults.object(forKey: "owner") == nil)

        var encoder = KeyValueEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner", encoder: encoder)
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try defaults.decode(User.self, forKey: "owner", decoder: decoder) == User(id: 1, name: "Herbert"))
    }

    @Test("Typed keys, the wrapper and observation: typed keys; Errors and failures: the handler")
    func typedKeys() throws {
        ReportedFailures.install()
        let suite = TestSuite()
        let defaults = suite.defaults

        defaults[.launchCount] += 1
        #expect(defaults[.launchCount] == 1)
        defaults[.theme] = .dark
        #expect(defaults.object(forKey: "app.appearance.theme") as? String == "dark")
        try defaults.write(User(id: 1, name: "Ada"), to: .owner)
        #expect(Tree(defaults.object(forKey: "owner")) == Tree(["id": 1, "name": "Ada"]))
        #expect(try defaults.read(.owner) == User(id: 1, name: "Ada"))
        defaults[.owner] = nil
        #expect(defaults.object(forKey: "owner") == nil)
        try defaults.reset(.launchCount)
        #expect(defaults[.launchCount] == 0)

        try defaults.register(.launchCount, .theme)
        #expect(defaults.dictionaryRepresentation()["app.appearance.theme"] as? String == "dark")
        #expect(defaults.dictionaryRepresentation()["launchCount"] as? Int == 0)

        let name: DefaultsKey<String?> = "name"
        #expect(defaults[name] == nil)

        // Nothing is swallowed (the article's key is "owner"; here it is made unique,
        // because the handler collects the reports of every test).
        let owner = DefaultsKey<User?>(uniqueKey("owner"))
        defaults.set(["id": 1, "name": 42], forKey: owner.name)
        #expect(defaults[owner] == nil)
        #expect(
            ReportedFailures.reports(for: owner.name).map(\.description) == [
                "DefaultsCoder: cannot read \"\(owner.name)\", returning its default: Expected String at SELF.name, found Int"
            ])

        // Legacy blobs.
        let profile = DefaultsKey<User?>("profile", legacy: .json)
        defaults.set(try JSONEncoder().encode(User(id: 2, name: "Bo")), forKey: "profile")
        let old = try defaults.read(profile)
        #expect(old == User(id: 2, name: "Bo"))
        try defaults.write(old, to: profile)
        #expect(Tree(defaults.object(forKey: "profile")) == Tree(["id": 2, "name": "Bo"]))
    }

    @Test("Typed keys, the wrapper and observation: the wrapper and observing a key")
    func wrapperAndObservation() async throws {
        final class Settings {
            @UserDefault("hasSeenSplashScreen") var hasSeenSplashScreen = false
            @UserDefault("name") var name: String?
            @UserDefault(.launchCount) var launchCount
            @UserDefault("volume", store: UserDefaults.suite(named: "group.com.example.app")) var volume = 0.5
        }
        let settings = Settings()
        #expect(settings.$hasSeenSplashScreen.key.defaultValue == false)
        #expect(settings.$name.key.defaultValue == nil)
        #expect(settings.$volume.key.defaultValue == 0.5)
        #expect(settings.$launchCount.key.name == "launchCount")

        // The same, on a suite of the test's own instead of .standard.
        let suite = TestSuite()
        let defaults = suite.defaults
        @UserDefault(.launchCount, store: defaults) var launchCount
        launchCount += 1
        #expect($launchCount.isSet)
        $launchCount.reset()
        #expect(launchCount == 0)

        defaults[.theme] = .dark
        let printed = Recorded<String>()
        let observation = defaults.observe(.theme, initial: false) { old, new in
            printed.append("theme: \(old) → \(new)")
        }
        defaults[.theme] = .light
        defaults[.theme] = .light
        observation.cancel()
        defaults[.theme] = .dark
        #expect(await eventually { printed.values == ["theme: dark → light"] })

        let seen = Recorded<Theme>()
        let themes = defaults.updates(for: .theme)
        let task = Task {
            for await theme in themes {
                seen.append(theme)
            }
        }
        #expect(await eventually { !seen.values.isEmpty })
        task.cancel()
        await task.value
        #expect(seen.values == [.dark])
    }
    @Test("Using the coders: the nil strategy")
    func nilStrategy() throws {
        var encoder = KeyValueEncoder()
        let value = [1, 2, Int?.none, 3]
        encoder.nilEncodingStrategy = .default
        #expect(Tree(try encoder.encode(value)) == .array([.int(1), .int(2), .null, .int(3)]))
        encoder.nilEncodingStrategy = .stringNull
        #expect(Tree(try encoder.encode(value)) == .array([.int(1), .int(2), .string("$null"), .int(3)]))
        encoder.nilEncodingStrategy = .nsNull
        #expect(Tree(try encoder.encode(value)) == .array([.int(1), .int(2), .nsNull, .int(3)]))
        encoder.nilEncodingStrategy = .removed
        #expect(Tree(try encoder.encode(value)) == .array([.int(1), .int(2), .int(3)]))
        encoder.nilEncodingStrategy = .placeholder(-1, isNull: { ($0 as? Int) == -1 })
        #expect(Tree(try encoder.encode(value)) == .array([.int(1), .int(2), .int(-1), .int(3)]))
    }

    @Test("Getting started")
    func gettingStarted() throws {
        let tree = try KeyValueEncoder().encode(User(id: 1, name: "Herbert"))
        #expect(Tree(tree) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        let user = try KeyValueDecoder().decode(User.self, from: tree as Any)
        #expect(user == User(id: 1, name: "Herbert"))

        let suite = TestSuite()
        let defaults = suite.defaults
        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner")
        #expect(Tree(defaults.object(forKey: "owner")) == Tree(["id": 1, "name": "Herbert"]))
        #expect(try defaults.decode(User.self, forKey: "owner") == User(id: 1, name: "Herbert"))
        try defaults.encode(User?.none, forKey: "owner")
        #expect(defaults.object(forKey: "owner") == nil)

        defaults[.launchCount] += 1
        final class Settings {
            @UserDefault(.launchCount) var launchCount
        }
        #expect(Settings().$launchCount.key.name == "launchCount")
        #expect(defaults[.launchCount] == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("Typed keys, the wrapper and observation: several keys, dynamic defaults, clearing a suite")
    func severalKeysAndDefaults() async throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        let printed = Recorded<String>()
        let both = defaults.observe([.theme, .launchCount], initial: false) { key in
            printed.append("\(key.name) changed")
        }
        let streamed = Recorded<String>()
        let stream = defaults.updates(for: [.theme, .launchCount])
        let task = Task { for await key in stream { streamed.append(key.name) } }
        defaults[.theme] = .light
        defaults[.launchCount] = 3
        #expect(printed.values == ["app.appearance.theme changed", "launchCount changed"])
        // The stream starts with each key once, then the changes.
        #expect(await eventually { streamed.values.count == 4 })
        task.cancel()
        both.cancel()

        let firstSeen = DefaultsKey<Date>("firstSeen") { Date() }
        let before = Date()
        #expect(defaults[firstSeen] >= before)
        #expect(!defaults.isDefaultValue(.launchCount))
        try defaults.reset(.launchCount, .theme)
        #expect(defaults.isDefaultValue(.launchCount))
        defaults[.launchCount] = 1
        try defaults.resetAll()
        // Registered defaults are the process's (other tests register .launchCount): ask
        // the suite itself.
        #expect(defaults.persistentDomain(forName: suite.name)?["launchCount"] == nil)
    }

    #if canImport(Combine)
    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("Typed keys, the wrapper and observation: a Combine publisher (Apple platforms only)")
    func combinePublisher() throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        let printed = Recorded<Theme>()
        let cancellable = defaults.publisher(for: .theme)
            .sink { theme in printed.append(theme) }
        defaults[.theme] = .dark
        defaults[.theme] = .dark
        let keys = Recorded<String>()
        let several = defaults.publisher(for: [.theme, .launchCount], initial: false)
            .sink { key in keys.append(key.name) }
        defaults[.launchCount] = 2
        cancellable.cancel()
        defaults[.theme] = .light
        several.cancel()
        defaults[.theme] = .dark
        #expect(printed.values == [.system, .dark])  // the default first, then the one change
        #expect(keys.values == ["launchCount", "app.appearance.theme"])
    }
    #endif

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("Typed keys, the wrapper and observation: the Observation framework")
    func observationFramework() async throws {
        let suite = TestSuite()
        let model = ArticleSettingsModel(store: suite.defaults)
        let printed = Recorded<String>()
        withObservationTracking {
            _ = model.theme
        } onChange: {
            printed.append("theme changed")
        }
        model.theme = .dark
        #expect(await eventually { printed.values == ["theme changed"] })
        suite.defaults[.theme] = .light
        #expect(printed.values == ["theme changed"])
        #expect(model.theme == .light)
        #expect(model.showsPreview == true)
    }

    // The article's worked example is the README's, run by `ReadmeTests.migrations`; here
    // are the article's other claims.
    @Test("Migrations: a suite with nothing to migrate, and the error of a failing step")
    func migrations() throws {
        // A suite with no "font" gets the version and nothing else.
        let fresh = TestSuite()
        #expect(try fresh.defaults.migrate(DefaultsMigration(version: 2, .convert("font", from: Int.self) { $0 })) == 2)
        #expect(fresh.defaults.dictionaryRepresentation()["font"] == nil)
        let other = TestSuite()
        other.defaults.set("large", forKey: "font")
        let error = caught(DefaultsMigrationError.self) {
            try other.defaults.migrate(DefaultsMigration(version: 2, .convert("font", from: Int.self, to: .articleFontSize) { Double($0) }))
        }
        #expect(error?.description == #"Migration to version 2 failed at "font": Expected BinaryInteger at SELF, found String. Nothing was changed."#)
    }

    @Test("Errors and failures: coding errors and an unreadable file")
    func errorsAndFailures() throws {
        let decoder = KeyValueDecoder()
        let cases: [(String?, String)] = [
            (debugDescription(of: caught(DecodingError.self) { try decoder.decode([String].self, from: ["fish", 1]) }), "Expected String at SELF[1], found Int"),
            (
                debugDescription(of: caught(DecodingError.self) { try decoder.decode([User].self, from: [["id": 1, "name": "Herbert"], ["id": 2, "name": 5]]) }),
                "Expected String at SELF[1].name, found Int"
            ),
            (debugDescription(of: caught(DecodingError.self) { try decoder.decode([Int].self, from: [1, 2, true]) }), "Expected BinaryInteger at SELF[2], found Bool"),
            (
                debugDescription(of: caught(DecodingError.self) { try decoder.decode([UInt8].self, from: [10, 100, 1000]) }),
                "Int at SELF[2], cannot be exactly represented by UInt8"
            ),
            (
                debugDescription(of: caught(DecodingError.self) { try decoder.decode([User].self, from: [["id": 1, "name": "Herbert"], ["id": 2]]) }),
                "Dictionary does not contain key SELF[1].name"
            ),
        ]
        for (found, expected) in cases { #expect(found == expected) }

        // An unreadable file is the file backend's: Apple platforms have none.
        guard Backend.isFile else { return }
        let suite = TestSuite()
        let defaults = suite.defaults
        try FileManager.default.createDirectory(at: suite.fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: suite.fileURL)
        var moved: URL?
        do {
            try defaults.write(3, to: .launchCount)
        } catch let error as UnreadableDefaultsFile {
            #expect(error.description.hasPrefix("The UserDefaults file \(suite.fileURL.path) cannot be read (it is empty); "))
            moved = try defaults.moveUnreadableFileAside()
        }
        let aside = try #require(moved)
        #expect(aside.lastPathComponent.hasPrefix("\(suite.name).unreadable-"))
        try FileManager.default.removeItem(at: aside)
        try defaults.write(3, to: .launchCount)
        #expect(defaults[.launchCount] == 3)
    }

    @Test("Migrating from Data blobs, KeyValueCoder, Defaults and SwiftyUserDefaults: the after code")
    func migratingFromOtherLibraries() async throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        let profile = User(id: 7, name: "Bo")

        // From Data blobs.
        defaults.set(try JSONEncoder().encode(profile), forKey: "profile")
        let saved = defaults[.articleProfile]
        #expect(saved == profile)
        defaults[.articleProfile] = saved
        #expect(Tree(defaults.object(forKey: "profile")) == Tree(["id": 7, "name": "Bo"]))
        defaults.set(try JSONEncoder().encode(profile), forKey: "profile")
        try defaults.migrate(
            DefaultsMigration(version: 1, .convert("profile", from: User.self, to: .articleProfile, legacy: .json) { $0 }))
        #expect(Tree(defaults.object(forKey: "profile")) == Tree(["id": 7, "name": "Bo"]))

        // From KeyValueCoder.
        try defaults.encode(profile, forKey: "profile")
        #expect(try defaults.decode(User.self, forKey: "profile") == profile)
        defaults.set(["a", "$null"], forKey: "legacyNil")
        var stringNull = KeyValueDecoder()
        stringNull.nilDecodingStrategy = .stringNull
        #expect(try stringNull.decode([String?].self, from: defaults.object(forKey: "legacyNil") as Any) == ["a", nil])

        // From Defaults.
        defaults[.articleDefaultsFontSize] = 14
        let sizes = defaults.updates(for: .articleDefaultsFontSize)
        for await size in sizes {
            #expect(size == 14)
            break
        }

        // From SwiftyUserDefaults.
        defaults[.articleUsername] = "ada"
        #expect(defaults.string(forKey: "username") == "ada")
    }

    @Test("Syncing with iCloud: testing with the simulator")
    func syncingWithTheSimulator() async throws {
        let phoneSuite = TestSuite()
        let laptopSuite = TestSuite()
        let (phoneDefaults, laptopDefaults) = (phoneSuite.defaults, laptopSuite.defaults)

        let cloud = SimulatedCloud(delivery: .manual)
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        let phoneSync = CloudSync(phoneDefaults, store: phone, clock: phone.now)
        let laptopSync = CloudSync(laptopDefaults, store: laptop, clock: laptop.now)
        for sync in [phoneSync, laptopSync] {
            try sync.add(.articleFavorites)
            try sync.start()
        }

        phoneDefaults[.articleFavorites] = ["Lisbon"]
        cloud.deliver()
        #expect(laptopDefaults[.articleFavorites] == ["Lisbon"])
        for sync in [phoneSync, laptopSync] { sync.stop() }
    }

    @Test("Syncing with iCloud: the overview, with the simulator where iCloud is not")
    func syncingOverview() throws {
        let suite = TestSuite()
        #if canImport(Darwin)
        if #available(watchOS 9, *) {
            // Compiled as shown; not started, as the test runner has no entitlement.
            _ = CloudSync(.standard, store: UbiquitousKeyValueStore())
        }
        #endif
        let sync = CloudSync(suite.defaults, store: SimulatedCloud().makeDevice(named: "device"))
        try sync.add(.theme, .articleFavorites)
        try sync.start()
        #expect(sync.status == .running)
        #expect(sync.keys == ["app.appearance.theme", "favorites"])
        sync.stop()
    }
}

extension DefaultsKeys {
    fileprivate static let articleFontSize = DefaultsKey<Double>("appearance.fontSize", default: 13)
    fileprivate static let articleProfile = DefaultsKey<User?>("profile", legacy: .json)
    fileprivate static let articleDefaultsFontSize = DefaultsKey<Double>("fontSize", default: 13)
    fileprivate static let articleUsername = DefaultsKey<String?>("username")
    fileprivate static let articleShowsPreview = DefaultsKey<Bool>("showsPreview", default: true)
    fileprivate static let articleFavorites = DefaultsKey<[String]>("favorites", default: [])
}

/// The article's `SettingsModel`, on a suite of the test's own instead of `.standard`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ArticleSettingsModel {
    @ObservationIgnored @UserDefault(.articleShowsPreview) var showsPreview
    @ObservationIgnored @UserDefault(.theme) var theme
    var isEditing = false

    init(store: UserDefaults) {
        _showsPreview = UserDefault(.articleShowsPreview, store: store)
        _theme = UserDefault(.theme, store: store)
    }
}

#if canImport(SwiftUI)
/// The article's settings view, compiled where SwiftUI exists.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
struct ArticleSettingsView: View {
    @State private var model = ArticleSettingsModel(store: .standard)

    var body: some View {
        Form {
            Toggle("Show previews", isOn: $model.showsPreview)
            Picker("Theme", selection: $model.theme) {
                Text("System").tag(Theme.system)
                Text("Light").tag(Theme.light)
                Text("Dark").tag(Theme.dark)
            }
        }
    }
}
#endif
