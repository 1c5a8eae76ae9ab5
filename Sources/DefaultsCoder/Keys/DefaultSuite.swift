// The suite the package uses when none is named — `@UserDefault` and `@DefaultsState`
// made without a `store:` — and a throwaway suite for tests and previews to make it, so
// that they never write the user's real settings. The default is a task-local value:
// parallel tests each see their own.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// The suite property wrappers use when none is named.
extension UserDefaults {
    /// The suite a property wrapper made without a `store:` keeps its value in: `.standard`,
    /// or within `withDefaultSuite(_:operation:)` on this task, the suite given there.
    ///
    /// A wrapper takes the default when it is made, and keeps it: a model made inside
    /// `withDefaultSuite` goes on using that suite when read outside it.
    public static var defaultSuite: UserDefaults {
        DefaultSuiteScope.current?.defaults ?? .standard
    }

    /// Runs `operation` with `suite` as `defaultSuite` on this task and the tasks it
    /// creates; other tasks and threads keep theirs.
    ///
    /// ```swift
    /// @Test func darkMode() throws {
    ///     let suite = ThrowawaySuite()
    ///     try UserDefaults.withDefaultSuite(suite.defaults) {
    ///         let model = SettingsModel()          // its @UserDefault properties use `suite`
    ///         model.theme = .dark
    ///         #expect(suite.defaults[.theme] == .dark)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - suite: The suite wrappers made without a `store:` use.
    ///   - operation: The work.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func withDefaultSuite<R>(_ suite: UserDefaults, operation: () throws -> R) rethrows -> R {
        try DefaultSuiteScope.$current.withValue(DefaultSuiteScope(suite), operation: operation)
    }

    /// Runs `operation` with `suite` as `defaultSuite` on this task and the tasks it
    /// creates; see `withDefaultSuite(_:operation:)`.
    ///
    /// - Parameters:
    ///   - suite: The suite wrappers made without a `store:` use.
    ///   - isolation: The actor `operation` runs on: the caller's.
    ///   - operation: The work.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func withDefaultSuite<R>(
        _ suite: UserDefaults, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> R
    ) async rethrows -> R {
        try await DefaultSuiteScope.$current.withValue(DefaultSuiteScope(suite), operation: operation, isolation: isolation)
    }
}

/// The suite `withDefaultSuite` set on this task.
private final class DefaultSuiteScope: @unchecked Sendable {
    // Unchecked: a constant; `UserDefaults` is thread-safe but not marked `Sendable` on
    // every platform.
    let defaults: UserDefaults
    init(_ defaults: UserDefaults) { self.defaults = defaults }

    @TaskLocal static var current: DefaultSuiteScope?
}

/// A suite of its own for a test or a preview, with a name no other suite has, emptied and
/// removed when the object is released: it never touches the user's real settings.
///
/// ```swift
/// #Preview {
///     let suite = ThrowawaySuite()
///     suite.defaults[.theme] = .dark
///     return UserDefaults.withDefaultSuite(suite.defaults) { SettingsView() }
/// }
/// ```
///
/// Keep the object while the suite is used: once it is released the suite is emptied,
/// and, on Linux, its file removed. Values written afterwards through `defaults` would
/// be written anew.
public final class ThrowawaySuite: @unchecked Sendable {
    // Unchecked: constants; `UserDefaults` is thread-safe but not marked `Sendable` on
    // every platform.

    /// The suite's name: `DefaultsCoder.throwaway.` a label and a UUID.
    public let name: String
    /// The suite, made with `UserDefaults.suite(named:)`.
    public let defaults: UserDefaults

    /// Makes a suite no other has.
    ///
    /// - Parameter label: Part of the name, to tell suites apart when debugging; the
    ///   calling function's name unless given.
    public init(_ label: String = #function) {
        let cleaned = label.filter { $0.isLetter || $0.isNumber }
        name = "DefaultsCoder.throwaway.\(cleaned).\(UUID().uuidString)"
        // A name that is neither the global domain's nor the app's own always makes one.
        defaults = UserDefaults.suite(named: name)!
    }

    deinit {
        defaults.removePersistentDomain(forName: name)
        #if os(Linux)
        // Foundation on Linux leaves the emptied file, and the package its lock file.
        DefaultsSuite.removeFiles(ofSuiteNamed: name)
        #endif
    }
}
