import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// The namespace for typed keys: declare keys as static members in an extension, and
/// refer to them with a leading dot wherever a `DefaultsKey` is expected.
///
/// ```swift
/// extension DefaultsKeys {
///     static let launchCount = DefaultsKey<Int>("launchCount", default: 0)
///     static let owner = DefaultsKey<User?>("owner")
/// }
///
/// UserDefaults.standard[.launchCount] += 1
/// ```
///
/// `DefaultsKey` is the only subclass; the class exists so that members declared here
/// are found through `DefaultsKey<Value>` by leading-dot syntax.
public class DefaultsKeys: @unchecked Sendable {
    // Only `let`s of Sendable types: `@unchecked` is needed because the class is not
    // final, and it cannot be subclassed outside this module.

    /// The key's name in `UserDefaults`.
    public let name: String

    init(name: String) {
        self.name = name
    }

    /// The default as it is stored, for `register(_:)`; `nil` when there is none.
    func registrationValue() throws -> Any? {
        nil
    }

    /// Observes the key's changes with no initial call, whatever its value type
    /// (`DefaultsKey` says how); `nil` for a key of no type.
    func observeChanges(in defaults: UserDefaults, initial: Bool, handler: @escaping @Sendable () -> Void) -> DefaultsObservation? {
        nil
    }
}

/// Keys are the same key when they have the same name: they go in sets and compare as
/// their names do, whatever their value type.
///
/// ```swift
/// let watched: Set<DefaultsKeys> = [.launchCount, .theme]
/// ```
extension DefaultsKeys: Hashable {
    /// Whether two keys have the same name.
    ///
    /// - Parameters:
    ///   - lhs: A key.
    ///   - rhs: Another key.
    /// - Returns: `true` when their names are equal.
    public static func == (lhs: DefaultsKeys, rhs: DefaultsKeys) -> Bool {
        lhs.name == rhs.name
    }

    /// Hashes the key's name.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

/// A typed `UserDefaults` key: a name, the type of its value, and the value read when
/// nothing is stored.
///
/// ```swift
/// let launchCount = DefaultsKey<Int>("launchCount", default: 0)
/// let owner = DefaultsKey<User?>("owner")                 // default nil
/// let theme = DefaultsKey<Theme>("app.theme", default: .system)   // a String-backed enum
/// let profile = DefaultsKey<Profile?>("profile", legacy: .json)  // reads old JSON blobs
/// ```
///
/// Values are stored as plist-native trees (see `UserDefaults.encode(_:forKey:)`): a
/// struct as a dictionary, an enum with a raw value as that raw value. Names may contain
/// dots. For an optional `Value`, storing `nil` removes the key.
public final class DefaultsKey<Value: Codable & Sendable>: DefaultsKeys, @unchecked Sendable {
    // Every stored property is a `let` of a Sendable type.

    /// The value read when nothing is stored, or when what is stored does not decode;
    /// for a key made with a closure, what the closure gives at this read.
    public var defaultValue: Value { makeDefault() }

    private let makeDefault: @Sendable () -> Value

    /// The format of values that an older version of the app, or another library, stored
    /// as a blob; `nil` reads the native form only.
    public let legacyFormat: LegacyFormat?

    /// What a read does when a stored dictionary lacks fields the value's type requires.
    public let missingFields: MissingFields

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - name: The key's name in `UserDefaults`; dots are allowed.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - legacy: The blob format to fall back to when the stored value is not in the
    ///     native form; the next write replaces it with the native form.
    ///   - missingFields: What a read does when the stored value lacks fields the type
    ///     requires: `.fromDefault` takes them from `defaultValue`, for a settings struct
    ///     that gains fields in a new version of the app.
    public init(_ name: String, default defaultValue: Value, legacy: LegacyFormat? = nil, missingFields: MissingFields = .fail) {
        self.makeDefault = { defaultValue }
        self.legacyFormat = legacy
        self.missingFields = missingFields
        super.init(name: name)
    }

    /// Creates a key whose default is worked out at each read where nothing is stored:
    /// the current date, a value from the environment.
    ///
    /// ```swift
    /// let firstLaunch = DefaultsKey<Date>("firstLaunch") { Date() }
    /// ```
    ///
    /// `register(_:)` registers the value the closure gives when it is called.
    ///
    /// - Parameters:
    ///   - name: The key's name in `UserDefaults`; dots are allowed.
    ///   - legacy: The blob format stored values may be in.
    ///   - missingFields: What a read does when the stored value lacks fields the type
    ///     requires.
    ///   - makeDefault: Gives the default; called at each read that needs it, on the
    ///     reading thread.
    public init(
        _ name: String, legacy: LegacyFormat? = nil, missingFields: MissingFields = .fail, default makeDefault: @escaping @Sendable () -> Value
    ) {
        self.makeDefault = makeDefault
        self.legacyFormat = legacy
        self.missingFields = missingFields
        super.init(name: name)
    }

    /// Creates a key for an optional value, whose default is `nil`.
    ///
    /// - Parameters:
    ///   - name: The key's name in `UserDefaults`; dots are allowed.
    ///   - legacy: The blob format to fall back to when the stored value is not in the
    ///     native form.
    public init(_ name: String, legacy: LegacyFormat? = nil) where Value: DefaultsOptional {
        self.makeDefault = { nil }
        self.legacyFormat = legacy
        self.missingFields = .fail
        super.init(name: name)
    }

    override func observeChanges(in defaults: UserDefaults, initial: Bool, handler: @escaping @Sendable () -> Void) -> DefaultsObservation? {
        defaults.observeChanges(of: self, initial: initial, handler: handler)
    }

    override func registrationValue() throws -> Any? {
        try KeyValueEncoder().encodeForUserDefaults(defaultValue)
    }
}

extension DefaultsKey: ExpressibleByStringLiteral, ExpressibleByUnicodeScalarLiteral,
    ExpressibleByExtendedGraphemeClusterLiteral
where Value: DefaultsOptional {
    /// Creates a key for an optional value from its name: `let name: DefaultsKey<String?> = "name"`.
    ///
    /// - Parameter value: The key's name.
    public convenience init(stringLiteral value: String) {
        self.init(value)
    }
}

/// A blob format that other libraries, or older versions of an app, used to store
/// `Codable` values in `UserDefaults`.
///
/// A key with a legacy format reads a stored object of the blob's kind (`Data` for
/// `.json` and `.propertyList`, a `String` for `.jsonString`) as the blob first — the
/// value itself, or the value wrapped in a one-element array, as libraries stored
/// top-level values that older encoders refused (`PropertyListEncoder().encode([value])`)
/// — and anything else in the native form. `Data` that parses as a blob of the format
/// but holds neither is never taken for the value's own bytes: the read throws (the
/// subscript reports it and gives the default). Reading never rewrites the stored value;
/// the next write through the package stores the native form. A write of a value whose
/// native form would read back as something else — a blob that decodes to another value
/// (a `String` key with `.jsonString` storing `"\"Bo\""`), or `Data` that parses as a
/// blob of the format — throws `EncodingError.invalidValue`.
public enum LegacyFormat: Sendable, Equatable {
    /// `Data` made by `JSONEncoder` with its default strategies.
    case json
    /// `Data` made by `PropertyListEncoder`.
    case propertyList
    /// A `String` holding JSON text, as some libraries store it.
    case jsonString

    /// Decodes a stored object: as the legacy blob first where it is of the blob's kind
    /// (Data for `.json` and `.propertyList`, a String for `.jsonString`), since a Data or
    /// String type would otherwise read the blob's own bytes or text — the value, or the
    /// value wrapped in a one-element array; otherwise in the native form. Writes refuse
    /// the values this would misread (`checkUnambiguous`).
    ///
    /// - Throws: The blob's error when the object is of its kind and neither form
    ///   decodes (it says more), and when it is `Data` that parses as a blob of the
    ///   format; the native form's error otherwise.
    static func decodeStored<Value: Decodable>(_ type: Value.Type, from stored: Any, legacy: LegacyFormat?) throws -> Value {
        guard let legacy, legacy.isOfItsKind(stored) else { return try KeyValueDecoder().decodeFromUserDefaults(Value.self, from: stored) }
        // Apart, so that a read in the native form makes no generic optional of `Value`.
        return try legacy.decodeOfItsKind(Value.self, from: stored)
    }

    /// `decodeStored(_:from:legacy:)` of an object of this format's kind.
    private func decodeOfItsKind<Value: Decodable>(_ type: Value.Type, from stored: Any) throws -> Value {
        var legacyError: (any Error)?
        do {
            if let value = try decode(Value.self, from: stored) { return value }
        } catch {
            legacyError = error
            if let wrapped = try? decode([Value].self, from: stored), wrapped.count == 1 { return wrapped[0] }
            // A blob, but not of this value: its bytes are not the value.
            if isBlob(stored) { throw error }
        }
        do {
            return try KeyValueDecoder().decodeFromUserDefaults(Value.self, from: stored)
        } catch {
            throw legacyError ?? error
        }
    }

    /// Whether `object` is `Data` that parses in this format (`.json`, `.propertyList`):
    /// a blob, whatever it holds. A `String` for `.jsonString` is read natively when it
    /// is not the value's JSON: any text is a string's own.
    func isBlob(_ object: Any) -> Bool {
        guard let data = object as? Data else { return false }
        switch self {
        case .json: return (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) != nil
        case .propertyList:
            // What `PropertyListEncoder` writes, binary or XML; any bare word is an
            // OpenStep property list, and no encoder's blob.
            let head = data.prefix(64).drop { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
            let isEncoderFormat =
                head.starts(with: Array("bplist".utf8)) || head.starts(with: Array("<?xml".utf8)) || head.starts(with: Array("<plist".utf8))
                || head.starts(with: Array("<!DOCTYPE plist".utf8))
            return isEncoderFormat && (try? PropertyListReader.propertyList(from: data)) != nil
        case .jsonString: return false
        }
    }

    /// Whether `object` is of the kind this format's blobs are.
    func isOfItsKind(_ object: Any) -> Bool {
        switch self {
        case .json, .propertyList: return object is Data
        case .jsonString: return object is String
        }
    }

    /// Throws when `value`, stored as `tree`, would read back through this format as
    /// another value.
    ///
    /// - Throws: `EncodingError.invalidValue`.
    func checkUnambiguous<Value: Decodable>(_ value: Value, storedAs tree: Any) throws {
        guard isOfItsKind(tree) else { return }
        let misread = (try? decode(Value.self, from: tree)) ?? (try? decode([Value].self, from: tree)).flatMap { $0.count == 1 ? $0[0] : nil }
        if let misread {
            if let equal = (value as? any Equatable).map({ $0.isEqual(to: misread) }), equal { return }
        } else if !isBlob(tree) {
            return
        }
        throw EncodingError.invalid(
            value, "Cannot store this value under a key declared with the legacy format .\(self): it would read back as a legacy blob",
            at: [])
    }

    /// Decodes `object` in this format, or returns `nil` when it is not in this format
    /// at all (a `String` for `.json`, say).
    func decode<Value: Decodable>(_ type: Value.Type, from object: Any) throws -> Value? {
        switch self {
        case .json:
            guard let data = object as? Data else { return nil }
            return try JSONDecoder().decode(Value.self, from: data)
        case .propertyList:
            guard let data = object as? Data else { return nil }
            let decoder = PropertyListDecoder()
            // The tree too, so that a `PropertyListValue` in it keeps its kind.
            decoder.userInfo[.propertyListTree] = (try? PropertyListReader.propertyList(from: data)).map(PropertyListTree.init)
            return try decoder.decodeChecked(Value.self, from: data)
        case .jsonString:
            guard let string = object as? String else { return nil }
            return try JSONDecoder().decode(Value.self, from: Data(string.utf8))
        }
    }
}

/// `Optional`, for keys whose default is `nil` and where storing `nil` removes the key.
/// Only `Optional` conforms; the protocol adds no member to it.
public protocol DefaultsOptional: ExpressibleByNilLiteral {}

/// `Optional` as the value of a key whose default is `nil`.
extension Optional: DefaultsOptional {}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
