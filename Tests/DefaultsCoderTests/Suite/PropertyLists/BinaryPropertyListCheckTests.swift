import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// Hand-made binary property lists, object by object.
enum BinaryPlist {
    /// A `bplist00` file of `objects` (encoded objects, one-byte references), whose top
    /// object is the first.
    static func make(_ objects: [[UInt8]]) -> Data {
        var body = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(body.count)
            body += object
        }
        let table = body.count
        let offsetSize = table > 0xFFFF ? 4 : (table > 0xFF ? 2 : 1)
        for offset in offsets {
            for shift in stride(from: (offsetSize - 1) * 8, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: offset >> shift)) }
        }
        body += [UInt8](repeating: 0, count: 6) + [UInt8(offsetSize), 2]
        for value in [objects.count, 0, table] {
            for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        return Data(body)
    }

    /// Two-byte references.
    static func ref(_ index: Int) -> [UInt8] { [UInt8(index >> 8), UInt8(index & 0xFF)] }
    static func ascii(_ text: String) -> [UInt8] { [0x50 | UInt8(text.utf8.count)] + Array(text.utf8) }

    /// `{"k": set("a")}`: Foundation on Linux crashes parsing it.
    static let withSet = make([[0xD1] + ref(1) + ref(2), ascii("k"), [0xC1] + ref(3), ascii("a")])
    /// `{"k": [<itself>]}`.
    static let cycle = make([[0xD1] + ref(1) + ref(2), ascii("k"), [0xA1] + ref(2)])
    /// `{"k": UID 1}`.
    static let uid = make([[0xD1] + ref(1) + ref(2), ascii("k"), [0x80, 0x01]])
    /// `{"k": "…"}` whose string claims 2^62 bytes.
    static let hugeString = make([[0xD1] + ref(1) + ref(2), ascii("k"), [0x5F, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]])
    /// `{"k": <object 9>}` in a file of three objects.
    static let danglingReference = make([[0xD1] + ref(1) + ref(9), ascii("k"), ascii("v")])
    /// `{"k": [[[…"x"…]]]}`, `levels` arrays deep.
    static func deep(_ levels: Int) -> Data {
        var objects: [[UInt8]] = [[0xD1] + ref(1) + ref(2), ascii("k")]
        for level in 0..<levels { objects.append([0xA1] + ref(3 + level)) }
        objects.append(ascii("x"))
        return make(objects)
    }
    /// `{"k": ["a", "a", …]}` sharing one string: valid.
    static let shared = make([[0xD1] + ref(1) + ref(2), ascii("k"), [0xA3] + ref(3) + ref(3) + ref(3), ascii("a")])
}

@Suite("BinaryPropertyListCheck")
struct BinaryPropertyListCheckTests {

    @Test(
        "what Foundation writes passes",
        arguments: [
            ["a": 1, "b": "two", "c": [1.5, true, Data([1, 2])], "d": ["e": Date(timeIntervalSinceReferenceDate: 0)]] as [String: Any],
            [:],
            ["deep": (0..<200).reduce("x" as Any) { inner, _ in [inner] }],
            ["unicode": "日本語 🇺🇦", "long": String(repeating: "x", count: 300)],
        ].map(SendableAny.init))
    func foundationFiles(plist: SendableAny) throws {
        let data = try PropertyListSerialization.data(fromPropertyList: plist.value, format: .binary, options: 0)
        #expect(BinaryPropertyListCheck.problem(in: data) == nil)
    }

    @Test(
        "hand-made files: damage is named, never parsed",
        arguments: [
            (BinaryPlist.withSet, "it holds a set, which preferences cannot"),
            (BinaryPlist.cycle, "it refers to itself"),
            (BinaryPlist.uid, "it holds a keyed archiver UID, which preferences cannot"),
            (BinaryPlist.hugeString, "a string or data runs past the object table"),
            (BinaryPlist.danglingReference, "a reference points past the last object"),
            (BinaryPlist.deep(600), "it nests deeper than 512 levels"),
            (Data("bplist00".utf8), "its binary property list is truncated"),
            (Data("bplist15".utf8 + [UInt8](repeating: 0, count: 40)), "it is not a binary property list of a known version"),
            (BinaryPlist.make([BinaryPlist.ascii("top")]), "it does not hold a dictionary"),
            (BinaryPlist.make([[0xD1] + BinaryPlist.ref(1) + BinaryPlist.ref(1), [0x10, 0x01]]), "a dictionary key is not a string"),
            (BinaryPlist.make([[0xD1] + BinaryPlist.ref(1) + BinaryPlist.ref(2), BinaryPlist.ascii("k"), [0x00]]), "it holds a null or an unknown object"),
        ])
    func handMade(data: Data, reason: String) {
        #expect(BinaryPropertyListCheck.problem(in: data) == reason)
    }

    @Test("shared objects and deep nesting within the limit pass")
    func valid() {
        #expect(BinaryPropertyListCheck.problem(in: BinaryPlist.shared) == nil)
        #expect(BinaryPropertyListCheck.problem(in: BinaryPlist.deep(400)) == nil)
    }

    @Test("every prefix of a valid file is refused without a crash")
    func truncations() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2, ["b": "c"]], "d": "e"], format: .binary, options: 0)
        for length in 0..<data.count where data.prefix(length).starts(with: "bplist".utf8) {
            #expect(BinaryPropertyListCheck.problem(in: data.prefix(length)) != nil)
        }
    }

    @Test("every single-byte change is checked without a crash")
    func mutations() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2, ["b": "c"]], "d": "e"], format: .binary, options: 0)
        for index in 8..<data.count {
            for value: UInt8 in [0x00, 0x0F, 0x7F, 0xC1, 0xFF] {
                var changed = data
                changed[index] = value
                _ = BinaryPropertyListCheck.problem(in: changed)
            }
        }
    }
}
