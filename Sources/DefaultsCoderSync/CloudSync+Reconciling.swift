// A reconcile: each key's value, record and cloud entry are read, what wins is decided
// (`SyncDecision`), and written locally as one change of the suite with the records,
// and upwards as one entry each.

import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

extension CloudSync {
    /// Brings each of `keys` to what wins between the suite and the cloud: the local
    /// value and records in one change of the suite, then the uploads.
    ///
    /// - Parameters:
    ///   - heardEdits: Whether the suite's feed reported the keys changed while the
    ///     engine ran: a value of a key with no record is then an edit, not a value that
    ///     predates sync.
    ///   - accountChanged: Whether the store now holds another account's values: they
    ///     win whatever their stamps, and what only this device holds stays here.
    ///   - recordOnly: Whether only edits are recorded, and the cloud left alone (the
    ///     store cannot sync now).
    ///
    /// When the change fails (a value the cloud holds that the suite cannot keep), each
    /// key is reconciled on its own, so that one key's failure, reported, stops no other.
    func reconcile(_ keys: [String], heardEdits: Bool = false, accountChanged: Bool = false, recordOnly: Bool = false) {
        guard !keys.isEmpty else { return }
        var uploads: [(key: String, entry: CloudEntry)] = []
        var heldBack: [CloudSyncError] = []
        var applied: [String: Any?] = [:]
        state.withLock { $0.reconciles += 1 }
        do {
            // The engine's own change: what it writes are remote values and records, not
            // edits to stamp.
            try DefaultsSuite.change([defaults], stampingEdits: false) { values in
                let storedClock = values.value(forKey: SyncClock.key)
                var syncClock = SyncClock(stored: storedClock)
                let clockBefore = syncClock.last
                var usage: CloudUsage?
                for key in keys {
                    let current = values.value(forKey: key)
                    let recorded = SyncRecord(stored: values.value(forKey: SyncRecord.key(for: key)))
                    let object = recordOnly ? nil : store.object(forKey: key)
                    var remote = object.flatMap(CloudEntry.init(cloud:))
                    if object != nil && remote == nil {
                        heldBack.append(CloudSyncError(key: key, problem: .invalidRemoteEntry))
                    }
                    if let value = remote?.value, !StoredForm.isStorable(value) {
                        heldBack.append(CloudSyncError(key: key, problem: .unstorableRemoteValue))
                        remote = nil
                    }
                    var decision = SyncDecision.decide(
                        current: current, recorded: recorded, remote: remote, heardEdits: heardEdits, accountChanged: accountChanged,
                        recordOnly: recordOnly, clock: &syncClock, now: clock)
                    switch decision.action {
                    case .keep:
                        break
                    case .takeRemote:
                        let value = remote?.value
                        if !sameStoredValue(current, value) {
                            try values.set(value, forKey: key)
                            applied[key] = .some(value)
                        }
                    case .upload:
                        guard var mine = decision.record else { break }
                        let entry = CloudEntry(stamp: mine.stamp, value: mine.value)
                        if usage == nil { usage = CloudUsage(store.dictionaryRepresentation) }
                        if let problem = usage!.problem(storing: entry.cloudValue, forKey: key, within: limits) {
                            heldBack.append(CloudSyncError(key: key, problem: problem))
                            mine.state = .overQuota
                        } else {
                            usage!.store(entry.cloudValue, forKey: key)
                            uploads.append((key, entry))
                            mine.state = .synced
                        }
                        decision.record = mine
                    }
                    if let next = decision.record, !next.isSame(as: recorded) { try values.set(next.stored, forKey: SyncRecord.key(for: key)) }
                }
                if storedClock == nil || syncClock.last != clockBefore { try values.set(syncClock.stored, forKey: SyncClock.key) }
                // Noted before the change is published, which happens once it is written.
                if !applied.isEmpty { self.state.withLock { $0.written.merge(applied) { _, new in new } } }
            }
        } catch {
            // Nothing was written: nothing comes back.
            state.withLock { state in for key in applied.keys { state.written[key] = nil } }
            guard keys.count == 1 else {
                for key in keys { reconcile([key], heardEdits: heardEdits, accountChanged: accountChanged, recordOnly: recordOnly) }
                return
            }
            DefaultsFailure.report(DefaultsFailure(key: keys[0], operation: .write, error: CloudSyncError(key: keys[0], problem: .suite("\(error)"))))
            return
        }
        for (key, entry) in uploads { store.set(entry.cloudValue, forKey: key) }
        state.withLock { $0.uploadedSinceChange += uploads.map(\.key) }
        for error in heldBack {
            let isRead = error.problem == .unstorableRemoteValue || error.problem == .invalidRemoteEntry
            let operation: DefaultsFailure.Operation = isRead ? .read : .write
            DefaultsFailure.report(DefaultsFailure(key: error.key ?? keys[0], operation: operation, error: error))
        }
    }

    /// Marks `keys`, which the store refused, as over quota and reports each once.
    func holdBack(_ keys: [String]) {
        var heldBack: [String] = []
        do {
            try DefaultsSuite.change([defaults], stampingEdits: false) { values in
                for key in keys {
                    guard var record = SyncRecord(stored: values.value(forKey: SyncRecord.key(for: key))),
                        record.state == .synced || record.state == .pending
                    else { continue }
                    record.state = .overQuota
                    try values.set(record.stored, forKey: SyncRecord.key(for: key))
                    heldBack.append(key)
                }
            }
        } catch {
            return
        }
        for key in heldBack {
            DefaultsFailure.report(DefaultsFailure(key: key, operation: .write, error: CloudSyncError(key: key, problem: .quotaViolation)))
        }
    }

    /// Hears the suite's changes of the synced keys, for the engine.
    final class FeedSubscriber: ChangeSubscriber, @unchecked Sendable {
        // Unchecked: `engine` is a weak reference set once.
        private weak var engine: CloudSync?

        init(_ engine: CloudSync) {
            self.engine = engine
        }

        func begin(key _: String, stored _: Any?) {}
        func start() {}
        func receive(_ change: KeyChange) {
            guard let engine, !engine.isOwnWrite(change) else { return }
            engine.enqueue(.local([change.key]))
        }
    }

    /// Whether `change` is the engine's own write of a remote value coming back through
    /// the suite's feed, which the feed hands over in the order the suite changed: the
    /// first change of the key after that write. Any other change of the key ends the wait.
    private func isOwnWrite(_ change: KeyChange) -> Bool {
        state.withLock { state in
            guard let written = state.written.removeValue(forKey: change.key) else { return false }
            return sameStoredValue(written, change.stored)
        }
    }

    /// How many reconciling changes of the suite the engine made, for the tests.
    var reconcileCount: Int { state.withLock { $0.reconciles } }
}

/// What the store holds, by key, in bytes as the limits count them; taken once per
/// reconcile and kept up to date with its uploads.
private struct CloudUsage {
    private var sizes: [String: Int]
    private var total: Int

    init(_ values: [String: Any]) {
        sizes = values.reduce(into: [:]) { $0[$1.key] = CloudStoreLimits.size(of: $1.key, $1.value) }
        total = sizes.values.reduce(0, +)
    }

    func problem(storing value: Any, forKey key: String, within limits: CloudStoreLimits) -> CloudSyncError.Problem? {
        let size = CloudStoreLimits.size(of: key, value)
        if size > limits.valueBytes { return .valueTooLarge(bytes: size, limit: limits.valueBytes) }
        if sizes[key] == nil && sizes.count >= limits.keys { return .tooManyKeys(limit: limits.keys) }
        let newTotal = total - (sizes[key] ?? 0) + size
        if newTotal > limits.totalBytes { return .storeFull(bytes: newTotal, limit: limits.totalBytes) }
        return nil
    }

    mutating func store(_ value: Any, forKey key: String) {
        let size = CloudStoreLimits.size(of: key, value)
        total += size - (sizes[key] ?? 0)
        sizes[key] = size
    }
}
