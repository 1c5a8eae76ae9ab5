import Foundation
import KeyValueCoders

/// Stores `Codable` values in `UserDefaults` as readable property-list values, and
/// reads them back unchanged.
///
/// ```swift
/// try UserDefaults.standard.encode(User(id: 1, name: "Herbert"), forKey: "owner")
/// // dictionaryRepresentation()["owner"] is ["id": 1, "name": "Herbert"]
/// let owner = try UserDefaults.standard.decode(User.self, forKey: "owner")
/// ```
///
/// The promise: whatever the value, these methods never trap and never store something
/// that reads back different, in this process or the next. What reaches
/// `set(_:forKey:)` is always a valid property list on the running platform; where a
/// property list has no type of its own, the stored form (`StoredForm`) says how the
/// value is written: `nil` inside a collection, `Decimal`, `URL`, wide integers, and on
/// Linux dates with a fraction of a second.
///
/// A value that cannot be stored as it is — a `Decimal.nan`, something a `.custom`
/// strategy made that is not a property list, containers nested deeper than the
/// property list file allows, a key that begins with U+FEFF — throws
/// `EncodingError.invalidValue` naming its path, and the stored value is left as it was.
///
/// On platforms without `cfprefsd` (Linux, Windows) each write replaces the suite's file
/// in one rename, under a lock every process running this package takes (see
/// <doc:TheStorageContract>).
extension UserDefaults {

    /// Encodes a value and stores it under `key`; encoding `Optional.none` removes the key.
    /// Observers of the key (`observe(_:initial:handler:)`) hear of the change.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The defaults key.
    /// - Throws: `EncodingError.invalidValue` with the path of a value that cannot be
    ///   stored, or `UnreadableDefaultsFile` when the suite's file exists but does not
    ///   parse (writing would replace it); nothing is written then.
    public func encode<T: Encodable>(_ value: T, forKey key: String) throws {
        try encode(value, forKey: key, encoder: KeyValueEncoder())
    }

    /// Encodes a value with the given encoder's strategies and stores it under `key`;
    /// encoding `Optional.none` removes the key.
    ///
    /// The encoder's date, data, URL and key strategies apply. Its nil strategy does
    /// not: storage keeps every `nil` in the lossless form described on this extension.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The defaults key.
    ///   - encoder: The encoder whose strategies to use.
    /// - Throws: `EncodingError.invalidValue` with the path of a value that cannot be
    ///   stored, or `UnreadableDefaultsFile`; nothing is written then.
    public func encode<T: Encodable>(_ value: T, forKey key: String, encoder: KeyValueEncoder) throws {
        try store(try encoder.encodeForUserDefaults(value), forKey: key)
    }

    /// Stores a value in the stored form: the one write of a single key.
    package func store(_ tree: Any?, forKey key: String) throws {
        try DefaultsSuite.change([self]) { try $0.set(tree, forKey: key) }
    }

    /// Reads and decodes the value stored under `key`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The defaults key.
    /// - Returns: The value, or `nil` when nothing is stored under `key`.
    /// - Throws: `DecodingError` when the stored value is not a `T` — `"other"` stored
    ///   under a key does not read as `false`; `UnreadableDefaultsFile` when the key is
    ///   absent because the suite's file does not parse.
    public func decode<T: Decodable>(_ type: T.Type = T.self, forKey key: String) throws -> T? {
        try decode(type, forKey: key, decoder: KeyValueDecoder())
    }

    /// Reads and decodes the value stored under `key` with the given decoder's strategies.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The defaults key.
    ///   - decoder: The decoder whose strategies to use.
    /// - Returns: The value, or `nil` when nothing is stored under `key`.
    /// - Throws: `DecodingError` when the stored value is not a `T`;
    ///   `UnreadableDefaultsFile` when the suite's file does not parse.
    public func decode<T: Decodable>(_ type: T.Type = T.self, forKey key: String, decoder: KeyValueDecoder) throws -> T? {
        // `object(forKey:)` only: `url(forKey:)` and the number getters convert silently.
        guard let object = object(forKey: key) else {
            try throwIfFileUnreadable()
            return nil
        }
        return try decoder.decodeFromUserDefaults(type, from: object)
    }

    /// Moves the suite's unreadable file aside (to `NAME.unreadable-DATE-ID.plist` next
    /// to it, a new name each time), so that writes work again, starting from an empty
    /// suite.
    ///
    /// - Returns: Where the file went, or `nil` when there is no unreadable file.
    /// - Throws: `DefaultsSuiteError` when the file cannot be moved.
    @discardableResult
    public func moveUnreadableFileAside() throws -> URL? {
        try DefaultsSuite.of(self).backend.moveUnreadableFileAside(of: self)
    }

    /// Called when a key is absent: an unreadable file reads as an empty suite, so say
    /// that instead of "absent".
    package func throwIfFileUnreadable() throws {
        if let problem = unreadableFile() { throw problem }
    }

    /// The problem with the suite's file, or `nil` when it parses, is absent, or cannot
    /// be located.
    func unreadableFile() -> UnreadableDefaultsFile? {
        DefaultsSuite.of(self).backend.unreadableFile()
    }
}
