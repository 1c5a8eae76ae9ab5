// A suite's file, where Foundation keeps it itself (Linux): found from the suite's name,
// known by its real path, read through the checked reader and written by replacing it
// in one rename, under a lock that every process running this package takes.
// Foundation's own `synchronize()` rewrites the file in place (truncate, then write),
// with no lock between processes: a kill in between leaves an empty file, and two
// processes writing together lose each other's keys. Package writes never do.
//
// Compiled on Linux only: Apple platforms have no suite file (`cfprefsd` owns it), and
// their suites go through `PreferencesBackend`.

import KeyValueCoders

#if os(Linux)
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One object per file, shared by every `UserDefaults` object of the suite, however its
/// name was spelled.
package final class SuiteFile: @unchecked Sendable {
    // Unchecked: the constants are Sendable or locks; `Locked` guards the rest.

    /// Where Foundation on Linux keeps suites, found as it finds it (measured, Swift
    /// 6.3.1): `$XDG_CONFIG_HOME` when it is an absolute path (a relative or empty one is
    /// ignored, as the XDG specification says), else `$HOME/.config` — `/.config` when
    /// `$HOME` is empty or unset; never the password database's home. Read from the
    /// environment the process started with, as Foundation reads it when it loads: a
    /// variable changed later (`setenv`) moves neither (measured, Swift 6.3.1), so the
    /// package writes the file Foundation reads.
    static let configDirectory: URL = configDirectory(in: launchEnvironment() ?? ProcessInfo.processInfo.environment)

    /// The environment the process started with (`/proc/self/environ`), which `setenv`
    /// does not change; `nil` where it cannot be read.
    static func launchEnvironment() -> [String: String]? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/environ") else { return nil }
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: entry[entry.startIndex..<equals], as: UTF8.self)
            if environment[name] == nil { environment[name] = String(decoding: entry[(equals + 1)...], as: UTF8.self) }
        }
        return environment
    }

    /// The directory for `environment`.
    static func configDirectory(in environment: [String: String]) -> URL {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg) }
        return URL(fileURLWithPath: (environment["HOME"] ?? "") + "/.config")
    }

    private static let files = Locked<[String: SuiteFile]>([:])

    /// The file Foundation keeps the suite `name` in (`nil`: the app's own suite), known
    /// by its real path: `dir/./app`, a symbolic link to the directory, or to the file,
    /// all name one file and so one object.
    package static func named(_ name: String?) -> SuiteFile {
        let path = realPath(spelledPath(of: name))
        return files.withLock { files in
            if let file = files[path] { return file }
            let file = SuiteFile(path: path)
            files[path] = file
            return file
        }
    }

    /// Where Foundation keeps the suite `name` (`nil`: the app's own suite), links and
    /// `.`/`..` as they are spelled.
    static func spelledPath(of name: String?) -> String {
        switch name {
        case let name? where name.hasPrefix("/"):
            // A suite named by an absolute path lives at that path (measured on Linux).
            return name + ".plist"
        case let name?:
            return configDirectory.appendingPathComponent("\(name).plist").path
        case nil:
            let app = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
            return configDirectory.appendingPathComponent("\(app).plist").path
        }
    }

    /// Whether `spelled` leads to the file at the real path `path` now: a path that is
    /// its own real path and no symbolic link costs one `lstat`; any other is resolved.
    static func path(_ spelled: String, leadsTo path: String) -> Bool {
        var info = stat()
        if spelled == path, lstat(spelled, &info) == 0 ? info.st_mode & mode_t(S_IFMT) != mode_t(S_IFLNK) : errno == ENOENT {
            return true
        }
        return realPath(spelled) == path
    }

    /// The path with every symbolic link and `.`/`..` resolved: the file's own when it
    /// exists, else its directory's with the file's name.
    static func realPath(_ path: String) -> String {
        if let resolved = resolved(path) { return resolved }
        let url = URL(fileURLWithPath: path)
        guard let directory = resolved(url.deletingLastPathComponent().path) else { return url.standardizedFileURL.path }
        return directory + "/" + url.lastPathComponent
    }

    /// `realpath(3)` of `path`: `nil` when something on the way does not exist.
    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The file's real path.
    package let path: String
    /// The file's URL.
    let url: URL

    /// Package writes of this file take turns in this process, and across processes on
    /// `FILE.lock` next to it and on the file itself (`CrossProcessLock.follow()`).
    let lock: CrossProcessLock

    /// The file as last read or written: by its identity, size and dates, so that a
    /// write costs a `stat` rather than a parse unless the file changed. (Failures are
    /// remembered too: Foundation on Linux leaks a little on every failed parse.)
    let known = Locked<Snapshot?>(nil)

    /// The mode the file had when the package last wrote or emptied it.
    let mode = Locked<mode_t?>(nil)

    /// When a read last looked for a problem with the file, and what it found.
    let lastLook = Locked<(time: Int64, problem: UnreadableDefaultsFile?)?>(nil)

    /// What this process's package writes put in the file, so that hearing the file
    /// changed costs a recheck of every observed key only when another writer changed it.
    let ownWrites = Locked(OwnWrites())

    struct OwnWrites {
        /// The bytes of the file this process last renamed into place.
        var lastWritten: [UInt8]?
        /// Whether another writer changed the file since the last recheck began: a write
        /// found other bytes than its own last ones. Its change publishes only its own
        /// keys, so the other writer's are left for a recheck even when the file now
        /// holds this process's bytes.
        var isOthersUnheard = true

        /// Records a write that replaced `base` (the bytes it read under the lock) with
        /// `written`.
        mutating func record(base: [UInt8]?, written: [UInt8]?) {
            if base == nil || base != lastWritten { isOthersUnheard = true }
            lastWritten = written
        }
    }

    /// What one read or write found. A class, not a tuple holding a `Result`: the enum's
    /// case would be kept in the spare bits of the dictionary's pointer, where
    /// LeakSanitizer does not see the pointer, and takes the values for leaked.
    final class Snapshot: @unchecked Sendable {
        // Constants only; the values are property-list trees, never mutated.
        let stamp: Stamp
        let values: [String: Any]
        let problem: UnreadableDefaultsFile?
        /// The file's top-level entries as written, when it is XML the scan reads.
        let entries: [PropertyListXML.Entry]?
        /// The file's bytes, when they parse: a write compares them with what the file
        /// holds when it ends (`Base.readAgain(parse:)`). An array, not `Data`, for the
        /// reason above: `Data` keeps its storage's pointer in spare bits too.
        let bytes: [UInt8]?

        init(
            _ stamp: Stamp, _ contents: Result<[String: Any], UnreadableDefaultsFile>, entries: [PropertyListXML.Entry]? = nil,
            bytes: [UInt8]? = nil
        ) {
            self.stamp = stamp
            self.entries = entries
            self.bytes = bytes
            switch contents {
            case .success(let values): (self.values, self.problem) = (values, nil)
            case .failure(let problem): (self.values, self.problem) = ([:], problem)
            }
        }

        /// Whether the file held exactly `data` when this was taken.
        func holds(_ data: Data) -> Bool {
            guard let bytes, bytes.count == data.count else { return false }
            guard !bytes.isEmpty else { return true }
            return data.withUnsafeBytes { theirs in bytes.withUnsafeBytes { memcmp(theirs.baseAddress!, $0.baseAddress!, bytes.count) == 0 } }
        }

        var contents: Result<[String: Any], UnreadableDefaultsFile> {
            problem.map { .failure($0) } ?? .success(values)
        }
    }

    /// The file a write's new contents go to before the rename: next to the suite's file.
    let temporaryPath: String

    private init(path: String) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        self.url = url
        lock = CrossProcessLock.shared(path: Self.sibling(of: path, ".lock"), guarding: path)
        temporaryPath = Self.sibling(of: path, ".defaultscoder-new")
    }

    // MARK: - Lock

    /// Runs `body` holding this process's turn and an exclusive `flock(2)` on `FILE.lock`
    /// next to the file, which every process running this package takes before writing
    /// (whether or not the change asks for it `acrossProcesses`: the file is written
    /// whole).
    package func withLock<R>(acrossProcesses _: Bool = true, _ body: () throws -> R) throws -> R {
        try lock.withLock(body)
    }

    /// Runs `body` holding this process's turn only, without the `flock(2)`.
    package func withProcessLock<R>(_ body: () throws -> R) rethrows -> R {
        try lock.withProcessLock(body)
    }

    /// The lock file every process running this package takes.
    package var lockPath: String { lock.path }

    // MARK: - Reading

    /// The file's size, dates and identity, following a symbolic link; `nil` when there
    /// is nothing there (also a link to nothing), so nothing to lose.
    struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        /// The change time too: a tool that rewrites the file in place and puts its size
        /// and modification time back still changes it. (A rename changes it as well, so
        /// a new file's stamp is taken after its rename.)
        var changed: timespec

        static func == (lhs: Stamp, rhs: Stamp) -> Bool {
            lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
                && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
                && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
        }

        /// Whether both are of one file: the same device and inode.
        func isFile(of other: Stamp) -> Bool {
            device == other.device && inode == other.inode
        }

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }
    }

    func stamp() -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Stamp(info)
    }

    /// Why the file cannot be read, or `nil` when it parses or is absent.
    func problem() -> UnreadableDefaultsFile? {
        guard case .failure(let problem)? = read() else { return nil }
        return problem
    }

    /// Reads and parses the file unless it is as last seen (one `stat`); `nil` when there
    /// is no file. A read never waits for a writer (`settled(waitingFor:)`).
    private func read() -> Result<[String: Any], UnreadableDefaultsFile>? {
        if let last = known.withLock({ $0 }), let now = stamp(), last.stamp == now { return last.contents }
        // A process out of descriptors or memory learns nothing of the file: no problem
        // to report (the write that meets it throws `DefaultsSuiteError`).
        return (try? settled(waitingFor: nil))?.map(\.snapshot.values)
    }

    /// The file a write starts from, open, parsed; `nil` when there is none. Unlike a
    /// read's, its bytes are compared with the last snapshot's, not its stamp: a file
    /// rewritten in place within the clock's tick, at the same size, has the same stamp.
    ///
    /// - Parameter defaults: An object of the suite (`settled(waitingFor:)`).
    /// - Throws: `UnreadableDefaultsFile` when the file does not parse;
    ///   `DefaultsSuiteError` (`.write`) when the process cannot open it for want of
    ///   descriptors or memory.
    func opened(waitingFor defaults: UserDefaults) throws -> Base? {
        try settled(waitingFor: defaults)?.get()
    }

    /// The file as it is now, open and parsed; `nil` when there is none. The last
    /// snapshot's values stand when the file holds the same bytes.
    ///
    /// Foundation rewrites a suite's file in place for an app's plain `set(_:forKey:)`
    /// (a `synchronize()` of any suite writes every suite with unsaved changes, on any
    /// thread, in any process, outside this package's lock). A file caught in between
    /// reads as empty or cut short. So a file that does not parse is called unreadable
    /// only once the same bytes, at the same stamp, are read again after a pause of
    /// 32 ms; while it keeps changing it is read again, for two seconds and sixteen
    /// attempts at least. Both must match: a stamp alone misses a rewrite within the
    /// clock's tick at the same size, and the bytes alone an empty file caught in two
    /// rewrites. And both limits must pass: a wait for this process's `synchronize()`
    /// can outlast the two seconds, and the file be whole once it ends.
    ///
    /// - Parameter defaults: An object of the suite, given by a write: its
    ///   `synchronize()` waits, at each pause, for a `synchronize()` of this process
    ///   that is writing the file in place (Foundation holds the domain's lock through
    ///   its write), however long the thread writing it is kept from running. Reads
    ///   give none: a read never waits for a writer.
    ///
    /// - Throws: `DefaultsSuiteError` (`.write`) when the file cannot be opened for want
    ///   of descriptors or memory (`EMFILE`, `ENFILE`, `ENOMEM`): the file is not at
    ///   fault, and is not called unreadable, whose fix is to move it aside.
    private func settled(waitingFor defaults: UserDefaults?) throws(DefaultsSuiteError) -> Result<Base, UnreadableDefaultsFile>? {
        let deadline = Date().addingTimeInterval(2)
        var pause: UInt32 = 1_000
        var waited: UInt32 = 0
        var caught: (bytes: Data, stamp: Stamp)?
        var attempts = 0
        while true {
            attempts += 1
            // Not blocking: a pipe at the path is refused below rather than waited on for
            // a writer; a regular file is read as ever.
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            var info = stat()
            guard descriptor >= 0 else {
                // None there (also a link to nothing, or a path through a file, as
                // `stat` finds none): nothing to lose.
                let code = errno
                if code == EMFILE || code == ENFILE || code == ENOMEM { throw DefaultsSuiteError.system(.write, path, errno: code) }
                return code == ENOENT || code == ENOTDIR ? nil : .failure(UnreadableDefaultsFile(url: url, reason: String(cString: strerror(code))))
            }
            func failure(_ reason: String) -> Result<Base, UnreadableDefaultsFile> {
                close(descriptor)
                return .failure(UnreadableDefaultsFile(url: url, reason: reason))
            }
            guard fstat(descriptor, &info) == 0 else { return failure(String(cString: strerror(errno))) }
            // A pipe, a directory or a device: nothing a write may replace.
            guard info.st_mode & S_IFMT == S_IFREG else { return failure("it is not a regular file") }
            guard let bytes = Base.contents(of: descriptor), fstat(descriptor, &info) == 0 else {
                return failure(String(cString: strerror(errno)))
            }
            // Stamped after the read: a rewrite that ends while the file is read changes it.
            let stamp = Stamp(info)
            let snapshot: Snapshot
            if let last = known.withLock({ $0 }), last.holds(bytes) {
                // Parsed already; stamped anew, since the bytes may be another file's.
                snapshot = Snapshot(stamp, .success(last.values), entries: last.entries, bytes: last.bytes)
            } else {
                snapshot = parse(bytes, stamped: stamp)
            }
            guard let problem = snapshot.problem else {
                known.withLock { $0 = snapshot }
                return .success(Base(snapshot, descriptor: descriptor))
            }
            close(descriptor)
            let same = caught.map { $0.stamp == stamp && $0.bytes == bytes } ?? false
            if (same && waited >= 32_000) || (attempts >= 16 && Date() > deadline) {
                known.withLock { $0 = snapshot }
                return .failure(problem)
            }
            caught = (bytes, stamp)
            usleep(pause)
            defaults?.synchronize()
            waited = pause
            pause = min(pause * 2, 64_000)
        }
    }

    /// What `bytes` of the file hold: its values, its entries as written
    /// (`PropertyListXML.entries`) and the bytes, or why they do not parse.
    func parse(_ bytes: Data, stamped stamp: Stamp) -> Snapshot {
        do {
            let values = try PropertyListReader.dictionary(from: bytes)
            return Snapshot(stamp, .success(values), entries: PropertyListXML.entries(in: bytes), bytes: Array(bytes))
        } catch {
            return Snapshot(stamp, .failure(UnreadableDefaultsFile(url: url, reason: error.reason)))
        }
    }
}

#endif
