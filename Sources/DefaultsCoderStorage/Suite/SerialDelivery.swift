// Events handed over one at a time, in the order they were queued, on the threads of
// those who queued them: no queue or thread of its own, so a write returns once its
// observers ran, and a handler that queues more has them handed over right after it
// returns. The change feed delivers through it and waits for its events; the sync
// engine posts to it and goes on.

import Foundation

/// Events handed over one at a time, in order, by the threads that queue them.
///
/// A thread that `deliver`s hands over every event queued before its own, and its own,
/// or waits while another thread does; one that `post`s hands over only when no thread
/// is, and never waits. An event queued by a handler, on the thread handing over, comes
/// right after the event being handed over (and what that event's handler queued
/// before), ahead of anything queued earlier by other threads.
package final class SerialDelivery<Event>: @unchecked Sendable {
    // Unchecked: the state is behind `condition`; handlers are called outside it.

    /// One queued event, and what its handing over waits for: its own call, and the
    /// events its handler queued (its children), handed over right after it.
    package final class QueuedEvent {
        // Read and written under `condition` only.
        fileprivate var event: Event
        fileprivate let parent: QueuedEvent?
        /// Whether no thread waits for it: the thread handing over goes on to it.
        fileprivate let isPosted: Bool
        /// Itself and its children not yet handed over.
        fileprivate var open = 1

        fileprivate init(_ event: Event, parent: QueuedEvent?, isPosted: Bool) {
            self.event = event
            self.parent = parent
            self.isPosted = isPosted
            parent?.open += 1
        }

        fileprivate var isDone: Bool { open == 0 }

        /// Marks one of its own (itself or a child) as handed over.
        fileprivate func close() {
            open -= 1
            if open == 0 { parent?.close() }
        }
    }

    private struct State {
        var queue: [QueuedEvent] = []
        var first = 0
        /// The thread handing events over, the event it is handing over, and where an
        /// event its handler queues goes.
        var deliverer: pthread_t?
        var current: QueuedEvent?
        var insertion = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        var isIdle: Bool { deliverer == nil && first == queue.count }
    }

    private var state = State()
    private let condition = NSCondition()
    private let merge: (Event, Event) -> Event?

    /// A delivery; `merge` joins an event with a posted one right behind it into one
    /// handing over (`nil`: they stay two).
    package init(merge: @escaping (Event, Event) -> Event? = { _, _ in nil }) {
        self.merge = merge
    }

    /// Queues `event` for `deliver(_:handle:)`: last, or after the events the handler
    /// now running on this thread queued before.
    package func enqueue(_ event: Event) -> QueuedEvent {
        condition.lock()
        defer { condition.unlock() }
        return append(event, isPosted: false)
    }

    /// Returns once `events` were handed over, with the events their handlers queued:
    /// by `handle` on this thread, with every event queued before them, or by the thread
    /// that is handing over. On that thread (a handler that queued them) it returns at
    /// once; they are handed over right after the handler returns.
    ///
    /// A handler that waits for another thread that is delivering waits for itself.
    package func deliver(_ events: [QueuedEvent], handle: (Event) -> Void) {
        guard !events.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        while !events.allSatisfy(\.isDone), let deliverer = state.deliverer {
            if pthread_equal(deliverer, pthread_self()) != 0 { return }
            condition.wait()
        }
        guard !events.allSatisfy(\.isDone) else { return }
        handOver(until: events, handle)
    }

    /// Queues `event` and, unless a thread is handing over (which then hands it over
    /// in its turn), hands over what is queued, by `handle` on this thread. Never waits.
    package func post(_ event: Event, handle: (Event) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        let queued = append(event, isPosted: true)
        guard state.deliverer == nil else { return }
        handOver(until: [queued], handle)
    }

    /// Whether nothing is queued and nothing is being handed over.
    package var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.isIdle
    }

    /// Returns once nothing is queued and nothing is being handed over.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            let isIdle = state.isIdle
            if !isIdle { state.idleWaiters.append(continuation) }
            condition.unlock()
            if isIdle { continuation.resume() }
        }
    }

    // MARK: - Under the lock

    private func append(_ event: Event, isPosted: Bool) -> QueuedEvent {
        guard let current = state.current, let deliverer = state.deliverer, pthread_equal(deliverer, pthread_self()) != 0 else {
            let queued = QueuedEvent(event, parent: nil, isPosted: isPosted)
            state.queue.append(queued)
            return queued
        }
        let queued = QueuedEvent(event, parent: current, isPosted: isPosted)
        state.queue.insert(queued, at: state.insertion)
        state.insertion += 1
        return queued
    }

    /// Hands over, on this thread, until `events` are done and the next event is
    /// neither posted nor queued by a handler this thread ran; called holding the lock,
    /// with no thread handing over.
    private func handOver(until events: [QueuedEvent], _ handle: (Event) -> Void) {
        state.deliverer = pthread_self()
        func nextIsOurs() -> Bool {
            guard state.first < state.queue.count else { return false }
            let next = state.queue[state.first]
            return next.isPosted || next.parent != nil
        }
        while !events.allSatisfy(\.isDone) || nextIsOurs() {
            let queued = state.queue[state.first]
            state.first += 1
            // Posted events right behind it, which nobody waits for, join it when they can.
            while state.first < state.queue.count, state.queue[state.first].isPosted, state.queue[state.first].parent === queued.parent,
                let merged = merge(queued.event, state.queue[state.first].event)
            {
                queued.event = merged
                state.queue[state.first].close()
                state.first += 1
            }
            state.current = queued
            state.insertion = state.first
            let event = queued.event
            condition.unlock()
            handle(event)
            condition.lock()
            state.current = nil
            if state.first == state.queue.count { (state.queue, state.first) = ([], 0) }
            queued.close()
            condition.broadcast()
        }
        state.deliverer = nil
        condition.broadcast()
        guard state.isIdle, !state.idleWaiters.isEmpty else { return }
        let waiters = state.idleWaiters
        state.idleWaiters = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
        condition.lock()
    }
}
