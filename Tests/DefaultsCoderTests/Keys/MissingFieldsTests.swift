// Settings that survive a model change: a struct stored by version 1 of an app, read by
// version 2 with fields added, on the backend the run chose.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("MissingFields")
struct MissingFieldsTests {
    /// Version 1 of the settings.
    struct SettingsV1: Codable, Equatable {
        var volume: Int
        var name: String
        var window: WindowV1
        var nickname: String?
    }

    struct WindowV1: Codable, Equatable {
        var width: Int
    }

    /// Version 2: two fields added (one inside a nested struct), and an optional one.
    struct SettingsV2: Codable, Equatable {
        var volume: Int
        var name: String
        var window: WindowV2
        var nickname: String?
        var theme: String
        var badge: String?
    }

    struct WindowV2: Codable, Equatable {
        var width: Int
        var height: Int
    }

    private static let defaultV2 = SettingsV2(
        volume: 5, name: "", window: WindowV2(width: 800, height: 600), nickname: "Bob", theme: "system", badge: "new")

    private func keys(_ name: String) -> (v1: DefaultsKey<SettingsV1>, v2: DefaultsKey<SettingsV2>, plain: DefaultsKey<SettingsV2>) {
        (
            DefaultsKey(name, default: SettingsV1(volume: 0, name: "", window: WindowV1(width: 0), nickname: nil)),
            DefaultsKey(name, default: Self.defaultV2, missingFields: .fromDefault),
            DefaultsKey(name, default: Self.defaultV2)
        )
    }

    @Test("a struct stored by version 1 and read by version 2 keeps every stored field; the fields added come from the default")
    func fieldsAdded() throws {
        let suite = TestSuite()
        let (v1, v2, _) = keys(uniqueKey("settings"))
        try suite.defaults.write(SettingsV1(volume: 9, name: "Ada", window: WindowV1(width: 1024), nickname: nil), to: v1)
        let stored = suite.defaults.object(forKey: v2.name) as? [String: Any]
        let read = try suite.defaults.read(v2)
        // The optional field the user left nil stays nil; the one the model added is nil
        // too, as absent; the required ones come from the default.
        #expect(read == SettingsV2(volume: 9, name: "Ada", window: WindowV2(width: 1024, height: 600), nickname: nil, theme: "system", badge: nil))
        #expect(suite.defaults[v2] == read)
        // The read wrote nothing: the stored value is version 1's until the app writes.
        #expect(sameStoredValue(suite.defaults.object(forKey: v2.name), stored))
        try suite.defaults.write(read, to: v2)
        #expect((suite.defaults.object(forKey: v2.name) as? [String: Any])?["theme"] as? String == "system")
    }

    @Test("without the opt-in, a struct that lacks fields reads as the default and the failure is reported, as before")
    func withoutOptIn() throws {
        let suite = TestSuite()
        let (v1, _, plain) = keys(uniqueKey("settings"))
        ReportedFailures.install()
        try suite.defaults.write(SettingsV1(volume: 9, name: "Ada", window: WindowV1(width: 1024), nickname: nil), to: v1)
        #expect(suite.defaults[plain] == Self.defaultV2)
        let reports = ReportedFailures.reports(for: plain.name)
        #expect(reports.count == 1)
        #expect(readablePath(of: reports.first?.error) == "SELF.window.height")
        #expect(debugDescription(of: reports.first?.error) == "Dictionary does not contain key SELF.window.height")
    }

    @Test("what filling cannot mend still fails: a field stored with another type")
    func changedType() throws {
        let suite = TestSuite()
        let (_, v2, _) = keys(uniqueKey("settings"))
        suite.defaults.set(["volume": "loud", "name": "Ada", "window": ["width": 1]], forKey: v2.name)
        let error = caught(DecodingError.self) { _ = try suite.defaults.read(v2) }
        #expect(debugDescription(of: error) == "Expected BinaryInteger at SELF.volume, found String")
    }
}
