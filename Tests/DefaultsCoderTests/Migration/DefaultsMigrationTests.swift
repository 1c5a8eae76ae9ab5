// Migrations through real suites, read back by a second process; failures that must
// leave every byte of the file as it was; a child process killed in the middle of a
// step; two processes migrating at once.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

extension DefaultsKeys {
    fileprivate static let fontSize = DefaultsKey<Double>("appearance.fontSize", default: 13)
}

/// What version 2 of the README's example app wants: `fontSize` as a `Double` under
/// `appearance.fontSize`, where version 1 stored an `Int` under `font`.
private func appMigrations(converted: Locked<Int> = Locked(0)) -> [DefaultsMigration] {
    [
        DefaultsMigration(version: 1, .rename("username", to: "account.name")),
        DefaultsMigration(
            version: 2,
            .convert("font", from: Int.self, to: .fontSize) { size in
                converted.withLock { $0 += 1 }
                return Double(size)
            }),
    ]
}

/// A suite as version 1 of the app left it.
private func versionOneSuite(_ label: String = #function) -> TestSuite {
    let suite = TestSuite(label)
    suite.defaults.set(14, forKey: "font")
    suite.defaults.set("ada", forKey: "username")
    suite.defaults.set("kept", forKey: "untouched")
    suite.defaults.synchronize()
    return suite
}

/// The suite's file, byte for byte, after Foundation wrote what it holds.
private func fileBytes(_ suite: TestSuite) -> Data? {
    suite.defaults.synchronize()
    return try? Data(contentsOf: suite.fileURL)
}

private struct Layout: Codable, Equatable, Sendable {
    var columns: [String]
    var compact: Bool
}

private enum Density: Int, Codable, Sendable {
    case comfortable = 0, compact = 1
}

@Suite("DefaultsMigration")
struct DefaultsMigrationTests {

    @Test("the worked example: an Int under font becomes a Double under appearance.fontSize, once")
    func workedExample() async throws {
        let suite = versionOneSuite()
        let converted = Locked(0)
        #expect(try suite.defaults.migrate(appMigrations(converted: converted)) == 2)
        #expect(suite.defaults[.fontSize] == 14.0)
        #expect(suite.defaults.object(forKey: "font") == nil)
        #expect(suite.defaults.string(forKey: "account.name") == "ada")
        #expect(suite.defaults.object(forKey: "username") == nil)
        #expect(suite.defaults.string(forKey: "untouched") == "kept")
        #expect(try suite.defaults.migrationVersion() == 2)

        // A fresh process reads the new state.
        let read = try await SecondProcess.read(suite)
        #expect(read["appearance.fontSize"] as? Double == 14.0)
        #expect(read["font"] == nil)
        #expect(read[DefaultsMigration.versionKey] as? Int == 2)

        // Run again: nothing runs.
        let before = fileBytes(suite)
        #expect(try suite.defaults.migrate(appMigrations(converted: converted)) == 2)
        #expect(converted.withLock { $0 } == 1)
        #expect(fileBytes(suite) == before)
    }

    @Test("a stored type changes: Int to an enum, [String] to a struct, a JSON blob to the native form")
    func typeChanges() async throws {
        let suite = TestSuite()
        let blob = try JSONEncoder().encode(Layout(columns: ["name"], compact: false))
        suite.defaults.set(1, forKey: "density")
        suite.defaults.set(["name", "size"], forKey: "columns")
        suite.defaults.set(blob, forKey: "layout")
        let density = DefaultsKey<Density>("density", default: .comfortable)
        let layout = DefaultsKey<Layout?>("layout")
        try suite.defaults.migrate(
            DefaultsMigration(
                version: 1,
                .convert("density", from: Int.self, to: density) { raw in
                    guard let density = Density(rawValue: raw) else { throw CocoaError(.coderInvalidValue) }
                    return density
                },
                .convert("columns", from: [String].self, to: "table") { Layout(columns: $0, compact: true) },
                .convert("layout", from: Layout.self, to: layout, legacy: .json) { $0 }))
        #expect(suite.defaults[density] == .compact)
        #expect(try suite.defaults.decode(Layout.self, forKey: "table") == Layout(columns: ["name", "size"], compact: true))
        #expect(suite.defaults.object(forKey: "columns") == nil)
        #expect(suite.defaults[layout] == Layout(columns: ["name"], compact: false))
        let stored = try #require(suite.defaults.dictionary(forKey: "layout"))
        #expect(stored["compact"] as? Bool == false)
    }

    @Test("keys are removed, and a key that holds nothing is left alone")
    func removeAndAbsent() throws {
        let suite = versionOneSuite()
        try suite.defaults.migrate(
            DefaultsMigration(version: 1, .remove("username", "never.stored"), .rename("absent", to: "elsewhere")))
        #expect(suite.defaults.object(forKey: "username") == nil)
        #expect(suite.defaults.object(forKey: "elsewhere") == nil)
        #expect(suite.defaults.integer(forKey: "font") == 14)
    }

    @Test("a key moves into another suite, as settings move into an App Group")
    func moveIntoAnotherSuite() async throws {
        let suite = versionOneSuite()
        let group = TestSuite("group")
        try suite.defaults.migrate(DefaultsMigration(version: 1, .move("font", to: "shared.font", intoSuite: group.name)))
        #expect(suite.defaults.object(forKey: "font") == nil)
        #expect(group.defaults.integer(forKey: "shared.font") == 14)
        let read = try await SecondProcess.read(group)
        #expect(read["shared.font"] as? Int == 14)
        #expect(try await SecondProcess.read(suite)["font"] == nil)
    }

    /// Ways a pending migration fails, each with the exact error.
    enum Failure: String, CaseIterable, CustomStringConvertible {
        case doesNotDecode, conversionThrows, renameOntoAnotherValue, convertOntoAnotherKey
        var description: String { rawValue }

        var migrations: [DefaultsMigration] {
            let first = DefaultsMigration(version: 1, .rename("username", to: "account.name"), .remove("untouched"))
            switch self {
            case .doesNotDecode:
                return [first, DefaultsMigration(version: 2, .convert("username2", from: Int.self, to: "n") { $0 })]
            case .conversionThrows:
                return [first, DefaultsMigration(version: 2, .convert("font", from: Int.self) { _ -> Int in throw CocoaError(.featureUnsupported) })]
            case .renameOntoAnotherValue:
                return [first, DefaultsMigration(version: 2, .rename("font", to: "other"))]
            case .convertOntoAnotherKey:
                return [first, DefaultsMigration(version: 2, .convert("font", from: Int.self, to: "other") { $0 })]
            }
        }

        var expected: String {
            switch self {
            case .doesNotDecode:
                return #"Migration to version 2 failed at "username2": Expected BinaryInteger at SELF, found String. Nothing was changed."#
            case .conversionThrows:
                return #"Migration to version 2 failed at "font": \#(CocoaError(.featureUnsupported)). Nothing was changed."#
            case .renameOntoAnotherValue:
                return #"Migration to version 2 failed at "font": "other" already holds a different value. Nothing was changed."#
            case .convertOntoAnotherKey:
                return #"Migration to version 2 failed at "font": "other" already holds a value (String). Nothing was changed."#
            }
        }
    }

    @Test("a failing step leaves the suite exactly as it was, earlier versions included", arguments: Failure.allCases)
    func failureChangesNothing(failure: Failure) async throws {
        let suite = versionOneSuite()
        suite.defaults.set("not a number", forKey: "username2")
        suite.defaults.set("in the way", forKey: "other")
        let before = fileBytes(suite)
        let readBefore = try await SecondProcess.read(suite)
        let error = caught(DefaultsMigrationError.self) { try suite.defaults.migrate(failure.migrations) }
        #expect(error?.description == failure.expected)
        #expect(error?.version == 2)
        #expect(fileBytes(suite) == before)
        #expect(suite.defaults.string(forKey: "username") == "ada")
        #expect(suite.defaults.object(forKey: "account.name") == nil)
        #expect(try suite.defaults.migrationVersion() == 0)
        let readAfter = try await SecondProcess.read(suite)
        #expect(NSDictionary(dictionary: readAfter).isEqual(to: readBefore))
    }

    @Test("the path of a value that does not decode is in the error")
    func failurePath() throws {
        let suite = TestSuite()
        try suite.defaults.encode(JSONValue.object(["columns": .array([.string("a")]), "compact": .string("yes")]), forKey: "layout")
        let error = caught(DefaultsMigrationError.self) {
            try suite.defaults.migrate(DefaultsMigration(version: 1, .convert("layout", from: Layout.self) { $0 }))
        }
        #expect(error?.reason == "Expected Bool at SELF.compact, found String")
        #expect(readablePath(of: error?.underlyingError) == "SELF.compact")
    }

    @Test("a move into the suite being migrated is refused instead of waiting on its own lock")
    func moveIntoItself() async throws {
        let suite = versionOneSuite()
        let name = suite.name
        let reason = Locked<String?>(nil)
        // On a thread of its own, so that a migration waiting on its own lock fails the
        // test instead of hanging the run.
        let finished = await finishes {
            let error = caught(DefaultsMigrationError.self) {
                try UserDefaults(suiteName: name)!.migrate(DefaultsMigration(version: 1, .move("font", intoSuite: name)))
            }
            reason.withLock { $0 = error?.reason }
        }
        #expect(finished)
        // The suite as its backend names it: its file's path, or its name.
        let identity = Backend.isFile ? suite.fileURL.path : name
        #expect(reason.withLock { $0 } == "suite \(name) is the suite being migrated (\(identity))")
        #expect(suite.defaults.integer(forKey: "font") == 14)
        #expect(try suite.defaults.migrationVersion() == 0)
    }

    #if !canImport(Darwin)
    @Test(
        "a move into the suite being migrated, spelled another way, is refused instead of waiting on its own lock", .enabled(if: Backend.isFile, "the file backend's"),
        arguments: ["dot", "link"])
    func moveIntoItselfSpelledOtherwise(spelling: String) async throws {
        let suite = versionOneSuite("spelled" + spelling)
        let directory = SuiteFile.configDirectory.path
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)
        defer { try? FileManager.default.removeItem(atPath: link) }
        let other = spelling == "dot" ? "\(directory)/./\(suite.name)" : "\(link)/\(suite.name)"
        let name = suite.name
        let error = Locked<DefaultsMigrationError?>(nil)
        let finished = await finishes {
            let caughtError = caught(DefaultsMigrationError.self) {
                try UserDefaults(suiteName: name)!.migrate(DefaultsMigration(version: 4, .move("font", intoSuite: other)))
            }
            error.withLock { $0 = caughtError }
        }
        #expect(finished)
        #expect(error.withLock { $0?.version } == 4)
        #expect(error.withLock { $0?.key } == "font")
        #expect(suite.defaults.integer(forKey: "font") == 14)
        #expect(try suite.defaults.migrationVersion() == 0)
    }
    #endif

    @Test("versions that do not increase, or start below 1, are refused")
    func badVersions() throws {
        let suite = versionOneSuite()
        let descending = caught(DefaultsMigrationError.self) {
            try suite.defaults.migrate(DefaultsMigration(version: 2), DefaultsMigration(version: 2))
        }
        #expect(descending?.description == #"Migration to version 2 failed at "DefaultsCoder.version": versions must increase (2 follows 2). Nothing was changed."#)
        let zero = caught(DefaultsMigrationError.self) { try suite.defaults.migrate(DefaultsMigration(version: 0)) }
        #expect(zero?.reason == "versions start at 1")
        #expect(try suite.defaults.migrationVersion() == 0)
    }

    @Test("a suite at a later version than the app knows (a downgrade) is left alone")
    func laterVersion() throws {
        let suite = versionOneSuite()
        suite.defaults.set(5, forKey: DefaultsMigration.versionKey)
        let converted = Locked(0)
        #expect(try suite.defaults.migrate(appMigrations(converted: converted)) == 5)
        #expect(converted.withLock { $0 } == 0)
        #expect(suite.defaults.integer(forKey: "font") == 14)
    }

    @Test("a migration refuses to run on an unreadable suite file, and leaves it as it is", .enabled(if: Backend.isFile, "the file backend's"))
    func unreadableFile() throws {
        let suite = TestSuite()
        let garbage = Data("<?xml version=\"1.0\"?><plist><dict><key>font</key>".utf8)
        try FileManager.default.createDirectory(at: suite.fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try garbage.write(to: suite.fileURL)
        let error = caught(UnreadableDefaultsFile.self) { try suite.defaults.migrate(appMigrations()) }
        #expect(error?.url == suite.fileURL)
        #expect(try Data(contentsOf: suite.fileURL) == garbage)
    }

    @Test("observers hear the keys a migration changed")
    func observersHear() async throws {
        let suite = versionOneSuite()
        let events = Locked<[[Double]]>([])
        let observation = suite.defaults.observe(.fontSize, initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        try suite.defaults.migrate(appMigrations())
        #expect(await eventually { events.withLock { $0 } == [[13, 14]] })
        withExtendedLifetime(observation) {}
    }

    // MARK: Other processes

    @Test("a migration run by another process is not run again here")
    func ranInAnotherProcess() async throws {
        let suite = versionOneSuite()
        let result = try await run("defaults-coder-probe", ["migrate", suite.name])
        #expect(String(decoding: result.output, as: UTF8.self) == "converting\nversion 2\n")
        let converted = Locked(0)
        #expect(try suite.defaults.migrate(appMigrations(converted: converted)) == 2)
        #expect(converted.withLock { $0 } == 0)
        #expect(suite.defaults[.fontSize] == 14)
    }

    @Test("two processes migrating at once: one converts, the other finds it done")
    func twoProcessesAtOnce() async throws {
        let suite = versionOneSuite()
        let name = suite.name
        async let first = run("defaults-coder-probe", ["migrate", name])
        async let second = run("defaults-coder-probe", ["migrate", name])
        let outputs = try await [first, second].map { String(decoding: $0.output, as: UTF8.self) }
        #expect(outputs.sorted() == ["converting\nversion 2\n", "version 2\n"])
        let read = try await SecondProcess.read(suite)
        #expect(read["appearance.fontSize"] as? Double == 14)
        #expect(read["account.name"] as? String == "ada")
    }

    @Test(
        "four processes migrating one suite at once, as an app and its extensions at launch: the step runs once, in one of them",
        arguments: 1...3)
    func fourProcessesAtOnce(round: Int) async throws {
        let suite = versionOneSuite()
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 {
                group.addTask { String(decoding: try await run("defaults-coder-probe", ["migrate", suite.name]).output, as: UTF8.self) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outputs.sorted() == ["converting\nversion 2\n", "version 2\n", "version 2\n", "version 2\n"])
        let read = try await SecondProcess.read(suite)
        #expect(read["appearance.fontSize"] as? Double == 14)
        #expect(read["account.name"] as? String == "ada")
        #expect(read[DefaultsMigration.versionKey] as? Int == 2)
    }

    @Test(
        "four processes migrate and write while a clean-up removes the suite's lock file again and again: the step runs once and every write is kept, in 100 of 100 rounds"
    )
    func lockFileRemovedWhileHeld() async throws {
        var removals = 0
        for round in 0..<Stress.rounds(100) {
            let suite = versionOneSuite("removed\(round)")
            let lockFile = suite.fileURL.path + ".lock"
            let stop = Locked(false)
            // Removes the lock file whenever one is there, held or not: the next process
            // then makes a new one, which no process holds.
            let cleanUp = Task {
                try await offPool { () -> Int in
                    var removed = 0
                    while !stop.withLock({ $0 }) {
                        if unlink(lockFile) == 0 { removed += 1 }
                        usleep(300)
                    }
                    return removed
                }
            }
            let results = try await withThrowingTaskGroup(of: (output: Data, errors: String, status: Int32).self) { group in
                for index in 0..<4 { group.addTask { try await run("defaults-coder-probe", ["migrate-write", suite.name, "w\(index)"]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            stop.withLock { $0 = true }
            removals += try await cleanUp.value
            #expect(results.map(\.status) == [0, 0, 0, 0], "round \(round): \(results.map(\.errors))")
            let outputs = results.map { String(decoding: $0.output, as: UTF8.self) }.sorted()
            #expect(outputs == ["converting\nversion 2\n", "version 2\n", "version 2\n", "version 2\n"], "round \(round)")
            let read = try await SecondProcess.read(suite)
            #expect(read["appearance.fontSize"] as? Double == 14, "round \(round)")
            #expect(read["account.name"] as? String == "ada", "round \(round)")
            #expect(read[DefaultsMigration.versionKey] as? Int == 2, "round \(round)")
            // Plain writes of other processes are ordered by the file backend's lock, and on
            // Apple platforms by cfprefsd; the preferences backend on Linux stands on
            // Foundation's own synchronize(), which merges with no lock between processes.
            if Backend.isFile {
                #expect((0..<4).map { read["w\($0)"] as? Int } == [2, 2, 2, 2], "round \(round)")
            }
        }
        // The clean-up did remove lock files while processes held them.
        #expect(removals > 0)
    }

    @Test("a process killed in the middle of a step leaves the old state; run again, it migrates")
    func killedInTheMiddle() async throws {
        let suite = versionOneSuite()
        let before = fileBytes(suite)
        let name = suite.name
        try await offPool {
            let process = Process()
            process.executableURL = try builtExecutable("defaults-coder-probe")
            process.arguments = ["migrate", name, "pause"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var said = ""
            while !said.contains("in step") {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                said += String(decoding: data, as: UTF8.self)
            }
            #expect(said.contains("in step"))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #expect(fileBytes(suite) == before)
        #expect(try suite.defaults.migrationVersion() == 0)
        let read = try await SecondProcess.read(suite)
        #expect(read["username"] as? String == "ada")
        #expect(read["account.name"] == nil)

        #expect(try suite.defaults.migrate(appMigrations()) == 2)
        #expect(suite.defaults[.fontSize] == 14)
    }

    /// Two migrations: the second doubles "n".
    private static let doubling = [
        DefaultsMigration(version: 1, .rename("m", to: "n")),
        DefaultsMigration(version: 2, .convert("n", from: Int.self) { $0 * 2 }),
    ]

    @Test(
        "a damaged version record stops the migrations instead of running them again",
        arguments: [
            (SendableAny(" 2"), "String"), (SendableAny(true), "Bool"), (SendableAny(1.5), "Double"), (SendableAny(-1), "Int"),
            (SendableAny(0), "Int"), (SendableAny("two"), "String"), (SendableAny(["version": 2]), "Dictionary"), (SendableAny(Data([2])), "Data"),
        ])
    func damagedRecord(record: SendableAny, kind: String) throws {
        let suite = TestSuite()
        suite.defaults.set(10, forKey: "m")
        #expect(try suite.defaults.migrate(Self.doubling) == 2)
        #expect(suite.defaults.integer(forKey: "n") == 20)
        suite.defaults.set(record.value, forKey: DefaultsMigration.versionKey)
        suite.defaults.synchronize()
        let error = caught(DefaultsMigrationError.self) { try suite.defaults.migrate(Self.doubling) }
        #expect(error?.key == DefaultsMigration.versionKey)
        #expect(error?.version == 2)
        #expect(error?.reason.hasPrefix("the recorded version is \(kind): ") == true, "\(String(describing: error?.reason))")
        #expect(suite.defaults.integer(forKey: "n") == 20)
        #expect(throws: DefaultsMigrationError.self) { try suite.defaults.migrationVersion() }
    }

    @Test("a registered default or a launch-argument-like value for the record key changes neither migrate nor migrationVersion")
    func recordReadFromTheSuite() async throws {
        let suite = TestSuite()
        suite.defaults.set(10, forKey: "m")
        // Registered defaults are the process's, for every suite: alone among the tests
        // that change what the process shares, and put back after.
        try await ProcessWideState.exclusively { () async throws in
            suite.defaults.register(defaults: [DefaultsMigration.versionKey: 2])
            defer { suite.defaults.register(defaults: [DefaultsMigration.versionKey: 0]) }
            #expect(try suite.defaults.migrationVersion() == 0)
            #expect(try suite.defaults.migrate(Self.doubling) == 2)
            #expect(suite.defaults.integer(forKey: "n") == 20)
        }
    }
}
