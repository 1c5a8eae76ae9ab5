import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// Reading and writing through typed keys.
///
/// ```swift
/// extension DefaultsKeys {
///     static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
///     static let owner = DefaultsKey<User?>("owner")
/// }
///
/// let defaults = UserDefaults.standard
/// defaults[.launchCount] += 1                  // never throws; failures are reported
/// try defaults.write(User(id: 1, name: "Ada"), to: .owner)
/// let owner = try defaults.read(.owner)        // throws if what is stored is not a User
/// try defaults.reset(.launchCount, .owner)     // one change; reads give the defaults
/// ```
extension UserDefaults {

    /// Reads the value for `key`: the stored value, or the key's default when nothing is
    /// stored.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The decoded value, or `key.defaultValue` when the key is absent.
    /// - Throws: `DecodingError` naming the path when the stored value is not a `Value`
    ///   (in the native form, nor in the key's legacy format when it has one);
    ///   `UnreadableDefaultsFile` when the key is absent because the suite's file does not
    ///   parse.
    public func read<Value>(_ key: DefaultsKey<Value>) throws -> Value {
        try value(for: key, stored: object(forKey: key.name))
    }

    /// Stores `value` for `key` in its plist-native form; for an optional `Value`, `nil`
    /// removes the key. Observers hear of it when the value changed.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: `EncodingError.invalidValue` naming the path when the value cannot be
    ///   stored, or `UnreadableDefaultsFile` when the suite's file does not parse;
    ///   nothing is written then.
    public func write<Value>(_ value: Value, to key: DefaultsKey<Value>) throws {
        guard let legacy = key.legacyFormat else { return try encode(value, forKey: key.name) }
        let stored = try KeyValueEncoder().encodeForUserDefaults(value)
        if let tree = stored { try legacy.checkUnambiguous(value, storedAs: tree) }
        try store(stored, forKey: key.name)
    }

    /// Removes the stored values of `keys`, as one change of the suite, so that reads
    /// give their defaults again. Observers of each key hear of it once.
    ///
    /// ```swift
    /// try defaults.reset(.launchCount, .owner)
    /// ```
    ///
    /// - Parameter keys: The keys to reset.
    /// - Throws: `UnreadableDefaultsFile` when the suite's file exists but does not parse
    ///   (writing would replace it), or `DefaultsSuiteError`; nothing is removed then.
    public func reset(_ keys: DefaultsKeys...) throws {
        try reset(keys)
    }

    /// Removes the stored values of `keys`, as one change of the suite; see `reset(_:)`.
    ///
    /// - Parameter keys: The keys to reset.
    /// - Throws: `UnreadableDefaultsFile` or `DefaultsSuiteError`; nothing is removed then.
    public func reset(_ keys: [DefaultsKeys]) throws {
        try DefaultsSuite.change([self]) { values in
            for key in keys { try values.set(nil, forKey: key.name) }
        }
    }

    /// Removes every value stored in this suite, as one change: on Linux one rewrite of
    /// its file, atomic like any package write. Observers of each key hear of it once.
    /// Registered defaults and launch arguments stay, as they are not stored; so does the
    /// migration version record (under `DefaultsMigration.versionKey`, or the key a
    /// migration in this process recorded it under), so that the next launch does not run
    /// every migration again over the values written after the reset.
    ///
    /// ```swift
    /// try UserDefaults.suite(named: "scratch")?.resetAll()
    /// ```
    ///
    /// - Throws: `UnreadableDefaultsFile` when the suite's file does not parse (nothing
    ///   is removed then), or `DefaultsSuiteError`.
    public func resetAll() throws {
        let records = DefaultsSuite.recordKeys.withLock { $0 }
        try DefaultsSuite.change([self], acrossProcesses: true) { values in
            for key in values.keys() where !DefaultsSuite.isRecord(key, recorded: records) { try values.set(nil, forKey: key) }
        }
    }

    /// Whether `key` reads as its default: nothing is stored, or what is stored equals
    /// the default.
    ///
    /// - Parameter key: The key.
    /// - Returns: `true` when reading `key` gives its default value.
    public func isDefaultValue<Value: Equatable>(_ key: DefaultsKey<Value>) -> Bool {
        guard let stored = object(forKey: key.name) else { return true }
        return (try? value(for: key, stored: stored)) == key.defaultValue
    }

    /// Runs `body` with the package's writes in it not announced: observers, streams and
    /// `keyDidChangeNotification` do not hear of them, on this task or thread. For an
    /// observer that writes what it observes, to break the loop. A `register(_:)` made
    /// in `body` moves observers to the registered values without a call, in every
    /// suite; what other threads and processes change meanwhile is still heard.
    ///
    /// ```swift
    /// UserDefaults.withoutAnnouncing {
    ///     defaults[.volume] = normalized(volume)
    /// }
    /// ```
    ///
    /// - Parameter body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withoutAnnouncing<R>(_ body: () throws -> R) rethrows -> R {
        try DefaultsSuite.$isAnnouncing.withValue(false, operation: body)
    }

    /// The value for `key`, without throwing.
    ///
    /// Reading gives the key's default when nothing is stored, and also when the stored
    /// value does not decode; that failure goes to `DefaultsFailure.handler`, and the
    /// stored value is left as it is. Writing a value that cannot be stored leaves the
    /// stored value as it was and reports the failure the same way.
    ///
    /// - Parameter key: The key to read or write.
    public subscript<Value>(key: DefaultsKey<Value>) -> Value {
        get {
            valueReportingFailure(for: key, stored: object(forKey: key.name))
        }
        set {
            do {
                try write(newValue, to: key)
            } catch {
                DefaultsFailure.report(DefaultsFailure(key: key.name, operation: .write, error: error))
            }
        }
    }

    /// Registers the keys' default values in the registration domain, in the same
    /// plist-native form as stored values, so that `dictionaryRepresentation()` and
    /// readers that do not know the keys see them. Keys whose default is `nil` are skipped.
    ///
    /// ```swift
    /// try UserDefaults.standard.register(.launchCount, .theme)
    /// ```
    ///
    /// - Parameter keys: The keys to register.
    /// - Throws: `EncodingError.invalidValue` when a default cannot be stored; nothing is
    ///   registered then.
    public func register(_ keys: DefaultsKeys...) throws {
        var values: [String: Any] = [:]
        for key in keys {
            if let value = try key.registrationValue() { values[key.name] = value }
        }
        DefaultsSuite.register(values, on: self)
    }

    // MARK: Reading

    /// Decodes `stored` for `key`, falling back to the key's legacy format.
    func value<Value>(for key: DefaultsKey<Value>, stored: Any?) throws -> Value {
        guard let stored else {
            try throwIfFileUnreadable()
            return key.defaultValue
        }
        if key.missingFields == .fromDefault { return try MissingFields.decode(stored, for: key) }
        return try LegacyFormat.decodeStored(Value.self, from: stored, legacy: key.legacyFormat)
    }

    /// `value(for:stored:)`, with failures reported and the default returned.
    func valueReportingFailure<Value>(for key: DefaultsKey<Value>, stored: Any?) -> Value {
        do {
            return try value(for: key, stored: stored)
        } catch {
            DefaultsFailure.report(DefaultsFailure(key: key.name, operation: .read, error: error))
            return key.defaultValue
        }
    }
}

// MARK: - The package's other products

extension UserDefaults {
    /// What `object(forKey:)` shows for each of `keys` (every key the suite shows, when
    /// `nil`), less the values only the registration domain holds: registered defaults
    /// would hide what a layer below a configuration provider holds. For the package's
    /// other products.
    ///
    /// Read from Foundation's own state of the suite, once for all the keys: what it
    /// shows, not what a change would read (that begins by saving and reloading the file).
    ///
    /// - Parameter keys: The keys, or `nil` for all.
    /// - Returns: The values by key; a key with nothing but a registered default is absent.
    package func objectsSkippingRegisteredDefaults(forKeys keys: [String]? = nil) -> [String: Any] {
        let shown =
            keys.map { keys in keys.reduce(into: [String: Any]()) { shown, key in shown[key] = object(forKey: key) } }
            ?? dictionaryRepresentation()
        // Apple's Foundation shows the registration domain; Foundation on Linux keeps it
        // out of `volatileDomain(forName:)`, so there every shown value may be one.
        let registration = volatileDomain(forName: UserDefaults.registrationDomain)
        let maybeRegistered = shown.keys.filter { registration.isEmpty || registration[$0] != nil }
        guard !maybeRegistered.isEmpty else { return shown }
        var elsewhere = [volatileDomain(forName: UserDefaults.argumentDomain), persistentDomain(forName: UserDefaults.globalDomain) ?? [:]]
        switch SuiteName.of(self) {
        case .some(let name): elsewhere.append(persistentDomain(forName: name ?? SuiteName.application) ?? [:])
        // A suite whose name cannot be learned: its own values as a change reads them.
        case nil: elsewhere.append((try? DefaultsSuite.of(self).backend.storedValues(of: self)) ?? [:])
        }
        var result = shown
        for key in maybeRegistered where !elsewhere.contains(where: { $0[key] != nil }) { result[key] = nil }
        return result
    }

    /// Decodes `object`, as `object(forKey:)` gave it, as typed keys do: exact numbers,
    /// launch arguments' strings read by their grammar (`"42"`, `"YES"`), the stored
    /// form's reserved strings. For the package's other products.
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - object: The value.
    /// - Returns: The value.
    /// - Throws: `DecodingError` when `object` is not a `T`.
    package static func decodeStoredValue<T: Decodable>(_ type: T.Type, from object: Any) throws -> T {
        try KeyValueDecoder().decodeFromUserDefaults(type, from: object)
    }

    /// Whether two values, as `object(forKey:)` gives them, are the same property list.
    /// For the package's other products.
    ///
    /// - Parameters:
    ///   - lhs: A value, or `nil`.
    ///   - rhs: Another.
    /// - Returns: Whether both are absent, or equal as property lists.
    package static func isSameStoredValue(_ lhs: Any?, _ rhs: Any?) -> Bool {
        sameStoredValue(lhs, rhs)
    }
}
