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
    private let body: @Sendable () -> Void

    init(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.body = body
    }

    func call() {
        let first = isPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        queue.async { [isPending, body] in
            isPending.withLock { $0 = false }
            body()
        }
    }
}
