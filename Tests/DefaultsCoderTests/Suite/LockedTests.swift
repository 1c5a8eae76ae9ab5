import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Locked")
struct LockedTests {

    @Test("updates from many threads are all kept")
    func concurrentUpdates() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
            counter.withLock { $0 += 1 }
        }
        #expect(counter.withLock { $0 } == 1_000)
    }

    @Test("an error thrown inside leaves the lock free")
    func throwingBody() {
        struct Stop: Error {}
        let value = Locked([1])
        #expect(throws: Stop.self) { try value.withLock { _ in throw Stop() } }
        #expect(value.withLock { $0 } == [1])
    }
}
