// The part of a Combine subscription that is not Combine's: values kept in order until
// the subscriber asks for them, handed over one at a time. It builds on every platform,
// so that its tests run on Linux, where Combine does not exist.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// Values on their way to a subscriber that asks for them a number at a time: kept in
/// order until asked for, handed over one at a time and never from two threads at once,
/// dropped once the subscriber cancels.
final class DemandBuffer<Value>: @unchecked Sendable {
    /// Hands a value over; returns how many more the subscriber asks for.
    typealias Deliver = (Value) -> Int

    private struct State {
        var waiting: [Value] = []
        var first = 0
        /// How many values may still be handed over; `Int.max` for no limit.
        var demand = 0
        var isDelivering = false
        /// `nil` once cancelled, which also lets go of the subscriber.
        var deliver: Deliver?

        mutating func ask(for count: Int) {
            demand = demand == .max || count == .max ? .max : demand.addingSaturated(count)
        }

        /// The next value to hand over and whom to, when one is waiting, the subscriber
        /// asked for it, and no other thread is handing one over.
        mutating func takeNext() -> (Value, Deliver)? {
            guard !isDelivering, demand > 0, first < waiting.count, let deliver else { return nil }
            let value = waiting[first]
            first += 1
            if first == waiting.count { (waiting, first) = ([], 0) }
            if demand != .max { demand -= 1 }
            isDelivering = true
            return (value, deliver)
        }
    }

    // The state is behind `state`'s lock; `deliver` runs outside it, so that the
    // subscriber may ask for more, or cancel, from inside.
    private let state: Locked<State>

    init(deliver: @escaping Deliver) {
        state = Locked(State(deliver: deliver))
    }

    /// Whether the subscriber cancelled.
    var isCancelled: Bool {
        state.withLock { $0.deliver == nil }
    }

    /// Adds `value` after the ones waiting, and hands over what the demand allows.
    func send(_ value: Value) {
        enqueue(value)
        drain()
    }

    /// Adds `value` after the ones waiting, handing nothing over: for a caller that
    /// finds values under a lock of its own and must hand them over outside it (`drain()`).
    func enqueue(_ value: Value) {
        state.withLock { state in
            if state.deliver != nil { state.waiting.append(value) }
        }
    }

    /// Adds `count` (`Int.max` for no limit) to the demand, and hands over what it allows.
    func request(_ count: Int) {
        state.withLock { $0.ask(for: count) }
        drain()
    }

    /// Drops what is waiting and lets go of the subscriber; nothing is handed over after
    /// this returns, except a value already being handed over on another thread.
    func cancel() {
        state.withLock { state in
            state.deliver = nil
            (state.waiting, state.first) = ([], 0)
        }
    }

    /// Hands values over until none is waiting or none is asked for. A thread that finds
    /// another handing over leaves its values to that thread's loop, which keeps them in
    /// order.
    func drain() {
        var next = state.withLock { $0.takeNext() }
        while let (value, deliver) = next {
            let more = deliver(value)
            next = state.withLock { state in
                state.isDelivering = false
                state.ask(for: more)
                return state.takeNext()
            }
        }
    }
}

extension Int {
    /// `self + other`, or `Int.max` where that would overflow.
    fileprivate func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
