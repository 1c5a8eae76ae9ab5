//
//  ReadmeTests.swift
//  DefaultsCoderTests
//
//  The README's examples, run as shown, with the outputs it shows.
//

import DefaultsCoder
import Foundation
import Testing

@Suite("README examples")
struct ReadmeTests {

    @Test("KeyValueEncoder")
    func encoder() throws {
        let encoder = KeyValueEncoder()
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(try encoder.encode(["fish", "chips"])) == .array([.string("fish"), .string("chips")]))
        #expect(Tree(try encoder.encode(Food(rawValue: "fish"))) == .string("fish"))
        #expect(Tree(try encoder.encode(Int8(5))) == .int8(5))
        #expect(Tree(try encoder.encode([1: "one"])) == .dictionary(["1": .string("one")]))
    }

    @Test("strategies")
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

    @Test("KeyValueDecoder")
    func decoder() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Food.self, from: "fish") == Food(rawValue: "fish"))
        #expect(try decoder.decode([String].self, from: ["fish", "chips"]) == ["fish", "chips"])
        #expect(try decoder.decode(User.self, from: ["id": 1, "name": "Herbert"]) == User(id: 1, name: "Herbert"))
        #expect(try decoder.decode([Int8].self, from: [10, 20.0, -30.0, Int64(50)]) == [10, 20, -30, 50])

        var rounding = KeyValueDecoder()
        rounding.intDecodingStrategy = .rounding(rule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int].self, from: [10.1, -20.9, 50.00001]) == [10, -21, 50])
        rounding.intDecodingStrategy = .clamping(roundingRule: .toNearestOrAwayFromZero)
        #expect(try rounding.decode([Int8].self, from: [10, 20.5, 1000, -Double.infinity]) == [10, 21, 127, -128])
    }

    @Test("UserDefaults")
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

    @Test("Typed keys")
    func typedKeys() throws {
        ReportedFailures.install()
        let suite = TestSuite()
        let defaults = suite.defaults

        defaults[.launchCount] += 1
        #expect(defaults[.launchCount] == 1)
        defaults[.theme] = .dark
        #expect(defaults.object(forKey: "app.appearance.theme") as? String == "dark")
        try defaults.set(User(id: 1, name: "Ada"), for: .owner)
        #expect(Tree(defaults.object(forKey: "owner")) == Tree(["id": 1, "name": "Ada"]))
        #expect(try defaults.value(for: .owner) == User(id: 1, name: "Ada"))
        defaults[.owner] = nil
        #expect(defaults.object(forKey: "owner") == nil)
        try defaults.removeValue(for: .launchCount)
        #expect(defaults[.launchCount] == 0)

        try defaults.register(.launchCount, .theme)
        #expect(defaults.dictionaryRepresentation()["app.appearance.theme"] as? String == "dark")
        #expect(defaults.dictionaryRepresentation()["launchCount"] as? Int == 0)

        let name: DefaultsKey<String?> = "name"
        #expect(defaults[name] == nil)

        // Nothing is swallowed (the README's key is "owner"; here it is made unique,
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
        let old = try defaults.value(for: profile)
        #expect(old == User(id: 2, name: "Bo"))
        try defaults.set(old, for: profile)
        #expect(Tree(defaults.object(forKey: "profile")) == Tree(["id": 2, "name": "Bo"]))
    }

    @Test("@UserDefault and observation")
    func wrapperAndObservation() async throws {
        final class Settings {
            @UserDefault("hasSeenSplashScreen") var hasSeenSplashScreen = false
            @UserDefault("name") var name: String?
            @UserDefault(.launchCount) var launchCount
            @UserDefault("volume", store: UserDefaults(suiteName: "group.example")!) var volume = 0.5
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
        let observation = defaults.observe(.theme) { old, new in
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
}
