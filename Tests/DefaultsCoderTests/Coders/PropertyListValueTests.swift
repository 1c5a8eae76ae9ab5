import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("PropertyListValue")
struct PropertyListValueTests {
    static let sample: PropertyListValue = [
        "name": "Ada", "age": 36, "ratio": 0.5, "whole": 2.0, "beta": true,
        "when": .date(Date(timeIntervalSinceReferenceDate: 86_400)), "bytes": .data(Data([1, 2, 3])),
        "tags": ["a", "b"], "nested": ["empty": [], "map": [:]], "small": [1, 2, 3],
    ]

    @Test("literals, typed accessors and subscripts")
    func literals() {
        let value = Self.sample
        #expect(value["name"]?.stringValue == "Ada")
        #expect(value["age"]?.intValue == 36)
        #expect(value["age"]?.doubleValue == 36)
        #expect(value["ratio"]?.doubleValue == 0.5)
        #expect(value["beta"]?.boolValue == true)
        #expect(value["beta"]?.intValue == nil)
        #expect(value["tags"]?[1] == "b")
        #expect(value["tags"]?[2] == nil)
        #expect(value["missing"] == nil)
        #expect(value["bytes"]?.dataValue == Data([1, 2, 3]))
        #expect(Set([value, value, "x"]).count == 2)
    }

    @Test("to and from the Any tree, every kind kept")
    func trees() throws {
        let tree = Self.sample.tree
        #expect(PropertyListValue(tree) == Self.sample)
        #expect(
            PropertyListValue(try PropertyListSerialization.propertyList(from: PropertyListSerialization.data(fromPropertyList: tree, format: .binary, options: 0), format: nil))
                == Self.sample)
        #expect(PropertyListValue(Optional<Any>.none as Any) == nil)
        #expect(PropertyListValue(URL(string: "https://x.org")!) == nil)
        #expect(PropertyListValue(["a": Optional<Int>.none as Any]) == nil)
    }

    @Test("the coders in one call each, and back, every kind kept")
    func coders() throws {
        let user = User(id: 7, name: "Bo")
        let value: PropertyListValue = try KeyValueEncoder().encode(user)
        #expect(value == ["id": 7, "name": "Bo"])
        #expect(try KeyValueDecoder().decode(User.self, from: value) == user)
        let tree = try #require(try KeyValueEncoder().encode(Self.sample))
        #expect(try KeyValueDecoder().decode(PropertyListValue.self, from: tree) == Self.sample)
        #expect(throws: EncodingError.self) { let _: PropertyListValue = try KeyValueEncoder().encode([Int?.none]) }
    }

    @Test("stored in UserDefaults in its native form, through a typed key, and read back in a second process")
    func stored() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<PropertyListValue>("settings", default: [:])
        try suite.defaults.write(Self.sample, to: key)
        #expect(try suite.defaults.read(key) == Self.sample)
        let read = try await SecondProcess.read(suite)
        #expect(PropertyListValue(try #require(read["settings"])) == Self.sample)
    }

    @Test("Foundation's own coders read and write it too", arguments: ["json", "plist"])
    func foundationCoders(format: String) throws {
        let value: PropertyListValue = ["a": [1, "two", true], "b": 1.5]
        let back: PropertyListValue
        if format == "json" {
            back = try JSONDecoder().decode(PropertyListValue.self, from: JSONEncoder().encode(value))
        } else {
            back = try PropertyListDecoder().decode(PropertyListValue.self, from: PropertyListEncoder().encode(value))
        }
        #expect(back == value)
    }

    // MARK: - Every kind through every route

    /// Values whose kind a route could change: an integer above `Int.max`, whole and
    /// signed-zero doubles, dates a `<date>` of a suite's file cannot keep.
    static let kinds: [PropertyListValue] = [
        .unsignedInteger(.max), .unsignedInteger(UInt64(Int.max) + 1), .integer(.min), .integer(.max),
        .double(2.0), .double(-0.0), .double(1e20),
        .date(Date(timeIntervalSinceReferenceDate: 0.5)), .date(Date(timeIntervalSinceReferenceDate: -1.25)),
        .date(Date(timeIntervalSinceReferenceDate: 1e12)), .date(Date(timeIntervalSinceReferenceDate: -60_937_747_200)),
        ["nested": [.double(-0.0), .unsignedInteger(.max), .date(Date(timeIntervalSinceReferenceDate: 0.5)), .double(3.0)]],
    ]

    /// The same case and the same payload, to the sign of a zero.
    static func same(_ lhs: PropertyListValue?, _ rhs: PropertyListValue?) -> Bool {
        String(describing: lhs) == String(describing: rhs)
    }

    @Test("a value keeps its case through the coders and the Any tree", arguments: kinds)
    func kindThroughCoders(value: PropertyListValue) throws {
        #expect(Self.same(PropertyListValue(value.tree), value))
        let tree = try #require(try KeyValueEncoder().encode(value))
        #expect(Self.same(try KeyValueDecoder().decode(PropertyListValue.self, from: tree), value))
    }

    @Test("a value keeps its case through a suite, here and in a second process", arguments: kinds)
    func kindThroughSuite(value: PropertyListValue) async throws {
        let suite = TestSuite()
        try suite.defaults.encode(value, forKey: "value")
        let back = try suite.defaults.decode(PropertyListValue.self, forKey: "value")
        // The Apple path on Linux keeps values in Foundation's XML file, which another
        // test's synchronize() may reload: -0.0 comes back as 0 (Apple's binary plists
        // keep it), still equal, and of the same case.
        #expect(Backend.isEmulatedApple ? back == value : Self.same(back, value))
        // The second process reads the file; the Apple path on Linux has Foundation's
        // own writer make it, which writes -0.0 as 0 (Apple's binary plists keep it).
        guard Backend.isFile else { return }
        let read = try await SecondProcess.read(suite)
        #expect(Self.same(try KeyValueDecoder().decodeFromUserDefaults(PropertyListValue.self, from: try #require(read["value"])), value))
    }

    @Test("a value keeps its case read from a legacy property-list blob", arguments: kinds)
    func kindThroughLegacyBlob(value: PropertyListValue) throws {
        let suite = TestSuite()
        suite.defaults.set(try PropertyListEncoder().encode(["v": value]), forKey: "blob")
        let key = DefaultsKey<[String: PropertyListValue]>("blob", default: [:], legacy: .propertyList)
        #expect(Self.same(try suite.defaults.read(key)["v"], value))
    }

    @Test("through Foundation's plist coder, which reads a whole real as an integer too: -0.0 stays a double, integers above Int.max stay integers")
    func kindThroughFoundationCoder() throws {
        func roundTrip(_ value: PropertyListValue) throws -> PropertyListValue? {
            try PropertyListDecoder().decode([PropertyListValue].self, from: PropertyListEncoder().encode([value])).first
        }
        #expect(Self.same(try roundTrip(.double(-0.0)), .double(-0.0)))
        #expect(Self.same(try roundTrip(.unsignedInteger(.max)), .unsignedInteger(.max)))
        #expect(Self.same(try roundTrip(.double(2.5)), .double(2.5)))
        // What the decoder cannot say: documented on `init(from:)`.
        #expect(Self.same(try roundTrip(.double(2.0)), .integer(2)))
    }

    /// `tree`, never released: releasing a tree this deep recurses once per level, and
    /// that is the runtime's, not the package's.
    static func immortal(_ tree: Any) -> Locked<SendableAny?> {
        let kept = Locked<SendableAny?>(SendableAny(tree))
        keptForever.withLock { $0.append(kept) }
        return kept
    }

    private static let keptForever = Locked<[Locked<SendableAny?>]>([])

    @Test("a tree deeper than 512 containers, or than the stack allows, is no value and no crash", arguments: [511, 512, 513, 100_000])
    func deepTree(levels: Int) async {
        let input = Self.immortal((0..<levels).reduce(1 as Any) { inner, _ in [inner] })
        let made = await onThread(stackSize: NestingGuardTests.smallStack) {
            let tree = input.withLock { $0! }
            return PropertyListValue(tree.value) != nil
        }
        let deep = await onThread(stackSize: 8 << 20) {
            let tree = input.withLock { $0! }
            return PropertyListValue(tree.value) != nil
        }
        #expect(deep == (levels <= NestingGuard.maximumContainers))
        if levels > NestingGuard.maximumContainers { #expect(!made) }
    }

    @Test("decoding a deep tree as a PropertyListValue throws past the limit, on a 512 KiB thread, never crashes", arguments: [100, 511, 513, 20_000])
    func deepDecode(levels: Int) async {
        let input = Self.immortal((0..<levels).reduce("x" as Any) { inner, _ in [inner] })
        let outcome = await onThread(stackSize: NestingGuardTests.smallStack) {
            let tree = input.withLock { $0! }
            return NestingGuardTests.outcome { try KeyValueDecoder().decode(PropertyListValue.self, from: tree.value) }
        }
        switch outcome {
        case .value: #expect(levels <= NestingGuard.maximumContainers)
        case .error(let message):
            #expect(levels > 100)
            #expect(message.hasPrefix("Nesting too deep for the stack") || message.hasPrefix("Nesting deeper than 512 levels"), "\(message.prefix(80))")
        }
    }

    @Test(
        "decoding a deep binary property list as a PropertyListValue with Foundation's PropertyListDecoder, on a 512 KiB thread, never crashes: past the limit or the stack, it throws",
        arguments: [300, 5_000])
    func deepForeignDecode(levels: Int) async throws {
        // A binary property list has no depth limit of its parser's: Foundation's decoder
        // recurses into `init(from:)` once per level.
        let data = try await offPool(stackSize: 64 << 20) {
            let tree = (0..<levels).reduce("x" as Any) { inner, _ in [inner] }
            return try PropertyListSerialization.data(fromPropertyList: ["k": tree], format: .binary, options: 0)
        }
        let outcome = await onThread(stackSize: NestingGuardTests.smallStack) {
            NestingGuardTests.outcome { try PropertyListDecoder().decode([String: PropertyListValue].self, from: data) }
        }
        guard case .error(let message) = outcome else {
            #expect(levels < NestingGuard.maximumContainers, "a value \(levels) deep decoded")
            return
        }
        #expect(message.hasPrefix("Nesting too deep for the stack") || message.hasPrefix("Nesting deeper than 512 levels"), "\(message.prefix(80))")
    }
}
