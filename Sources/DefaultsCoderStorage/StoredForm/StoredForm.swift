// The form values take in UserDefaults: the one place that knows what a property list
// on the running platform stores, what it reads back unchanged, and how the forms it
// has no type for are written. The coders ask it through `EncodingForm` and
// `DecodingForm`, and know nothing else of UserDefaults.

import Foundation
import KeyValueCoders

/// The rules of the stored form.
///
/// A property list has no `nil`, no `URL`, no `Decimal` and no integer wider than 64
/// bits, and Foundation's XML reader on Linux drops a string's leading U+FEFF and
/// refuses files nested deeper than 512 containers. So:
///
/// | value | stored as |
/// |---|---|
/// | `nil` in a collection, `Optional.none` | `"\u{FDD0}none"` (an `Optional` of one), `"\u{FDD0}null"` (a non-optional value that encoded `nil`), and `"\u{FDD0}some(…)"` around either for each further `Optional` level |
/// | `Decimal` | `"\u{FDD0}decimal:"` followed by its exact text |
/// | `Int128`, `UInt128` outside 64 bits | `"\u{FDD0}integer:"` followed by its exact digits |
/// | a string that begins with U+FDD0 or U+FEFF | one more U+FDD0 in front |
/// | `URL` | its absolute string; a relative URL, or one with a base, in the keyed form of `URL`'s `Codable` |
/// | `Int8` … `UInt64`, `Int128` and `UInt128` that fit, `Float` | `Int` (`UInt64` above `Int64.max`), `Double` |
/// | `Date` with a fraction of a second, or beyond years -9999…9999, on Linux | its `timeIntervalSinceReferenceDate` |
///
/// U+FDD0 is a Unicode noncharacter, set aside for a program's internal use: Swift does
/// not even accept it in a string literal. Strings that begin with it are the only
/// reserved form; every one the package writes for a string is escaped, so only a value
/// stored by other means that begins with it can read differently.
package enum StoredForm {
    /// The first scalar of every reserved form.
    static let marker = Unicode.Scalar(0xFDD0)!
    static let byteOrderMark: Unicode.Scalar = "\u{FEFF}"
    /// The UTF-8 lead byte that both U+FDD0 and U+FEFF begin with.
    private static let leadByte: UInt8 = 0xEF

    /// Whether `string` may begin with U+FDD0 or U+FEFF, and so need escaping when
    /// written or reading when read: one byte compare, so that other strings pay nothing.
    @inline(__always)
    static func mayNeedEscaping(_ string: String) -> Bool {
        string.utf8.first == leadByte
    }

    static let prefix = String(marker)
    static let none = prefix + "none"
    static let null = prefix + "null"
    static let decimalPrefix = prefix + "decimal:"
    static let integerPrefix = prefix + "integer:"
    static let datePrefix = prefix + "date:"

    /// Containers a stored value may sit in: what every door of Foundation's reads back
    /// on a 512 KiB thread (Apple platforms' secondary threads), with room to spare.
    /// Foundation on Linux copies a value out of its cache recursively, about 1.8 KiB of
    /// stack a level: `object(forKey:)`, `dictionaryRepresentation()` and
    /// `persistentDomain(forName:)` of a value nested 290 dictionaries deep crash a
    /// 512 KiB thread (measured, Swift 6.3.1, in child processes; arrays reach 360). So
    /// 200 levels, which leave a third of such a thread to its caller. (The file itself
    /// could hold 511, one fewer than `NestingGuard.maximumContainers`.)
    static let containerDepthLimit = 200

    /// Whether `tree`, which came from outside the package's encoders (another device,
    /// through the cloud), is a stored-form tree a suite can keep as it is: strings,
    /// numbers, `Bool`s, dates, data, and arrays and dictionaries of them with keys the
    /// suite accepts, nested no deeper than `containerDepthLimit`. Nothing is converted:
    /// its reserved strings are the other device's, and stay as they are. On Linux a date
    /// must be one a suite's file keeps to the bit (`wholeSecondDates`): another device's
    /// date with a fraction would be refused by the file's writer.
    package static func isStorable(_ tree: Any, depth: Int = 0) -> Bool {
        switch TreeValue(tree) {
        case .string?, .data?: return true
        case .date(let date)?:
            #if canImport(Darwin)
            return true
            #else
            let seconds = date.timeIntervalSinceReferenceDate
            return seconds.rounded(.down) == seconds && StoredEncodingForm.wholeSecondDates.contains(seconds)
            #endif
        case .number(let number)?:
            switch number {
            case .bool, .signed, .unsigned, .double, .float: return true
            case .decimal, .wide, .text: return false
            }
        case .dictionary(let dictionary)?:
            return depth < containerDepthLimit
                && dictionary.allSatisfy { StoredEncodingForm.shared.problem(withKey: $0.key) == nil && isStorable($0.value, depth: depth + 1) }
        case .array(let array)?:
            return depth < containerDepthLimit && array.allSatisfy { isStorable($0, depth: depth + 1) }
        case nil: return false
        }
    }

    /// A string as it is stored.
    @inline(__always)
    static func escape(_ string: String) -> String {
        guard mayNeedEscaping(string), let first = string.unicodeScalars.first,
            first == marker || first == byteOrderMark
        else { return string }
        return prefix + string
    }

    /// What a stored string stands for.
    enum Reading {
        case string(String)
        case optional(NilMarker)
        case decimal(Decimal)
        /// An integer wider than 64 bits, as its exact text.
        case integer(String)
        /// A date that a `<date>` cannot keep, written where a number would read back
        /// as one (`StoredEncodingForm.keptDate`).
        case date(Date)
    }

    /// A `nil`: `wrapped` levels of `Optional.some` around `Optional.none`, or around a
    /// `nil` that a non-optional value wrote.
    struct NilMarker: Equatable {
        var wrapped: Int
        var isExplicitNull: Bool

        var text: String {
            String(repeating: "some(", count: wrapped) + (isExplicitNull ? "null" : "none") + String(repeating: ")", count: wrapped)
        }

        /// The marker with one `Optional.some` level fewer, or `nil` when it has none.
        var unwrapped: NilMarker? {
            wrapped > 0 ? NilMarker(wrapped: wrapped - 1, isExplicitNull: isExplicitNull) : nil
        }

        init(wrapped: Int, isExplicitNull: Bool) {
            self.wrapped = wrapped
            self.isExplicitNull = isExplicitNull
        }

        /// Parses the text after the prefix.
        init?<S: StringProtocol>(parsing body: S) {
            var rest = Substring(body)
            var levels = 0
            while rest.hasPrefix("some(") {
                rest = rest.dropFirst(5)
                levels += 1
            }
            guard rest.count == 4 + levels, rest.hasSuffix(String(repeating: ")", count: levels)) else { return nil }
            switch rest.prefix(4) {
            case "none": self.init(wrapped: levels, isExplicitNull: false)
            case "null": self.init(wrapped: levels, isExplicitNull: true)
            default: return nil
            }
        }
    }

    /// Reads a stored string. One that begins with U+FDD0 but is none of the forms is
    /// taken as it is: something other than this package stored it.
    @inline(__always)
    static func read(_ string: String) -> Reading {
        guard mayNeedEscaping(string) else { return .string(string) }
        return readReserved(string)
    }

    private static func readReserved(_ string: String) -> Reading {
        let scalars = string.unicodeScalars
        guard scalars.first == marker else { return .string(string) }
        let body = Substring(scalars.dropFirst())
        if let second = body.unicodeScalars.first, second == marker || second == byteOrderMark {
            return .string(String(body))
        }
        if let null = NilMarker(parsing: body) { return .optional(null) }
        if body.hasPrefix("decimal:"), let decimal = Decimal(strictString: String(body.dropFirst(8))) {
            return .decimal(decimal)
        }
        if body.hasPrefix("date:"), let seconds = Double(String(body.dropFirst(5))), !seconds.isNaN {
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        }
        if body.hasPrefix("integer:") {
            let digits = body.dropFirst(8)
            let magnitude = digits.hasPrefix("-") ? digits.dropFirst() : digits
            if !magnitude.isEmpty, magnitude.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                return .integer(String(digits))
            }
        }
        return .string(string)
    }

    /// The nil marker `value` is, or `nil` when it is not one.
    static func nilMarker(_ value: Any) -> NilMarker? {
        guard let string = cast(value, to: String.self), case .optional(let marker) = read(string) else { return nil }
        return marker
    }

    static func text(of marker: NilMarker) -> String { prefix + marker.text }
}

// MARK: - Entry points

extension KeyValueEncoder {
    /// The stored form of `value` with this encoder's strategies (but its nil strategy,
    /// which the stored form replaces), or `nil` to remove the key: `value` was
    /// `Optional.none` at the top. From here down a removal is `nil` and nothing else
    /// (`DefaultsSuite.Values.set(nil, forKey:)`).
    package func encodeForUserDefaults<T: Encodable>(_ value: T) throws -> Any? {
        guard let tree = try encode(value, form: StoredEncodingForm.shared) else {
            // A non-optional value that encoded nil at the top: kept, not removed.
            return StoredForm.null
        }
        if let string = tree as? String, string == StoredForm.none { return nil }
        return tree
    }
}

extension KeyValueDecoder {
    /// Whether the stored object is itself the value: exactly a `T` that the stored form
    /// keeps as it is and no strategy reads otherwise, an `Int`, `Double` or `Bool`, or a
    /// `String` that is no reserved form. A read of one costs a metatype compare, not a
    /// decoder (nor a generic optional of `T`).
    @inline(__always)
    private static func isStoredAsItIs<T>(_ type: T.Type, _ object: Any) -> Bool {
        guard Swift.type(of: object) == T.self else { return false }
        if T.self == Int.self || T.self == Double.self || T.self == Bool.self { return true }
        if T.self == String.self, let string = object as? String { return !StoredForm.mayNeedEscaping(string) }
        return false
    }

    /// Decodes a value read with `UserDefaults.object(forKey:)`. A string at the top that
    /// is not a `T` is read again as the `Bool` or number it spells, as launch arguments
    /// and `defaults write` arrive: strictly (`LaunchArgument`), for every type that
    /// decodes from a `Bool` or a number — `Int`, `Double`, `CGFloat`, `Int128`,
    /// `Float16`, an `Int`-backed enum alike.
    package func decodeFromUserDefaults<T: Decodable>(_ type: T.Type, from object: Any) throws -> T {
        if Self.isStoredAsItIs(type, object) { return object as! T }
        do {
            return try decode(type, from: object, form: StoredDecodingForm())
        } catch let error as DecodingError {
            // A Decimal is never read from a string: only its own marked form is one.
            guard Self.isTopLevelMismatch(error), type != Decimal.self, type != Decimal?.self,
                let string = flattenOptional(object) as? String
            else { throw error }
            var closer: (any Error)?
            for reading in LaunchArgument.readings(of: string) {
                do {
                    return try decode(type, from: reading, form: StoredDecodingForm())
                } catch let other as DecodingError where Self.isTopLevelMismatch(other) && !(reading is NumberText && Self.isExactness(other)) {
                    continue
                } catch {
                    // The string is a number of the wrong size or exactness: say so.
                    closer = closer ?? error
                }
            }
            throw closer ?? error
        }
    }

    /// A number that was read but does not fit the type (`Decimal at SELF, cannot be
    /// exactly represented by Int`), rather than a value of another kind.
    private static func isExactness(_ error: DecodingError) -> Bool {
        guard case .typeMismatch(_, let context) = error else { return false }
        return context.underlyingError as? CodingProblem == .inexactNumber
    }

    private static func isTopLevelMismatch(_ error: DecodingError) -> Bool {
        guard case .typeMismatch(_, let context) = error else { return false }
        return context.codingPath.isEmpty
    }
}

/// An integer as a property list keeps it: an `Int` where it fits the platform's `Int`
/// (`platform`), else an `Int64` or a `UInt64`; `nil` beyond 64 bits. Never `Int(_:)`,
/// which traps on a 32-bit `Int` (watchOS on arm64_32) for a value a 64-bit number holds.
func nativeInteger<T: FixedWidthInteger, Platform: FixedWidthInteger & SignedInteger>(
    _ value: T, platform: Platform.Type = Int.self
) -> Any? {
    if let int = Platform(exactly: value) { return int }
    if let int = Int64(exactly: value) { return int }
    if let uint = UInt64(exactly: value) { return uint }
    return nil
}

/// Whether two values of a key are the same: both absent, or equal as property lists
/// (`plistEqual`).
package func sameStoredValue(_ lhs: Any?, _ rhs: Any?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): return true
    case (let lhs?, let rhs?): return plistEqual(lhs, rhs)
    default: return false
    }
}

/// The `T` an `Any` holds, where `T` is its dynamic type and fits the existential's
/// inline buffer (three words: `Int`, `Bool`, `Double`, `String`), read from that buffer
/// rather than cast: a cast asks the runtime, which costs more than the comparison.
@inline(__always)
private func inline<T>(_ value: Any, as _: T.Type) -> T {
    assert(type(of: value) == T.self && MemoryLayout<T>.size <= 3 * MemoryLayout<Int>.size)
    return withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: T.self) }
}

/// Deep equality of two property lists as `UserDefaults` returns them.
package func plistEqual(_ lhs: Any, _ rhs: Any) -> Bool {
    // Two leaves of one common type compare as that type, as `AnyHashable` compares them:
    // a metatype compare each, where the casts below cost the runtime's look-ups (a
    // tracked read compares the value it found with the one last published).
    let kind = type(of: lhs)
    if kind == type(of: rhs) {
        if kind == Int.self { return inline(lhs, as: Int.self) == inline(rhs, as: Int.self) }
        if kind == Bool.self { return inline(lhs, as: Bool.self) == inline(rhs, as: Bool.self) }
        if kind == Double.self { return inline(lhs, as: Double.self) == inline(rhs, as: Double.self) }
        if kind == String.self { return inline(lhs, as: String.self) == inline(rhs, as: String.self) }
    }
    switch (TreeValue(lhs), TreeValue(rhs)) {
    case (.dictionary(let lhs)?, .dictionary(let rhs)?):
        return lhs.count == rhs.count && lhs.allSatisfy { key, value in rhs[key].map { plistEqual(value, $0) } ?? false }
    case (.array(let lhs)?, .array(let rhs)?):
        return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy(plistEqual)
    case (.dictionary?, _), (.array?, _), (_, .dictionary?), (_, .array?):
        return false
    default:
        break
    }
    // Leaves compare as Foundation's objects do (`1` and `1.0` alike, `-0.0` and `0.0`).
    guard let lhs = flattenOptional(lhs), let rhs = flattenOptional(rhs) else {
        return flattenOptional(lhs) == nil && flattenOptional(rhs) == nil
    }
    guard let lhs = lhs as? AnyHashable, let rhs = rhs as? AnyHashable else { return false }
    return lhs == rhs
}
