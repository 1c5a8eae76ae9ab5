// The Linux watcher never stops hearing without a word: after inotify's queue overflows,
// after the watched directory is removed and made again, through a symbolic link to
// another directory, and with no inotify at all. Each test watches a file of its own
// with a watcher of its own.

#if os(Linux)
import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// A directory of the test's own, removed after.
private final class Scratch: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("watcher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

/// Rewrites the file at `path` in place, as Foundation's `synchronize()` does.
private func rewrite(_ path: String, _ text: String) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
}

@Suite("FileWatcher")
struct FileWatcherTests {

    @Test("after inotify's queue overflows, every watch is called back: the change lost in the overflow is rechecked")
    func overflow() async throws {
        let scratch = try Scratch()
        let file = scratch.path("suite.plist")
        try "a".write(toFile: file, atomically: false, encoding: .utf8)
        let watcher = FileWatcher()
        let calls = Locked(0)
        let token = watcher.watch(file) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        watcher.suspendReading()
        // More events than inotify queues (16,384 by default): made, written and removed.
        let setting = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
        let limit = setting.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
        try await offPool {
            for index in 0..<(limit / 3 + 100) {
                let other = scratch.path("other-\(index)")
                _ = FileManager.default.createFile(atPath: other, contents: nil)
                try FileManager.default.removeItem(atPath: other)
            }
            try rewrite(file, "b")
        }
        watcher.resumeReading()
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
    }

    @Test("watching a directory's file again after the last watch stopped asks inotify for no new watch, and hears a change")
    func watchKeptAcrossStops() async throws {
        let scratch = try Scratch()
        let file = scratch.path("suite.plist")
        try "a".write(toFile: file, atomically: false, encoding: .utf8)
        let watcher = FileWatcher()
        for _ in 0..<5 { watcher.watch(file) {}.cancel() }
        let calls = Locked(0)
        let token = watcher.watch(file) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        #expect(watcher.watchesAdded == 1)
        try rewrite(file, "b")
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
    }

    @Test("a directory kept watched with no file watched is let go when it is removed, and watched anew when a file of it is")
    func keptDirectoryRemoved() async throws {
        let scratch = try Scratch()
        let directory = scratch.path("config")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/suite.plist"
        let watcher = FileWatcher()
        watcher.watch(file) {}.cancel()
        try FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The removal is read once the watcher's queue gets to it; until then the old
        // watch stands, and a new watch is heard through it.
        let calls = Locked(0)
        #expect(await eventually(within: 10) { watcher.isLetGo(directory) })
        let token = watcher.watch(file) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        #expect(watcher.watchesAdded == 2)
        try "b".write(toFile: file, atomically: false, encoding: .utf8)
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
    }

    @Test("a watched directory removed and made again is watched again: a change after it is heard")
    func directoryMadeAgain() async throws {
        let scratch = try Scratch()
        let directory = scratch.path("config")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/suite.plist"
        try "a".write(toFile: file, atomically: false, encoding: .utf8)
        let watcher = FileWatcher()
        let calls = Locked(0)
        let token = watcher.watch(file) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        try FileManager.default.removeItem(atPath: directory)
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 }, "the removal is heard")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "b".write(toFile: file, atomically: false, encoding: .utf8)
        let before = calls.withLock { $0 }
        #expect(await eventually(within: 10) { calls.withLock { $0 } > before }, "the new file is heard")
        // And watched through inotify again: a rewrite is heard at once.
        try await Task.sleep(nanoseconds: 600_000_000)
        let settled = calls.withLock { $0 }
        try rewrite(file, "c")
        #expect(await eventually(within: 10) { calls.withLock { $0 } > settled })
    }

    @Test("a suite file that is a symbolic link to another directory is heard through its target")
    func symbolicLink() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: true)
        let target = scratch.path("elsewhere/real.plist")
        try "a".write(toFile: target, atomically: false, encoding: .utf8)
        let link = scratch.path("suite.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let watcher = FileWatcher()
        let calls = Locked(0)
        let token = watcher.watch(link) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        try rewrite(target, "b")
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
    }

    @Test("a suite file that is a link to nothing yet is heard once its target, in another directory, is made")
    func danglingLink() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: true)
        let target = scratch.path("elsewhere/real.plist")
        let link = scratch.path("suite.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let watcher = FileWatcher()
        let calls = Locked(0)
        let token = watcher.watch(link) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        try "a".write(toFile: target, atomically: false, encoding: .utf8)
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
    }

    @Test("a suite file that is a link pointed at another file is heard through its new target")
    func repointedLink() async throws {
        let scratch = try Scratch()
        for directory in ["first", "second"] {
            try FileManager.default.createDirectory(atPath: scratch.path(directory), withIntermediateDirectories: true)
            try "a".write(toFile: scratch.path("\(directory)/real.plist"), atomically: false, encoding: .utf8)
        }
        let link = scratch.path("suite.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scratch.path("first/real.plist"))
        let watcher = FileWatcher()
        let calls = Locked(0)
        let token = watcher.watch(link) { calls.withLock { $0 += 1 } }
        defer { token.cancel() }
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scratch.path("second/real.plist"))
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 }, "the new link is heard")
        try await Task.sleep(nanoseconds: 300_000_000)
        let settled = calls.withLock { $0 }
        try rewrite(scratch.path("second/real.plist"), "b")
        #expect(await eventually(within: 10) { calls.withLock { $0 } > settled }, "a change of the new target is heard")
    }

    @Test("with no inotify to be had (every instance taken), the watch says so once and polls: a change is heard")
    func noInotify() async throws {
        let scratch = try Scratch()
        let file = scratch.path("suite.plist")
        try "a".write(toFile: file, atomically: false, encoding: .utf8)
        let watcher = FileWatcher(makeDescriptor: {
            errno = EMFILE
            return -1
        })
        let calls = Locked(0)
        let failures = Recorded<String>()
        let token = watcher.watch(file, onFailure: { failures.append("\($0)") }, { calls.withLock { $0 += 1 } })
        defer { token.cancel() }
        #expect(
            failures.values == [
                "Cannot watch the UserDefaults file inotify for other processes' changes: Too many open files. Its changes are polled for instead."
            ])
        try await Task.sleep(nanoseconds: 300_000_000)
        try rewrite(file, "bb")
        #expect(await eventually(within: 10) { calls.withLock { $0 } >= 1 })
        #expect(failures.values.count == 1)
    }
}
#endif
