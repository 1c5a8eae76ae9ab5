// The XML of a suite's file, written by the package as Foundation's own reader reads it
// (CoreFoundation's, on Linux), and the file's top-level entries found as written.
//
// Why not Foundation's writers: `PropertyListEncoder` writes dates before the Gregorian
// reform in the Julian calendar while every reader reads them as proleptic Gregorian, so
// a date of year 69 read back days away; and any writer handed a Swift `[String: Any]`
// merges keys that are canonically equal but spelled with other scalars (a precomposed
// and a decomposed "é"), which Foundation's own suite writer keeps apart. So values a
// change writes are written here, and the file's other entries are copied byte for byte.
//
// Compiled on Linux only, with the file it writes (`SuiteFile`).

import KeyValueCoders

#if os(Linux)
import Foundation

enum PropertyListXML {
    /// One entry of a document's top-level dictionary.
    struct Entry {
        /// The key, as written (entities decoded), scalar for scalar.
        let key: String
        /// What the entry holds.
        let value: Value
    }

    /// A value to write: a tree, or the bytes of a value element as a file held them
    /// (an array, not `Data`: a file object keeps them, and `Data` keeps its storage
    /// pointer in spare bits, where LeakSanitizer takes it for leaked).
    enum Value {
        case tree(Any)
        case verbatim([UInt8])
    }

    /// A complete XML property list whose top-level dictionary holds `entries`, in order.
    /// - Throws: `Unwritable` for a value that is not a property list.
    static func document(_ entries: [Entry]) throws(Unwritable) -> Data {
        var out = Output()
        out.bytes.reserveCapacity(4_096)
        out.append(header)
        out.append("<dict>\n")
        for entry in entries {
            out.append("\t<key>")
            out.append(escaping: entry.key)
            out.append("</key>\n\t")
            switch entry.value {
            case .tree(let tree): try out.append(tree, indent: 1, path: [entry.key])
            case .verbatim(let bytes): out.bytes.append(contentsOf: bytes)
            }
            out.append("\n")
        }
        out.append("</dict>\n</plist>\n")
        return Data(out.bytes)
    }

    /// Why a tree cannot be written: a value of no property-list type, with where it is.
    struct Unwritable: Error, CustomStringConvertible {
        let path: [String]
        let found: String
        var description: String { "\(found) at \(path.joined(separator: ".")) is not a property list value" }
    }

    private static let header: StaticString = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    // MARK: - Writing values

    /// The bytes of a document as they are written.
    private struct Output {
        var bytes: [UInt8] = []

        mutating func append(_ text: StaticString) {
            bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func append(_ text: String) {
            bytes.append(contentsOf: text.utf8)
        }

        /// `text` with `&`, `<` and `>` escaped; every other scalar as it is (the reader
        /// keeps a carriage return, a tab or a noncharacter as written).
        mutating func append(escaping text: String) {
            let special: (UInt8) -> Bool = { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }
            guard text.utf8.contains(where: special) else { return bytes.append(contentsOf: text.utf8) }
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "&"): append("&amp;")
                case UInt8(ascii: "<"): append("&lt;")
                case UInt8(ascii: ">"): append("&gt;")
                default: bytes.append(byte)
                }
            }
        }

        mutating func indent(_ count: Int) {
            bytes.append(contentsOf: repeatElement(0x09, count: count))
        }

        mutating func append(_ value: Any, indent level: Int, path: @autoclosure () -> [String]) throws(Unwritable) {
            switch TreeValue(value) {
            case .string(let string)?:
                append("<string>")
                append(escaping: string)
                append("</string>")
            case .number(let number)?:
                switch number {
                case .bool(let bool): append(bool ? "<true/>" : "<false/>")
                case .signed(let int, _): element("integer", String(int))
                case .unsigned(let uint, _): element("integer", String(uint))
                case .double(let double): element("real", PropertyListXML.real(double))
                case .float(let float): element("real", PropertyListXML.real(Double(float)))
                case .decimal, .wide, .text: throw Unwritable(path: path(), found: "\(number.type)")
                }
            case .date(let date)?:
                guard let text = PropertyListXML.dateText(date) else {
                    throw Unwritable(path: path(), found: "Date \(date.timeIntervalSinceReferenceDate)")
                }
                element("date", text)
            case .data(let data)?:
                element("data", data.base64EncodedString())
            case .dictionary(let dictionary)?:
                guard !dictionary.isEmpty else { return append("<dict/>") }
                append("<dict>\n")
                // Sorted, as Foundation writes them: the same tree makes the same file.
                for key in dictionary.keys.sorted() {
                    indent(level + 1)
                    append("<key>")
                    append(escaping: key)
                    append("</key>\n")
                    indent(level + 1)
                    try append(dictionary[key]!, indent: level + 1, path: path() + [key])
                    append("\n")
                }
                indent(level)
                append("</dict>")
            case .array(let array)?:
                guard !array.isEmpty else { return append("<array/>") }
                append("<array>\n")
                for (index, element) in array.enumerated() {
                    indent(level + 1)
                    try append(element, indent: level + 1, path: path() + ["[\(index)]"])
                    append("\n")
                }
                indent(level)
                append("</array>")
            case nil:
                throw Unwritable(path: path(), found: "\(type(of: value))")
            }
        }

        private mutating func element(_ name: StaticString, _ text: String) {
            append("<")
            append(name)
            append(">")
            append(text)
            append("</")
            append(name)
            append(">")
        }
    }

    /// The shortest text that reads back to the same `Double`, in the words Foundation's
    /// reader knows for the special values.
    fileprivate static func real(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
        return value.description
    }

    /// A whole-second date as `yyyy-MM-ddTHH:mm:ssZ` in the proleptic Gregorian calendar
    /// (years before 1 as 0, -1, …), which is how Foundation's readers convert it back;
    /// `nil` for a date with a fraction of a second or beyond four-digit years
    /// (`StoredEncodingForm.wholeSecondDates`; the stored form writes those as numbers).
    static func dateText(_ date: Date) -> String? {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.rounded(.down) == seconds, StoredEncodingForm.wholeSecondDates.contains(seconds) else { return nil }
        // Days and seconds since 1970-01-01, then the civil date of the day (the
        // days-from-civil inverse of H. Hinnant's "chrono-compatible low-level date
        // algorithms").
        let unix = Int64(seconds) + 978_307_200
        let (days, second) = (unix.floorDivided(by: 86_400), unix.floorModulo(86_400))
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(second / 3_600, 2)):"
            + "\(padded(second / 60 % 60, 2)):\(padded(second % 60, 2))Z"
    }

    // MARK: - Reading entries

    /// The top-level entries of an XML property list whose root is a dictionary, each key
    /// as written and each value as the bytes of its element; `nil` for anything else
    /// (a binary plist, a root of another type, markup this scan does not know), for
    /// which a write falls back to writing every value anew.
    static func entries(in data: Data) -> [Entry]? {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> [Entry]? in
            var scanner = Scanner(bytes: buffer)
            guard scanner.skipProlog(), scanner.consume("<plist") else { return nil }
            guard scanner.skip(past: ">") else { return nil }
            scanner.skipMisc()
            if scanner.consume("<dict/>") { return [] }
            guard scanner.consume("<dict>") else { return nil }
            var entries: [Entry] = []
            while true {
                scanner.skipMisc()
                if scanner.consume("</dict>") { break }
                guard scanner.consume("<key>"), let key = scanner.text(until: "</key>") else { return nil }
                scanner.skipMisc()
                guard let range = scanner.element() else { return nil }
                entries.append(Entry(key: key, value: .verbatim(Array(buffer[range]))))
            }
            scanner.skipMisc()
            guard scanner.consume("</plist>") else { return nil }
            scanner.skipMisc()
            return scanner.atEnd ? entries : nil
        }
    }

    /// A forward scan of XML bytes.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        func starts(with word: StaticString, at position: Int) -> Bool {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return (0..<count).allSatisfy { bytes[position + $0] == word.utf8Start[$0] }
        }

        mutating func consume(_ word: StaticString) -> Bool {
            guard starts(with: word, at: index) else { return false }
            index += word.utf8CodeUnitCount
            return true
        }

        /// Moves past the next `terminator`; `false` when there is none.
        mutating func skip(past terminator: StaticString) -> Bool {
            while !atEnd {
                if consume(terminator) { return true }
                index += 1
            }
            return false
        }

        mutating func skipWhitespace() {
            while !atEnd, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Whitespace and comments.
        mutating func skipMisc() {
            while true {
                skipWhitespace()
                guard consume("<!--"), skip(past: "-->") else { return }
            }
        }

        /// A byte-order mark, the XML declaration, the document type, comments.
        mutating func skipProlog() -> Bool {
            _ = consume("\u{FEFF}")
            while true {
                skipMisc()
                if consume("<?") {
                    guard skip(past: "?>") else { return false }
                } else if consume("<!DOCTYPE") {
                    guard skip(past: ">") else { return false }
                } else {
                    return true
                }
            }
        }

        /// Text up to `terminator`, entities decoded; `nil` for markup inside it (a
        /// section this scan does not read) or an entity it does not know.
        mutating func text(until terminator: StaticString) -> String? {
            var scalars: [UInt8] = []
            while !atEnd {
                if consume(terminator) {
                    // Not `String(validating:as:)`: macOS 15 and iOS 18 only.
                    return String(bytes: scalars, encoding: .utf8)
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "<") { return nil }
                if byte == UInt8(ascii: "&") {
                    guard let end = (index..<min(bytes.count, index + 12)).first(where: { bytes[$0] == UInt8(ascii: ";") }) else { return nil }
                    let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                    guard let scalar = Self.entity(name) else { return nil }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                    index = end + 1
                    continue
                }
                scalars.append(byte)
                index += 1
            }
            return nil
        }

        private static func entity(_ name: String) -> Unicode.Scalar? {
            switch name {
            case "amp": return "&"
            case "lt": return "<"
            case "gt": return ">"
            case "quot": return "\""
            case "apos": return "'"
            default:
                let number: UInt32?
                if name.hasPrefix("#x") {
                    number = UInt32(name.dropFirst(2), radix: 16)
                } else if name.hasPrefix("#") {
                    number = UInt32(name.dropFirst(), radix: 10)
                } else {
                    number = nil
                }
                return number.flatMap(Unicode.Scalar.init)
            }
        }

        /// The byte range of the element that starts here, through its closing tag;
        /// `nil` when the markup is not balanced.
        mutating func element() -> Range<Int>? {
            let start = index
            guard !atEnd, bytes[index] == UInt8(ascii: "<") else { return nil }
            var depth = 0
            while !atEnd {
                if consume("<!--") {
                    guard skip(past: "-->") else { return nil }
                    continue
                }
                if consume("<![CDATA[") {
                    guard skip(past: "]]>") else { return nil }
                    continue
                }
                guard bytes[index] == UInt8(ascii: "<") else {
                    index += 1
                    continue
                }
                let closing = starts(with: "</", at: index)
                guard skip(past: ">") else { return nil }
                let selfClosing = bytes[index - 2] == UInt8(ascii: "/")
                if closing {
                    depth -= 1
                } else if !selfClosing {
                    depth += 1
                }
                if depth < 0 { return nil }
                if depth == 0 { return start..<index }
            }
            return nil
        }
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        self - floorDivided(by: divisor) * divisor
    }
}
#endif
