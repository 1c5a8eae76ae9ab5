// A setting held by a SwiftUI view itself, on every OS version the package names:
// `@DefaultsState(.theme) var theme`, with `$theme` a `Binding`, as `@AppStorage` is used
// but for any `Codable` value. The view keeps a `DefaultsValueBox` — an
// `ObservableObject` observing one key of one suite, plain Swift over Combine (on Linux
// through OpenCombine, where it is tested) — so that any change of the key, from this
// process, another or a sync, updates the view once.

import DefaultsCoderStorage
import KeyValueCoders

#if canImport(Combine) || OpenCombine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

/// One key of one suite as an `ObservableObject`: `objectWillChange` is published once for
/// each change of the key's value, wherever it came from, until the box is released.
@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
final class DefaultsValueBox<Value: Codable & Sendable>: ObservableObject, @unchecked Sendable {
    // Unchecked: constants; `UserDefaults` is thread-safe, `objectWillChange` is sent
    // where `deliver` says (the main queue for a view), and `observation` is set once in
    // init.

    /// The key.
    let key: DefaultsKey<Value>
    /// The suite.
    let store: UserDefaults
    /// Sent once for each change of the key's value.
    let objectWillChange = ObservableObjectPublisher()
    private var observation: DefaultsObservation?

    /// Starts observing `key` in `store`.
    ///
    /// - Parameter deliver: Where `objectWillChange` is sent: the main queue for a view.
    init(
        _ key: DefaultsKey<Value>, store: UserDefaults,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.main.async(execute: $0) }
    ) {
        self.key = key
        self.store = store
        // Weakly: the box holds the observation, and a released box ends it.
        observation = store.observe(key, initial: false) { [weak self] _, _ in
            guard let self else { return }
            deliver { self.objectWillChange.send() }
        }
    }

    /// The value: the stored one or the default; a set stores it, as the subscript does.
    var value: Value {
        get { store[key] }
        set { store[key] = newValue }
    }
}
#endif

#if canImport(SwiftUI) && canImport(Combine)
import SwiftUI

/// A setting a SwiftUI view reads and writes itself, updated on every change: this
/// process's, another process's (an app and its widget) or a sync's. Its projected value
/// is a `Binding`.
///
/// ```swift
/// struct SettingsView: View {
///     @DefaultsState(.theme) var theme
///     @DefaultsState("showsPreview") var showsPreview = true
///
///     var body: some View {
///         Toggle("Show previews", isOn: $showsPreview)
///         Picker("Theme", selection: $theme) { … }
///     }
/// }
/// ```
///
/// It works on every OS version the package supports (iOS 15, macOS 13 and later); it
/// needs no `@Observable` model. Made without a `store:`, it uses
/// `UserDefaults.defaultSuite` as it is when the view is made: a preview or a test can
/// point it at a `ThrowawaySuite`. Reading never fails: a stored value that does not
/// decode reads as the default, and the failure goes to `DefaultsFailure.handler`.
@MainActor
@propertyWrapper
public struct DefaultsState<Value: Codable & Sendable>: DynamicProperty {
    @StateObject private var box: DefaultsValueBox<Value>

    /// A setting for `key`.
    ///
    /// - Parameters:
    ///   - key: The typed key, with its default.
    ///   - store: The suite; `UserDefaults.defaultSuite` unless given.
    public init(_ key: DefaultsKey<Value>, store: UserDefaults? = nil) {
        let store = store ?? .defaultSuite
        _box = StateObject(wrappedValue: DefaultsValueBox(key, store: store))
    }

    /// A setting named `name` whose default is the value it is initialised with:
    /// `@DefaultsState("showsPreview") var showsPreview = true`.
    ///
    /// - Parameters:
    ///   - wrappedValue: The default value.
    ///   - name: The key's name; dots are allowed.
    ///   - store: The suite; `UserDefaults.defaultSuite` unless given.
    public init(wrappedValue: Value, _ name: String, store: UserDefaults? = nil) {
        self.init(DefaultsKey(name, default: wrappedValue), store: store)
    }

    /// An optional setting named `name`, `nil` by default.
    ///
    /// - Parameters:
    ///   - name: The key's name; dots are allowed.
    ///   - store: The suite; `UserDefaults.defaultSuite` unless given.
    public init(_ name: String, store: UserDefaults? = nil) where Value: DefaultsOptional {
        self.init(DefaultsKey(name), store: store)
    }

    /// The stored value, or the default; setting it stores it (`nil` on an optional
    /// removes the key).
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }

    /// A binding to the value, for controls: `Toggle("…", isOn: $showsPreview)`.
    public var projectedValue: Binding<Value> {
        let box = box
        return Binding(get: { box.value }, set: { box.value = $0 })
    }
}
#endif
