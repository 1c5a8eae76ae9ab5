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

// MARK: - Encoding

/// Writes values in the stored form.
final class StoredEncodingForm: EncodingForm, Sendable {
    /// The one stored form: it holds nothing.
    static let shared = StoredEncodingForm()

    var null: Any? { StoredForm.null }
    var wrapsOptionals: Bool { true }
    var checksKeys: Bool { true }
    var none: Any { StoredForm.none }
    var containerDepthLimit: Int { StoredForm.containerDepthLimit }
    var depthProblem: String {
        "Cannot store containers nested deeper than \(StoredForm.containerDepthLimit) levels in UserDefaults (its property list file would be unreadable)"
    }

    func wrapSome(_ wrapped: Any?) -> Any {
        guard let wrapped else { return StoredForm.text(of: .init(wrapped: 1, isExplicitNull: true)) }
        guard var marker = StoredForm.nilMarker(wrapped) else { return wrapped }
        marker.wrapped += 1
        return StoredForm.text(of: marker)
    }

    @inline(__always) func string(_ value: String) -> Any { StoredForm.escape(value) }

    func strings(_ value: [String]) -> Any {
        guard value.contains(where: StoredForm.mayNeedEscaping) else { return value }
        return value.map(StoredForm.escape)
    }

    /// Whole when no key needs refusing and no string escaping.
    func primitiveDictionary(_ value: Any, strings: [String: String]?) -> Any? {
        guard let keys = (value as? [String: Any])?.keys else { return nil }
        if keys.contains(where: { problem(withKey: $0) != nil }) { return nil }
        guard let strings else { return value }
        guard strings.values.contains(where: StoredForm.mayNeedEscaping) else { return value }
        return strings.mapValues(StoredForm.escape)
    }

    /// An integer as `Int`, or `UInt64` above `Int64.max`; wider ones (`Int128`,
    /// `UInt128`) as their exact text, marked as an integer.
    func integer<T: FixedWidthInteger>(_ value: T) -> Any {
        nativeInteger(value) ?? StoredForm.integerPrefix + String(value)
    }

    func float(_ value: Float) -> Any { Double(value) }

    /// On Apple platforms preferences are binary plists, which keep a `Date` to the bit.
    /// Foundation on Linux writes XML, whose `<date>` keeps whole seconds only; there a
    /// date with a fraction is written as its `timeIntervalSinceReferenceDate` (what
    /// `Date`'s own `Codable` writes), which the `.date` decoding strategy reads.
    func date(_ value: Date) -> Any {
        #if canImport(Darwin)
        return value
        #else
        let seconds = value.timeIntervalSinceReferenceDate
        if seconds.rounded(.down) == seconds, Self.wholeSecondDates.contains(seconds) {
            return value
        }
        return seconds
        #endif
    }

    /// A date as `date(_:)` writes it, but a date written as its seconds is marked as
    /// a date (`"\u{FDD0}date:"` and the seconds' shortest exact text), so that what
    /// reads any value reads it back as a date.
    func keptDate(_ value: Date) -> Any {
        let stored = date(value)
        guard !(stored is Date) else { return stored }
        return StoredForm.datePrefix + String(value.timeIntervalSinceReferenceDate)
    }

    /// The whole-second dates a `<date>` of a suite's file keeps on Linux: years -9999
    /// through 9999, which the package's writer writes in the proleptic Gregorian
    /// calendar Foundation's readers read (`PropertyListXML`). Others are written as
    /// their seconds, as a date with a fraction is.
    static let wholeSecondDates = -378_683_424_000.0..<252_423_993_600.0

    /// An absolute URL as its string; any other in the keyed form `URL`'s own `Codable`
    /// writes, which keeps the base and is read back by `URL.init(from:)`.
    func url(_ value: URL, depth: Int, path: () -> [any CodingKey]) throws -> Any {
        if value.baseURL == nil, value.scheme != nil, URL(string: value.absoluteString) == value {
            return value.absoluteString
        }
        guard depth < containerDepthLimit else {
            throw EncodingError.invalid(value, "Cannot store a URL nested this deep in UserDefaults", at: path())
        }
        var keyed: [String: Any] = ["relative": StoredForm.escape(value.relativeString)]
        if let base = value.baseURL {
            keyed["base"] = try url(base, depth: depth + 1) { path() + [KeyValueCodingKey(stringValue: "base")] }
        }
        return keyed
    }

    /// A property list has no decimal type, and Foundation on Linux stores a `Decimal`
    /// as an integer (0.5 becomes 0): keep its exact text, marked as a decimal so that a
    /// string is never read as one.
    func decimal(_ value: Decimal, path: () -> [any CodingKey]) throws -> Any {
        let text = value.canonicalString
        guard !value.isNaN, Decimal(strictString: text) == value else {
            throw EncodingError.invalid(value, "Cannot store Decimal \(text) in UserDefaults", at: path())
        }
        return StoredForm.decimalPrefix + text
    }

    /// Checks that what a `.custom` strategy made is a property list, converting it to
    /// the forms above.
    func custom(_ value: Any, depth: Int, path: () -> [any CodingKey]) throws -> Any {
        try storable(value, depth: depth, path: path())
    }

    private func storable(_ value: Any, depth: Int, path: @autoclosure () -> [any CodingKey]) throws -> Any {
        guard let value = flattenOptional(value) else { return StoredForm.null }
        switch TreeValue(value) {
        case .string(let string)?: return StoredForm.escape(string)
        case .number(let number)?:
            switch number {
            case .bool(let bool): return bool
            case .signed(let int, _): return integer(int)
            case .unsigned(let uint, _): return integer(uint)
            case .double(let double): return double
            case .float(let float): return Double(float)
            case .decimal(let decimal): return try self.decimal(decimal, path: path)
            case .wide(let digits, _): return StoredForm.integerPrefix + digits
            case .text(let text): return StoredForm.escape(text)
            }
        case .date(let date)?: return self.date(date)
        case .data(let data)?: return data
        case .dictionary(let dictionary)?:
            guard depth < containerDepthLimit else { throw tooDeep(value, path()) }
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                let elementPath = path() + [KeyValueCodingKey(stringValue: key)]
                if let problem = problem(withKey: key) { throw EncodingError.invalid(value, message(for: problem), at: elementPath) }
                result[key] = try storable(element, depth: depth + 1, path: elementPath)
            }
            return result
        case .array(let array)?:
            guard depth < containerDepthLimit else { throw tooDeep(value, path()) }
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                result.append(try storable(element, depth: depth + 1, path: path() + [IndexCodingKey(index)]))
            }
            return result
        case nil:
            if let url = value as? URL { return try self.url(url, depth: depth, path: path) }
            throw EncodingError.invalid(value, "Cannot store \(FoundValue.describing(value).description) in UserDefaults", at: path())
        }
    }

    private func tooDeep(_ value: Any, _ path: [any CodingKey]) -> EncodingError {
        .invalid(value, depthProblem, at: path)
    }

    func message(for problem: KeyProblem) -> String {
        switch problem {
        case .leadingByteOrderMark: return "Cannot store a key that begins with U+FEFF in UserDefaults (the property list file drops it)"
        }
    }

    func problem(withKey key: String) -> KeyProblem? {
        guard StoredForm.mayNeedEscaping(key), key.unicodeScalars.first == StoredForm.byteOrderMark else { return nil }
        return .leadingByteOrderMark
    }
}

// MARK: - Decoding

/// Reads values in the stored form.
struct StoredDecodingForm: DecodingForm {
    func isNull(_ value: Any) -> Bool {
        guard let value = flattenOptional(value) else { return true }
        return StoredForm.nilMarker(value) != nil
    }

    var unwrapsOptionals: Bool { true }

    func unwrap(_ value: Any) -> UnwrappedValue {
        guard let value = flattenOptional(value) else { return .none }
        guard let marker = StoredForm.nilMarker(value) else { return .some(value) }
        if let inner = marker.unwrapped { return .some(StoredForm.text(of: inner)) }
        return marker.isExplicitNull ? .null(value) : .none
    }

    @inline(__always)
    func string(_ value: Any) -> String? {
        guard let string = cast(value, to: String.self) else { return nil }
        if case .string(let text) = StoredForm.read(string) { return text }
        return nil
    }

    func strings(_ value: Any) -> [String]? {
        guard let strings = cast(value, to: [String].self), !strings.contains(where: StoredForm.mayNeedEscaping) else { return nil }
        return strings
    }

    func stringDictionary(_ value: Any) -> [String: String]? {
        guard let strings = cast(value, to: [String: String].self), !strings.values.contains(where: StoredForm.mayNeedEscaping) else { return nil }
        return strings
    }

    func decimal(_ value: Any) -> Decimal? {
        guard let string = cast(value, to: String.self), case .decimal(let decimal) = StoredForm.read(string) else { return nil }
        return decimal
    }

    func number(_ value: Any) -> NumberValue? {
        if let text = exactCast(value, to: NumberText.self) { return .text(text.text) }
        guard let string = cast(value, to: String.self), case .integer(let digits) = StoredForm.read(string) else { return nil }
        return Self.wideInteger(digits)
    }

    /// The number an integer marker's digits stand for.
    private static func wideInteger(_ digits: String) -> NumberValue {
        if let int = Int64(digits) { return .signed(int, type: Int.self) }
        if let uint = UInt64(digits) { return .unsigned(uint, type: UInt64.self) }
        var type: Any.Type = digits.hasPrefix("-") ? Int64.self : UInt64.self
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            type = digits.hasPrefix("-") ? Int128.self : UInt128.self
        }
        return .wide(digits, type: type)
    }

    /// An absolute URL, or, as `url(forKey:)` reads one, an absolute file path (`~`
    /// expanded).
    func url(_ string: String) -> URL? {
        if let url = URL(string: string), url.scheme != nil { return url }
        if string.hasPrefix("/") { return URL(fileURLWithPath: string) }
        if string.hasPrefix("~") {
            let expanded = NSString(string: string).expandingTildeInPath
            if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded) }
        }
        return nil
    }

    func date(_ value: Any) -> Date? {
        guard let string = cast(value, to: String.self), case .date(let date) = StoredForm.read(string) else { return nil }
        return date
    }

    func plain(_ value: Any) -> Any {
        guard let value = flattenOptional(value) else { return Optional<Any>.none as Any }
        switch TreeValue(value) {
        case .string(let string)?:
            switch StoredForm.read(string) {
            case .string(let text): return text
            case .optional: return Optional<Any>.none as Any
            case .date(let date): return date
            case .decimal(let decimal): return decimal
            case .integer(let digits): return plainNumber(Self.wideInteger(digits))
            }
        case .dictionary(let dictionary)?: return dictionary.mapValues(plain)
        case .array(let array)?: return array.map(plain)
        default: return value
        }
    }

    func describe(_ value: Any) -> FoundValue {
        if let string = value as? String {
            switch StoredForm.read(string) {
            case .string: return .value(String.self)
            case .optional: return .null
            case .decimal: return .value(Decimal.self)
            case .integer: return .value(Int.self)
            case .date: return .value(Date.self)
            }
        }
        return flattenOptional(value) == nil ? .null : .describing(value)
    }
}

/// A wide integer as a custom strategy sees it: an `Int128` or `UInt128` where the
/// platform has them, its text otherwise.
private func plainNumber(_ number: NumberValue) -> Any {
    switch number {
    case .signed(let int, _): return nativeInteger(int) ?? int
    case .unsigned(let uint, _): return uint
    case .wide(let digits, _):
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            if let int = Int128(digits) { return int }
            if let uint = UInt128(digits) { return uint }
        }
        return digits
    default: return number
    }
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

// MARK: - Launch arguments

/// Launch arguments (`./app -flag YES -count 2`, an Xcode scheme's arguments) and
/// `defaults write` reach an app as strings, and `bool(forKey:)`, `integer(forKey:)` and
/// `double(forKey:)` read them. At the top of a stored value, a string that does not
/// decode as it is is read the same way, but strictly: `"YES"`, `"no"`, `"true"`, `"1"`
/// are booleans; a whole number in the grammar of `Decimal(strictString:)` (`"42"`,
/// `"-2.5"`, `"1e3"`) is a number, read from its digits exactly as each type asks
/// (`NumberText`: `"1e200"` a `Double`, 39 digits a `UInt128`), under the decoder's
/// exactness rules; `"other"`, `"1e"` and `" 2"` are neither and still throw.
enum LaunchArgument {
    /// The values `string` may stand for, the number first.
    static func readings(of string: String) -> [Any] {
        var readings: [Any] = []
        if DecimalDigits(string) != nil { readings.append(NumberText(text: string)) }
        switch string.lowercased() {
        case "yes", "true", "1": readings.append(true)
        case "no", "false", "0": readings.append(false)
        default: break
        }
        return readings
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
