// What the sync engine keeps, in the cloud and in the suite.
//
// In the cloud, each synced key holds an entry: the value (none for a removal, a
// tombstone) with the stamp of the write that made it. In the suite, next to each synced
// key, a record of where the key stands: the stamp and value last agreed with the cloud
// (or last edited here), and whether it still has to go up. Records sit in the suite so
// that a remote value and its record are written in one change — a process killed
// between them cannot leave one without the other — and they survive a restart, so that
// pending uploads do.

import Foundation

/// When a write was made and by which device: ordered by time, then by device, so that
/// ties resolve the same way on every device.
struct SyncStamp: Comparable, Hashable {
    /// Milliseconds since 1970, or later than every stamp the device had seen when it
    /// wrote: a device whose clock is slow still wins with an edit made after it saw a
    /// newer value.
    var time: Int64
    var device: String

    static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        (lhs.time, lhs.device) < (rhs.time, rhs.device)
    }

    /// The rank of a value that was stored before sync began: below every edit.
    static func adopted(by device: String) -> SyncStamp { SyncStamp(time: 0, device: device) }
}

/// A synced key's entry in the cloud: a value, or a removal, and its stamp.
struct CloudEntry {
    var stamp: SyncStamp
    /// The stored-form tree; `nil` for a removal.
    var value: Any?

    /// The entry's fields in the cloud.
    private enum Field {
        static let format = "DefaultsCoder.sync"
        static let time = "time"
        static let device = "device"
        static let value = "value"
    }

    init(stamp: SyncStamp, value: Any?) {
        self.stamp = stamp
        self.value = value
    }

    /// The entry the cloud holds: one of the package's; Defaults' pair of a timestamp
    /// and a value, stamped with that time; or a value another library put there as it
    /// is (Zephyr's form), taken as an edit older than every other.
    init(cloud: Any) {
        if let fields = cloud as? [String: Any], fields[Field.format] != nil,
            let time = (fields[Field.time] as? NSNumber)?.int64Value, let device = fields[Field.device] as? String
        {
            self.init(stamp: SyncStamp(time: time, device: device), value: fields[Field.value])
        } else if let pair = cloud as? [Any], pair.count == 2, let date = pair[0] as? Date {
            self.init(stamp: SyncStamp(time: SyncClock.milliseconds(date), device: ""), value: pair[1])
        } else {
            self.init(stamp: SyncStamp(time: 0, device: ""), value: cloud)
        }
    }

    /// The entry as the cloud keeps it.
    var cloudValue: [String: Any] {
        var fields: [String: Any] = [
            Field.format: 1, Field.time: NSNumber(value: stamp.time), Field.device: stamp.device,
        ]
        fields[Field.value] = value
        return fields
    }
}

/// Where one synced key stands on this device.
struct SyncRecord {
    enum State: String {
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

    var stamp: SyncStamp
    /// The value agreed with the cloud or edited here; `nil` when the key holds nothing.
    var value: Any?
    var state: State

    /// Whether the value was stored before sync began and never went up: any value the
    /// cloud holds wins over it.
    var isAdoptedOnly: Bool { stamp.time == 0 && state == .pending }

    private enum Field {
        static let time = "time"
        static let device = "device"
        static let state = "state"
        static let value = "value"
    }

    init(stamp: SyncStamp, value: Any?, state: State) {
        self.stamp = stamp
        self.value = value
        self.state = state
    }

    /// The record stored in the suite, or `nil` when there is none (or it is not one).
    init?(stored: Any?) {
        guard let fields = stored as? [String: Any], let time = (fields[Field.time] as? NSNumber)?.int64Value,
            let device = fields[Field.device] as? String,
            let state = (fields[Field.state] as? String).flatMap(State.init(rawValue:))
        else { return nil }
        self.init(stamp: SyncStamp(time: time, device: device), value: fields[Field.value], state: state)
    }

    var stored: [String: Any] {
        var fields: [String: Any] = [
            Field.time: NSNumber(value: stamp.time), Field.device: stamp.device, Field.state: state.rawValue,
        ]
        fields[Field.value] = value
        return fields
    }

    /// Whether the two records say the same.
    func isSame(as other: SyncRecord?) -> Bool {
        guard let other else { return false }
        return stamp == other.stamp && state == other.state && sameStoredValue(value, other.value)
    }

    /// The suite key of the record of `key`.
    static func key(for key: String) -> String { DefaultsSuite.syncRecordKey + "." + key }
}

/// The device's own record in the suite: who it is, and the latest time it has seen.
struct SyncClock {
    var device: String
    /// The latest stamp time seen, in a write of this device or from the cloud.
    var latest: Int64

    static let key = DefaultsSuite.syncRecordKey

    init(stored: Any?) {
        let fields = stored as? [String: Any]
        device = fields?["device"] as? String ?? UUID().uuidString
        latest = (fields?["latest"] as? NSNumber)?.int64Value ?? 0
    }

    var stored: [String: Any] { ["device": device, "latest": NSNumber(value: latest)] }

    /// A stamp for an edit made now: later than every stamp seen, so that it wins over
    /// every value this device has seen whatever its clock says.
    mutating func stamp(now: Date) -> SyncStamp {
        latest = max(Self.milliseconds(now), latest + 1)
        return SyncStamp(time: latest, device: device)
    }

    /// `date` in whole milliseconds since 1970; 0 for a date that has none.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
    }

    mutating func saw(_ stamp: SyncStamp) {
        latest = max(latest, stamp.time)
    }
}
