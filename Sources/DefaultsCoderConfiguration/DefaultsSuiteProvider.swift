// A swift-configuration provider over a UserDefaults suite: what `object(forKey:)` shows
// (launch arguments included, registered defaults only when asked), read as
// configuration values by the package's own rules, and watched through the suite's
// change feed. Compiled only with the `SwiftConfiguration` package trait.

#if SwiftConfiguration
import Configuration
import DefaultsCoder
import Foundation

/// A `ConfigProvider` that reads a `UserDefaults` suite, or a dictionary stored in it
/// such as managed app configuration.
///
/// ```swift
/// let config = ConfigReader(providers: [
///     DefaultsSuiteProvider.managedAppConfiguration(),   // what MDM pushes
///     DefaultsSuiteProvider(.standard),                  // the app's settings, launch arguments
///     EnvironmentVariablesProvider(),
/// ])
/// let timeout = config.int(forKey: "http.timeout", default: 30)
/// ```
///
/// A key's components are joined with dots (`http.timeout`) unless a `KeyMapping` says
/// otherwise; a value is looked for under the whole joined key first, then through the
/// dictionaries stored under its leading components (`http` holding `["timeout": 30]`).
///
/// `UserDefaults` is plaintext on disk: mark what is secret with `secretsSpecifier` so
/// that it is redacted in logs, but do not keep secrets in a suite.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public struct DefaultsSuiteProvider: ConfigProvider, Sendable {
    /// How a configuration key's components name a suite key.
    public struct KeyMapping: Sendable {
        /// The separator that joins the components, and lets nested dictionaries be
        /// walked; `nil` for a custom mapping.
        fileprivate let separator: String?
        fileprivate let map: @Sendable (AbsoluteConfigKey) -> String

        /// Components joined with dots: `http.timeout`.
        public static let dotSeparated = separated(by: ".")

        /// Components joined with `separator`: `separated(by: "_")` reads `http_timeout`.
        ///
        /// - Parameter separator: What joins the components.
        /// - Returns: The mapping.
        public static func separated(by separator: String) -> KeyMapping {
            KeyMapping(separator: separator) { $0.components.joined(separator: separator) }
        }

        /// A mapping of your own, from the whole key to one suite key; nested
        /// dictionaries are not walked.
        ///
        /// - Parameter map: The suite key for a configuration key.
        /// - Returns: The mapping.
        public static func custom(_ map: @escaping @Sendable (AbsoluteConfigKey) -> String) -> KeyMapping {
            KeyMapping(separator: nil, map: map)
        }
    }

    /// The key managed app configuration arrives under in `UserDefaults.standard`:
    /// `com.apple.configuration.managed`, a dictionary MDM sets.
    public static let managedAppConfigurationKey = "com.apple.configuration.managed"

    /// "DefaultsSuiteProvider[suite]", or with the key of the dictionary it reads.
    public let providerName: String
    private let suite: Suite
    private let resolver: Resolver

    /// Creates a provider over `defaults`.
    ///
    /// - Parameters:
    ///   - defaults: The suite; `.standard` unless you choose.
    ///   - keys: How a key's components name a suite key; dot-separated.
    ///   - dictionaryKey: The key of a dictionary in the suite to read instead of the
    ///     suite itself (managed app configuration's), or `nil`.
    ///   - includesRegisteredDefaults: Whether values only `register(defaults:)` gave are
    ///     read. Off: they would hide the providers below this one.
    ///   - secretsSpecifier: Which values are secret (by the suite key and the value
    ///     read), to be redacted where configuration is logged.
    public init(
        _ defaults: UserDefaults = .standard, keys: KeyMapping = .dotSeparated, dictionaryKey: String? = nil,
        includesRegisteredDefaults: Bool = false, secretsSpecifier: SecretsSpecifier<String, ConfigContent> = .none
    ) {
        suite = Suite(defaults: defaults, includesRegisteredDefaults: includesRegisteredDefaults)
        resolver = Resolver(keys: keys, dictionaryKey: dictionaryKey, secrets: secretsSpecifier)
        providerName = "DefaultsSuiteProvider" + (dictionaryKey.map { "[\($0)]" } ?? "")
    }

    /// A provider of the managed app configuration MDM pushes to the app: the dictionary
    /// under `com.apple.configuration.managed` in `UserDefaults.standard`.
    ///
    /// - Parameters:
    ///   - defaults: The suite the configuration is in; `.standard`.
    ///   - keys: How a key's components name a key of the configuration.
    ///   - secretsSpecifier: Which values are secret.
    /// - Returns: The provider.
    public static func managedAppConfiguration(
        _ defaults: UserDefaults = .standard, keys: KeyMapping = .dotSeparated,
        secretsSpecifier: SecretsSpecifier<String, ConfigContent> = .none
    ) -> DefaultsSuiteProvider {
        DefaultsSuiteProvider(defaults, keys: keys, dictionaryKey: managedAppConfigurationKey, secretsSpecifier: secretsSpecifier)
    }

    // MARK: - Reading

    /// The value for `key`, read now.
    ///
    /// - Throws: `DefaultsSuiteProvider.TypeMismatch` when the value is not of `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try resolver.lookUp(key, type: type, read: suite.read)
    }

    /// The value for `key`, read now.
    ///
    /// - Throws: `DefaultsSuiteProvider.TypeMismatch` when the value is not of `type`.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    /// The suite's values as they are now.
    public func snapshot() -> any ConfigSnapshot {
        Snapshot(providerName: providerName, values: Values(suite.shownValues()), resolver: resolver)
    }

    // MARK: - Watching

    /// Calls `updatesHandler` with the value for `key` now, then each time a change of
    /// the suite alters it: a package write, a plain `set(_:forKey:)`, Foundation's
    /// announcement, another process's write. The observation ends when the handler
    /// returns.
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let last = Latest<Result<LookupResult, any Error>>(same: Self.same)
        let emit: @Sendable () -> Void = { [self] in
            last.update(Result { try value(forKey: key, type: type) }) { continuation.yield($0) }
        }
        let observation = suite.defaults.observeStoredValues(of: resolver.suiteKeys(for: key), { _ in emit() })
        emit()
        defer {
            observation.cancel()
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// Calls `updatesHandler` with a snapshot now, then each time a change of a key the
    /// suite shows alters it. A key that appears later is heard when this process writes
    /// it through the package (on Apple platforms, with `set(_:forKey:)` too), or from the
    /// next change of a key already there.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let last = Latest<Values>(same: { UserDefaults.isSameStoredValue($0.values, $1.values) })
        let watch = SnapshotWatch(suite.defaults)
        let emit: @Sendable () -> Void = { [self] in
            let values = Values(suite.shownValues())
            last.update(values) { values in
                continuation.yield(Snapshot(providerName: providerName, values: values, resolver: resolver))
            }
            watch.follow(Array(values.values.keys))
        }
        watch.start(onChange: emit)
        // What the observations of the keys shown cannot hear: a key that appears. The
        // package announces each of its writes on every object of the suite; Foundation
        // announces its own changes on Apple platforms (on Linux, a domain set whole).
        let announcements = [UserDefaults.didChangeNotification, UserDefaults.keyDidChangeNotification].map { name in
            NotificationCenter.default.addObserver(forName: name, object: suite.defaults, queue: nil, using: { _ in emit() })
        }
        emit()
        defer {
            for announcement in announcements { NotificationCenter.default.removeObserver(announcement) }
            watch.stop()
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// Why a value could not be read as the type asked for: this lookup fails, and
    /// others go on.
    public struct TypeMismatch: Error, Sendable, Equatable, CustomStringConvertible {
        /// The suite key (or the dictionary's key) read.
        public let key: String
        /// The type asked for.
        public let type: ConfigType
        /// What the suite holds there, described.
        public let found: String

        /// Creates a mismatch.
        ///
        /// - Parameters:
        ///   - key: The suite key read.
        ///   - type: The type asked for.
        ///   - found: What the suite holds there: "a date", "a dictionary", "a string"…
        public init(key: String, type: ConfigType, found: String) {
            self.key = key
            self.type = type
            self.found = found
        }

        /// `"http.timeout" holds a date, not int`.
        public var description: String { "\"\(key)\" holds \(found), not \(type.rawValue)" }
    }
}

// MARK: - Machinery

/// The suite, and what of it is read.
private struct Suite: @unchecked Sendable {
    // Unchecked: Foundation's `UserDefaults` is safe to use from any thread.
    let defaults: UserDefaults
    let includesRegisteredDefaults: Bool

    func read(_ key: String) -> Any? {
        includesRegisteredDefaults ? defaults.object(forKey: key) : defaults.objectsSkippingRegisteredDefaults(forKeys: [key])[key]
    }

    /// Every key the suite shows now, and its value.
    func shownValues() -> [String: Any] {
        includesRegisteredDefaults ? defaults.dictionaryRepresentation() : defaults.objectsSkippingRegisteredDefaults()
    }
}

/// A suite's values, taken at one moment.
private struct Values: @unchecked Sendable {
    // Unchecked: a property list nobody mutates.
    let values: [String: Any]
    init(_ values: [String: Any]) { self.values = values }
}

/// How keys are found and values read; shared by the provider and its snapshots.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private struct Resolver: Sendable {
    let keys: DefaultsSuiteProvider.KeyMapping
    let dictionaryKey: String?
    let secrets: SecretsSpecifier<String, ConfigContent>

    func lookUp(_ key: AbsoluteConfigKey, type: ConfigType, read: (String) -> Any?) throws -> LookupResult {
        let encodedKey = keys.map(key)
        var found: Any?
        if let dictionaryKey {
            if let dictionary = read(dictionaryKey) as? [String: Any] { found = find(key, in: { dictionary[$0] }) }
        } else {
            found = find(key, in: read)
        }
        guard let found else { return LookupResult(encodedKey: encodedKey, value: nil) }
        let content = try ConfigConversion.content(of: found, as: type, key: encodedKey)
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: secrets.isSecret(key: encodedKey, value: content)))
    }

    /// The value under the whole key, else under the rest of it in a dictionary stored
    /// under its leading components, the longest first.
    private func find(_ key: AbsoluteConfigKey, in read: (String) -> Any?) -> Any? {
        guard let separator = keys.separator else { return read(keys.map(key)) }
        return Self.find(key.components[...], separator: separator, in: read)
    }

    private static func find(_ components: ArraySlice<String>, separator: String, in read: (String) -> Any?) -> Any? {
        if let value = read(components.joined(separator: separator)) { return value }
        for split in stride(from: components.count - 1, to: 0, by: -1) {
            let head = components.prefix(split).joined(separator: separator)
            if let dictionary = read(head) as? [String: Any],
                let value = find(components.dropFirst(split), separator: separator, in: { dictionary[$0] })
            {
                return value
            }
        }
        return nil
    }

    /// The suite keys whose change may alter `key`'s value.
    func suiteKeys(for key: AbsoluteConfigKey) -> [String] {
        if let dictionaryKey { return [dictionaryKey] }
        guard let separator = keys.separator else { return [keys.map(key)] }
        return (1...max(key.components.count, 1)).map { key.components.prefix($0).joined(separator: separator) }
    }
}

/// A snapshot: the suite's values at one moment, read as the provider reads them.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private struct Snapshot: ConfigSnapshot {
    let providerName: String
    let values: Values
    let resolver: Resolver

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try resolver.lookUp(key, type: type, read: { values.values[$0] })
    }
}

/// The value last emitted, so that only a change that alters it is emitted.
private final class Latest<Value>: @unchecked Sendable {
    // Unchecked: behind `lock`; emitting under it keeps the emissions in order.
    private let lock = NSLock()
    private var last: Value?
    private let same: (Value, Value) -> Bool

    init(same: @escaping (Value, Value) -> Bool) {
        self.same = same
    }

    func update(_ value: Value, emit: (Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if let last, same(last, value) { return }
        last = value
        emit(value)
    }
}

/// The observation of the keys a snapshot shows, renewed as keys appear.
private final class SnapshotWatch: @unchecked Sendable {
    // Unchecked: `defaults` is thread-safe; the rest is behind `lock`.
    private let lock = NSLock()
    private let defaults: UserDefaults
    private var onChange: (@Sendable () -> Void)?
    private var keys: Set<String> = []
    private var observations: [DefaultsObservation] = []

    init(_ defaults: UserDefaults) {
        self.defaults = defaults
    }

    func start(onChange: @escaping @Sendable () -> Void) {
        lock.withLock { self.onChange = onChange }
    }

    /// Observes the keys of `shown` not observed yet.
    func follow(_ shown: [String]) {
        let (new, onChange) = lock.withLock { () -> (Set<String>, (@Sendable () -> Void)?) in
            let new = Set(shown).subtracting(keys)
            keys.formUnion(new)
            return (new, self.onChange)
        }
        guard !new.isEmpty, let onChange else { return }
        let observation = defaults.observeStoredValues(of: Array(new)) { _ in onChange() }
        let kept = lock.withLock { () -> Bool in
            guard self.onChange != nil else { return false }
            observations.append(observation)
            return true
        }
        if !kept { observation.cancel() }
    }

    func stop() {
        let observations = lock.withLock { () -> [DefaultsObservation] in
            onChange = nil
            defer { self.observations = [] }
            return self.observations
        }
        for observation in observations { observation.cancel() }
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension DefaultsSuiteProvider {
    /// Two results the same: equal lookups, or failures that say the same.
    fileprivate static func same(_ lhs: Result<LookupResult, any Error>, _ rhs: Result<LookupResult, any Error>) -> Bool {
        switch (lhs, rhs) {
        case (.success(let lhs), .success(let rhs)): return lhs == rhs
        case (.failure(let lhs), .failure(let rhs)): return "\(lhs)" == "\(rhs)"
        default: return false
        }
    }
}
#endif
