// The store's seam: the translation of `NSUbiquitousKeyValueStore`'s change notification
// (compiled everywhere, so tested here), the changes as a sequence, subscriptions.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("CloudKeyValueStore")
struct CloudKeyValueStoreTests {

    /// A notification's `userInfo` and the change it describes.
    struct Translation: Sendable, CustomTestStringConvertible {
        let label: String
        let userInfo: [String: SendableAny]?
        let change: CloudStoreChange?
        var testDescription: String { label }
    }

    static let translations: [Translation] = [
        Translation(
            label: "server change with keys",
            userInfo: [
                "NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny(NSNumber(value: 0)),
                "NSUbiquitousKeyValueStoreChangedKeysKey": SendableAny(["theme", "volume"]),
            ],
            change: CloudStoreChange(reason: .serverChange, keys: ["theme", "volume"])),
        Translation(
            label: "initial sync", userInfo: ["NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny(NSNumber(value: 1))],
            change: CloudStoreChange(reason: .initialSync, keys: [])),
        Translation(
            label: "quota violation", userInfo: ["NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny(2)],
            change: CloudStoreChange(reason: .quotaViolation, keys: [])),
        Translation(
            label: "account change",
            userInfo: [
                "NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny(NSNumber(value: 3)),
                "NSUbiquitousKeyValueStoreChangedKeysKey": SendableAny(["a"]),
            ],
            change: CloudStoreChange(reason: .accountChange, keys: ["a"])),
        Translation(
            label: "an unknown reason", userInfo: ["NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny(NSNumber(value: 4))],
            change: nil),
        Translation(
            label: "a reason that is not a number", userInfo: ["NSUbiquitousKeyValueStoreChangeReasonKey": SendableAny("0")],
            change: nil),
        Translation(label: "no reason", userInfo: ["NSUbiquitousKeyValueStoreChangedKeysKey": SendableAny(["a"])], change: nil),
        Translation(label: "no userInfo", userInfo: nil, change: nil),
    ]

    @Test("a change notification's userInfo becomes its reason and keys", arguments: translations)
    func translation(_ translation: Translation) {
        let userInfo = translation.userInfo.map { info in
            Dictionary(uniqueKeysWithValues: info.map { (AnyHashable($0.key), $0.value.value) })
        }
        #expect(CloudStoreChange(userInfo: userInfo) == translation.change)
    }

    @Test("the reasons have Apple's values")
    func reasonValues() {
        #expect(CloudStoreChange.Reason.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #if canImport(Darwin)
        #expect(CloudStoreChange.Reason.serverChange.rawValue == NSUbiquitousKeyValueStoreServerChange)
        #expect(CloudStoreChange.Reason.initialSync.rawValue == NSUbiquitousKeyValueStoreInitialSyncChange)
        #expect(CloudStoreChange.Reason.quotaViolation.rawValue == NSUbiquitousKeyValueStoreQuotaViolationChange)
        #expect(CloudStoreChange.Reason.accountChange.rawValue == NSUbiquitousKeyValueStoreAccountChange)
        #endif
    }

    @Test("changes arrive as a sequence, which ends its subscription when its iteration ends")
    func changesSequence() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        let stream = laptop.changes
        phone.set(1, forKey: "a")
        cloud.deliver()
        phone.set(2, forKey: "b")
        cloud.deliver()
        var changes: [CloudStoreChange] = []
        for await change in stream {
            changes.append(change)
            if changes.count == 2 { break }
        }
        #expect(changes == [CloudStoreChange(reason: .serverChange, keys: ["a"]), CloudStoreChange(reason: .serverChange, keys: ["b"])])
    }

    @Test("a subscription released or cancelled hears nothing more")
    func subscriptions() {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = cloud.makeDevice(named: "phone")
        let laptop = cloud.makeDevice(named: "laptop")
        let heard = Recorded<CloudStoreChange>()
        let kept = laptop.observeChanges { heard.append($0) }
        do { _ = laptop.observeChanges { heard.append($0) } }
        phone.set("x", forKey: "k")
        cloud.deliver()
        #expect(heard.values == [CloudStoreChange(reason: .serverChange, keys: ["k"])])
        kept.cancel()
        phone.set("y", forKey: "k")
        cloud.deliver()
        #expect(heard.values.count == 1)
        #expect(laptop.object(forKey: "k") as? String == "y")
    }
}
