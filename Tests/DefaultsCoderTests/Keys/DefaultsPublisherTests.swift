// The Combine publishers, run: on Apple platforms against Combine, on Linux against
// OpenCombine with the `OpenCombine` package trait (`swift test --traits OpenCombine`).
// Demand, cancellation, several keys, initial values.

#if canImport(Combine) || OpenCombine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultsPublisher")
struct DefaultsPublisherTests {

    /// A subscriber that asks for `initial` values at first, and for `more` after each.
    final class Collecting<Input>: Subscriber, @unchecked Sendable {
        typealias Failure = Never
        private let lock = NSLock()
        private var received: [Input] = []
        private var subscription: (any Subscription)?
        private let initial: Subscribers.Demand
        private let more: Subscribers.Demand

        init(initial: Subscribers.Demand = .unlimited, more: Subscribers.Demand = .none) {
            self.initial = initial
            self.more = more
        }

        var values: [Input] { lock.withLock { received } }

        func receive(subscription: any Subscription) {
            lock.withLock { self.subscription = subscription }
            subscription.request(initial)
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            lock.withLock { received.append(input) }
            return more
        }

        func receive(completion: Subscribers.Completion<Never>) {}

        func request(_ demand: Subscribers.Demand) {
            lock.withLock { subscription }?.request(demand)
        }

        func cancel() {
            lock.withLock { subscription }?.cancel()
        }
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("the current value first, then each new value; with initial false, only the new ones", arguments: [true, false])
    func initialValues(initial: Bool) {
        let suite = TestSuite()
        let key = DefaultsKey<Int>("count", default: 1)
        let subscriber = Collecting<Int>()
        suite.defaults.publisher(for: key, initial: initial).subscribe(subscriber)
        suite.defaults[key] = 2
        suite.defaults[key] = 3
        #expect(subscriber.values == (initial ? [1, 2, 3] : [2, 3]))
        subscriber.cancel()
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("values wait for demand, in order, and none is lost")
    func demand() {
        let suite = TestSuite()
        let key = DefaultsKey<String>("name", default: "a")
        let subscriber = Collecting<String>(initial: .max(1))
        suite.defaults.publisher(for: key).subscribe(subscriber)
        suite.defaults[key] = "b"
        suite.defaults[key] = "c"
        #expect(subscriber.values == ["a"])
        subscriber.request(.max(1))
        #expect(subscriber.values == ["a", "b"])
        suite.defaults[key] = "d"
        subscriber.request(.unlimited)
        #expect(subscriber.values == ["a", "b", "c", "d"])
        subscriber.cancel()
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("a cancelled subscription hears nothing more and stops observing")
    func cancellation() {
        let suite = TestSuite()
        let key = DefaultsKey<Int>("level", default: 0)
        let received = Recorded<Int>()
        let cancellable = suite.defaults.publisher(for: key, initial: false).sink { received.append($0) }
        suite.defaults[key] = 1
        cancellable.cancel()
        suite.defaults[key] = 2
        #expect(received.values == [1])
        #expect(!DefaultsSuite.of(suite.defaults).feed.isSubscribed("level"))
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("a publisher of several keys sends each key that changes, once per change")
    func severalKeys() {
        let suite = TestSuite()
        let count = DefaultsKey<Int>("count", default: 0)
        let name = DefaultsKey<String>("name", default: "")
        let received = Recorded<String>()
        let cancellable = suite.defaults.publisher(for: [count, name], initial: true).sink { received.append($0.name) }
        suite.defaults[name] = "x"
        suite.defaults[count] = 4
        suite.defaults[count] = 4
        #expect(received.values == ["count", "name", "name", "count"])
        cancellable.cancel()
    }
}
#endif
