// The public way to make a suite whose name the package knows, without reading
// Foundation's own state.

import Foundation

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
