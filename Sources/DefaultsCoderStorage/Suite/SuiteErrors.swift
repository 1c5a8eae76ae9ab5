// The errors of the suite layer: a suite file that cannot be read, and the file
// system's failures, each with the path.

import Foundation
import KeyValueCoders

/// The file behind a `UserDefaults` suite exists but cannot be read, so writing to the
/// suite would replace every value in it.
///
/// Thrown by the package's writes (`encode(_:forKey:)`, `write(_:to:)`, `reset(_:)`,
/// `migrate(_:versionKey:)`) before anything is written, and by its throwing reads
/// (`decode(_:forKey:)`, `read(_:)`) when a key is absent because of it; the subscript
/// and `@UserDefault` report it to `DefaultsFailure.handler`. The file is left as it is:
/// repair it, or move it aside with `UserDefaults.moveUnreadableFileAside()`.
///
/// Only where Foundation keeps the file itself (not on Apple platforms, where
/// `cfprefsd` owns it) and where the package can locate it.
public struct UnreadableDefaultsFile: Error, Sendable, Equatable, CustomStringConvertible {
    /// The suite's file.
    public let url: URL
    /// Why it cannot be read: `"it is empty"` or the parser's message.
    public let reason: String

    /// `The UserDefaults file /home/me/.config/app.plist cannot be read (it is empty); …`.
    public var description: String {
        "The UserDefaults file \(url.path) cannot be read (\(reason)); "
            + "writing would replace every value in it, so nothing was written. Repair it or move it aside."
    }
}

/// The file system refused what the suite layer needed to do with a suite's file: lock
/// it, write it, or move it. Nothing was changed.
///
/// ```swift
/// do {
///     try defaults.encode(settings, forKey: "settings")
/// } catch let error as DefaultsSuiteError {
///     print(error.path, error.reason)   // "/home/me/.config/app.plist", "Permission denied"
/// }
/// ```
///
/// Thrown on Linux, where the package writes suite files itself.
public struct DefaultsSuiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the suite layer was doing.
    public enum Operation: Sendable, Equatable {
        /// Taking the lock that package writes of the file take turns on, in every process
        /// (on Apple platforms, the lock migrations and `resetAll()` take).
        case lock
        /// Taking the lock of a migration or `resetAll()` on Apple platforms while another
        /// process held it through every try (50 tries, 100 ms apart): the package never
        /// waits for a lock without end, since a process stopped in a debugger, or an app
        /// suspended while holding it, would stall every other. Try again later.
        case lockBusy
        /// Making the lock file migrations and `resetAll()` take across processes on Apple
        /// platforms: they go on with this process's lock only. Reported once per suite to
        /// `DefaultsFailure.handler`, never thrown.
        case lockUnavailable
        /// Writing the file's new contents next to it and renaming them over it.
        case write
        /// Moving an unreadable file aside.
        case moveAside
        /// Writing one suite twice in one change: a migration that moves a key into the
        /// suite it migrates, under another spelling of its name.
        case sameSuiteTwice
        /// A change of several suites (a migration that moves a key into another suite)
        /// through an object whose suite name the package cannot learn: it could be the
        /// same suite, and the key would be written and then removed. Make the object
        /// with `UserDefaults.suite(named:)`.
        case unknownSuiteName
        /// Making the suite of an App Group (`UserDefaults.suite(appGroup:)`) whose
        /// identifier is in neither of Apple's forms, or of which Foundation makes no suite.
        case appGroup
        /// Watching the file for other processes' changes (Linux's inotify): observation
        /// goes on, polling the file instead. Reported to `DefaultsFailure.handler`, never
        /// thrown.
        case watch
    }

    /// What the suite layer was doing.
    public let operation: Operation
    /// The file it was doing it to; for `sameSuiteTwice` on Apple platforms, where a
    /// suite has no file of the package's, the suite's name.
    public let path: String
    /// Why it failed: the system's message.
    public let reason: String

    /// `Cannot write the UserDefaults file /home/me/.config/app.plist: Permission denied. Nothing was changed.`
    public var description: String {
        if operation == .unknownSuiteName {
            return "Cannot move keys between suites through \(path): \(reason). Nothing was changed."
        }
        if operation == .watch {
            return "Cannot watch the UserDefaults file \(path) for other processes' changes: \(reason). Its changes are polled for instead."
        }
        if operation == .appGroup {
            return "Cannot make the App Group suite \(path): \(reason)."
        }
        if operation == .lockUnavailable {
            return "Cannot make the lock file \(path) that migrations and resetAll() take across processes: \(reason). "
                + "They take this process's lock only."
        }
        let doing: String
        switch operation {
        case .lock, .lockBusy, .lockUnavailable: doing = "lock"
        case .write: doing = "write"
        case .moveAside: doing = "move aside"
        case .sameSuiteTwice: doing = "write twice in one change"
        case .unknownSuiteName: doing = "move keys between suites through"
        case .watch: doing = "watch"
        case .appGroup: doing = "make the App Group suite"
        }
        return "Cannot \(doing) the UserDefaults file \(path): \(reason). Nothing was changed."
    }

    /// Whether the error is only ever reported, never thrown: something poorer goes on.
    var isReportOnly: Bool { operation == .watch || operation == .lockUnavailable }

    /// The error for `operation` on `path`, from the C library's `errno`.
    static func system(_ operation: Operation, _ path: String, errno code: Int32) -> DefaultsSuiteError {
        DefaultsSuiteError(operation: operation, path: path, reason: String(cString: strerror(code)))
    }
}

/// A write or a reset landed, but a launch argument for the same key (`./app -volume 5`) takes
/// precedence over it in this process: Foundation reads the argument domain first, so
/// every read returns the argument's value until the app is launched without it.
///
/// Reported to `DefaultsFailure.handler` (operation `.write`) after the write; the
/// throwing API does not throw it, since the value was stored and the next launch
/// without the argument reads it.
///
/// ```swift
/// DefaultsFailure.handler = { failure in
///     if failure.error is LaunchArgumentOverride { print(failure) }
/// }
/// ```
public struct LaunchArgumentOverride: Error, Sendable, Equatable, CustomStringConvertible, DescribedFailure {
    /// The key written.
    public let key: String
    /// The launch argument's value, as Foundation keeps it (a string).
    public let argument: String
    /// Whether the write removed the key (a reset), rather than storing a value.
    public var isRemoval: Bool = false

    /// `"volume" was written, but the launch argument -volume 5 takes precedence in this
    /// process` (`was reset` for a removal).
    public var description: String {
        "\"\(key)\" was \(isRemoval ? "reset" : "written"), but the launch argument -\(key) \(argument) takes precedence in this process"
    }
}
