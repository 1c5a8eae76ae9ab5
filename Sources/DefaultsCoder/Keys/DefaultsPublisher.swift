// Combine publishers of keys, on the platforms that have Combine, and on Linux through
// OpenCombine with the `OpenCombine` package trait: each subscription is an observation
// (`observe`), with a `DemandBuffer` between it and the subscriber.

import DefaultsCoderStorage
import KeyValueCoders

#if canImport(Combine) || OpenCombine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation

/// A Combine publisher of the changes of one key, or of several: the observation of
/// `observe(_:initial:handler:)`, as a publisher. It never fails or finishes; each
/// subscription observes until it is cancelled. Every change is delivered, in order:
/// values the subscriber has not asked for yet wait for its demand.
///
/// ```swift
/// let cancellable = UserDefaults.standard.publisher(for: .launchCount)
///     .sink { count in print(count) }
/// ```
@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
public struct DefaultsPublisher<Output>: Publisher, @unchecked Sendable {
    // `defaults` is thread-safe, and `startObserving` captures nothing.

    /// Never: a publisher of keys does not fail.
    public typealias Failure = Never

    private let defaults: UserDefaults
    private let startObserving: (UserDefaults, _ send: @escaping @Sendable (Output) -> Void) -> DefaultsObservation

    fileprivate init(
        defaults: UserDefaults,
        startObserving: @escaping (UserDefaults, _ send: @escaping @Sendable (Output) -> Void) -> DefaultsObservation
    ) {
        self.defaults = defaults
        self.startObserving = startObserving
    }

    /// Starts an observation for `subscriber`.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        let subscription = KeySubscription(subscriber: subscriber)
        subscriber.receive(subscription: subscription)
        subscription.start { send in startObserving(defaults, send) }
    }
}

/// Combine publishers of typed keys.
@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension UserDefaults {

    /// A publisher of the value for `key`: the current value first unless `initial` is
    /// `false`, then each new value. What counts as a change, and which changes are
    /// seen, is as for `observe(_:initial:handler:)`.
    ///
    /// ```swift
    /// let cancellable = UserDefaults.standard.publisher(for: .theme)
    ///     .receive(on: DispatchQueue.main)
    ///     .sink { theme in apply(theme) }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - initial: Whether to start with the current value.
    /// - Returns: A publisher that never fails.
    public func publisher<Value>(
        for key: DefaultsKey<Value>,
        initial: Bool = true
    ) -> DefaultsPublisher<Value> {
        DefaultsPublisher(defaults: self) { defaults, send in
            defaults.observe(key, initial: initial) { _, new in send(new) }
        }
    }

    /// A publisher of the keys of `keys` whose value changes, one element per change; the
    /// keys' value types may differ. What counts as a change is as for
    /// `observe(_:initial:handler:)`.
    ///
    /// ```swift
    /// let cancellable = defaults.publisher(for: [.launchCount, .theme])
    ///     .sink { key in print("\(key.name) changed") }
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys to observe.
    ///   - initial: Whether to start with each key once.
    /// - Returns: A publisher that never fails.
    public func publisher(
        for keys: [DefaultsKeys],
        initial: Bool = true
    ) -> DefaultsPublisher<DefaultsKeys> {
        DefaultsPublisher(defaults: self) { defaults, send in
            defaults.observe(keys, initial: initial, handler: send)
        }
    }
}

/// One subscriber's observation: values go through a `DemandBuffer` to the subscriber.
@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
private final class KeySubscription<Output>: Subscription, @unchecked Sendable {
    // The buffer is thread-safe; `observation` is behind its lock.
    private let buffer: DemandBuffer<Output>
    private let observation = Locked<(token: DefaultsObservation?, isCancelled: Bool)>((nil, false))

    init<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        buffer = DemandBuffer { value in subscriber.receive(value).max ?? .max }
    }

    /// Starts observing, unless the subscriber already cancelled.
    func start(_ startObserving: (_ send: @escaping @Sendable (Output) -> Void) -> DefaultsObservation) {
        guard !buffer.isCancelled else { return }
        let token = startObserving { [buffer] value in buffer.send(value) }
        let keep = observation.withLock { observation in
            if !observation.isCancelled { observation.token = token }
            return !observation.isCancelled
        }
        if !keep { token.cancel() }
    }

    func request(_ demand: Subscribers.Demand) {
        buffer.request(demand.max ?? .max)
    }

    func cancel() {
        buffer.cancel()
        let token = observation.withLock { observation in
            observation.isCancelled = true
            defer { observation.token = nil }
            return observation.token
        }
        token?.cancel()
    }
}
#endif
