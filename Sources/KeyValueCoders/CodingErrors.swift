// Every error the coders throw is built here, from types and the coding path, so that
// each message has the same shape and names the path in its readable form. The
// builders are cold: kept out of line so the hot paths stay small.

import Foundation

/// What a decoder found where it expected something else.
/// A kind of failure that code branches on: a case, never the text of a message, which is
/// written for people and may change.
package enum CodingProblem: Error, Sendable, Equatable {
    /// A number of the right kind that the asked type cannot hold exactly.
    case inexactNumber
}

package enum FoundValue {
    /// `nil`, or a value the nil strategy counts as `nil`.
    case null
    /// Nothing: the unkeyed container was at its end.
    case endOfArray
    /// A value of this type.
    case value(Any.Type)
    /// A dictionary whose keys are of this type, not `String`.
    case dictionary(keyType: Any.Type)

    /// Describes `value`. Foundation's bridged classes are named after the Swift type
    /// they stand for, so messages read the same on Apple platforms and Linux.
    package static func describing(_ value: Any) -> FoundValue {
        guard let value = flattenOptional(value) else { return .null }
        if type(of: value) == String.self { return .value(String.self) }
        if let number = classifyNumber(value) { return .value(number.type) }
        if isNSNull(value) { return .value(NSNull.self) }
        if value is [String: Any] { return .value([String: Any].self) }
        if let dictionary = value as? [AnyHashable: Any] {
            guard let key = dictionary.keys.first(where: { !($0.base is String) }) else { return .value([String: Any].self) }
            if let number = classifyNumber(key.base) { return .dictionary(keyType: number.type) }
            return .dictionary(keyType: type(of: key.base))
        }
        if isArray(value) { return .value([Any].self) }
        if value is String { return .value(String.self) }
        // Apple's Foundation hands back its private subclasses (`__NSTaggedDate`,
        // `__NSCFData`); on Linux, `NSDate` and `NSData` themselves.
        if value is Date { return .value(Date.self) }
        if value is Data { return .value(Data.self) }
        return .value(type(of: value))
    }

    package var description: String {
        switch self {
        case .null: return "nil"
        case .endOfArray: return "end of array"
        case .value(let type): return typeName(type)
        case .dictionary(let keyType): return "Dictionary with \(typeName(keyType)) keys"
        }
    }
}

/// A type's name as messages show it: `Dictionary` and `Array` for the tree's
/// collections, whatever their element types, and the type's own name otherwise.
func typeName(_ type: Any.Type) -> String {
    if type is any AnyDictionaryType.Type || type is NSDictionary.Type { return "Dictionary" }
    if type is any AnyArrayType.Type || type is NSArray.Type { return "Array" }
    if type == URL.self { return "URL" }
    if type == Date.self { return "Date" }
    if type == Data.self { return "Data" }
    if type == Decimal.self { return "Decimal" }
    if type == Optional<Any>.self { return "nil" }
    return String(describing: type)
}

/// The name of what a decoder expected: as `typeName`, except that every integer type
/// is `BinaryInteger`, since every integer width is accepted when the value fits.
func expectedName(_ type: Any.Type) -> String {
    if type is any BinaryInteger.Type { return "BinaryInteger" }
    return typeName(type)
}

/// Lets `typeName` recognise any `Dictionary` type by its metatype.
protocol AnyDictionaryType {}
extension Dictionary: AnyDictionaryType {}

/// Lets `typeName` recognise any `Array` type by its metatype.
protocol AnyArrayType {}
extension Array: AnyArrayType {}
extension ContiguousArray: AnyArrayType {}

extension DecodingError {
    /// `Expected String at SELF[1].name, found Int`: `typeMismatch`, or `valueNotFound`
    /// when it found `nil` or the end of an array.
    ///
    /// - Parameters:
    ///   - type: The type being decoded.
    ///   - expected: What the value should have been, when that is not `type` itself
    ///     (a `String` for an ISO 8601 `Date`).
    ///   - found: What was there instead.
    ///   - path: The path of the value.
    @inline(never)
    static func mismatch(_ type: Any.Type, expected: Any.Type? = nil, found: FoundValue, at path: [any CodingKey]) -> DecodingError {
        let name: String
        if case .endOfArray = found {
            name = typeName(expected ?? type)
        } else if case .dictionary = found {
            // Keyed containers, `[Int: V]`'s included, read dictionaries with String keys.
            name = "Dictionary with String keys"
        } else {
            name = expectedName(expected ?? type)
        }
        let context = Context(codingPath: path, debugDescription: "Expected \(name) at \(messagePath(path)), found \(found.description)")
        switch found {
        case .null, .endOfArray: return .valueNotFound(type, context)
        case .value, .dictionary: return .typeMismatch(type, context)
        }
    }

    /// `Int at SELF[2], cannot be exactly represented by UInt8`, with
    /// `CodingProblem.inexactNumber` as the underlying error, for code that must tell
    /// this mismatch from others.
    @inline(never)
    static func notRepresentable(_ number: NumberValue, as type: Any.Type, at path: [any CodingKey]) -> DecodingError {
        .typeMismatch(
            type,
            Context(
                codingPath: path,
                debugDescription: "\(typeName(number.type)) at \(messagePath(path)), cannot be exactly represented by \(typeName(type))",
                underlyingError: CodingProblem.inexactNumber
            ))
    }

    /// `Dictionary does not contain key SELF[1].name`; the context's path is the container's.
    @inline(never)
    static func missingKey(_ key: any CodingKey, containerPath: [any CodingKey]) -> DecodingError {
        .keyNotFound(
            key,
            Context(
                codingPath: containerPath,
                debugDescription: "Dictionary does not contain key \(messagePath(containerPath + [key]))"
            ))
    }

    /// A tree nested deeper than the coders go (see `NestingGuard`).
    @inline(never)
    static func tooDeep(_ reason: NestingGuard.Reason, at path: [any CodingKey]) -> DecodingError {
        corrupted(reason.message, at: path)
    }

    /// `Invalid URL string at SELF.home: "ht tp://"` and the like.
    @inline(never)
    static func corrupted(_ message: String, at path: [any CodingKey], underlyingError: (any Error)? = nil) -> DecodingError {
        .dataCorrupted(
            Context(
                codingPath: path,
                debugDescription: "\(message) at \(messagePath(path))",
                underlyingError: underlyingError
            ))
    }
}

extension EncodingError {
    /// A value nested deeper than the coders go (see `NestingGuard`).
    @inline(never)
    static func tooDeep(_ value: Any, _ reason: NestingGuard.Reason, at path: [any CodingKey]) -> EncodingError {
        invalid(value, reason.message, at: path)
    }

    /// `Cannot write Date(timeIntervalSinceReferenceDate: nan) with the .iso8601 date
    /// strategy ("-4712-01-01T12:00:00Z" would read back as another date) at SELF.when`.
    @inline(never)
    static func unwritableDate(_ date: Date, strategy: String, text: String, at path: [any CodingKey]) -> EncodingError {
        invalid(
            date,
            "Cannot write Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate)) with the \(strategy) date strategy (\"\(text)\" would not read back as the same date)",
            at: path)
    }

    /// `Cannot store Double.nan at SELF.score in UserDefaults` and the like: `message`
    /// and the path.
    @inline(never)
    package static func invalid(_ value: Any, _ message: String, at path: [any CodingKey], underlyingError: (any Error)? = nil) -> EncodingError {
        .invalidValue(
            value,
            Context(
                codingPath: path,
                debugDescription: "\(message) at \(messagePath(path))",
                underlyingError: underlyingError
            ))
    }
}

// MARK: - Reading coding errors

/// The path and message of a `DecodingError` or `EncodingError` (for `keyNotFound`, the
/// path ends with the missing key), or `nil` for any other error.
package func codingErrorContext(of error: any Error) -> (codingPath: [any CodingKey], debugDescription: String)? {
    switch error {
    case let error as DecodingError:
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            return (context.codingPath + [key], context.debugDescription)
        @unknown default:
            return nil
        }
    case let error as EncodingError:
        switch error {
        case .invalidValue(_, let context): return (context.codingPath, context.debugDescription)
        @unknown default: return nil
        }
    default:
        return nil
    }
}

/// The ways an encoder is misused, as cases: code decides by the case, and the message
/// is made in one place, as the other errors are. (Foundation's coders trap on these;
/// these coders throw.)
enum CoderMisuse: Equatable {
    case keyedAfterOther
    case unkeyedAfterOther
    case valueAfterOther
    case superEncoderForTakenKey
    /// A nested container of `kind` asked for a key that holds another kind of value.
    case nested(kind: String)
    /// A container deeper than the form allows; `message` is the form's
    /// (`EncodingForm.depthProblem`).
    case tooDeep(message: String)

    var message: String {
        switch self {
        case .keyedAfterOther: return "Invalid use of Encoder: a keyed container was requested after another container was used"
        case .unkeyedAfterOther: return "Invalid use of Encoder: an unkeyed container was requested after another container was used"
        case .valueAfterOther: return "Invalid use of Encoder: a single value was encoded after another value or container"
        case .superEncoderForTakenKey: return "Invalid use of Encoder: a super encoder was requested for a key that already holds a container"
        case .nested(let kind): return "Invalid use of Encoder: \(kind) was requested for a key that already holds another kind of value"
        case .tooDeep(let message): return message
        }
    }
}

/// Why a string cannot be a dictionary key in a form (`EncodingForm.problem(withKey:)`);
/// the form that refuses it says why in words (`EncodingForm.message(for:)`).
package enum KeyProblem: Equatable {
    /// It begins with U+FEFF, which a property-list file drops.
    case leadingByteOrderMark
}

// MARK: - Builders from a path node

/// The builders above, from the node of the container and the step below it, as the
/// coders hold them, and the levels the node is one of: the path is made only here, when an error is thrown.
extension DecodingError {
    static func mismatch(_ type: Any.Type, expected: Any.Type? = nil, found: FoundValue, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?) -> DecodingError {
        mismatch(type, expected: expected, found: found, at: levels.codingPath(of: node, then: step))
    }

    static func notRepresentable(_ number: NumberValue, as type: Any.Type, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?) -> DecodingError {
        notRepresentable(number, as: type, at: levels.codingPath(of: node, then: step))
    }

    static func tooDeep(_ reason: NestingGuard.Reason, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?) -> DecodingError {
        tooDeep(reason, at: levels.codingPath(of: node, then: step))
    }

    static func corrupted(_ message: String, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?, underlyingError: (any Error)? = nil) -> DecodingError {
        corrupted(message, at: levels.codingPath(of: node, then: step), underlyingError: underlyingError)
    }
}

extension EncodingError {
    static func tooDeep(_ value: Any, _ reason: NestingGuard.Reason, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?) -> EncodingError {
        tooDeep(value, reason, at: levels.codingPath(of: node, then: step))
    }

    static func unwritableDate(_ date: Date, strategy: String, text: String, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?) -> EncodingError {
        unwritableDate(date, strategy: strategy, text: text, at: levels.codingPath(of: node, then: step))
    }

    static func invalid(_ value: Any, _ message: String, in levels: PathLevels, at node: CodingPathNode?, _ step: PathStep?, underlyingError: (any Error)? = nil) -> EncodingError {
        invalid(value, message, at: levels.codingPath(of: node, then: step), underlyingError: underlyingError)
    }
}
