// The file watcher of Linux: how a suite hears of changes other processes make to its
// file. One inotify descriptor per watcher (the process has one, `shared`), read by a
// dispatch source; each watch calls back on a serial queue of its own.
//
// Hearing never stops without a word. A queue overflow (`IN_Q_OVERFLOW`: `~/.config` is
// shared by every program of the user) calls every watch back, for a recheck of every
// key. A watched directory that goes away (removed, moved, unmounted) calls its watches
// back, and is watched again once it is back: until then, and wherever inotify cannot be
// had at all, the file's stamp is polled. A suite file that is a symbolic link is heard
// through its target's directory too, also before the target exists. A watch that inotify refuses is reported once,
// through `onFailure`, and polled.

import KeyValueCoders

#if os(Linux)
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches suite files for changes, through inotify where it can and by polling where
/// it cannot.
final class FileWatcher: @unchecked Sendable {
    // Unchecked: the state is behind `state`'s lock; the rest is constant.
    static let shared = FileWatcher()

    /// How often a file inotify cannot watch is looked at.
    static let pollInterval: DispatchTimeInterval = .milliseconds(250)

    /// One watch of one file.
    private struct Registration {
        let path: String
        /// Calls the watch's callback on its own queue; calls while one waits make one.
        let fire: @Sendable () -> Void
        let onFailure: @Sendable (DefaultsSuiteError) -> Void
        /// The (directory, name) pairs the file is heard through: its own, and its
        /// symbolic link's target's.
        var places: Set<Place>
        /// The file's stamp when last polled.
        var stamp: [Int64]?
        var reported = false
    }

    private struct Place: Hashable {
        let directory: String
        let name: String
    }

    /// A change inotify reported: in the directory of `watch`, of the file `name`.
    private struct Event: Hashable {
        let watch: Int32
        let name: String
    }

    private struct Directory {
        /// The inotify watch, or `nil` while the directory cannot be watched (polled).
        var watch: Int32?
        /// By file name, the registrations heard through it.
        var files: [String: Set<UUID>] = [:]
    }

    private struct State {
        var descriptor: Int32 = -1
        /// Why inotify could not be had, once tried; polled instead.
        var unavailable: DefaultsSuiteError?
        var source: (any DispatchSourceRead)?
        var timer: (any DispatchSourceTimer)?
        var isSuspended = false
        var registrations: [UUID: Registration] = [:]
        var directories: [String: Directory] = [:]
        var byWatch: [Int32: String] = [:]
        /// How many inotify watches were added (the tests count them).
        var watchesAdded = 0
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "DefaultsCoder.FileWatcher")
    private let makeDescriptor: @Sendable () -> Int32

    /// A watcher with inotify descriptors from `makeDescriptor` (the tests give one that
    /// fails, as when every inotify instance of the user is taken).
    init(makeDescriptor: @escaping @Sendable () -> Int32 = { inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK)) }) {
        self.makeDescriptor = makeDescriptor
    }

    private struct Token: ExternalChangesToken {
        let watcher: FileWatcher
        let id: UUID
        func cancel() { watcher.stop(id) }
    }

    /// Calls `onChange` after each change of the file at `path` (made, rewritten,
    /// replaced or removed), until the token is cancelled. Each watch calls on a serial
    /// queue of its own, and changes that come while a call is waiting to start make one
    /// call: an observer's handler that takes its time holds up only its own suite.
    /// `onFailure` hears, once, that inotify refused and the file is polled instead.
    func watch(
        _ path: String, onFailure: @escaping @Sendable (DefaultsSuiteError) -> Void = { _ in }, _ onChange: @escaping @Sendable () -> Void
    ) -> any ExternalChangesToken {
        let id = UUID()
        let fire = CoalescingRunner(on: DispatchQueue(label: "DefaultsCoder.FileWatcher.watch"), onChange).call
        let failures = state.withLock { state -> [(@Sendable (DefaultsSuiteError) -> Void, DefaultsSuiteError)] in
            startIfNeeded(&state)
            state.registrations[id] = Registration(path: path, fire: fire, onFailure: onFailure, places: [], stamp: Self.stamp(of: path))
            return place(id, &state)
        }
        for (report, error) in failures { report(error) }
        return Token(watcher: self, id: id)
    }

    // MARK: - Places

    /// Starts inotify, once; where it cannot be had, says why and polls.
    private func startIfNeeded(_ state: inout State) {
        guard state.descriptor < 0, state.unavailable == nil else { return }
        let descriptor = makeDescriptor()
        guard descriptor >= 0 else {
            state.unavailable = DefaultsSuiteError.system(.watch, "inotify", errno: errno)
            return
        }
        state.descriptor = descriptor
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.resume()
        state.source = source
    }

    /// Where the file of registration `id` is heard now: its directory, and its target's
    /// when it is a symbolic link. Watches the new places, lets go of the old; returns
    /// the failures to report.
    private func place(_ id: UUID, _ state: inout State) -> [(@Sendable (DefaultsSuiteError) -> Void, DefaultsSuiteError)] {
        guard var registration = state.registrations[id] else { return [] }
        let url = URL(fileURLWithPath: registration.path)
        var places: Set<Place> = [Place(directory: url.deletingLastPathComponent().path, name: url.lastPathComponent)]
        if let target = SuiteFile.linkTarget(of: registration.path) {
            let targetURL = URL(fileURLWithPath: target)
            places.insert(Place(directory: targetURL.deletingLastPathComponent().path, name: targetURL.lastPathComponent))
        }
        for old in registration.places.subtracting(places) { forget(id, at: old, &state) }
        var failures: [(@Sendable (DefaultsSuiteError) -> Void, DefaultsSuiteError)] = []
        for new in places.subtracting(registration.places) {
            if state.directories[new.directory] == nil {
                state.directories[new.directory] = Directory(watch: nil)
                addWatch(new.directory, &state)
            }
            state.directories[new.directory]!.files[new.name, default: []].insert(id)
        }
        registration.places = places
        let isPolled = state.unavailable != nil || places.contains { state.directories[$0.directory]?.watch == nil }
        if isPolled, !registration.reported {
            registration.reported = true
            let reason = state.unavailable ?? DefaultsSuiteError(operation: .watch, path: url.deletingLastPathComponent().path, reason: "the directory cannot be watched")
            failures.append((registration.onFailure, reason))
        }
        state.registrations[id] = registration
        if isPolled { startPolling(&state) }
        return failures
    }

    private func forget(_ id: UUID, at place: Place, _ state: inout State) {
        guard var directory = state.directories[place.directory] else { return }
        directory.files[place.name]?.remove(id)
        if directory.files[place.name]?.isEmpty == true { directory.files[place.name] = nil }
        if directory.files.isEmpty, directory.watch == nil {
            state.directories[place.directory] = nil
        } else {
            // A directory heard through inotify stays watched once no file of it is:
            // adding a watch makes the kernel walk every entry it has cached of the
            // directory, and an app (or a test run) that starts and stops observing
            // would pay that walk each time. Its events, with no file to call, are read
            // and dropped.
            state.directories[place.directory] = directory
        }
    }

    /// Watches `directory`; leaves it polled when inotify refuses (it is missing, or the
    /// user's watches are all taken).
    private func addWatch(_ directory: String, _ state: inout State) {
        guard state.descriptor >= 0 else { return }
        let mask =
            UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_DELETE) | UInt32(IN_CREATE)
            | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
        let watch = inotify_add_watch(state.descriptor, directory, mask)
        guard watch >= 0 else { return }
        state.watchesAdded += 1
        state.directories[directory]?.watch = watch
        state.byWatch[watch] = directory
    }

    private func stop(_ id: UUID) {
        state.withLock { state in
            guard let registration = state.registrations.removeValue(forKey: id) else { return }
            for place in registration.places { forget(id, at: place, &state) }
        }
    }

    // MARK: - Events

    /// Reads what inotify has, and calls back each watch of a changed file once.
    private func readEvents() {
        let descriptor = state.withLock { $0.descriptor }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // By the watch descriptor and the name the event carries.
        var changed = Set<Event>()
        var lostDirectories = Set<Int32>()
        var overflowed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                    (
                        bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self), bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    overflowed = true
                } else if mask & (UInt32(IN_IGNORED) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 {
                    lostDirectories.insert(watch)
                } else if length > 0 {
                    let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                    changed.insert(Event(watch: watch, name: String(decoding: nameBytes, as: UTF8.self)))
                }
                offset += 16 + length
            }
        }
        let fires = state.withLock { state -> [@Sendable () -> Void] in
            var ids = Set<UUID>()
            if overflowed { ids = Set(state.registrations.keys) }
            for event in changed {
                guard let directory = state.byWatch[event.watch] else { continue }
                ids.formUnion(state.directories[directory]?.files[event.name] ?? [])
            }
            for watch in lostDirectories {
                guard let path = state.byWatch.removeValue(forKey: watch) else { continue }
                inotify_rm_watch(state.descriptor, watch)
                guard let files = state.directories[path]?.files, !files.isEmpty else {
                    // Kept only for its watch: nothing to poll it for.
                    state.directories[path] = nil
                    continue
                }
                state.directories[path]?.watch = nil
                for registered in files.values { ids.formUnion(registered) }
                startPolling(&state)
            }
            // A link may point elsewhere now.
            for id in ids { _ = place(id, &state) }
            return ids.compactMap { state.registrations[$0]?.fire }
        }
        for fire in fires { fire() }
    }

    // MARK: - Polling

    /// Polls while a watched file cannot be watched through inotify.
    private func startPolling(_ state: inout State) {
        guard state.timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
        state.timer = timer
    }

    /// Watches again each directory that is back, and calls back each polled watch whose
    /// file's stamp changed.
    private func poll() {
        let fires = state.withLock { state -> [@Sendable () -> Void] in
            var fires: [@Sendable () -> Void] = []
            for (path, directory) in state.directories where directory.watch == nil {
                addWatch(path, &state)
                // Back: what happened while it was gone is rechecked.
                if state.directories[path]?.watch != nil {
                    for id in directory.files.values.joined() { state.registrations[id]?.stamp = nil }
                }
            }
            for (id, registration) in state.registrations {
                let isPolled = state.unavailable != nil || registration.places.contains { state.directories[$0.directory]?.watch == nil }
                let stamp = Self.stamp(of: registration.path)
                if stamp != registration.stamp {
                    state.registrations[id]?.stamp = stamp
                    if isPolled || registration.stamp == nil { fires.append(registration.fire) }
                }
            }
            let anyPolled =
                state.unavailable != nil || state.directories.values.contains { $0.watch == nil }
            if !anyPolled {
                state.timer?.cancel()
                state.timer = nil
            }
            return fires
        }
        for fire in fires { fire() }
    }

    /// The file's identity, size and times, following links; `nil` when it is missing.
    private static func stamp(of path: String) -> [Int64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [
            Int64(info.st_dev), Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
            Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec),
        ]
    }

    // MARK: - Tests

    /// How many directory watches inotify was asked for and gave.
    var watchesAdded: Int { state.withLock { $0.watchesAdded } }

    /// Whether the watcher holds nothing for `directory`: no watch, and no poll.
    func isLetGo(_ directory: String) -> Bool { state.withLock { $0.directories[directory] == nil } }

    /// Stops reading inotify's queue until `resume()`, so that a test can overflow it.
    func suspendReading() {
        state.withLock { state in
            guard !state.isSuspended else { return }
            state.isSuspended = true
            state.source?.suspend()
        }
    }

    func resumeReading() {
        state.withLock { state in
            guard state.isSuspended else { return }
            state.isSuspended = false
            state.source?.resume()
        }
    }
}
#endif
