import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("UserDefaults+Keys")
struct UserDefaultsKeysTests {

    init() {
        ReportedFailures.install()
    }

    @Test("an absent key reads as its default; a stored one as its value")
    func defaultsAndValues() throws {
        let suite = TestSuite()
        #expect(suite.defaults[.launchCount] == 0)
        #expect(try suite.defaults.read(.launchCount) == 0)
        suite.defaults[.launchCount] += 2
        #expect(suite.defaults[.launchCount] == 2)
        try suite.defaults.write(5, to: .launchCount)
        #expect(try suite.defaults.read(.launchCount) == 5)
        #expect(suite.defaults.object(forKey: "launchCount") as? Int == 5)
    }

    @Test("structs are stored as dictionaries; nil removes an optional key")
    func optionalStruct() throws {
        let suite = TestSuite()
        #expect(suite.defaults[.owner] == nil)
        suite.defaults[.owner] = User(id: 1, name: "Ada")
        #expect(Tree(suite.defaults.object(forKey: "owner")) == Tree(["id": 1, "name": "Ada"]))
        #expect(suite.defaults[.owner] == User(id: 1, name: "Ada"))
        suite.defaults[.owner] = nil
        #expect(suite.defaults.object(forKey: "owner") == nil)
        try suite.defaults.write(User(id: 2, name: "Bo"), to: .owner)
        try suite.defaults.reset(.owner)
        #expect(try suite.defaults.read(.owner) == nil)
    }

    @Test("enums with a raw value are stored as that raw value")
    func rawValues() throws {
        let suite = TestSuite()
        suite.defaults[.theme] = .dark
        suite.defaults[.level] = .high
        #expect(suite.defaults.object(forKey: "app.appearance.theme") as? String == "dark")
        #expect(suite.defaults.object(forKey: "level") as? Int == 10)
        #expect(suite.defaults[.theme] == .dark)
        #expect(suite.defaults[.level] == .high)
    }

    @Test("a key with dots is one key, not a path")
    func dottedKey() throws {
        let suite = TestSuite()
        suite.defaults[.theme] = .light
        #expect(suite.defaults.dictionaryRepresentation()["app.appearance.theme"] as? String == "light")
        #expect(suite.defaults.object(forKey: "app") == nil)
    }

    @Test("a stored value that does not decode: the default, one report, and the value kept")
    func corruptValue() throws {
        let suite = TestSuite()
        let name = uniqueKey("corrupt")
        let key = DefaultsKey<User>(name, default: User(id: 0, name: "guest"))
        suite.defaults.set(["id": 1, "name": 42], forKey: name)

        #expect(suite.defaults[key] == User(id: 0, name: "guest"))

        let reports = ReportedFailures.reports(for: name)
        #expect(reports.count == 1)
        #expect(reports.first?.operation == .read)
        #expect(readablePath(reports.first?.codingPath ?? []) == "SELF.name")
        #expect(reports.first?.description == "DefaultsCoder: cannot read \"\(name)\", returning its default: Expected String at SELF.name, found Int")
        #expect(Tree(suite.defaults.object(forKey: name)) == Tree(["id": 1, "name": 42]))

        // The throwing API throws the same error instead.
        let error = caught(DecodingError.self) { try suite.defaults.read(key) }
        #expect(debugDescription(of: error) == "Expected String at SELF.name, found Int")
    }

    @Test("a value that cannot be stored: one report, and the stored value kept")
    func unstorableValue() throws {
        let suite = TestSuite()
        let name = uniqueKey("unstorable")
        let key = DefaultsKey<Decimal>(name, default: 1)
        suite.defaults[key] = 2.5
        suite.defaults[key] = .nan

        #expect(suite.defaults[key] == 2.5)
        let reports = ReportedFailures.reports(for: name)
        #expect(reports.map(\.operation) == [.write])
        #expect(throws: EncodingError.self) { try suite.defaults.write(Decimal.nan, to: key) }
    }

    @Test("registered defaults are visible to every reader, in the native form")
    func registration() throws {
        let suite = TestSuite()
        let count = DefaultsKey<Int>(uniqueKey("registered.count"), default: 0)
        let theme = DefaultsKey<Theme>(uniqueKey("registered.theme"), default: .system)
        let owner = DefaultsKey<User?>(uniqueKey("registered.owner"))
        let account = DefaultsKey<User>(uniqueKey("registered.account"), default: User(id: 3, name: "Cy"))
        try suite.defaults.register(count, theme, owner, account)
        let everything = suite.defaults.dictionaryRepresentation()
        #expect(everything[count.name] as? Int == 0)
        #expect(everything[theme.name] as? String == "system")
        #expect(everything[owner.name] == nil)
        #expect(Tree(everything[account.name]) == Tree(["id": 3, "name": "Cy"]))
        #expect(suite.defaults[account] == User(id: 3, name: "Cy"))
        #expect(UserDefaults.standard.object(forKey: theme.name) as? String == "system")
    }

    @Test(
        "legacy blobs are read through the fallback and rewritten natively on the next write",
        arguments: [
            (LegacyFormat.json, SendableAny(try! JSONEncoder().encode(User(id: 7, name: "Bo")))),
            (LegacyFormat.propertyList, SendableAny(try! PropertyListEncoder().encode(User(id: 7, name: "Bo")))),
            (LegacyFormat.jsonString, SendableAny(#"{"id":7,"name":"Bo"}"#)),
        ])
    func legacyBlobs(format: LegacyFormat, blob: SendableAny) throws {
        let suite = TestSuite()
        let key = DefaultsKey<User?>("account", legacy: format)
        suite.defaults.set(blob.value, forKey: "account")

        #expect(try suite.defaults.read(key) == User(id: 7, name: "Bo"))
        // Reading leaves the blob alone.
        #expect(Tree(suite.defaults.object(forKey: "account")) == Tree(blob.value))

        suite.defaults[key] = User(id: 7, name: "Bo Jr")
        #expect(Tree(suite.defaults.object(forKey: "account")) == Tree(["id": 7, "name": "Bo Jr"]))
        #expect(suite.defaults[key] == User(id: 7, name: "Bo Jr"))
    }

    @Test("without the opt-in, a blob is not read as a value")
    func legacyIsOptIn() throws {
        let suite = TestSuite()
        suite.defaults.set(try JSONEncoder().encode(User(id: 7, name: "Bo")), forKey: "account")
        let error = caught(DecodingError.self) { try suite.defaults.read(DefaultsKey<User?>("account")) }
        #expect(debugDescription(of: error) == "Expected Dictionary at SELF, found Data")
    }

    @Test("a blob of the legacy kind that does not decode throws the legacy decoder's error")
    func brokenBlob() throws {
        let suite = TestSuite()
        suite.defaults.set(Data("{".utf8), forKey: "account")
        let error = caught(DecodingError.self) { try suite.defaults.read(DefaultsKey<User?>("account", legacy: .json)) }
        guard case .dataCorrupted? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
    }
}

/// Keys whose value type shares its stored form with their legacy blob's kind.
@Suite("UserDefaults+Keys, legacy forms of a shared kind")
struct LegacySharedKindTests {
    @Test(
        "an old blob of the legacy kind reads as what it encodes, not as its own bytes or text",
        arguments: [LegacyFormat.json, .propertyList])
    func dataKeys(format: LegacyFormat) throws {
        let suite = TestSuite()
        let key = DefaultsKey<Data?>(uniqueKey("token"), legacy: format)
        let value = Data([1, 2, 3])
        let blob = format == .json ? try JSONEncoder().encode(value) : try PropertyListEncoder().encode(value)
        suite.defaults.set(blob, forKey: key.name)
        #expect(try suite.defaults.read(key) == value)
        // Written anew, natively, it reads back as it is.
        try suite.defaults.write(Data([9, 9]), to: key)
        #expect(suite.defaults.data(forKey: key.name) == Data([9, 9]))
        #expect(try suite.defaults.read(key) == Data([9, 9]))
        // A value whose own bytes are such a blob would read back as another value: refused.
        let error = caught(EncodingError.self) { try suite.defaults.write(blob, to: key) }
        #expect(debugDescription(of: error) == "Cannot store this value under a key declared with the legacy format .\(format): it would read back as a legacy blob at SELF")
        #expect(try suite.defaults.read(key) == Data([9, 9]))
    }

    @Test("an old JSON string reads as the string it encodes")
    func stringKey() throws {
        let suite = TestSuite()
        let key = DefaultsKey<String>(uniqueKey("name"), default: "", legacy: .jsonString)
        suite.defaults.set(#""Bo""#, forKey: key.name)
        #expect(try suite.defaults.read(key) == "Bo")
        try suite.defaults.write("Ada", to: key)
        #expect(try suite.defaults.read(key) == "Ada")
        #expect(throws: EncodingError.self) { try suite.defaults.write(#""Bo""#, to: key) }
        #expect(try suite.defaults.read(key) == "Ada")
        // A value that reads back the same through the blob is no loss: "5" is JSON for 5,
        // but a String key reads a JSON number as no string, and falls back.
        try suite.defaults.write("5", to: key)
        #expect(try suite.defaults.read(key) == "5")
    }
}

/// What a user of sindresorhus/Defaults reaches for.
@Suite("UserDefaults+Keys, for Defaults users")
struct DefaultsUserFeatureTests {
    @Test("keys are the same key when their names are")
    func keyIdentity() {
        let a = DefaultsKey<Int>("same", default: 1)
        let b = DefaultsKey<String>("same", default: "")
        let c = DefaultsKey<Int>("other", default: 1)
        #expect(a as DefaultsKeys == b as DefaultsKeys)
        #expect(a != c)
        #expect(Set<DefaultsKeys>([a, b, c]).count == 2)
    }

    @Test("a default worked out at each read where nothing is stored, and registered as it is then")
    func dynamicDefault() throws {
        let suite = TestSuite()
        let counter = Locked(0)
        let key = DefaultsKey<Int>(uniqueKey("dynamic")) {
            counter.withLock {
                $0 += 1
                return $0
            }
        }
        #expect(suite.defaults[key] == 1)
        #expect(suite.defaults[key] == 2)
        try suite.defaults.write(10, to: key)
        #expect(suite.defaults[key] == 10)
        try suite.defaults.reset(key)
        #expect(suite.defaults[key] == 3)
        let now = DefaultsKey<Date>(uniqueKey("now")) { Date() }
        let before = Date()
        #expect(suite.defaults[now] >= before)
    }

    @Test("an observer of a key with a dynamic default hears no change while nothing is stored")
    func dynamicDefaultObserved() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Date>(uniqueKey("now")) { Date() }
        let heard = Locked(0)
        let observation = suite.defaults.observe(key, initial: false) { _, _ in heard.withLock { $0 += 1 } }
        try suite.defaults.reset(key)
        try suite.defaults.encode(1, forKey: key.name + ".other")
        DefaultsSuite.of(suite.defaults).feed.recheck()
        #expect(heard.withLock { $0 } == 0)
        withExtendedLifetime(observation) {}
    }

    @Test("isDefaultValue: nothing stored, or the default stored")
    func isDefaultValue() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("level"), default: 3)
        #expect(suite.defaults.isDefaultValue(key))
        try suite.defaults.write(4, to: key)
        #expect(!suite.defaults.isDefaultValue(key))
        try suite.defaults.write(3, to: key)
        #expect(suite.defaults.isDefaultValue(key))
    }

    @Test("resetAll keeps the migration version record: the next launch runs no migration again")
    func resetAllKeepsVersion() throws {
        let suite = TestSuite()
        let doubling = [DefaultsMigration(version: 1, .convert("n", from: Int.self) { $0 * 2 })]
        suite.defaults.set(5, forKey: "n")
        try suite.defaults.migrate(doubling)
        #expect(suite.defaults.integer(forKey: "n") == 10)
        try suite.defaults.resetAll()
        try suite.defaults.encode(5, forKey: "n")
        #expect(try suite.defaults.migrate(doubling) == 1)
        #expect(suite.defaults.integer(forKey: "n") == 5)
        // Under a key of the app's own, too, once a migration recorded it.
        let versionKey = uniqueKey("app.version")
        try suite.defaults.migrate(doubling, versionKey: versionKey)
        try suite.defaults.resetAll()
        #expect(try suite.defaults.migrationVersion(versionKey: versionKey) == 1)
    }

    @Test("resetAll removes every stored key as one change, each observer hearing once")
    func resetAll() async throws {
        let suite = TestSuite()
        let keys = (0..<5).map { DefaultsKey<Int>(uniqueKey("all\($0)"), default: -1) }
        for (index, key) in keys.enumerated() { try suite.defaults.write(index, to: key) }
        suite.defaults.set("plain", forKey: "plain")
        let heard = Locked<[String]>([])
        let observations = keys.map { key in suite.defaults.observe(key, initial: false) { _, new in heard.withLock { $0.append("\(key.name)=\(new)") } } }
        try suite.defaults.resetAll()
        #expect(keys.allSatisfy { suite.defaults[$0] == -1 })
        #expect(suite.defaults.object(forKey: "plain") == nil)
        // Awaited: another test's announcement may find a change first and hand it over
        // from its own thread, a moment later (as in DefaultsObservationTests).
        #expect(await eventually { heard.withLock { $0.sorted() } == keys.map { "\($0.name)=-1" }.sorted() })
        #if !canImport(Darwin)
        #expect(!FileManager.default.fileExists(atPath: suite.fileURL.path))
        #endif
        withExtendedLifetime(observations) {}
    }

    @Test("writes inside withoutAnnouncing reach the store but no observer")
    func withoutAnnouncing() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("quiet"), default: 0)
        let heard = Locked<[Int]>([])
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.withLock { $0.append(new) } }
        UserDefaults.withoutAnnouncing { suite.defaults[key] = 5 }
        #expect(suite.defaults[key] == 5)
        #expect(heard.withLock { $0 } == [])
        // Another reason to look again (Foundation's change notification, another
        // test's write) finds no change: the observer took 5 as where it stands.
        ChangeFeed.recheckAll()
        #expect(heard.withLock { $0 } == [])
        suite.defaults[key] = 6
        #expect(await eventually { heard.withLock { $0 } == [6] })
        withExtendedLifetime(observation) {}
    }
}
