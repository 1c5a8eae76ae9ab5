// Saves an app's settings into a UserDefaults suite, shows the stored plist tree and
// reads it back. Run it twice: the second run finds the first run's values.

import DefaultsCoder
import Foundation

/// How often the app syncs: an enum with associated values.
enum SyncMode: Codable, Equatable {
    case off
    case every(minutes: Int)
    case onWiFi(ssid: String?)
}

/// A realistic settings model.
struct AppSettings: Codable, Equatable {
    enum Theme: String, Codable { case light, dark, system }

    struct Account: Codable, Equatable {
        var name: String
        var email: String
        var avatar: URL?
    }

    var theme: Theme
    var account: Account
    var homepage: URL
    var lastLaunch: Date
    var launchCount: Int
    var nickname: String?
    var recentSearches: [String]
    var fontSizes: [String: Double]
    var sync: SyncMode
}

/// The demo's typed keys: a counter, and an enum stored as its raw value under a
/// dotted name.
extension DefaultsKeys {
    static let runs = DefaultsKey<Int>("runs", default: 0)
    static let lastTheme = DefaultsKey<AppSettings.Theme>("appearance.lastTheme", default: .system)
}

@main
struct Demo {
    static let suiteName = "defaults-coder-demo"

    static func main() throws {
        try runDemo()
    }

    static func runDemo() throws {
        guard let defaults = UserDefaults.suite(named: suiteName) else {
            print("Cannot open the suite \(suiteName)")
            exit(1)
        }

        var settings: AppSettings
        if let previous = try defaults.decode(AppSettings.self, forKey: "settings") {
            print("Found settings from an earlier run: launch #\(previous.launchCount), last at \(previous.lastLaunch.formatted(.iso8601))")
            settings = previous
            settings.launchCount += 1
            settings.lastLaunch = now()
            settings.recentSearches.insert("search #\(settings.launchCount)", at: 0)
            settings.recentSearches = Array(settings.recentSearches.prefix(3))
        } else {
            print("No settings stored yet: this is the first run.")
            settings = AppSettings(
                theme: .dark,
                account: .init(name: "Herbert", email: "herbert@fish.com", avatar: URL(string: "https://fish.com/herbert.png?size=64")),
                homepage: URL(string: "https://fish.com/chips?x=1")!,
                lastLaunch: now(),
                launchCount: 1,
                nickname: nil,
                recentSearches: ["cod", "haddock"],
                fontSizes: ["body": 13.5, "title": 22],
                sync: .every(minutes: 15)
            )
        }

        try defaults.encode(settings, forKey: "settings")

        print("\nStored under \"settings\" in the suite \(suiteName):")
        print(describePlist(defaults.object(forKey: "settings") as Any))

        let decoded = try defaults.decode(AppSettings.self, forKey: "settings")
        print("\nDecoded back: \(decoded == settings ? "matches what was saved" : "DIFFERS from what was saved")")
        print("launchCount = \(settings.launchCount) (run again to see it grow)")

        try typedKeys(defaults, theme: settings.theme)
    }

    /// Typed keys, the property wrapper and observation, on the same suite.
    static func typedKeys(_ defaults: UserDefaults, theme: AppSettings.Theme) throws {
        print("\nTyped keys:")
        @UserDefault(.runs, store: defaults) var runs
        let observation = $runs.observe(initial: false) { old, new in
            print("Observed runs: \(old) → \(new)")
        }
        runs += 1
        defaults[.lastTheme] = theme
        print("appearance.lastTheme is stored as \(describePlist(defaults.object(forKey: "appearance.lastTheme") as Any))")
        print("runs = \(try defaults.read(.runs))")
        observation.cancel()
    }
}

/// The time to whole seconds, so that it is stored as a plist `<date>` on every
/// platform (on Linux a date with a fraction is stored as seconds; see README).
func now() -> Date {
    Date(timeIntervalSinceReferenceDate: Date().timeIntervalSinceReferenceDate.rounded(.down))
}

/// A stored plist value as `defaults read` shows one: dictionaries with sorted keys,
/// strings quoted, dates and data in their plist notation.
func describePlist(_ value: Any, indent: String = "") -> String {
    let inner = indent + "    "
    // Foundation on Linux hands plist values back wrapped in Optional.
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let wrapped = mirror.children.first?.value else { return "(nil)" }
        return describePlist(wrapped, indent: indent)
    }
    switch value {
    case let dictionary as [String: Any]:
        if dictionary.isEmpty { return "{}" }
        let lines = dictionary.keys.sorted().map { key in
            "\(inner)\(key) = \(describePlist(dictionary[key]!, indent: inner));"
        }
        return "{\n" + lines.joined(separator: "\n") + "\n\(indent)}"
    case let array as [Any]:
        if array.isEmpty { return "()" }
        let lines = array.map { inner + describePlist($0, indent: inner) }
        return "(\n" + lines.joined(separator: ",\n") + "\n\(indent))"
    case let string as String:
        return "\"\(string)\""
    case let date as Date:
        return "<date \(date.formatted(.iso8601))>"
    case let data as Data:
        return "<data \(data.map { String(format: "%02x", $0) }.joined())>"
    default:
        return "\(value)"
    }
}
