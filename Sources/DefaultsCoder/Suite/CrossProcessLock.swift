// A lock that every process running this package takes before it changes a suite: an
// exclusive `flock(2)` on a lock file, held while the thread holds this process's turn.
// The file backend locks `NAME.plist.lock` beside the suite's file; the preferences
// backend locks a file beside the preferences (in the App Group container for a group
// suite), so that a migration runs once across an app and its extensions. `flock` is
// POSIX on every platform the package builds for.

import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process's turn at a suite, and, within it, every process's.
final class CrossProcessLock: @unchecked Sendable {
    // Unchecked: `turn` guards `depth` and `descriptor`; `path` is a constant.
    // `NSRecursiveLock` is thread-safe but not marked `Sendable` in every SDK.

    /// The lock file.
    let path: String
    /// Package changes take turns in this process; recursive, since a failure handler or
    /// an observer called during a change may change the suite again.
    private let turn = NSRecursiveLock()
    /// How deep the current thread holds `turn`, and the lock file it holds while it
    /// does: a second `flock` of the file from this process would wait for the first
    /// forever.
    private var depth = 0
    private var descriptor: Int32 = -1

    init(path: String) {
        self.path = path
    }

    /// Runs `body` holding this process's turn and the lock file.
    ///
    /// - Throws: `DefaultsSuiteError` (`.lock`) when the lock file cannot be made or
    ///   locked; what `body` throws.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        try withProcessLock {
            if depth == 0 { try lockAcrossProcesses() }
            depth += 1
            defer {
                depth -= 1
                if depth == 0 { flock(descriptor, LOCK_UN) }
            }
            return try body()
        }
    }

    /// Runs `body` holding this process's turn only.
    func withProcessLock<R>(_ body: () throws -> R) rethrows -> R {
        turn.lock()
        defer { turn.unlock() }
        return try body()
    }

    /// Takes the `flock(2)`. The lock file stays open while the object lives (one per
    /// suite, as long as the process), so that a change costs no `open(2)` for it.
    ///
    /// The lock is the file at the lock's path: one removed or replaced since it was
    /// opened (a clean-up of `~/.config`) is let go of and the path opened again, so that
    /// every process locks the same file. A missing directory is made, owner only, as
    /// Foundation makes the preferences' own.
    private func lockAcrossProcesses() throws {
        while true {
            if descriptor < 0 {
                var opened = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
                if opened < 0 && errno == ENOENT {
                    try Self.makeDirectory(containing: path)
                    opened = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
                }
                guard opened >= 0 else { throw DefaultsSuiteError.system(.lock, path, errno: errno) }
                descriptor = opened
            }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    let code = errno
                    close(descriptor)
                    descriptor = -1
                    throw DefaultsSuiteError.system(.lock, path, errno: code)
                }
            }
            var held = stat()
            var there = stat()
            if fstat(descriptor, &held) == 0 && stat(path, &there) == 0 && held.st_ino == there.st_ino && held.st_dev == there.st_dev {
                return
            }
            close(descriptor)
            descriptor = -1
        }
    }

    /// The directory of the file at `path`, made owner only (as Foundation makes the
    /// preferences' own) when it is missing.
    ///
    /// - Throws: `DefaultsSuiteError` (`.lock`) naming the directory.
    static func makeDirectory(containing path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DefaultsSuiteError(operation: .lock, path: directory, reason: (error as NSError).localizedDescription)
        }
    }
}
