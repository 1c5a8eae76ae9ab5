// The adapter of Apple's iCloud store. How it hears the store and the iCloud identity
// (`UbiquitousStoreNotifications`) is tested everywhere, with a center of its own; the
// forwarding itself where Foundation has the store (Apple platforms only), where without
// the entitlement a test runner's store works on this device alone, which is all these
// tests need.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("UbiquitousKeyValueStore")
struct UbiquitousKeyValueStoreTests {
    private static let storeChange = Notification.Name("DefaultsCoderTests.storeChange")
    private static let identityChange = Notification.Name("DefaultsCoderTests.identityChange")

    /// What a handler saw: the change, and whether it ran on the package's queue.
    private typealias Heard = (change: CloudStoreChange, onQueue: Bool)

    /// A store object, as the notifications name it.
    private final class Store: Sendable {}

    /// Returns once the package's queue ran what was queued before.
    static func drainQueue() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            UbiquitousStoreNotifications.queue.addOperation { done.resume() }
        }
    }

    @Test("the store's changes and the identity's reach the handler on the package's serial queue, until the subscription ends")
    func notificationsOnThePackagesQueue() async {
        let (center, store) = (NotificationCenter(), Store())
        let heard = Recorded<Heard>()
        let subscription = UbiquitousStoreNotifications.observe(store, storeChange: Self.storeChange, identityChange: Self.identityChange, in: center) {
            heard.append(($0, OperationQueue.current === UbiquitousStoreNotifications.queue))
        }
        // Posted from another thread, as Apple may.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                center.post(
                    name: Self.storeChange, object: store,
                    userInfo: [CloudStoreChange.reasonKey: NSNumber(value: 0), CloudStoreChange.changedKeysKey: ["theme"]])
                // Another store's change is not this adapter's.
                center.post(name: Self.storeChange, object: Store(), userInfo: [CloudStoreChange.reasonKey: NSNumber(value: 0)])
                center.post(name: Self.identityChange, object: nil)
                done.resume()
            }.start()
        }
        #expect(await eventually { heard.values.count == 2 })
        #expect(heard.values.map(\.change) == [CloudStoreChange(reason: .serverChange, keys: ["theme"]), CloudStoreChange(reason: .serverChange, keys: [])])
        #expect(heard.values.map(\.onQueue) == [true, true])
        #expect(UbiquitousStoreNotifications.queue.maxConcurrentOperationCount == 1)
        subscription.cancel()
        center.post(name: Self.identityChange, object: nil)
        await Self.drainQueue()
        #expect(heard.values.count == 2)
    }

    @Test("the adapter's account check is the protocol's: it never waits for an iCloud Drive token")
    func noDriveToken() throws {
        let source = try String(contentsOf: try #require(AppleSources.files.first { $0.lastPathComponent == "UbiquitousKeyValueStore.swift" }), encoding: .utf8)
        let code = AppleSources.compiledLines(of: source, for: .iOS).map(\.code).joined(separator: "\n")
        #expect(code.contains("NSUbiquitousKeyValueStore"))
        #expect(!code.contains("ubiquityIdentityToken"))
        #expect(!code.contains("hasAccount"))
    }

    @Test("with no account check of its own, the engine syncs once synchronize() succeeds; a change that names no keys reconciles every key")
    func changesWithoutKeys() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = ForwardingStore(cloud.makeDevice(named: "laptop"), reportsKeys: false)
        let suite = TestSuite("laptop")
        let sync = CloudSync(suite.defaults, store: laptop, refreshesWhenActive: false)
        try sync.add(.syncedVolume, .syncedName)
        try sync.start()
        await sync.waitUntilIdle()
        #expect(sync.status == .running)
        phone.defaults[.syncedVolume] = 4
        phone.defaults[.syncedName] = "Ada"
        await settle(cloud, [phone])
        cloud.pull(to: laptop.device)
        await sync.waitUntilIdle()
        #expect(suite.defaults[.syncedVolume] == 4)
        #expect(suite.defaults[.syncedName] == "Ada")
        sync.stop()
    }
}

#if canImport(Darwin)
@Suite("UbiquitousKeyValueStore on Apple platforms")
struct UbiquitousKeyValueStoreAppleTests {

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
        #expect(store.hasAccount)
    }

    @available(watchOS 9, *)
    @Test("the store's change notification reaches the handler as a change, until the subscription ends")
    func notifications() async {
        let store = UbiquitousKeyValueStore(NSUbiquitousKeyValueStore.default)
        let heard = Recorded<CloudStoreChange>()
        let subscription = store.observeChanges { heard.append($0) }
        let userInfo: [AnyHashable: Any] = [
            NSUbiquitousKeyValueStoreChangeReasonKey: NSUbiquitousKeyValueStoreAccountChange,
            NSUbiquitousKeyValueStoreChangedKeysKey: ["theme"],
        ]
        NotificationCenter.default.post(
            name: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store.store, userInfo: userInfo)
        #expect(await eventually { heard.values == [CloudStoreChange(reason: .accountChange, keys: ["theme"])] })
        subscription.cancel()
        NotificationCenter.default.post(
            name: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store.store, userInfo: userInfo)
        await UbiquitousKeyValueStoreTests.drainQueue()
        #expect(heard.values.count == 1)
    }
}
#endif
