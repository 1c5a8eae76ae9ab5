//
//  SuiteFileGuard.swift
//  DefaultsCoder
//
//  A guard against replacing an unreadable suite file, on platforms where Foundation
//  keeps the file itself (Linux, Windows): there a truncated, empty or garbage file
//  reads as an empty suite with no error, and the next write plus `synchronize()`
//  replaces it, so every value that was in it is gone. Writes through this package
//  refuse instead. The check itself must never crash, whatever the file holds.
//

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file behind a `UserDefaults` suite exists but cannot be read, so writing to the
/// suite would replace every value in it.
///
/// Thrown by the package's writes (`encode(_:forKey:)`, `set(_:for:)`,
/// `removeValue(for:)`) before anything is written, and by its throwing reads
/// (`decode(_:forKey:)`, `value(for:)`) when a key is absent because of it; the subscript
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

/// Recovering from an unreadable suite file.
extension UserDefaults {

    /// Moves the suite's unreadable file aside (to `NAME.unreadable-DATE.plist` next to
    /// it), so that writes work again, starting from an empty suite.
    ///
    /// - Returns: Where the file went, or `nil` when there is no unreadable file.
    /// - Throws: The file system's error when the file cannot be moved.
    @discardableResult
    public func moveUnreadableFileAside() throws -> URL? {
        guard let problem = unreadableFile() else { return nil }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "-")
        let name = problem.url.deletingPathExtension().lastPathComponent + ".unreadable-\(stamp).plist"
        let destination = problem.url.deletingLastPathComponent().appendingPathComponent(name)
        try FileManager.default.moveItem(at: problem.url, to: destination)
        suiteFile?.forget()
        return destination
    }

    /// Called when a key is absent: an unreadable file reads as an empty suite, so say
    /// that instead of "absent".
    func throwIfFileUnreadable() throws {
        if let problem = unreadableFile() { throw problem }
    }

    /// The problem with the suite's file, or `nil` when it parses, is absent, or cannot
    /// be located.
    func unreadableFile() -> UnreadableDefaultsFile? {
        guard let file = suiteFile else { return nil }
        // Under the write lock, so as not to read a file a package write is rewriting.
        return file.withWriteLock { file.problem() }
    }

    /// Where Foundation keeps this suite, on platforms where it writes the file itself.
    var suiteFileURL: URL? { suiteFile?.url }

    /// This suite's file, on platforms where Foundation writes it itself. Looked up once
    /// per `UserDefaults` object: reading the suite name through `Mirror` costs more than
    /// the rest of the guard.
    var suiteFile: SuiteFile? {
        #if canImport(Darwin)
        return nil
        #else
        let id = ObjectIdentifier(self)
        if let known = SuiteFile.locations.withLock({ $0[id] }), known.defaults.object === self {
            return known.file
        }
        let file = lookUpSuiteFileURL().map(SuiteFile.at)
        SuiteFile.locations.withLock { locations in
            if locations.count >= 64 { locations = locations.filter { $0.value.defaults.object != nil } }
            locations[id] = (WeakReference(self), file)
        }
        return file
        #endif
    }

    private func lookUpSuiteFileURL() -> URL? {
        // swift-corelibs-foundation keeps the suite name in a stored property of
        // `UserDefaults`; Mirror reads it, through any subclass. If that ever changes,
        // the guard quietly does nothing.
        var mirror: Mirror? = Mirror(reflecting: self)
        var suite: Any?
        while let current = mirror, suite == nil {
            suite = current.children.first(where: { $0.label == "suite" })?.value
            mirror = current.superclassMirror
        }
        guard let suite else { return nil }
        let name: String
        if let suiteName = suite as? String {
            name = suiteName
        } else if case .some(.none) = suite as? String? {
            name = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        } else {
            return nil
        }
        // A suite named by an absolute path lives at that path (measured on Linux).
        if name.hasPrefix("/") { return URL(fileURLWithPath: name + ".plist") }
        return SuiteFile.configDirectory.appendingPathComponent("\(name).plist")
    }
}

/// A suite's file as the guard knows it: one object per path, shared by every
/// `UserDefaults` object of the suite. It holds the lock package writes of the file take
/// turns on, and what the last check found, by the file's size and modification date, so
/// that a write costs a `stat` rather than a parse unless the file changed. (Failures are
/// remembered too: Foundation on Linux leaks a little on every failed parse.)
final class SuiteFile: @unchecked Sendable {
    // Unchecked: every stored property is a constant, and `NSRecursiveLock` is
    // thread-safe, but not marked `Sendable` in every SDK.
    /// `$XDG_CONFIG_HOME`, or `~/.config`: where Foundation on Linux keeps suites. Read
    /// once, as Foundation does; `ProcessInfo.environment` builds a dictionary per call,
    /// which was 9% of a write.
    static let configDirectory: URL = {
        let environment = ProcessInfo.processInfo.environment
        return environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
    }()

    /// Each `UserDefaults` object's file, by object: a weak reference tells a live object
    /// from a new one at a reused address.
    static let locations = Locked<[ObjectIdentifier: (defaults: WeakReference, file: SuiteFile?)]>([:])

    private static let files = Locked<[String: SuiteFile]>([:])

    /// The file at `url`: the same object for the same path, so that writes through any
    /// `UserDefaults` object of a suite take turns.
    static func at(_ url: URL) -> SuiteFile {
        let path = url.path
        return files.withLock { files in
            if let file = files[path] { return file }
            let file = SuiteFile(url: url, path: path)
            files[path] = file
            return file
        }
    }

    let url: URL
    /// `url.path`, kept: `URL.path` decodes the URL each time it is asked.
    let path: String
    /// Recursive: a failure handler or an observer that Foundation calls back during a
    /// write may write again on the same thread.
    private let lock = NSRecursiveLock()
    private let checked = Locked<(stamp: FileStamp, problem: UnreadableDefaultsFile?)?>(nil)

    private init(url: URL, path: String) {
        self.url = url
        self.path = path
    }

    private struct FileStamp: Equatable {
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    /// Runs `body` while no other thread's package write to this file runs.
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The file's size and date, following a symbolic link; `nil` when there is nothing
    /// there (also a link to nothing), so nothing to lose.
    private func stamp() -> FileStamp? {
        // One stat(2), which follows a symbolic link: a write costs this when the file
        // is unchanged, and a link to nothing fails it like a missing file.
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return FileStamp(size: Int64(info.st_size), seconds: Int(info.st_mtimespec.tv_sec), nanoseconds: Int(info.st_mtimespec.tv_nsec))
        #else
        return FileStamp(size: Int64(info.st_size), seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
        #endif
    }

    /// Why the file cannot be read, or `nil` when it parses or is absent.
    func problem() -> UnreadableDefaultsFile? {
        guard let stamp = stamp() else { return nil }
        if let known = checked.withLock({ $0 }), known.stamp == stamp { return known.problem }
        guard case .failure(let problem)? = read() else { return nil }
        return problem
    }

    /// The suite's values as the file holds them, checked as `problem()` checks them
    /// and read in the same pass: `[:]` when there is no file.
    /// - Throws: `UnreadableDefaultsFile` when the file does not parse.
    func contents() throws -> [String: Any] {
        try read()?.get() ?? [:]
    }

    /// Reads and parses the file, and remembers what it found; `nil` when there is no file.
    ///
    /// Foundation rewrites a suite's file in place (truncate, then write), and a
    /// `synchronize()` of any suite also writes every other suite with unsaved changes,
    /// on whatever thread calls it, outside this package's lock. A file caught in between
    /// reads as empty or cut short. So a file that does not parse is called unreadable
    /// only once it has stayed as it is (same size and date) through a pause of 32 ms;
    /// while it keeps changing it is read again, for up to two seconds. A damaged file
    /// stays damaged, and the answer is then remembered until the file changes.
    private func read() -> Result<[String: Any], UnreadableDefaultsFile>? {
        let deadline = Date().addingTimeInterval(2)
        var pause: UInt32 = 1_000
        while true {
            guard let found = stamp() else { return nil }
            let result = parse()
            guard case .failure(let problem) = result else {
                checked.withLock { $0 = (found, nil) }
                return result
            }
            usleep(pause)
            let settled = pause >= 32_000 && stamp() == found
            if settled || Date() > deadline {
                checked.withLock { $0 = (found, problem) }
                return result
            }
            pause = min(pause * 2, 64_000)
        }
    }

    private func parse() -> Result<[String: Any], UnreadableDefaultsFile> {
        let reason: String
        do {
            let data = try Data(contentsOf: url)
            if data.isEmpty {
                reason = "it is empty"
            } else if data.starts(with: "bplist".utf8), let problem = BinaryPropertyListCheck.problem(in: data) {
                // Checked before Foundation sees it: its parser crashes on some of these.
                reason = problem
            } else if let dictionary = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] {
                return .success(dictionary)
            } else {
                reason = "it does not hold a dictionary"
            }
        } catch {
            reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        }
        return .failure(UnreadableDefaultsFile(url: url, reason: reason))
    }

    /// Records the file as Foundation just wrote it, so the next write need not parse it.
    func written() {
        guard let stamp = stamp() else { return }
        checked.withLock { $0 = (stamp, nil) }
    }

    /// Forgets what the last check found: the file was moved away.
    func forget() {
        checked.withLock { $0 = nil }
    }
}

/// A reference that does not keep its object alive.
final class WeakReference: @unchecked Sendable {
    // Set once in init; the runtime makes reading a weak reference safe on any thread.
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
