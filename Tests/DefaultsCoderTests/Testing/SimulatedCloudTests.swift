// The simulator behaves as Apple documents `NSUbiquitousKeyValueStore`: each device's
// copy, the server's last write, delivery only when the network runs, discarded writes
// before the first download, quota, account switch, entitlement.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("SimulatedCloud")
struct SimulatedCloudTests {

    @Test("a write stays on its device until delivered, then reaches the others with a server change")
    func manualDelivery() {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        let heard = Recorded<CloudStoreChange>()
        let subscription = laptop.observeChanges { heard.append($0) }
        phone.set("dark", forKey: "theme")
        #expect(phone.object(forKey: "theme") as? String == "dark")
        #expect(laptop.object(forKey: "theme") == nil)
        #expect(cloud.serverValues().isEmpty)
        cloud.push(from: phone)
        #expect(cloud.serverValues()["theme"] as? String == "dark")
        #expect(laptop.object(forKey: "theme") == nil)
        cloud.pull(to: laptop)
        #expect(laptop.object(forKey: "theme") as? String == "dark")
        #expect(heard.values == [CloudStoreChange(reason: .serverChange, keys: ["theme"])])
        #expect(phone.uploadCount == 1)
        subscription.cancel()
    }

    @Test("immediate delivery reaches the other devices before set returns")
    func immediateDelivery() {
        let cloud = SimulatedCloud()
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        phone.set(3, forKey: "volume")
        #expect(laptop.object(forKey: "volume") as? Int == 3)
        phone.removeObject(forKey: "volume")
        #expect(laptop.object(forKey: "volume") == nil)
        #expect(laptop.dictionaryRepresentation.isEmpty)
    }

    @Test("an offline device keeps its writes and takes the others' when it comes back")
    func offline() {
        let cloud = SimulatedCloud()
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        laptop.isOnline = false
        laptop.set("b", forKey: "laptop")
        phone.set("a", forKey: "phone")
        #expect(laptop.object(forKey: "phone") == nil)
        #expect(phone.object(forKey: "laptop") == nil)
        laptop.isOnline = true
        #expect(laptop.object(forKey: "phone") as? String == "a")
        #expect(phone.object(forKey: "laptop") as? String == "b")
    }

    @Test("before its first download a device discards writes and says so; the download replaces its copy")
    func initialSync() {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = cloud.makeDevice(named: "phone")
        phone.set("server", forKey: "k")
        cloud.deliver()
        let laptop = cloud.makeDevice(named: "laptop", needsInitialSync: true)
        let heard = Recorded<CloudStoreChange>()
        let subscription = laptop.observeChanges { heard.append($0) }
        laptop.set("local", forKey: "k")
        laptop.set("local", forKey: "other")
        cloud.deliver()
        #expect(
            heard.values == [
                CloudStoreChange(reason: .initialSync, keys: ["k"]), CloudStoreChange(reason: .initialSync, keys: ["other"]),
                CloudStoreChange(reason: .serverChange, keys: ["k", "other"]),
            ])
        #expect(laptop.object(forKey: "k") as? String == "server")
        #expect(laptop.object(forKey: "other") == nil)
        #expect(cloud.serverValues().count == 1)
        subscription.cancel()
    }

    @Test("a write over the server's limits stays on the device and is reported as a quota violation")
    func quota() {
        let cloud = SimulatedCloud(delivery: .manual, limits: CloudStoreLimits(keys: 2, totalBytes: 100, valueBytes: 60, keyBytes: 64))
        let phone = cloud.makeDevice(named: "phone")
        let heard = Recorded<CloudStoreChange>()
        let subscription = phone.observeChanges { heard.append($0) }
        phone.set("a", forKey: "a")
        phone.set(String(repeating: "x", count: 80), forKey: "big")
        phone.set("c", forKey: "c")
        phone.set("d", forKey: "d")
        cloud.deliver()
        #expect(Set(cloud.serverValues().keys) == ["a", "c"])
        #expect(heard.values == [CloudStoreChange(reason: .quotaViolation, keys: ["big", "d"])])
        #expect(phone.object(forKey: "big") != nil)
        subscription.cancel()
    }

    @Test("an account switch replaces every value and is reported at once; signing out keeps writes local")
    func accounts() {
        let cloud = SimulatedCloud()
        let work = cloud.makeDevice(named: "work", account: "work")
        work.set(1, forKey: "w")
        let phone = cloud.makeDevice(named: "phone")
        phone.set(2, forKey: "p")
        let heard = Recorded<CloudStoreChange>()
        let subscription = phone.observeChanges { heard.append($0) }
        phone.switchAccount(to: "work")
        #expect(heard.values == [CloudStoreChange(reason: .accountChange, keys: ["p", "w"])])
        #expect(phone.dictionaryRepresentation.keys.sorted() == ["w"])
        #expect(phone.account == "work" && phone.hasAccount)
        phone.switchAccount(to: nil)
        #expect(!phone.hasAccount)
        phone.set(3, forKey: "offline")
        #expect(cloud.serverValues(of: "work")["offline"] == nil)
        subscription.cancel()
    }

    @Test("without the entitlement nothing travels and synchronize returns false")
    func entitlement() {
        let cloud = SimulatedCloud()
        let phone = cloud.makeDevice(named: "phone")
        phone.hasEntitlement = false
        phone.set(1, forKey: "k")
        #expect(!phone.synchronize())
        #expect(cloud.serverValues().isEmpty)
        phone.hasEntitlement = true
        #expect(phone.synchronize())
        #expect(cloud.serverValues()["k"] as? Int == 1)
    }

    @Test("each device reads the cloud's clock shifted by its own offset")
    func clocks() {
        let instant = Date(timeIntervalSince1970: 1_000)
        let cloud = SimulatedCloud(now: { instant })
        let phone = cloud.makeDevice(named: "phone")
        phone.clockOffset = -60
        #expect(phone.now() == Date(timeIntervalSince1970: 940))
        #expect(cloud.makeDevice(named: "laptop").now() == instant)
        #expect(phone.description == "phone")
    }
}
