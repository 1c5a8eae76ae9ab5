import Foundation
import KeyValueCoders

/// A value behind a lock. Callers keep the app's code (handlers, observers) out of
/// `withLock`, so that it may call back into the package.
package final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

/// Runs `body` on `queue` after each `call()`, once for all the calls made while a run is
/// waiting to start: a burst of changes heard costs one recheck.
final class CoalescingRunner: Sendable {
    private let isPending = Locked(false)
    private let queue: DispatchQueue
    private let delay: DispatchTimeInterval?
    private let body: @Sendable () -> Void

    /// A runner whose runs start `delay` after the first call they answer (`nil`: as soon
    /// as the queue can): the calls of that span make one run, so that a steady stream of
    /// calls costs one run per span.
    init(on queue: DispatchQueue, after delay: DispatchTimeInterval? = nil, _ body: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.delay = delay
        self.body = body
    }

    func call() {
        let first = isPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        let run = { @Sendable [isPending, body] in
            isPending.withLock { $0 = false }
            body()
        }
        if let delay { queue.asyncAfter(deadline: .now() + delay, execute: run) } else { queue.async(execute: run) }
    }
}
