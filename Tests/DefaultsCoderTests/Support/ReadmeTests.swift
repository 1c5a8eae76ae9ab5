// The README's examples, run as shown, with the outputs it shows (on a suite of the
// test's own where the README uses `.standard`). The SwiftUI view is compiled where
// SwiftUI exists.

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

@Suite("README examples")
struct ReadmeTests {

    @Test("The coder")
    func coder() throws {
        let encoder = KeyValueEncoder()
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(try encoder.encode(["fish", "chips"])) == .array([.string("fish"), .string("chips")]))

        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(User.self, from: ["id": 1, "name": "Herbert"]) == User(id: 1, name: "Herbert"))
        let error = caught(DecodingError.self) {
            try decoder.decode([User].self, from: [["id": 1, "name": "Herbert"], ["id": 2, "name": 5]])
        }
        guard case .typeMismatch? = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(debugDescription(of: error) == "Expected String at SELF[1].name, found Int")
    }

    @Test("The coder: PropertyListValue")
    func propertyListValue() throws {
        let user = User(id: 1, name: "Herbert")
        let settings: PropertyListValue = ["volume": 0.8, "tags": ["a", "b"], "beta": true]
        let tree: PropertyListValue = try KeyValueEncoder().encode(user)
        let back = try KeyValueDecoder().decode(User.self, from: tree)
        #expect(settings["tags"]?[0] == "a")
        #expect(tree == ["id": 1, "name": "Herbert"])
        #expect(back == user)
    }

    @Test("UserDefaults")
    func userDefaults() throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        try defaults.encode(User(id: 1, name: "Herbert"), forKey: "owner")
        #expect(Tree(defaults.dictionaryRepresentation()["owner"]) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(try defaults.decode(User.self, forKey: "owner") == User(id: 1, name: "Herbert"))
        try defaults.encode(User?.none, forKey: "owner")
        #expect(defaults.object(forKey: "owner") == nil)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("Typed keys, the wrapper and observation")
    func typedKeys() async throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        defaults[.launchCount] += 1
        #expect(defaults.object(forKey: "launchCount") as? Int == 1)
        let printed = Recorded<String>()
        let observation = defaults.observe(.theme, initial: false) { old, new in printed.append("theme: \(old) → \(new)") }
        defaults[.theme] = .dark
        #expect(await eventually { printed.values == ["theme: system → dark"] })
        withExtendedLifetime(observation) {}

        // The SwiftUI model, tested as the README shows.
        let model = ReadmeSettingsModel(store: defaults)
        let changed = Recorded<String>()
        withObservationTracking {
            _ = model.theme
        } onChange: {
            changed.append("theme changed")
        }
        defaults[.theme] = .light
        defaults[.theme] = .dark
        #expect(await eventually { changed.values == ["theme changed"] })
        #expect(model.showsPreview == true)
    }

    @Test("Tests and previews: a throwaway suite as the default suite")
    func throwawaySuite() throws {
        final class Settings {
            @UserDefault(.theme) var theme
        }
        let suite = TestSuite()
        suite.defaults[.theme] = .dark
        let scratch = ThrowawaySuite()
        UserDefaults.withDefaultSuite(scratch.defaults) {
            Settings().theme = .light
        }
        #expect(scratch.defaults[.theme] == .light)
        #expect(suite.defaults[.theme] == .dark)
    }

    @Test("Typed keys: a stored Layout that lacks a field added since takes it from the default")
    func layout() throws {
        let suite = TestSuite()
        suite.defaults.set(["columns": 3], forKey: "layout")
        #expect(suite.defaults[.readmeLayout] == ReadmeLayout(columns: 3, showsSidebar: true))
    }

    @Test("Migrations")
    func migrations() throws {
        let suite = TestSuite()
        let defaults = suite.defaults
        defaults.set(14, forKey: "font")
        defaults.set("ada", forKey: "username")
        try defaults.migrate(
            DefaultsMigration(version: 1, .rename("username", to: "account.name")),
            DefaultsMigration(version: 2, .convert("font", from: Int.self, to: .readmeFontSize) { Double($0) })
        )
        #expect(defaults[.readmeFontSize] == 14.0)
        #expect(defaults.string(forKey: "account.name") == "ada")
    }

    @Test("iCloud sync")
    func iCloudSync() async throws {
        let suite = TestSuite()
        let cloud = SimulatedCloud(delivery: .manual)
        #if canImport(Darwin)
        if #available(watchOS 9, *) {
            // Compiled as shown; not started, as the test runner has no entitlement.
            _ = CloudSync(.standard, store: UbiquitousKeyValueStore())
        }
        #endif
        let sync = CloudSync(suite.defaults, store: cloud.makeDevice(named: "phone"))
        try sync.add(.theme, .readmeFontSize)
        try sync.start()
        suite.defaults[.readmeFontSize] = 15
        await sync.waitUntilIdle()
        cloud.deliver()
        #expect(((cloud.serverValues()["appearance.fontSize"] as? [String: Any])?["value"] as? Double) == 15)
        #expect(cloud.serverValues()["app.appearance.theme"] == nil)
        sync.stop()
    }
}

extension DefaultsKeys {
    fileprivate static let readmeFontSize = DefaultsKey<Double>("appearance.fontSize", default: 13)
    fileprivate static let readmeLayout = DefaultsKey<ReadmeLayout>("layout", default: ReadmeLayout(), missingFields: .fromDefault)
}

/// The README's `Layout`.
struct ReadmeLayout: Codable, Sendable, Equatable {
    var columns = 2
    var showsSidebar = true
}

/// The README's `SettingsModel`, on a suite of the test's own instead of `.standard`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ReadmeSettingsModel {
    @ObservationIgnored @UserDefault(.theme) var theme
    @ObservationIgnored @UserDefault("showsPreview") var showsPreview = true

    init(store: UserDefaults) {
        _theme = UserDefault(.theme, store: store)
        _showsPreview = UserDefault(wrappedValue: true, "showsPreview", store: store)
    }
}

#if canImport(SwiftUI)
/// The README's settings view, compiled where SwiftUI exists.
struct ReadmeSettingsView: View {
    @DefaultsState(.theme) var theme
    @DefaultsState("showsPreview") var showsPreview = true

    var body: some View {
        Form {
            Toggle("Show previews", isOn: $showsPreview)
            Picker("Theme", selection: $theme) {
                ForEach([Theme.system, .light, .dark], id: \.self) { Text($0.rawValue).tag($0) }
            }
        }
    }
}
#endif
