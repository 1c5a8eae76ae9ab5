// How a change is written: the file read under the lock, the whole new file written
// beside it, synced, and renamed into place, so a kill at any instant leaves the old file
// or the new one.
//
// Compiled on Linux only, as SuiteFile.swift.

import KeyValueCoders

#if os(Linux)
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SuiteFile {
    /// The file a write starts from, open: what it held when the write read it, and the
    /// file itself, which the descriptor keeps readable once the write has renamed
    /// another over it.
    final class Base {
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
    func replace(applying changes: [String: Any?], order: [String], over base: Snapshot?) throws -> Written? {
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
            ownWrites.withLock { $0.record(base: base?.bytes, written: nil) }
            if unlink(destination) != 0 && errno != ENOENT { throw DefaultsSuiteError.system(.write, destination, errno: errno) }
            known.withLock { $0 = nil }
            lastLook.withLock { $0 = nil }
            return (values, nil, isReplaced: true)
        }
        let data: Data
        do {
            data = try PropertyListXML.document(entries)
        } catch {
            throw DefaultsSuiteError(operation: .write, path: path, reason: error.description)
        }
        // A change that leaves every byte as the file holds them writes nothing, as
        // Foundation's `synchronize()` of an unchanged value writes nothing: the bytes,
        // not the values, are compared, so a value that Foundation would take for the
        // same (`1` for `1.0`, another spelling of a key) is still written.
        if let base, let bytes = base.bytes, exists, base.holds(data) {
            return (values, bytes, isReplaced: false)
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
        // Recorded before the rename: the watcher may hear of it before this returns.
        let bytes = Array(data)
        if failure == 0 { ownWrites.withLock { $0.record(base: base?.bytes, written: bytes) } }
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
        known.withLock { $0 = stamped.map { Snapshot($0, .success(values), entries: entries, bytes: bytes) } }
        lastLook.withLock { $0 = nil }
        return (values, bytes, isReplaced: true)
    }

    /// What a write put in the suite: its values, its file's bytes (`nil` when it removed
    /// the file), and whether it replaced the file (`false`: the file held those bytes).
    typealias Written = (values: [String: Any], bytes: [UInt8]?, isReplaced: Bool)

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
    static func sibling(of path: String, _ suffix: String) -> String {
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

#endif
