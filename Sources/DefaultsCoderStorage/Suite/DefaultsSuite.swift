// The one way in and out of a suite. Every change the package makes — `encode`, a
// typed key's write or reset, the subscript and `@UserDefault`, `register`, a
// migration, moving an unreadable file aside — goes through `DefaultsSuite.change`, which checks
// the keys, takes the suite's lock, reads its own values through its backend (the file
// on Linux, preferences on Apple platforms), writes them, publishes the change to the
// suite's feed and announces it, once, in that order. No other file writes to a suite.

import Foundation
import KeyValueCoders

/// A suite as the package knows it: where its values are kept (its backend), and the
/// `UserDefaults` objects the app holds for it, to announce changes on. One object per
/// suite, shared by every `UserDefaults` object of the suite, however its name was
/// spelled.
package final class DefaultsSuite: @unchecked Sendable {
    // Unchecked: `backend` is a constant of a Sendable type, `objects` is behind a lock.

    /// Where the suite's values are kept, and how a change is written.
    package let backend: any SuiteBackend
    /// The suite's changes, for the observers of the layer above.
    package let feed: ChangeFeed
    /// The objects of this suite, to post `keyDidChangeNotification` on and, with the
    /// feed, which shares the list, to reload on Linux.
    private let objects: Locked<[WeakReference]>

    private init(backend: any SuiteBackend) {
        self.backend = backend
        let objects = Locked<[WeakReference]>([])
        self.objects = objects
        feed = ChangeFeed(backend: backend, objects: objects)
    }

    /// The clock edits of synced keys are stamped with (`editClock`, EditStamps.swift).
    let editClockStorage = Locked<@Sendable () -> Date>({ Date() })

    /// Each `UserDefaults` object's suite, by object.
    private static let byObject = Locked<[ObjectIdentifier: SuiteOfObject]>([:])
    /// Each suite, by its file's path or its name.
    private static let byIdentity = Locked<[String: DefaultsSuite]>([:])

    /// The key the migration version is recorded under unless a migration says another
    /// (`DefaultsMigration.versionKey`, which the layer above names).
    package static let versionRecordKey = "DefaultsCoder.version"

    /// The keys that hold records of the package's own, which `resetAll()` keeps: the
    /// migration version record, under its default key and under every key a migration
    /// in this process recorded it.
    package static let recordKeys = Locked<Set<String>>([versionRecordKey])

    /// The key under which the sync engine keeps this device's record, and the prefix
    /// (with a dot) of the records it keeps next to each synced key.
    static let syncRecordKey = "DefaultsCoder.sync"

    /// Whether `key` holds one of the package's records, which `resetAll()` keeps: a
    /// reset removes values, and the sync engine needs its records to upload the removals.
    package static func isRecord(_ key: String, recorded: Set<String>) -> Bool {
        recorded.contains(key) || isSyncRecord(key)
    }

    /// Whether `key` is one of the sync engine's records, which are written with the
    /// values they describe but never announced.
    package static func isSyncRecord(_ key: String) -> Bool {
        key == syncRecordKey || key.hasPrefix(syncRecordKey + ".")
    }

    /// Whether the package's writes on this task or thread are announced; not inside
    /// `UserDefaults.withoutAnnouncing`.
    @TaskLocal package static var isAnnouncing = true

    /// Whether this thread is writing a change through `UserDefaults` itself: what
    /// Foundation announces meanwhile (`didChangeNotification`, posted on the writing
    /// thread on Apple platforms) is this change, announced once when it is written.
    @TaskLocal static var isWriting = false

    /// Whether the package knows the suite by its name (or file), rather than by one
    /// object alone.
    var isNamed: Bool { backend.isNamed }

    /// The suite `defaults` belongs to. Looked up once per object: learning the suite's
    /// name costs more than the rest of a write's bookkeeping.
    ///
    /// - Parameter forWriting: Whether a change will write through the suite: on Linux its
    ///   file is then looked for again where a symbolic link (the file's, or its
    ///   directory's) was pointed elsewhere since, so that the write lands where Foundation
    ///   reads. Reads skip the look, a `stat` they need not pay.
    package static func of(_ defaults: UserDefaults, forWriting: Bool = false) -> DefaultsSuite {
        if let known = entry(of: defaults), !forWriting || known.leadsToItsFile { return known.suite }
        let suite: DefaultsSuite
        var spelled: String?
        if let (identity, path, make) = backend(of: defaults) {
            spelled = path
            suite = byIdentity.withLock { suites in
                if let suite = suites[identity] { return suite }
                let suite = DefaultsSuite(backend: make())
                suites[identity] = suite
                return suite
            }
        } else {
            // A suite whose name cannot be learned is known by its object alone.
            suite = DefaultsSuite(backend: SuiteBackendKind.unnamed())
        }
        suite.objects.withLock { objects in
            objects.removeAll { $0.object == nil }
            objects.append(WeakReference(defaults))
        }
        byObject.withLock { byObject in
            if byObject.count >= 64 { byObject = byObject.filter { $0.value.isAlive } }
            byObject[ObjectIdentifier(defaults)] = SuiteOfObject(defaults, suite: suite, spelled: spelled)
        }
        return suite
    }

    /// The suite of `defaults` when the package has met the object, without making one
    /// (which would look for its file and lock): for what only needs a suite that exists.
    package static func known(_ defaults: UserDefaults) -> DefaultsSuite? {
        entry(of: defaults)?.suite
    }

    /// The entry of `defaults` itself, if the package has met it (not another object
    /// since found at its address).
    private static func entry(of defaults: UserDefaults) -> SuiteOfObject? {
        guard let entry = byObject.withLock({ $0[ObjectIdentifier(defaults)] }), entry.isStill(defaults) else { return nil }
        return entry
    }

    /// The identity of the suite of `defaults`, the path its file is spelled by (the file
    /// backend's), and how to make its backend; `nil` when its name cannot be learned.
    private static func backend(of defaults: UserDefaults) -> (String, String?, () -> any SuiteBackend)? {
        guard let name = SuiteName.of(defaults) else { return nil }
        return SuiteBackendKind.current.backend(ofSuiteNamed: name)
    }

    // MARK: - Changing suites

    /// The values of the suites one change works on, by their place in the list the
    /// change was given (0 is the suite it runs on). Reads see the changes made so far.
    package struct Values {
        fileprivate var domains: [Domain]

        fileprivate struct Domain {
            let defaults: UserDefaults
            let suite: DefaultsSuite
            /// The suite's own values as the change found them: never a registered
            /// default, a launch argument or the global domain's. Read when first asked
            /// for, where reading cannot fail: a write of one value reads nothing.
            var stored = StoredValues()
            /// The new value of each changed key (`nil` removes), and the keys in the
            /// order they first changed.
            var changes: [String: Any?] = [:]
            var order: [String] = []

            func value(forKey key: String) -> Any? {
                if let change = changes[key] { return change }
                return stored.values[key]
            }
        }

        /// The value suite `index` itself holds under `key`, with the changes made so far.
        package func value(forKey key: String, in index: Int = 0) -> Any? {
            domains[index].value(forKey: key)
        }

        /// Whether `key` may hold a value in suite `index`, by one lookup that reads none
        /// of the suite's other values: `false` only when it holds none.
        func mayHoldValue(forKey key: String, in index: Int) -> Bool {
            let domain = domains[index]
            if let change = domain.changes[key] { return change != nil }
            // A backend that read the values already answers from them: Foundation's
            // lookup would reload its cache of the file this process last replaced, a
            // parse of the whole file inside the write.
            if domain.suite.backend.readsBeforeChanging { return domain.stored.values[key] != nil }
            return domain.defaults.object(forKey: key) != nil
        }

        /// How many suites the change works on.
        var count: Int { domains.count }

        /// The suite `index` is of.
        func suite(at index: Int) -> DefaultsSuite { domains[index].suite }

        /// The keys the change wrote or removed in suite `index` so far, in the order they
        /// first changed.
        func changedKeys(in index: Int) -> [String] { domains[index].order }

        /// Stores a tree in the stored form under `key` in suite `index`; `nil` removes
        /// the key. A removal of an absent key changes nothing.
        ///
        /// - Throws: `EncodingError.invalidValue` for a key the suite's file cannot keep.
        package mutating func set(_ tree: Any?, forKey key: String, in index: Int = 0) throws {
            if let problem = StoredEncodingForm.shared.problem(withKey: key) {
                throw EncodingError.invalid(tree ?? StoredForm.none, StoredEncodingForm.shared.message(for: problem), at: [])
            }
            if tree == nil && value(forKey: key, in: index) == nil { return }
            if domains[index].changes.updateValue(tree, forKey: key) == nil { domains[index].order.append(key) }
        }

        /// The keys suite `index` itself holds, with the changes made so far.
        package func keys(in index: Int = 0) -> [String] {
            let domain = domains[index]
            var keys = Set(domain.stored.values.keys)
            for (key, value) in domain.changes {
                if value == nil { keys.remove(key) } else { keys.insert(key) }
            }
            return keys.sorted()
        }
    }

    /// Runs `body` on the values of the suites of `objects` (the first is the one the
    /// change runs on) and writes what it changed as one change: the other suites first,
    /// the first last. When `body` throws, nothing is written.
    ///
    /// Each suite is locked (on Linux in this process and every other running this
    /// package; elsewhere in every process only `acrossProcesses`), its own values read
    /// as they are now, and written through its backend: on Linux the file is replaced in
    /// one rename; on Apple platforms the values go through `set(_:forKey:)`.
    ///
    /// - Parameters:
    ///   - announcing: Whether observers hear of the change.
    ///   - acrossProcesses: Whether the change must not interleave with another
    ///     process's change of the same suites (migrations, `resetAll()`).
    ///   - stampingEdits: Whether edits of synced keys are recorded with their time
    ///     (`Values.stampEdits()`): every change but the sync engine's own.
    /// - Throws: What `body` throws; `UnreadableDefaultsFile` when a suite's file does
    ///   not parse; `DefaultsSuiteError` when one change names a suite twice, or the file
    ///   system refuses.
    package static func change<R>(
        _ objects: [UserDefaults], announcing: Bool = true, acrossProcesses: Bool = false, stampingEdits: Bool = true,
        _ body: (inout Values) throws -> R
    ) throws -> R {
        let suites = objects.map { DefaultsSuite.of($0, forWriting: true) }
        for (index, suite) in suites.enumerated() where suites[..<index].contains(where: { $0 === suite }) {
            throw DefaultsSuiteError(operation: .sameSuiteTwice, path: suite.backend.identity, reason: "one change names this suite twice")
        }
        if suites.count > 1, let unnamed = suites.first(where: { !$0.isNamed }) {
            throw DefaultsSuiteError(
                operation: .unknownSuiteName, path: unnamed.backend.identity,
                reason: "the package cannot learn this object's suite name, so it cannot tell whether both are one suite; make it with UserDefaults.suite(named:)"
            )
        }
        var values = Values(domains: zip(objects, suites).map { Values.Domain(defaults: $0, suite: $1) })
        let announced = announcing && isAnnouncing
        let locked = suites.sorted { $0.backend.identity < $1.backend.identity }.map(\.backend)
        typealias Written = (domain: Values.Domain, arguments: [String: Any], published: ChangeFeed.Queued)
        let (result, written) = try withLocks(on: locked[...], acrossProcesses: acrossProcesses) { () throws -> (R, [Written]) in
            for domain in values.domains {
                let (backend, defaults) = (domain.suite.backend, domain.defaults)
                if backend.readsBeforeChanging {
                    let values = try backend.storedValues(of: defaults)
                    domain.stored.load = { values }
                } else {
                    domain.stored.load = { (try? backend.storedValues(of: defaults)) ?? [:] }
                }
            }
            let result = try body(&values)
            if stampingEdits { values.stampEdits() }
            var written: [Written] = []
            for domain in values.domains.reversed() where !domain.order.isEmpty {
                try domain.suite.backend.write(domain.changes, order: domain.order, over: domain.stored.values, through: domain.defaults)
                // Under the lock: a recheck on another thread reads through any object of
                // the suite, and must never find one older than this write.
                domain.suite.reloadObjects(besides: domain.defaults)
                // Launch arguments hide what was written: read once, for the feed and the
                // report both.
                let arguments = domain.defaults.volatileDomain(forName: UserDefaults.argumentDomain)
                // Published under the lock: changes queue in the order they reached the suite.
                let published = domain.suite.feed.publish(
                    written: domain.order.map { ($0, domain.changes[$0]!) }, through: domain.defaults, arguments: arguments, announcing: announced)
                written.append((domain, arguments, published))
            }
            return (result, written)
        }
        for (domain, arguments, published) in written {
            // The change returns once its observers ran.
            domain.suite.feed.deliver(published)
            if announced { for key in domain.order where !isSyncRecord(key) { domain.suite.postNotification(forKey: key) } }
            domain.suite.backend.announceToOtherProcesses()
            reportLaunchArgumentOverrides(domain, arguments: arguments)
        }
        return result
    }

    /// A suite's own values, read once, when first asked for.
    fileprivate final class StoredValues {
        var load: () -> [String: Any] = { [:] }
        private(set) lazy var values: [String: Any] = load()
    }

    /// Runs `body` holding each backend's lock in turn, in the order given.
    private static func withLocks<R>(on backends: ArraySlice<any SuiteBackend>, acrossProcesses: Bool, _ body: () throws -> R) throws -> R {
        guard let backend = backends.first else { return try body() }
        return try backend.withLock(acrossProcesses: acrossProcesses) {
            try withLocks(on: backends.dropFirst(), acrossProcesses: acrossProcesses, body)
        }
    }

    /// Reports each key a change wrote or removed that a launch argument hides in this
    /// process: reads go on giving the argument either way.
    private static func reportLaunchArgumentOverrides(_ domain: Values.Domain, arguments: [String: Any]) {
        guard !arguments.isEmpty else { return }
        for key in domain.order {
            guard let argument = arguments[key] else { continue }
            let override = LaunchArgumentOverride(key: key, argument: "\(argument)", isRemoval: domain.changes[key]! == nil)
            DefaultsFailure.report(DefaultsFailure(key: key, operation: .write, error: override))
        }
    }

    /// Makes the other objects of this suite that the package has seen read what a
    /// change wrote, and `UserDefaults.standard` when the suite is the app's own domain
    /// written through a named object. Foundation on Linux keeps a cache per object (two
    /// spellings of one file, or a suite named after the app's own domain beside
    /// `.standard`), reloaded only when told; `cfprefsd` keeps every object current on
    /// Apple platforms.
    fileprivate func reloadObjects(besides writer: UserDefaults) {
        #if !canImport(Darwin)
        // `.standard` is an object of the app's own suite whether or not the package has
        // seen it: app code reads it with plain Foundation.
        _ = Self.standardSuite
        backend.reload(objects.live().filter { $0 !== writer })
        #endif
    }

    #if !canImport(Darwin)
    /// The app's own suite, with `UserDefaults.standard` among its objects.
    private static let standardSuite = DefaultsSuite.of(UserDefaults.standard)
    #endif

    // MARK: - Announcing

    /// Posts `keyDidChangeNotification` for `key` on every object of this suite the app
    /// still holds.
    func postNotification(forKey key: String) {
        for defaults in objects.live() {
            NotificationCenter.default.post(name: UserDefaults.keyDidChangeNotification, object: defaults, userInfo: ["key": key])
        }
    }

    /// Registers defaults on `defaults` and announces the keys whose value that changes.
    package static func register(_ values: [String: Any], on defaults: UserDefaults) {
        let suite = DefaultsSuite.of(defaults)
        ChangeFeed.register(values, on: suite.feed, through: defaults, announcing: isAnnouncing) {
            // Apple's Foundation announces the registration as it makes it; it is this
            // change, published once registered (unannounced inside `withoutAnnouncing`).
            $isWriting.withValue(true) { defaults.register(defaults: values) }
        }
        guard isAnnouncing else { return }
        for key in values.keys.sorted() { suite.postNotification(forKey: key) }
    }
}

/// The suite layer's announcement of its changes.
extension UserDefaults {
    /// The notification this package posts after it changed a value, on every platform,
    /// with the key's name under `"key"` in `userInfo`. It is posted once on each
    /// `UserDefaults` object of the suite that the package has seen (any of its calls on an
    /// object registers it), whichever object made the change — a migration's target
    /// suite included. To hear every change whatever the object, observe with
    /// `object: nil`.
    ///
    /// Foundation's `didChangeNotification` is not enough: on Linux it is posted for
    /// `setPersistentDomain(_:forName:)` and `removePersistentDomain(forName:)` only, not
    /// for `set(_:forKey:)` or `removeObject(forKey:)`.
    public static let keyDidChangeNotification = Notification.Name("DefaultsCoder.keyDidChange")
}

/// A `UserDefaults` object whose suite the package knows: its suite, a weak reference
/// to tell whether it lives, and what makes sure that a new object at its address is
/// never taken for it.
private final class SuiteOfObject: @unchecked Sendable {
    // Unchecked: set once in init; the runtime makes reading a weak reference safe on
    // any thread.
    let suite: DefaultsSuite
    private weak var object: UserDefaults?
    #if !canImport(ObjectiveC)
    // A Swift object's memory stays while an unowned reference to it does, though the
    // object dies when its last strong reference goes: no other object takes its address
    // while this entry lives, so a lookup by address needs no check. A weak reference's
    // load was much of what an absent key's read added to Foundation's (it goes through
    // the object's side table, as every reference count of a weakly referenced object
    // does; measured in the history of Benchmarks/README.md).
    private unowned(safe) let memory: UserDefaults
    #endif

    /// The path the suite's file is spelled by, links unresolved (the file backend's).
    private let spelled: String?

    init(_ object: UserDefaults, suite: DefaultsSuite, spelled: String?) {
        self.suite = suite
        self.spelled = spelled
        self.object = object
        #if !canImport(ObjectiveC)
        memory = object
        #endif
    }

    var isAlive: Bool { object != nil }

    /// Whether the suite's spelled path still leads to the suite's file.
    var leadsToItsFile: Bool {
        guard let spelled else { return true }
        return suite.backend.isStill(at: spelled)
    }

    /// Whether `defaults`, found at this object's address, is this object.
    func isStill(_ defaults: UserDefaults) -> Bool {
        #if canImport(ObjectiveC)
        // An unowned reference to an Objective-C object keeps nothing of it: its address
        // may be a new object's.
        return object === defaults
        #else
        return true
        #endif
    }
}

/// A reference that does not keep its object alive.
package final class WeakReference: @unchecked Sendable {
    // Set once in init; the runtime makes reading a weak reference safe on any thread.
    package weak var object: AnyObject?
    package init(_ object: AnyObject) { self.object = object }
}

// A suite's objects. Each reference is read once: its object may die on another thread
// between two reads (a lazy `compactMap` reads twice, and traps on the second `nil`).
extension Locked where State == [WeakReference] {
    /// The objects the app still holds, the dead ones dropped.
    func live() -> [UserDefaults] {
        withLock { references in
            references.removeAll { $0.object == nil }
            return references.compactMap { $0.object as? UserDefaults }
        }
    }

    /// The first object the app still holds, with nothing copied.
    func firstLive() -> UserDefaults? {
        withLock { references in
            for reference in references { if let defaults = reference.object as? UserDefaults { return defaults } }
            return nil
        }
    }
}
