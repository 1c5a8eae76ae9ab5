// How a suite hears of changes other processes make, behind one small seam, while
// something observes it (nothing runs otherwise; no thread per observer):
// - Linux: the suite's file is watched with inotify, through one descriptor per process
//   read by a dispatch source. A rename over the file (a package write) and a rewrite in
//   place (Foundation's `synchronize()`) both count.
// - Apple platforms: every package write posts a Darwin notification named after the
//   suite, which every process observing the suite hears (`cfprefsd` owns the file), and
//   the observed keys without a dot are key-value observed, for other code's changes.
// What the feed does with a change is the same on both: it reads the keys it is asked
// for again (`ChangeFeed.recheck`).

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Hears of a suite's external changes until cancelled.
protocol ExternalChangesToken: Sendable {
    /// The keys the suite's observers listen to now, for a transport that watches keys.
    func listen(to keys: Set<String>)
    func cancel()
}

extension ExternalChangesToken {
    func listen(to keys: Set<String>) {}
}

enum ExternalChanges {
    /// Starts hearing of changes other processes make to the suite `backend` keeps;
    /// `onChange` runs on a queue of the package's. `nil` where nothing can be heard.
    static func watch(
        _ backend: any SuiteBackend, through defaults: UserDefaults?, onChange: @escaping @Sendable () -> Void
    ) -> (any ExternalChangesToken)? {
        #if os(Linux)
        if let file = backend as? SuiteFile {
            // Every change of the file is rechecked, this process's own writes too: the
            // feed compares what it reads with what it published, so a write already
            // published costs a read and publishes nothing. (Skipping a file "as last
            // seen" lost another process's write that a read here saw first.)
            return FileWatcher.shared.watch(file.path, onChange)
        }
        if let name = (backend as? PreferencesBackend)?.name {
            return FileWatcher.shared.watch(SuiteFile.named(name).path, onChange)
        }
        return nil
        #elseif canImport(Darwin)
        let notifications = (backend as? PreferencesBackend)?.name.flatMap { DarwinNotifications.observe(notificationName($0), onChange) }
        let observations = defaults.map { KeyValueObservations(defaults: $0, onChange: onChange) }
        return AppleWatch(notifications: notifications, observations: observations)
        #else
        return nil
        #endif
    }

    /// Tells other processes that the package changed the suite `backend` keeps.
    static func announce(_ backend: any SuiteBackend) {
        #if canImport(Darwin)
        if let name = (backend as? PreferencesBackend)?.name { DarwinNotifications.post(notificationName(name)) }
        #endif
    }

    /// The Darwin notification of a suite's changes.
    static func notificationName(_ suite: String) -> String {
        "DefaultsCoder.changed." + suite
    }
}

#if os(Linux)
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

#if canImport(Darwin)
/// What a suite listens to on Apple platforms: the package's Darwin notification, and
/// key-value observing of the keys observed, for other code's changes.
private struct AppleWatch: ExternalChangesToken {
    let notifications: (any ExternalChangesToken)?
    let observations: KeyValueObservations?

    func listen(to keys: Set<String>) {
        observations?.listen(to: keys)
    }

    func cancel() {
        notifications?.cancel()
        observations?.cancel()
    }
}

/// Key-value observing of a suite's keys: Apple's `UserDefaults` reports a change of a
/// key made anywhere — another process's plain `set(_:forKey:)` included — to its
/// key-value observers. Keys with a dot, and keys beginning with `@`, are left out:
/// key-value observing takes the dot for a path and `@` for a collection operator.
private final class KeyValueObservations: NSObject, @unchecked Sendable {
    // Unchecked: `defaults` and `onChange` are constants; `observed` and `isPending` are
    // behind locks.
    private let defaults: UserDefaults
    private let onChange: @Sendable () -> Void
    private let observed = Locked<Set<String>>([])
    private let isPending = Locked(false)

    init(defaults: UserDefaults, onChange: @escaping @Sendable () -> Void) {
        self.defaults = defaults
        self.onChange = onChange
    }

    func listen(to keys: Set<String>) {
        let wanted = keys.filter { !$0.contains(".") && !$0.hasPrefix("@") }
        // Added and removed under the lock: a removal racing the addition it undoes would
        // remove an observer never added, which raises `NSRangeException`.
        observed.withLock { observed in
            for key in wanted.subtracting(observed) { defaults.addObserver(self, forKeyPath: key, options: [], context: nil) }
            for key in observed.subtracting(wanted) { defaults.removeObserver(self, forKeyPath: key) }
            observed = wanted
        }
    }

    func cancel() {
        listen(to: [])
    }

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        guard DefaultsSuite.isWriting else { return onChange() }
        // During a package write of this thread: its own change, published when written
        // whole, or another process's that CFPreferences hands over from inside `set`.
        // Rechecked once the write is done, never dropped; the feed publishes only what
        // differs from what it published.
        let first = isPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        DispatchQueue.global().async { [isPending, onChange] in
            isPending.withLock { $0 = false }
            onChange()
        }
    }
}

/// Darwin notifications through CoreFoundation's center, which reaches every process.
enum DarwinNotifications {
    private final class Observer: ExternalChangesToken, @unchecked Sendable {
        // Unchecked: constants only.
        let name: String
        let onChange: @Sendable () -> Void

        init(name: String, onChange: @escaping @Sendable () -> Void) {
            self.name = name
            self.onChange = onChange
        }

        func cancel() {
            let center = CFNotificationCenterGetDarwinNotifyCenter()
            CFNotificationCenterRemoveObserver(center, Unmanaged.passUnretained(self).toOpaque(), CFNotificationName(name as CFString), nil)
            // Balances the retain `observe` took for the center.
            Unmanaged.passUnretained(self).release()
        }
    }

    static func observe(_ name: String, _ onChange: @escaping @Sendable () -> Void) -> (any ExternalChangesToken)? {
        let observer = Observer(name: name, onChange: onChange)
        let center = CFNotificationCenterGetDarwinNotifyCenter()
        CFNotificationCenterAddObserver(
            center, Unmanaged.passRetained(observer).toOpaque(),
            { _, observer, _, _, _ in
                guard let observer else { return }
                Unmanaged<Observer>.fromOpaque(observer).takeUnretainedValue().onChange()
            },
            name as CFString, nil, .deliverImmediately)
        return observer
    }

    static func post(_ name: String) {
        CFNotificationCenterPostNotification(CFNotificationCenterGetDarwinNotifyCenter(), CFNotificationName(name as CFString), nil, nil, true)
    }
}
#endif
