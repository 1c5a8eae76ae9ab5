import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Numbers")
struct NumbersTests {

    @Test(
        "strict decimal parsing",
        arguments: [
            ("1.5", Decimal(string: "1.5")),
            ("-0.000001", Decimal(string: "-0.000001")),
            ("1e3", Decimal(1000)),
            ("12345678901234567890123456789012345678", Decimal(string: "12345678901234567890123456789012345678")),
            ("1.5abc", nil),
            ("", nil),
            ("-", nil),
            ("1..5", nil),
            ("e5", nil),
            ("NaN", nil),
        ] as [(String, Decimal?)])
    func strictDecimal(input: String, expected: Decimal?) {
        #expect(Decimal(strictString: input) == expected)
    }

    @Test(
        "the exact decimal value of a Double, every digit",
        arguments: [
            (1.00048828125, "1.00048828125"), (0.1, "0.1000000000000000055511151231257827021181583404541015625"), (-2.5, "-2.5"),
            (1e22, "10000000000000000000000"), (0.0, "0"),
            (
                Double(Float.leastNonzeroMagnitude),
                "1.40129846432481707092372958328991613128026194187651577175706828388979108268586060148663818836212158203125e-45"
            ),
        ])
    func exactDecimal(value: Double, text: String) throws {
        #expect(DecimalDigits(exactly: value) == DecimalDigits(text))
        #expect(DecimalDigits(exactly: value.nextUp) != DecimalDigits(text))
    }

    @Test(
        "a stored string reads as a binary floating-point number when it names one exactly, or is its shortest form",
        arguments: [
            ("1.00048828125", "Float", "1.0004883"), ("0.1", "Float", "0.1"), ("0.123456789", "Float", "error"),
            ("1.00048828125", "Double", "1.00048828125"), ("0.1000000000000000055511151231257827021181583404541015625", "Double", "0.1"),
            ("0.10000000000000001", "Double", "error"), ("0.100000000000000005", "Double", "error"),
        ])
    func exactFloatingPointText(text: String, type: String, expected: String) throws {
        let suite = TestSuite()
        let key = uniqueKey("number")
        suite.defaults.set(text, forKey: key)
        let read: String
        switch type {
        case "Float": read = (try? suite.defaults.read(DefaultsKey<Float>(key, default: 0))).map { "\($0)" } ?? "error"
        default: read = (try? suite.defaults.read(DefaultsKey<Double>(key, default: 0))).map { "\($0)" } ?? "error"
        }
        #expect(read == expected)
    }

    @Test("decimal canonical text reads back equal", arguments: ["1.5", "-0.000001", "12345678901234567890123456789012345678", "0", "-3e-20"])
    func decimalCanonical(input: String) throws {
        let decimal = try #require(Decimal(string: input))
        #expect(Decimal(strictString: decimal.canonicalString) == decimal)
    }

    @Test(
        "numbers are classified by what they are, not what they bridge to",
        arguments: [
            (SendableAny(NSNumber(value: true)), "Bool"),
            (SendableAny(true), "Bool"),
            (SendableAny(NSNumber(value: 1)), "Int"),
            (SendableAny(NSNumber(value: 1.5)), "Double"),
            (SendableAny(UInt8(3)), "UInt8"),
            (SendableAny(Optional<Any>.some(Int64(2)) as Any), "Int64"),
            (SendableAny(Optional<Int16>.some(2) as Any), "Int16"),
            (SendableAny(nestedInAny(UInt32(2) as Any)), "UInt32"),
            (SendableAny(CGFloat(2.5)), "Double"),
            (SendableAny(Decimal(1)), "Decimal"),
        ])
    func classification(value: SendableAny, type: String) throws {
        let number = try #require(classifyNumber(value.value))
        #expect(typeName(number.type) == type)
        #expect(number.isBool == (type == "Bool"))
    }

    @Test(
        "what is not a number is not classified as one",
        arguments: [
            SendableAny("1"), SendableAny(Date()), SendableAny([1, 2]), SendableAny(NSArray(array: [1])),
        ])
    func notNumbers(value: SendableAny) {
        #expect(classifyNumber(value.value) == nil)
    }

    @Test(
        "integer strategies",
        arguments: [
            (NumberValue.double(20.0), KeyValueDecoder.IntDecodingStrategy.exact, Int8?.some(20)),
            (.double(20.5), .exact, nil),
            (.double(20.5), .rounding(rule: .toNearestOrAwayFromZero), 21),
            (.double(1000), .clamping(rule: nil), 127),
            (.double(.nan), .clamping(rule: .down), nil),
            (.signed(-1000, type: Int.self), .clamping(rule: nil), -128),
            (.unsigned(300, type: UInt64.self), .exact, nil),
            (.decimal(Decimal(string: "12")!), .exact, 12),
            (.decimal(Decimal(string: "12.5")!), .exact, nil),
            (.bool(true), .clamping(rule: nil), nil),
        ])
    func integers(number: NumberValue, strategy: KeyValueDecoder.IntDecodingStrategy, expected: Int8?) {
        #expect(number.integer(Int8.self, strategy: strategy) == expected)
    }
}

/// An `Any` inside an `Any`: what a generic value of type `Any` becomes when it is passed
/// on as `Any`.
private func nestedInAny<T>(_ value: T) -> Any { value }
