// Settings that survive a model change: a struct stored by an older version of the app
// lacks the fields a newer version added, and no longer decodes. A key that opts in
// takes each missing field from its default value, encoded: the fields the suite holds
// win, nothing is written by the read, and the next write stores the whole value.

import DefaultsCoderStorage
import Foundation
import KeyValueCoders

/// What a read through a typed key does when a stored dictionary lacks fields the value's
/// type requires (a field added in a newer version of the app).
public enum MissingFields: Sendable, Equatable {
    /// The read fails, as Foundation's decoders do: `read(_:)` throws `keyNotFound`,
    /// and the subscript and `@UserDefault` report it and give the key's default.
    case fail
    /// Each field the type requires and the stored value lacks is taken from the key's
    /// default value at the same path; every stored field is kept. The stored value is
    /// not rewritten by the read: the next write through the package stores the whole
    /// value. A field that is optional (decoded with `decodeIfPresent`) and absent stays
    /// absent. What this cannot mend — a field renamed, or stored with another type — still
    /// fails: write a migration (`DefaultsMigration`) for it.
    case fromDefault
}

extension MissingFields {
    /// The most fields one read fills: each costs a decode of the whole value.
    private static let mostFilled = 1024

    /// Decodes `stored` for `key`, filling the fields the type requires and `stored`
    /// lacks from the key's default value.
    ///
    /// - Throws: The first error that filling cannot mend.
    static func decode<Value>(_ stored: Any, for key: DefaultsKey<Value>) throws -> Value {
        var current = stored
        var defaultTree: Any??
        for _ in 0...mostFilled {
            do {
                return try LegacyFormat.decodeStored(Value.self, from: current, legacy: key.legacyFormat)
            } catch DecodingError.keyNotFound(let missing, let context) {
                if defaultTree == nil { defaultTree = .some(try? KeyValueEncoder().encodeForUserDefaults(key.defaultValue)) }
                let path = context.codingPath + [missing]
                guard let tree = defaultTree ?? nil, let field = value(at: path[...], in: tree),
                    let filled = setting(field, at: path[...], in: current)
                else { throw DecodingError.keyNotFound(missing, context) }
                current = filled
            }
        }
        return try LegacyFormat.decodeStored(Value.self, from: current, legacy: key.legacyFormat)
    }

    /// The value at `path` in `tree`: a dictionary's entry by key, an array's element by
    /// index.
    private static func value(at path: ArraySlice<any CodingKey>, in tree: Any) -> Any? {
        guard let step = path.first else { return tree }
        if let dictionary = tree as? [String: Any], let next = dictionary[step.stringValue] {
            return value(at: path.dropFirst(), in: next)
        }
        if let array = tree as? [Any], let index = step.intValue, array.indices.contains(index) {
            return value(at: path.dropFirst(), in: array[index])
        }
        return nil
    }

    /// `tree` with `field` at `path`, whose last step is a key its dictionary lacks;
    /// `nil` when the path does not lead there.
    private static func setting(_ field: Any, at path: ArraySlice<any CodingKey>, in tree: Any) -> Any? {
        guard let step = path.first else { return nil }
        if var dictionary = tree as? [String: Any] {
            if path.count == 1 {
                guard dictionary[step.stringValue] == nil else { return nil }
                dictionary[step.stringValue] = field
                return dictionary
            }
            guard let next = dictionary[step.stringValue], let changed = setting(field, at: path.dropFirst(), in: next) else { return nil }
            dictionary[step.stringValue] = changed
            return dictionary
        }
        if var array = tree as? [Any], path.count > 1, let index = step.intValue, array.indices.contains(index) {
            guard let changed = setting(field, at: path.dropFirst(), in: array[index]) else { return nil }
            array[index] = changed
            return array
        }
        return nil
    }
}
