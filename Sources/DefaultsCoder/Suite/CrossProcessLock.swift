// A lock that processes running this package take before a change that must not
// interleave with another process's: an exclusive `flock(2)` on a directory, held while
// the thread holds this process's turn. The file backend takes it for every write (it
// writes the suite's file itself); the preferences backend only for migrations and
// `resetAll()`, where `cfprefsd` orders single writes but nothing orders a whole change.
// The directory is open only while the lock is held, so that no descriptor stays open
// between changes: a removed directory is then gone for good, and a process with many
// suites holds nothing per suite.

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
    // Unchecked: `turn` guards `depth` and `entered`; the rest are constants.
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

    /// The suite's lock, by name: a path in the directory that is locked.
    let path: String
    /// How long to wait for another process.
    private let waiting: Waiting
    /// What a directory that cannot be made or opened does: `nil` throws; otherwise the
    /// change goes on holding this process's turn only, and this is called the first time.
    private let onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)?
    private let reportedUnavailable = Locked(false)
    /// Package changes take turns in this process; recursive, since a failure handler or
    /// an observer called during a change may change the suite again.
    private let turn = NSRecursiveLock()
    /// How deep the current thread holds `turn` across processes.
    private var depth = 0
    /// Whether the outermost change holds `directory` (not when it could not be had).
    private var entered = false
    /// What is locked across processes; `nil` for a suite of unknown name.
    private let directory: DirectoryLock?

    private init(path: String, identity: String?, waiting: Waiting, onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)?) {
        self.path = path
        self.waiting = waiting
        self.onUnavailable = onUnavailable
        directory = identity.map { DirectoryLock.of(URL(fileURLWithPath: $0).deletingLastPathComponent().path) }
    }

    /// Every lock of this process, by its name: suites whose lock names are one file
    /// (`x` and `./x`, or names that differ in case on a disk that folds case) share one
    /// lock object, so that a change of both takes this process's turn once.
    private static let locks = Locked<[String: CrossProcessLock]>([:])

    /// The lock named by the path `path`, made with `waiting` and `onUnavailable` the
    /// first time; the same object for every spelling of that path. Across processes it
    /// locks the path's directory.
    static func shared(
        path: String, waiting: Waiting = .blocking, onUnavailable: (@Sendable (DefaultsSuiteError) -> Void)? = nil
    ) -> CrossProcessLock {
        // A suite of unknown name has no file: a lock of its own, taken in this process only.
        guard !path.isEmpty else { return CrossProcessLock(path: path, identity: nil, waiting: waiting, onUnavailable: onUnavailable) }
        let identity = fileIdentity(of: path)
        return locks.withLock { locks in
            if let lock = locks[identity] { return lock }
            let lock = CrossProcessLock(path: path, identity: identity, waiting: waiting, onUnavailable: onUnavailable)
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

    /// Runs `body` holding this process's turn and the directory's lock.
    ///
    /// - Throws: `DefaultsSuiteError`: `.lock` when the directory cannot be made or
    ///   locked, or the app is being suspended; `.lockBusy` when another process held it
    ///   through every try; what `body` throws.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        try withProcessLock {
            if depth == 0 { entered = try enterDirectory() }
            depth += 1
            defer {
                depth -= 1
                if depth == 0, entered {
                    directory?.leave()
                    entered = false
                }
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

    /// Takes the directory's lock; `false` when there is none to take, or it cannot be
    /// had and the suite goes on with this process's turn (`onUnavailable`).
    private func enterDirectory() throws -> Bool {
        guard let directory else { return false }
        do {
            try directory.enter(waiting: Waiting.overridden ?? waiting)
            return true
        } catch let unavailable as DirectoryLock.Unavailable {
            guard let onUnavailable else { throw unavailable.error }
            let isFirst = reportedUnavailable.withLock { reported in
                defer { reported = true }
                return !reported
            }
            if isFirst { onUnavailable(DefaultsSuiteError(operation: .lockUnavailable, path: unavailable.error.path, reason: unavailable.error.reason)) }
            return false
        }
    }

    /// The directory `path`, made owner only (as Foundation makes the preferences' own)
    /// when it is missing.
    ///
    /// - Throws: `DefaultsSuiteError` (`.lock`) naming the directory.
    static func makeDirectory(at directory: String) throws {
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DefaultsSuiteError(operation: .lock, path: directory, reason: (error as NSError).localizedDescription)
        }
    }

    /// The directory of the file at `path`, made as `makeDirectory(at:)` makes it.
    static func makeDirectory(containing path: String) throws {
        try makeDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}

/// The exclusive `flock(2)` on a directory that a change of any suite whose lock is named
/// in it holds across processes, one object per directory in the process. A directory,
/// not a lock file: a file can be removed while a process holds it (a clean-up of the
/// folder), and the next process would make a new one and lock that, so that two hold
/// "the" lock; a suite's directory goes only with the suite's own file. Threads of this
/// process share the hold: each suite's own turn orders them, and a change of two
/// suites of one directory takes it once. The directory is open only while held.
final class DirectoryLock: @unchecked Sendable {
    // Unchecked: `holders` is behind `entering`; `held` behind its own lock, since a
    // suspension's expiry lets go from another thread; the rest is constant.
    let path: String
    /// Taken to join or leave the hold; held while the first joiner waits for the lock.
    private let entering = NSLock()
    /// The threads of this process inside a change that holds the lock.
    private var holders = 0
    /// Whether the file `standIn` in the directory is locked instead of the directory,
    /// which could not be: behind `entering`.
    private var usesStandIn = false

    /// The file locked where a directory cannot be: an NFS mount takes `flock(2)` for a
    /// lock of the whole file, which needs it open for writing, and a directory cannot
    /// be. Weaker, as a clean-up can remove the file while it is held; made only there.
    static let standIn = ".defaultscoder.lock"

    /// Whether this task's locks take directories for unlockable (an NFS mount), for the
    /// tests.
    @TaskLocal static var refusesDirectories = false
    /// The open directory while the lock is held, and the activity that keeps the app
    /// from being suspended meanwhile.
    private let held = Locked<(descriptor: Int32, activity: (any SuspensionActivity)?)>((-1, nil))

    /// A directory that cannot be made or opened: a suite may go on without it.
    struct Unavailable: Error {
        let error: DefaultsSuiteError
    }

    private init(path: String) {
        self.path = path
    }

    private static let all = Locked<[String: DirectoryLock]>([:])

    /// The lock of the directory `path` (resolved: one object per directory).
    static func of(_ path: String) -> DirectoryLock {
        all.withLock { all in
            if let lock = all[path] { return lock }
            let lock = DirectoryLock(path: path)
            all[path] = lock
            return lock
        }
    }

    /// Joins this process's hold, taking the lock when no thread holds it: inside an
    /// activity that holds off suspension, and checking that the directory locked is
    /// still the one at the path (one removed and made again meanwhile is let go of, and
    /// the path opened again).
    ///
    /// - Throws: `DefaultsSuiteError` (`.lock` when the app is being suspended or the lock
    ///   cannot be taken, `.lockBusy`), or `Unavailable` when the directory cannot be
    ///   made or opened.
    func enter(waiting: CrossProcessLock.Waiting) throws {
        entering.lock()
        defer { entering.unlock() }
        if holders > 0 {
            holders += 1
            return
        }
        let activity = try SuspensionGuards.current.map { suspension in
            guard let activity = suspension.begin(onExpiry: { [held] in Self.letGo(held) }) else {
                throw DefaultsSuiteError(operation: .lock, path: path, reason: "the app is being suspended")
            }
            return activity
        }
        do {
            let descriptor = try openLocked(waiting: waiting)
            held.withLock { $0 = (descriptor, activity) }
            holders = 1
        } catch {
            activity?.end()
            throw error
        }
    }

    /// Leaves this process's hold; the last to leave lets go of the lock.
    func leave() {
        entering.lock()
        defer { entering.unlock() }
        holders -= 1
        guard holders == 0 else { return }
        let activity = held.withLock { held in
            defer { held.activity = nil }
            return held.activity
        }
        Self.letGo(held)
        activity?.end()
    }

    /// Closes the directory if it is open: closing lets go of the `flock(2)`. Called when
    /// the last change ends, or when the activity that held off suspension expires first.
    private static func letGo(_ held: Locked<(descriptor: Int32, activity: (any SuspensionActivity)?)>) {
        held.withLock { held in
            if held.descriptor >= 0 { close(held.descriptor) }
            held.descriptor = -1
        }
    }

    /// The directory, open and locked.
    private func openLocked(waiting: CrossProcessLock.Waiting) throws -> Int32 {
        var tries = 0
        while true {
            let target = usesStandIn ? path + "/" + Self.standIn : path
            var descriptor = Self.openTarget(target, isFile: usesStandIn)
            if descriptor < 0 && errno == ENOENT {
                do { try CrossProcessLock.makeDirectory(at: path) } catch let error as DefaultsSuiteError { throw Unavailable(error: error) }
                descriptor = Self.openTarget(target, isFile: usesStandIn)
            }
            guard descriptor >= 0 else {
                let code = errno
                // Out of descriptors is this process's state, not the directory's: thrown.
                let error = DefaultsSuiteError.system(.lock, path, errno: code)
                if code == EMFILE || code == ENFILE || code == ENOMEM { throw error }
                throw Unavailable(error: error)
            }
            switch Self.refusesDirectories && !usesStandIn ? EBADF : Self.lock(descriptor, waiting: waiting) {
            case 0:
                if Self.isStill(descriptor, at: target) { return descriptor }
                close(descriptor)
            case let code where !usesStandIn && [EBADF, ENOLCK, EOPNOTSUPP, EINVAL].contains(code):
                // The directory cannot be locked here: its stand-in file is, from now on.
                close(descriptor)
                usesStandIn = true
            case EWOULDBLOCK:
                close(descriptor)
                tries += 1
                guard case .bounded(let most, let milliseconds) = waiting, tries < most else {
                    throw DefaultsSuiteError(operation: .lockBusy, path: path, reason: Self.busyReason(waiting))
                }
                usleep(useconds_t(milliseconds * 1000))
            case let code:
                close(descriptor)
                throw DefaultsSuiteError.system(.lock, path, errno: code)
            }
        }
    }

    /// `path` opened to be locked: a directory, read only, or the stand-in file, made
    /// when missing.
    private static func openTarget(_ path: String, isFile: Bool) -> Int32 {
        isFile ? open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600) : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    /// Takes the lock on `descriptor`: 0, `EWOULDBLOCK` when another process holds it
    /// and `waiting` is bounded, or another `errno`.
    private static func lock(_ descriptor: Int32, waiting: CrossProcessLock.Waiting) -> Int32 {
        let operation = waiting == .blocking ? LOCK_EX : LOCK_EX | LOCK_NB
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else { return errno == EAGAIN ? EWOULDBLOCK : errno }
        }
        return 0
    }

    /// Whether the open `descriptor` is the directory or file at `path` (device and inode).
    private static func isStill(_ descriptor: Int32, at path: String) -> Bool {
        var held = stat()
        var there = stat()
        return fstat(descriptor, &held) == 0 && stat(path, &there) == 0 && held.st_ino == there.st_ino && held.st_dev == there.st_dev
    }

    /// `another process held it through 50 tries, 100 ms apart`.
    private static func busyReason(_ waiting: CrossProcessLock.Waiting) -> String {
        guard case .bounded(let tries, let milliseconds) = waiting else { return "another process holds it" }
        return "another process held it through \(tries) tries, \(milliseconds) ms apart"
    }
}

/// What keeps the app from being suspended while it holds a file lock: iOS terminates an
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

/// The guard a file lock is held under.
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
        ProcessInfo.processInfo.performExpiringActivity(withReason: "DefaultsCoder: a migration holds a suite's lock") { expired in
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
