// The one serial delivery of the feed and the sync engine: order, one at a time, events
// queued by handlers right after theirs, posts that never wait, merging, and idleness.

import Foundation
import Testing

@testable import DefaultsCoderStorage

@Suite("SerialDelivery")
struct SerialDeliveryTests {
    @Test("events from many threads are handed over one at a time, each thread's in its order, and each before its deliver returns")
    func orderAcrossThreads() async throws {
        let delivery = SerialDelivery<Int>()
        let log = Locked<(handled: [Int], running: Int, overlapped: Bool)>(([], 0, false))
        let late = Locked(0)
        try await offPool {
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<200 {
                    let value = thread * 1_000 + index
                    delivery.deliver([delivery.enqueue(value)]) { value in
                        log.withLock {
                            $0.running += 1
                            if $0.running > 1 { $0.overlapped = true }
                        }
                        log.withLock {
                            $0.handled.append(value)
                            $0.running -= 1
                        }
                    }
                    if !log.withLock({ $0.handled.contains(value) }) { late.withLock { $0 += 1 } }
                }
            }
        }
        let handled = log.withLock { $0.handled }
        #expect(handled.count == 800)
        #expect(!log.withLock { $0.overlapped })
        #expect(late.withLock { $0 } == 0)
        for thread in 0..<4 {
            let own = handled.filter { $0 / 1_000 == thread }
            #expect(own == own.sorted())
        }
    }

    @Test("an event a handler queues comes right after it, before events queued earlier by others; its deliver returns at once")
    func handlerQueuesNext() {
        let delivery = SerialDelivery<String>()
        var handled: [String] = []
        let first = delivery.enqueue("first")
        let second = delivery.enqueue("second")
        func handle(_ event: String) {
            handled.append(event)
            if event == "first" {
                let child = delivery.enqueue("child of first")
                delivery.deliver([child], handle: handle)
                handled.append("first's deliver returned")
            }
        }
        delivery.deliver([first, second], handle: handle)
        #expect(handled == ["first", "first's deliver returned", "child of first", "second"])
        #expect(delivery.isIdle)
    }

    @Test("a post while another thread hands over returns at once; that thread hands it over after its own, merged with the posts behind it")
    func postsNeverWait() async throws {
        let delivery = SerialDelivery<[Int]>(merge: { $0 + $1 })
        let handled = Locked<[[Int]]>([])
        let inHandler = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        try await offPool {
            let holder = Thread {
                delivery.post([0]) { event in
                    if event == [0] {
                        inHandler.signal()
                        release.wait()
                    }
                    handled.withLock { $0.append(event) }
                }
            }
            holder.start()
            inHandler.wait()
            // The holder's handler is running: these return without handing anything over.
            for value in 1...3 { delivery.post([value]) { _ in Issue.record("handed over by a poster") } }
            release.signal()
        }
        await delivery.waitUntilIdle()
        #expect(handled.withLock { $0 } == [[0], [1, 2, 3]])
    }

    @Test("waiting until idle returns once everything queued was handed over, and at once when nothing is")
    func idle() async throws {
        let delivery = SerialDelivery<Int>()
        await delivery.waitUntilIdle()
        let handled = Locked(0)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            delivery.post(1) { _ in
                started.signal()
                release.wait()
                handled.withLock { $0 += 1 }
            }
        }
        thread.start()
        try await offPool { started.wait() }
        #expect(!delivery.isIdle)
        release.signal()
        await delivery.waitUntilIdle()
        #expect(handled.withLock { $0 } == 1)
        #expect(delivery.isIdle)
    }
}
