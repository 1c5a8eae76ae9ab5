// The stamps, records and clock the suite keeps for synced keys, and edits stamped as
// they are written: by the package, in any process, whether or not an engine runs.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("EditStamps")
struct EditStampsTests {

    @Test("stamps order by time, then by device, then by sequence")
    func stampOrder() {
        let stamps = [
            SyncStamp(time: 2, device: "A"), SyncStamp(time: 1, device: "B"), SyncStamp(time: 1, device: "A"), SyncStamp.adopted(by: "Z"),
            SyncStamp(time: 1, device: "A", sequence: 2),
        ]
        #expect(stamps.sorted().map { "\($0.time)\($0.device)\($0.sequence)" } == ["0Z0", "1A0", "1A2", "1B0", "2A0"])
    }

    @Test("an edit's stamp comes after every stamp seen, and never runs ahead of the clock by more than a millisecond unless a stamp seen did")
    func editStamps() {
        var clock = SyncClock(stored: ["device": "D", "latest": 5_000])
        // A clock of the old form: its latest stamp is taken for another device's.
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 1)) == SyncStamp(time: 5_000, device: "D"))
        clock.saw(SyncStamp(time: 9_000, device: "E"))
        // After a stamp of a device ordered after this one, in a millisecond this clock
        // has not reached, the edit takes the next millisecond: it was made after.
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 5)) == SyncStamp(time: 9_001, device: "D"))
        clock.saw(SyncStamp(time: 9_500, device: "C"))
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 9)) == SyncStamp(time: 9_500, device: "D"))
        // A burst within one millisecond is counted, not run ahead.
        let now = Date(timeIntervalSince1970: 20)
        let burst = (0..<1_000).map { _ in clock.stamp(now: now) }
        #expect(burst.allSatisfy { $0.time == 20_000 })
        #expect(burst.map(\.sequence) == Array(0..<1_000))
        #expect(zip(burst, burst.dropFirst()).allSatisfy { $0 < $1 })
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 20.001)) == SyncStamp(time: 20_001, device: "D"))
        #expect(SyncClock(stored: clock.stored).last == clock.last)
        #expect(SyncClock(stored: nil).device.count == 36)
    }

    @Test("a record or a clock whose stamp is malformed or out of range counts as none", arguments: SyncRecordsTests.badTimes)
    func badRecords(label: String) {
        let time = SyncRecordsTests.badTime(label)
        #expect(SyncRecord(stored: ["time": time, "device": "D", "state": "synced"]) == nil)
        #expect(SyncRecord(stored: ["time": 1, "sequence": time, "device": "D", "state": "synced"]) == nil)
        var clock = SyncClock(stored: ["device": "D", "latest": time, "sequence": time])
        #expect(clock.latest == 0)
        #expect(clock.stamp(now: Date(timeIntervalSince1970: 1)) == SyncStamp(time: 1_000, device: "D"))
    }

    @Test("a record round-trips through the suite's form; anything else is no record")
    func records() {
        let record = SyncRecord(stamp: SyncStamp(time: 3, device: "D"), value: [1, 2], state: .overQuota)
        #expect(record.isSame(as: SyncRecord(stored: record.stored)))
        let burst = SyncRecord(stamp: SyncStamp(time: 3, device: "D", sequence: 12), value: nil, state: .pending)
        #expect(burst.isSame(as: SyncRecord(stored: burst.stored)))
        #expect(SyncRecord(stored: ["time": 3]) == nil)
        #expect(SyncRecord(stored: "x") == nil)
        #expect(SyncRecord(stamp: .adopted(by: "D"), value: 1, state: .pending).isAdoptedOnly)
        #expect(!SyncRecord(stamp: .adopted(by: "D"), value: 1, state: .synced).isAdoptedOnly)
        #expect(SyncRecord.key(for: "theme") == "DefaultsCoder.sync.theme")
    }

    // MARK: - Stamped as written

    /// A suite that has synced `key`: a clock and a record of its value `1`, agreed.
    private func syncedSuite(_ key: String) throws -> TestSuite {
        let suite = TestSuite()
        try DefaultsSuite.change([suite.defaults]) { values in
            try values.set(1, forKey: key)
            try values.set(SyncClock(stored: ["device": "D", "latest": 1_000]).stored, forKey: SyncClock.key)
            try values.set(SyncRecord(stamp: SyncStamp(time: 1_000, device: "D"), value: 1, state: .synced).stored, forKey: SyncRecord.key(for: key))
        }
        return suite
    }

    private func record(_ key: String, in suite: TestSuite) -> SyncRecord? {
        SyncRecord(stored: suite.defaults.persistentDomain(forName: suite.name)?[SyncRecord.key(for: key)])
    }

    /// How a write reaches a synced key through the package.
    enum Door: String, CaseIterable, Sendable {
        case encode, keySubscript, reset, resetAll
    }

    @Test("a package write of a synced key records the edit, pending, stamped when it was made: with no engine in the process", arguments: Door.allCases)
    func stampedAsWritten(_ door: Door) throws {
        let key = DefaultsKey<Int>(uniqueKey("volume"), default: 0)
        let suite = try syncedSuite(key.name)
        let before = Date()
        switch door {
        case .encode: try suite.defaults.encode(2, forKey: key.name)
        case .keySubscript: suite.defaults[key] = 2
        case .reset: try suite.defaults.reset(key)
        case .resetAll: try suite.defaults.resetAll()
        }
        let after = Date()
        let stored = try #require(record(key.name, in: suite))
        #expect(stored.state == .pending)
        #expect(sameStoredValue(stored.value, door == .reset || door == .resetAll ? nil : 2))
        #expect(stored.stamp.device == "D")
        #expect((SyncClock.milliseconds(before)...SyncClock.milliseconds(after)).contains(stored.stamp.time))
        #expect(SyncClock(stored: suite.defaults.persistentDomain(forName: suite.name)?[SyncClock.key]).last == stored.stamp)
    }

    @Test("a plain set leaves the record as it was (an engine stamps it when it sees it); keys with no record, and suites with no clock, get none")
    func notStamped() throws {
        let key = DefaultsKey<Int>(uniqueKey("volume"), default: 0)
        let suite = try syncedSuite(key.name)
        suite.defaults.set(3, forKey: key.name)
        #expect(record(key.name, in: suite)?.state == .synced)
        let other = uniqueKey("other")
        try suite.defaults.encode(4, forKey: other)
        #expect(record(other, in: suite) == nil)
        let unsynced = TestSuite()
        try unsynced.defaults.encode(5, forKey: key.name)
        #expect(unsynced.defaults.persistentDomain(forName: unsynced.name)?.keys.sorted() == [key.name])
    }

    @Test("another process's package write of a synced key is stamped there, when it was made")
    func stampedInAnotherProcess() async throws {
        let key = DefaultsKey<Int>(plainKey("volume"), default: 0)
        let suite = try syncedSuite(key.name)
        let before = Date()
        let result = try await run("defaults-coder-probe", ["change", suite.name, key.name, "encode", "9"])
        #expect(result.status == 0, "\(result.errors)")
        let after = Date()
        suite.defaults.synchronize()
        let stored = try #require(record(key.name, in: suite))
        #expect(stored.state == .pending)
        #expect(sameStoredValue(stored.value, 9))
        #expect((SyncClock.milliseconds(before)...SyncClock.milliseconds(after)).contains(stored.stamp.time))
    }
}
