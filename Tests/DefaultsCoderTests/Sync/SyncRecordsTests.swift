// The stamps and the two forms the engine keeps: the cloud's entry and the suite's record.

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("SyncRecords")
struct SyncRecordsTests {

    @Test("stamps order by time, then by device")
    func stampOrder() {
        let stamps = [
            SyncStamp(time: 2, device: "A"), SyncStamp(time: 1, device: "B"), SyncStamp(time: 1, device: "A"), SyncStamp.adopted(by: "Z"),
        ]
        #expect(stamps.sorted().map { "\($0.time)\($0.device)" } == ["0Z", "1A", "1B", "2A"])
    }

    @Test("an edit's stamp is later than every stamp seen, whatever the clock says")
    func editStamps() {
        var clock = SyncClock(stored: ["device": "D", "latest": 5_000])
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 1)) == SyncStamp(time: 5_001, device: "D"))
        clock.saw(SyncStamp(time: 9_000, device: "E"))
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 20)) == SyncStamp(time: 20_000, device: "D"))
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 20)) == SyncStamp(time: 20_001, device: "D"))
        #expect(SyncClock(stored: clock.stored).latest == 20_001)
        #expect(SyncClock(stored: nil).device.count == 36)
    }

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

    @Test("a record or a clock whose stamp is malformed or out of range counts as none", arguments: badTimes)
    func badRecords(label: String) {
        let time = Self.badTime(label)
        #expect(SyncRecord(stored: ["time": time, "device": "D", "state": "synced"]) == nil)
        var clock = SyncClock(stored: ["device": "D", "latest": time])
        #expect(clock.latest == 0)
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 1)).time == 1_000)
    }

    @Test("a Defaults pair dated before 1970 or after 9999 is no entry; the clock saturates instead of overflowing")
    func badPairsAndSaturation() {
        #expect(CloudEntry(cloud: [Date(timeIntervalSince1970: -1), "dark"] as [Any]) == nil)
        #expect(CloudEntry(cloud: [Date.distantFuture.addingTimeInterval(1e12), "dark"] as [Any]) == nil)
        var clock = SyncClock(stored: ["device": "D", "latest": NSNumber(value: SyncStamp.times.upperBound)])
        #expect(clock.stamp(now: Date()).time == SyncStamp.times.upperBound)
        clock.saw(SyncStamp(time: Int64.max, device: "E"))
        #expect(clock.latest == SyncStamp.times.upperBound)
        #expect(SyncClock.milliseconds(Date(timeIntervalSince1970: .infinity)) == 0)
        #expect(SyncClock.milliseconds(Date(timeIntervalSince1970: 1e15)) == SyncStamp.times.upperBound)
    }

    @Test("a record round-trips through the suite's form; anything else is no record")
    func records() {
        let record = SyncRecord(stamp: SyncStamp(time: 3, device: "D"), value: [1, 2], state: .overQuota)
        #expect(record.isSame(as: SyncRecord(stored: record.stored)))
        #expect(SyncRecord(stored: ["time": 3]) == nil)
        #expect(SyncRecord(stored: "x") == nil)
        #expect(SyncRecord(stamp: .adopted(by: "D"), value: 1, state: .pending).isAdoptedOnly)
        #expect(!SyncRecord(stamp: .adopted(by: "D"), value: 1, state: .synced).isAdoptedOnly)
        #expect(SyncRecord.key(for: "theme") == "DefaultsCoder.sync.theme")
    }
}
