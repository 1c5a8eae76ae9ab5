// A suite's value read as a configuration value of one type, by the package's rules:
// numbers exactly (an integer from any number that is a whole one), strings as launch
// arguments arrive read by their grammar (`"42"`, `"1e3"`, `"YES"`), a Bool from
// `true`/`false`, 0/1 or the words swift-configuration's environment provider takes.
// Anything else — a date, a dictionary at a leaf, a number asked for as a string — is a
// mismatch of that one lookup.

#if SwiftConfiguration
import Configuration
import DefaultsCoder
import Foundation

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
enum ConfigConversion {
    /// `object` as a value of `type`.
    ///
    /// - Throws: `DefaultsSuiteProvider.TypeMismatch` naming `key` when it is not one.
    static func content(of object: Any, as type: ConfigType, key: String) throws -> ConfigContent {
        let content: ConfigContent?
        switch type {
        case .string: content = string(object).map(ConfigContent.string)
        case .int: content = int(object).map(ConfigContent.int)
        case .double: content = double(object).map(ConfigContent.double)
        case .bool: content = bool(object).map(ConfigContent.bool)
        case .bytes: content = bytes(object).map(ConfigContent.bytes)
        case .stringArray: content = array(object, string).map(ConfigContent.stringArray)
        case .intArray: content = array(object, int).map(ConfigContent.intArray)
        case .doubleArray: content = array(object, double).map(ConfigContent.doubleArray)
        case .boolArray: content = array(object, bool).map(ConfigContent.boolArray)
        case .byteChunkArray: content = array(object, bytes).map(ConfigContent.byteChunkArray)
        }
        guard let content else { throw DefaultsSuiteProvider.TypeMismatch(key: key, type: type, found: describe(object)) }
        return content
    }

    private static func string(_ object: Any) -> String? {
        guard isScalar(object) else { return nil }
        return try? UserDefaults.decodeStoredValue(String.self, from: object)
    }

    private static func int(_ object: Any) -> Int? {
        guard isScalar(object) else { return nil }
        return try? UserDefaults.decodeStoredValue(Int.self, from: object)
    }

    private static func double(_ object: Any) -> Double? {
        guard isScalar(object) else { return nil }
        return try? UserDefaults.decodeStoredValue(Double.self, from: object)
    }

    private static func bool(_ object: Any) -> Bool? {
        guard isScalar(object) else { return nil }
        if let bool = try? UserDefaults.decodeStoredValue(Bool.self, from: object) { return bool }
        guard !(object is String) else { return nil }
        switch try? UserDefaults.decodeStoredValue(Int.self, from: object) {
        case 0?: return false
        case 1?: return true
        default: return nil
        }
    }

    private static func bytes(_ object: Any) -> [UInt8]? {
        (object as? Data).map { [UInt8]($0) }
    }

    private static func array<Element>(_ object: Any, _ element: (Any) -> Element?) -> [Element]? {
        guard !(object is String), !(object is Data), let array = object as? [Any] else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for item in array {
            guard let converted = element(item) else { return nil }
            elements.append(converted)
        }
        return elements
    }

    /// Whether `object` is a string, number or Boolean: neither a date, data, nor a
    /// container.
    private static func isScalar(_ object: Any) -> Bool {
        object is String || object is NSNumber
    }

    /// What the suite holds, for a mismatch's message.
    private static func describe(_ object: Any) -> String {
        switch object {
        case is Date: return "a date"
        case is Data: return "data"
        case is String: return "a string"
        case is [String: Any]: return "a dictionary"
        case is [Any]: return "an array"
        case is NSNumber: return (try? UserDefaults.decodeStoredValue(Bool.self, from: object)) != nil ? "a Boolean" : "a number"
        default: return "a \(type(of: object))"
        }
    }
}
#endif
