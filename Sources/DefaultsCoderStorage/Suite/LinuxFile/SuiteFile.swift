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
    private static func realPath(_ path: String) -> String {
        if let resolved = resolved(path) { return resolved }
        let url = URL(fileURLWithPath: path)
        guard let directory = resolved(url.deletingLastPathComponent().path) else { return url.standardizedFileURL.path }
        return directory + "/" + url.lastPathComponent
    }

    /// `realpath(3)` of `path`: `nil` when something on the way does not exist.
    private static func resolved(_ path: String) -> String? {
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
    private let lock: CrossProcessLock

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
    private let temporaryPath: String

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
    private func opened(waitingFor defaults: UserDefaults) throws -> Base? {
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
    private func parse(_ bytes: Data, stamped stamp: Stamp) -> Snapshot {
        do {
            let values = try PropertyListReader.dictionary(from: bytes)
            return Snapshot(stamp, .success(values), entries: PropertyListXML.entries(in: bytes), bytes: Array(bytes))
        } catch {
            return Snapshot(stamp, .failure(UnreadableDefaultsFile(url: url, reason: error.reason)))
        }
    }

    // MARK: - Writing

    /// The file a write starts from, open: what it held when the write read it, and the
    /// file itself, which the descriptor keeps readable once the write has renamed
    /// another over it.
    private final class Base {
        // A write's own, used under the suite's lock only.
        private(set) var snapshot: Snapshot
        private let descriptor: Int32

        /// Takes over `descriptor`, which it closes when it goes.
        init(_ snapshot: Snapshot, descriptor: Int32) {
            self.snapshot = snapshot
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }

        /// Reads the file again, through the descriptor, and takes what it holds when
        /// that is not what it held when read: Foundation wrote it in place since (a
        /// plain `synchronize()` on another thread, which read the file before the
        /// write's rename and wrote after). `false` when it holds the same bytes, or
        /// bytes that do not parse (there is nothing to take then).
        func readAgain(parse: (Data, Stamp) -> Snapshot) -> Bool {
            var info = stat()
            guard let bytes = Self.contents(of: descriptor), !snapshot.holds(bytes), fstat(descriptor, &info) == 0 else { return false }
            let now = parse(bytes, Stamp(info))
            guard now.problem == nil else { return false }
            snapshot = now
            return true
        }

        /// Every byte of the open file, from its start.
        static func contents(of descriptor: Int32) -> Data? {
            guard lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
            return try? FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() ?? Data()
        }
    }

    /// Replaces the file, `changes` made to `base`, in one rename: the new contents go to
    /// a file next to it, with the old file's mode (and owner, where the process may set
    /// it), which is then renamed over it. A process killed at any instant leaves the old
    /// file or the new one. An empty suite has no file, as Foundation leaves it. Call it
    /// holding `withLock`.
    ///
    /// The entries a change does not touch are copied as the file holds them, byte for
    /// byte (`PropertyListXML`): a key is replaced only by the same key, scalar for
    /// scalar, so keys that Swift's `String` takes for one stay two, as Foundation's own
    /// writer keeps them.
    ///
    /// - Returns: The values written and the file's bytes (`nil` when the suite was
    ///   emptied, and its file removed); or `nil` when another file than `base` is there
    ///   (or one where there was none): nothing is written then.
    private func replace(applying changes: [String: Any?], order: [String], over base: Snapshot?) throws -> Written? {
        var values = base?.values ?? [:]
        for key in order { values[key] = changes[key]! }
        let entries = Self.entries(of: values, applying: changes, order: order, over: base?.entries)
        // Through a symbolic link made since the suite was first used, to the file it
        // names: the link stays a link, as Foundation's own write leaves it.
        let destination = Self.linkTarget(of: path) ?? path
        var existing = stat()
        let exists = stat(destination, &existing) == 0
        guard exists == (base != nil), !exists || Stamp(existing).isFile(of: base!.stamp) else { return nil }
        if entries.isEmpty {
            // The mode stays for the next write: a suite emptied and written again keeps it.
            if exists { mode.withLock { $0 = existing.st_mode & 0o7777 } }
            if unlink(destination) != 0 && errno != ENOENT { throw DefaultsSuiteError.system(.write, destination, errno: errno) }
            known.withLock { $0 = nil }
            lastLook.withLock { $0 = nil }
            return (values, nil)
        }
        let data: Data
        do {
            data = try PropertyListXML.document(entries)
        } catch {
            throw DefaultsSuiteError(operation: .write, path: path, reason: error.description)
        }
        let temporary = destination == path ? temporaryPath : Self.sibling(of: destination, ".defaultscoder-new")
        // A file whose mode says no one writes it (or that this process may not write)
        // is not replaced, though a rename needs only the directory's permission: the
        // mode is a person's or a tool's decision, and Foundation's own write fails too.
        let modeRefuses = existing.st_mode & 0o222 == 0
        if exists && (modeRefuses || access(destination, W_OK) != 0) {
            let code = modeRefuses ? EACCES : errno
            // Refused only when a second look finds the same file, unchanged: one removed
            // or replaced since the first (Foundation removes a suite's file when its copy
            // of the suite is empty, on any thread) is no refusal; the write starts over
            // from what is there now. (`stamp()` looks through a link to the file.)
            guard stamp() == Stamp(existing) else { return nil }
            throw DefaultsSuiteError.system(.write, destination, errno: code)
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
            try CrossProcessLock.makeDirectory(containing: path)
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
        // The new file is locked before it is at the path, and stays locked by a second
        // descriptor past this one's close: a process that opens the path after the
        // rename waits for this change to end, as it would have for the old file.
        let locked = failure == 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0 ? fcntl(descriptor, F_DUPFD_CLOEXEC, 0) : -1
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 { failure = Self.move(temporary, to: destination, replacing: exists) }
        guard failure == 0 else {
            if locked >= 0 { close(locked) }
            unlink(temporary)
            if failure == EEXIST { return nil }
            throw DefaultsSuiteError.system(.write, path, errno: failure)
        }
        if locked >= 0 { lock.adopt(locked) }
        mode.withLock { $0 = wanted }
        // Stamped after the rename, which changes the change time; and only when the
        // file there is still this write's.
        let renamed = identified ? stamp() : nil
        let stamped = renamed.flatMap { $0.isFile(of: Stamp(written)) ? $0 : nil }
        let bytes = Array(data)
        known.withLock { $0 = stamped.map { Snapshot($0, .success(values), entries: entries, bytes: bytes) } }
        lastLook.withLock { $0 = nil }
        return (values, bytes)
    }

    /// What a write put in the suite: its values, and its file's bytes (`nil` when it
    /// removed the file).
    private typealias Written = (values: [String: Any], bytes: [UInt8]?)

    /// Puts the new file at `destination`: over the file there in one rename, or, where
    /// there was none, as a new link, which fails (`EEXIST`) when a file appeared there
    /// since (Foundation's `synchronize()` on another thread creates it in place).
    /// - Returns: `0`, or the error number.
    private static func move(_ temporary: String, to destination: String, replacing: Bool) -> Int32 {
        if !replacing {
            if link(temporary, destination) == 0 {
                unlink(temporary)
                return 0
            }
            // A file system without hard links is renamed to, as is a symbolic link to
            // nothing (there is nothing to lose).
            var info = stat()
            if errno == EEXIST && stat(destination, &info) == 0 { return EEXIST }
        }
        return rename(temporary, destination) == 0 ? 0 : errno
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
        // By the key's bytes: `String`'s equality would take two spellings of one
        // canonical key for one.
        var placed = Set<[UInt8]>(minimumCapacity: order.count)
        func place(_ key: String) -> Bool {
            placed.insert(Array(key.utf8)).inserted
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

    /// The file a symbolic link at `path` names, with every link resolved, whether or not
    /// it exists yet (where its directory does); `nil` when `path` is no link. Looked up
    /// at each write and each watch event, never kept: a link may be pointed elsewhere.
    static func linkTarget(of path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else { return nil }
        if let resolved = resolved(path) { return resolved }
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
    package var identity: String { path }

    package var readsBeforeChanging: Bool { true }

    package func storedValues(of defaults: UserDefaults) throws -> [String: Any] {
        // Foundation first writes what the app's plain `set(_:forKey:)` calls left
        // unsaved, so that none is lost and none is written over this change later.
        defaults.synchronize()
        try lock.follow()
        return try opened(waitingFor: defaults)?.snapshot.values ?? [:]
    }

    package func write(_ changes: [String: Any?], order: [String], over stored: [String: Any], through defaults: UserDefaults) throws {
        // Made to the file as it is when written, not as it was when the change began:
        // the same but for what a plain `synchronize()` on another thread wrote in
        // between (package writes take turns), which is kept.
        try lock.follow()
        var base = try opened(waitingFor: defaults)
        var replaced: Written?
        for _ in 0..<8 {
            replaced = try replace(applying: changes, order: order, over: base?.snapshot)
            if replaced != nil { break }
            try lock.follow()
            base = try opened(waitingFor: defaults)
        }
        guard let written = replaced else {
            throw DefaultsSuiteError(operation: .write, path: path, reason: "another file was put in its place during each of eight attempts to write it")
        }
        // Nothing is unsaved now (the change began with `synchronize()`), unless another
        // thread set a value since: this writes it over the new file, or only empties
        // Foundation's cache, so that the next read loads the new file. It also waits
        // for a plain `synchronize()` on another thread that is writing (Foundation holds
        // the domain's lock through its read and write).
        defaults.synchronize()
        // Such a write lands in place, outside this package's lock: in the file this
        // write read, when it opened it before the rename (the descriptor keeps it
        // readable), or over the new one, from a copy that may lack this change.
        var lost: [String: Any?] = [:]
        if let base {
            let read = base.snapshot.values
            if base.readAgain(parse: parse) {
                for key in Self.differences(from: read, to: base.snapshot.values) where changes.index(forKey: key) == nil {
                    lost[key] = .some(base.snapshot.values[key])
                }
            }
        }
        // Whether the new file was rewritten over: by its bytes, as every check of a
        // write's (a rewrite within the clock's tick, at the same size, keeps the stamp).
        let file = try opened(waitingFor: defaults)?.snapshot
        guard file?.bytes != written.bytes || !lost.isEmpty else { return }
        // Written again through Foundation, whose `synchronize()` takes turns with every
        // other in the process (a package write made again by rename can be overtaken
        // again, as often as the other thread writes): another thread's values where
        // the file still holds what the rename left (else something newer is there),
        // and this change where the file lacks it.
        let now = file?.values ?? [:]
        lost = lost.filter { sameStoredValue(now[$0.key], written.values[$0.key]) }
        for key in order where !sameStoredValue(now[key], changes[key]!) { lost[key] = .some(changes[key]!) }
        guard !lost.isEmpty else { return }
        for (key, value) in lost.sorted(by: { $0.key < $1.key }) {
            if let value { defaults.set(value, forKey: key) } else { defaults.removeObject(forKey: key) }
        }
        defaults.synchronize()
    }

    /// The keys whose values differ between `old` and `new`, added and removed included.
    private static func differences(from old: [String: Any], to new: [String: Any]) -> Set<String> {
        Set(old.keys).union(new.keys).filter { !sameStoredValue(old[$0], new[$0]) }
    }

    package func reload(_ defaults: UserDefaults) {
        // Foundation reloads its cache of a file another process replaced only when told.
        // But a file another process is rewriting in place (Foundation's own
        // `synchronize()`: truncate, then write), caught half written, Foundation takes
        // for an empty suite: its cache would empty, and observers hear every key
        // removed, then set again. Such a file is left unread; the close of that write
        // brings another recheck.
        guard problem() == nil else { return }
        defaults.synchronize()
    }

    package func unreadableFile() -> UnreadableDefaultsFile? {
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
    package func moveUnreadableFileAside(of defaults: UserDefaults) throws -> URL? {
        let moved = try withLock { try moveAside() }
        if moved != nil { defaults.synchronize() }
        return moved
    }
}

#endif
