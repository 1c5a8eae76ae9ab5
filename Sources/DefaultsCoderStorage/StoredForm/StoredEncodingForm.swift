// How values are written in the stored form: the encoder's side of `StoredForm`'s rules.

import Foundation
import KeyValueCoders

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
