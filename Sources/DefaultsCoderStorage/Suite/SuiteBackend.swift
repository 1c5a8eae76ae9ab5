// The seam between a suite and the platform that keeps it. Two backends sit behind it:
// the suite's file, which the package writes itself where Foundation keeps suites in
// files (Linux), and preferences through `UserDefaults` alone, where `cfprefsd` owns the
// storage (Apple platforms). The second runs on Linux too, chosen by an environment
// variable, so that the tests run the Apple path against a test double of Apple's
// `UserDefaults`.

import Foundation
import KeyValueCoders

#if canImport(ObjectiveC)
import ObjectiveC
#endif

/// Where a suite's own values are kept, and how one change of them is written.
package protocol SuiteBackend: AnyObject, Sendable {
    /// What errors call the suite: its file's path, or its name.
    var identity: String { get }

    /// Runs `body` holding the suite's lock: package changes of the suite take turns on
    /// it in this process; a file's writes, and on every backend a change made
    /// `acrossProcesses` (a migration, `resetAll()`), also in every process running this
    /// package.
    func withLock<R>(acrossProcesses: Bool, _ body: () throws -> R) throws -> R

    /// Runs `body` holding the suite's lock within this process only: what reads the
    /// suite in order with this process's package writes, and never waits for another
    /// process.
    func withProcessLock<R>(_ body: () throws -> R) rethrows -> R

    /// Whether a change reads the suite's values before it runs: a file is written
    /// whole, and one that cannot be read must stop the change before it begins.
    var readsBeforeChanging: Bool { get }

    /// The values the suite itself holds — never registered defaults, launch arguments
    /// or the global domain — as the change that starts now sees them.
    ///
    /// - Throws: `UnreadableDefaultsFile` when the suite's file does not parse.
    func storedValues(of defaults: UserDefaults) throws -> [String: Any]

    /// Writes a change: `changes` holds the new value of each key in `order` (`nil`
    /// removes it), `stored` what `storedValues(of:)` gave when the change began. Keys
    /// the change does not name keep what the suite holds when it is written (the file
    /// backend reads the file again then, for what a plain `synchronize()` on another
    /// thread wrote meanwhile). Called holding `withLock`.
    func write(_ changes: [String: Any?], order: [String], over stored: [String: Any], through defaults: UserDefaults) throws

    /// Makes each of `objects`, the suite's objects, show what another process wrote
    /// since it last read the suite, before the feed reads the keys it is asked to
    /// recheck.
    func reload(_ objects: [UserDefaults])

    /// Why the suite's storage cannot be read, or `nil` when it can.
    func unreadableFile() -> UnreadableDefaultsFile?

    /// Moves an unreadable file aside, under the suite's lock; `nil` when there is none.
    func moveUnreadableFileAside(of defaults: UserDefaults) throws -> URL?

    /// Whether the suite is known by its name or its file, rather than by one object.
    var isNamed: Bool { get }

    /// Whether `spelled`, the path a suite object's name led to when it was first seen,
    /// still leads to this suite (a symbolic link may be pointed elsewhere since).
    func isStill(at spelled: String) -> Bool

    /// Starts hearing the changes other processes make to the suite: `onChange` runs on a
    /// queue of the package's, `onFailure` says once that hearing fell back to something
    /// poorer. `nil` where the backend hears nothing of other processes.
    func watchOtherProcesses(
        onFailure: @escaping @Sendable (DefaultsSuiteError) -> Void, _ onChange: @escaping @Sendable () -> Void
    ) -> (any ExternalChangesToken)?

    /// Tells other processes that the package changed the suite.
    func announceToOtherProcesses()
}

/// Which backend the suites of this process use.
enum SuiteBackendKind: String, Sendable {
    /// The suite's file, written by the package (Linux).
    case file
    /// Preferences through `UserDefaults` alone (Apple platforms).
    case preferences

    /// The backend of this process: `preferences` on every platform but Linux; on Linux
    /// `file`, unless the environment variable `DEFAULTSCODER_SUITE_BACKEND` says
    /// `preferences` (read once, at the first use of a suite).
    static let current: SuiteBackendKind = {
        #if os(Linux)
        let chosen = ProcessInfo.processInfo.environment["DEFAULTSCODER_SUITE_BACKEND"].flatMap(SuiteBackendKind.init(rawValue:))
        return chosen ?? .file
        #else
        return .preferences
        #endif
    }()

    /// The backend of the suite `name` (`nil`: the app's own): the identity suites are
    /// shared by, the path the suite's file is spelled by (the file backend's), and how
    /// to make the backend when no suite of that identity exists yet.
    func backend(ofSuiteNamed name: String?) -> (identity: String, spelled: String?, make: () -> any SuiteBackend) {
        #if os(Linux)
        if self == .file {
            let spelled = SuiteFile.spelledPath(of: name)
            let file = SuiteFile.named(name)
            return ("file:" + file.path, spelled, { file })
        }
        #endif
        let domain = name ?? SuiteName.application
        return ("preferences:" + domain, nil, { PreferencesBackend(name: domain) })
    }

    /// The backend of a suite whose name cannot be learned: known by its object alone.
    static func unnamed() -> any SuiteBackend { PreferencesBackend(name: nil) }
}

/// A suite kept by `UserDefaults` alone. Reads of its own values go through
/// `persistentDomain(forName:)` — `object(forKey:)` and `dictionaryRepresentation()`
/// also search the argument, global and registration domains — and writes through
/// `set(_:forKey:)` and `removeObject(forKey:)`, with the change's own announcements
/// from Foundation held back until the whole change is written (`DefaultsSuite.isWriting`).
final class PreferencesBackend: SuiteBackend {
    /// The suite's domain name; `nil` when the package cannot learn it (a suite object
    /// of an Apple platform whose name is hidden), and its own values are worked out
    /// from the other domains (`ownValues(of:)`).
    let name: String?
    /// Package changes of this suite take turns in this process. Migrations and
    /// `resetAll()` of a suite of known name also take a lock file
    /// (`lockPath(forSuite:)`), without blocking and, on the iOS family, inside an
    /// expiring background activity: `cfprefsd` orders each key's writes, but nothing
    /// else orders a whole change, and an app and its extension each migrating a shared
    /// suite at launch would each run the migration. Plain writes take no file lock, as
    /// Foundation's take none: a suspended app holding one in a shared container is
    /// terminated.
    private let lock: CrossProcessLock

    init(name: String?) {
        self.name = name
        let identity = name ?? "UserDefaults suite"
        lock = CrossProcessLock.shared(path: name.map(Self.lockPath(forSuite:)) ?? "", waiting: .preferences) { error in
            DefaultsFailure.report(DefaultsFailure(key: identity, operation: .write, error: error))
        }
    }

    var identity: String { name ?? "UserDefaults suite" }

    var readsBeforeChanging: Bool { false }

    var isNamed: Bool { name != nil }

    func isStill(at spelled: String) -> Bool { true }

    func watchOtherProcesses(
        onFailure: @escaping @Sendable (DefaultsSuiteError) -> Void, _ onChange: @escaping @Sendable () -> Void
    ) -> (any ExternalChangesToken)? {
        guard let name else { return nil }
        #if os(Linux)
        // What stands in for `cfprefsd` and its notifications here: the file Foundation
        // keeps the suite in.
        return FileWatcher.shared.watch(SuiteFile.named(name).path, onFailure: onFailure, onChange)
        #elseif canImport(notify)
        return DarwinNotifications.observe(ExternalChanges.notificationName(name), onChange)
        #else
        return nil
        #endif
    }

    func announceToOtherProcesses() {
        #if canImport(notify)
        if let name { DarwinNotifications.post(ExternalChanges.notificationName(name)) }
        #endif
    }

    package func withLock<R>(acrossProcesses: Bool, _ body: () throws -> R) throws -> R {
        // A suite of unknown name has no lock file to share: this process's turn only.
        guard acrossProcesses, name != nil else { return try lock.withProcessLock(body) }
        return try lock.withLock(body)
    }

    package func withProcessLock<R>(_ body: () throws -> R) rethrows -> R {
        try lock.withProcessLock(body)
    }

    /// The lock file of the suite `name`, where every process that can write the suite
    /// can reach it (`LockPlacement`): an App Group's suite in the group's container,
    /// where the app and its extensions share it; any other suite in the app's own
    /// container. On Linux, beside the suite's file.
    static func lockPath(forSuite name: String) -> String {
        #if os(Linux)
        guard let placement = LockPlacement.current else { return SuiteFile.named(name).lockPath }
        return placement.lockPath(forSuite: name)
        #else
        // Every platform but Linux has a placement.
        return LockPlacement.current!.lockPath(forSuite: name)
        #endif
    }

    func storedValues(of defaults: UserDefaults) -> [String: Any] {
        // What another process wrote before this change took the lock: Foundation on Linux
        // shows it only once told to read its file again.
        reload([defaults])
        let values = name.map { defaults.persistentDomain(forName: $0) ?? [:] } ?? Self.ownValues(of: defaults)
        // swift-corelibs-foundation hands each value back wrapped in an `Optional`.
        return values.compactMapValues(flattenOptional)
    }

    /// The values a suite of unknown name holds itself, from what `UserDefaults` shows:
    /// `dictionaryRepresentation()` less the launch arguments (which hide the suite's
    /// value: it is left alone), and less a registered or global value that is what the
    /// suite shows (a stored value equal to it cannot be told from it, and reads the
    /// same).
    static func ownValues(of defaults: UserDefaults) -> [String: Any] {
        let arguments = defaults.volatileDomain(forName: UserDefaults.argumentDomain)
        let registered = defaults.volatileDomain(forName: UserDefaults.registrationDomain)
        let global = defaults.persistentDomain(forName: UserDefaults.globalDomain) ?? [:]
        return defaults.dictionaryRepresentation().filter { key, value in
            if arguments[key] != nil { return false }
            if let other = registered[key], plistEqual(other, value) { return false }
            if let other = global[key], plistEqual(other, value) { return false }
            return true
        }
    }

    func write(_ changes: [String: Any?], order: [String], over stored: [String: Any], through defaults: UserDefaults) {
        // Apple's Foundation posts `didChangeNotification` for each `set`, on this
        // thread, before it returns: observers must not read a change half written.
        DefaultsSuite.$isWriting.withValue(true) {
            for key in order {
                if let tree = changes[key]! {
                    defaults.set(FoundationCollections.make(tree), forKey: key)
                } else {
                    defaults.removeObject(forKey: key)
                }
            }
            #if !canImport(Darwin)
            // Foundation on Linux writes its file only when told.
            defaults.synchronize()
            #endif
        }
    }

    func reload(_ objects: [UserDefaults]) {
        #if !canImport(Darwin)
        // Foundation on Linux reloads its cache of a file another process replaced only
        // when told; `cfprefsd` keeps every process's view current on Apple platforms.
        for defaults in objects { defaults.synchronize() }
        #endif
    }

    func unreadableFile() -> UnreadableDefaultsFile? { nil }

    func moveUnreadableFileAside(of defaults: UserDefaults) -> URL? { nil }
}

/// How the package learns a suite object's domain name: what `UserDefaults.suite(named:)`
/// recorded when it made the object; `.standard`, the app's own suite; else, as a
/// fallback, the name Foundation keeps in the object (see `fromFoundation(_:)`).
package enum SuiteName {
    /// The name of the app's own suite, `UserDefaults.standard`'s: the bundle
    /// identifier, or the process name where there is no bundle.
    package static var application: String {
        Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// The names `UserDefaults.suite(named:)` recorded, by object: a weak reference tells
    /// a live object from a new one at a reused address.
    private static let recorded = Locked<[ObjectIdentifier: (object: WeakReference, name: String)]>([:])

    /// Whether the fallback reads the name Foundation keeps in the object; the tests turn
    /// it off to see what happens where it finds nothing (an SDK that changed).
    @TaskLocal static var readsFoundationsState = true

    /// Records that `defaults` is the suite `name`.
    static func record(_ defaults: UserDefaults, name: String) {
        recorded.withLock { recorded in
            if recorded.count >= 64 { recorded = recorded.filter { $0.value.object.object != nil } }
            recorded[ObjectIdentifier(defaults)] = (WeakReference(defaults), name)
        }
    }

    /// The suite name of `defaults`: `.some(nil)` for the app's own suite, `nil` when it
    /// cannot be learned.
    package static func of(_ defaults: UserDefaults) -> String?? {
        if let entry = recorded.withLock({ $0[ObjectIdentifier(defaults)] }), entry.object.object === defaults { return .some(entry.name) }
        if defaults === UserDefaults.standard { return .some(nil) }
        guard readsFoundationsState else { return nil }
        return fromFoundation(defaults)
    }

    /// The name Foundation keeps in the object, where no public API gives it.
    ///
    /// On Linux, swift-corelibs-foundation keeps it in a stored property of
    /// `UserDefaults`, which `Mirror` reads at `UserDefaults`' own level of any subclass's
    /// object (a subclass's property of the same name is never taken for it). On Apple platforms,
    /// `NSUserDefaults` keeps it in its `_identifier_` instance variable, read through the
    /// Objective-C runtime's public functions, only when the variable is there with the
    /// type it has had; no private method is called. If either ever changes, this gives
    /// `nil`: the object is a suite of its own, and what needs its name refuses
    /// (`DefaultsSuiteError.Operation.unknownSuiteName`) rather than lose a value.
    private static func fromFoundation(_ defaults: UserDefaults) -> String?? {
        #if canImport(ObjectiveC)
        return objectiveCIdentifier(of: defaults)
        #else
        // Foundation's own class's property, never a subclass's: a subclass may declare a
        // stored property of the same name that says anything.
        var mirror: Mirror? = Mirror(reflecting: defaults)
        while let current = mirror, current.subjectType != UserDefaults.self { mirror = current.superclassMirror }
        guard let suite = mirror?.children.first(where: { $0.label == "suite" })?.value else { return nil }
        if let name = suite as? String { return .some(name) }
        if case .some(.none) = suite as? String? { return .some(nil) }
        return nil
        #endif
    }

    #if canImport(ObjectiveC)
    /// The suite name Apple's `NSUserDefaults` keeps in its `_identifier_` instance
    /// variable (a `CFStringRef`, `kCFPreferencesCurrentApplication` for the app's own
    /// suite). No public API returns it. Read only when the variable is there with that
    /// type; otherwise `nil`, and the suite is known by its object alone.
    private static func objectiveCIdentifier(of defaults: UserDefaults) -> String?? {
        guard let variable = class_getInstanceVariable(UserDefaults.self, "_identifier_"),
            let encoding = ivar_getTypeEncoding(variable), String(cString: encoding).hasPrefix("^{__CFString")
        else { return nil }
        let base = UnsafeRawPointer(Unmanaged.passUnretained(defaults).toOpaque())
        guard let pointer = base.load(fromByteOffset: ivar_getOffset(variable), as: UnsafeRawPointer?.self) else { return nil }
        let identifier = Unmanaged<CFString>.fromOpaque(pointer).takeUnretainedValue() as String
        return identifier == "kCFPreferencesCurrentApplication" ? .some(nil) : .some(identifier)
    }
    #endif
}
