// The lock migrations and `resetAll()` take across processes on Apple platforms (the
// preferences backend): taken for them only, without blocking, inside an activity that
// holds off suspension, and never a reason for a change to fail when its file cannot be
// made. Another process's hold is stood for by a second open file of this one: `flock(2)`
// locks of two open files conflict, in one process as in two.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite(
    "CrossProcessLock",
    .enabled(if: Backend.isPreferences, "the preferences backend's: Apple platforms, or DEFAULTSCODER_SUITE_BACKEND=preferences"))
struct CrossProcessLockTests {
    /// A directory of its own standing for the app's Application Support, and the lock
    /// file of `suite` in it.
    private struct Placement {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("locks-\(UUID().uuidString)")
        var placement: LockPlacement { LockPlacement(ownDirectory: directory) { _ in nil } }

        func lockPath(of suite: TestSuite) -> String {
            placement.lockPath(forSuite: suite.name)
        }

        /// Runs `body` with the suites it first uses placing their lock files here.
        func run<R>(_ body: () throws -> R) rethrows -> R {
            try LockPlacement.$overridden.withValue(placement, operation: body)
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Another process's hold on the lock file at `path`, until `release()`.
    private final class Holder {
        private let descriptor: Int32

        init(_ path: String) throws {
            try CrossProcessLock.makeDirectory(containing: path)
            descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            try #require(descriptor >= 0)
            try #require(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        }

        func release() {
            close(descriptor)
        }

        /// Whether a process could take the lock at `path` now.
        static func isFree(_ path: String) -> Bool {
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { return true }
            defer { close(descriptor) }
            return flock(descriptor, LOCK_EX | LOCK_NB) == 0
        }
    }

    /// A suspension guard that grants activities, or refuses them as when the app is
    /// already being suspended, and expires the running one when told.
    private final class Suspension: SuspensionGuard, @unchecked Sendable {
        private let state = Locked<(refuses: Bool, begun: Int, ended: Int, onExpiry: (@Sendable () -> Void)?)>((false, 0, 0, nil))

        init(refuses: Bool = false) {
            state.withLock { $0.refuses = refuses }
        }

        private struct Activity: SuspensionActivity {
            let suspension: Suspension
            func end() { suspension.state.withLock { $0.ended += 1 } }
        }

        func begin(onExpiry: @escaping @Sendable () -> Void) -> (any SuspensionActivity)? {
            let refuses = state.withLock { state in
                if !state.refuses { (state.begun, state.onExpiry) = (state.begun + 1, onExpiry) }
                return state.refuses
            }
            return refuses ? nil : Activity(suspension: self)
        }

        /// What the system does before it suspends the app.
        func expire() {
            state.withLock { $0.onExpiry }?()
        }

        var counts: (begun: Int, ended: Int) { state.withLock { ($0.begun, $0.ended) } }
    }

    @Test(
        "a plain write of a named suite opens no lock file; a migration and resetAll() do",
        arguments: ["encode", "write", "reset", "subscript", "register"])
    func plainWritesTakeNoLockFile(way: String) throws {
        let (suite, placement) = (TestSuite(), Placement())
        defer { placement.remove() }
        let key = DefaultsKey<Int>(uniqueKey("count"), default: 0)
        try placement.run {
            for value in 1...20 {
                switch way {
                case "encode": try suite.defaults.encode(value, forKey: key.name)
                case "write": try suite.defaults.write(value, to: key)
                case "reset": try suite.defaults.reset(key)
                case "subscript": suite.defaults[key] = value
                default: try suite.defaults.register(DefaultsKey<Int>(uniqueKey("registered"), default: value))
                }
            }
        }
        // The lock file's folder is made with the first lock file: nothing was opened.
        #expect(!FileManager.default.fileExists(atPath: placement.directory.path))
        _ = try placement.run { try suite.defaults.migrate(DefaultsMigration(version: 1, .remove(key.name))) }
        #expect(FileManager.default.fileExists(atPath: placement.lockPath(of: suite)))
        try FileManager.default.removeItem(atPath: placement.lockPath(of: suite))
        try placement.run { try suite.defaults.resetAll() }
        #expect(FileManager.default.fileExists(atPath: placement.lockPath(of: suite)))
    }

    @Test("a migration held off by another process gives up after its tries with lockBusy, changing nothing; it runs once the lock is free")
    func busyLockGivesUp() throws {
        let (suite, placement) = (TestSuite(), Placement())
        defer { placement.remove() }
        let key = uniqueKey("old")
        suite.defaults.set(1, forKey: key)
        let holder = try Holder(placement.lockPath(of: suite))
        let migration = DefaultsMigration(version: 1, .rename(key, to: key + ".new"))
        let error = placement.run {
            CrossProcessLock.Waiting.$overridden.withValue(.bounded(tries: 3, milliseconds: 10)) {
                caught(DefaultsSuiteError.self) { try suite.defaults.migrate(migration) }
            }
        }
        #expect(error?.operation == .lockBusy)
        #expect(error?.path == placement.lockPath(of: suite))
        #expect(
            error?.description
                == "Cannot lock the UserDefaults file \(placement.lockPath(of: suite)): another process held it through 3 tries, 10 ms apart. Nothing was changed."
        )
        #expect(suite.defaults.object(forKey: key) as? Int == 1)
        #expect(try suite.defaults.migrationVersion() == 0)
        holder.release()
        #expect(try placement.run { try suite.defaults.migrate(migration) } == 1)
        #expect(suite.defaults.object(forKey: key + ".new") as? Int == 1)
    }

    @Test("the preferences backend's waiting is bounded: 50 tries, 100 ms apart")
    func preferencesWaiting() {
        #expect(CrossProcessLock.Waiting.preferences == .bounded(tries: 50, milliseconds: 100))
    }

    @Test("a lock file that cannot be made leaves migrations and resetAll() working, reported once for the suite")
    func unwritableLockDirectory() throws {
        let suite = TestSuite()
        // A regular file where the directory should be: not even root can make it.
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("blocker-\(UUID().uuidString)")
        try Data("a file".utf8).write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let placement = LockPlacement(ownDirectory: blocker.appendingPathComponent("Application Support")) { _ in nil }
        ReportedFailures.install()
        let key = uniqueKey("old")
        suite.defaults.set(1, forKey: key)
        try LockPlacement.$overridden.withValue(placement) {
            #expect(try suite.defaults.migrate(DefaultsMigration(version: 1, .rename(key, to: key + ".new"))) == 1)
            try suite.defaults.encode(2, forKey: key)
            try suite.defaults.resetAll()
            #expect(try suite.defaults.migrate(DefaultsMigration(version: 1), DefaultsMigration(version: 2, .remove(key))) == 2)
        }
        #expect(suite.defaults.object(forKey: key) == nil)
        let reports = ReportedFailures.reports(for: suite.name)
        #expect(reports.count == 1)
        let path = placement.lockPath(forSuite: suite.name)
        #expect(
            reports.first?.description
                == "DefaultsCoder: Cannot make the lock file \(path) that migrations and resetAll() take across processes: "
                + "Not a directory. They take this process's lock only."
        )
        #expect((reports.first?.error as? DefaultsSuiteError)?.operation == .lockUnavailable)
    }

    @Test("the lock file is held inside an activity that holds off suspension, and let go when the activity expires")
    func expiringActivity() throws {
        let (suite, placement, suspension) = (TestSuite(), Placement(), Suspension())
        defer { placement.remove() }
        let (old, new) = (uniqueKey("old"), uniqueKey("new"))
        suite.defaults.set(1, forKey: old)
        let path = placement.lockPath(of: suite)
        let seen = Locked<[Bool]>([])
        let migration = DefaultsMigration(
            version: 1,
            .convert(old, from: Int.self, to: new) { value in
                seen.withLock { $0.append(Holder.isFree(path)) }
                suspension.expire()
                seen.withLock { $0.append(Holder.isFree(path)) }
                return value + 1
            })
        let version = try placement.run { try SuspensionGuards.$overridden.withValue(suspension) { try suite.defaults.migrate(migration) } }
        #expect(version == 1)
        // Held while the activity ran; let go the moment it expired; the migration ended.
        #expect(seen.withLock { $0 } == [false, true])
        #expect(suite.defaults.object(forKey: new) as? Int == 2)
        #expect(suspension.counts == (1, 1))
        #expect(Holder.isFree(path))
    }

    @Test("an app already being suspended takes no lock file: the migration throws and changes nothing")
    func suspendedAppTakesNoLock() throws {
        let (suite, placement) = (TestSuite(), Placement())
        defer { placement.remove() }
        let key = uniqueKey("old")
        suite.defaults.set(1, forKey: key)
        let error = placement.run {
            SuspensionGuards.$overridden.withValue(Suspension(refuses: true)) {
                caught(DefaultsSuiteError.self) { try suite.defaults.migrate(DefaultsMigration(version: 1, .remove(key))) }
            }
        }
        #expect(error?.description == "Cannot lock the UserDefaults file \(placement.lockPath(of: suite)): the app is being suspended. Nothing was changed.")
        #expect(suite.defaults.object(forKey: key) as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: placement.lockPath(of: suite)))
    }

    @Test("a lock file removed while held is not locked again by the next process: it locks the file at the path")
    func removedWhileHeld() throws {
        let (suite, placement) = (TestSuite(), Placement())
        defer { placement.remove() }
        let path = placement.lockPath(of: suite)
        let holder = try Holder(path)
        // A clean-up removes the held file: the next lock makes a new one, as a process
        // that comes later must find the same.
        try FileManager.default.removeItem(atPath: path)
        #expect(try placement.run { try suite.defaults.migrate(DefaultsMigration(version: 1)) } == 1)
        holder.release()
        #expect(Holder.isFree(path))
    }
}

@Suite("CrossProcessLock, on every backend")
struct CrossProcessLockSharingTests {
    @Test("every spelling of one lock file is one lock object: a change of two suites that share the file takes it once, never waiting on itself")
    func oneLockPerFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("locks-\(UUID().uuidString)")
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
        defer {
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: directory)
        }
        let lock = CrossProcessLock.shared(path: directory.path + "/x.lock")
        for spelling in [directory.path + "/./x.lock", directory.path + "/sub/../x.lock", link.path + "/x.lock"] {
            #expect(CrossProcessLock.shared(path: spelling) === lock, "\(spelling)")
        }
        #expect(CrossProcessLock.shared(path: directory.path + "/y.lock") !== lock)
        // Two objects of one file would each open it, and the second flock would wait for
        // the first: here it would give up after two tries.
        let ran = try CrossProcessLock.Waiting.$overridden.withValue(.bounded(tries: 2, milliseconds: 10)) {
            try lock.withLock { try CrossProcessLock.shared(path: link.path + "/x.lock").withLock { true } }
        }
        #expect(ran)
    }
}

extension CrossProcessLockSharingTests {
    @Test("300 suites written and migrated in a process allowed 64 open files: every write and migration lands")
    func manySuitesFewDescriptors() async throws {
        // A process of its own, with a config directory of its own: the limit is the
        // process's, and 600 files would wake every watcher of the shared directory.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await run("defaults-coder-probe", ["many-suites", "many", "300", "64"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(result.status == 0, "\(result.errors)")
        #expect(String(decoding: result.output, as: UTF8.self) == "done 0\n")
    }
}
