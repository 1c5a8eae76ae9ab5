// The guard against writing over an unreadable suite file, on real files. Foundation
// keeps the file itself only off Apple platforms, so these run there.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// A damaged suite file, and the reason the guard gives for it.
struct DamagedFile: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: Data
    let reason: String

    var testDescription: String { name }

    static let xml = try! PropertyListSerialization.data(fromPropertyList: ["a": 1, "b": "two"], format: .xml, options: 0)
    static let binary = try! PropertyListSerialization.data(fromPropertyList: ["a": 1, "b": "two"], format: .binary, options: 0)

    static let all: [DamagedFile] = [
        DamagedFile(name: "zero-length", bytes: Data(), reason: "it is empty"),
        DamagedFile(name: "truncated XML", bytes: xml.prefix(xml.count / 2), reason: parserMessage(xml.prefix(xml.count / 2))),
        DamagedFile(name: "truncated binary", bytes: binary.prefix(20), reason: "its binary property list is truncated"),
        DamagedFile(name: "binary holding a set", bytes: BinaryPlist.withSet, reason: "it holds a set, which preferences cannot"),
        DamagedFile(name: "binary that refers to itself", bytes: BinaryPlist.cycle, reason: "it refers to itself"),
        DamagedFile(name: "binary holding a UID", bytes: BinaryPlist.uid, reason: "it holds a keyed archiver UID, which preferences cannot"),
        DamagedFile(name: "binary with a length past the end", bytes: BinaryPlist.hugeString, reason: "a string or data runs past the object table"),
        DamagedFile(name: "binary with a reference past the last object", bytes: BinaryPlist.danglingReference, reason: "a reference points past the last object"),
        DamagedFile(name: "binary nested 600 deep", bytes: BinaryPlist.deep(600), reason: "it nests deeper than 512 levels"),
        DamagedFile(name: "garbage", bytes: Data("not a plist <at> all".utf8), reason: parserMessage(Data("not a plist <at> all".utf8))),
        DamagedFile(
            name: "an array, not a dictionary",
            bytes: try! PropertyListSerialization.data(fromPropertyList: [1, 2], format: .xml, options: 0),
            reason: "it does not hold a dictionary"
        ),
    ]

    /// What Foundation's parser says about `data` (never called for the binary rows: its
    /// parser crashes on some of them).
    static func parserMessage(_ data: Data) -> String {
        do {
            _ = try PropertyListSerialization.propertyList(from: data, format: nil)
            return "(parses)"
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        }
    }
}

@Suite("SuiteFileGuard", .enabled(if: Backend.isFile, "the file backend's"))
struct SuiteFileGuardTests {

    init() {
        ReportedFailures.install()
    }

    #if !canImport(Darwin)
    @Test("the package finds the suite's file where Foundation writes it")
    func locatesFile() throws {
        let suite = TestSuite()
        #expect(DefaultsSuite.of(suite.defaults).file?.url == suite.fileURL)
        suite.defaults.set(1, forKey: "a")
        suite.defaults.synchronize()
        #expect(FileManager.default.fileExists(atPath: suite.fileURL.path))
        #expect(suite.defaults.unreadableFile() == nil)
    }

    @Test("a damaged file: writes throw and leave it as it is; reads report it", arguments: DamagedFile.all)
    func damagedFile(_ damage: DamagedFile) throws {
        let suite = TestSuite()
        try damage.bytes.write(to: suite.fileURL)
        let expected = UnreadableDefaultsFile(url: suite.fileURL, reason: damage.reason)
        #expect(damage.reason != "(parses)")

        // Writes through the package: nothing written, the file untouched.
        #expect(throws: expected) { try suite.defaults.encode(5, forKey: "x") }
        #expect(throws: expected) { try suite.defaults.write(5, to: .launchCount) }
        #expect(throws: expected) { try suite.defaults.reset(.launchCount) }
        let name = uniqueKey("damaged")
        let key = DefaultsKey<Int>(name, default: 7)
        suite.defaults[key] = 5
        #expect(suite.defaults.object(forKey: "x") == nil)
        #expect(try Data(contentsOf: suite.fileURL) == damage.bytes)

        // Reads: the throwing ones say why the key is absent; the others report it.
        #expect(throws: expected) { try suite.defaults.decode(Int.self, forKey: "a") }
        #expect(throws: expected) { try suite.defaults.read(key) }
        #expect(suite.defaults[key] == 7)
        let reports = ReportedFailures.reports(for: name)
        #expect(reports.map(\.operation) == [.write, .read])
        #expect(reports.first?.error as? UnreadableDefaultsFile == expected)
        #expect(
            expected.description
                == "The UserDefaults file \(suite.fileURL.path) cannot be read (\(damage.reason)); writing would replace every value in it, so nothing was written. Repair it or move it aside."
        )
    }

    @Test("moving the damaged file aside keeps it and lets writes work again")
    func moveAside() throws {
        let suite = TestSuite()
        let damaged = Data("garbage".utf8)
        try damaged.write(to: suite.fileURL)
        #expect(throws: UnreadableDefaultsFile.self) { try suite.defaults.encode(1, forKey: "x") }

        let moved = try #require(try suite.defaults.moveUnreadableFileAside())
        defer { try? FileManager.default.removeItem(at: moved) }
        #expect(try Data(contentsOf: moved) == damaged)
        #expect(moved.deletingLastPathComponent() == suite.fileURL.deletingLastPathComponent())
        #expect(moved.lastPathComponent.hasPrefix(suite.name + ".unreadable-"))

        try suite.defaults.encode(1, forKey: "x")
        #expect(try suite.defaults.decode(Int.self, forKey: "x") == 1)
        #expect(try suite.defaults.moveUnreadableFileAside() == nil)
    }

    @Test("moving damaged files aside several times within a second keeps each under a name of its own")
    func moveAsideTwice() throws {
        let suite = TestSuite()
        var moved: [URL] = []
        defer { for url in moved { try? FileManager.default.removeItem(at: url) } }
        for round in 0..<3 {
            let damaged = Data("garbage \(round)".utf8)
            try damaged.write(to: suite.fileURL)
            moved.append(try #require(try suite.defaults.moveUnreadableFileAside()))
            #expect(try Data(contentsOf: moved[round]) == damaged)
            try suite.defaults.encode(round, forKey: "x")
        }
        #expect(Set(moved).count == 3)
        #expect(try suite.defaults.decode(Int.self, forKey: "x") == 2)
    }

    @Test("each UserDefaults object's file is found anew, also for a new object at a reused address")
    func locationsPerObject() throws {
        for round in 0..<6 {
            // Objects made and freed in turn tend to reuse one address.
            let healthy = TestSuite("healthy\(round)")
            #expect(DefaultsSuite.of(healthy.defaults).file?.url == healthy.fileURL)
            try healthy.defaults.encode(round, forKey: "n")
            let damaged = TestSuite("damaged\(round)")
            #expect(DefaultsSuite.of(damaged.defaults).file?.url == damaged.fileURL)
            try Data("garbage".utf8).write(to: damaged.fileURL)
            #expect(throws: UnreadableDefaultsFile.self) { try damaged.defaults.encode(round, forKey: "n") }
        }
    }

    @Test("every UserDefaults object of a suite shares one file, and so one write lock and one check")
    func oneFilePerSuite() throws {
        let suite = TestSuite()
        let second = try #require(UserDefaults(suiteName: suite.name))
        let file = try #require(DefaultsSuite.of(suite.defaults).file)
        #expect(DefaultsSuite.of(second).file === file)
        #expect(file.path == suite.fileURL.path)
        #expect(DefaultsSuite.of(TestSuite("another").defaults).file !== file)
        // What one object's check found holds for the other's.
        try Data("garbage".utf8).write(to: suite.fileURL)
        #expect(throws: UnreadableDefaultsFile.self) { try suite.defaults.encode(1, forKey: "n") }
        #expect(second.unreadableFile()?.reason == suite.defaults.unreadableFile()?.reason)
        #expect(throws: UnreadableDefaultsFile.self) { try second.encode(1, forKey: "n") }
        #expect(try String(contentsOf: suite.fileURL, encoding: .utf8) == "garbage")
    }

    @Test("the guard holds through a UserDefaults subclass")
    func subclass() throws {
        let name = "DefaultsCoderTests.subclass.\(UUID().uuidString)"
        let defaults = try #require(AppDefaults(suiteName: name))
        let file = SuiteFile.configDirectory.appendingPathComponent(name + ".plist")
        defer {
            defaults.removePersistentDomain(forName: name)
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(atPath: file.path + ".lock")
        }
        #expect(DefaultsSuite.of(defaults).file?.url == file)
        try expectGuarded(defaults, file: file)
    }

    @Test("the guard holds for a suite named by an absolute path")
    func absolutePath() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DefaultsCoderTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("suite").path
        let defaults = try #require(UserDefaults(suiteName: path))
        let file = URL(fileURLWithPath: path + ".plist")
        #expect(DefaultsSuite.of(defaults).file?.url == file)
        // Measured: Foundation keeps such a suite at that path.
        defaults.set(1, forKey: "probe")
        defaults.synchronize()
        #expect(FileManager.default.fileExists(atPath: file.path))
        try expectGuarded(defaults, file: file)
    }

    /// Damages `file`, then expects a write to throw and leave it byte for byte.
    func expectGuarded(_ defaults: UserDefaults, file: URL) throws {
        let damaged = BinaryPlist.withSet
        try damaged.write(to: file)
        #expect(throws: UnreadableDefaultsFile(url: file, reason: "it holds a set, which preferences cannot")) {
            try defaults.encode(1, forKey: "x")
        }
        #expect(try Data(contentsOf: file) == damaged)
    }

    @Test("a link to nothing where the file would be: there is nothing to lose, so writes go on")
    func danglingLink() throws {
        let suite = TestSuite()
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("nothing-\(UUID().uuidString)/x.plist")
        try FileManager.default.createSymbolicLink(atPath: suite.fileURL.path, withDestinationPath: target.path)
        #expect(suite.defaults.unreadableFile() == nil)
        try suite.defaults.encode(1, forKey: "a")
        #expect(try suite.defaults.decode(Int.self, forKey: "a") == 1)
    }

    @Test("a symbolic link made after the first write stays a link: writes go to the file it names")
    func linkMadeLater() throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("linked-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        try FileManager.default.moveItem(at: suite.fileURL, to: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: suite.fileURL.path, withDestinationPath: elsewhere.path)
        try suite.defaults.encode(2, forKey: "b")
        let kind = try FileManager.default.attributesOfItem(atPath: suite.fileURL.path)[.type] as? FileAttributeType
        #expect(kind == .typeSymbolicLink)
        let values = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: elsewhere), format: nil) as? [String: Any])
        #expect(values["a"] as? Int == 1)
        #expect(values["b"] as? Int == 2)
    }

    @Test("a symbolic link pointed at another file between writes: the next write goes to the file it names now, and reads back here and in a new process")
    func linkPointedElsewhere() async throws {
        let suite = TestSuite()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("repointed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (first, second) = (directory.appendingPathComponent("first.plist"), directory.appendingPathComponent("second.plist"))
        let empty = try PropertyListSerialization.data(fromPropertyList: [String: Any](), format: .xml, options: 0)
        try empty.write(to: first)
        try FileManager.default.createSymbolicLink(atPath: suite.fileURL.path, withDestinationPath: first.path)
        // An object first used while the link names the first file.
        let defaults = makeDefaults(suiteName: suite.name)
        try defaults.encode(1, forKey: "a")
        try FileManager.default.removeItem(at: suite.fileURL)
        try FileManager.default.createSymbolicLink(atPath: suite.fileURL.path, withDestinationPath: second.path)
        try defaults.encode(2, forKey: "b")
        let values = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: second), format: nil) as? [String: Any])
        #expect(values["b"] as? Int == 2)
        #expect(try defaults.decode(Int.self, forKey: "b") == 2)
        #expect(try await SecondProcess.read(suite)["b"] as? Int == 2)
        let old = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: first), format: nil) as? [String: Any])
        #expect(old["b"] == nil)
    }

    /// What stands where the suite's file would be, that is not a file.
    enum NotAFile: String, CaseIterable, Sendable {
        case pipe, directory
    }

    @Test("a pipe or a directory where the file would be is refused at once, and left as it is", arguments: NotAFile.allCases)
    func notAFile(_ kind: NotAFile) async throws {
        let suite = TestSuite()
        let path = suite.fileURL.path
        switch kind {
        case .pipe: #expect(mkfifo(path, 0o600) == 0)
        case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        defer {
            // A reader still waiting for a writer (a failure) is let go; and the pipe is
            // removed before the suite, whose removal Foundation would make wait too.
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            try? FileManager.default.removeItem(atPath: path)
        }
        let outcome = Locked<String?>(nil)
        let finished = await finishes(within: 10) {
            let failure = thrown { try suite.defaults.encode(1, forKey: "a") }
            outcome.withLock { $0 = failure ?? "nothing" }
        }
        #expect(finished)
        #expect(outcome.withLock { $0 } == UnreadableDefaultsFile(url: suite.fileURL, reason: "it is not a regular file").description)
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == (kind == .pipe ? S_IFIFO : S_IFDIR))
    }

    @Test("a file whose mode says no one writes it is not replaced: the write throws and the file stays", arguments: [0o400, 0o444, 0o500])
    func readOnlyFile(mode: Int) throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        let before = try Data(contentsOf: suite.fileURL)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: suite.fileURL.path)
        let error = caught(DefaultsSuiteError.self) { try suite.defaults.encode(2, forKey: "a") }
        #expect(error?.operation == .write)
        #expect(error?.path == suite.fileURL.path)
        #expect(try Data(contentsOf: suite.fileURL) == before)
        let after = try FileManager.default.attributesOfItem(atPath: suite.fileURL.path)[.posixPermissions] as? Int
        #expect(after == mode)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: suite.fileURL.path)
        try suite.defaults.encode(3, forKey: "a")
        #expect(try suite.defaults.decode(Int.self, forKey: "a") == 3)
    }

    @Test("a file damaged after it was checked is caught at the next write")
    func damagedLater() throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        try suite.defaults.encode(2, forKey: "b")
        try Data("<?xml".utf8).write(to: suite.fileURL)
        #expect(throws: UnreadableDefaultsFile.self) { try suite.defaults.encode(3, forKey: "c") }
        #expect(try Data(contentsOf: suite.fileURL) == Data("<?xml".utf8))
    }
    #endif

    @Test("a file another suite's synchronize() is rewriting is not taken for a damaged one")
    func rewrittenByAnotherSuite() async throws {
        // Foundation's synchronize() of any suite also writes every other suite with
        // unsaved changes, in place (truncate, then write), outside this package's lock.
        // A check that reads the file in between sees it empty for a moment.
        let suite = TestSuite()
        let other = TestSuite("other")
        let (first, second) = (SendableAny(suite.defaults), SendableAny(other.defaults))
        let rewrite: @Sendable (Int) -> Void = { round in
            (first.value as! UserDefaults).set(String(repeating: "x", count: round % 4_000), forKey: "plain")
            (second.value as! UserDefaults).synchronize()
        }
        let writes = Stress.rounds(300)
        // The rewriting thread stops before the suites are removed: it writes no file after.
        let failures = try await whileRepeating([rewrite]) { () -> [String] in
            var failures: [String] = []
            for value in 0..<writes {
                if let failure = thrown(by: { try (first.value as! UserDefaults).encode(value, forKey: "counter") }) { failures.append(failure) }
            }
            return failures
        }
        #expect(failures == [])
        #expect(suite.defaults.integer(forKey: "counter") == writes - 1)
    }

    /// Where a write finds the file emptied by a plain write held up between its
    /// truncation and its write (`HeldUpDefaults`).
    enum HeldUpAt: String, CaseIterable, Sendable {
        /// When the change reads the suite's values, right after its `synchronize()`.
        case changeBegins
        /// When the write opens the file, after the change's body ran.
        case writeBegins
    }

    @Test(
        "a write that waits longer than two seconds for this process's synchronize() reads the file again, and finds it whole",
        arguments: HeldUpAt.allCases)
    func heldUpPlainWrite(at place: HeldUpAt) async throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        let defaults = try #require(HeldUpDefaults(suiteName: suite.name))
        defaults.file = suite.fileURL
        let sendable = SendableAny(defaults)
        let outcome = try await offPool { () -> String? in
            let defaults = sendable.value as! HeldUpDefaults
            return thrown {
                switch place {
                case .changeBegins:
                    defaults.steps.withLock { $0 = [.empty, .holdUp] }
                    try defaults.encode(2, forKey: "b")
                case .writeBegins:
                    try DefaultsSuite.change([defaults]) { values in
                        try values.set(2, forKey: "b")
                        defaults.steps.withLock { $0 = [.holdUp] }
                        defaults.emptyFile()
                    }
                }
            }
        }
        #expect(outcome == nil)
        #expect(defaults.steps.withLock { $0 } == [])
        let file = try PropertyListSerialization.propertyList(from: Data(contentsOf: suite.fileURL), format: nil) as? [String: Any]
        #expect(file?["a"] as? Int == 1)
        #expect(file?["b"] as? Int == 2)
    }

    /// What each side of `plainBesidePackage` does to its own keys.
    enum PlainRace: String, CaseIterable, Sendable {
        /// Plain `set` of new keys beside package writes of new keys.
        case bothSet
        /// Plain `removeObject` of stored keys beside package writes of new keys.
        case plainRemoves
        /// Plain `set` of new keys beside package resets of stored keys.
        case packageRemoves
    }

    @Test(
        "plain set or removeObject and synchronize() on one thread beside package writes on another: every change of both is kept",
        arguments: PlainRace.allCases, 0..<2)
    func plainBesidePackage(race: PlainRace, round: Int) async throws {
        // Foundation's synchronize() reads the file and writes it in place under its own
        // lock, not the package's: into the file a package write read, or over the one
        // it renamed there.
        let suite = TestSuite()
        let defaults = SendableAny(suite.defaults)
        let plainKeys = (0..<150).map { "plain\($0)" }
        let packageKeys = (0..<100).map { "package\($0)" }
        if race == .plainRemoves {
            for key in plainKeys { suite.defaults.set(-1, forKey: key) }
            suite.defaults.synchronize()
        }
        if race == .packageRemoves {
            for key in packageKeys { try suite.defaults.encode(-1, forKey: key) }
        }
        let finished = Locked(false)
        Thread {
            let defaults = defaults.value as! UserDefaults
            for (index, key) in plainKeys.enumerated() {
                if race == .plainRemoves { defaults.removeObject(forKey: key) } else { defaults.set(index, forKey: key) }
                defaults.synchronize()
            }
            finished.withLock { $0 = true }
        }.start()
        let failures = try await offPool { () -> [String] in
            let defaults = defaults.value as! UserDefaults
            var failures: [String] = []
            for (index, key) in packageKeys.enumerated() {
                let failure = thrown {
                    if race == .packageRemoves { try defaults.reset(DefaultsKey<Int>(key, default: 0)) } else { try defaults.encode(index, forKey: key) }
                }
                if let failure { failures.append(failure) }
            }
            while !finished.withLock({ $0 }) { usleep(1_000) }
            return failures
        }
        #expect(failures == [])
        let values = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: suite.fileURL), format: nil) as? [String: Any])
        let lostPlain = plainKeys.enumerated().filter { index, key in
            race == .plainRemoves ? values[key] != nil : values[key] as? Int != index
        }
        let lostPackage = packageKeys.enumerated().filter { index, key in
            race == .packageRemoves ? values[key] != nil : values[key] as? Int != index
        }
        #expect(lostPlain.map(\.element) == [], "round \(round)")
        #expect(lostPackage.map(\.element) == [], "round \(round)")
    }

    @Test("a file removed while a package write looks at it is not a refusal: every write lands, in a new file")
    func removedWhileChecked() async throws {
        // Foundation removes a suite's file when its copy of the suite is empty, at any
        // `synchronize()` on any thread. A write that finds the file gone between its
        // looks at it has nothing to lose and goes on; a refusal would lose the change.
        let suite = TestSuite()
        let path = suite.fileURL.path
        let remove: @Sendable (Int) -> Void = { _ in
            usleep(UInt32.random(in: 0..<300))
            unlink(path)
        }
        let defaults = SendableAny(suite.defaults)
        let failures = try await whileRepeating([remove]) { () -> [String] in
            let defaults = defaults.value as! UserDefaults
            var failures: [String] = []
            for index in 0..<Stress.rounds(3_000) {
                if let failure = thrown(by: { try defaults.encode(index, forKey: "k\(index % 10)") }) { failures.append(failure) }
            }
            return failures
        }
        #expect(failures == [])
        try suite.defaults.encode(7, forKey: "last")
        #expect(try suite.defaults.decode(Int.self, forKey: "last") == 7)
    }

    @Test("a process out of descriptors cannot write, and says so: the file is not called unreadable, and keeps its value")
    func outOfDescriptors() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("descriptors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await run("defaults-coder-probe", ["no-descriptors", "spent"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(result.status == 0, "\(result.errors)")
        let file = directory.appendingPathComponent("spent.plist").path
        #expect(
            String(decoding: result.output, as: UTF8.self)
                == "Cannot write the UserDefaults file \(file): Too many open files. Nothing was changed.\nreports []\nmoved nothing\na 1\n")
    }

    @Test("no file yet is not a problem")
    func noFile() throws {
        let suite = TestSuite()
        #expect(suite.defaults.unreadableFile() == nil)
        #expect(try suite.defaults.decode(Int.self, forKey: "a") == nil)
        try suite.defaults.encode(1, forKey: "a")
        #expect(try suite.defaults.decode(Int.self, forKey: "a") == 1)
    }

    #if os(Linux)
    @Test("a read never waits for a writer: reading an absent key, and finding an unreadable file, take no lock")
    func readsTakeNoLock() async throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "present")
        let file = try #require(DefaultsSuite.of(suite.defaults).file)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Another writer holds the suite's lock, in this process and across processes.
        Thread {
            try? file.withLock {
                holding.signal()
                release.wait()
            }
        }.start()
        try await offPool { holding.wait() }
        defer { release.signal() }
        let key = DefaultsKey<Int>(uniqueKey("absent"), default: 7)
        // A read that waited would wait until the release below: any bound tells it, and
        // a generous one leaves room for a slow machine (the sanitizers' runs).
        #expect(await finishes(within: 10) { _ = try? suite.defaults.read(key) })
        #expect(await finishes(within: 10) { _ = suite.defaults.unreadableFile() })
    }

    @Test(
        "a change holds the suite's own file locked, the file its write renamed into place included, so a lock file removed meanwhile lets no other process in"
    )
    func fileLockedThroughRename() throws {
        let suite = TestSuite()
        try suite.defaults.encode(1, forKey: "a")
        let file = try #require(DefaultsSuite.of(suite.defaults).file)
        let path = suite.fileURL.path
        /// Whether another open file of `path` could be locked now, as another process's:
        /// `flock(2)` locks of two open files conflict in one process as in two.
        func isFree(_ path: String) -> Bool {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return true }
            defer { close(descriptor) }
            return flock(descriptor, LOCK_EX | LOCK_NB) == 0
        }
        var seen: [String] = []
        var identities: [UInt] = []
        func look(_ moment: String) {
            var info = stat()
            if stat(path, &info) == 0 { identities.append(UInt(info.st_ino)) }
            seen.append("\(moment): \(isFree(path) ? "free" : "locked")")
        }
        look("before")
        try file.withLock {
            look("held")
            #expect(unlink(file.lockPath) == 0)
            try suite.defaults.encode(2, forKey: "a")
            look("renamed")
            try suite.defaults.encode(3, forKey: "a")
            look("renamed again")
        }
        look("after")
        #expect(seen == ["before: free", "held: locked", "renamed: locked", "renamed again: locked", "after: free"])
        // Each write renamed a new file into place (an inode number freed may be used
        // again later, so only neighbours are compared).
        #expect(identities.count == 5 && identities[1] != identities[2] && identities[2] != identities[3])
        #expect(try suite.defaults.decode(Int.self, forKey: "a") == 3)
    }
    #endif
}

/// A subclass, as apps make to add their own accessors.
final class AppDefaults: UserDefaults {}

/// A suite whose `synchronize()` plays a plain write of another thread of this process,
/// held up between its truncation and its write: a `synchronize()` of this process
/// waits for it (Foundation holds its lock through the write), as long as it is held up.
final class HeldUpDefaults: UserDefaults {
    /// What one `synchronize()` does before Foundation's own.
    enum Step: Equatable, Sendable {
        /// After it: the other thread's write begins, and empties the file.
        case empty
        /// Waits longer than a write's two seconds, then the other thread's write ends:
        /// the file holds what it held before it was emptied.
        case holdUp
    }

    /// What the next calls do, in turn; a call with none left is Foundation's alone.
    let steps = Locked<[Step]>([])
    /// The suite's file.
    var file: URL?
    private let held = Locked<Data?>(nil)

    override func synchronize() -> Bool {
        let step = steps.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        switch step {
        case .empty?:
            let result = super.synchronize()
            emptyFile()
            return result
        case .holdUp?:
            Thread.sleep(forTimeInterval: 2.2)
            if let bytes = held.withLock({ $0 }) { try? bytes.write(to: file!) }
            return super.synchronize()
        case nil:
            return super.synchronize()
        }
    }

    /// The other thread's write begins: it empties the file in place.
    func emptyFile() {
        held.withLock { $0 = try? Data(contentsOf: file!) }
        try? Data().write(to: file!)
    }
}

/// A value stored, and another written over it: whether the file's bytes change, and
/// what the file holds after.
struct RewrittenValue: @unchecked Sendable, CustomTestStringConvertible {
    // Unchecked: constants, property-list trees that nothing mutates.
    let name: String
    let stored: (key: String, tree: Any)
    let written: (key: String, tree: Any)
    /// Whether the write replaces the file.
    let replaces: Bool
    /// Lines of the file after the write.
    let lines: [String]

    var testDescription: String { name }

    static let all: [RewrittenValue] = [
        RewrittenValue(name: "the same integer", stored: ("k", 1), written: ("k", 1), replaces: false, lines: ["<integer>1</integer>"]),
        RewrittenValue(
            name: "the same dictionary", stored: ("k", ["a": [1, "b"]]), written: ("k", ["a": [1, "b"]]), replaces: false,
            lines: ["<key>a</key>", "<integer>1</integer>", "<string>b</string>"]),
        RewrittenValue(
            name: "the same date", stored: ("k", Date(timeIntervalSince1970: 0)), written: ("k", Date(timeIntervalSince1970: 0)), replaces: false,
            lines: ["<date>1970-01-01T00:00:00Z</date>"]),
        // Foundation takes these for the same value; their bytes differ.
        RewrittenValue(name: "an integer over the real it equals", stored: ("k", 1.0), written: ("k", 1), replaces: true, lines: ["<integer>1</integer>"]),
        RewrittenValue(name: "a Boolean over the integer 1", stored: ("k", 1), written: ("k", true), replaces: true, lines: ["<true/>"]),
        RewrittenValue(
            name: "a key of another spelling", stored: ("e\u{301}", 1), written: ("\u{e9}", 1), replaces: true,
            lines: ["<key>e\u{301}</key>", "<key>\u{e9}</key>"]),
        RewrittenValue(name: "another value", stored: ("k", 1), written: ("k", 2), replaces: true, lines: ["<integer>2</integer>"]),
    ]
}

@Suite("SuiteFile writing", .enabled(if: Backend.isFile, "the file backend's"))
struct SuiteFileWritingTests {
    @Test(
        "a write that leaves every byte of the file as it is writes nothing; one that changes a byte replaces the file, also where Foundation takes the values for the same",
        arguments: RewrittenValue.all)
    func unchangedBytes(_ row: RewrittenValue) throws {
        let suite = TestSuite()
        try DefaultsSuite.change([suite.defaults]) { try $0.set(row.stored.tree, forKey: row.stored.key) }
        let path = suite.fileURL.path
        var before = stat()
        #expect(stat(path, &before) == 0)
        let bytes = try Data(contentsOf: suite.fileURL)
        try DefaultsSuite.change([suite.defaults]) { try $0.set(row.written.tree, forKey: row.written.key) }
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect((after.st_ino != before.st_ino) == row.replaces)
        let text = try String(contentsOf: suite.fileURL, encoding: .utf8)
        if !row.replaces { #expect(Data(text.utf8) == bytes) }
        // Line by line, scalar for scalar: `String` would take two spellings for one.
        let lines = Set(text.split(separator: "\n").map { Array($0.trimmingCharacters(in: .whitespaces).unicodeScalars) })
        for line in row.lines { #expect(lines.contains(Array(line.unicodeScalars)), "\(line)") }
    }
}

#if !canImport(Darwin)
@Suite("SuiteFile hearing", .enabled(if: Backend.isFile, "the file backend's"))
struct SuiteFileHearingTests {
    @Test(
        "hearing the file changed rechecks the observed keys unless it holds this process's last write and no other writer's change went unheard, also when that write came after the other's"
    )
    func ownWritesSkipRecheck() throws {
        let suite = TestSuite()
        let file = try #require(DefaultsSuite.of(suite.defaults).file)
        try suite.defaults.encode(1, forKey: "mine")
        #expect(!file.isOwnLastWrite(), "the first hearing rechecks: nothing was heard before")
        #expect(file.isOwnLastWrite(), "this process's write, published as it was written")
        // Another writer rewrites the file in place, as Foundation's synchronize() does.
        let other = try PropertyListSerialization.data(fromPropertyList: ["mine": 1, "theirs": 2], format: .xml, options: 0)
        let handle = try FileHandle(forWritingTo: suite.fileURL)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: other)
        try handle.close()
        #expect(!file.isOwnLastWrite(), "the other writer's bytes")
        // This process writes before the other writer's change is heard: the file holds
        // this process's bytes, and "theirs" is still unheard.
        try suite.defaults.encode(3, forKey: "mine")
        #expect(!file.isOwnLastWrite(), "the other writer's change, still unheard")
        #expect(file.isOwnLastWrite(), "heard once")
    }
}
#endif
