// The public way to make a suite whose name the package knows, without reading
// Foundation's own state.

import Foundation
import KeyValueCoders

/// Suites whose name the package knows.
extension UserDefaults {
    /// A `UserDefaults` object of the suite `suiteName`, whose name the package knows.
    ///
    /// ```swift
    /// let shared = UserDefaults.suite(named: "group.com.example.app")!
    /// try shared.migrate(migrations)   // once across the app and its extensions
    /// ```
    ///
    /// Make suites this way, or use `UserDefaults.standard`, so that every feature
    /// works: two objects of one suite share one change feed, other processes' changes
    /// are heard, a migration takes the suite's lock across processes, and a migration
    /// that moves a key into the suite it migrates is refused instead of losing the key.
    /// Foundation gives no public way to learn an object's suite name; for an object
    /// made with `UserDefaults(suiteName:)` the package reads the name Foundation keeps
    /// in it, and where that ever fails, the object is a suite of its own and what needs
    /// its name throws `DefaultsSuiteError` (`.unknownSuiteName`).
    ///
    /// - Parameter suiteName: The suite's domain name: an App Group's identifier for a
    ///   suite shared with extensions.
    /// - Returns: The object, or `nil` where Foundation's `init(suiteName:)` gives `nil`
    ///   (the global domain's name, or the app's own bundle identifier on Apple platforms).
    public static func suite(named suiteName: String) -> UserDefaults? {
        guard let defaults = UserDefaults(suiteName: suiteName) else { return nil }
        SuiteName.record(defaults, name: suiteName)
        return defaults
    }
}

/// Suites of App Groups.
extension UserDefaults {
    /// A `UserDefaults` object of the App Group `identifier`'s suite, shared by the app
    /// and its extensions, whose name the package knows.
    ///
    /// ```swift
    /// let shared = try UserDefaults.suite(appGroup: "group.com.example.app")
    /// try shared.migrate(migrations)   // once across the app and its extensions
    /// ```
    ///
    /// The package takes a suite for an App Group's when its name is an App Group
    /// identifier in either form Apple uses: `group.` and a name (iOS, and macOS), or a
    /// Team ID of ten capital letters and digits, a dot and a name (macOS). An App
    /// Group's suite keeps the lock file of migrations and `resetAll()` in the group's
    /// container, where the app and each extension find the same file; any other suite
    /// keeps it in the app's own container. This function is `suite(named:)` that refuses
    /// a name in neither form, so that a typo is caught at once rather than by a migration
    /// that runs twice.
    ///
    /// - Parameter identifier: The App Group's identifier, as the app's entitlements
    ///   name it (`com.apple.security.application-groups`).
    /// - Returns: The object.
    /// - Throws: `DefaultsSuiteError` (`.appGroup`) when `identifier` is in neither
    ///   form, or Foundation gives no suite for it.
    public static func suite(appGroup identifier: String) throws -> UserDefaults {
        guard AppGroup.isIdentifier(identifier) else {
            throw DefaultsSuiteError(
                operation: .appGroup, path: identifier,
                reason: "an App Group identifier is group.NAME, or TEAMID.NAME with a Team ID of ten capital letters and digits"
            )
        }
        guard let defaults = suite(named: identifier) else {
            throw DefaultsSuiteError(operation: .appGroup, path: identifier, reason: "Foundation makes no suite of this name")
        }
        return defaults
    }
}
