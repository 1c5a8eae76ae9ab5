// What the sync engine relies on of a cloud key-value store, checked on one store, for
// anyone who writes a `CloudKeyValueStore` of their own (a server of the app's, a store
// shared by an App Group's processes). One device tells only so much: these are the
// checks that need no second device.

import DefaultsCoderStorage
import DefaultsCoderSync
import Foundation

/// Checks a `CloudKeyValueStore` for the behaviour `CloudSync` relies on: values read
/// back as they were written, in every property-list type; removals; the dictionary of
/// every value; and no report of the store's own writes as changes (as
/// `NSUbiquitousKeyValueStore` reports only changes from iCloud).
///
/// ```swift
/// @Test func myStoreWorksWithCloudSync() throws {
///     try CloudStoreCompatibility(MyStore()).check()
/// }
/// ```
///
/// `SimulatedCloud`'s devices pass it. Check a store signed in and past its first
/// download: before it, writes are discarded. The checks write keys that begin with
/// `keyPrefix`, and remove them again.
public struct CloudStoreCompatibility: Sendable {
    /// A check the store failed.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// The check, as its name reads: `"values read back as written"`.
        public let check: String
        /// What the store did instead.
        public let detail: String

        /// The check, then what the store did.
        public var description: String { "\(check): \(detail)" }
    }

    /// The store checked.
    public let store: any CloudKeyValueStore
    /// The beginning of every key the checks write.
    public let keyPrefix: String

    /// A check of `store`, writing keys that begin with `keyPrefix`.
    public init(_ store: any CloudKeyValueStore, keyPrefix: String = "DefaultsCoder.compatibility.") {
        self.store = store
        self.keyPrefix = keyPrefix
    }

    /// A value of each property-list type, by the name its key ends with.
    private static let samples: [(name: String, value: any Sendable)] = [
        ("string", "text"), ("int", 42), ("negative", -7), ("large", Int64.max), ("double", 1.5), ("bool", true),
        ("date", Date(timeIntervalSinceReferenceDate: 1_000_000)), ("data", Data([0, 1, 2, 255])),
        ("array", ["a", 1, false] as [any Sendable]), ("dictionary", ["name": "ada", "count": 2] as [String: any Sendable]),
    ]

    /// Runs every check, in order, and leaves no key of its own behind.
    ///
    /// - Throws: `Failure` naming the first check the store failed.
    public func check() throws(Failure) {
        let keys = Self.samples.map { keyPrefix + $0.name }
        defer { for key in keys { store.removeObject(forKey: key) } }
        let heard = Locked<[String]>([])
        let subscription = store.observeChanges { change in
            if change.reason == .serverChange { heard.withLock { $0 += change.keys } }
        }
        defer { subscription.cancel() }

        for (key, sample) in zip(keys, Self.samples) {
            store.set(sample.value, forKey: key)
            let read = store.object(forKey: key)
            guard sameStoredValue(read, sample.value) else {
                throw Failure(check: "values read back as written", detail: "\(key) was set to \(sample.value), and reads \(Self.text(read))")
            }
        }
        let dictionary = store.dictionaryRepresentation
        for (key, sample) in zip(keys, Self.samples) where !sameStoredValue(dictionary[key], sample.value) {
            throw Failure(
                check: "every value is in the dictionary representation", detail: "\(key) was set to \(sample.value), and it holds \(Self.text(dictionary[key]))")
        }
        let removed = keys[0]
        store.removeObject(forKey: removed)
        if let read = store.object(forKey: removed) {
            throw Failure(check: "a removed key reads nothing", detail: "\(removed) reads \(read)")
        }
        if let held = store.dictionaryRepresentation[removed] {
            throw Failure(check: "a removed key leaves the dictionary representation", detail: "it holds \(removed) = \(held)")
        }
        _ = store.synchronize()
        if let reported = heard.withLock({ $0 }).first(where: { $0.hasPrefix(keyPrefix) }) {
            throw Failure(check: "the store's own writes are not reported as server changes", detail: "it reported \(reported)")
        }
    }

    private static func text(_ value: Any?) -> String {
        value.map { "\($0)" } ?? "nothing"
    }
}
