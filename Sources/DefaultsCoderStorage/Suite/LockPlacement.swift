// Where the preferences backend keeps a suite's lock file, so that every process that
// can write the suite reaches the same file: an App Group's suite in the group's
// container, any other suite in the app's own container. Never in `Library/Preferences`,
// which belongs to Foundation: Apple's file-system guide keeps an app's own support
// files in `Library/Application Support` (on tvOS, only caches are kept, so there).

import Foundation
import KeyValueCoders

/// The directories the preferences backend's lock files go in.
struct LockPlacement: Sendable {
    /// Where the lock files of the app's own suites go.
    var ownDirectory: URL
    /// The container of the App Group `identifier` as this app sees it; `nil` when the
    /// app is not in the group.
    var groupContainer: @Sendable (_ identifier: String) -> URL?

    /// The lock file of the suite `name`: in its App Group's container when it is an
    /// App Group's suite (`AppGroup.identifier(ofSuite:)`) and the app is in the group,
    /// else in the app's own directory.
    func lockPath(forSuite name: String) -> String {
        let file = Self.fileName(forSuite: name)
        if let group = AppGroup.identifier(ofSuite: name), let container = groupContainer(group) {
            return container.appendingPathComponent(Self.supportFolder).appendingPathComponent(file).path
        }
        return ownDirectory.appendingPathComponent(file).path
    }

    /// `NAME.lock` in a folder of the package's; a `/` in the name (which Foundation takes
    /// as a path) is spelled `%2F`, so that the file stays in the folder.
    private static func fileName(forSuite name: String) -> String {
        "DefaultsCoder/" + name.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F") + ".lock"
    }

    /// The folder of a container's `Library` the package's files go in.
    private static var supportFolder: String {
        #if os(tvOS)
        "Library/Caches"
        #else
        "Library/Application Support"
        #endif
    }

    /// The placement of this platform, or the one a test set on this task; `nil` on
    /// Linux, where a suite's lock file sits beside the file Foundation keeps it in.
    static var current: LockPlacement? {
        if let overridden { return overridden }
        #if os(Linux)
        return nil
        #else
        let folder: FileManager.SearchPathDirectory
        #if os(tvOS)
        folder = .cachesDirectory
        #else
        folder = .applicationSupportDirectory
        #endif
        let own = FileManager.default.urls(for: folder, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return LockPlacement(ownDirectory: own) { FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: $0) }
        #endif
    }

    /// The placement the suites this task first uses take instead of the platform's; the
    /// tests set one to stand for an app, or its extension, on Linux.
    @TaskLocal static var overridden: LockPlacement?
}

/// App Group identifiers: which suites are an App Group's, shared by the app and its
/// extensions through the group's container.
enum AppGroup {
    /// The App Group of the suite `name`: the name itself when it is an App Group
    /// identifier (`isIdentifier(_:)`), else `nil`.
    static func identifier(ofSuite name: String) -> String? {
        isIdentifier(name) ? name : nil
    }

    /// Whether `name` is an App Group identifier: `group.` and a name (iOS, and macOS
    /// since macOS 15), or a Team ID (ten capital letters and digits), a dot and a name
    /// (macOS).
    static func isIdentifier(_ name: String) -> Bool {
        if name.hasPrefix("group."), name.count > 6 { return true }
        let parts = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty, parts[0].utf8.count == 10 else { return false }
        return parts[0].utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
