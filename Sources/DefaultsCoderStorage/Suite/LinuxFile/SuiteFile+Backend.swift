// The suite's file as the suite layer's backend on Linux: reads, changes under the lock,
// and what a damaged file is answered with.
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

// MARK: - The file as a backend

extension SuiteFile: SuiteBackend {
    package var identity: String { path }

    package var readsBeforeChanging: Bool { true }

    package var isNamed: Bool { true }

    package func isStill(at spelled: String) -> Bool { Self.path(spelled, leadsTo: path) }

    package func watchOtherProcesses(
        onFailure: @escaping @Sendable (DefaultsSuiteError) -> Void, _ onChange: @escaping @Sendable () -> Void
    ) -> (any ExternalChangesToken)? {
        // A change of the file is rechecked unless the file holds the bytes this
        // process last wrote and no other writer's change is waiting: this process
        // published its own change as it wrote it, and a recheck reads every observed
        // key. (A file skipped "as last seen by a read" lost another process's write
        // that the read saw first: only writes count here.)
        FileWatcher.shared.watch(path, onFailure: onFailure) { [self] in
            if isOwnLastWrite() { return }
            onChange()
        }
    }

    /// Whether the file holds the bytes of this process's last write, with no other
    /// writer's change unheard; otherwise, the recheck that follows hears them all.
    func isOwnLastWrite() -> Bool {
        // One look at the record: a recheck follows whenever this says no, so what it
        // reads is heard and the mark can go.
        let written = ownWrites.withLock { state -> [UInt8]? in
            guard !state.isOthersUnheard, let written = state.lastWritten else {
                state.isOthersUnheard = false
                return nil
            }
            return written
        }
        guard let written else { return false }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard let bytes = Base.contents(of: descriptor), bytes.elementsEqual(written) else { return false }
        // A write recorded since the look began may have found another writer's bytes.
        return ownWrites.withLock { !$0.isOthersUnheard }
    }

    package func announceToOtherProcesses() {}

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
        // Nothing written, and nothing to make good unless another thread rewrote the
        // file in place meanwhile (then it is checked below, as after a write).
        if !written.isReplaced, let base, !base.readAgain(parse: parse) { return }
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

    package func reload(_ objects: [UserDefaults]) {
        // Foundation reloads its cache of a file another process replaced only when told.
        // But a file another process is rewriting in place (Foundation's own
        // `synchronize()`: truncate, then write), caught half written, Foundation takes
        // for an empty suite: its cache would empty, and observers hear every key
        // removed, then set again. Such a file is left unread; the close of that write
        // brings another recheck. One look at the file serves every object.
        guard !objects.isEmpty, problem() == nil else { return }
        for defaults in objects { defaults.synchronize() }
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

extension DefaultsSuite {
    /// The suite's file, where the file backend keeps the suite.
    var file: SuiteFile? { backend as? SuiteFile }

    /// Removes the file of the suite `name` and its lock file, which an emptied suite
    /// leaves behind on Linux.
    package static func removeFiles(ofSuiteNamed name: String) {
        let file = SuiteFile.named(name)
        try? FileManager.default.removeItem(atPath: file.path)
        try? FileManager.default.removeItem(atPath: file.lockPath)
    }
}

#endif
