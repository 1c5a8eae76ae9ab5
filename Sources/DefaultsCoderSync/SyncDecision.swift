// What the sync engine decides for one key, as a function of what the suite holds, the
// key's record, the cloud's entry and the device's clock: no suite, store or lock is
// touched here, so the whole table of cases is tested as a table (`SyncDecisionTests`).

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// The engine's decision for one key in a reconcile.
struct SyncDecision {
    /// What becomes of the key.
    enum Action: Equatable {
        /// Nothing moves between the suite and the cloud; the record may still change.
        case keep
        /// The cloud's entry wins: its value is written here, unless the suite holds it.
        case takeRemote
        /// This device's value goes up as `record` says, within the store's limits.
        case upload
    }

    /// The key's record after the decision (for an upload, before the store's limits
    /// are checked); `nil` when the key has none and holds nothing.
    var record: SyncRecord?
    var action: Action

    /// Decides for one key.
    ///
    /// - Parameters:
    ///   - current: What the suite holds under the key.
    ///   - recorded: The key's record, if any.
    ///   - remote: The cloud's entry, when it holds one the suite can keep.
    ///   - heardEdits: Whether the suite's feed reported the key changed while the engine
    ///     ran: a value with no record is then an edit, not one that predates sync.
    ///   - accountChanged: Whether the store now holds another account's values.
    ///   - recordOnly: Whether only edits are recorded (the store cannot sync now).
    ///   - clock: The device's clock: it sees the remote stamp, and stamps an edit.
    ///   - now: The time an edit found now is stamped with; asked for only then.
    static func decide(
        current: Any?, recorded: SyncRecord?, remote: CloudEntry?, heardEdits: Bool, accountChanged: Bool, recordOnly: Bool,
        clock: inout SyncClock, now: () -> Date
    ) -> SyncDecision {
        if let remote { clock.saw(remote.stamp) }
        // What this device holds: its record, or an edit made since.
        var record: SyncRecord?
        if let recorded, sameStoredValue(current, recorded.value) {
            record = recorded
        } else if recorded != nil || (heardEdits && current != nil) {
            record = SyncRecord(stamp: clock.stamp(now: now()), value: current, state: .pending)
        } else if let current {
            record = SyncRecord(stamp: .adopted(by: clock.device), value: current, state: .pending)
        }
        if recordOnly { return SyncDecision(record: record, action: .keep) }
        // After an account change the new account's values win, except over an edit still
        // to go up (one made while signed out, say): stamps decide for it, as they would
        // had sign-in been found by `refresh()`.
        let isEdit = record.map { $0.state == .pending && !$0.isAdoptedOnly } ?? false
        let takesAccount = accountChanged && !isEdit
        if let remote, takesAccount || record.map({ $0.isAdoptedOnly || remote.outranks($0.stamp, value: $0.value) }) ?? true {
            return SyncDecision(record: SyncRecord(stamp: remote.stamp, value: remote.value, state: .synced), action: .takeRemote)
        }
        guard var mine = record else { return SyncDecision(record: nil, action: .keep) }
        if takesAccount {
            mine.state = .localOnly
            return SyncDecision(record: mine, action: .keep)
        }
        let cloudHoldsMine = remote.map { $0.stamp == mine.stamp && sameStoredValue($0.value, mine.value) } ?? false
        if !cloudHoldsMine, mine.state == .pending || mine.state == .synced {
            // Remote is absent or older: this device's value goes up (again, when an
            // upload was discarded).
            return SyncDecision(record: mine, action: .upload)
        }
        if mine.stamp == remote?.stamp, mine.state == .pending { mine.state = .synced }
        return SyncDecision(record: mine, action: .keep)
    }
}
