// Numbers found in `Any` trees, and the exact conversions between them.

import Foundation

/// A number found in an `Any` tree, with the type it was stored as.
///
/// `NSNumber` bridges freely to every Swift number type and to `Bool`, so the coders
/// never ask `value as? Int` of an unknown value: they classify it here first, and a
/// `Bool` never passes for a number nor a number for a `Bool`.
package enum NumberValue {
    case bool(Bool)
    case signed(Int64, type: Any.Type)
    case unsigned(UInt64, type: Any.Type)
    case double(Double)
    case float(Float)
    case decimal(Decimal)
    /// An integer outside the 64-bit ranges (an `Int128` or `UInt128`), as exact text.
    case wide(String, type: Any.Type)
    /// A number written as decimal text (a launch argument, `NumberText`), converted to
    /// each type exactly from its digits: no `Decimal` on the way, which keeps 38
    /// digits and exponents of ±127 only.
    case text(String)

    /// The type the number was stored as, for error messages.
    package var type: Any.Type {
        switch self {
        case .bool: return Bool.self
        case .signed(_, let type), .unsigned(_, let type): return type
        case .double: return Double.self
        case .float: return Float.self
        case .decimal: return Decimal.self
        case .wide(_, let type): return type
        // A decimal number, as its errors say.
        case .text: return Decimal.self
        }
    }

    package var isBool: Bool {
        if case .bool = self { return true }
        return false
    }
}

/// The class Foundation uses for `NSNumber(value: true)`; booleans read from a plist
/// are of this class on Apple platforms and on Linux.
private let booleanNumberType: AnyClass = type(of: NSNumber(value: true))

/// Classifies `value` as a number, or returns `nil` when it is not one.
package func classifyNumber(_ value: Any) -> NumberValue? {
    // Opened once, so that each check is a metatype compare and each read a copy, where
    // `value as! Int` would ask the runtime's dynamic cast.
    if let number = _openExistential(value, do: classifyNumber(opened:)) { return number }
    let type = type(of: value)
    if type == String.self { return nil }
    // Unwrap before asking for NSNumber: a wrapped Int64 would bridge and lose its type.
    // Asked of the `Any`: a cast of a generic `Optional` to a protocol would look
    // inside the optional instead.
    if type is any OptionalInAny.Type, let optional = value as? any OptionalInAny {
        return optional.flattened.flatMap(classifyNumber)
    }
    if isObject(value), let number = value as? NSNumber {
        return classifyNSNumber(number)
    }
    return nil
}

/// The number `value` is when its type is one of Swift's number types, or `nil`.
private func classifyNumber<V>(opened value: V) -> NumberValue? {
    let type = V.self
    if type == Int.self { return .signed(Int64(sameType(value, as: Int.self)), type: Int.self) }
    if type == Any.self { return classifyNumber(sameType(value, as: Any.self)) }  // an `Any` inside an `Any`
    if type == Double.self { return .double(sameType(value, as: Double.self)) }
    if type == Bool.self { return .bool(sameType(value, as: Bool.self)) }
    if type == Int64.self { return .signed(sameType(value, as: Int64.self), type: Int64.self) }
    if type == UInt64.self { return .unsigned(sameType(value, as: UInt64.self), type: UInt64.self) }
    if type == Float.self { return .float(sameType(value, as: Float.self)) }
    if type == Int32.self { return .signed(Int64(sameType(value, as: Int32.self)), type: Int32.self) }
    if type == Int16.self { return .signed(Int64(sameType(value, as: Int16.self)), type: Int16.self) }
    if type == Int8.self { return .signed(Int64(sameType(value, as: Int8.self)), type: Int8.self) }
    if type == UInt.self { return .unsigned(UInt64(sameType(value, as: UInt.self)), type: UInt.self) }
    if type == UInt32.self { return .unsigned(UInt64(sameType(value, as: UInt32.self)), type: UInt32.self) }
    if type == UInt16.self { return .unsigned(UInt64(sameType(value, as: UInt16.self)), type: UInt16.self) }
    if type == UInt8.self { return .unsigned(UInt64(sameType(value, as: UInt8.self)), type: UInt8.self) }
    if type == Decimal.self { return .decimal(sameType(value, as: Decimal.self)) }
    if type == CGFloat.self { return .double(Double(sameType(value, as: CGFloat.self))) }
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        if type == Int128.self { return wideNumber(sameType(value, as: Int128.self)) }
        if type == UInt128.self { return wideNumber(sameType(value, as: UInt128.self)) }
    }
    return nil
}

/// The `Double` that represents the integer `digits` exactly, or `nil`.
private func wideExactDouble(_ digits: String) -> Double? {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        if let int = Int128(digits) { return Double(exactly: int) }
        if let uint = UInt128(digits) { return Double(exactly: uint) }
    }
    return nil
}

/// A 128-bit integer: at 64 bits when it fits, as exact text when it does not.
func wideNumber<T: FixedWidthInteger>(_ value: T) -> NumberValue {
    if let int = Int64(exactly: value) { return .signed(int, type: T.self) }
    if let uint = UInt64(exactly: value) { return .unsigned(uint, type: T.self) }
    return .wide(String(value), type: T.self)
}

private func classifyNSNumber(_ number: NSNumber) -> NumberValue {
    if type(of: number) == booleanNumberType { return .bool(number.boolValue) }
    if let decimal = number as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
    switch UInt8(bitPattern: number.objCType.pointee) {
    case UInt8(ascii: "d"): return .double(number.doubleValue)
    case UInt8(ascii: "f"): return .float(number.floatValue)
    case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
        return .unsigned(number.uint64Value, type: UInt64.self)
    default:
        return .signed(number.int64Value, type: Int.self)
    }
}

// MARK: - Exact conversions

extension NumberValue {
    /// The value as a `Double`, if one represents it exactly. A `Decimal` counts as
    /// exact when the `Double` with the same shortest decimal form reads back equal.
    var exactDouble: Double? {
        switch self {
        case .bool: return nil
        case .signed(let int, _): return Double(exactly: int)
        case .unsigned(let uint, _): return Double(exactly: uint)
        case .double(let double): return double
        case .float(let float): return Double(float)
        case .decimal(let decimal):
            guard let double = Double(decimal.canonicalString),
                Decimal(strictString: "\(double)") == decimal
            else { return nil }
            return double
        case .wide(let digits, _):
            return wideExactDouble(digits)
        case .text(let text):
            return Self.exactly(Double.self, text)
        }
    }

    /// The binary floating-point number `text` names: the nearest one, when its
    /// shortest decimal form is the text's value to the last digit (`"0.1"`, `"1e200"`,
    /// `"5e-324"`), or when it is exactly the text's value (`"1.00048828125"`, 1 + 2⁻¹¹,
    /// as a `Float`, whose shortest form is `1.0004883`); else `nil` (`"0.123456789"` as
    /// a `Float`, `"65519"` as a `Float16`).
    private static func exactly<F: BinaryFloatingPoint & LosslessStringConvertible>(_: F.Type, _ text: String) -> F? {
        guard let value = F(text), value.isFinite, let digits = DecimalDigits(text) else { return nil }
        guard DecimalDigits("\(value)") == digits || DecimalDigits(exactly: Double(value)) == digits else { return nil }
        return value
    }

    /// The value as a `Float`, if one represents it exactly, or if the `Float`'s
    /// shortest decimal form names exactly the same `Double` (so `0.1` stored as a
    /// `Double` reads as `Float(0.1)`, and `0.123456789` throws).
    var exactFloat: Float? {
        if case .float(let float) = self { return float }
        return exactly(Float.self)
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    /// The value as a `Float16`, by the rule of `exactFloat`.
    var exactFloat16: Float16? { exactly(Float16.self) }
    #endif

    /// The value as a binary floating-point type narrower than `Double`, by the rule of
    /// `exactFloat`.
    private func exactly<F: BinaryFloatingPoint & LosslessStringConvertible>(_: F.Type) -> F? {
        if case .text(let text) = self { return Self.exactly(F.self, text) }
        guard let double = exactDouble else { return nil }
        if double.isNaN { return .nan }
        if let value = F(exactly: double) { return value }
        let value = F(double)
        guard value.isFinite, Double("\(value)") == double else { return nil }
        return value
    }

    /// The value as a `Decimal`: integers exactly; binary floating point by its
    /// shortest decimal form (`0.1` becomes `0.1`).
    var exactDecimal: Decimal? {
        switch self {
        case .bool: return nil
        case .signed(let int, _): return Decimal(int)
        case .unsigned(let uint, _): return Decimal(uint)
        case .double(let double):
            guard double.isFinite else { return nil }
            return Decimal(strictString: "\(double)")
        case .float(let float):
            guard float.isFinite else { return nil }
            return Decimal(strictString: "\(float)")
        case .decimal(let decimal): return decimal
        case .wide(let digits, _):
            // A Decimal keeps 38 digits: longer integers are not exact.
            guard let decimal = Decimal(strictString: digits), decimal.canonicalString == digits else { return nil }
            return decimal
        case .text(let text):
            guard let decimal = Decimal(strictString: text), DecimalDigits(decimal.canonicalString) == DecimalDigits(text) else { return nil }
            return decimal
        }
    }

    /// The value as the integer type `T` under `strategy`, or `nil` when the strategy
    /// does not allow it.
    func integer<T: FixedWidthInteger>(_: T.Type, strategy: KeyValueDecoder.IntDecodingStrategy) -> T? {
        switch self {
        case .bool:
            return nil
        case .signed(let int, _):
            if case .clamping = strategy { return T(clamping: int) }
            return T(exactly: int)
        case .unsigned(let uint, _):
            if case .clamping = strategy { return T(clamping: uint) }
            return T(exactly: uint)
        case .double(let double):
            return Self.integer(T.self, fromDouble: double, strategy: strategy)
        case .float(let float):
            return Self.integer(T.self, fromDouble: Double(float), strategy: strategy)
        case .decimal(let decimal):
            if let whole = T(decimal.canonicalString) { return whole }
            if case .exact = strategy { return nil }
            return Self.integer(T.self, fromDouble: NSDecimalNumber(decimal: decimal).doubleValue, strategy: strategy)
        case .wide(let digits, _):
            if let whole = T(digits) { return whole }
            if case .clamping = strategy { return digits.hasPrefix("-") ? T.min : T.max }
            return nil
        case .text(let text):
            if let whole = DecimalDigits(text)?.integerText.flatMap(T.init) { return whole }
            if case .exact = strategy { return nil }
            return Self.integer(T.self, fromDouble: Double(text) ?? .nan, strategy: strategy)
        }
    }

    private static func integer<T: FixedWidthInteger>(
        _: T.Type, fromDouble double: Double, strategy: KeyValueDecoder.IntDecodingStrategy
    ) -> T? {
        switch strategy {
        case .exact:
            return T(exactly: double)
        case .rounding(let rule):
            guard double.isFinite else { return nil }
            return T(exactly: double.rounded(rule))
        case .clamping(let rule):
            guard !double.isNaN else { return nil }
            let rounded = rule.map { double.rounded($0) } ?? double
            if rounded <= Double(T.min) { return T.min }
            if rounded >= Double(T.max) { return T.max }
            return T(exactly: rounded)
        }
    }
}

// MARK: - Decimal text

/// A number written as decimal text, kept as text until a type is asked of it: how a
/// launch argument reads (`LaunchArgument`), exactly for every number type.
package struct NumberText {
    package let text: String

    package init(text: String) { self.text = text }
}

/// A decimal number in lowest terms: its sign, its significant digits without leading or
/// trailing zeros, and the power of ten of the last one. Two texts name the same number
/// exactly when their digits are equal (`"1e3"`, `"1000"` and `"1000.0"`).
package struct DecimalDigits: Equatable {
    var isNegative: Bool
    var digits: [UInt8]
    var exponent: Int

    /// Reads the grammar of `Decimal(strictString:)`, which is also the forms Swift
    /// prints a floating-point number in (`"1e+200"`); `nil` for anything else. The one
    /// reader of that grammar: whether a text is a number at all is whether this reads it.
    package init?(_ text: String) {
        var bytes = Substring(text).utf8[...]
        isNegative = bytes.first == UInt8(ascii: "-")
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var mantissa: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        while let byte = bytes.first {
            if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                mantissa.append(byte)
                if seenPoint { fractionDigits += 1 }
            } else {
                break
            }
            bytes = bytes.dropFirst()
        }
        guard !mantissa.isEmpty else { return nil }
        var power = 0
        if let marker = bytes.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            let negative = bytes.first == UInt8(ascii: "-")
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty, bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            // Beyond any number type either way: kept in range, still told apart.
            let magnitude = Int(String(decoding: bytes.prefix(9), as: UTF8.self))! + (bytes.count > 9 ? 1_000_000_000 : 0)
            power = negative ? -magnitude : magnitude
            bytes = bytes[bytes.endIndex...]
        }
        guard bytes.isEmpty else { return nil }
        let significant = mantissa.drop { $0 == UInt8(ascii: "0") }
        let trailing = significant.reversed().prefix { $0 == UInt8(ascii: "0") }.count
        digits = Array(significant.dropLast(trailing))
        exponent = digits.isEmpty ? 0 : power - fractionDigits + trailing
    }

    /// The exact decimal value of a finite `Double` (every one has one, however many
    /// digits): its integer significand times a power of two, written out in decimal.
    init(exactly value: Double) {
        isNegative = value.sign == .minus
        let magnitude = value.magnitude
        guard magnitude != 0, magnitude.isFinite else {
            (digits, exponent) = ([], 0)
            return
        }
        var significand = magnitude.significandBitPattern | (magnitude.isNormal ? 1 << 52 : 0)
        var power = magnitude.isNormal ? Int(magnitude.exponent) - 52 : -1074
        while significand & 1 == 0 {
            significand >>= 1
            power += 1
        }
        // Little-endian decimal digits of significand × 2^power, or of significand ×
        // 5^-power (× 10^power) for a negative power.
        var number = String(significand).utf8.reversed().map { $0 - UInt8(ascii: "0") }
        for _ in 0..<power.magnitude {
            var carry: UInt8 = 0
            for index in number.indices {
                let product = number[index] * (power > 0 ? 2 : 5) + carry
                (number[index], carry) = (product % 10, product / 10)
            }
            if carry > 0 { number.append(carry) }
        }
        let trailing = number.prefix { $0 == 0 }.count
        digits = number.dropFirst(trailing).reversed().map { $0 + UInt8(ascii: "0") }
        exponent = min(power, 0) + trailing
    }

    /// The number as integer text (`"-1000"`), when it is a whole number of at most 40
    /// digits; `nil` otherwise.
    var integerText: String? {
        if digits.isEmpty { return "0" }
        guard exponent >= 0, digits.count + exponent <= 40 else { return nil }
        return (isNegative ? "-" : "") + String(decoding: digits, as: UTF8.self) + String(repeating: "0", count: exponent)
    }
}

extension Decimal {
    /// Parses the whole of `string` as a decimal number, or returns `nil`.
    ///
    /// The grammar, in full: an optional sign; digits, a point and digits, with digits on
    /// at least one side of the point; then, optionally, `e` or `E`, an optional sign and
    /// at least one digit. `"1e"`, `"2E-"`, `"."`, `" 1"` and `"0x1"` are not numbers.
    /// (`Decimal(string:)` reads a valid prefix: `"1.5abc"` gives 1.5, `"1e"` gives 1.)
    package init?(strictString string: String) {
        guard DecimalDigits(string) != nil,
            let value = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        self = value
    }

    /// The text form that `Decimal(strictString:)` reads back to an equal value.
    package var canonicalString: String {
        var value = self
        return NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
    }
}
