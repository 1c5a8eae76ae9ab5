// The adapter of Apple's iCloud store, where Foundation has it (Apple platforms only):
// it forwards to the store, and turns the store's change notification into a change.
// Without the entitlement a test runner's store works on this device alone, which is
// all these tests need.

#if canImport(Darwin)
import Foundation
import Testing

@testable import DefaultsCoder

@Suite("UbiquitousKeyValueStore")
struct UbiquitousKeyValueStoreTests {

    @available(watchOS 9, *)
    @Test("values go to and come from the store it wraps")
    func forwarding() {
        let key = "DefaultsCoderTests." + UUID().uuidString
        let store = UbiquitousKeyValueStore(NSUbiquitousKeyValueStore.default)
        store.set(["a": 1], forKey: key)
        #expect((NSUbiquitousKeyValueStore.default.object(forKey: key) as? [String: Int]) == ["a": 1])
        #expect((store.object(forKey: key) as? [String: Int]) == ["a": 1])
        #expect(store.dictionaryRepresentation[key] != nil)
        store.removeObject(forKey: key)
        #expect(store.object(forKey: key) == nil)
    }

    @available(watchOS 9, *)
    @Test("the store's change notification reaches the handler as a change, until the subscription ends")
    func notifications() {
        let store = UbiquitousKeyValueStore(NSUbiquitousKeyValueStore.default)
        let heard = Recorded<CloudStoreChange>()
        let subscription = store.observeChanges { heard.append($0) }
        let userInfo: [AnyHashable: Any] = [
            NSUbiquitousKeyValueStoreChangeReasonKey: NSUbiquitousKeyValueStoreAccountChange,
            NSUbiquitousKeyValueStoreChangedKeysKey: ["theme"],
        ]
        NotificationCenter.default.post(
            name: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store.store, userInfo: userInfo)
        #expect(heard.values == [CloudStoreChange(reason: .accountChange, keys: ["theme"])])
        subscription.cancel()
        NotificationCenter.default.post(
            name: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store.store, userInfo: userInfo)
        #expect(heard.values.count == 1)
    }
}
#endif
