// The sync engine's decision for one key, as a table: what the suite holds, the key's
// record and the cloud's entry, in, and what moves and the record it ends with, out.

import Foundation
import Testing

@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import KeyValueCoders

/// One case: the inputs of a decision and what it must decide.
struct DecisionCase: @unchecked Sendable, CustomTestStringConvertible {
    // Unchecked: constants; the values are property-list leaves.
    let name: String
    var current: Any?
    var recorded: SyncRecord?
    var remote: CloudEntry?
    var heardEdits = false
    var accountChanged = false
    var recordOnly = false
    let action: SyncDecision.Action
    /// The record it ends with: stamp, state and value; `nil` for none.
    let record: (stamp: SyncStamp, state: SyncRecord.State, value: Any?)?

    var testDescription: String { name }

    /// The device's own stamp of an edit made at `now` below, with nothing newer seen.
    static let edit = SyncStamp(time: 1_000_000, device: "A")
    static let mine = SyncStamp(time: 600_000, device: "A")
    static let older = SyncStamp(time: 500_000, device: "B")
    static let newer = SyncStamp(time: 2_000_000, device: "B")

    static let all: [DecisionCase] = [
        DecisionCase(name: "nothing here or in the cloud", action: .keep, record: nil),
        DecisionCase(name: "a value from before sync, none in the cloud: it goes up, adopted", current: 1, action: .upload, record: (.adopted(by: "A"), .pending, 1)),
        DecisionCase(
            name: "a value from before sync, one in the cloud: the cloud's wins", current: 1, remote: CloudEntry(stamp: older, value: 2),
            action: .takeRemote, record: (older, .synced, 2)),
        DecisionCase(
            name: "an edit heard with no record, an older cloud value: the edit goes up, stamped now", current: 1,
            remote: CloudEntry(stamp: older, value: 2), heardEdits: true, action: .upload, record: (edit, .pending, 1)),
        DecisionCase(
            name: "recorded and unchanged, a newer cloud value: the cloud's wins", current: 1, recorded: SyncRecord(stamp: mine, value: 1, state: .synced),
            remote: CloudEntry(stamp: newer, value: 2), action: .takeRemote, record: (newer, .synced, 2)),
        DecisionCase(
            name: "recorded and unchanged, the cloud holds it: nothing moves", current: 1, recorded: SyncRecord(stamp: mine, value: 1, state: .synced),
            remote: CloudEntry(stamp: mine, value: 1), action: .keep, record: (mine, .synced, 1)),
        DecisionCase(
            name: "pending, the cloud holds its stamp: it is synced", current: 1, recorded: SyncRecord(stamp: mine, value: 1, state: .pending),
            remote: CloudEntry(stamp: mine, value: 1), action: .keep, record: (mine, .synced, 1)),
        DecisionCase(
            name: "edited since its record: the edit goes up, stamped now", current: 3, recorded: SyncRecord(stamp: mine, value: 1, state: .synced),
            remote: CloudEntry(stamp: mine, value: 1), action: .upload, record: (edit, .pending, 3)),
        DecisionCase(
            name: "synced, but the cloud holds an older stamp (the upload was discarded): it goes up again", current: 1,
            recorded: SyncRecord(stamp: mine, value: 1, state: .synced), remote: CloudEntry(stamp: older, value: 2), action: .upload,
            record: (mine, .synced, 1)),
        DecisionCase(
            name: "over quota and unchanged, an older cloud value: it stays here, not retried", current: 1,
            recorded: SyncRecord(stamp: mine, value: 1, state: .overQuota), remote: CloudEntry(stamp: older, value: 2), action: .keep,
            record: (mine, .overQuota, 1)),
        DecisionCase(
            name: "another account, a synced value: the account's wins, whatever its stamp", current: 1,
            recorded: SyncRecord(stamp: mine, value: 1, state: .synced), remote: CloudEntry(stamp: older, value: 2), accountChanged: true,
            action: .takeRemote, record: (older, .synced, 2)),
        DecisionCase(
            name: "another account, an edit still to go up: stamps decide", current: 1, recorded: SyncRecord(stamp: edit, value: 1, state: .pending),
            remote: CloudEntry(stamp: older, value: 2), accountChanged: true, action: .upload, record: (edit, .pending, 1)),
        DecisionCase(
            name: "another account that holds nothing: the value stays on this device only", current: 1,
            recorded: SyncRecord(stamp: mine, value: 1, state: .synced), accountChanged: true, action: .keep, record: (mine, .localOnly, 1)),
        DecisionCase(
            name: "the store cannot sync: an edit is only recorded", current: 3, recorded: SyncRecord(stamp: mine, value: 1, state: .synced),
            recordOnly: true, action: .keep, record: (edit, .pending, 3)),
        DecisionCase(
            name: "removed here since its record: the removal goes up", recorded: SyncRecord(stamp: mine, value: 1, state: .synced),
            remote: CloudEntry(stamp: mine, value: 1), action: .upload, record: (edit, .pending, nil)),
    ]
}

@Suite("SyncDecision")
struct SyncDecisionTests {
    @Test("each key's decision, from what the suite, its record and the cloud hold", arguments: DecisionCase.all)
    func decision(_ row: DecisionCase) {
        var clock = SyncClock(stored: ["device": "A", "latest": 0, "latestDevice": ""])
        let decision = SyncDecision.decide(
            current: row.current, recorded: row.recorded, remote: row.remote, heardEdits: row.heardEdits, accountChanged: row.accountChanged,
            recordOnly: row.recordOnly, clock: &clock, now: { Date(timeIntervalSince1970: 1_000) })
        #expect(decision.action == row.action)
        #expect(decision.record?.stamp == row.record?.stamp)
        #expect(decision.record?.state == row.record?.state)
        #expect(sameStoredValue(decision.record?.value, row.record?.value))
    }

    @Test("the clock is asked for the time only when an edit is stamped")
    func clockAskedOnlyForEdits() {
        var clock = SyncClock(stored: ["device": "A", "latest": 0, "latestDevice": ""])
        let unchanged = SyncRecord(stamp: DecisionCase.mine, value: 1, state: .synced)
        _ = SyncDecision.decide(
            current: 1, recorded: unchanged, remote: nil, heardEdits: true, accountChanged: false, recordOnly: false, clock: &clock,
            now: {
                Issue.record("asked for the time")
                return Date()
            })
        #expect(clock.last == SyncStamp(time: 0, device: ""))
    }
}
