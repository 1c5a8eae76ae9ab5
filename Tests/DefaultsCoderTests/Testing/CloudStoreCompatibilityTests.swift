// The compatibility check of cloud stores: the package's own stores pass it, and a store
// that breaks one of the engine's assumptions fails it, with the check and what it did.

import Foundation
import Testing

@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting

@Suite("CloudStoreCompatibility")
struct CloudStoreCompatibilityTests {
    @Test("a simulated device passes, with either delivery", arguments: [SimulatedCloud.Delivery.manual, .immediate])
    func simulatedDevicePasses(delivery: SimulatedCloud.Delivery) throws {
        let cloud = SimulatedCloud(delivery: delivery)
        let device = cloud.makeDevice(named: "phone")
        let other = cloud.makeDevice(named: "laptop")
        try CloudStoreCompatibility(device).check()
        // It leaves nothing of its own behind, on the device or, once delivered, anywhere.
        cloud.deliver()
        #expect(device.dictionaryRepresentation.isEmpty)
        #expect(other.dictionaryRepresentation.isEmpty)
    }

    /// A store in memory that breaks one assumption of the engine.
    enum Flaw: String, CaseIterable, CustomTestStringConvertible {
        case datesAsNumbers, boolsAsNumbers, removedKeptInDictionary, removedStillRead, ownWritesReported
        var testDescription: String { rawValue }
    }

    @Test(
        "a store with a flaw fails the check it breaks, saying what it did",
        arguments: [
            (Flaw.datesAsNumbers, "values read back as written: DefaultsCoder.compatibility.date was set to 2001-01-12 13:46:40 +0000, and reads 1000000.0"),
            (.boolsAsNumbers, "values read back as written: DefaultsCoder.compatibility.bool was set to true, and reads 1"),
            (.removedKeptInDictionary, "a removed key leaves the dictionary representation: it holds DefaultsCoder.compatibility.string = text"),
            (.removedStillRead, "a removed key reads nothing: DefaultsCoder.compatibility.string reads text"),
            (.ownWritesReported, "the store's own writes are not reported as server changes: it reported DefaultsCoder.compatibility.string"),
        ])
    func flawedStoreFails(flaw: Flaw, message: String) {
        let store = FlawedStore(flaw)
        #expect(throws: CloudStoreCompatibility.Failure.self) { try CloudStoreCompatibility(store).check() }
        do {
            try CloudStoreCompatibility(store).check()
        } catch {
            #expect(error.description == message)
        }
    }
}

/// A cloud store in memory with one flaw.
private final class FlawedStore: CloudKeyValueStore, @unchecked Sendable {
    // Unchecked: its state is behind a lock; the tests use it on one thread.
    let flaw: CloudStoreCompatibilityTests.Flaw
    private let values = Locked<[String: Any]>([:])
    private let removed = Locked<[String: Any]>([:])
    private let handler = Locked<(@Sendable (CloudStoreChange) -> Void)?>(nil)

    init(_ flaw: CloudStoreCompatibilityTests.Flaw) { self.flaw = flaw }

    func object(forKey key: String) -> Any? {
        values.withLock { $0[key] } ?? (flaw == .removedStillRead ? removed.withLock { $0[key] } : nil)
    }

    func set(_ value: Any, forKey key: String) {
        var value = value
        if flaw == .datesAsNumbers, let date = value as? Date { value = date.timeIntervalSinceReferenceDate }
        if flaw == .boolsAsNumbers, let bool = value as? Bool { value = bool ? 1 : 0 }
        values.withLock { $0[key] = value }
        if flaw == .ownWritesReported { handler.withLock { $0 }?(CloudStoreChange(reason: .serverChange, keys: [key])) }
    }

    func removeObject(forKey key: String) {
        let old = values.withLock { $0.removeValue(forKey: key) }
        if let old { removed.withLock { $0[key] = old } }
    }

    var dictionaryRepresentation: [String: Any] {
        let current = values.withLock { $0 }
        guard flaw == .removedKeptInDictionary else { return current }
        return current.merging(removed.withLock { $0 }) { kept, _ in kept }
    }

    func synchronize() -> Bool { true }

    func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription {
        self.handler.withLock { $0 = handler }
        return CloudStoreSubscription { [weak self] in self?.handler.withLock { $0 = nil } }
    }
}
