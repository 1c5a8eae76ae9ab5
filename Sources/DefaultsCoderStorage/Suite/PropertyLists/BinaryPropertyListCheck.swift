// A structural check of a binary property list, run before its bytes reach
// Foundation's parser. Foundation on Linux crashes parsing a binary plist that holds a
// set, and a reference cycle would send any recursive parser into unbounded recursion:
// the suite-file guard must never be what kills the process, whatever is on disk.

import Foundation
import KeyValueCoders

/// Checks the structure of a `bplist00` file without building any of its values.
enum BinaryPropertyListCheck {
    /// Why `data`, which begins with `bplist`, is not a binary property list that a
    /// parser can read safely — holding a dictionary, when `dictionaryAtTop` — or `nil`
    /// when it is one.
    /// With `allowingUIDs`, the keyed archiver's UID objects pass (an `NSKeyedArchiver`
    /// archive); preferences cannot hold them.
    static func problem(in data: Data, dictionaryAtTop: Bool = true, allowingUIDs: Bool = false) -> String? {
        let bytes = [UInt8](data)
        do {
            var reader = try Reader(bytes)
            reader.allowsUIDs = allowingUIDs
            try reader.checkTop(dictionary: dictionaryAtTop)
            return nil
        } catch let failure as Failure {
            return failure.reason
        } catch {
            return "\(error)"
        }
    }

    private struct Failure: Error {
        let reason: String
    }

    private struct Reader {
        let bytes: [UInt8]
        var allowsUIDs = false
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        /// 0: not seen, 1: being checked (a cycle if met again), 2: checked.
        var state: [UInt8]

        init(_ bytes: [UInt8]) throws {
            self.bytes = bytes
            guard bytes.count >= 8, bytes[0..<7].elementsEqual("bplist0".utf8) else {
                throw Failure(reason: "it is not a binary property list of a known version")
            }
            guard bytes.count >= 8 + 32 else { throw Failure(reason: "its binary property list is truncated") }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Self.bigEndian(bytes[(trailer + 8)..<(trailer + 16)])
            let top = Self.bigEndian(bytes[(trailer + 16)..<(trailer + 24)])
            let table = Self.bigEndian(bytes[(trailer + 24)..<(trailer + 32)])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                let count, let top, let table, count > 0, top < count,
                table >= 8, table <= UInt64(trailer),
                count <= (UInt64(trailer) - table) / UInt64(offsetSize)
            else {
                throw Failure(reason: "its trailer is damaged")
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
            state = [UInt8](repeating: 0, count: objectCount)
        }

        /// A big-endian unsigned integer, or `nil` when it does not fit in 63 bits.
        private static func bigEndian(_ slice: ArraySlice<UInt8>) -> UInt64? {
            var value: UInt64 = 0
            for byte in slice {
                guard value >> 55 == 0 else { return nil }
                value = value << 8 | UInt64(byte)
            }
            return value <= UInt64(Int.max) ? value : nil
        }

        private func integer(at position: Int, size: Int) throws -> Int {
            guard position >= 0, size > 0, position + size <= bytes.count,
                let value = Self.bigEndian(bytes[position..<(position + size)])
            else {
                throw Failure(reason: "an offset runs past the end of the file")
            }
            return Int(value)
        }

        private func offset(of object: Int) throws -> Int {
            let offset = try integer(at: offsetTable + object * offsetSize, size: offsetSize)
            guard offset >= 8, offset < offsetTable else { throw Failure(reason: "an object lies outside the object table") }
            return offset
        }

        /// Checks every object reachable from the top one, depth first, without
        /// recursion: the walk keeps its own stack, so a hostile file cannot exhaust the
        /// thread's.
        mutating func checkTop(dictionary: Bool) throws {
            let position = try offset(of: topObject)
            guard !dictionary || bytes[position] >> 4 == 0xD else { throw Failure(reason: "it does not hold a dictionary") }
            var stack: [(object: Int, depth: Int, children: [Int], next: Int)] = []
            try enter(topObject, depth: 1, onto: &stack)
            while let last = stack.indices.last {
                if stack[last].next < stack[last].children.count {
                    let child = stack[last].children[stack[last].next]
                    stack[last].next += 1
                    try enter(child, depth: stack[last].depth + 1, onto: &stack)
                } else {
                    state[stack[last].object] = 2
                    stack.removeLast()
                }
            }
        }

        private mutating func enter(_ object: Int, depth: Int, onto stack: inout [(object: Int, depth: Int, children: [Int], next: Int)]) throws {
            guard object < objectCount else { throw Failure(reason: "a reference points past the last object") }
            switch state[object] {
            case 2: return
            case 1: throw Failure(reason: "it refers to itself")
            default: break
            }
            guard depth <= NestingGuard.maximumContainers else {
                throw Failure(reason: "it nests deeper than \(NestingGuard.maximumContainers) levels")
            }
            state[object] = 1
            stack.append((object, depth, try children(of: object), 0))
        }

        /// The element count of the object at `position` and where its contents begin.
        private func count(at position: Int) throws -> (count: Int, contents: Int) {
            let low = Int(bytes[position] & 0x0F)
            guard low == 0x0F else { return (low, position + 1) }
            guard position + 1 < offsetTable, bytes[position + 1] >> 4 == 0x1 else {
                throw Failure(reason: "a length is damaged")
            }
            let size = 1 << Int(bytes[position + 1] & 0x0F)
            guard size <= 8 else { throw Failure(reason: "a length is damaged") }
            return (try integer(at: position + 2, size: size), position + 2 + size)
        }

        private func requireInTable(_ end: Int) throws {
            guard end <= offsetTable else { throw Failure(reason: "an object runs past the object table") }
        }

        /// Checks the object itself and returns the objects it refers to.
        private func children(of object: Int) throws -> [Int] {
            let position = try offset(of: object)
            let marker = bytes[position]
            switch marker >> 4 {
            case 0x0:
                guard marker == 0x08 || marker == 0x09 else { throw Failure(reason: "it holds a null or an unknown object") }
            case 0x1:
                guard marker & 0x0F <= 4 else { throw Failure(reason: "an integer is damaged") }
                try requireInTable(position + 1 + (1 << Int(marker & 0x0F)))
            case 0x2:
                guard marker == 0x22 || marker == 0x23 else { throw Failure(reason: "a real number is damaged") }
                try requireInTable(position + 1 + (1 << Int(marker & 0x0F)))
            case 0x3:
                guard marker == 0x33 else { throw Failure(reason: "a date is damaged") }
                try requireInTable(position + 9)
            case 0x4, 0x5:
                let (count, contents) = try count(at: position)
                guard contents <= offsetTable, count <= offsetTable - contents else { throw Failure(reason: "a string or data runs past the object table") }
            case 0x6:
                let (count, contents) = try count(at: position)
                guard contents <= offsetTable, count <= (offsetTable - contents) / 2 else { throw Failure(reason: "a string runs past the object table") }
            case 0xA:
                let (count, contents) = try count(at: position)
                guard contents <= offsetTable, count <= (offsetTable - contents) / referenceSize else { throw Failure(reason: "an array is damaged") }
                return try (0..<count).map { try integer(at: contents + $0 * referenceSize, size: referenceSize) }
            case 0xD:
                let (count, contents) = try count(at: position)
                guard contents <= offsetTable, count <= (offsetTable - contents) / (2 * referenceSize) else { throw Failure(reason: "a dictionary is damaged") }
                var references: [Int] = []
                references.reserveCapacity(2 * count)
                for index in 0..<count {
                    let key = try integer(at: contents + index * referenceSize, size: referenceSize)
                    guard key < objectCount else { throw Failure(reason: "a reference points past the last object") }
                    let keyMarker = bytes[try offset(of: key)] >> 4
                    guard keyMarker == 0x5 || keyMarker == 0x6 else { throw Failure(reason: "a dictionary key is not a string") }
                    references.append(key)
                    references.append(try integer(at: contents + (count + index) * referenceSize, size: referenceSize))
                }
                return references
            case 0xC:
                throw Failure(reason: "it holds a set, which preferences cannot")
            case 0x8:
                guard allowsUIDs else { throw Failure(reason: "it holds a keyed archiver UID, which preferences cannot") }
                try requireInTable(position + 2 + Int(marker & 0x0F))
                return []
            default:
                throw Failure(reason: "it holds an object of unknown type")
            }
            return []
        }
    }
}
