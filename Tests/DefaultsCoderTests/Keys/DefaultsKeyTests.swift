import Foundation
import Testing

@testable import DefaultsCoder

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
