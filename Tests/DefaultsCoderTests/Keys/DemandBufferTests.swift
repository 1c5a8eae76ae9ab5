// The buffer behind each Combine subscription (`DefaultsPublisher`), tested here
// because Combine itself does not exist on Linux.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DemandBuffer")
struct DemandBufferTests {

    /// A subscriber that records what it gets and asks for `more` after each value.
    final class Recorder: @unchecked Sendable {
        let received = Locked<[Int]>([])
        var more = 0
        var values: [Int] { received.withLock { $0 } }

        func receive(_ value: Int) -> Int {
            received.withLock { $0.append(value) }
            return more
        }
    }

    @Test(
        "values wait for demand and come in order",
        arguments: [
            // (requests made after sending 1...5, values delivered)
            ([0], []),
            ([2], [1, 2]),
            ([2, 1], [1, 2, 3]),
            ([1, 1, 1, 1, 1, 1], [1, 2, 3, 4, 5]),
            ([Int.max], [1, 2, 3, 4, 5]),
            ([Int.max - 1, Int.max - 1], [1, 2, 3, 4, 5]),
        ] as [([Int], [Int])]
    )
    func waitsForDemand(requests: [Int], delivered: [Int]) {
        let recorder = Recorder()
        let buffer = DemandBuffer(deliver: recorder.receive)
        for value in 1...5 { buffer.send(value) }
        #expect(recorder.values == [])
        for count in requests { buffer.request(count) }
        #expect(recorder.values == delivered)
    }

    @Test("a value sent while demand is left is handed over at once; what the subscriber returns adds to its demand")
    func demandFromDelivery() {
        let recorder = Recorder()
        recorder.more = 1
        let buffer = DemandBuffer(deliver: recorder.receive)
        buffer.request(1)
        for value in 1...4 { buffer.send(value) }
        #expect(recorder.values == [1, 2, 3, 4])
    }

    @Test("a subscriber that asks for more from inside a delivery gets the next value after it returns, not inside it")
    func reentrantRequest() {
        let depth = Locked(0)
        let order = Locked<[String]>([])
        nonisolated(unsafe) var buffer: DemandBuffer<Int>!
        buffer = DemandBuffer { value in
            let nested = depth.withLock {
                $0 += 1
                return $0
            }
            order.withLock { $0.append("start \(value) at \(nested)") }
            buffer.request(1)
            order.withLock { $0.append("end \(value)") }
            depth.withLock { $0 -= 1 }
            return 0
        }
        for value in 1...3 { buffer.send(value) }
        buffer.request(1)
        #expect(
            order.withLock { $0 } == [
                "start 1 at 1", "end 1", "start 2 at 1", "end 2", "start 3 at 1", "end 3",
            ])
        // The subscriber refers to the buffer, as a Combine subscriber refers to its
        // subscription: cancelling breaks the cycle.
        buffer.cancel()
    }

    @Test("after cancel nothing more is handed over, also when cancelled from inside a delivery")
    func cancel() {
        let recorder = Recorder()
        let buffer = DemandBuffer(deliver: recorder.receive)
        for value in 1...3 { buffer.send(value) }
        buffer.request(1)
        buffer.cancel()
        #expect(buffer.isCancelled)
        buffer.request(.max)
        buffer.send(4)
        #expect(recorder.values == [1])

        let received = Locked<[Int]>([])
        nonisolated(unsafe) var cancelling: DemandBuffer<Int>!
        cancelling = DemandBuffer { value in
            received.withLock { $0.append(value) }
            if value == 2 { cancelling.cancel() }
            return 0
        }
        cancelling.request(.max)
        for value in 1...4 { cancelling.send(value) }
        #expect(received.withLock { $0 } == [1, 2])
    }

    @Test("the buffer lets go of the subscriber when cancelled")
    func releasesSubscriber() {
        weak var weakRecorder: Recorder?
        let buffer: DemandBuffer<Int> = {
            let recorder = Recorder()
            weakRecorder = recorder
            return DemandBuffer(deliver: recorder.receive)
        }()
        #expect(weakRecorder != nil)
        buffer.cancel()
        #expect(weakRecorder == nil)
    }

    @Test("values sent from several threads: each once, in order per thread, never two deliveries at once")
    func severalThreads() async {
        let inside = Locked(false)
        let overlapped = Locked(false)
        let received = Locked<[Int]>([])
        let buffer = DemandBuffer<Int> { value in
            if inside.withLock({ was in
                defer { was = true }
                return was
            }) {
                overlapped.withLock { $0 = true }
            }
            received.withLock { $0.append(value) }
            inside.withLock { $0 = false }
            return 1
        }
        buffer.request(1)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<500 { buffer.send(thread * 1000 + index) }
                }
            }
        }
        let values = received.withLock { $0 }
        #expect(values.count == 2000)
        #expect(!overlapped.withLock { $0 })
        for thread in 0..<4 {
            let own = values.filter { $0 / 1000 == thread }
            #expect(own == (0..<500).map { thread * 1000 + $0 })
        }
    }

    @Test("over an observation: every change of a key reaches a subscriber that asks for one value at a time")
    func overObservation() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("buffered"), default: 0)
        let received = Locked<[Int]>([])
        let buffer = DemandBuffer<Int> { value in
            received.withLock { $0.append(value) }
            return 0
        }
        let observation = suite.defaults.observe(key) { _, new in buffer.send(new) }
        for value in 1...5 { try suite.defaults.write(value, to: key) }
        #expect(received.withLock { $0 } == [])
        for _ in 0..<6 { buffer.request(1) }
        #expect(received.withLock { $0 } == [0, 1, 2, 3, 4, 5])
        observation.cancel()
    }
}
