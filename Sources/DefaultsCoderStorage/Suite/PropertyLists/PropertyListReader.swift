// The one reader of property-list bytes in the package: suite files, legacy
// `.propertyList` blobs and what migrations read all come through here. Foundation's
// parsers crash on some inputs (a binary plist holding a set, a reference cycle, XML
// nested thousands deep for `PropertyListDecoder`'s recursive parser), so the bytes are
// checked for structure and depth before any parser sees them.

import Foundation
import KeyValueCoders

package enum PropertyListReader {
    /// What a property list must be, beyond one that parses safely.
    package enum Kind {
        /// Any property list: a legacy blob, a migration source.
        case any
        /// One holding a dictionary: a suite's file.
        case dictionary
        /// An `NSKeyedArchiver` archive: a dictionary, whose binary form may hold the
        /// archiver's UID objects, which preferences cannot.
        case archive
    }

    /// Why `data` cannot be read as a property list of `kind`, or `nil` when it can: it
    /// is not empty, its binary structure holds no cycle, set or dangling reference, and
    /// no form of it nests deeper than `NestingGuard.maximumContainers`.
    static func problem(in data: Data, kind: Kind = .any) -> String? {
        if data.isEmpty { return "it is empty" }
        if data.starts(with: "bplist".utf8) {
            return BinaryPropertyListCheck.problem(in: data, dictionaryAtTop: kind != .any, allowingUIDs: kind == .archive)
        }
        return xmlDepthProblem(in: data)
    }

    /// The values of a property list that must hold a dictionary (a suite's file).
    ///
    /// - Throws: `Problem` with the reason it cannot be read.
    static func dictionary(from data: Data) throws(Problem) -> [String: Any] {
        guard let dictionary = try propertyList(from: data, kind: .dictionary) as? [String: Any] else {
            throw Problem(reason: "it does not hold a dictionary")
        }
        return dictionary
    }

    /// The value of a property list of `kind`, checked before it is parsed.
    ///
    /// - Throws: `Problem` with the reason it cannot be read.
    package static func propertyList(from data: Data, kind: Kind = .any) throws(Problem) -> Any {
        if let reason = problem(in: data, kind: kind) { throw Problem(reason: reason) }
        do {
            return try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw Problem(reason: (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)")
        }
    }

    /// Why a property list could not be read.
    package struct Problem: Error, Equatable {
        let reason: String
    }

    /// An XML or OpenStep property list nested deeper than the limit, counted from the
    /// bytes, since the recursive parsers are what would crash on it. In XML the
    /// `<dict>` and `<array>` tags are counted (text cannot hold a raw `<`); in the
    /// OpenStep form, braces and parentheses outside quoted strings.
    private static func xmlDepthProblem(in data: Data) -> String? {
        let deepest = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int in
            let first = bytes.firstIndex { ![UInt8(ascii: " "), 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
            guard let first else { return 0 }
            return bytes[first] == UInt8(ascii: "<") ? xmlDepth(bytes) : openStepDepth(bytes)
        }
        guard deepest > NestingGuard.maximumContainers else { return nil }
        return "it nests containers \(deepest) deep, more than the \(NestingGuard.maximumContainers) a property list may"
    }

    private static func xmlDepth(_ bytes: UnsafeRawBufferPointer) -> Int {
        var depth = 0
        var deepest = 0
        var index = 0
        while index < bytes.count {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: "<") else { continue }
            // `<dict>`, `<array>` open; `</dict>`, `</array>` close; `<dict/>` and
            // `<array/>` are empty and change nothing.
            let closing = index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")
            let start = closing ? index + 2 : index + 1
            let name = tagName(bytes, from: start)
            guard name != .other else { continue }
            let end = start + (name == .dict ? 4 : 5)
            let selfClosing = end < bytes.count && bytes[end] == UInt8(ascii: "/")
            if closing {
                depth -= 1
            } else if !selfClosing {
                depth += 1
                deepest = max(deepest, depth)
            }
        }
        return deepest
    }

    private static func openStepDepth(_ bytes: UnsafeRawBufferPointer) -> Int {
        var depth = 0
        var deepest = 0
        var quoted = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): quoted = true
            case UInt8(ascii: "{"), UInt8(ascii: "("):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: ")"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    private enum Tag { case dict, array, other }

    private static func tagName(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Tag {
        func matches(_ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard start + length <= bytes.count else { return false }
            for offset in 0..<length where bytes[start + offset] != word.utf8Start[offset] { return false }
            let after = start + length
            return after == bytes.count || [UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: " ")].contains(bytes[after])
        }
        if matches("dict") { return .dict }
        if matches("array") { return .array }
        return .other
    }
}

extension PropertyListDecoder {
    /// Decodes a legacy blob after the checked reader has looked at its bytes, so that
    /// no blob on disk can crash or hang the process.
    ///
    /// - Throws: `DecodingError.dataCorrupted` with the reader's reason, or what the
    ///   decoder throws.
    package func decodeChecked<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let reason = PropertyListReader.problem(in: data) {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "Cannot read the property list blob: \(reason)"))
        }
        return try decode(type, from: data)
    }
}
