// What the sync engine keeps in the cloud: for each synced key an entry, the value (none
// for a removal, a tombstone) with the stamp of the write that made it. What it keeps in
// the suite — a record next to each synced key, and the device's clock — is in
// Suite/EditStamps.swift, since every package write of a synced key updates it. Records
// sit in the suite so that a remote value and its record are written in one change — a
// process killed between them cannot leave one without the other — and they survive a
// restart, so that pending uploads do.

import DefaultsCoder
import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// A synced key's entry in the cloud: a value, or a removal, and its stamp.
struct CloudEntry {
    var stamp: SyncStamp
    /// The stored-form tree; `nil` for a removal.
    var value: Any?

    /// The entry's fields in the cloud, beside its stamp's (`SyncStamp.fields`).
    private enum Field {
        static let format = "DefaultsCoder.sync"
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
            guard let stamp = SyncStamp(fields: fields) else { return nil }
            self.init(stamp: stamp, value: fields[Field.value])
        } else if let pair = cloud as? [Any], pair.count == 2, let date = pair[0] as? Date {
            guard let time = SyncClock.exactMilliseconds(date) else { return nil }
            self.init(stamp: SyncStamp(time: time, device: ""), value: pair[1])
        } else {
            self.init(stamp: SyncStamp(time: 0, device: ""), value: cloud)
        }
    }

    /// The entry as the cloud keeps it.
    var cloudValue: [String: Any] {
        var fields = stamp.fields
        fields[Field.format] = 1
        fields[Field.value] = value
        return fields
    }

    /// Whether this entry wins over a value of `stamp`: a later stamp, or, at the same
    /// stamp (two Defaults pairs of one millisecond), the greater value
    /// (`StoredOrder`), so that every device keeps the same one of two values.
    func outranks(_ stamp: SyncStamp, value other: Any?) -> Bool {
        if self.stamp != stamp { return self.stamp > stamp }
        return StoredOrder.precedes(other, value)
    }
}

/// A total order of stored values, the same on every device: for two values with one
/// stamp. By kind, then by content; dictionaries by their sorted keys and values.
enum StoredOrder {
    /// Whether `lhs` comes before `rhs`; `nil` (a removal) comes first.
    static func precedes(_ lhs: Any?, _ rhs: Any?) -> Bool {
        key(lhs).lexicographicallyPrecedes(key(rhs))
    }

    /// The value as a sequence of bytes that sorts as the order says.
    private static func key(_ value: Any?) -> [UInt8] {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return bytes
    }

    private static func append(_ value: Any?, to bytes: inout [UInt8]) {
        func text(_ string: String) {
            // Escaped so that a string's end sorts before any of its continuations.
            for byte in string.utf8 { bytes += byte <= 1 ? [1, byte] : [byte] }
            bytes.append(0)
        }
        // Classified as every walk of a tree is (`TreeValue`): a number is one whether it
        // came from the cloud or the suite, bridged or not.
        guard let value, let tree = TreeValue(value) else { return bytes.append(0) }
        switch tree {
        case .number(let number):
            bytes.append(2)
            // By value, not by the type it was bridged as: `Int` here is `Int64` there.
            switch number {
            case .bool(let flag): text(flag ? "b1" : "b0")
            case .signed(let value, _): text("i\(value)")
            case .unsigned(let value, _): text("u\(value)")
            case .double(let value): text("d\(value.bitPattern)")
            case .float(let value): text("d\(Double(value).bitPattern)")
            case .decimal(let value): text("m\(value)")
            case .wide(let digits, _), .text(let digits): text("w" + digits)
            }
        case .date(let date):
            bytes.append(3)
            text(String(date.timeIntervalSinceReferenceDate.bitPattern, radix: 16))
        case .string(let string):
            bytes.append(4)
            text(string)
        case .data(let data):
            bytes.append(5)
            text(data.base64EncodedString())
        case .array(let array):
            bytes.append(6)
            for element in array { append(element, to: &bytes) }
            bytes.append(0)
        case .dictionary(let dictionary):
            bytes.append(7)
            for key in dictionary.keys.sorted() {
                text(key)
                append(dictionary[key], to: &bytes)
            }
            bytes.append(0)
        }
    }
}
