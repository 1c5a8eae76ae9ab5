// The file watcher of Linux: how a suite hears of changes other processes make to its
// file. One inotify descriptor for the process, read by a dispatch source; each watch
// calls back on a serial queue of its own.

#if os(Linux)
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One inotify descriptor for the process, watching the directories of observed suite
/// files, read by a dispatch source on a serial queue.
final class FileWatcher: @unchecked Sendable {
    // Unchecked: the state is behind `state`'s lock.
    static let shared = FileWatcher()

    private struct Directory {
        var watch: Int32
        /// By file name, the callbacks of each watch of that file.
        var files: [String: [UUID: @Sendable () -> Void]] = [:]
    }

    private struct State {
        var descriptor: Int32 = -1
        var source: (any DispatchSourceRead)?
        var directories: [String: Directory] = [:]
        var byWatch: [Int32: String] = [:]
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "DefaultsCoder.FileWatcher")

    private struct Token: ExternalChangesToken {
        let path: String
        let id: UUID
        func cancel() { FileWatcher.shared.stop(path, id) }
    }

    /// Calls `onChange` after each change of the file at `path` (made, rewritten,
    /// replaced or removed), until the token is cancelled; `nil` when its directory
    /// cannot be watched. Each watch calls on a serial queue of its own, and changes
    /// that come while a call is waiting to start make one call: an observer's handler
    /// that takes its time holds up only its own suite.
    func watch(_ path: String, _ onChange: @escaping @Sendable () -> Void) -> (any ExternalChangesToken)? {
        let url = URL(fileURLWithPath: path)
        let (directory, name) = (url.deletingLastPathComponent().path, url.lastPathComponent)
        let id = UUID()
        let queue = DispatchQueue(label: "DefaultsCoder.FileWatcher.watch")
        let isPending = Locked(false)
        let onChange: @Sendable () -> Void = {
            let first = isPending.withLock { pending in
                defer { pending = true }
                return !pending
            }
            guard first else { return }
            queue.async {
                isPending.withLock { $0 = false }
                onChange()
            }
        }
        let started: Bool = state.withLock { state in
            if state.descriptor < 0 {
                let descriptor = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
                guard descriptor >= 0 else { return false }
                state.descriptor = descriptor
                let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
                source.setEventHandler { FileWatcher.shared.readEvents() }
                source.resume()
                state.source = source
            }
            if state.directories[directory] == nil {
                // The directory is created on the first write when it is missing.
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_CREATE)
                let watch = inotify_add_watch(state.descriptor, directory, mask)
                guard watch >= 0 else { return false }
                state.directories[directory] = Directory(watch: watch)
                state.byWatch[watch] = directory
            }
            state.directories[directory]!.files[name, default: [:]][id] = onChange
            return true
        }
        return started ? Token(path: path, id: id) : nil
    }

    private func stop(_ path: String, _ id: UUID) {
        let url = URL(fileURLWithPath: path)
        let (directory, name) = (url.deletingLastPathComponent().path, url.lastPathComponent)
        state.withLock { state in
            guard var entry = state.directories[directory] else { return }
            entry.files[name]?[id] = nil
            if entry.files[name]?.isEmpty == true { entry.files[name] = nil }
            if entry.files.isEmpty {
                inotify_rm_watch(state.descriptor, entry.watch)
                state.directories[directory] = nil
                state.byWatch[entry.watch] = nil
            } else {
                state.directories[directory] = entry
            }
        }
    }

    /// Reads what inotify has, and calls each changed file's callbacks once.
    private func readEvents() {
        let descriptor = state.withLock { $0.descriptor }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var changed: [(String, String)] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let (watch, length) = buffer.withUnsafeBytes { bytes in
                    (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self), Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if let directory = state.withLock({ $0.byWatch[watch] }), !changed.contains(where: { $0 == (directory, name) }) {
                    changed.append((directory, name))
                }
                offset += 16 + length
            }
        }
        for (directory, name) in changed {
            let callbacks = state.withLock { $0.directories[directory]?.files[name].map { Array($0.values) } ?? [] }
            for callback in callbacks { callback() }
        }
    }
}
#endif
