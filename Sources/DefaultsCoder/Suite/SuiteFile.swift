// A suite's file, where Foundation keeps it itself (Linux): found from the suite's name,
// known by its real path, read through the checked reader and written by replacing it
// in one rename, under a lock that every process running this package takes.
// Foundation's own `synchronize()` rewrites the file in place (truncate, then write),
// with no lock between processes: a kill in between leaves an empty file, and two
// processes writing together lose each other's keys. Package writes never do.
//
// Compiled on Linux only: Apple platforms have no suite file (`cfprefsd` owns it), and
// their suites go through `PreferencesBackend`.

#if os(Linux)
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One object per file, shared by every `UserDefaults` object of the suite, however its
/// name was spelled.
final class SuiteFile: @unchecked Sendable {
    // Unchecked: the constants are Sendable; `lock` guards `lockDepth` and
    // `lockDescriptor`, and `Locked` the rest. `NSRecursiveLock` is thread-safe but not
    // marked `Sendable` in every SDK.

    /// Where Foundation on Linux keeps suites, found as it finds it (measured, Swift
    /// 6.3.1): `$XDG_CONFIG_HOME` when it is an absolute path (a relative or empty one is
    /// ignored, as the XDG specification says), else `$HOME/.config` — `/.config` when
    /// `$HOME` is empty or unset; never the password database's home. Read once, at the
    /// first use of a suite, as Foundation reads it at its first.
    static let configDirectory: URL = configDirectory(in: ProcessInfo.processInfo.environment)

    /// The directory for `environment`.
    static func configDirectory(in environment: [String: String]) -> URL {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg) }
        return URL(fileURLWithPath: (environment["HOME"] ?? "") + "/.config")
    }

    private static let files = Locked<[String: SuiteFile]>([:])

    /// The file Foundation keeps the suite `name` in (`nil`: the app's own suite), known
    /// by its real path: `dir/./app`, a symbolic link to the directory, or to the file,
    /// all name one file and so one object.
    static func named(_ name: String?) -> SuiteFile {
        let spelled: String
        switch name {
        case let name? where name.hasPrefix("/"):
            // A suite named by an absolute path lives at that path (measured on Linux).
            spelled = name + ".plist"
        case let name?:
            spelled = configDirectory.appendingPathComponent("\(name).plist").path
        case nil:
            let app = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
            spelled = configDirectory.appendingPathComponent("\(app).plist").path
        }
        let path = realPath(spelled)
        return files.withLock { files in
            if let file = files[path] { return file }
            let file = SuiteFile(path: path)
            files[path] = file
            return file
        }
    }

    /// The path with every symbolic link and `.`/`..` resolved: the file's own when it
    /// exists, else its directory's with the file's name.
    private static func realPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard let resolved = realpath(directory, nil) else { return url.standardizedFileURL.path }
        defer { free(resolved) }
        return String(cString: resolved) + "/" + url.lastPathComponent
    }

    /// The file's real path.
    let path: String
    /// The file's URL.
    let url: URL

    /// Package writes of this file take turns on it in this process; recursive, since a
    /// failure handler or an observer called during a write may write again.
    private let lock = NSRecursiveLock()
    /// How deep the current thread holds `lock`, and the `flock(2)` it holds on the lock
    /// file while it does: a second `flock` of the file from this process would wait for
    /// the first forever.
    private var lockDepth = 0
    private var lockDescriptor: Int32 = -1

    /// The file as last read or written: by its identity, size and dates, so that a
    /// write costs a `stat` rather than a parse unless the file changed. (Failures are
    /// remembered too: Foundation on Linux leaks a little on every failed parse.)
    private let known = Locked<Snapshot?>(nil)

    /// The mode the file had when the package last wrote or emptied it.
    private let mode = Locked<mode_t?>(nil)

    /// When a read last looked for a problem with the file, and what it found.
    private let lastLook = Locked<(time: Int64, problem: UnreadableDefaultsFile?)?>(nil)

    /// What one read or write found. A class, not a tuple holding a `Result`: the enum's
    /// case would be kept in the spare bits of the dictionary's pointer, where
    /// LeakSanitizer does not see the pointer, and takes the values for leaked.
    private final class Snapshot: @unchecked Sendable {
        // Constants only; the values are property-list trees, never mutated.
        let stamp: Stamp
        let values: [String: Any]
        let problem: UnreadableDefaultsFile?
        /// The file's top-level entries as written, when it is XML the scan reads.
        let entries: [PropertyListXML.Entry]?

        init(_ stamp: Stamp, _ contents: Result<[String: Any], UnreadableDefaultsFile>, entries: [PropertyListXML.Entry]? = nil) {
            self.stamp = stamp
            self.entries = entries
            switch contents {
            case .success(let values): (self.values, self.problem) = (values, nil)
            case .failure(let problem): (self.values, self.problem) = ([:], problem)
            }
        }

        var contents: Result<[String: Any], UnreadableDefaultsFile> {
            problem.map { .failure($0) } ?? .success(values)
        }
    }

    /// The lock file every process running this package takes, and the file a write's
    /// new contents go to before the rename: next to the suite's file.
    private let lockPath: String
    private let temporaryPath: String

    private init(path: String) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        self.url = url
        lockPath = Self.sibling(of: path, ".lock")
        temporaryPath = Self.sibling(of: path, ".defaultscoder-new")
    }

    // MARK: - Lock

    /// Runs `body` holding this process's turn and an exclusive `flock(2)` on `FILE.lock`
    /// next to the file, which every process running this package takes before writing.
    func withLock<R>(_ body: () throws -> R) throws -> R {
        try withProcessLock {
            if lockDepth == 0 { try lockAcrossProcesses() }
            lockDepth += 1
            defer {
                lockDepth -= 1
                if lockDepth == 0 { unlockAcrossProcesses() }
            }
            return try body()
        }
    }

    /// Runs `body` holding this process's turn only, without the `flock(2)`.
    func withProcessLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Takes the `flock(2)`. The lock file stays open while the object lives (it lives
    /// as long as the process: one per file), so that a write costs no `open(2)` for it.
    ///
    /// The lock is the file at the lock's path: one removed or replaced since it was
    /// opened (a clean-up of `~/.config`) is let go of and the path opened again, so that
    /// every process locks the same file.
    private func lockAcrossProcesses() throws {
        while true {
            if lockDescriptor < 0 {
                var descriptor = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
                if descriptor < 0 && errno == ENOENT {
                    try createDirectory()
                    descriptor = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
                }
                guard descriptor >= 0 else { throw DefaultsSuiteError.system(.lock, lockPath, errno: errno) }
                lockDescriptor = descriptor
            }
            while flock(lockDescriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    let code = errno
                    close(lockDescriptor)
                    lockDescriptor = -1
                    throw DefaultsSuiteError.system(.lock, lockPath, errno: code)
                }
            }
            var held = stat()
            var there = stat()
            if fstat(lockDescriptor, &held) == 0 && stat(lockPath, &there) == 0 && held.st_ino == there.st_ino && held.st_dev == there.st_dev {
                return
            }
            close(lockDescriptor)
            lockDescriptor = -1
        }
    }

    private func unlockAcrossProcesses() {
        flock(lockDescriptor, LOCK_UN)
    }

    /// The directory, made as Foundation makes it (owner only) when it is missing.
    private func createDirectory() throws {
        let directory = url.deletingLastPathComponent().path
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DefaultsSuiteError(operation: .lock, path: directory, reason: (error as NSError).localizedDescription)
        }
    }

    // MARK: - Reading

    /// The file's size, dates and identity, following a symbolic link; `nil` when there
    /// is nothing there (also a link to nothing), so nothing to lose.
    private struct Stamp: Equatable {
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

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }
    }

    private func stamp() -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Stamp(info)
    }

    /// Why the file cannot be read, or `nil` when it parses or is absent.
    func problem() -> UnreadableDefaultsFile? {
        guard case .failure(let problem)? = read() else { return nil }
        return problem
    }

    /// The suite's values as the file holds them: `[:]` when there is no file.
    /// - Throws: `UnreadableDefaultsFile` when the file does not parse.
    func contents() throws(UnreadableDefaultsFile) -> [String: Any] {
        try read()?.get() ?? [:]
    }

    /// Reads and parses the file unless it is as last seen; `nil` when there is no file.
    ///
    /// Foundation rewrites a suite's file in place for an app's plain `set(_:forKey:)`
    /// (a `synchronize()` of any suite writes every suite with unsaved changes, on any
    /// thread, in any process, outside this package's lock). A file caught in between
    /// reads as empty or cut short. So a file that does not parse is called unreadable
    /// only once it has stayed as it is through a pause of 32 ms; while it keeps changing
    /// it is read again, for up to two seconds.
    private func read() -> Result<[String: Any], UnreadableDefaultsFile>? {
        guard var found = stamp() else { return nil }
        if let last = known.withLock({ $0 }), last.stamp == found { return last.contents }
        let deadline = Date().addingTimeInterval(2)
        var pause: UInt32 = 1_000
        while true {
            let (result, entries) = parse()
            guard case .failure = result else {
                known.withLock { $0 = Snapshot(found, result, entries: entries) }
                return result
            }
            usleep(pause)
            guard let now = stamp() else { return nil }
            let settled = pause >= 32_000 && now == found
            if settled || Date() > deadline {
                known.withLock { $0 = Snapshot(now, result) }
                return result
            }
            found = now
            pause = min(pause * 2, 64_000)
        }
    }

    /// The file's values, and its entries as written (`PropertyListXML.entries`).
    private func parse() -> (Result<[String: Any], UnreadableDefaultsFile>, [PropertyListXML.Entry]?) {
        do {
            let data = try Data(contentsOf: url)
            let values = try PropertyListReader.dictionary(from: data)
            return (.success(values), PropertyListXML.entries(in: data))
        } catch let problem as PropertyListReader.Problem {
            return (.failure(UnreadableDefaultsFile(url: url, reason: problem.reason)), nil)
        } catch {
            return (.failure(UnreadableDefaultsFile(url: url, reason: (error as NSError).localizedDescription)), nil)
        }
    }

    /// Whether the file is as the last read or write left it: one `stat`.
    func isAsLastWritten() -> Bool {
        guard let now = stamp(), let last = known.withLock({ $0 }) else { return false }
        return last.stamp == now
    }

    // MARK: - Writing

    /// Replaces the file, `changes` made to it, in one rename: the new contents go to a
    /// file next to it, with the old file's mode (and owner, where the process may set
    /// it), which is then renamed over it. A process killed at any instant leaves the old
    /// file or the new one. An empty suite has no file, as Foundation leaves it. Call it
    /// holding `withLock`.
    ///
    /// The entries a change does not touch are copied as the file holds them, byte for
    /// byte (`PropertyListXML`): a key is replaced only by the same key, scalar for
    /// scalar, so keys that Swift's `String` takes for one stay two, as Foundation's own
    /// writer keeps them.
    func replace(applying changes: [String: Any?], order: [String], over stored: [String: Any]) throws {
        var values = stored
        for key in order { values[key] = changes[key]! }
        let entries = Self.entries(of: values, applying: changes, order: order, over: currentEntries())
        if entries.isEmpty {
            // The mode stays for the next write: a suite emptied and written again keeps it.
            let destination = Self.linkTarget(of: path) ?? path
            var existing = stat()
            if stat(destination, &existing) == 0 { mode.withLock { $0 = existing.st_mode & 0o7777 } }
            if unlink(destination) != 0 && errno != ENOENT { throw DefaultsSuiteError.system(.write, destination, errno: errno) }
            known.withLock { $0 = nil }
            lastLook.withLock { $0 = nil }
            return
        }
        let data: Data
        do {
            data = try PropertyListXML.document(entries)
        } catch {
            throw DefaultsSuiteError(operation: .write, path: path, reason: error.description)
        }
        // Through a symbolic link made since the suite was first used, to the file it
        // names: the link stays a link, as Foundation's own write leaves it.
        let destination = Self.linkTarget(of: path) ?? path
        let temporary = destination == path ? temporaryPath : Self.sibling(of: destination, ".defaultscoder-new")
        var existing = stat()
        let exists = stat(destination, &existing) == 0
        // A file whose mode says no one writes it (or that this process may not write)
        // is not replaced, though a rename needs only the directory's permission: the
        // mode is a person's or a tool's decision, and Foundation's own write fails too.
        if exists && (existing.st_mode & 0o222 == 0 || access(destination, W_OK) != 0) {
            throw DefaultsSuiteError.system(.write, destination, errno: EACCES)
        }
        // A new file each time (O_EXCL), so that its mode is the one asked for: one
        // that a killed write left behind is removed first.
        let flags = O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC
        var descriptor = open(temporary, flags, 0o600)
        if descriptor < 0 && errno == EEXIST {
            unlink(temporary)
            descriptor = open(temporary, flags, 0o600)
        }
        if descriptor < 0 && errno == ENOENT {
            try createDirectory()
            descriptor = open(temporary, flags, 0o600)
        }
        guard descriptor >= 0 else { throw DefaultsSuiteError.system(.write, temporary, errno: errno) }
        var failure: Int32 = 0
        // The old file's mode, or the mode of the file an emptied suite last had, or
        // Foundation's: set whatever the umask took away at `open`.
        let wanted = exists ? existing.st_mode & 0o7777 : mode.withLock { $0 } ?? 0o600
        if exists && (existing.st_uid != Self.user || existing.st_gid != Self.group) {
            // The owner first: changing it can clear the mode's set-id bits.
            _ = fchown(descriptor, existing.st_uid, existing.st_gid)
        }
        if fchmod(descriptor, wanted) != 0 { failure = errno }
        if failure == 0 { failure = Self.writeAll(data, to: descriptor) }
        var written = stat()
        let identified = failure == 0 && fstat(descriptor, &written) == 0
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, destination) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw DefaultsSuiteError.system(.write, path, errno: failure)
        }
        mode.withLock { $0 = wanted }
        // Stamped after the rename, which changes the change time; and only when the
        // file there is still this write's.
        let renamed = identified ? stamp() : nil
        let stamped = renamed.flatMap { $0.inode == UInt64(written.st_ino) && $0.device == UInt64(written.st_dev) ? $0 : nil }
        known.withLock { $0 = stamped.map { Snapshot($0, .success(values), entries: entries) } }
        lastLook.withLock { $0 = nil }
    }

    /// The file's entries as last read, when the file is still as read then.
    private func currentEntries() -> [PropertyListXML.Entry]? {
        guard let last = known.withLock({ $0 }), let now = stamp(), last.stamp == now else { return nil }
        return last.entries
    }

    /// The entries of the new file: the file's own, each key the change names replaced
    /// in place or removed, and new keys after them in the order they were changed; or,
    /// when the file's entries are not known, `values` anew.
    private static func entries(
        of values: [String: Any], applying changes: [String: Any?], order: [String], over file: [PropertyListXML.Entry]?
    ) -> [PropertyListXML.Entry] {
        guard let file else {
            return values.keys.sorted().map { PropertyListXML.Entry(key: $0, value: .tree(values[$0]!)) }
        }
        // A file key is replaced only by the change's key spelled with the same scalars.
        func isChanged(_ key: String) -> Bool {
            guard let index = changes.index(forKey: key) else { return false }
            return changes.keys[index].utf8.elementsEqual(key.utf8)
        }
        var entries: [PropertyListXML.Entry] = []
        entries.reserveCapacity(file.count + order.count)
        var placed: [String] = []
        func place(_ key: String) -> Bool {
            guard !placed.contains(where: { $0.utf8.elementsEqual(key.utf8) }) else { return false }
            placed.append(key)
            return true
        }
        for entry in file {
            guard isChanged(entry.key) else {
                entries.append(entry)
                continue
            }
            if place(entry.key), let tree = changes[entry.key]! { entries.append(.init(key: entry.key, value: .tree(tree))) }
        }
        for key in order where place(key) {
            if let tree = changes[key]! { entries.append(.init(key: key, value: .tree(tree))) }
        }
        return entries
    }

    /// The file a symbolic link at `path` names, with every link resolved; `nil` when
    /// `path` is no link.
    private static func linkTarget(of path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else { return nil }
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // A link to nothing yet: the file it would name, where its directory exists
        // (else the link itself is replaced: there is nothing to lose).
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let absolute = target.hasPrefix("/") ? target : URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(target).path
        let resolved = realPath(absolute)
        var directory = stat()
        guard stat(URL(fileURLWithPath: resolved).deletingLastPathComponent().path, &directory) == 0 else { return nil }
        return resolved
    }

    /// A file next to the one at `path`: its name and `suffix`, or, where that name would
    /// be longer than a file name may be (`NAME_MAX`), a short name made from a hash of
    /// the path, the same in every process.
    private static func sibling(of path: String, _ suffix: String) -> String {
        let url = URL(fileURLWithPath: path)
        guard (url.lastPathComponent + suffix).utf8.count > 255 else { return path + suffix }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return url.deletingLastPathComponent().appendingPathComponent(".defaultscoder-\(String(hash, radix: 16))\(suffix)").path
    }

    /// The process's user and group, which new files get.
    private static let user = geteuid()
    private static let group = getegid()

    private static func writeAll(_ data: Data, to descriptor: Int32) -> Int32 {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int32 in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
    }

    /// Moves an unreadable file aside, to `NAME.unreadable-DATE-ID.plist` next to it: a
    /// new name every time, however often it is called. Call it holding `withLock`.
    ///
    /// - Returns: Where the file went, or `nil` when there is no unreadable file.
    func moveAside() throws -> URL? {
        guard let problem = problem() else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let stamp = formatter.string(from: Date()).replacingOccurrences(of: ":", with: "-")
        let unique = UUID().uuidString.prefix(8).lowercased()
        let name = problem.url.deletingPathExtension().lastPathComponent + ".unreadable-\(stamp)-\(unique).plist"
        let destination = problem.url.deletingLastPathComponent().appendingPathComponent(name)
        // link(2) and unlink(2), not rename(2): a rename would replace a file already there.
        guard link(path, destination.path) == 0 else { throw DefaultsSuiteError.system(.moveAside, path, errno: errno) }
        guard unlink(path) == 0 else { throw DefaultsSuiteError.system(.moveAside, path, errno: errno) }
        known.withLock { $0 = nil }
        lastLook.withLock { $0 = nil }
        return destination
    }
}

/// `write(2)`, named apart from the backend's `write(_:order:over:through:)`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

// MARK: - The file as a backend

extension SuiteFile: SuiteBackend {
    var identity: String { path }

    var readsBeforeChanging: Bool { true }

    func storedValues(of defaults: UserDefaults) throws -> [String: Any] {
        // Foundation first writes what the app's plain `set(_:forKey:)` calls left
        // unsaved, so that none is lost and none is written over this change later.
        defaults.synchronize()
        return try contents()
    }

    func write(_ changes: [String: Any?], order: [String], over stored: [String: Any], through defaults: UserDefaults) throws {
        var stored = stored
        // A plain `synchronize()` on another thread that read the file before the rename
        // writes its older copy over it when it finishes, without a lock. The
        // `synchronize()` below waits for such a write (Foundation holds the domain's
        // lock through its read and write), so a file changed since the rename is read
        // again, and the change made again if it was lost.
        for _ in 0..<8 {
            try replace(applying: changes, order: order, over: stored)
            // Nothing is unsaved now (the change began with `synchronize()`), so this
            // only empties Foundation's cache: the next read loads the new file.
            defaults.synchronize()
            if isAsLastWritten() { return }
            stored = try contents()
            let lost = order.contains { key in
                switch (stored[key], changes[key]!) {
                case (nil, nil): return false
                case (let now?, let tree?): return !plistEqual(now, tree)
                default: return true
                }
            }
            if !lost { return }
        }
    }

    func unreadableFile() -> UnreadableDefaultsFile? {
        // No lock: a package write replaces the file in one rename, so a read sees the
        // old file or the new one, and one that Foundation rewrites in place is read
        // again until it settles (`read()`). A read never waits for a writer.
        // A verdict stands for a few milliseconds: a read of an absent key costs a `stat`
        // once per interval, not each time (a damaged file is reported to reads that
        // much later at most; writes always look at the file).
        let now = Self.coarseNanoseconds()
        if let look = lastLook.withLock({ $0 }), now &- look.time < Self.verdictLifetime { return look.problem }
        let problem = problem()
        lastLook.withLock { $0 = (now, problem) }
        return problem
    }

    /// How long a read's verdict on the file stands.
    private static let verdictLifetime: Int64 = 5_000_000

    /// The monotonic clock, coarse: it costs no system call.
    private static func coarseNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Moves the unreadable file aside, under the suite's lock, and lets Foundation's
    /// cache, which holds the empty suite it read, read anew.
    func moveUnreadableFileAside(of defaults: UserDefaults) throws -> URL? {
        let moved = try withLock { try moveAside() }
        if moved != nil { defaults.synchronize() }
        return moved
    }
}

#endif
