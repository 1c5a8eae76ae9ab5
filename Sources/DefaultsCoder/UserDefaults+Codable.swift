//
//  UserDefaults+Codable.swift
//  DefaultsCoder
//

import Foundation

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
/// On platforms without `cfprefsd` (Linux, Windows) Foundation writes the suite's file
/// only when `synchronize()` is called, so `encode(_:forKey:)` calls it after each
/// write: each write then costs one rewrite of that suite's file.
extension UserDefaults {

    /// Encodes a value and stores it under `key`; encoding `Optional.none` removes the key.
    /// Observers of the key (`observe(_:handler:)`) hear of the change.
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
        if let problem = StoredEncodingForm.shared.problem(withKey: key) {
            throw EncodingError.invalid(value, problem, at: [])
        }
        let stored = try encoder.encodeForUserDefaults(value)
        var written: WrittenTree?
        try writeGuarded {
            switch stored {
            case .value(let tree): set(FoundationCollections.make(tree), forKey: key)
            case .removal: removeObject(forKey: key)
            }
        } whileLocked: {
            if case .value(let tree) = stored {
                written = WrittenTree(defaults: self, tree: tree, write: ObservationRegistry.shared.recordWrite(of: key))
            }
        }
        announceChange(of: key, written: written)
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

    /// Checks the suite's file, runs `write`, and writes the suite to disk where
    /// Foundation would not do it by itself.
    ///
    /// Package writes to one file take turns: Foundation rewrites the file in place, and
    /// another write's check must not read it half written (the stress test saw a
    /// zero-length file without this). `whileLocked` runs after the write, still in turn,
    /// and only where writes take turns: it is how observers learn that no other package
    /// write of the file came between this one and them.
    func writeGuarded(_ write: () -> Void, whileLocked: () -> Void = {}) throws {
        #if canImport(Darwin)
        write()
        #else
        guard let file = suiteFile else {
            write()
            synchronize()
            return
        }
        try file.withWriteLock {
            if let problem = file.problem() { throw problem }
            write()
            synchronize()
            file.written()
            whileLocked()
        }
        #endif
    }
}
