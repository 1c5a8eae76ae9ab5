// How values are read from the stored form: the decoder's side of `StoredForm`'s rules.

import Foundation
import KeyValueCoders

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
