// The lock processes running this package take before a change that must not interleave
// with another's: `flock(2)` on a lock file, open only while held, so that no descriptor
// stays open between changes. The file backend takes it for every write, the preferences
// backend for migrations and `resetAll()` (`cfprefsd` orders single writes, not a whole
// change). A lock file removed while held is noticed, and on Linux the suite's own file is
// locked too, so that a clean-up of the directory cannot let two writers in.

import Foundation
import KeyValueCoders

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process's turn at a suite, and, within it, every process's.
final class CrossProcessLock: @unchecked Sendable {
    // Unchecked: `turn` guards `depth` and `held`; `held` is also reached by a
    // suspension's expiry on another thread, under its own lock; the rest are constants.
    // `NSRecursiveLock` is thread-safe but not marked `Sendable` in every SDK.

    /// How long a process waits for the lock while another holds it.
    enum Waiting: Sendable, Equatable {
        /// Until the other process lets go (the file backend's writes on Linux, where
        /// every write takes the lock and no process is suspended holding it).
        case blocking
        /// `tries` attempts `milliseconds` apart, never blocking in the kernel; then
        /// `DefaultsSuiteError` (`.lockBusy`).
        case bounded(tries: Int, milliseconds: Int)

        /// The preferences backend's: 50 tries, 100 ms apart (5 seconds).
        static let preferences = Waiting.bounded(tries: 50, milliseconds: 100)

        /// The waiting the changes on this task use instead of the lock's own; the tests
        /// shorten it.
        @TaskLocal static var overridden: Waiting?
    }

    /// The lock file.
    let path: String
    /// The file this lock also holds, whatever file is at this path as the lock is held
    /// (`follow()`): the suite's own file on Linux; `nil` where it is another's
    /// (`cfprefsd`'s, on Apple platforms).
    private let guarded: String?
    /// How long to wait for another process.
    private let waiting: Waiting
    /// What a lock file that cannot be made or opened does: `nil` throws; otherwise the
    /// change goes on holding this process's turn only, and this is called the first time.
    private let onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)?
    private let reportedUnavailable = Locked(false)
    /// Package changes take turns in this process; recursive, since a failure handler or
    /// an observer called during a change may change the suite again.
    private let turn = NSRecursiveLock()
    /// How deep the current thread holds `turn` across processes: a second `flock` of the
    /// file from this process would wait for the first forever.
    private var depth = 0
    /// The open lock file while the lock is held, the guarded file as locked, and the
    /// activity that keeps the app from being suspended meanwhile. Behind a lock of its
    /// own: the activity's expiry closes the files from another thread.
    private let held = Locked(Held())

    /// What `held` keeps.
    private struct Held {
        var descriptor: Int32 = -1
        var guarded: Int32 = -1
        var activity: (any SuspensionActivity)?
    }

    private init(path: String, guarding guarded: String?, waiting: Waiting, onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)?) {
        self.path = path
        self.guarded = guarded
        self.waiting = waiting
        self.onUnavailable = onUnavailable
    }

    /// Every lock of this process, by its file: suites whose lock files are one file
    /// (`x` and `./x`, or names that differ in case on a disk that folds case) share one
    /// lock object, so that a change of both takes the file once. Two objects would each
    /// open it, and the second `flock(2)` would wait for the first.
    private static let locks = Locked<[String: CrossProcessLock]>([:])

    /// The lock of the file at `path`, made with `guarded`, `waiting` and
    /// `onUnavailable` the first time; the same object for every spelling of that file.
    static func shared(
        path: String, guarding guarded: String? = nil, waiting: Waiting = .blocking,
        onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)? = nil
    ) -> CrossProcessLock {
        // A suite of unknown name has no file: a lock of its own, taken in this process only.
        guard !path.isEmpty else { return CrossProcessLock(path: path, guarding: nil, waiting: waiting, onUnavailable: onUnavailable) }
        let identity = fileIdentity(of: path)
        return locks.withLock { locks in
            if let lock = locks[identity] { return lock }
            let lock = CrossProcessLock(path: path, guarding: guarded, waiting: waiting, onUnavailable: onUnavailable)
            locks[identity] = lock
            return lock
        }
    }

    /// The file `path` names, whatever the spelling: its directory resolved (links, `.`
    /// and `..`), and the whole folded to lower case where the directory's volume does
    /// not tell case apart.
    private static func fileIdentity(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL
        let identity = directory.appendingPathComponent(url.lastPathComponent).path
        #if canImport(Darwin)
        let sensitive = (try? directory.resourceValues(forKeys: [.volumeSupportsCaseSensitiveNamesKey]))?.volumeSupportsCaseSensitiveNames
        if sensitive == false { return identity.lowercased() }
        #endif
        return identity
    }

    /// Runs `body` holding this process's turn and the lock file.
    ///
    /// - Throws: `DefaultsSuiteError`: `.lock` when the lock file cannot be made or
    ///   locked, or the app is being suspended; `.lockBusy` when another process held it
    ///   through every try; what `body` throws.
    package func withLock<R>(_ body: () throws -> R) throws -> R {
        try withProcessLock {
            if depth == 0 { try lockAcrossProcesses() }
            depth += 1
            defer {
                depth -= 1
                if depth == 0 { unlockAcrossProcesses() }
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

    /// Opens the lock file, takes the `flock(2)`, and checks that the file locked is
    /// still the one at the path: one removed or replaced meanwhile (a clean-up of the
    /// directory) is let go of and the path opened again, so that every process locks the
    /// same file. A missing directory is made, owner only, as Foundation makes the
    /// preferences' own.
    private func lockAcrossProcesses() throws {
        let activity = try SuspensionGuards.current.map { suspension in
            guard let activity = suspension.begin(onExpiry: { [held] in Self.letGo(held) }) else {
                throw DefaultsSuiteError(operation: .lock, path: path, reason: "the app is being suspended")
            }
            return activity
        }
        let descriptor: Int32
        do {
            descriptor = try openLocked()
        } catch let error as DefaultsSuiteError where error.operation == .lock && onUnavailable != nil {
            // Held in this process only; a lock file that cannot be made never stops a change.
            let isFirst = reportedUnavailable.withLock { reported in
                defer { reported = true }
                return !reported
            }
            if isFirst { onUnavailable?(DefaultsSuiteError(operation: .lockUnavailable, path: error.path, reason: error.reason)) }
            activity?.end()
            return
        } catch {
            activity?.end()
            throw error
        }
        held.withLock { $0 = Held(descriptor: descriptor, activity: activity) }
        try followHoldingDepth()
    }

    /// `follow()` as the lock is taken, before `depth` counts it: a failure lets go of
    /// what is held, since `withLock` then never reaches its `defer`.
    private func followHoldingDepth() throws {
        depth += 1
        defer { depth -= 1 }
        do {
            try follow()
        } catch {
            unlockAcrossProcesses()
            throw error
        }
    }

    private func unlockAcrossProcesses() {
        let activity = held.withLock { held in
            defer { held.activity = nil }
            return held.activity
        }
        Self.letGo(held)
        activity?.end()
    }

    /// Closes the lock file and the guarded file if they are open: closing lets go of
    /// their `flock(2)`. Called when a change ends, or when the activity that held off
    /// suspension expires first.
    private static func letGo(_ held: Locked<Held>) {
        held.withLock { held in
            if held.descriptor >= 0 { close(held.descriptor) }
            if held.guarded >= 0 { close(held.guarded) }
            (held.descriptor, held.guarded) = (-1, -1)
        }
    }

    // MARK: - The guarded file

    /// Locks the file now at the guarded path, unless it is the one already held: one
    /// that replaced it since (Foundation makes the file anew where it was removed) is
    /// locked before the change reads it, waiting as the lock file is waited for. Call it
    /// holding `withLock`, before each read a change is made from; a missing file, or
    /// anything but a regular file, is nothing to lock.
    ///
    /// - Throws: `DefaultsSuiteError` (`.lockBusy`) when another process holds the file
    ///   through every try.
    func follow() throws {
        guard let guarded, depth > 0 else { return }
        let waiting = Waiting.overridden ?? waiting
        var tries = 0
        while true {
            var there = stat()
            guard stat(guarded, &there) == 0, there.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return }
            let current = held.withLock { $0.guarded }
            if current >= 0 {
                var locked = stat()
                if fstat(current, &locked) == 0 && locked.st_ino == there.st_ino && locked.st_dev == there.st_dev { return }
            }
            // Not blocking at `open`: a pipe put at the path is not waited on.
            let descriptor = open(guarded, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { return }
            switch Self.lock(descriptor, waiting: waiting) {
            case 0 where Self.isStill(descriptor, at: guarded):
                adopt(descriptor)
                return
            case 0:
                close(descriptor)
            case EWOULDBLOCK:
                close(descriptor)
                try pause(after: &tries, waiting: waiting)
            default:
                // A file system that cannot lock it: the lock file alone orders changes.
                close(descriptor)
                return
            }
        }
    }

    /// Holds `descriptor`, an open file locked with `flock(2)`, as the guarded file from
    /// now on, and lets go of the one held before: a writer locks the new file it is
    /// about to rename over the old, so that a process opening the path after the rename
    /// waits as it would have for the old. Closes `descriptor` when the lock is not held.
    func adopt(_ descriptor: Int32) {
        guard depth > 0, guarded != nil else {
            close(descriptor)
            return
        }
        let old = held.withLock { held in
            let old = held.guarded
            held.guarded = descriptor
            return old
        }
        if old >= 0 { close(old) }
    }

    /// The lock file, open and locked.
    private func openLocked() throws -> Int32 {
        let waiting = Waiting.overridden ?? waiting
        var tries = 0
        while true {
            var descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            if descriptor < 0 && errno == ENOENT {
                try Self.makeDirectory(containing: path)
                descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            }
            guard descriptor >= 0 else { throw DefaultsSuiteError.system(.lock, path, errno: errno) }
            switch Self.lock(descriptor, waiting: waiting) {
            case 0:
                if Self.isStill(descriptor, at: path) { return descriptor }
                close(descriptor)
            case EWOULDBLOCK:
                close(descriptor)
                try pause(after: &tries, waiting: waiting)
            case let code:
                close(descriptor)
                throw DefaultsSuiteError.system(.lock, path, errno: code)
            }
        }
    }

    /// Counts a try that found the lock held, and waits before the next.
    ///
    /// - Throws: `DefaultsSuiteError` (`.lockBusy`) when `waiting` allows no more tries.
    private func pause(after tries: inout Int, waiting: Waiting) throws {
        tries += 1
        guard case .bounded(let most, let milliseconds) = waiting, tries < most else {
            throw DefaultsSuiteError(operation: .lockBusy, path: path, reason: Self.busyReason(waiting))
        }
        usleep(useconds_t(milliseconds * 1000))
    }

    /// Takes the lock on `descriptor`: 0, `EWOULDBLOCK` when another process holds it
    /// and `waiting` is bounded, or another `errno`.
    private static func lock(_ descriptor: Int32, waiting: Waiting) -> Int32 {
        let operation = waiting == .blocking ? LOCK_EX : LOCK_EX | LOCK_NB
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else { return errno == EAGAIN ? EWOULDBLOCK : errno }
        }
        return 0
    }

    /// Whether the open file `descriptor` is the file at `path` (device and inode).
    private static func isStill(_ descriptor: Int32, at path: String) -> Bool {
        var held = stat()
        var there = stat()
        return fstat(descriptor, &held) == 0 && stat(path, &there) == 0 && held.st_ino == there.st_ino && held.st_dev == there.st_dev
    }

    /// `another process held it through 50 tries, 100 ms apart`.
    private static func busyReason(_ waiting: Waiting) -> String {
        guard case .bounded(let tries, let milliseconds) = waiting else { return "another process holds it" }
        return "another process held it through \(tries) tries, \(milliseconds) ms apart"
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

/// What keeps the app from being suspended while it holds a lock file: iOS terminates an
/// app that is suspended holding a file lock in a shared container (exception code
/// `0xdead10cc`).
protocol SuspensionGuard: Sendable {
    /// Starts an activity that holds off suspension, and calls `onExpiry` (on another
    /// thread) if the system suspends the app anyway before it ends; `nil` when the app
    /// is being suspended already.
    func begin(onExpiry: @escaping @Sendable () -> Void) -> (any SuspensionActivity)?
}

/// An activity `SuspensionGuard.begin(onExpiry:)` started.
protocol SuspensionActivity: Sendable {
    /// Ends the activity; the app may be suspended from now on.
    func end()
}

/// The guard a lock file is held under.
enum SuspensionGuards {
    /// The guard of this platform, or the one a test set on this task: the iOS family's
    /// expiring background activity; none where apps are not suspended (macOS, Linux).
    static var current: (any SuspensionGuard)? {
        if let overridden { return overridden }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return ExpiringActivity()
        #else
        return nil
        #endif
    }

    /// The guard the lock uses on this task instead of the platform's.
    @TaskLocal static var overridden: (any SuspensionGuard)?
}

#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
/// `ProcessInfo.performExpiringActivity(withReason:using:)`: its block runs on a queue of
/// the system's and holds the activity until the lock is let go; the system calls it again
/// with `expired` set when it is about to suspend the app, or calls it once with `expired`
/// set when it cannot start the activity.
private struct ExpiringActivity: SuspensionGuard {
    private final class Activity: SuspensionActivity, @unchecked Sendable {
        // Unchecked: a semaphore, which is thread-safe.
        let done = DispatchSemaphore(value: 0)
        func end() { done.signal() }
    }

    func begin(onExpiry: @escaping @Sendable () -> Void) -> (any SuspensionActivity)? {
        let activity = Activity()
        let started = DispatchSemaphore(value: 0)
        let granted = Locked<Bool?>(nil)
        ProcessInfo.processInfo.performExpiringActivity(withReason: "DefaultsCoder: a migration holds a suite's lock file") { expired in
            let isFirstCall = granted.withLock { granted in
                defer { if granted == nil { granted = !expired } }
                return granted == nil
            }
            if isFirstCall {
                started.signal()
                if !expired { activity.done.wait() }
            } else if expired {
                onExpiry()
                activity.end()
            }
        }
        started.wait()
        return granted.withLock { $0 } == true ? activity : nil
    }
}
#endif
