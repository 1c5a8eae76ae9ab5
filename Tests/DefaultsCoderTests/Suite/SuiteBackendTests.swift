// The preferences backend — the suite layer's Apple path — against what Apple's
// `UserDefaults` does and Linux's does not: announcing each `set` as it is made, a
// global domain in every suite, registered defaults and launch arguments in `object(forKey:)`.
// On Linux these run with `DEFAULTSCODER_SUITE_BACKEND=preferences`, against
// `AppleUserDefaults`; on Apple platforms, against the real thing.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite(
    "SuiteBackend",
    .enabled(if: Backend.isPreferences, "the preferences backend's: Apple platforms, or DEFAULTSCODER_SUITE_BACKEND=preferences"))
struct SuiteBackendTests {

    /// What the suite itself holds, as the package reads it.
    private func own(_ suite: TestSuite) -> [String: Any] {
        (try? DefaultsSuite.of(suite.defaults).backend.storedValues(of: suite.defaults)) ?? [:]
    }

    // MARK: - Migrations see the suite's own values

    @Test("a conversion onto a key that only has a registered default runs")
    func convertOntoRegisteredKey() throws {
        let suite = TestSuite()
        let (old, new) = (uniqueKey("font"), uniqueKey("fontSize"))
        suite.defaults.register(defaults: [new: 13.0])
        suite.defaults.set(14, forKey: old)
        let version = try suite.defaults.migrate(DefaultsMigration(version: 1, .convert(old, from: Int.self, to: new) { Double($0) }))
        #expect(version == 1)
        #expect(suite.defaults.double(forKey: new) == 14)
        #expect(suite.defaults.object(forKey: old) == nil)
    }

    @Test("a rename onto a key whose registered default differs moves the value")
    func renameOntoRegisteredKey() throws {
        let suite = TestSuite()
        let (old, new) = (uniqueKey("username"), uniqueKey("account.name"))
        suite.defaults.register(defaults: [new: "guest"])
        suite.defaults.set("ada", forKey: old)
        try suite.defaults.migrate(DefaultsMigration(version: 1, .rename(old, to: new)))
        #expect(suite.defaults.string(forKey: new) == "ada")
        #expect(own(suite)[old] == nil)
    }

    @Test("a rename or a move of a key that holds only a registered default writes nothing but the version")
    func renameOfRegisteredOnly() throws {
        let suite = TestSuite()
        let target = TestSuite("target")
        let (old, new, moved) = (uniqueKey("theme"), uniqueKey("appearance.theme"), uniqueKey("accent"))
        suite.defaults.register(defaults: [old: "dark", moved: "blue"])
        try suite.defaults.migrate(DefaultsMigration(version: 1, .rename(old, to: new), .move(moved, intoSuite: target.name)))
        #expect(Set(own(suite).keys) == [DefaultsMigration.versionKey])
        #expect(own(target).isEmpty)
    }

    @Test("the recorded version is the suite's own, never a launch argument")
    func versionIgnoresLaunchArgument() async throws {
        let suite = TestSuite()
        let versionKey = uniqueKey("version")
        try await ProcessWideState.withLaunchArguments([versionKey: "7"], on: suite.defaults) {
            #expect(try suite.defaults.migrationVersion(versionKey: versionKey) == 0)
            let migrated = try suite.defaults.migrate([DefaultsMigration(version: 1, .remove("nothing"))], versionKey: versionKey)
            #expect(migrated == 1)
            #expect(try suite.defaults.migrationVersion(versionKey: versionKey) == 1)
            #expect(suite.defaults.string(forKey: versionKey) == "7")  // the argument still takes precedence
        }
    }

    // MARK: - resetAll

    @Test("resetAll removes the suite's own keys and announces those alone")
    func resetAllOwnKeysOnly() throws {
        let suite = TestSuite()
        let (a, b, registered) = (uniqueKey("a"), uniqueKey("b"), uniqueKey("registered"))
        suite.defaults.set(1, forKey: a)
        suite.defaults.set("two", forKey: b)
        suite.defaults.register(defaults: [registered: true])
        let announced = Recorded<String>()
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.keyDidChangeNotification, object: suite.defaults, queue: nil
        ) { note in announced.append(note.userInfo?["key"] as? String ?? "?") }
        defer { NotificationCenter.default.removeObserver(token) }

        try suite.defaults.resetAll()
        #expect(announced.values.sorted() == [a, b].sorted())
        #expect(own(suite).isEmpty)
        #expect(suite.defaults.object(forKey: "AppleLanguages") != nil)
        #expect(suite.defaults.bool(forKey: registered))
    }

    // MARK: - One announcement, after the whole change

    @Test("an observer never reads a change half written: Foundation's announcements of the package's own writes wait for it")
    func noReadMidChange() throws {
        let suite = TestSuite()
        let first = DefaultsKey<Int>(uniqueKey("first"), default: 0)
        let second = DefaultsKey<Int>(uniqueKey("second"), default: 0)
        try suite.defaults.write(1, to: first)
        try suite.defaults.write(1, to: second)
        let seen = Recorded<[Int]>()
        // UserDefaults is thread-safe, though not marked Sendable on every platform.
        let observation = suite.defaults.observe(first, initial: false) { _, new in seen.append([new, suite.defaults[second]]) }
        try suite.defaults.reset(first, second)
        #expect(seen.values == [[0, 0]])
        try suite.defaults.migrate(DefaultsMigration(version: 1, .remove(first.name)))
        #expect(seen.values == [[0, 0]])
        observation.cancel()
    }

    // MARK: - One suite for every object of it

    @Test("keyDidChangeNotification reaches each object of the suite, whichever wrote")
    func notificationReachesEveryObject() throws {
        let suite = TestSuite()
        let other = makeDefaults(suiteName: suite.name)
        let key = DefaultsKey<Int>(uniqueKey("shared"), default: 0)
        try other.reset(key)  // the package has seen the object
        let heard = Recorded<String>()
        var tokens: [any NSObjectProtocol] = []
        for (label, object) in [("first", suite.defaults), ("second", other)] {
            tokens.append(
                NotificationCenter.default.addObserver(forName: UserDefaults.keyDidChangeNotification, object: object, queue: nil) { _ in
                    heard.append(label)
                })
        }
        defer { tokens.forEach(NotificationCenter.default.removeObserver) }
        try suite.defaults.write(3, to: key)
        #expect(heard.values.sorted() == ["first", "second"])
        #expect(DefaultsSuite.of(other) === DefaultsSuite.of(suite.defaults))
        #expect(other[key] == 3)
    }

    @Test("a move into the suite being migrated, through another object of it, is refused and keeps the value")
    func moveIntoOwnSuite() throws {
        let suite = TestSuite()
        let key = uniqueKey("font")
        suite.defaults.set(14, forKey: key)
        let other = makeDefaults(suiteName: suite.name)
        let error = caught(DefaultsMigrationError.self) {
            try other.migrate(DefaultsMigration(version: 1, .move(key, intoSuite: suite.name)))
        }
        #expect(error?.reason == "suite \(suite.name) is the suite being migrated (\(DefaultsSuite.of(other).backend.identity))")
        #expect(suite.defaults.integer(forKey: key) == 14)
        #expect(try suite.defaults.migrationVersion() == 0)
    }

    // MARK: - A suite whose name cannot be learned

    @Test("without a name, the suite's own values are what no other domain explains")
    func ownValuesWithoutName() async {
        let suite = TestSuite()
        let (mine, registeredOnly, sameAsRegistered, hidden) = (uniqueKey("mine"), uniqueKey("registered"), uniqueKey("same"), uniqueKey("hidden"))
        suite.defaults.set(1, forKey: mine)
        suite.defaults.set(3, forKey: sameAsRegistered)
        suite.defaults.set(4, forKey: hidden)
        suite.defaults.register(defaults: [registeredOnly: 2, sameAsRegistered: 3])
        await ProcessWideState.withLaunchArguments([hidden: "5"], on: suite.defaults) {
            let own = PreferencesBackend.ownValues(of: suite.defaults)
            // A value equal to its registered default reads the same either way; one a
            // launch argument hides cannot be seen, and is left alone.
            #expect(Set(own.keys).intersection([mine, registeredOnly, sameAsRegistered, hidden]) == [mine])
            #expect(own["AppleLocale"] == nil)
        }
    }
}

@Suite("SuiteName")
struct SuiteNameTests {
    @Test("the package learns a suite object's name, and the app's own suite's")
    func names() {
        let suite = TestSuite()
        #expect(SuiteName.of(suite.defaults) == .some(suite.name))
        #expect(SuiteName.of(UserDefaults.standard) == .some(nil))
        #expect(!SuiteName.application.isEmpty)
    }
}
