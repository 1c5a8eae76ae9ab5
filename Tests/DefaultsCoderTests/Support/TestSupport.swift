import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// An `Any` tree with its exact types, so tests can compare trees with `==` and see
/// that an `Int8` stayed an `Int8` and a `Bool` did not become a number.
indirect enum Tree: Equatable, CustomStringConvertible {
    case dictionary([String: Tree])
    case array([Tree])
    case string(String)
    case int(Int)
    case int8(Int8), int16(Int16), int32(Int32), int64(Int64)
    case uint(UInt), uint8(UInt8), uint16(UInt16), uint32(UInt32), uint64(UInt64)
    case double(Double)
    case float(Float)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case url(URL)
    case decimal(Decimal)
    case null
    case nsNull
    case other(String)

    init(_ value: Any?) {
        guard let value else {
            self = .null
            return
        }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            self = mirror.children.first.map { Tree($0.value) } ?? .null
            return
        }
        switch value {
        case let v as Bool where type(of: value) == Bool.self: self = .bool(v)
        case let v as Int where type(of: value) == Int.self: self = .int(v)
        case let v as Int8 where type(of: value) == Int8.self: self = .int8(v)
        case let v as Int16 where type(of: value) == Int16.self: self = .int16(v)
        case let v as Int32 where type(of: value) == Int32.self: self = .int32(v)
        case let v as Int64 where type(of: value) == Int64.self: self = .int64(v)
        case let v as UInt where type(of: value) == UInt.self: self = .uint(v)
        case let v as UInt8 where type(of: value) == UInt8.self: self = .uint8(v)
        case let v as UInt16 where type(of: value) == UInt16.self: self = .uint16(v)
        case let v as UInt32 where type(of: value) == UInt32.self: self = .uint32(v)
        case let v as UInt64 where type(of: value) == UInt64.self: self = .uint64(v)
        case let v as Double where type(of: value) == Double.self: self = .double(v)
        case let v as Float where type(of: value) == Float.self: self = .float(v)
        case let v as Decimal where type(of: value) == Decimal.self: self = .decimal(v)
        case let v as String: self = .string(v)
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as URL: self = .url(v)
        case is NSNull: self = .nsNull
        case let v as [String: Any]: self = .dictionary(v.mapValues { Tree($0) })
        case let v as [Any]: self = .array(v.map { Tree($0) })
        default: self = .other("\(type(of: value)): \(value)")
        }
    }

    var description: String {
        switch self {
        case .dictionary(let d): return "[" + d.keys.sorted().map { "\($0): \(d[$0]!)" }.joined(separator: ", ") + "]"
        case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .string(let s): return "\"\(s)\""
        case .int(let v): return "Int(\(v))"
        case .int8(let v): return "Int8(\(v))"
        case .int16(let v): return "Int16(\(v))"
        case .int32(let v): return "Int32(\(v))"
        case .int64(let v): return "Int64(\(v))"
        case .uint(let v): return "UInt(\(v))"
        case .uint8(let v): return "UInt8(\(v))"
        case .uint16(let v): return "UInt16(\(v))"
        case .uint32(let v): return "UInt32(\(v))"
        case .uint64(let v): return "UInt64(\(v))"
        case .double(let v): return "Double(\(v))"
        case .float(let v): return "Float(\(v))"
        case .bool(let v): return "Bool(\(v))"
        case .date(let v): return "Date(\(v.timeIntervalSinceReferenceDate))"
        case .data(let v): return "Data(\(Array(v)))"
        case .url(let v): return "URL(\(v))"
        case .decimal(let v): return "Decimal(\(v))"
        case .null: return "nil"
        case .nsNull: return "NSNull"
        case .other(let v): return "Other(\(v))"
        }
    }
}

/// A fresh `UserDefaults` suite for one test, removed with its file afterwards.
final class TestSuite: @unchecked Sendable {
    // Unchecked: constants only. Closures capture the suite, never its `defaults` alone:
    // `nonisolated(unsafe)` on a `UserDefaults` is a warning where an SDK marks it
    // `Sendable`, and the workflow builds with warnings as errors.
    let name: String
    let defaults: UserDefaults

    init(_ label: String = #function) {
        _ = Self.sharedRegistrations
        let cleaned = label.filter { $0.isLetter || $0.isNumber }
        name = "DefaultsCoderTests.\(cleaned).\(UUID().uuidString)"
        defaults = makeDefaults(suiteName: name)
    }

    /// The registrations the tests make of keys they share (the articles' `.launchCount`
    /// and `.theme`), made before any test observes them. Registered defaults are the
    /// process's: registered first by a test while another observes the key in its own
    /// suite, the value goes from nothing to the registered default there, a change its
    /// observers hear. Registering the same values again changes nothing.
    private static let sharedRegistrations: Void = {
        try? UserDefaults.standard.register(.launchCount, .theme)
    }()

    /// Where Foundation keeps the suite's file on this platform.
    var fileURL: URL {
        #if canImport(Darwin)
        let library = FileManager.default.urls(for: .libraryDirectory, in: .userDomainMask)[0]
        return library.appendingPathComponent("Preferences/\(name).plist")
        #else
        return SuiteFile.configDirectory.appendingPathComponent("\(name).plist")
        #endif
    }

    deinit {
        defaults.removePersistentDomain(forName: name)
        try? FileManager.default.removeItem(at: fileURL)
        // The lock file a write leaves next to the suite's file, and the new file a
        // killed write leaves.
        try? FileManager.default.removeItem(atPath: fileURL.path + ".lock")
        try? FileManager.default.removeItem(atPath: fileURL.path + ".defaultscoder-new")
    }
}

/// A binary built with the tests (`defaults-coder-probe`, `defaults-coder-demo`),
/// found next to the test bundle.
func builtExecutable(_ name: String) throws -> URL {
    // Foundation on Linux leaks what `Bundle.allBundles` makes, and lists no test bundle.
    #if os(macOS)
    let bundles = Bundle.allBundles.map(\.bundleURL)
    #else
    let bundles: [URL] = []
    #endif
    let products = productsDirectory(bundles: bundles, executable: URL(fileURLWithPath: CommandLine.arguments[0]))
    let candidate = products.appendingPathComponent(name)
    guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidate.path])
    }
    return candidate
}

/// The directory SwiftPM builds products into, where the probe and the demo are: the one
/// that holds the tests' `.xctest` bundle. On macOS the tests run inside Xcode's `xctest`
/// or `swiftpm-testing-helper`, whose path says nothing of the build, and the bundle is
/// loaded; on Linux the `.xctest` is the test executable itself.
func productsDirectory(bundles: [URL], executable: URL) -> URL {
    if let bundle = bundles.first(where: { $0.pathExtension == "xctest" }) { return bundle.deletingLastPathComponent() }
    return executable.deletingLastPathComponent()
}

/// Runs `body` on a thread of its own and awaits it, so that work that blocks (a child
/// process, a semaphore, a deep recursion) never holds one of the few threads the
/// tests' tasks share: with them all blocked, other tests' tasks would starve.
func offPool<R: Sendable>(stackSize: Int? = nil, _ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
}

/// Runs a built binary with `arguments`, and `environment` over this process's; returns
/// its standard output, standard error and exit status.
func run(
    _ name: String, _ arguments: [String], environment: [String: String?] = [:]
) async throws -> (output: Data, errors: String, status: Int32) {
    try await offPool { try runBlocking(name, arguments, environment: environment) }
}

private func runBlocking(
    _ name: String, _ arguments: [String], environment: [String: String?]
) throws -> (output: Data, errors: String, status: Int32) {
    let process = Process()
    process.executableURL = try builtExecutable(name)
    process.arguments = arguments
    if !environment.isEmpty {
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
    }
    let output = Pipe()
    // Standard error goes to a file, so that only one pipe is read while it runs.
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    process.standardOutput = output
    process.standardError = try FileHandle(forWritingTo: errorFile)
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errors = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
    return (outputData, errors, process.terminationStatus)
}

/// Runs the demo binary and returns what it printed and its exit status.
func runDemo() async throws -> (output: String, status: Int32) {
    let result = try await run("defaults-coder-demo", [])
    return (String(decoding: result.output, as: UTF8.self) + result.errors, result.status)
}

/// A second process, for what must hold after the suite's file is read anew.
enum SecondProcess {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// The suite's values, as a new process's Foundation reads them from the file.
    static func read(_ suite: TestSuite) async throws -> [String: Any] {
        suite.defaults.synchronize()
        let result = try await run("defaults-coder-probe", ["read", suite.name])
        guard result.status == 0 else { throw Failed(description: "probe read exited \(result.status): \(result.errors)") }
        let plist = try PropertyListSerialization.propertyList(from: result.output, format: nil)
        guard let values = plist as? [String: Any] else { throw Failed(description: "probe read gave \(plist)") }
        return values
    }

    /// Stores `values` in the suite from another process, with plain `set(_:forKey:)`.
    static func write(_ values: [String: Any], into suite: TestSuite) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString).plist")
        try PropertyListSerialization.data(fromPropertyList: values, format: .binary, options: 0).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await run("defaults-coder-probe", ["write", suite.name, file.path])
        guard result.status == 0 else { throw Failed(description: "probe write exited \(result.status): \(result.errors)") }
    }

    /// What Foundation in a process launched with `launchArguments` reads for `keys`.
    static func arguments(_ launchArguments: [String], keys: [String]) async throws -> [String: Any] {
        let result = try await run("defaults-coder-probe", ["argument"] + keys + launchArguments)
        guard result.status == 0 else { throw Failed(description: "probe argument exited \(result.status): \(result.errors)") }
        return try PropertyListSerialization.propertyList(from: result.output, format: nil) as? [String: Any] ?? [:]
    }
}

/// The `debugDescription` of a coding error, or `nil` for other errors.
func debugDescription(of error: (any Error)?) -> String? {
    error.flatMap { codingErrorContext(of: $0)?.debugDescription }
}

/// The coding path of a coding error, in readable form (`SELF[1].name`).
func readablePath(of error: (any Error)?) -> String? {
    error.flatMap { codingErrorContext(of: $0) }.map { DefaultsCoder.readablePath($0.codingPath) }
}

/// Encodes then decodes `value` with the given coders and expects an equal value back.
func expectRoundTrip<T: Codable & Equatable>(
    _ value: T,
    encoder: KeyValueEncoder = KeyValueEncoder(),
    decoder: KeyValueDecoder = KeyValueDecoder(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let encoded = try encoder.encode(value)
    let decoded = try decoder.decode(T.self, from: encoded as Any)
    #expect(decoded == value, sourceLocation: sourceLocation)
}

/// An `Any` for `@Test(arguments:)`, which wants `Sendable` values; the tests only read it.
struct SendableAny: @unchecked Sendable, CustomTestStringConvertible {
    let value: Any
    init(_ value: Any) { self.value = value }
    var testDescription: String { "\(value)" }
}

/// Runs `body`, expecting it to throw an `E`, and returns that error (recording an issue
/// otherwise). `#expect(throws:)` returns the error only from Swift 6.1 on.
@discardableResult
func caught<E: Error>(
    _ type: E.Type,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Any?
) -> E? {
    do {
        _ = try body()
        Issue.record("Expected an error of type \(E.self), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("Expected an error of type \(E.self), but \(error) was thrown", sourceLocation: sourceLocation)
    }
    return nil
}

/// A lock for the tests that change what the whole process shares, held while awaiting
/// (no thread waits): on Apple platforms `setVolatileDomain(_:forName:)` replaces the
/// argument domain every `UserDefaults` object shows, and the registration domain is the
/// process's. Such tests run one at a time, and put back what they changed.
enum ProcessWideState {
    private static let state = Locked<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Runs `body` while no other test holding this lock runs.
    static func exclusively<R>(_ body: () async throws -> R) async rethrows -> R {
        await withCheckedContinuation { continuation in
            let acquired = state.withLock { state in
                if state.held {
                    state.waiting.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
        defer {
            let next = state.withLock { state in
                if state.waiting.isEmpty { state.held = false }
                return state.waiting.isEmpty ? nil : state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }

    /// Runs `body` with `arguments` added to the argument domain (as launch arguments
    /// arrive: strings), alone among such tests, and puts the domain back after.
    static func withLaunchArguments<R>(
        _ arguments: [String: Any], on defaults: UserDefaults, _ body: () async throws -> R
    ) async rethrows -> R {
        try await exclusively {
            let saved = defaults.volatileDomain(forName: UserDefaults.argumentDomain)
            defaults.setVolatileDomain(saved.merging(arguments) { $1 }, forName: UserDefaults.argumentDomain)
            defer {
                defaults.removeVolatileDomain(forName: UserDefaults.argumentDomain)
                defaults.setVolatileDomain(saved, forName: UserDefaults.argumentDomain)
            }
            return try await body()
        }
    }
}

/// Collects `DefaultsFailure` reports. Tests run in parallel and the handler is global,
/// so it is installed once and each test reads the reports for its own (unique) keys.
enum ReportedFailures {
    private static let reports = Locked<[DefaultsFailure]>([])
    private static let actions = Locked<[String: @Sendable (DefaultsFailure) -> Void]>([:])
    private static let installed: Void = {
        DefaultsFailure.handler = { failure in
            ReportedFailures.reports.withLock { $0.append(failure) }
            DefaultsFailure.logOncePerKey(failure)
            // Outside the lock: an action may write, and so fail and report again.
            if let action = ReportedFailures.actions.withLock({ $0[failure.key] }) { action(failure) }
        }
    }()

    /// Runs `action` for each failure reported for the key named `key`, as an app's
    /// own handler would.
    static func onFailure(of key: String, _ action: @escaping @Sendable (DefaultsFailure) -> Void) {
        install()
        actions.withLock { $0[key] = action }
    }

    /// Installs the collecting handler (it also logs as the default one does).
    static func install() {
        _ = installed
    }

    /// The reports for the key named `key`, oldest first.
    static func reports(for key: String) -> [DefaultsFailure] {
        reports.withLock { $0.filter { $0.key == key } }
    }
}

/// A key name no other test uses, for tests that read reported failures.
/// How many rounds a stress test runs: all of them, or a tenth when
/// `DEFAULTSCODER_STRESS=short`. `.ci/run` sets it for the runs under the sanitizers, where
/// a round costs ten to fifty times as much; the same run's plain `swift test` runs every
/// round.
enum Stress {
    static let isShort = ProcessInfo.processInfo.environment["DEFAULTSCODER_STRESS"] == "short"

    /// `full`, or a tenth of it (at least one) in a short run.
    static func rounds<Count: BinaryInteger>(_ full: Count) -> Count {
        isShort ? max(1, full / 10) : full
    }
}

func uniqueKey(_ label: String) -> String {
    "\(label).\(UUID().uuidString)"
}

/// A key of its own that key-value observing can observe (no dot, no leading `@`): the
/// only keys whose plain `set(_:forKey:)` in another process Apple's `UserDefaults`
/// reports (`ExternalChanges`).
func plainKey(_ label: String) -> String {
    label + UUID().uuidString.filter { $0 != "-" }
}

/// A list that handlers on any thread append to; for files that see only the public API.
final class Recorded<Element>: @unchecked Sendable {
    private let elements = Locked<[Element]>([])

    func append(_ element: Element) {
        elements.withLock { $0.append(element) }
    }

    var values: [Element] {
        elements.withLock { $0 }
    }
}

/// Waits until `condition` holds, for at most `seconds`; returns whether it held. Tests
/// that wait for another thread use it, so that a missing event fails instead of hanging.
///
/// Only the time this wait ran counts: a poll that comes back more than a quarter of a
/// second late counts a quarter of a second. On a busy machine other tests can hold both
/// threads of the cooperative pool for a minute; the task that brings what the condition
/// waits for is then as starved as this one, and the wait would end first otherwise.
/// `poll` waits between two looks at `condition` (a millisecond's sleep).
func eventually(
    within seconds: Double = 60, poll: () async -> Void = { try? await Task.sleep(nanoseconds: 1_000_000) }, _ condition: () -> Bool
) async -> Bool {
    var waited = 0.0
    while !condition() {
        if waited > seconds { return false }
        let start = Date()
        await poll()
        waited += min(Date().timeIntervalSince(start), 0.25)
    }
    return true
}

/// Runs `body` on another thread and waits at most `seconds` for it, without blocking
/// a task's thread: a deadlock fails the test instead of hanging the run. Returns
/// whether it finished.
func finishes(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = started(body)
    return await eventually(within: seconds) { done.withLock { $0 } }
}

/// `finishes(within:_:)` for a thread off the pool (`offPool`, `whileRepeating`): runs
/// `body` on another thread and waits on this one at most `seconds` for it.
func waitUntilFinished(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = started(body)
    return waitUntil(within: seconds) { done.withLock { $0 } }
}

/// Starts `body` on a thread of its own; the flag turns true once it returned.
private func started(_ body: @escaping @Sendable () -> Void) -> Locked<Bool> {
    let done = Locked(false)
    Thread {
        body()
        done.withLock { $0 = true }
    }.start()
    return done
}

/// What `body` threw, as text; `nil` when it threw nothing. For work on other threads,
/// whose failures the test asserts afterwards.
func thrown(by body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        return "\(error)"
    }
}

/// Runs `body` on a thread of its own while each of `steps` runs over and over on a
/// thread of its own, with the round's number from 1, and stops them once `body`
/// returns, each after the round under way; returns what `body` returned.
///
/// Nothing here waits for the cooperative pool: in a parallel run, other tests can hold
/// both its threads for minutes, and a busy thread that waited for a task to stop it
/// would spin all that time, taking the cores the other tests need. So the busy threads
/// run for as long as `body` takes on its own thread, and no longer; what `body` waits
/// for, it waits for there (`waitUntil(within:_:)`).
func whileRepeating<R: Sendable>(
    _ steps: [@Sendable (Int) -> Void], _ body: @escaping @Sendable () throws -> R
) async throws -> R {
    try await offPool {
        let busy = steps.map(Repeating.init)
        defer { for thread in busy { thread.stop() } }
        return try body()
    }
}

/// Waits on this thread until `condition` holds, for at most `seconds`; returns whether
/// it held. For a thread off the pool (`offPool`, `whileRepeating`); a task awaits
/// `eventually(within:poll:_:)` instead.
func waitUntil(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(1_000)
    }
    return true
}

/// A thread that runs `step` over and over, with the round's number from 1, until
/// `stop()`, which waits for the round under way. Made and stopped only by
/// `whileRepeating`, on a thread off the pool.
private final class Repeating: Sendable {
    private let stopping = Locked(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(_ step: @escaping @Sendable (Int) -> Void) {
        Thread { [stopping, stopped] in
            var round = 0
            while !stopping.withLock({ $0 }) {
                round += 1
                step(round)
            }
            stopped.signal()
        }.start()
    }

    /// Stops it and waits for its thread to end.
    func stop() {
        stopping.withLock { $0 = true }
        stopped.wait()
    }
}

// MARK: - Container-level helpers

/// A key made from a string literal, for container-level tests.
struct AnyKey: CodingKey, ExpressibleByStringLiteral, Hashable, Sendable {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
    init(stringLiteral value: String) { self.init(stringValue: value) }
}

/// A value whose `encode(to:)` is the closure it holds.
struct Writer: Encodable {
    let write: (any Encoder) throws -> Void
    func encode(to encoder: any Encoder) throws { try write(encoder) }
}

/// Encodes what `body` writes into a value's single value container, in the style of
/// KeyValueCoder's tests: `try encodeSingleValue { try $0.encode(true) }`.
func encodeSingleValue(with encoder: KeyValueEncoder = KeyValueEncoder(), _ body: @escaping (inout any SingleValueEncodingContainer) throws -> Void) throws -> Any? {
    try encoder.encode(
        Writer { encoder in
            var container = encoder.singleValueContainer()
            try body(&container)
        })
}

/// Encodes what `body` writes into a value's unkeyed container.
func encodeUnkeyed(with encoder: KeyValueEncoder = KeyValueEncoder(), _ body: @escaping (inout any UnkeyedEncodingContainer) throws -> Void) throws -> Any? {
    try encoder.encode(
        Writer { encoder in
            var container = encoder.unkeyedContainer()
            try body(&container)
        })
}

/// Encodes what `body` writes into a value's keyed container, or does with its encoder.
func encodeKeyed(with encoder: KeyValueEncoder = KeyValueEncoder(), _ body: @escaping (inout KeyedEncodingContainer<AnyKey>, any Encoder) throws -> Void) throws -> Any? {
    try encoder.encode(
        Writer { encoder in
            var container = encoder.container(keyedBy: AnyKey.self)
            try body(&container, encoder)
        })
}

/// A value whose `init(from:)` runs the closure found in the decoder's `userInfo`.
struct Reader: Decodable {
    static let key = CodingUserInfoKey(rawValue: "DefaultsCoderTests.Reader")!

    /// The closure, `Sendable` for `userInfo`; the tests run it on the decoding thread only.
    struct Body: @unchecked Sendable {
        let read: (any Decoder) throws -> Any
    }

    let value: Any

    init(from decoder: any Decoder) throws {
        guard let body = decoder.userInfo[Self.key] as? Body else { throw CocoaError(.coderInvalidValue) }
        value = try body.read(decoder)
    }
}

/// Decodes `tree` by running `body` on the decoder, in the style of KeyValueCoder's
/// tests: `try decodeWith(["a": 1]) { try $0.container(keyedBy: AnyKey.self).decode(Int.self, forKey: "a") }`.
func decodeWith<T>(_ tree: Any, decoder: KeyValueDecoder = KeyValueDecoder(), _ body: @escaping (any Decoder) throws -> T) throws -> T {
    var decoder = decoder
    decoder.userInfo[Reader.key] = Reader.Body { try body($0) }
    return try decoder.decode(Reader.self, from: tree).value as! T
}
