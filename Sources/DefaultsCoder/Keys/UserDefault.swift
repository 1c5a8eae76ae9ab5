import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// A property stored in `UserDefaults`, with a default value.
///
/// ```swift
/// final class Settings {
///     @UserDefault("hasSeenSplashScreen") var hasSeenSplashScreen = false
///     @UserDefault("name") var name: String?
///     @UserDefault(.launchCount) var launchCount
///     @UserDefault("volume", store: UserDefaults.suite(named: "group.com.example.app")) var volume = 0.5
/// }
///
/// settings.launchCount += 1
/// settings.$launchCount.reset()
/// let observation = settings.$launchCount.observe(initial: false) { old, new in print(old, new) }
/// ```
///
/// A wrapper made without a `store:` keeps its value in `UserDefaults.defaultSuite`,
/// `.standard` unless a test or a preview chose another with
/// `UserDefaults.withDefaultSuite(_:operation:)`.
///
/// Reading and writing never throw: a stored value that does not decode reads as the
/// default, and a value that cannot be stored leaves the stored one as it was; both are
/// reported to `DefaultsFailure.handler`. Use `UserDefaults.value(for:)` and
/// `write(_:to:)` with `$property.key` for the throwing forms.
@propertyWrapper
public struct UserDefault<Value: Codable & Sendable>: @unchecked Sendable {
    // `UserDefaults` is thread-safe but not marked `Sendable` on every platform.

    /// The key the value is stored under.
    public let key: DefaultsKey<Value>
    /// The `UserDefaults` the value is stored in.
    public let store: UserDefaults

    /// Where trackings of this wrapper's reads register: they end when it goes.
    private let reader = TrackedReader()

    /// A property for `key`.
    ///
    /// - Parameters:
    ///   - key: The typed key, with its default.
    ///   - store: Where to store the value; `UserDefaults.defaultSuite` unless given.
    public init(_ key: DefaultsKey<Value>, store: UserDefaults? = nil) {
        self.key = key
        self.store = store ?? .defaultSuite
    }

    /// A property named `name` whose default is the value it is initialised with:
    /// `@UserDefault("hasSeenSplashScreen") var hasSeenSplashScreen = false`.
    ///
    /// - Parameters:
    ///   - wrappedValue: The default value.
    ///   - name: The key's name; dots are allowed.
    ///   - store: Where to store the value; `UserDefaults.defaultSuite` unless given.
    public init(wrappedValue: Value, _ name: String, store: UserDefaults? = nil) {
        self.init(DefaultsKey(name, default: wrappedValue), store: store)
    }

    /// An optional property named `name`, `nil` by default: `@UserDefault("name") var name: String?`.
    ///
    /// - Parameters:
    ///   - name: The key's name; dots are allowed.
    ///   - store: Where to store the value; `UserDefaults.defaultSuite` unless given.
    public init(_ name: String, store: UserDefaults? = nil) where Value: DefaultsOptional {
        self.init(DefaultsKey(name), store: store)
    }

    /// The stored value, or the default; setting `nil` on an optional removes the key.
    ///
    /// Reading it inside `withObservationTracking` — as a SwiftUI `body` does — registers
    /// the key: the next change of its value fires the tracking's `onChange`, whether it
    /// came through this property, another wrapper, the typed subscript,
    /// `encode(_:forKey:)` or a change Foundation announces. A write of an equal value, or
    /// of another key, does not. (Needs the Observation framework: macOS 14, iOS 17,
    /// tvOS 17, watchOS 10, visionOS 1, or Linux; elsewhere reading just reads, and a
    /// SwiftUI view that reads it is not updated: follow `updates(for:initial:)` there.)
    public var wrappedValue: Value {
        get {
            ObservationTracking.read(key, in: store, by: reader)
        }
        nonmutating set { store[key] = newValue }
    }

    /// The wrapper itself: `$property.reset()`, `$property.isSet`, `$property.observe(initial: false) { … }`.
    public var projectedValue: UserDefault<Value> {
        self
    }

    /// Whether a value is stored for the key. A default registered with
    /// `register(_:)` or `register(defaults:)` counts as stored.
    public var isSet: Bool {
        store.object(forKey: key.name) != nil
    }

    /// Removes the stored value, so that the property reads as its default again. When
    /// the suite's file cannot be read, nothing is removed and the failure goes to
    /// `DefaultsFailure.handler`.
    public func reset() {
        do {
            try store.reset(key)
        } catch {
            DefaultsFailure.report(DefaultsFailure(key: key.name, operation: .write, error: error))
        }
    }

    /// Calls `handler` with the old and new value each time the value changes, and at
    /// once with the current value unless `initial` is `false`; see
    /// `UserDefaults.observe(_:initial:handler:)` for what is seen and on which thread.
    ///
    /// - Parameters:
    ///   - initial: Whether to call `handler` at once with the current value.
    ///   - handler: Called with the old and the new value.
    /// - Returns: A token; observing stops when it is cancelled or released.
    public func observe(
        initial: Bool = true, _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> DefaultsObservation {
        store.observe(key, initial: initial, handler: handler)
    }

    /// The current value, then each new value, until the iterating task is cancelled.
    public var updates: AsyncStream<Value> {
        store.updates(for: key)
    }
}
