// Versioned, run-once migrations of a suite's stored values: rename a key, move it into
// another suite, change its stored type, remove keys. Every step of every pending
// version is worked out on a copy first; only when all of them succeed is the result
// written, with the new version, in one change of the suites (`DefaultsSuite.change`).

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// One version of an app's stored settings: the steps that bring the values the previous
/// version stored to the form this version reads.
///
/// ```swift
/// extension DefaultsKeys {
///     static let fontSize = DefaultsKey<Double>("appearance.fontSize", default: 13)
/// }
///
/// // At launch, before anything reads settings:
/// try UserDefaults.standard.migrate(
///     DefaultsMigration(version: 1, .rename("username", to: "account.name")),
///     DefaultsMigration(version: 2, .convert("font", from: Int.self, to: .fontSize) { Double($0) })
/// )
/// ```
///
/// `UserDefaults.migrate(_:versionKey:)` runs, in order, the migrations whose version is
/// above the one the suite records, and records the last one. A migration that ran is
/// never run again, also by another process.
public struct DefaultsMigration: Sendable {
    /// The version this migration brings the suite to; versions must increase.
    public let version: Int
    /// What to do, in order.
    public let steps: [Step]

    /// The key the suite's version is recorded under, unless `migrate` is told another.
    public static let versionKey = DefaultsSuite.versionRecordKey

    /// A migration to `version`.
    ///
    /// - Parameters:
    ///   - version: The version it brings the suite to; 1 or more.
    ///   - steps: What to do, in order.
    public init(version: Int, _ steps: Step...) {
        self.init(version: version, steps: steps)
    }

    /// A migration to `version`, with its steps as an array.
    ///
    /// - Parameters:
    ///   - version: The version it brings the suite to; 1 or more.
    ///   - steps: What to do, in order.
    public init(version: Int, steps: [Step]) {
        self.version = version
        self.steps = steps
    }

    /// One change to the stored values. A step whose key holds nothing does nothing.
    public struct Step: Sendable {
        let kind: Kind

        enum Kind: Sendable {
            case rename(from: String, to: String, suite: String?)
            case convert(from: String, to: String, transform: @Sendable (Any) throws -> Any?)
            case remove([String])
        }

        /// The key this step works on, for its errors.
        var sourceKey: String {
            switch kind {
            case .rename(let from, _, _), .convert(let from, _, _): return from
            case .remove(let names): return names.first ?? ""
            }
        }

        /// The other suite this step writes to, if any.
        var targetSuite: String? {
            if case .rename(_, _, let suite) = kind { return suite }
            return nil
        }

        /// Renames a key, keeping the stored value as it is.
        ///
        /// - Parameters:
        ///   - name: The key's former name.
        ///   - newName: Its new name. A different value already stored there stops the
        ///     migration (nothing is changed) rather than being replaced.
        public static func rename(_ name: String, to newName: String) -> Step {
            Step(kind: .rename(from: name, to: newName, suite: nil))
        }

        /// Moves a key's value into another suite — an App Group's, say — under the same
        /// name or a new one, and removes it from this suite.
        ///
        /// - Parameters:
        ///   - name: The key in this suite.
        ///   - newName: Its name in the other suite; `name` unless given.
        ///   - suiteName: The other suite, as for `UserDefaults(suiteName:)`.
        public static func move(_ name: String, to newName: String? = nil, intoSuite suiteName: String) -> Step {
            Step(kind: .rename(from: name, to: newName ?? name, suite: suiteName))
        }

        /// Changes how a key's value is stored: reads it as `Old`, converts it, and stores
        /// the result under `newName` (the same key unless given) in the native form.
        ///
        /// - Parameters:
        ///   - name: The key.
        ///   - type: The type the value was stored as.
        ///   - newName: Where to store the result; `name` unless given. The old key is
        ///     removed.
        ///   - legacy: The blob format the value may be stored in (a `Data` blob from
        ///     `JSONEncoder`, say), tried first when the stored object is of its kind
        ///     (see `LegacyFormat`).
        ///   - transform: The conversion; an error it throws stops the migration, and
        ///     nothing is changed. Returning `nil` for an optional removes the key.
        public static func convert<Old: Decodable & Sendable, New: Encodable & Sendable>(
            _ name: String, from type: Old.Type, to newName: String? = nil, legacy: LegacyFormat? = nil,
            _ transform: @escaping @Sendable (Old) throws -> New
        ) -> Step {
            Step(
                kind: .convert(from: name, to: newName ?? name) { stored in
                    let old = try LegacyFormat.decodeStored(Old.self, from: stored, legacy: legacy)
                    return try KeyValueEncoder().encodeForUserDefaults(try transform(old))
                })
        }

        /// Changes how a key's value is stored, into a typed key: reads the value stored
        /// under `name` as `Old`, converts it, and stores it under `key`.
        ///
        /// ```swift
        /// .convert("font", from: Int.self, to: .fontSize) { Double($0) }
        /// .convert("profile", from: Profile.self, to: .profile, legacy: .json) { $0 }
        /// ```
        ///
        /// - Parameters:
        ///   - name: The key the value is stored under now.
        ///   - type: The type it was stored as.
        ///   - key: Where the converted value goes; when its name differs, the old key is
        ///     removed.
        ///   - legacy: The blob format it may be stored in, tried first when the stored
        ///     object is of its kind (see `LegacyFormat`).
        ///   - transform: The conversion; an error it throws stops the migration.
        public static func convert<Old: Decodable & Sendable, New>(
            _ name: String, from type: Old.Type, to key: DefaultsKey<New>, legacy: LegacyFormat? = nil,
            _ transform: @escaping @Sendable (Old) throws -> New
        ) -> Step {
            convert(name, from: type, to: key.name, legacy: legacy, transform)
        }

        /// Removes keys and their values.
        ///
        /// - Parameter names: The keys to remove.
        public static func remove(_ names: String...) -> Step {
            Step(kind: .remove(names))
        }
    }
}

/// A migration that could not run. Nothing was changed: every key of every suite it
/// touches, and the recorded version, are as they were before it began.
public struct DefaultsMigrationError: Error, Sendable, CustomStringConvertible {
    /// The version whose migration failed.
    public let version: Int
    /// The key the failing step was working on.
    public let key: String
    /// What went wrong, with the coding path when a value did not decode or encode.
    public let reason: String
    /// The error behind it: a `DecodingError`, an `EncodingError`, or what a conversion
    /// threw; `nil` when the migration itself found the problem.
    public let underlyingError: (any Error)?

    /// `Migration to version 2 failed at "font": Expected BinaryInteger at SELF, found String. Nothing was changed.`
    public var description: String {
        "Migration to version \(version) failed at \"\(key)\": \(reason). Nothing was changed."
    }

    init(version: Int, key: String, reason: String, underlyingError: (any Error)? = nil) {
        self.version = version
        self.key = key
        self.reason = reason
        self.underlyingError = underlyingError
    }

    init(version: Int, key: String, error: any Error) {
        let reason = codingErrorContext(of: error)?.debugDescription ?? "\(error)"
        self.init(version: version, key: key, reason: reason, underlyingError: error)
    }
}

/// Running versioned migrations on a suite.
extension UserDefaults {

    /// Runs the migrations whose version is above the one this suite records, in order,
    /// and records the last version — all as one change, or none.
    ///
    /// Call it at launch, before anything reads the keys it moves and before other
    /// threads write to `UserDefaults`, and do not write to the suite from a conversion:
    /// the migration writes the suite as it computed it. (On Linux, Foundation's
    /// `synchronize()` of any suite rewrites every suite with unsaved changes, from the
    /// copy it holds, whatever this package does.)
    /// On Linux the suite's file is replaced in one atomic rename, under a lock other
    /// processes respect too:
    /// a crash leaves either the old file or the new one, and of two processes starting
    /// together one migrates and the other finds it done. A move into another suite
    /// writes that suite first; a crash in between leaves the value in both, and the
    /// migration, still unrecorded, runs again and finds it already there. On Apple
    /// platforms the values are written one by one, the version last: a crash in between
    /// leaves the migration unrecorded, to run again at the next launch.
    ///
    /// - Parameters:
    ///   - migrations: The app's migrations, in increasing order of version.
    ///   - versionKey: The key the version is recorded under.
    /// - Returns: The suite's version now.
    /// - Throws: `DefaultsMigrationError` naming the version and key of the step that
    ///   failed; `UnreadableDefaultsFile` when a suite's file exists but does not parse;
    ///   `DefaultsSuiteError` when the file system refuses (a directory the process
    ///   cannot write, on Linux), or when a move into another suite runs on an object
    ///   whose suite name the package cannot learn (`.unknownSuiteName`: make it with
    ///   `UserDefaults.suite(named:)`). Nothing is changed then.
    @discardableResult
    public func migrate(_ migrations: [DefaultsMigration], versionKey: String = DefaultsMigration.versionKey) throws -> Int {
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where later.version <= earlier.version {
            throw DefaultsMigrationError(version: later.version, key: versionKey, reason: "versions must increase (\(later.version) follows \(earlier.version))")
        }
        if let first = migrations.first, first.version < 1 {
            throw DefaultsMigrationError(version: first.version, key: versionKey, reason: "versions start at 1")
        }
        _ = DefaultsSuite.recordKeys.withLock { $0.insert(versionKey) }
        let targetNames = Array(Set(migrations.flatMap { $0.steps.compactMap(\.targetSuite) })).sorted()
        var targets: [UserDefaults] = []
        var suites: [ObjectIdentifier: String] = [ObjectIdentifier(DefaultsSuite.of(self)): "the suite being migrated"]
        for name in targetNames {
            let step = migrations.lazy.flatMap { migration in migration.steps.lazy.map { (migration.version, $0) } }.first { $0.1.targetSuite == name }
            let (version, key) = (step?.0 ?? 0, step?.1.sourceKey ?? name)
            guard let target = UserDefaults.suite(named: name) else {
                throw DefaultsMigrationError(version: version, key: name, reason: "UserDefaults(suiteName: \"\(name)\") is not a suite this process can open")
            }
            // Known by its suite: another spelling of a suite already in the change
            // would be written twice (and, moving a key into the suite it is in, the
            // key written and then removed).
            let suite = DefaultsSuite.of(target)
            if let other = suites[ObjectIdentifier(suite)] {
                throw DefaultsMigrationError(version: version, key: key, reason: "suite \(name) is \(other) (\(suite.backend.identity))")
            }
            suites[ObjectIdentifier(suite)] = "suite \(name)"
            targets.append(target)
        }
        return try DefaultsSuite.change([self] + targets, acrossProcesses: true) { values in
            let recorded = try values.recordedVersion(versionKey, migratingTo: migrations.last?.version ?? 0)
            let pending = migrations.filter { $0.version > recorded }
            guard let last = pending.last else { return recorded }
            for migration in pending {
                for step in migration.steps {
                    try values.apply(step, version: migration.version, suites: targetNames)
                }
            }
            try values.set(last.version, forKey: versionKey)
            return last.version
        }
    }

    /// Runs the given migrations; see `migrate(_:versionKey:)`.
    ///
    /// - Parameters:
    ///   - migrations: The app's migrations, in increasing order of version.
    ///   - versionKey: The key the version is recorded under.
    /// - Returns: The suite's version now.
    /// - Throws: `DefaultsMigrationError`, `UnreadableDefaultsFile` or
    ///   `DefaultsSuiteError`; nothing is changed then.
    @discardableResult
    public func migrate(_ migrations: DefaultsMigration..., versionKey: String = DefaultsMigration.versionKey) throws -> Int {
        try migrate(migrations, versionKey: versionKey)
    }

    /// The version the last migration recorded in this suite; 0 when none ran. It reads
    /// the record `migrate(_:versionKey:)` acts on: the suite's own value, not a
    /// registered default or a launch argument.
    ///
    /// - Parameter versionKey: The key the version is recorded under.
    /// - Returns: The recorded version.
    /// - Throws: `DefaultsMigrationError` when the record is not a version the package
    ///   wrote; `UnreadableDefaultsFile` when the suite's file does not parse;
    ///   `DefaultsSuiteError` when the suite's lock cannot be taken.
    public func migrationVersion(versionKey: String = DefaultsMigration.versionKey) throws -> Int {
        try DefaultsSuite.change([self], announcing: false) { try $0.recordedVersion(versionKey, migratingTo: nil) }
    }
}

extension DefaultsSuite.Values {
    /// The version recorded in the migrated suite; 0 when none is.
    ///
    /// - Throws: `DefaultsMigrationError` when the record is anything but an integer of
    ///   1 or more, as `migrate` writes it: a damaged record must stop the migrations,
    ///   never run them again.
    /// - Parameter target: The version the migration runs to, for its error; `nil` when
    ///   the record is only read (its error then names version 0).
    func recordedVersion(_ versionKey: String, migratingTo target: Int?) throws -> Int {
        guard let record = value(forKey: versionKey) else { return 0 }
        switch classifyNumber(record) {
        // `Int(exactly:)`: a record too large for a 32-bit `Int` is no version `migrate`
        // wrote there.
        case .signed(let version, _) where version >= 1: if let version = Int(exactly: version) { return version }
        case .unsigned(let version, _) where version >= 1: if let version = Int(exactly: version) { return version }
        default: break
        }
        throw DefaultsMigrationError(
            version: target ?? 0, key: versionKey,
            reason:
                "the recorded version is \(FoundValue.describing(record).description): \(String(describing: record).prefix(40)), not a version a migration wrote; nothing was run")
    }
    /// Applies one step of the migration to `version`; `suites` are the other suites
    /// the migration writes, by name, in the order they were given to `DefaultsSuite.change`.
    mutating func apply(_ step: DefaultsMigration.Step, version: Int, suites: [String]) throws {
        do {
            try apply(step, suites: suites)
        } catch let error as DefaultsMigrationError {
            throw error
        } catch {
            throw DefaultsMigrationError(version: version, key: step.sourceKey, error: error)
        }

        func fail(_ reason: String) -> DefaultsMigrationError {
            DefaultsMigrationError(version: version, key: step.sourceKey, reason: reason)
        }
        func apply(_ step: DefaultsMigration.Step, suites: [String]) throws {
            switch step.kind {
            case .remove(let names):
                for name in names { try set(nil, forKey: name) }
            case .rename(let name, let newName, let suite):
                guard let value = value(forKey: name) else { return }
                if suite == nil && newName == name { return }
                let target = suite.flatMap { suites.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
                if let existing = self.value(forKey: newName, in: target), !plistEqual(existing, value) {
                    let place = suite.map { "\"\(newName)\" in suite \($0)" } ?? "\"\(newName)\""
                    throw fail("\(place) already holds a different value")
                }
                try set(value, forKey: newName, in: target)
                try set(nil, forKey: name)
            case .convert(let name, let newName, let transform):
                guard let stored = value(forKey: name) else { return }
                if newName != name, let existing = value(forKey: newName) {
                    throw fail("\"\(newName)\" already holds a value (\(FoundValue.describing(existing).description))")
                }
                let converted = try transform(stored)
                if newName != name { try set(nil, forKey: name) }
                try set(converted, forKey: newName)
            }
        }
    }
}
