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

    /// The times a stamp may hold: from 1970 to the end of year 9999. Stamps come from
    /// the cloud and the suite, where any process or device may have put anything; one
    /// past this range is refused, so that no outside value can move a device's clock to
    /// where its next edit's stamp would overflow.
    static let times: ClosedRange<Int64> = 0...253_402_300_799_999
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
    /// is (Zephyr's form), taken as an edit older than every other. `nil` for an entry of
    /// the package's or a Defaults pair whose stamp is malformed or out of range
    /// (`SyncStamp.times`).
    init?(cloud: Any) {
        if let fields = cloud as? [String: Any], fields[Field.format] != nil {
            guard let time = Self.time(fields[Field.time]), let device = fields[Field.device] as? String else { return nil }
            self.init(stamp: SyncStamp(time: time, device: device), value: fields[Field.value])
        } else if let pair = cloud as? [Any], pair.count == 2, let date = pair[0] as? Date {
            guard let time = SyncClock.exactMilliseconds(date) else { return nil }
            self.init(stamp: SyncStamp(time: time, device: ""), value: pair[1])
        } else {
            self.init(stamp: SyncStamp(time: 0, device: ""), value: cloud)
        }
    }

    /// A stamp's time as stored: an integer within `SyncStamp.times`, never a `Bool`.
    static func time(_ stored: Any?) -> Int64? {
        guard let number = stored as? NSNumber, case .number(let kind)? = TreeValue(number) else { return nil }
        switch kind {
        case .signed(let value, _): return SyncStamp.times.contains(value) ? value : nil
        case .unsigned(let value, _): return Int64(exactly: value).flatMap { SyncStamp.times.contains($0) ? $0 : nil }
        default: return nil
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

    /// The record stored in the suite, or `nil` when there is none (or it is not one: a
    /// stamp out of range is no record).
    init?(stored: Any?) {
        guard let fields = stored as? [String: Any], let time = CloudEntry.time(fields[Field.time]),
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

    /// The record stored in the suite; a `latest` that is malformed or out of range
    /// (`SyncStamp.times`) counts as none seen.
    init(stored: Any?) {
        let fields = stored as? [String: Any]
        device = fields?["device"] as? String ?? UUID().uuidString
        latest = CloudEntry.time(fields?["latest"]) ?? 0
    }

    var stored: [String: Any] { ["device": device, "latest": NSNumber(value: latest)] }

    /// A stamp for an edit made now: later than every stamp seen, so that it wins over
    /// every value this device has seen whatever its clock says.
    mutating func stamp(now: Date) -> SyncStamp {
        // `latest` is within `SyncStamp.times`, far below overflow.
        latest = min(max(Self.milliseconds(now), latest + 1), SyncStamp.times.upperBound)
        return SyncStamp(time: latest, device: device)
    }

    /// `date` in whole milliseconds since 1970, within `SyncStamp.times` (a clock set
    /// before 1970 stamps at 0, one past 9999 at the end).
    static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite else { return 0 }
        return Int64(exactly: min(max(milliseconds, 0), Double(SyncStamp.times.upperBound))) ?? 0
    }

    /// `date` in whole milliseconds since 1970 when that is within `SyncStamp.times`.
    static func exactMilliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite, let time = Int64(exactly: milliseconds), SyncStamp.times.contains(time) else { return nil }
        return time
    }

    /// Takes in a stamp seen: in the cloud or in a record, so within `SyncStamp.times`.
    mutating func saw(_ stamp: SyncStamp) {
        latest = max(latest, min(stamp.time, SyncStamp.times.upperBound))
    }
}
