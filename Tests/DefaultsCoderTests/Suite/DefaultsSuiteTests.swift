// The one write path: what a package write guarantees on disk, across processes, and
// to observers. The crash and multi-process tests apply where the package writes the
// file itself (Linux).

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("DefaultsSuite")
struct DefaultsSuiteTests {

    // MARK: - Crashes

    #if !canImport(Darwin)
    @Test(
        "a process killed at any instant of a write leaves a file that parses, with every other key intact", .enabled(if: Backend.isFile, "the file backend's"),
        arguments: ["encode", "reset", "subscript", "migrate"])
    func killedWriter(mode: String) async throws {
        let suite = TestSuite("killed" + mode)
        try suite.defaults.encode("kept", forKey: "filler")
        try suite.defaults.encode(0, forKey: "n")
        let (name, file) = (suite.name, suite.fileURL)
        // On a thread of its own, as every test here that waits on a child process: a
        // busy cooperative pool would stretch the waits the test times.
        let found = try await offPool { () throws -> [String] in
            let temporary = file.path + ".defaultscoder-new"
            var found: [String] = []
            for attempt in 0..<8 {
                let child = try ChildProcess("defaults-coder-probe", ["hammer", name, mode])
                try child.waitForLine("writing")
                if attempt.isMultiple(of: 2) {
                    // Right when the next file appears next to the old one.
                    let deadline = Date().addingTimeInterval(5)
                    while access(temporary, F_OK) != 0 && Date() < deadline {}
                } else {
                    usleep(UInt32(1_000 * (attempt * 3)))
                }
                child.kill()
                let data = try Data(contentsOf: file)
                let values = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] ?? [:]
                if values["filler"] as? String != "kept" { found.append("attempt \(attempt): filler \(values["filler"] as Any)") }
                if mode != "reset" && !(values["n"] is Int) { found.append("attempt \(attempt): n \(values["n"] as Any)") }
            }
            return found
        }
        #expect(found == [])
    }

    @Test("the file is never seen empty or half written while another process writes", .enabled(if: Backend.isFile, "the file backend's"))
    func neverTorn() async throws {
        let suite = TestSuite()
        try suite.defaults.encode(String(repeating: "x", count: 20_000), forKey: "filler")
        let (name, file) = (suite.name, suite.fileURL)
        let torn = try await offPool { () throws -> Int in
            let child = try ChildProcess("defaults-coder-probe", ["hammer", name, "encode"])
            defer { child.kill() }
            try child.waitForLine("writing")
            var torn = 0
            for _ in 0..<300 {
                guard let data = try? Data(contentsOf: file) else { continue }
                if (try? PropertyListSerialization.propertyList(from: data, format: nil)) == nil { torn += 1 }
            }
            return torn
        }
        #expect(torn == 0)
    }

    @Test("processes writing different keys of one suite together keep every key", .enabled(if: Backend.isFile, "the file backend's"))
    func processesKeepEachOthersKeys() async throws {
        let suite = TestSuite()
        let name = suite.name
        async let first = run("defaults-coder-probe", ["keys", name, "a", "40"])
        async let second = run("defaults-coder-probe", ["keys", name, "b", "40"])
        let results = try await [first, second]
        #expect(results.map(\.status) == [0, 0])
        let values = try await SecondProcess.read(suite)
        let missing = (0..<40).flatMap { ["a\($0)", "b\($0)"] }.filter { values[$0] == nil }
        #expect(missing == [])
    }
    #endif

    // MARK: - The file

    #if !canImport(Darwin)
    @Test("a package write keeps the file's mode", .enabled(if: Backend.isFile, "the file backend's"), arguments: [0o600, 0o640, 0o604])
    func modeKept(mode: Int) throws {
        let suite = TestSuite("mode\(mode)")
        try suite.defaults.encode(1, forKey: "a")
        #expect(chmod(suite.fileURL.path, mode_t(mode)) == 0)
        try suite.defaults.encode(2, forKey: "b")
        try suite.defaults.migrate(DefaultsMigration(version: 1, .rename("a", to: "c")))
        var info = stat()
        #expect(stat(suite.fileURL.path, &info) == 0)
        #expect(Int(info.st_mode & 0o7777) == mode)
    }

    @Test("a suite emptied and written again keeps its file's mode", .enabled(if: Backend.isFile, "the file backend's"))
    func modeKeptAcrossEmptying() throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        #expect(chmod(suite.fileURL.path, 0o640) == 0)
        try suite.defaults.resetAll()
        #expect(access(suite.fileURL.path, F_OK) != 0)
        try suite.defaults.encode(2, forKey: "b")
        var info = stat()
        #expect(stat(suite.fileURL.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o640)
    }

    @Test("a file changed in place, its size and modification time put back, is read again before a write", .enabled(if: Backend.isFile, "the file backend's"))
    func changeTimeCounts() throws {
        let suite = TestSuite()
        try suite.defaults.encode("one", forKey: "a")
        let path = suite.fileURL.path
        var before = stat()
        #expect(stat(path, &before) == 0)
        // Another tool rewrites the value, same length, and restores the modification time.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacingOccurrences(of: "<string>one</string>", with: "<string>two</string>").write(toFile: path, atomically: false, encoding: .utf8)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        try suite.defaults.encode(1, forKey: "b")
        let values = try #require(PropertyListSerialization.propertyList(from: Data(contentsOf: suite.fileURL), format: nil) as? [String: Any])
        #expect(values["a"] as? String == "two")
        #expect(values["b"] as? Int == 1)
    }

    @Test("a suite whose name leaves no room for NAME.plist.lock is written, as Foundation writes it", .enabled(if: Backend.isFile, "the file backend's"))
    func longSuiteName() async throws {
        let name = "DefaultsCoderTests.long." + String(repeating: "n", count: 248 - 24)
        let defaults = try #require(UserDefaults(suiteName: name))
        defer {
            defaults.removePersistentDomain(forName: name)
            try? FileManager.default.removeItem(at: SuiteFile.configDirectory.appendingPathComponent(name + ".plist"))
        }
        #expect((name + ".plist").utf8.count <= 255)
        #expect((name + ".plist.lock").utf8.count > 255)
        try defaults.encode(42, forKey: "answer")
        let result = try await run("defaults-coder-probe", ["read", name])
        let values = try PropertyListSerialization.propertyList(from: result.output, format: nil) as? [String: Any]
        #expect(values?["answer"] as? Int == 42)
    }

    @Test("a lock file removed and made anew is the lock: a write waits for the process that holds the new one", .enabled(if: Backend.isFile, "the file backend's"))
    func replacedLockFile() async throws {
        let suite = TestSuite()
        try suite.defaults.encode(14, forKey: "font")  // the lock file is open from here on
        let lock = suite.fileURL.path + ".lock"
        #expect(unlink(lock) == 0)
        let (name, defaults) = (suite.name, SendableAny(suite.defaults))
        // The write is timed against the child's pause, on a thread of its own.
        let (early, child, wroteAfter) = try await offPool { () throws -> (String?, String, Bool) in
            // Another process takes the new lock file and holds it, in the middle of a migration.
            let child = try ChildProcess("defaults-coder-probe", ["migrate", name, "pause"])
            defer { child.kill() }
            try child.waitForLine("in step")
            let wrote = Locked<String?>(nil)
            Thread {
                let failure = thrown { try (defaults.value as! UserDefaults).encode(1, forKey: "other") }
                wrote.withLock { $0 = failure ?? "wrote" }
            }.start()
            usleep(500_000)
            let early = wrote.withLock { $0 }
            let ending = child.ending
            child.kill()
            _ = waitUntil(within: 10) { wrote.withLock { $0 } != nil }
            return (early, ending, wrote.withLock { $0 } == "wrote")
        }
        #expect(early == nil, "the write ended while another process held the lock; the child: \(child)")
        #expect(wroteAfter)
    }

    @Test(
        "a package write lands where Foundation reads, whatever the environment says, in a fresh process",
        .enabled(if: Backend.isFile, "the file backend's"),
        arguments: [
            ["HOME": "home"],
            ["HOME": "home", "XDG_CONFIG_HOME": "relative"],
            ["HOME": "home", "XDG_CONFIG_HOME": ""],
            ["HOME": "home", "XDG_CONFIG_HOME": "absolute"],
        ])
    func configDirectoryAsFoundation(environment: [String: String]) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Relative values stay relative; the others are made absolute under `root`.
        let resolved: [String: String?] = environment.mapValues { value in
            value.isEmpty || value == "relative" ? value : root + "/" + value
        }
        let suite = "DefaultsCoderTests.environment.\(UUID().uuidString)"
        let written = try await run("defaults-coder-probe", ["change", suite, "answer", "encode", "42"], environment: resolved)
        #expect(written.status == 0, "\(written.errors)")
        let read = try await run("defaults-coder-probe", ["read", suite], environment: resolved)
        let values = try PropertyListSerialization.propertyList(from: read.output, format: nil) as? [String: Any]
        #expect(values?["answer"] as? Int == 42, "\(environment)")
        #expect(SuiteFile.configDirectory(in: ["HOME": "/h", "XDG_CONFIG_HOME": "x"]).path == "/h/.config")
    }

    @Test(
        "XDG_CONFIG_HOME changed after launch moves neither Foundation nor the package: a write lands in the file Foundation reads",
        .enabled(if: Backend.isFile, "the file backend's"))
    func configDirectoryChangedAfterLaunch() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let suite = "DefaultsCoderTests.late.\(UUID().uuidString)"
        let result = try await run(
            "defaults-coder-probe", ["late-config", suite, root + "/late"], environment: ["XDG_CONFIG_HOME": root + "/launch"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(String(decoding: result.output, as: UTF8.self) == "1\n")
        #expect(FileManager.default.fileExists(atPath: root + "/launch/\(suite).plist"))
        #expect(!FileManager.default.fileExists(atPath: root + "/late/\(suite).plist"))
    }

    @Test("a write or a reset that a launch argument hides is reported, each as what it was")
    func hiddenByLaunchArgument() async throws {
        ReportedFailures.install()
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("hidden"), default: 0)
        try await ProcessWideState.withLaunchArguments([key.name: "5"], on: suite.defaults) {
            try suite.defaults.write(7, to: key)
            try suite.defaults.reset(key)
        }
        let reports = ReportedFailures.reports(for: key.name).map { "\($0.error)" }
        #expect(
            reports == [
                "\"\(key.name)\" was written, but the launch argument -\(key.name) 5 takes precedence in this process",
                "\"\(key.name)\" was reset, but the launch argument -\(key.name) 5 takes precedence in this process",
            ])
    }

    @Test("a new suite file is created readable by its owner only")
    func newFileIsPrivate() throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        var info = stat()
        #expect(stat(suite.fileURL.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600)
    }

    @Test("an app's unsaved plain set(_:forKey:) is kept beside a package write")
    func pendingPlainSetKept() async throws {
        let suite = TestSuite()
        suite.defaults.set("plain", forKey: "plain")
        try suite.defaults.encode("package", forKey: "package")
        let values = try await SecondProcess.read(suite)
        #expect(values["plain"] as? String == "plain")
        #expect(values["package"] as? String == "package")
    }

    @Test("another process's key, written after this process read the suite, survives a package write")
    func otherProcessKeySurvives() async throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "mine")
        #expect(suite.defaults.integer(forKey: "mine") == 1)
        try await SecondProcess.write(["theirs": 2], into: suite)
        try suite.defaults.encode(3, forKey: "mine")
        let values = try await SecondProcess.read(suite)
        #expect(values["theirs"] as? Int == 2)
        #expect(values["mine"] as? Int == 3)
    }

    @Test("other spellings of a suite's name, and a symbolic link to its directory, are the same suite", .enabled(if: Backend.isFile, "the file backend's"))
    func oneSuitePerFile() throws {
        let suite = TestSuite()
        let directory = SuiteFile.configDirectory.path
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("config-link-\(UUID().uuidString)").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)
        defer { try? FileManager.default.removeItem(atPath: link) }
        let spellings = ["\(directory)/./\(suite.name)", "\(directory)/../\(URL(fileURLWithPath: directory).lastPathComponent)/\(suite.name)", "\(link)/\(suite.name)"]
        for spelling in spellings {
            let other = try #require(UserDefaults(suiteName: spelling))
            #expect(DefaultsSuite.of(other).file === DefaultsSuite.of(suite.defaults).file, "\(spelling)")
        }
    }

    @Test(
        "one file, two objects: a change through one is what the other reads, in its observers too — two spellings of a name",
        .enabled(if: Backend.isFile, "the file backend's"))
    func twoObjectsOneFile() throws {
        let suite = TestSuite()
        let writer = suite.defaults
        let reader = try suite.otherSpelling()
        let key = DefaultsKey<Int>(uniqueKey("shared"), default: 0)
        #expect(reader.object(forKey: key.name) == nil)  // read once: its cache is loaded
        let heard = Recorded<Int?>()
        let other = SendableAny(reader)
        // The reader is an object the package has seen: it observes.
        let observation = reader.observe(key, initial: false) { _, _ in
            heard.append((other.value as! UserDefaults).object(forKey: key.name) as? Int)
        }
        defer { observation.cancel() }
        try writer.write(5, to: key)
        #expect(reader.object(forKey: key.name) as? Int == 5)
        try writer.reset(key)
        #expect(reader.object(forKey: key.name) == nil)
        #expect(heard.values == [5, nil])
    }

    @Test(
        "one file, two objects: a recheck through the other object while a write is under way publishes only what was written",
        .enabled(if: Backend.isFile, "the file backend's"))
    func twoObjectsOneFileRechecked() async throws {
        let suite = TestSuite()
        let reader = try suite.otherSpelling()
        let key = DefaultsKey<Int>(uniqueKey("shared"), default: 0)
        let heard = Recorded<Int?>()
        let other = SendableAny(reader)
        let observation = reader.observe(key, initial: false) { _, _ in
            heard.append((other.value as! UserDefaults).object(forKey: key.name) as? Int)
        }
        defer { observation.cancel() }
        // Another thread reads the suite through the other object, as an announcement's
        // recheck does: it must never find that object's cache older than the write.
        let feed = DefaultsSuite.of(reader).feed
        let rounds = 200
        try await whileRepeating([{ _ in feed.recheck(through: other.value as? UserDefaults) }]) {
            for value in 1...rounds {
                try suite.defaults.write(value, to: key)
                try suite.defaults.reset(key)
            }
        }
        #expect(heard.values == (1...rounds).flatMap { [$0, nil] })
    }

    @Test(
        "one file, two objects: another process's change reaches both, and neither publishes the old value again",
        .enabled(if: Backend.isFile, "the file backend's"))
    func twoObjectsOneFileOtherProcess() async throws {
        let suite = TestSuite()
        let reader = try suite.otherSpelling()
        let key = DefaultsKey<Int>(uniqueKey("shared"), default: 0)
        try suite.defaults.write(1, to: key)
        // Each object observed, so the package has seen both; the reader's cache is loaded.
        let (heard, heardByReader) = (Recorded<Int>(), Recorded<Int>())
        let observations = [
            suite.defaults.observe(key, initial: false) { _, new in heard.append(new) },
            reader.observe(key, initial: false) { _, new in heardByReader.append(new) },
        ]
        defer { for observation in observations { observation.cancel() } }
        #expect(reader.object(forKey: key.name) as? Int == 1)
        let result = try await run("defaults-coder-probe", ["change", suite.name, key.name, "encode", "7"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(await eventually { heard.values == [7] })
        #expect(reader.object(forKey: key.name) as? Int == 7)
        // What an announcement through the reader does: a recheck through it.
        DefaultsSuite.of(reader).feed.recheck(through: reader)
        #expect(heard.values == [7])
        #expect(heardByReader.values == [7])
    }

    @Test(
        "a suite named after the app's own domain beside UserDefaults.standard: what one writes, the other reads, with plain Foundation or observed",
        .enabled(if: Backend.isFile, "the file backend's"), arguments: ["plain", "observed"])
    func standardBesideItsDomain(read: String) async throws {
        // In a process of its own, with a config directory of its own: nothing else
        // there writes the app's own domain, as other tests do in this one.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("standard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await run("defaults-coder-probe", ["standard-pair", "50", read], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(result.status == 0, "\(result.errors)")
        // How many of the 60 reads gave something else than the write before them.
        #expect(String(decoding: result.output, as: UTF8.self) == "0\n")
    }

    @Test("a directory that cannot be made throws the suite layer's error with the path", .enabled(if: Backend.isFile, "the file backend's"))
    func fileSystemFailure() throws {
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("blocker-\(UUID().uuidString)")
        try Data("a file, not a directory".utf8).write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let defaults = try #require(UserDefaults(suiteName: blocker.path + "/suite"))
        let error = caught(DefaultsSuiteError.self) { try defaults.encode(1, forKey: "a") }
        #expect(error?.operation == .lock)
        #expect(error?.path == blocker.path + "/suite.plist.lock")
    }
    #endif

    // MARK: - Keys

    @Test(
        "a key the file cannot keep is refused by every way of writing one",
        arguments: [
            "encode", "write", "rename", "move", "convert", "convert to key",
        ])
    func byteOrderMarkKeys(way: String) throws {
        let suite = TestSuite("bom" + way.filter(\.isLetter))
        let other = TestSuite("bomOther" + way.filter(\.isLetter))
        try suite.defaults.encode(1, forKey: "a")
        try suite.defaults.encode(2, forKey: "b")
        let bad = "\u{FEFF}b"
        let attempt: () throws -> Void
        switch way {
        case "encode": attempt = { try suite.defaults.encode(3, forKey: bad) }
        case "write": attempt = { try suite.defaults.write(3, to: DefaultsKey<Int>(bad, default: 0)) }
        case "rename": attempt = { try suite.defaults.migrate(DefaultsMigration(version: 1, .rename("a", to: bad))) }
        case "move": attempt = { try suite.defaults.migrate(DefaultsMigration(version: 1, .move("a", to: bad, intoSuite: other.name))) }
        case "convert": attempt = { try suite.defaults.migrate(DefaultsMigration(version: 1, .convert("a", from: Int.self, to: bad) { $0 })) }
        default:
            attempt = {
                try suite.defaults.migrate(DefaultsMigration(version: 1, .convert("a", from: Int.self, to: DefaultsKey<Int>(bad, default: 0)) { $0 }))
            }
        }
        #expect(throws: (any Error).self) { try attempt() }
        #expect(suite.defaults.integer(forKey: "a") == 1)
        #expect(suite.defaults.integer(forKey: "b") == 2)
        #expect(suite.defaults.object(forKey: bad) == nil)
        #expect(other.defaults.object(forKey: bad) == nil)
        #expect(try suite.defaults.migrationVersion() == 0)
    }

    // MARK: - Knowing a suite by its object

    @Test("the package keeps no suite object alive: one dropped after a read dies")
    func objectsLetGo() throws {
        let suite = TestSuite()
        weak var dropped: UserDefaults?
        do {
            let object = makeDefaults(suiteName: suite.name)
            dropped = object
            #expect(try object.read(DefaultsKey<Int>("absent", default: 7)) == 7)
        }
        #expect(dropped == nil)
    }

    @Test("a suite's objects looked for while other threads make and drop them: each reference is read once, never found alive and then gone")
    func liveObjectWhileOthersDrop() async throws {
        let suite = TestSuite()
        // No object of the suite lives throughout: each found is one a thread is about to drop.
        let feed = DefaultsSuite.of(makeDefaults(suiteName: suite.name)).feed
        let name = suite.name
        // Objects made, known to the suite and dropped again and again, on two threads of
        // their own, while a third asks for a live object: a reference found alive and
        // read again may find its object gone in between. Threads, not tasks: on a busy
        // machine a task may start only after the looking is over.
        let made = Locked(0)
        let make: @Sendable (Int) -> Void = { _ in
            for _ in 0..<16 { _ = DefaultsSuite.of(makeDefaults(suiteName: name)) }
            made.withLock { $0 += 16 }
        }
        let found = try await whileRepeating([make, make]) { () -> Int in
            // Until enough looks found an object alive, within a bound.
            var (looks, found) = (0, 0)
            let deadline = Date().addingTimeInterval(60)
            while looks < Stress.rounds(200_000) || found < 100, Date() < deadline {
                if feed.anyObject() != nil { found += 1 }
                looks += 1
            }
            return found
        }
        // Both sides ran: objects were made, and some were found alive.
        #expect(made.withLock { $0 } > 0)
        #expect(found >= 100)
    }

    @Test("objects of two suites, each made as the last is dropped, write to their own suite")
    func objectsMadeInTurn() throws {
        let suites = [TestSuite("turnA"), TestSuite("turnB")]
        for round in 0..<100 {
            let suite = suites[round % 2]
            try makeDefaults(suiteName: suite.name).encode(round, forKey: "round")
        }
        // A round written to the other suite would leave that suite's last round behind.
        #expect(try suites.map { try makeDefaults(suiteName: $0.name).decode(Int.self, forKey: "round") } == [98, 99])
    }

    // MARK: - Announcing

    @Test("a change is announced on every object the app holds for the suite")
    func notificationOnEveryObject() async throws {
        let suite = TestSuite()
        let other = try #require(UserDefaults(suiteName: suite.name))
        _ = DefaultsSuite.of(other)
        let heard = Locked<[String]>([])
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.keyDidChangeNotification, object: other, queue: nil) {
            note in heard.withLock { $0.append(note.userInfo?["key"] as? String ?? "") }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try suite.defaults.encode(1, forKey: "a")
        try suite.defaults.migrate(DefaultsMigration(version: 1, .rename("a", to: "b")))
        // The rename writes its new key first, then removes the old one.
        #expect(heard.withLock { $0 } == ["a", "b", "a", DefaultsMigration.versionKey])
    }

    @Test("an observer started while another thread writes reports that write or starts after it")
    func observerDuringWrite() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>("raced", default: 0)
        var stale = 0
        for trial in 1...150 {
            let written = Locked(false)
            let defaults = SendableAny(suite.defaults)
            let writer = Thread {
                (defaults.value as! UserDefaults)[key] = trial
                written.withLock { $0 = true }
            }
            writer.start()
            let seen = Locked<Int?>(nil)
            let observation = suite.defaults.observe(key, initial: false) { _, new in seen.withLock { $0 = new } }
            let streamed = Locked<Int?>(nil)
            let stream = suite.defaults.updates(for: key)
            let reader = Task { for await value in stream { streamed.withLock { $0 = value } } }
            _ = await eventually { written.withLock { $0 } }
            // The stream starts from the current value; either it read the write or it
            // hears of it. The closure observer hears of it unless it started after it.
            if !(await eventually(within: 10) { streamed.withLock { $0 } == trial }) { stale += 1 }
            let closureSaw = seen.withLock { $0 }
            if closureSaw != nil && closureSaw != trial { stale += 1 }
            reader.cancel()
            withExtendedLifetime(observation) {}
        }
        #expect(stale == 0)
    }
}

/// A child process the test can wait on and kill.
final class ChildProcess {
    private let process = Process()
    private let output = Pipe()
    private var buffered = Data()
    private var isKilled = false

    /// Where the child's standard error goes.
    private let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("child-stderr-\(UUID().uuidString)")

    init(_ name: String, _ arguments: [String]) throws {
        process.executableURL = try builtExecutable(name)
        process.arguments = arguments
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
    }

    /// How the child ended, and what it printed, when it has.
    var ending: String {
        guard !process.isRunning else { return "running" }
        let said = String(decoding: buffered, as: UTF8.self) + String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return "ended (\(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)), said \(said.debugDescription), errors \(errors.debugDescription)"
    }

    /// Waits, up to 30 seconds, for the child to print `line`.
    func waitForLine(_ line: String) throws {
        let deadline = Date().addingTimeInterval(30)
        while !String(decoding: buffered, as: UTF8.self).contains(line + "\n") {
            guard Date() < deadline, process.isRunning else {
                throw SecondProcess.Failed(description: "the child never said \(line)")
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { usleep(1_000) }
            buffered.append(chunk)
        }
    }

    /// Kills the child at once and waits for it to be gone; once (waiting again for a
    /// process already gone makes Foundation leak a weak reference).
    func kill() {
        guard !isKilled else { return }
        isKilled = true
        #if canImport(Glibc)
        Glibc.kill(process.processIdentifier, SIGKILL)
        #else
        Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill() }
        try? FileManager.default.removeItem(at: errorFile)
    }
}

#if !canImport(Darwin)
extension TestSuite {
    /// A second object of this suite, its name spelled another way (`DIR/./NAME`), for
    /// which Foundation on Linux keeps a cache of its own.
    fileprivate func otherSpelling() throws -> UserDefaults {
        try #require(UserDefaults(suiteName: "\(SuiteFile.configDirectory.path)/./\(name)"))
    }
}
#endif
