import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("KeyValueEncoder")
struct KeyValueEncoderTests {

    @Test(
        "top-level primitives keep their type",
        arguments: [
            (true as any Encodable & Sendable, Tree.bool(true)),
            ("fish", .string("fish")),
            (1, .int(1)),
            (Int8(-8), .int8(-8)),
            (Int16(16), .int16(16)),
            (Int32(32), .int32(32)),
            (Int64.min, .int64(.min)),
            (UInt(7), .uint(7)),
            (UInt8(8), .uint8(8)),
            (UInt16(16), .uint16(16)),
            (UInt32(32), .uint32(32)),
            (UInt64.max, .uint64(.max)),
            (1.5, .double(1.5)),
            (Float(2.5), .float(2.5)),
            (Decimal(string: "1.5")!, .decimal(Decimal(string: "1.5")!)),
            (Date(timeIntervalSince1970: 10), .date(Date(timeIntervalSince1970: 10))),
            (Data([1, 2]), .data(Data([1, 2]))),
            (URL(string: "https://fish.com")!, .url(URL(string: "https://fish.com")!)),
        ] as [(any Encodable & Sendable, Tree)])
    func primitives(value: any Encodable & Sendable, expected: Tree) throws {
        #expect(Tree(try KeyValueEncoder().encode(value)) == expected)
    }

    @Test("raw representable, collections, structs")
    func shapes() throws {
        let encoder = KeyValueEncoder()
        #expect(Tree(try encoder.encode(Food(rawValue: "fish"))) == .string("fish"))
        #expect(Tree(try encoder.encode(["fish", "chips"])) == .array([.string("fish"), .string("chips")]))
        #expect(Tree(try encoder.encode(User(id: 1, name: "Herbert"))) == .dictionary(["id": .int(1), "name": .string("Herbert")]))
        #expect(Tree(try encoder.encode([1: "a"])) == .dictionary(["1": .string("a")]))
        #expect(Tree(try encoder.encode([UInt8]())) == .array([]))
        #expect(Tree(try encoder.encode([String: Int]())) == .dictionary([:]))
        #expect(Tree(try encoder.encode(Set([3]))) == .array([.int(3)]))
    }

    @Test("enums with associated values")
    func enums() throws {
        let encoded = try KeyValueEncoder().encode([Event.tap(x: 1, y: 2), .message("hi"), .reset])
        #expect(
            Tree(encoded)
                == .array([
                    .dictionary(["tap": .dictionary(["x": .int(1), "y": .int(2)])]),
                    .dictionary(["message": .dictionary(["_0": .string("hi")])]),
                    .dictionary(["reset": .dictionary([:])]),
                ]))
        try expectRoundTrip([Event.tap(x: 1, y: 2), .message("hi"), .reset])
    }

    @Test("classes encode their superclass through superEncoder")
    func classes() throws {
        let encoded = try KeyValueEncoder().encode(Dog(name: "Rex", breed: "Lab"))
        #expect(Tree(encoded) == .dictionary(["breed": .string("Lab"), "super": .dictionary(["name": .string("Rex")])]))
        let decoded = try KeyValueDecoder().decode(Dog.self, from: encoded as Any)
        #expect(decoded.name == "Rex" && decoded.breed == "Lab")
    }

    @Test(
        "nil strategies",
        arguments: [
            (KeyValueEncoder.NilEncodingStrategy.default, Tree.array([.int(1), .int(2), .null, .int(3)]), [1, 2, nil, 3] as [Int?]),
            (.removed, .array([.int(1), .int(2), .int(3)]), [1, 2, 3]),
            (.stringNull, .array([.int(1), .int(2), .string("$null"), .int(3)]), [1, 2, nil, 3]),
            (.nsNull, .array([.int(1), .int(2), .nsNull, .int(3)]), [1, 2, nil, 3]),
            (.placeholder(-1, isNull: { ($0 as? Int) == -1 }), .array([.int(1), .int(2), .int(-1), .int(3)]), [1, 2, nil, 3]),
        ])
    func nilStrategies(strategy: KeyValueEncoder.NilEncodingStrategy, expected: Tree, decodedBack: [Int?]) throws {
        var encoder = KeyValueEncoder()
        encoder.nilEncodingStrategy = strategy
        let encoded = try encoder.encode([1, 2, Int?.none, 3])
        #expect(Tree(encoded) == expected)

        var decoder = KeyValueDecoder()
        decoder.nilDecodingStrategy = .init(matching: strategy)
        #expect(try decoder.decode([Int?].self, from: encoded as Any) == decodedBack)
    }

    @Test("top-level nil")
    func topLevelNil() throws {
        var encoder = KeyValueEncoder()
        #expect(try encoder.encode(Int?.none) == nil)
        encoder.nilEncodingStrategy = .stringNull
        #expect(Tree(try encoder.encode(Int?.none)) == .string("$null"))
    }

    @Test("optional properties: absent ones are left out")
    func optionalProperties() throws {
        struct Profile: Codable, Equatable {
            var name: String?
            var age: Int?
        }
        #expect(Tree(try KeyValueEncoder().encode(Profile(name: nil, age: 3))) == .dictionary(["age": .int(3)]))
        try expectRoundTrip(Profile(name: nil, age: 3))
        try expectRoundTrip(Profile(name: "x", age: nil))
    }

    static let date = Date(timeIntervalSince1970: 1_000.25)

    static let slashes: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy/MM/dd"
        return formatter
    }()

    static let dateRows: [(KeyValueEncoder.DateEncodingStrategy, Tree)] = [
        (.date, .date(date)),
        (.secondsSince1970, .double(1_000.25)),
        (.millisecondsSince1970, .double(1_000_250)),
        (.iso8601, .string("1970-01-01T00:16:40Z")),
        (.iso8601(includingFractionalSeconds: true), .string("1970-01-01T00:16:40.250Z")),
        (.formatted(slashes), .string("1970/01/01")),
        (.custom { "day \(Int($0.timeIntervalSince1970) / 86_400)" }, .string("day 0")),
    ]

    @Test("date strategies", arguments: dateRows)
    func dateStrategies(strategy: KeyValueEncoder.DateEncodingStrategy, expected: Tree) throws {
        var encoder = KeyValueEncoder()
        encoder.dateEncodingStrategy = strategy
        #expect(Tree(try encoder.encode(Self.date)) == expected)
        #expect(Tree(try encodeSingleValue(with: encoder) { try $0.encode(Self.date) }) == expected)
    }

    static let url = URL(string: "https://fish.com/chips?x=1")!

    static let urlRows: [(KeyValueEncoder.URLEncodingStrategy, Tree)] = [
        (.url, .url(url)),
        (.absoluteString, .string("https://fish.com/chips?x=1")),
        (.custom { $0.host ?? "" }, .string("fish.com")),
    ]

    @Test("url strategies", arguments: urlRows)
    func urlStrategies(strategy: KeyValueEncoder.URLEncodingStrategy, expected: Tree) throws {
        var encoder = KeyValueEncoder()
        encoder.urlEncodingStrategy = strategy
        #expect(Tree(try encoder.encode(Self.url)) == expected)
        #expect(Tree(try encodeUnkeyed(with: encoder) { try $0.encode(Self.url) }) == .array([expected]))
    }

    static let dataRows: [(KeyValueEncoder.DataEncodingStrategy, Tree)] = [
        (.data, .data(Data("hi".utf8))),
        (.base64, .string("aGk=")),
        (.custom { $0.count }, .int(2)),
    ]

    @Test("data strategies", arguments: dataRows)
    func dataStrategies(strategy: KeyValueEncoder.DataEncodingStrategy, expected: Tree) throws {
        var encoder = KeyValueEncoder()
        encoder.dataEncodingStrategy = strategy
        #expect(Tree(try encoder.encode(Data("hi".utf8))) == expected)
        #expect(Tree(try encodeKeyed(with: encoder) { container, _ in try container.encode(Data("hi".utf8), forKey: "d") }) == .dictionary(["d": expected]))
    }

    // Modelled on swift-foundation's JSONEncoderTests
    // `testEncodingDictionaryStringKeyConversionUntouched`.
    @Test(
        "key strategies leave the keys of a [String: V] alone, at any depth",
        arguments: [
            KeyValueEncoder.KeyEncodingStrategy.convertToSnakeCase,
            .custom { KeyValueCodingKey(stringValue: $0.last!.stringValue.uppercased()) },
        ])
    func dictionaryKeysUntouched(strategy: KeyValueEncoder.KeyEncodingStrategy) throws {
        var encoder = KeyValueEncoder()
        encoder.keyEncodingStrategy = strategy
        #expect(Tree(try encoder.encode(["leaveMeAlone": 1])) == .dictionary(["leaveMeAlone": .int(1)]))
        struct Holder: Encodable { var byName: [String: [String: Int]] }
        let holder = Holder(byName: ["someKey": ["innerKey": 2]])
        let converted = strategy.isSnakeCase ? "by_name" : "BYNAME"
        #expect(Tree(try encoder.encode(holder)) == .dictionary([converted: .dictionary(["someKey": .dictionary(["innerKey": .int(2)])])]))
        // And back, through the decoder's strategy.
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode([String: Int].self, from: try encoder.encode(["leaveMeAlone": 1]) as Any) == ["leaveMeAlone": 1])
    }

    static let keyRows: [(KeyValueEncoder.KeyEncodingStrategy, String)] = [
        (.useDefaultKeys, "myURLValue"),
        (.convertToSnakeCase, "my_url_value"),
        (.custom { KeyValueCodingKey(stringValue: $0.last!.stringValue.uppercased()) }, "MYURLVALUE"),
    ]

    @Test("key strategies", arguments: keyRows)
    func keyStrategies(strategy: KeyValueEncoder.KeyEncodingStrategy, key: String) throws {
        var encoder = KeyValueEncoder()
        encoder.keyEncodingStrategy = strategy
        #expect(Tree(try encodeKeyed(with: encoder) { container, _ in try container.encode(1, forKey: "myURLValue") }) == .dictionary([key: .int(1)]))
    }

    @Test("key strategies apply to values, nils, nested containers and super encoders")
    func keyStrategiesEverywhere() throws {
        var encoder = KeyValueEncoder()
        encoder.nilEncodingStrategy = .stringNull
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(
            Tree(try encoder.encode(EveryKeyedWrite()))
                == .dictionary([
                    "first_value": .int(1),
                    "missing_value": .string("$null"),
                    "nested_box": .dictionary(["inner_value": .string("x")]),
                    "nested_list": .array([.bool(true)]),
                    "super_key": .dictionary(["inner_value": .int(2)]),
                ]))

        encoder.keyEncodingStrategy = .custom { path in
            KeyValueCodingKey(stringValue: path.map(\.stringValue).joined(separator: "/"))
        }
        #expect(
            Tree(try encoder.encode(EveryKeyedWrite()))
                == .dictionary([
                    "firstValue": .int(1),
                    "missingValue": .string("$null"),
                    "nestedBox": .dictionary(["nestedBox/innerValue": .string("x")]),
                    "nestedList": .array([.bool(true)]),
                    "superKey": .dictionary(["superKey/innerValue": .int(2)]),
                ]))
    }

    @Test("a container misuse throws instead of trapping")
    func misuse() throws {
        let error = caught(EncodingError.self) { try KeyValueEncoder().encode([TwoContainers()]) }
        #expect(debugDescription(of: error) == "Invalid use of Encoder: an unkeyed container was requested after another container was used at SELF[0]")
    }

    /// A value that uses its encoder one way, then another.
    struct TwoUses: Encodable {
        enum Use: Sendable { case keyed, unkeyed, value }
        var first: Use
        var second: Use

        func encode(to encoder: any Encoder) throws {
            try use(first, of: encoder)
            try use(second, of: encoder)
        }

        private func use(_ use: Use, of encoder: any Encoder) throws {
            switch use {
            case .keyed:
                var container = encoder.container(keyedBy: AnyKey.self)
                try container.encode(1, forKey: "a")
            case .unkeyed:
                var container = encoder.unkeyedContainer()
                try container.encode(1)
            case .value:
                var container = encoder.singleValueContainer()
                try container.encode(1)
            }
        }
    }

    @Test(
        "a second kind of container or value from one encoder throws, naming the misuse and the path",
        arguments: [
            (TwoUses.Use.keyed, TwoUses.Use.unkeyed, "an unkeyed container was requested after another container was used"),
            (.unkeyed, .keyed, "a keyed container was requested after another container was used"),
            (.value, .keyed, "a keyed container was requested after another container was used"),
            (.value, .unkeyed, "an unkeyed container was requested after another container was used"),
            (.keyed, .value, "a single value was encoded after another value or container"),
            (.value, .value, "a single value was encoded after another value or container"),
        ])
    func secondUse(first: TwoUses.Use, second: TwoUses.Use, misuse: String) {
        let error = caught(EncodingError.self) { try KeyValueEncoder().encode(["x": [TwoUses(first: first, second: second)]]) }
        #expect(debugDescription(of: error) == "Invalid use of Encoder: \(misuse) at SELF.x[0]")
    }

    @Test("the same kind of container twice from one encoder writes into one")
    func sameUseTwice() throws {
        #expect(Tree(try KeyValueEncoder().encode([TwoUses(first: .keyed, second: .keyed)])) == .array([.dictionary(["a": .int(1)])]))
        #expect(Tree(try KeyValueEncoder().encode([TwoUses(first: .unkeyed, second: .unkeyed)])) == .array([.array([.int(1), .int(1)])]))
    }

    @Test("a value written through a single value container survives another value's kept container encoding one of its own")
    func singleValueSurvivesKeptContainer() throws {
        nonisolated(unsafe) var kept: KeyedEncodingContainer<AnyKey>?
        let tree = try encodeUnkeyed { container in
            try container.encode(Writer { kept = $0.container(keyedBy: AnyKey.self) })
            try container.encode(
                Writer { encoder in
                    var single = encoder.singleValueContainer()
                    try single.encode(1)
                    try kept?.encode(
                        Writer { inner in
                            var late = inner.singleValueContainer()
                            try late.encode("late")
                        }, forKey: "late")
                })
        }
        #expect(Tree(tree) == .array([.dictionary([:]), .int(1)]))
        kept = nil
    }

    // MARK: Containers asked for twice

    // Modelled on swift-foundation's JSONEncoderTests
    // `testEncodingMultipleNestedContainersWithTheSameTopLevelKey`.
    @Test("nested containers asked for twice at one key write into the same storage")
    func mergedNestedContainers() throws {
        let tree = try encodeKeyed { container, _ in
            var first = container.nestedContainer(keyedBy: AnyKey.self, forKey: "container")
            try first.encode("Test", forKey: "foo")
            var second = container.nestedContainer(keyedBy: AnyKey.self, forKey: "container")
            try second.encode("SecondAgain", forKey: "somethingElse")
            var list = container.nestedUnkeyedContainer(forKey: "list")
            try list.encode(1)
            var again = container.nestedUnkeyedContainer(forKey: "list")
            try again.encode(2)
        }
        #expect(
            Tree(tree)
                == .dictionary([
                    "container": .dictionary(["foo": .string("Test"), "somethingElse": .string("SecondAgain")]),
                    "list": .array([.int(1), .int(2)]),
                ]))
    }

    @Test("a second keyed container at one level, and a super encoder asked for twice, keep everything")
    func mergedContainers() throws {
        let tree = try encodeKeyed { container, encoder in
            try container.encode(1, forKey: "a")
            var again = encoder.container(keyedBy: AnyKey.self)
            try again.encode(2, forKey: "b")
            var first = container.superEncoder(forKey: "parent").container(keyedBy: AnyKey.self)
            try first.encode("x", forKey: "x")
            var second = container.superEncoder(forKey: "parent").container(keyedBy: AnyKey.self)
            try second.encode("y", forKey: "y")
        }
        #expect(
            Tree(tree)
                == .dictionary([
                    "a": .int(1), "b": .int(2), "parent": .dictionary(["x": .string("x"), "y": .string("y")]),
                ]))
    }

    @Test("a keyed container where another kind of value already is throws instead of dropping data")
    func conflictingContainers() throws {
        let error = caught(EncodingError.self) {
            try encodeKeyed { container, _ in
                var list = container.nestedUnkeyedContainer(forKey: "k")
                try list.encode(1)
                _ = container.nestedContainer(keyedBy: AnyKey.self, forKey: "k")
            }
        }
        #expect(debugDescription(of: error) == "Invalid use of Encoder: a keyed container was requested for a key that already holds another kind of value at SELF.k")
        #expect(Tree(try encodeSingleValue { container in try container.encode(1) }) == .int(1))
    }

    // MARK: The coder's own edges

    /// Two properties that snake case maps to one key.
    struct Colliding: Encodable {
        var aB = 1
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var a_b = 2
    }

    @Test("two keys that a key strategy maps to one throw instead of dropping a value")
    func collidingKeys() throws {
        var snake = KeyValueEncoder()
        snake.keyEncodingStrategy = .convertToSnakeCase
        let error = caught(EncodingError.self) { try snake.encode(["x": Colliding()]) }
        #expect(debugDescription(of: error) == "Keys \"aB\" and \"a_b\" both become \"a_b\" at SELF.x.a_b")
        #expect(readablePath(of: error) == "SELF.x.a_b")

        var custom = KeyValueEncoder()
        custom.keyEncodingStrategy = .custom { _ in KeyValueCodingKey(stringValue: "same") }
        let customError = caught(EncodingError.self) { try custom.encode(User(id: 1, name: "a")) }
        #expect(debugDescription(of: customError) == "Keys \"id\" and \"name\" both become \"same\" at SELF.name")

        // In UserDefaults: nothing written.
        let suite = TestSuite()
        #expect(throws: EncodingError.self) { try suite.defaults.encode(Colliding(), forKey: "c", encoder: snake) }
        #expect(suite.defaults.object(forKey: "c") == nil)
        // Writing the same key twice is not a collision: the last write wins, as in Foundation.
        #expect(Tree(try snake.encode(Rewrites())) == .dictionary(["a_b": .int(2)]))
    }

    struct Rewrites: Encodable {
        enum CodingKeys: String, CodingKey { case aB }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(1, forKey: .aB)
            try container.encode(2, forKey: .aB)
        }
    }

    /// Misuses its encoder, then throws an error of its own.
    struct Misbehaving: Encodable {
        struct Oops: Error {}
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            _ = encoder.unkeyedContainer()
            throw Oops()
        }
    }

    /// Catches what its child throws and goes on.
    struct Forgiving: Encodable {
        enum CodingKeys: String, CodingKey { case child, after }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            do { try container.encode(Misbehaving(), forKey: .child) } catch {}
            try container.encode(2, forKey: .after)
        }
    }

    @Test("a child's misuse that the child's own caller caught does not resurface")
    func caughtMisuse() throws {
        #expect(Tree(try KeyValueEncoder().encode([Forgiving()])) == .array([.dictionary(["after": .int(2)])]))
        #expect(throws: Misbehaving.Oops.self) { try KeyValueEncoder().encode([Misbehaving()]) }
    }

    @Test(
        "a custom strategy's unstorable result names the full path",
        arguments: [
            (SendableAny(Decimal.nan), "Cannot store Decimal NaN in UserDefaults at SELF.when"),
            (SendableAny(NSNull()), "Cannot store NSNull in UserDefaults at SELF.when"),
            (SendableAny(["a": [Decimal.nan]]), "Cannot store Decimal NaN in UserDefaults at SELF.when.a[0]"),
        ])
    func customResultPath(result: SendableAny, message: String) throws {
        var encoder = KeyValueEncoder()
        nonisolated(unsafe) let value = result.value
        encoder.dateEncodingStrategy = .custom { _ in value }
        let suite = TestSuite()
        let error = caught(EncodingError.self) { try suite.defaults.encode(Dated(when: Date()), forKey: "d", encoder: encoder) }
        #expect(debugDescription(of: error) == message)
        #expect(suite.defaults.object(forKey: "d") == nil)
    }

    @Test("errors from encode(to:) pass through unchanged")
    func passThrough() {
        #expect(throws: Failing.Boom.self) { try KeyValueEncoder().encode(["a": Failing()]) }
    }

    @Test("custom strategy errors name the path")
    func customErrors() throws {
        struct Nope: Error {}
        var encoder = KeyValueEncoder()
        encoder.dateEncodingStrategy = .custom { _ in throw Nope() }
        let error = caught(EncodingError.self) { try encoder.encode([Dated(when: Date())]) }
        #expect(debugDescription(of: error) == "Custom strategy failed at SELF[0].when")
        if case .invalidValue(_, let context)? = error {
            #expect(context.underlyingError is Nope)
        }
    }

    @Test("userInfo reaches encode(to:)")
    func userInfo() throws {
        struct Reads: Encodable {
            static let key = CodingUserInfoKey(rawValue: "flavour")!
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[Self.key] as? String ?? "none")
            }
        }
        var encoder = KeyValueEncoder()
        encoder.userInfo[Reads.key] = "salt"
        #expect(Tree(try encoder.encode(Reads())) == .string("salt"))
    }

    @Test("codingPath is correct inside nested encode(to:)")
    func codingPathInside() throws {
        final class Recorder: @unchecked Sendable { var paths: [String] = [] }
        struct Probe: Encodable {
            let recorder: Recorder
            func encode(to encoder: any Encoder) throws {
                recorder.paths.append(readablePath(encoder.codingPath))
                var container = encoder.singleValueContainer()
                try container.encode(0)
            }
        }
        struct Outer: Encodable {
            let recorder: Recorder
            enum CodingKeys: String, CodingKey { case list }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode([Probe(recorder: recorder), Probe(recorder: recorder)], forKey: .list)
            }
        }
        let recorder = Recorder()
        _ = try KeyValueEncoder().encode([Outer(recorder: recorder)])
        #expect(recorder.paths == ["SELF[0].list[0]", "SELF[0].list[1]"])
    }

    @Test("deep nesting encodes and decodes")
    func deep() throws {
        indirect enum Node: Codable, Equatable { case leaf(Int), branch(Node) }
        var node = Node.leaf(0)
        for _ in 0..<200 { node = .branch(node) }
        try expectRoundTrip(node)
    }

    @Test("values nested deeper than 512 levels throw instead of overflowing the stack")
    func nestingLimit() throws {
        let deepest = try KeyValueEncoder().encode(Link(length: 512))
        #expect(Tree(deepest) == Tree(Link.tree(length: 512)))

        let error = caught(EncodingError.self) { try KeyValueEncoder().encode(Link(length: 513)) }
        #expect(debugDescription(of: error) == "Nesting deeper than 512 levels at \(Link.messagePath(512))")
        #expect(readablePath(of: error) == Link.path(512))
    }
}

extension KeyValueEncoder.KeyEncodingStrategy {
    var isSnakeCase: Bool {
        if case .convertToSnakeCase = self { return true }
        return false
    }
}

@Suite("KeyValueEncoder date strategies")
struct KeyValueEncoderDateStrategyTests {
    struct Event: Codable, Equatable {
        var when: Date
    }

    static let strategies: [(String, KeyValueEncoder.DateEncodingStrategy, KeyValueDecoder.DateDecodingStrategy)] = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return [
            (".iso8601", .iso8601, .iso8601),
            (".iso8601", .iso8601(includingFractionalSeconds: true), .iso8601(includingFractionalSeconds: true)),
            (".formatted", .formatted(formatter), .formatted(formatter)),
        ]
    }()

    @Test(
        "a date a strategy cannot write faithfully throws at encode time, in both trees",
        arguments: [Double.nan, .infinity, -.infinity, 1e15, -1e15])
    func unwritable(seconds: Double) throws {
        for (name, strategy, _) in Self.strategies {
            var encoder = KeyValueEncoder()
            encoder.dateEncodingStrategy = strategy
            let value = Event(when: Date(timeIntervalSinceReferenceDate: seconds))
            let plain = caught(EncodingError.self) { try encoder.encode(value) }
            #expect(readablePath(of: plain) == "SELF.when", "\(name) \(seconds)")
            let message = try #require(debugDescription(of: plain))
            #expect(message.hasPrefix("Cannot write Date(timeIntervalSinceReferenceDate: \(seconds)) with the \(name) date strategy ("), "\(message)")
            #expect(message.hasSuffix(" would not read back as the same date) at SELF.when"), "\(message)")
            let suite = TestSuite()
            let stored = caught(EncodingError.self) { try suite.defaults.encode(value, forKey: "event", encoder: encoder) }
            #expect(readablePath(of: stored) == "SELF.when")
            #expect(suite.defaults.object(forKey: "event") == nil)
        }
    }

    @Test("dates a strategy writes faithfully round-trip", arguments: [0, 1.0, -86_400.5, 700_000_000, -3e10])
    func writable(seconds: Double) throws {
        for (name, encoding, decoding) in Self.strategies {
            var encoder = KeyValueEncoder()
            encoder.dateEncodingStrategy = encoding
            var decoder = KeyValueDecoder()
            decoder.dateDecodingStrategy = decoding
            let value = Event(when: Date(timeIntervalSinceReferenceDate: seconds.rounded(.down)))
            #expect(try decoder.decode(Event.self, from: try #require(try encoder.encode(value))) == value, "\(name) \(seconds)")
        }
    }
}
