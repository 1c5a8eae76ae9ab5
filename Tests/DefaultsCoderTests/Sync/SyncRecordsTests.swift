// The cloud's entry, and the order that breaks ties between two values of one stamp.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import KeyValueCoders

@Suite("SyncRecords")
struct SyncRecordsTests {

    @Test("a cloud entry round-trips; a removal has no value; a foreign value ranks below every edit")
    func entries() throws {
        let entry = CloudEntry(stamp: SyncStamp(time: 7, device: "D"), value: ["a": 1])
        let back = try #require(CloudEntry(cloud: entry.cloudValue))
        #expect(back.stamp == entry.stamp)
        #expect(sameStoredValue(back.value, ["a": 1]))
        let removal = try #require(CloudEntry(cloud: CloudEntry(stamp: SyncStamp(time: 8, device: "D"), value: nil).cloudValue))
        #expect(removal.value == nil && removal.stamp.time == 8)
        let foreign = try #require(CloudEntry(cloud: "zephyr's raw value"))
        #expect(foreign.value as? String == "zephyr's raw value")
        #expect(foreign.stamp < SyncStamp.adopted(by: "A"))
        #expect(sameStoredValue(CloudEntry(cloud: ["time": 1, "device": "x"])?.value, ["time": 1, "device": "x"]))
        let defaults = try #require(CloudEntry(cloud: [Date(timeIntervalSince1970: 2.5), "dark"] as [Any]))
        #expect(defaults.stamp == SyncStamp(time: 2_500, device: ""))
        #expect(defaults.value as? String == "dark")
        #expect(CloudEntry(cloud: [1, 2])?.stamp.time == 0)
    }

    /// Stamps as another device or process may have stored them, by name.
    static let badTimes = ["Int64.max", "UInt64.max", "-1", "year 10000", "a Bool", "a Double", "a string"]

    static func badTime(_ label: String) -> Any {
        switch label {
        case "Int64.max": NSNumber(value: Int64.max)
        case "UInt64.max": NSNumber(value: UInt64.max)
        case "-1": NSNumber(value: -1)
        case "year 10000": NSNumber(value: SyncStamp.times.upperBound + 1)
        case "a Bool": true
        case "a Double": NSNumber(value: 5.5)
        default: "12"
        }
    }

    @Test("an entry of the package's whose stamp is malformed or out of range is no entry", arguments: badTimes)
    func badEntries(label: String) {
        #expect(CloudEntry(cloud: ["DefaultsCoder.sync": 1, "time": Self.badTime(label), "device": "D", "value": 1]) == nil)
    }

    @Test("a Defaults pair dated before 1970 or after 9999 is no entry; the clock saturates instead of overflowing")
    func badPairsAndSaturation() {
        #expect(CloudEntry(cloud: [Date(timeIntervalSince1970: -1), "dark"] as [Any]) == nil)
        #expect(CloudEntry(cloud: [Date.distantFuture.addingTimeInterval(1e12), "dark"] as [Any]) == nil)
        var clock = SyncClock(stored: ["device": "D", "latest": NSNumber(value: SyncStamp.times.upperBound)])
        #expect(clock.stamp(now: Date()).time == SyncStamp.times.upperBound)
        clock.saw(SyncStamp(time: Int64.max, device: "E", sequence: Int64.max))
        #expect(clock.latest == SyncStamp.times.upperBound)
        // A device that saw the last stamp there is can still stamp: never past it, never trapping.
        for _ in 0..<3 { #expect(clock.stamp(now: Date()).time == SyncStamp.times.upperBound) }
        #expect(SyncClock.milliseconds(Date(timeIntervalSince1970: .infinity)) == 0)
        #expect(SyncClock.milliseconds(Date(timeIntervalSince1970: 1e15)) == SyncStamp.times.upperBound)
    }

    @Test("two values stamped in one millisecond: every device keeps the same one, whichever it held")
    func ties() throws {
        let time = Date(timeIntervalSince1970: 1_800_000_000.5)
        let values: [Any] = ["dark", "light", 1, 2, true, Data([1]), ["a": 1], ["a": 2], [1, 2], [1, 2, 3]]
        for first in values {
            for second in values where !sameStoredValue(first, second) {
                let a = try #require(CloudEntry(cloud: [time, first] as [Any]))
                let b = try #require(CloudEntry(cloud: [time, second] as [Any]))
                // Exactly one wins, seen from either side.
                #expect(a.outranks(b.stamp, value: b.value) != b.outranks(a.stamp, value: a.value), "\(first) \(second)")
            }
            let a = try #require(CloudEntry(cloud: [time, first] as [Any]))
            #expect(!a.outranks(a.stamp, value: first), "a value never outranks itself")
        }
        // A number bridged from the cloud ranks as the same number stored here.
        let bridged = try #require(CloudEntry(cloud: [time, NSNumber(value: Int64(7))] as [Any]))
        #expect(!bridged.outranks(bridged.stamp, value: 7))
    }
}
