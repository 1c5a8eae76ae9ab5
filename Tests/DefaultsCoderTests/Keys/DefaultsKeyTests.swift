import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultsKey")
struct DefaultsKeyTests {

    @Test("a key carries its name, default and legacy format")
    func properties() {
        let key = DefaultsKey<Int>("count", default: 3, legacy: .json)
        #expect(key.name == "count")
        #expect(key.defaultValue == 3)
        #expect(key.legacyFormat == .json)
        #expect(DefaultsKeys.owner.defaultValue == nil)
        #expect(DefaultsKeys.owner.legacyFormat == nil)
    }

    /// Blobs as libraries stored them: the value, or the value wrapped in a one-element
    /// array (older encoders refused top-level scalars); and Data that is a blob of
    /// something else.
    static let bytes = Data([0xDE, 0xAD, 0xBE, 0xEF])
    static let blobs: [(format: String, blob: @Sendable () throws -> Data, expected: String)] = [
        ("propertyList", { try PropertyListEncoder().encode(bytes) }, "deadbeef"),
        ("propertyList", { try PropertyListEncoder().encode([bytes]) }, "deadbeef"),
        ("json", { try JSONEncoder().encode([bytes]) }, "deadbeef"),
        ("propertyList", { try PropertyListEncoder().encode(["other": 1]) }, "error"),
        ("propertyList", { try PropertyListEncoder().encode([bytes, bytes]) }, "error"),
        ("json", { try JSONEncoder().encode(["other": 1]) }, "error"),
        ("propertyList", { Data("not a blob".utf8) }, "6e6f74206120626c6f62"),
    ]

    @Test(
        "a Data key with a legacy format reads the blob's value or its one-element array; a blob of anything else is reported, never returned as its own bytes",
        arguments: blobs)
    func legacyDataBlob(format: String, blob: @Sendable () throws -> Data, expected: String) throws {
        let suite = TestSuite()
        let legacy: LegacyFormat = format == "json" ? .json : .propertyList
        let key = DefaultsKey<Data>(uniqueKey("blob"), default: Data(), legacy: legacy)
        suite.defaults.set(try blob(), forKey: key.name)
        let read = (try? suite.defaults.read(key)).map { $0.map { String(format: "%02x", $0) }.joined() } ?? "error"
        #expect(read == expected)
        if expected == "error" {
            ReportedFailures.install()
            #expect(suite.defaults[key] == Data())
            #expect(ReportedFailures.reports(for: key.name).count == 1)
        }
    }

    @Test("Data that would read back as something else under a legacy format is refused when written, and nothing is stored")
    func legacyDataWrite() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Data>(uniqueKey("blob"), default: Data(), legacy: .propertyList)
        for value in [try PropertyListEncoder().encode(["other": 1]), try PropertyListEncoder().encode([Self.bytes])] {
            #expect(throws: EncodingError.self) { try suite.defaults.write(value, to: key) }
            #expect(suite.defaults.object(forKey: key.name) == nil)
        }
        try suite.defaults.write(Self.bytes, to: key)
        #expect(try suite.defaults.read(key) == Self.bytes)
    }

    @Test("an optional key can be written as a string literal")
    func stringLiteral() {
        let key: DefaultsKey<String?> = "user.name"
        #expect(key.name == "user.name")
        #expect(key.defaultValue == nil)
    }

    @Test("registration values are the stored form of the default")
    func registrationValue() throws {
        #expect(try DefaultsKeys.theme.registrationValue() as? String == "system")
        #expect(try DefaultsKeys.level.registrationValue() as? Int == 1)
        #expect(try DefaultsKeys.owner.registrationValue() == nil)
        let account = DefaultsKey<User>("a", default: User(id: 1, name: "Ada"))
        let stored = try #require(try account.registrationValue() as? [String: Any])
        #expect(Tree(stored) == Tree(["id": 1, "name": "Ada"]))
    }

    @Test(
        "legacy formats decode the blobs other libraries stored",
        arguments: [
            (LegacyFormat.json, SendableAny(try! JSONEncoder().encode(User(id: 7, name: "Bo")))),
            (LegacyFormat.propertyList, SendableAny(try! PropertyListEncoder().encode(User(id: 7, name: "Bo")))),
            (LegacyFormat.jsonString, SendableAny(#"{"id":7,"name":"Bo"}"#)),
        ])
    func legacyFormats(format: LegacyFormat, blob: SendableAny) throws {
        #expect(try format.decode(User.self, from: blob.value) == User(id: 7, name: "Bo"))
    }

    @Test("a Data key with a legacy format reads the old blob's value, not the blob's bytes", arguments: [LegacyFormat.propertyList, .json])
    func legacyData(format: LegacyFormat) throws {
        let suite = TestSuite()
        let payload = Data([1, 2, 3, 250])
        let blob = format == .json ? try JSONEncoder().encode(payload) : try PropertyListEncoder().encode(payload)
        suite.defaults.set(blob, forKey: "token")
        let key = DefaultsKey<Data?>("token", legacy: format)
        #expect(try suite.defaults.read(key) == payload)
        let required = DefaultsKey<Data>("token", default: Data(), legacy: format)
        #expect(try suite.defaults.read(required) == payload)
        #expect(suite.defaults[required] == payload)
        try suite.defaults.migrate(DefaultsMigration(version: 1, .convert("token", from: Data.self, to: "converted", legacy: format) { $0 }))
        #expect(try suite.defaults.decode(Data.self, forKey: "converted") == payload)
    }

    @Test("a legacy format ignores values of another kind")
    func legacyOtherKind() throws {
        #expect(try LegacyFormat.json.decode(User.self, from: "text") == nil)
        #expect(try LegacyFormat.jsonString.decode(User.self, from: Data()) == nil)
        #expect(throws: DecodingError.self) { try LegacyFormat.jsonString.decode(User.self, from: "{") }
    }
}
