// `NSSecureCoding` objects (colors, fonts, tokens) as values of typed keys: archived with
//  `NSKeyedArchiver` requiring secure coding, read back with an allow-list of classes.
//

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// An `NSSecureCoding` object stored as a keyed archive, so that it goes through typed
/// keys, `@UserDefault` and observation like any `Codable` value.
///
/// ```swift
/// extension DefaultsKeys {
///     static let accent = DefaultsKey<ArchivedObject<NSColor>?>("accent")
/// }
/// defaults[.accent] = ArchivedObject(.systemBlue)
/// let color = defaults[.accent]?.object
/// ```
///
/// Writing archives the object with `NSKeyedArchiver` requiring secure coding; reading
/// unarchives it allowing only `allowedClasses`: `Object` and Foundation's
/// property-list classes (strings, numbers, dates, data, arrays, dictionaries), plus,
/// on Apple platforms, what `Object` itself decodes securely (the color space inside a
/// color). An archive of any other class, or one that is damaged, throws
/// `DecodingError.dataCorrupted` — the subscript and wrapper report it and return the
/// default — and never traps. The archive is stored as `Data`: a keyed archive is a
/// property list, but not one another tool reads as the object's fields.
///
/// `Sendable` on the understanding that the object is not mutated once stored, as for
/// the immutable classes this is meant for.
public struct ArchivedObject<Object: NSObject & NSSecureCoding>: Codable, @unchecked Sendable, Equatable {
    /// The object.
    public let object: Object

    /// Wraps `object` for storing.
    ///
    /// - Parameter object: The object; not mutated afterwards.
    public init(_ object: Object) {
        self.object = object
    }

    /// The classes an archive may hold: `Object` and Foundation's property-list classes.
    public static var allowedClasses: [AnyClass] {
        [Object.self, NSString.self, NSNumber.self, NSDate.self, NSData.self, NSArray.self, NSDictionary.self]
    }

    /// Archives the object, requiring secure coding, and writes the archive as `Data`.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: `EncodingError.invalidValue` when the object cannot be archived.
    public func encode(to encoder: any Encoder) throws {
        #if !canImport(Darwin)
        // swift-corelibs-foundation's archiver names a class by `NSStringFromClass`,
        // which stops the process for a class that is not top-level (nested in a type,
        // private, local): refused here instead.
        if String(reflecting: type(of: object)).split(separator: ".").count != 2 {
            throw EncodingError.invalidValue(
                object,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "Cannot archive \(Object.self): \(String(reflecting: type(of: object))) is not a top-level class"))
        }
        #endif
        let data: Data
        do {
            data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        } catch {
            throw EncodingError.invalidValue(
                object,
                EncodingError.Context(
                    codingPath: encoder.codingPath, debugDescription: "Cannot archive \(Object.self): \(error.localizedDescription)",
                    underlyingError: error))
        }
        var container = encoder.singleValueContainer()
        try container.encode(data)
    }

    /// Reads an archive, allowing only `allowedClasses`.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError.dataCorrupted` when the archive is damaged, or holds a
    ///   class that is not allowed, or its root is not an `Object`.
    public init(from decoder: any Decoder) throws {
        let data = try decoder.singleValueContainer().decode(Data.self)
        let root: Any?
        do {
            #if !canImport(Darwin)
            // Checked first (`KeyedArchiveCheck`): swift-corelibs-foundation's unarchiver
            // traps, not throws, on a class that is not allowed, a cycle, a reference out
            // of range or a payload of the wrong type. Apple's secure
            // unarchiver throws instead, and also allows the classes the root decodes
            // itself with `decodeObject(of:forKey:)` (the color space inside an `NSColor`),
            // which a check of the archive's class names alone would refuse.
            if let problem = KeyedArchiveCheck.problem(in: data, allowed: Self.allowedClasses) {
                throw CocoaError(.coderReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: problem])
            }
            #endif
            root = try NSKeyedUnarchiver.unarchivedObject(ofClasses: Self.allowedClasses, from: data)
        } catch {
            let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "Cannot unarchive \(Object.self): \(reason)", underlyingError: error))
        }
        guard let object = root as? Object else {
            let found = root.map { "\(type(of: $0))" } ?? "nothing"
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "Expected an archived \(Object.self), found \(found)"))
        }
        self.object = object
    }

    /// Whether the two objects are equal (`isEqual(_:)`).
    ///
    /// - Parameters:
    ///   - lhs: An archived object.
    ///   - rhs: Another.
    /// - Returns: `lhs.object.isEqual(rhs.object)`.
    public static func == (lhs: ArchivedObject, rhs: ArchivedObject) -> Bool {
        lhs.object.isEqual(rhs.object)
    }
}
