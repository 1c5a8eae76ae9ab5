// Edits of synced keys, stamped when they are written.
//
// A key that has been synced has a record in its suite (`DefaultsCoder.sync.KEY`) and the
// suite a clock (`DefaultsCoder.sync`); the sync engine (Sync/) keeps them. A package
// write of such a key records the edit in the same change — pending, stamped with the
// time it was made — in whichever process makes it, whether or not an engine runs
// there: a widget's edit, an edit while the engine is stopped, or while the key is out of
// sync, goes up later as an edit of its own time. A plain `set(_:forKey:)` leaves no
// record; an engine stamps it when it first sees it.

import Foundation
import KeyValueCoders

/// When a write was made and by which device: ordered by time, then by device, then by
/// the device's count of edits within that millisecond, so that ties resolve the same way
/// on every device.
package struct SyncStamp: Comparable, Hashable {
    /// Milliseconds since 1970, or the time of a later stamp the device had seen when it
    /// wrote: a device whose clock is slow still wins with an edit made after it saw a
    /// newer value.
    var time: Int64
    var device: String
    /// The device's edits within one millisecond, counted from 0: a burst of writes
    /// stays in order without running the time ahead of the clock.
    var sequence: Int64 = 0

    package static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        (lhs.time, lhs.device, lhs.sequence) < (rhs.time, rhs.device, rhs.sequence)
    }

    /// The rank of a value that was stored before sync began: below every edit.
    package static func adopted(by device: String) -> SyncStamp { SyncStamp(time: 0, device: device) }

    /// The times a stamp may hold: from 1970 to the end of year 9999. Stamps come from
    /// the cloud and the suite, where any process or device may have put anything; one
    /// past this range is refused, so that no outside value can move a device's clock to
    /// where its next edit's stamp would overflow.
    static let times: ClosedRange<Int64> = 0...253_402_300_799_999

    /// The counts of edits within one millisecond a stamp may hold, for the same reason.
    static let sequences: ClosedRange<Int64> = 0...(1 << 40)

    /// A stamp's time or sequence as stored: an integer within `range`, never a `Bool`.
    static func number(_ stored: Any?, within range: ClosedRange<Int64>) -> Int64? {
        guard let number = stored as? NSNumber, case .number(let kind)? = TreeValue(number) else { return nil }
        switch kind {
        case .signed(let value, _): return range.contains(value) ? value : nil
        case .unsigned(let value, _): return Int64(exactly: value).flatMap { range.contains($0) ? $0 : nil }
        default: return nil
        }
    }

    /// The stamp stored in `fields` (`time`, `device`, and `sequence`, which an older
    /// stamp lacks); `nil` when one is malformed or out of range.
    package init?(fields: [String: Any]) {
        guard let time = Self.number(fields["time"], within: Self.times), let device = fields["device"] as? String else { return nil }
        var sequence: Int64 = 0
        if let stored = fields["sequence"] {
            guard let valid = Self.number(stored, within: Self.sequences) else { return nil }
            sequence = valid
        }
        self.init(time: time, device: device, sequence: sequence)
    }

    package init(time: Int64, device: String, sequence: Int64 = 0) {
        self.time = time
        self.device = device
        self.sequence = sequence
    }

    /// The stamp's fields as stored (`sequence` only when it is not 0).
    package var fields: [String: Any] {
        var fields: [String: Any] = ["time": NSNumber(value: time), "device": device]
        if sequence != 0 { fields["sequence"] = NSNumber(value: sequence) }
        return fields
    }
}

/// Where one synced key stands on this device.
package struct SyncRecord {
    package enum State: String {
        /// Edited here; to be uploaded.
        case pending
        /// Uploaded, or taken from the cloud: the cloud should hold this stamp. When it
        /// holds an older one, the upload was discarded and is made again.
        case synced
        /// Kept on this device only: it was here before an account switch.
        case localOnly
        /// Over the store's limits: kept here, reported once, not retried until edited.
        case overQuota
    }

    package var stamp: SyncStamp
    /// The value agreed with the cloud or edited here; `nil` when the key holds nothing.
    package var value: Any?
    package var state: State

    /// Whether the value was stored before sync began and never went up: any value the
    /// cloud holds wins over it.
    package var isAdoptedOnly: Bool { stamp.time == 0 && state == .pending }

    package init(stamp: SyncStamp, value: Any?, state: State) {
        self.stamp = stamp
        self.value = value
        self.state = state
    }

    /// The record stored in the suite, or `nil` when there is none (or it is not one: a
    /// stamp out of range is no record).
    package init?(stored: Any?) {
        guard let fields = stored as? [String: Any], let stamp = SyncStamp(fields: fields),
            let state = (fields["state"] as? String).flatMap(State.init(rawValue:))
        else { return nil }
        self.init(stamp: stamp, value: fields["value"], state: state)
    }

    package var stored: [String: Any] {
        var fields = stamp.fields
        fields["state"] = state.rawValue
        fields["value"] = value
        return fields
    }

    /// Whether the two records say the same.
    package func isSame(as other: SyncRecord?) -> Bool {
        guard let other else { return false }
        return stamp == other.stamp && state == other.state && sameStoredValue(value, other.value)
    }

    /// The suite key of the record of `key`.
    package static func key(for key: String) -> String { DefaultsSuite.syncRecordKey + "." + key }
}

/// The device's own record in the suite: who it is, and the latest stamp it has seen.
package struct SyncClock {
    package var device: String
    /// The latest stamp seen, in a write of this device or from the cloud.
    package var last: SyncStamp

    /// The latest stamp time seen.
    var latest: Int64 { last.time }

    package static let key = DefaultsSuite.syncRecordKey

    /// The record stored in the suite; a `latest` that is malformed or out of range
    /// (`SyncStamp.times`) counts as none seen. A clock stored without the latest stamp's
    /// device and sequence takes it for another device's: the next edit comes after it.
    package init(stored: Any?) {
        let fields = stored as? [String: Any]
        device = fields?["device"] as? String ?? UUID().uuidString
        let time = SyncStamp.number(fields?["latest"], within: SyncStamp.times) ?? 0
        let sequence = SyncStamp.number(fields?["sequence"], within: SyncStamp.sequences) ?? 0
        last = SyncStamp(time: time, device: fields?["latestDevice"] as? String ?? "", sequence: sequence)
    }

    package var stored: [String: Any] {
        var fields: [String: Any] = ["device": device, "latest": NSNumber(value: last.time), "latestDevice": last.device]
        if last.sequence != 0 { fields["sequence"] = NSNumber(value: last.sequence) }
        return fields
    }

    /// A stamp for an edit made `now`: after every stamp seen, so that it wins over every
    /// value this device has seen whatever its clock says; never ahead of the clock by
    /// more than a millisecond unless a stamp seen was (a burst of edits within one
    /// millisecond is told apart by `sequence`).
    package mutating func stamp(now: Date) -> SyncStamp {
        let time = Self.milliseconds(now)
        let next: SyncStamp
        if time > last.time {
            next = SyncStamp(time: time, device: device)
        } else if last.device == device, last.sequence < SyncStamp.sequences.upperBound {
            next = SyncStamp(time: last.time, device: device, sequence: last.sequence + 1)
        } else if last.device < device {
            next = SyncStamp(time: last.time, device: device)
        } else {
            // `last.time` is within `SyncStamp.times`: no overflow, and the bound holds.
            next = SyncStamp(time: min(last.time + 1, SyncStamp.times.upperBound), device: device)
        }
        last = max(last, next)
        return next
    }

    /// `date` in whole milliseconds since 1970, within `SyncStamp.times` (a clock set
    /// before 1970 stamps at 0, one past 9999 at the end).
    static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite else { return 0 }
        return Int64(exactly: min(max(milliseconds, 0), Double(SyncStamp.times.upperBound))) ?? 0
    }

    /// `date` in whole milliseconds since 1970 when that is within `SyncStamp.times`.
    package static func exactMilliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite, let time = Int64(exactly: milliseconds), SyncStamp.times.contains(time) else { return nil }
        return time
    }

    /// Takes in a stamp seen in the cloud or in a record; one out of range (which input
    /// validation never lets through) is taken at the range's end.
    package mutating func saw(_ stamp: SyncStamp) {
        var seen = stamp
        seen.time = min(max(seen.time, SyncStamp.times.lowerBound), SyncStamp.times.upperBound)
        seen.sequence = min(max(seen.sequence, SyncStamp.sequences.lowerBound), SyncStamp.sequences.upperBound)
        last = max(last, seen)
    }
}

extension DefaultsSuite {
    /// The clock edits of this suite's synced keys are stamped with: `Date()`, unless an
    /// engine over the suite was made with a clock of its own (a test's simulated
    /// device), which stands for the device's clock from then on.
    package var editClock: @Sendable () -> Date {
        get { editClockStorage.withLock { $0 } }
        set { editClockStorage.withLock { $0 = newValue } }
    }
}

extension DefaultsSuite.Values {
    /// Records each edit this change makes of a key that has a sync record, in the same
    /// change: pending, stamped now by the suite's clock. Changes the sync engine makes
    /// itself are not edits, and are not stamped.
    mutating func stampEdits() {
        for index in 0..<count {
            let edited = changedKeys(in: index).filter { !DefaultsSuite.isSyncRecord($0) }
            // A suite that never synced has no clock: one lookup, and nothing else (on the
            // preferences backend, where a write reads no other value, none is read).
            guard !edited.isEmpty, mayHoldValue(forKey: SyncClock.key, in: index), let storedClock = value(forKey: SyncClock.key, in: index)
            else { continue }
            var clock = SyncClock(stored: storedClock)
            let before = clock.last
            let now = suite(at: index).editClock()
            for key in edited {
                guard let recorded = SyncRecord(stored: value(forKey: SyncRecord.key(for: key), in: index)) else { continue }
                let current = value(forKey: key, in: index)
                if sameStoredValue(current, recorded.value) { continue }
                let record = SyncRecord(stamp: clock.stamp(now: now), value: current, state: .pending)
                // Records and clocks are property-list dictionaries: storable.
                try? set(record.stored, forKey: SyncRecord.key(for: key), in: index)
            }
            if clock.last != before { try? set(clock.stored, forKey: SyncClock.key, in: index) }
        }
    }
}
