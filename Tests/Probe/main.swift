// A second process for the tests: it reads a suite's file as a fresh process sees it,
// writes values into a suite from another process, and reports what Foundation made
// of its own launch arguments.
//
//      defaults-coder-probe read SUITE           the suite's values, as a binary plist on stdout
//      defaults-coder-probe write SUITE FILE     stores each key of the binary plist FILE
//      defaults-coder-probe argument KEY …       object(forKey:) of the standard defaults, as a binary plist
//      defaults-coder-probe migrate SUITE [pause|slow] runs `Migrations.app` on the suite,
//                                                 saying what it does on stdout; `pause` stops
//                                                 in step 2, `slow` takes 20 ms there
//      defaults-coder-probe migrate-write SUITE KEY  migrates as `migrate SUITE slow`, then
//                                                 encodes the version under KEY
//      defaults-coder-probe hammer SUITE MODE    writes the key "n" with MODE (encode, reset,
//                                                 subscript, migrate) until it is killed
//      defaults-coder-probe keys SUITE PREFIX N  encodes PREFIX0 … PREFIX(N-1), one write each
//      defaults-coder-probe change SUITE KEY HOW VALUE  sets the Int KEY to VALUE (0: its
//                                                 default) through HOW: encode, subscript,
//                                                 reset, resetAll, migrate, or foundation
//                                                 (plain set + synchronize)
//      defaults-coder-probe count SUITE KEY FROM N  encodes FROM … FROM+N-1 under KEY, one
//                                                 write each
//      defaults-coder-probe deep SUITE DEPTH [read]  stores a value of DEPTH nested
//                                                 dictionaries under "deep" (unless `read`),
//                                                 then reads it back through every door on a
//                                                 512 KiB thread of a fresh object: says "ok"
//      defaults-coder-probe late-config SUITE DIR  sets XDG_CONFIG_HOME to DIR (after launch),
//                                                 then encodes 1 under "a" and reads it back
//                                                 through Foundation: says "1" when it does
//      defaults-coder-probe standard-pair N plain|observed  writes "pair" N times through an
//                                                 object named after its own domain, reads it
//                                                 through `.standard` (plain Foundation, or the
//                                                 package and an observer): says how many reads
//                                                 gave something else
//      defaults-coder-probe many-suites PREFIX N LIMIT  with the open-file limit at LIMIT,
//                                                 encodes I under "n" in suite PREFIXI for
//                                                 each I below N, migrates each ("n" renamed
//                                                 "m"), reads each back: says what failed
//      defaults-coder-probe no-descriptors SUITE  encodes 1 under "a", then 2 once every
//                                                 descriptor but one is taken: says the error,
//                                                 whether the file was called unreadable, and
//                                                 what "a" holds once they are let go
//      defaults-coder-probe launch SUITE -KEY VALUE …  reads each launch argument as every
//                                                 number type, writes "volume", and says what
//                                                 it read and what was reported, as a binary plist

import DefaultsCoder
import Foundation

/// Writes a line to stdout at once, for a test that waits for it.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The migrations of the README's worked example, as an app at version 2 declares them.
enum Migrations {
    /// How step 2 takes its time: not at all, for a minute (a test kills the process), or
    /// 20 ms (a window for a test to act in while the lock is held).
    enum Hold: String {
        case none, pause, slow
    }

    static func app(hold: Hold) -> [DefaultsMigration] {
        [
            DefaultsMigration(version: 1, .rename("username", to: "account.name")),
            DefaultsMigration(
                version: 2,
                .convert("font", from: Int.self, to: "appearance.fontSize") { size in
                    say("converting")
                    if hold == .slow { usleep(20_000) }
                    if hold == .pause {
                        say("in step")
                        // Held for a minute whatever signal ends a sleep early: the test
                        // that waits on this step kills the process itself.
                        let end = Date().addingTimeInterval(60)
                        while Date() < end { sleep(1) }
                    }
                    return Double(size)
                }),
        ]
    }
}

func output(_ plist: Any) {
    do {
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        FileHandle.standardOutput.write(data)
    } catch {
        FileHandle.standardError.write(Data("cannot serialize: \(error)\n".utf8))
        exit(1)
    }
}

/// Does what the arguments say; returns the exit status. (Every object is released
/// before the process exits, so that LeakSanitizer sees nothing held at exit.)
func run(_ arguments: [String]) -> Int32 {
    switch arguments.first {
    case "read" where arguments.count == 2:
        output(UserDefaults.standard.persistentDomain(forName: arguments[1]) ?? [:])
        return 0
    case "write" where arguments.count == 3:
        guard let defaults = UserDefaults(suiteName: arguments[1]),
            let data = try? Data(contentsOf: URL(fileURLWithPath: arguments[2])),
            let values = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else {
            return 2
        }
        for (key, value) in values { defaults.set(value, forKey: key) }
        return defaults.synchronize() ? 0 : 1
    case "deep" where arguments.count == 3 || arguments.count == 4:
        guard let depth = Int(arguments[2]), let defaults = UserDefaults(suiteName: arguments[1]) else { return 2 }
        let value = (1..<depth).reduce(PropertyListValue.dictionary(["leaf": 1])) { inner, _ in .dictionary(["k": inner]) }
        do {
            if arguments.count == 3 { try defaults.encode(value, forKey: "deep") }
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
        let name = arguments[1]
        // The reading thread hands its verdict over through the semaphore's ordering.
        final class Verdict: @unchecked Sendable {
            var text = ""
        }
        let verdict = Verdict()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let fresh = UserDefaults(suiteName: name)!
            let doors: [(String, Any?)] = [
                ("object(forKey:)", fresh.object(forKey: "deep")),
                ("dictionaryRepresentation()", fresh.dictionaryRepresentation()["deep"]),
                ("persistentDomain(forName:)", fresh.persistentDomain(forName: name)?["deep"]),
            ]
            let missing = doors.filter { $0.1 == nil }.map(\.0)
            // The typed read's own failure, if any, is the verdict's: not logged.
            DefaultsFailure.handler = { _ in }
            let typed = fresh[DefaultsKey<PropertyListValue?>("deep")]
            verdict.text = missing.isEmpty && typed == value ? "ok" : "missing \(missing), typed \(typed == value)"
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        say(verdict.text)
        return 0
    case "late-config" where arguments.count == 3:
        #if os(Linux)
        setenv("XDG_CONFIG_HOME", arguments[2], 1)
        #endif
        guard let defaults = UserDefaults(suiteName: arguments[1]) else { return 2 }
        do {
            try defaults.encode(1, forKey: "a")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
        let fresh = UserDefaults(suiteName: arguments[1])!
        fresh.synchronize()
        say("\(fresh.object(forKey: "a") ?? "nothing")")
        return 0
    case "argument":
        var found: [String: Any] = [:]
        for key in arguments.dropFirst() {
            // Stop at the first launch argument: the keys come before them.
            if key.hasPrefix("-") { break }
            if let value = UserDefaults.standard.object(forKey: key) { found[key] = value }
        }
        output(found)
        return 0
    case "migrate" where arguments.count == 2 || arguments.count == 3, "migrate-write" where arguments.count == 3:
        let writes = arguments[0] == "migrate-write"
        let hold = writes ? .slow : arguments.count == 3 ? Migrations.Hold(rawValue: arguments[2]) : Migrations.Hold.none
        guard let defaults = UserDefaults(suiteName: arguments[1]), let hold else { return 2 }
        do {
            let version = try defaults.migrate(Migrations.app(hold: hold))
            if writes { try defaults.encode(version, forKey: arguments[2]) }
            say("version \(version)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    case "hammer" where arguments.count == 3:
        guard let defaults = UserDefaults(suiteName: arguments[1]) else { return 2 }
        hammer(defaults, mode: arguments[2])
    case "launch" where arguments.count >= 2:
        guard let defaults = UserDefaults(suiteName: arguments[1]) else { return 2 }
        output(readLaunchArguments(defaults, keys: stride(from: 2, to: arguments.count, by: 2).map { String(arguments[$0].dropFirst()) }))
        return 0
    case "change" where arguments.count == 5:
        guard let defaults = UserDefaults(suiteName: arguments[1]), let value = Int(arguments[4]) else { return 2 }
        return change(defaults, key: arguments[2], how: arguments[3], to: value)
    case "count" where arguments.count == 5:
        guard let defaults = UserDefaults(suiteName: arguments[1]), let from = Int(arguments[3]), let count = Int(arguments[4]) else { return 2 }
        say("counting")
        do {
            for value in from..<(from + count) { try defaults.encode(value, forKey: arguments[2]) }
            return 0
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    case "throwaway-defaults" where arguments.count == 2:
        return throwawayDefaults(rounds: Int(arguments[1]) ?? 10)
    case "standard-pair" where arguments.count == 3:
        return standardPair(rounds: Int(arguments[1]) ?? 10, observed: arguments[2] == "observed")
    case "many-suites" where arguments.count == 4:
        guard let count = Int(arguments[2]), let limit = Int(arguments[3]) else { return 2 }
        return manySuites(prefix: arguments[1], count: count, openFileLimit: limit)
    case "no-descriptors" where arguments.count == 2:
        return noDescriptors(suiteName: arguments[1])
    case "keys" where arguments.count == 4:
        guard let defaults = UserDefaults(suiteName: arguments[1]), let count = Int(arguments[3]) else { return 2 }
        do {
            for index in 0..<count { try defaults.encode(index, forKey: arguments[2] + String(index)) }
            return 0
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    default:
        FileHandle.standardError.write(Data("usage: defaults-coder-probe read SUITE | write SUITE FILE | argument KEY … | migrate SUITE [pause]\n".utf8))
        return 2
    }
}

/// A setting stored as its raw value.
enum Mode: Int, Codable {
    case off = 0, low, high
}

/// What the package reads for each key, as each number type; then what writing "volume"
/// reported.
func readLaunchArguments(_ defaults: UserDefaults, keys: [String]) -> [String: String] {
    var found: [String: String] = [:]
    func read<T: Decodable>(_ type: T.Type, _ key: String) {
        do {
            found["\(key):\(T.self)"] = try defaults.decode(T.self, forKey: key).map { "\($0)" } ?? "absent"
        } catch {
            found["\(key):\(T.self)"] = "error"
        }
    }
    for key in keys {
        read(Int.self, key)
        read(Double.self, key)
        read(Bool.self, key)
        read(CGFloat.self, key)
        read(Mode.self, key)
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            read(Int128.self, key)
            read(UInt128.self, key)
        }
        #if !(os(macOS) && arch(x86_64))
        read(Float16.self, key)
        #endif
    }
    // One thread: the handler runs on the writing thread, this one.
    nonisolated(unsafe) var reports: [String] = []
    DefaultsFailure.handler = { failure in reports.append("\(failure)") }
    do {
        try defaults.encode(7, forKey: "volume")
        found["volume:written"] = "yes"
    } catch {
        found["volume:written"] = "\(error)"
    }
    found["volume:read"] = (try? defaults.decode(Int.self, forKey: "volume")).flatMap { $0.map(String.init) } ?? "none"
    found["reports"] = reports.joined(separator: "\n")
    return found
}

/// Sets the `Int` under `key` to `value` (0 is its default, which the resets give) one
/// way or another.
func change(_ defaults: UserDefaults, key name: String, how: String, to value: Int) -> Int32 {
    let key = DefaultsKey<Int>(name, default: 0)
    do {
        switch how {
        case "encode": try defaults.encode(value, forKey: name)
        case "subscript": defaults[key] = value
        case "reset": try defaults.reset(key)
        case "resetAll": try defaults.resetAll()
        case "migrate":
            let step = DefaultsMigration.Step.convert(name, from: Int.self, to: name) { _ in value }
            try defaults.migrate([DefaultsMigration(version: 1, step)], versionKey: name + ".version")
        case "foundation":
            defaults.set(value, forKey: name)
            defaults.synchronize()
        default: return 2
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        return 1
    }
}

/// Writes the key "n" over and over, as `mode` says, until the process is killed; says
/// "writing" once the first write is done.
func hammer(_ defaults: UserDefaults, mode: String) -> Never {
    let key = DefaultsKey<Int>("n", default: 0)
    var value = 0
    while true {
        value += 1
        do {
            switch mode {
            case "encode": try defaults.encode(value, forKey: "n")
            case "reset": try value.isMultiple(of: 2) ? defaults.reset(key) : defaults.write(value, to: key)
            case "subscript": defaults[key] = value
            case "migrate":
                try defaults.migrate(DefaultsMigration(version: value, .convert("n", from: Int.self) { $0 + 1 }))
            default: exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
        if value == 1 { say("writing") }
    }
}

exit(run(Array(CommandLine.arguments.dropFirst())))

/// Writes the Int "pair" through an object named after this process's own domain (the
/// package's subscript, then `resetAll()`), and after each write reads it through
/// `UserDefaults.standard` — with plain Foundation only (`plain`: the package has never
/// seen `.standard`), or through the package and an observer (`observed`); says how many
/// reads gave something else.
func standardPair(rounds: Int, observed: Bool) -> Int32 {
    guard let writer = UserDefaults(suiteName: ProcessInfo.processInfo.processName) else { return 1 }
    let key = DefaultsKey<Int>("pair", default: 0)
    let heard = Heard()
    var failures = 0
    do {
        let observation = observed ? UserDefaults.standard.observe(key, initial: false) { _, new in heard.set(new) } : nil
        defer { observation?.cancel() }
        for round in 1...max(rounds, 1) {
            writer[key] = round
            let read = observed ? UserDefaults.standard[key] : UserDefaults.standard.integer(forKey: "pair")
            if read != round || (observed && heard.value != round) { failures += 1 }
            if round.isMultiple(of: 5) {
                try? writer.resetAll()
                let read = observed ? UserDefaults.standard[key] : UserDefaults.standard.integer(forKey: "pair")
                if read != 0 || (observed && heard.value != 0) { failures += 1 }
            }
        }
    }
    try? writer.resetAll()
    print(failures)
    return 0
}

/// Two threads, each with a throwaway suite as its default suite, write and read
/// settings through wrappers made without a suite, `rounds` times; prints how many reads
/// gave another thread's value, then the files left in the config directory.
func throwawayDefaults(rounds: Int) -> Int32 {
    struct Settings {
        @UserDefault("volume") var volume = 0
        @UserDefault("name") var name: String?
    }
    let mixedUp = Heard()
    let done = DispatchGroup()
    for number in 1...2 {
        done.enter()
        Thread {
            // Released before the thread says it is done: its files go with it.
            do {
                let suite = ThrowawaySuite("thread\(number)")
                UserDefaults.withDefaultSuite(suite.defaults) {
                    for round in 1...max(rounds, 1) {
                        let settings = Settings()
                        settings.volume = number * 1000 + round
                        settings.name = "thread \(number)"
                        let again = Settings()
                        if again.volume != number * 1000 + round || again.name != "thread \(number)" { mixedUp.add(1) }
                    }
                }
            }
            done.leave()
        }.start()
    }
    done.wait()
    print(mixedUp.value)
    let directory = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] ?? ""
    let left = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    print(left.sorted().joined(separator: ","))
    return 0
}

/// The last value an observer heard.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0
    func set(_ value: Int) { lock.withLock { last = value } }
    func add(_ value: Int) { lock.withLock { last += value } }
    var value: Int { lock.withLock { last } }
}

/// Sets the soft limit on open files; whether it was set.
func limitOpenFiles(to limit: Int) -> Bool {
    var limits = rlimit()
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    guard getrlimit(resource, &limits) == 0 else { return false }
    limits.rlim_cur = rlim_t(limit)
    return setrlimit(resource, &limits) == 0
}

/// `count` suites written, migrated and read back with at most `openFileLimit` files open:
/// prints each failure (at most five), then "done N" with the number that failed.
func manySuites(prefix: String, count: Int, openFileLimit: Int) -> Int32 {
    guard limitOpenFiles(to: openFileLimit) else { return 2 }
    // Held to the end, as an app holds the suites it uses.
    var suites: [UserDefaults] = []
    var failures: [String] = []
    for index in 0..<count {
        guard let defaults = UserDefaults(suiteName: prefix + String(index)) else { return 2 }
        suites.append(defaults)
        do {
            try defaults.encode(index, forKey: "n")
            _ = try defaults.migrate([DefaultsMigration(version: 1, .rename("n", to: "m"))])
        } catch {
            failures.append("\(index): \(error)")
        }
    }
    for (index, defaults) in suites.enumerated() {
        let read = try? defaults.decode(Int.self, forKey: "m")
        if read != index { failures.append("\(index): read \(read.map(String.init) ?? "nothing")") }
    }
    for failure in failures.prefix(5) { print(failure) }
    print("done \(failures.count)")
    return 0
}

/// Encodes 1 under "a"; takes every descriptor but one and encodes 2; lets them go. Prints
/// the second write's error, what was reported to `DefaultsFailure.handler` meanwhile,
/// what `moveUnreadableFileAside()` then moved, and the value.
func noDescriptors(suiteName: String) -> Int32 {
    // A low limit: a few hundred descriptors to take, not a million.
    guard limitOpenFiles(to: 256), let defaults = UserDefaults(suiteName: suiteName), (try? defaults.encode(1, forKey: "a")) != nil else { return 2 }
    // One thread: the handler runs on the writing thread, this one.
    nonisolated(unsafe) var reports: [String] = []
    DefaultsFailure.handler = { failure in reports.append("\(failure)") }
    var taken: [Int32] = []
    while true {
        let descriptor = open("/dev/null", O_RDONLY)
        guard descriptor >= 0 else { break }
        taken.append(descriptor)
    }
    // One free: enough for the lock file, none for the suite's.
    if let last = taken.popLast() { close(last) }
    let thrown: String
    do {
        try defaults.encode(2, forKey: "a")
        thrown = "none"
    } catch {
        thrown = "\(error)"
    }
    for descriptor in taken { close(descriptor) }
    DefaultsFailure.handler = { _ in }
    print(thrown)
    print("reports \(reports)")
    print("moved \((try? defaults.moveUnreadableFileAside()).map { $0?.lastPathComponent ?? "nothing" } ?? "error")")
    print("a \((try? defaults.decode(Int.self, forKey: "a")).flatMap { $0.map(String.init) } ?? "nothing")")
    return 0
}
