//
//  Suite.swift
//  DefaultsCoder
//
//  The one way in and out of a suite. Every change the package makes — `encode`, a
//  typed key's write or reset, the subscript and `@UserDefault`, `register`, a
//  migration, moving an unreadable file aside — goes through `Suite.change`, which checks
//  the keys, takes the suite's lock, reads the file through the checked reader, writes
//  it, lets Foundation's cache catch up, counts the write and announces it, once, in
//  that order. No other file calls `synchronize()` or writes to a suite.
//

import Foundation

/// A suite as the package knows it: the file behind it, where Foundation keeps the file
/// itself, and the `UserDefaults` objects the app holds for it, to announce changes on.
final class Suite: @unchecked Sendable {
    // Unchecked: `file` is a constant of a Sendable type, `objects` is behind a lock.

    /// The suite's file; `nil` on Apple platforms, where `cfprefsd` owns it, and where
    /// the suite's name cannot be found.
    let file: SuiteFile?
    /// The objects of this suite, to post `keyDidChangeNotification` on.
    private let objects = Locked<[WeakReference]>([])

    private init(file: SuiteFile?) {
        self.file = file
    }

    /// Each `UserDefaults` object's suite, by object: a weak reference tells a live
    /// object from a new one at a reused address.
    private static let byObject = Locked<[ObjectIdentifier: (defaults: WeakReference, suite: Suite)]>([:])
    /// Each file's suite, by the file.
    private static let byFile = Locked<[ObjectIdentifier: Suite]>([:])

    /// Whether the package's writes on this task or thread go unannounced
    /// (`UserDefaults.withoutAnnouncing`).
    @TaskLocal static var isSilenced = false

    /// The suite `defaults` belongs to. Looked up once per object: reading the suite
    /// name through `Mirror` costs more than the rest of a write's bookkeeping.
    static func of(_ defaults: UserDefaults) -> Suite {
        let id = ObjectIdentifier(defaults)
        if let known = byObject.withLock({ $0[id] }), known.defaults.object === defaults { return known.suite }
        let suite: Suite
        if let file = fileOf(defaults) {
            suite = byFile.withLock { suites in
                if let suite = suites[ObjectIdentifier(file)] { return suite }
                let suite = Suite(file: file)
                suites[ObjectIdentifier(file)] = suite
                return suite
            }
        } else {
            suite = Suite(file: nil)
        }
        suite.objects.withLock { objects in
            objects.removeAll { $0.object == nil }
            objects.append(WeakReference(defaults))
        }
        byObject.withLock { byObject in
            if byObject.count >= 64 { byObject = byObject.filter { $0.value.defaults.object != nil } }
            byObject[id] = (WeakReference(defaults), suite)
        }
        return suite
    }

    /// The file Foundation keeps the suite of `defaults` in, where it keeps it itself.
    private static func fileOf(_ defaults: UserDefaults) -> SuiteFile? {
        #if canImport(Darwin)
        return nil
        #else
        // swift-corelibs-foundation keeps the suite name in a stored property of
        // `UserDefaults`; Mirror reads it, through any subclass. If that ever changes,
        // writes go through Foundation, as on Apple platforms.
        var mirror: Mirror? = Mirror(reflecting: defaults)
        var suite: Any?
        while let current = mirror, suite == nil {
            suite = current.children.first(where: { $0.label == "suite" })?.value
            mirror = current.superclassMirror
        }
        guard let suite else { return nil }
        if let name = suite as? String { return SuiteFile.named(name) }
        if case .some(.none) = suite as? String? { return SuiteFile.named(nil) }
        return nil
        #endif
    }

    // MARK: - Changing suites

    /// The values of the suites one change works on, by their place in the list the
    /// change was given (0 is the suite it runs on). Reads see the changes made so far.
    struct Values {
        fileprivate var domains: [Domain]

        fileprivate struct Domain {
            let defaults: UserDefaults
            let suite: Suite
            /// The file's values; `nil` where no file was read (Apple platforms), and
            /// values are read with `object(forKey:)`.
            var stored: [String: Any]?
            /// The new value of each changed key (`nil` removes), and the keys in the
            /// order they first changed.
            var changes: [String: Any?] = [:]
            var order: [String] = []

            func value(forKey key: String) -> Any? {
                if let change = changes[key] { return change }
                if let stored { return stored[key] }
                return defaults.object(forKey: key)
            }
        }

        /// The value stored under `key` in suite `index`, with the changes made so far.
        func value(forKey key: String, in index: Int = 0) -> Any? {
            domains[index].value(forKey: key)
        }

        /// Stores a tree in the stored form under `key` in suite `index`; `nil` removes
        /// the key. A removal of an absent key changes nothing.
        ///
        /// - Throws: `EncodingError.invalidValue` for a key the suite's file cannot keep.
        mutating func set(_ tree: Any?, forKey key: String, in index: Int = 0) throws {
            if let problem = StoredEncodingForm.shared.problem(withKey: key) {
                throw EncodingError.invalid(tree ?? StoredForm.none, problem, at: [])
            }
            if tree == nil && value(forKey: key, in: index) == nil { return }
            if domains[index].changes.updateValue(tree, forKey: key) == nil { domains[index].order.append(key) }
        }

        /// The keys stored in suite `index`, with the changes made so far. Only where the
        /// file was read (Linux); elsewhere the keys `dictionaryRepresentation()` lists
        /// that are not registered defaults or launch arguments.
        func keys(in index: Int = 0) -> [String] {
            let domain = domains[index]
            var keys = Set(domain.stored.map { Array($0.keys) } ?? domain.defaults.persistentKeys())
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
    /// On Linux each suite's file is locked (in this process and every other running
    /// this package), read as it is now, and replaced in one rename; then Foundation's
    /// cache is emptied so that reads load the new file. Before reading, `synchronize()`
    /// lets Foundation write what the app's plain `set(_:forKey:)` calls left unsaved,
    /// so that none is lost and none is written over a package write later. On Apple
    /// platforms the values go through `set(_:forKey:)`, the first suite's last.
    ///
    /// - Parameter announcing: Whether observers hear of the change.
    /// - Throws: What `body` throws; `UnreadableDefaultsFile` when a suite's file does
    ///   not parse; `DefaultsSuiteError` when the file system refuses.
    static func change<R>(
        _ objects: [UserDefaults], announcing: Bool = true, _ body: (inout Values) throws -> R
    ) throws -> R {
        let suites = objects.map(Suite.of)
        let files = suites.compactMap(\.file)
        for (index, file) in files.enumerated() where files[..<index].contains(where: { $0 === file }) {
            throw DefaultsSuiteError(operation: .sameSuiteTwice, path: file.path, reason: "one change names this suite twice")
        }
        var values = Values(domains: zip(objects, suites).map { Values.Domain(defaults: $0, suite: $1) })
        // The keys of a silent write, marked before the write and cleared when this
        // returns or throws: after its observers have taken the new values (below).
        var silencedKeys: [String] = []
        defer { if !silencedKeys.isEmpty { ObservationRegistry.shared.endSilentWrites(of: silencedKeys) } }
        let (result, written) = try withLocks(on: files.sorted { $0.path < $1.path }[...]) {
            () throws -> (R, [Written]) in
            for index in values.domains.indices {
                guard let file = values.domains[index].suite.file else { continue }
                values.domains[index].defaults.synchronize()
                values.domains[index].stored = try file.contents()
            }
            let result = try body(&values)
            var written: [Written] = []
            for domain in values.domains.reversed() where !domain.order.isEmpty {
                if announcing && isSilenced {
                    ObservationRegistry.shared.beginSilentWrites(of: domain.order)
                    silencedKeys += domain.order
                }
                // Begun before the write: a read that may have seen the new value then
                // finds the write begun, and its observer takes no older tree after it.
                // Ended after it: a reader that began before then finds a write ended.
                for key in domain.order {
                    let count = ObservationRegistry.shared.beginWrite(of: key)
                    written.append(Written(suite: domain.suite, defaults: domain.defaults, key: key, tree: domain.changes[key]!, count: count))
                }
                defer { ObservationRegistry.shared.endWrites(of: domain.order) }
                try write(domain)
            }
            return (result, written)
        }
        if announcing && !isSilenced {
            for change in written { change.suite.announce(change) }
        } else if announcing {
            // Unannounced, but not to be heard later either: observers take the new
            // value as where they stand, so a recheck for another reason finds no change.
            for change in written { ObservationRegistry.shared.check(change.key, reporting: false) }
        }
        reportLaunchArgumentOverrides(written)
        return result
    }

    /// A key a change wrote: what it wrote, and which write of the key it was.
    private struct Written {
        let suite: Suite
        let defaults: UserDefaults
        let key: String
        let tree: Any?
        let count: UInt64
    }

    private static func write(_ domain: Values.Domain) throws {
        guard let file = domain.suite.file, var stored = domain.stored else {
            for key in domain.order {
                if let tree = domain.changes[key]! {
                    domain.defaults.set(FoundationCollections.make(tree), forKey: key)
                } else {
                    domain.defaults.removeObject(forKey: key)
                }
            }
            #if !canImport(Darwin)
            domain.defaults.synchronize()
            #endif
            return
        }
        // A plain `synchronize()` on another thread that read the file before the rename
        // writes its older copy over it when it finishes, without a lock. The
        // `synchronize()` below waits for such a write (Foundation holds the domain's
        // lock through its read and write), so a file changed since the rename is read
        // again, and the change made again if it was lost.
        for _ in 0..<8 {
            for key in domain.order { stored[key] = domain.changes[key]! }
            try file.replace(with: stored)
            // Nothing is unsaved now (the change began with `synchronize()`), so this
            // only empties Foundation's cache: the next read loads the new file.
            domain.defaults.synchronize()
            if file.isAsLastWritten() { return }
            stored = try file.contents()
            let lost = domain.order.contains { key in
                switch (stored[key], domain.changes[key]!) {
                case (nil, nil): return false
                case (let now?, let tree?): return !plistEqual(now, tree)
                default: return true
                }
            }
            if !lost { return }
        }
    }

    /// Moves the suite's unreadable file aside, under the suite's lock, and lets
    /// Foundation's cache, which holds the empty suite it read, read anew.
    ///
    /// - Returns: Where the file went, or `nil` when there is no unreadable file.
    func moveUnreadableFileAside(of defaults: UserDefaults) throws -> URL? {
        guard let file else { return nil }
        let moved = try file.withLock { try file.moveAside() }
        if moved != nil { defaults.synchronize() }
        return moved
    }

    /// Runs `body` holding each file's lock in turn, in the order given.
    private static func withLocks<R>(on files: ArraySlice<SuiteFile>, _ body: () throws -> R) throws -> R {
        guard let file = files.first else { return try body() }
        return try file.withLock { try withLocks(on: files.dropFirst(), body) }
    }

    /// Reports each written key that a launch argument hides in this process.
    private static func reportLaunchArgumentOverrides(_ written: [Written]) {
        for change in written where change.tree != nil {
            guard let argument = change.defaults.volatileDomain(forName: UserDefaults.argumentDomain)[change.key] else { continue }
            let override = LaunchArgumentOverride(key: change.key, argument: "\(argument)")
            DefaultsFailure.report(DefaultsFailure(key: change.key, operation: .write, error: override))
        }
    }

    // MARK: - Announcing

    private func announce(_ change: Written) {
        let written = change.tree.map { WrittenTree(defaults: change.defaults, tree: $0, write: change.count) }
        ObservationRegistry.shared.check(change.key, written: written)
        postNotification(forKey: change.key)
    }

    /// Posts `keyDidChangeNotification` for `key` on every object of this suite the app
    /// still holds.
    func postNotification(forKey key: String) {
        let live = objects.withLock { objects in
            objects.removeAll { $0.object == nil }
            return objects.compactMap { $0.object as? UserDefaults }
        }
        for defaults in live {
            NotificationCenter.default.post(name: UserDefaults.keyDidChangeNotification, object: defaults, userInfo: ["key": key])
        }
    }

    /// Registers defaults on `defaults` and announces the keys whose value that changes.
    static func register(_ values: [String: Any], on defaults: UserDefaults) {
        defaults.register(defaults: values)
        guard !isSilenced else { return }
        let suite = Suite.of(defaults)
        for key in values.keys.sorted() {
            ObservationRegistry.shared.check(key)
            suite.postNotification(forKey: key)
        }
    }
}

extension UserDefaults {
    /// The keys the suite itself holds, where its file is not read: those of
    /// `dictionaryRepresentation()` that are not launch arguments or registered defaults.
    fileprivate func persistentKeys() -> [String] {
        let volatile = Set(volatileDomain(forName: UserDefaults.argumentDomain).keys)
            .union(volatileDomain(forName: UserDefaults.registrationDomain).keys)
        return dictionaryRepresentation().keys.filter { !volatile.contains($0) }
    }
}

/// A reference that does not keep its object alive.
final class WeakReference: @unchecked Sendable {
    // Set once in init; the runtime makes reading a weak reference safe on any thread.
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
