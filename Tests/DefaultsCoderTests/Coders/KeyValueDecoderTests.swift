import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("KeyValueDecoder")
struct KeyValueDecoderTests {

    @Test("primitives and the README examples")
    func basics() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Food.self, from: "fish") == Food(rawValue: "fish"))
        #expect(try decoder.decode([String].self, from: ["fish", "chips"]) == ["fish", "chips"])
        #expect(try decoder.decode(User.self, from: ["id": 1, "name": "Herbert"]) == User(id: 1, name: "Herbert"))
        #expect(try decoder.decode([Int8].self, from: [10, 20.0, -30.0, Int64(50)]) == [10, 20, -30, 50])
        #expect(try decoder.decode(Int?.self, from: Optional<Any>.none as Any) == nil)
        #expect(try decoder.decode([Int: String].self, from: ["1": "a", "-2": "b"]) == [1: "a", -2: "b"])
    }

    // Every error message, case and path: BadInputTests.swift.

    @Test("error cases")
    func errorCases() throws {
        let mismatch = caught(DecodingError.self) { try KeyValueDecoder().decode([String].self, from: ["fish", 1]) }
        guard case .typeMismatch(let type, _)? = mismatch else {
            Issue.record("expected typeMismatch")
            return
        }
        #expect(type is String.Type)

        let missing = caught(DecodingError.self) { try KeyValueDecoder().decode(User.self, from: ["id": 1]) }
        guard case .keyNotFound(let key, let context)? = missing else {
            Issue.record("expected keyNotFound")
            return
        }
        #expect(key.stringValue == "name")
        #expect(context.codingPath.isEmpty)

        let null = caught(DecodingError.self) { try KeyValueDecoder().decode(String.self, from: Optional<Any>.none as Any) }
        guard case .valueNotFound? = null else {
            Issue.record("expected valueNotFound")
            return
        }
    }

    @Test("reading past the end of an unkeyed container throws valueNotFound")
    func pastTheEnd() throws {
        struct Pair: Decodable {
            var a: Int, b: Int
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                a = try container.decode(Int.self)
                b = try container.decode(Int.self)
            }
        }
        let error = caught(DecodingError.self) { try KeyValueDecoder().decode([Pair].self, from: [[1, 2], [3]]) }
        guard case .valueNotFound(let type, let context)? = error else {
            Issue.record("expected valueNotFound")
            return
        }
        #expect(type is Int.Type)
        #expect(readablePath(context.codingPath) == "SELF[1][1]")
        #expect(context.debugDescription == "Expected Int at SELF[1][1], found end of array")
    }

    @Test(
        "int strategies",
        arguments: [
            (KeyValueDecoder.IntDecodingStrategy.exact, SendableAny([10, 20.0, -30.0, Int64(50)] as [Any]), [10, 20, -30, 50] as [Int8]?),
            (.exact, SendableAny([10.5] as [Any]), nil),
            (.rounding(rule: .toNearestOrAwayFromZero), SendableAny([10.1, -20.9, 50.00001] as [Any]), [10, -21, 50]),
            (.rounding(rule: .down), SendableAny([10.9, -0.5] as [Any]), [10, -1]),
            (.rounding(rule: .toNearestOrAwayFromZero), SendableAny([1000.0] as [Any]), nil),
            (.clamping(rule: .toNearestOrAwayFromZero), SendableAny([10, 20.5, 1000, -Double.infinity] as [Any]), [10, 21, 127, -128]),
            (.clamping(rule: nil), SendableAny([300, -300, UInt64.max] as [Any]), [127, -128, 127]),
            (.clamping(rule: nil), SendableAny([1.5] as [Any]), nil),
            (.clamping(rule: .up), SendableAny([Double.nan] as [Any]), nil),
        ])
    func intStrategies(strategy: KeyValueDecoder.IntDecodingStrategy, input: SendableAny, expected: [Int8]?) throws {
        let input = input.value
        var decoder = KeyValueDecoder()
        decoder.intDecodingStrategy = strategy
        if let expected {
            #expect(try decoder.decode([Int8].self, from: input) == expected)
        } else {
            #expect(throws: DecodingError.self) { try decoder.decode([Int8].self, from: input) }
        }
    }

    @Test("integers of every width accept exact values and reject the rest")
    func widths() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(UInt64.self, from: UInt64.max) == .max)
        #expect(try decoder.decode(Int64.self, from: Int64.min) == .min)
        #expect(try decoder.decode(UInt8.self, from: 255.0) == 255)
        #expect(try decoder.decode(Int.self, from: Decimal(12)) == 12)
        #expect(try decoder.decode(Int16.self, from: NSNumber(value: -5)) == -5)
        #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: -1) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int64.self, from: UInt64.max) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int32.self, from: Decimal(string: "1.5")!) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int8.self, from: Double.infinity) }
    }

    @Test("floating point and decimal targets keep exactness")
    func floatingPoint() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Double.self, from: 3) == 3)
        #expect(try decoder.decode(Double.self, from: Float(0.5)) == 0.5)
        #expect(try decoder.decode(Float.self, from: 0.1) == Float(0.1))
        #expect(try decoder.decode(Float.self, from: Double(Float.leastNonzeroMagnitude)) == .leastNonzeroMagnitude)
        #expect(try decoder.decode(Float.self, from: Double.nan).isNaN)
        #expect(try decoder.decode(Decimal.self, from: 0.1) == Decimal(string: "0.1"))
        #expect(try decoder.decode(Decimal.self, from: Decimal(string: "-0.000001")!) == Decimal(string: "-0.000001"))
        #expect(try decoder.decode(Decimal.self, from: UInt64.max) == Decimal(UInt64.max))
        #expect(try decoder.decode(Double.self, from: Decimal(string: "1.5")!) == 1.5)
        #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: 1e300) }
        #expect(throws: DecodingError.self) { try decoder.decode(Decimal.self, from: Double.nan) }
        #expect(throws: DecodingError.self) { try decoder.decode(Decimal.self, from: true) }
    }

    /// A model that decodes by trying alternatives, as JSON-like enums do: a value must
    /// not be taken for the first type that happens to accept its text.
    enum Probed: Decodable, Equatable {
        case decimal(Decimal), url(URL), data(Data), string(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let decimal = try? container.decode(Decimal.self) {
                self = .decimal(decimal)
            } else if let url = try? container.decode(URL.self) {
                self = .url(url)
            } else if let data = try? container.decode(Data.self) {
                self = .data(data)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    @Test(
        "a string is not taken for a Decimal, a relative URL or Base64 Data by the default strategies",
        arguments: [
            ("42", Probed.string("42")),
            ("1.5", .string("1.5")),
            ("hello", .string("hello")),
            ("AQID", .string("AQID")),
            ("chips/fish", .string("chips/fish")),
            ("https://fish.com/x", .url(URL(string: "https://fish.com/x")!)),
        ])
    func noLeniency(text: String, expected: Probed) throws {
        #expect(try KeyValueDecoder().decode(Probed.self, from: text) == expected)
        #expect(try KeyValueDecoder().decodeFromUserDefaults(Probed.self, from: text) == expected)
    }

    @Test("Bool is never a number and a number never a Bool")
    func boolAndNumbers() throws {
        let decoder = KeyValueDecoder()
        #expect(try decoder.decode(Bool.self, from: NSNumber(value: true)) == true)
        #expect(try decoder.decode([Bool].self, from: [true, false]) == [true, false])
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: 0) }
        #expect(throws: DecodingError.self) { try decoder.decode([Bool].self, from: [NSNumber(value: 1)]) }
        #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: [NSNumber(value: false)]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: NSNumber(value: true)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: "true") }
    }

    static let date = Date(timeIntervalSince1970: 1_000.25)

    static let dateRows: [(KeyValueDecoder.DateDecodingStrategy, SendableAny, Date)] = [
        (.date, SendableAny(date), date),
        (.date, SendableAny(date.timeIntervalSinceReferenceDate), date),
        (.secondsSince1970, SendableAny(1_000.25), date),
        (.millisecondsSince1970, SendableAny(1_000_250), date),
        (.iso8601, SendableAny("1970-01-01T00:16:40Z"), Date(timeIntervalSince1970: 1_000)),
        (.iso8601, SendableAny("1970-01-01T00:16:40.250Z"), date),
        (.iso8601(includingFractionalSeconds: true), SendableAny("1970-01-01T00:16:40.250Z"), date),
        (.formatted(KeyValueEncoderTests.slashes), SendableAny("1970/01/01"), Date(timeIntervalSince1970: 0)),
        (
            .custom { value in
                guard let days = value as? Int else { throw CocoaError(.coderInvalidValue) }
                return Date(timeIntervalSince1970: Double(days) * 86_400)
            }, SendableAny(2), Date(timeIntervalSince1970: 172_800)
        ),
    ]

    @Test("date strategies", arguments: dateRows)
    func dateStrategies(strategy: KeyValueDecoder.DateDecodingStrategy, tree: SendableAny, expected: Date) throws {
        var decoder = KeyValueDecoder()
        decoder.dateDecodingStrategy = strategy
        #expect(try decoder.decode(Date.self, from: tree.value) == expected)
        #expect(
            try decodeWith([tree.value], decoder: decoder) { decoder in
                var container = try decoder.unkeyedContainer()
                return try container.decode(Date.self)
            } == expected)
    }

    @Test("date strategy errors name the path")
    func dateErrors() throws {
        var decoder = KeyValueDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let bad = caught(DecodingError.self) { try decoder.decode([Date].self, from: ["yesterday"]) }
        #expect(debugDescription(of: bad) == "Expected date string to be ISO8601-formatted at SELF[0]")
        decoder.dateDecodingStrategy = .custom { _ in throw CocoaError(.coderInvalidValue) }
        let custom = caught(DecodingError.self) { try decoder.decode(Dated.self, from: ["when": "x"]) }
        #expect(debugDescription(of: custom) == "Custom strategy failed at SELF.when")
    }

    static let chips = URL(string: "https://fish.com/chips")!

    /// Each strategy with a tree it reads, and one it refuses.
    static let urlRows: [(KeyValueDecoder.URLDecodingStrategy, SendableAny, URL?)] = [
        (.url, SendableAny(chips), chips),
        (.url, SendableAny("https://fish.com/chips"), chips),
        (.url, SendableAny(["relative": "chips", "base": "https://fish.com/"]), URL(string: "chips", relativeTo: URL(string: "https://fish.com/")!)),
        (.url, SendableAny("chips"), nil),
        (.url, SendableAny(1), nil),
        (.absoluteString, SendableAny("https://fish.com/chips"), chips),
        (.absoluteString, SendableAny("chips"), URL(string: "chips")),
        (.absoluteString, SendableAny(chips), nil),
        (.custom { value in URL(string: "https://\(value as? String ?? "")")! }, SendableAny("fish.com"), URL(string: "https://fish.com")),
    ]

    @Test("url strategies", arguments: urlRows)
    func urlStrategies(strategy: KeyValueDecoder.URLDecodingStrategy, tree: SendableAny, expected: URL?) {
        var decoder = KeyValueDecoder()
        decoder.urlDecodingStrategy = strategy
        #expect((try? decoder.decode(URL.self, from: tree.value)) == expected)
    }

    static let dataRows: [(KeyValueDecoder.DataDecodingStrategy, SendableAny, Data?)] = [
        (.data, SendableAny(Data([1, 2])), Data([1, 2])),
        (.data, SendableAny([1, 2]), Data([1, 2])),
        (.data, SendableAny("AQI="), nil),
        (.base64, SendableAny("AQI="), Data([1, 2])),
        (.base64, SendableAny(Data([1, 2])), nil),
        (.custom { value in Data((value as? String ?? "").utf8) }, SendableAny("hi"), Data("hi".utf8)),
    ]

    @Test("data strategies", arguments: dataRows)
    func dataStrategies(strategy: KeyValueDecoder.DataDecodingStrategy, tree: SendableAny, expected: Data?) {
        var decoder = KeyValueDecoder()
        decoder.dataDecodingStrategy = strategy
        #expect((try? decoder.decode(Data.self, from: tree.value)) == expected)
    }

    static let keyRows: [(KeyValueDecoder.KeyDecodingStrategy, String)] = [
        (.useDefaultKeys, "firstName"),
        (.convertFromSnakeCase, "first_name"),
        (.custom { KeyValueCodingKey(stringValue: $0.last!.stringValue.lowercased()) }, "FIRSTNAME"),
    ]

    @Test("key strategies", arguments: keyRows)
    func keyStrategies(strategy: KeyValueDecoder.KeyDecodingStrategy, storedKey: String) throws {
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = strategy
        let name = try decodeWith([storedKey: "Ada"], decoder: decoder) { decoder in
            try decoder.container(keyedBy: AnyKey.self).decode(String.self, forKey: strategy.isCustom ? "firstname" : "firstName")
        }
        #expect(name == "Ada")
    }

    @Test("URL accepts every form the encoders write")
    func urlForms() throws {
        let decoder = KeyValueDecoder()
        var strictAbsolute = KeyValueDecoder()
        strictAbsolute.urlDecodingStrategy = .absoluteString
        let url = URL(string: "https://fish.com/chips?x=1#top")!
        #expect(try decoder.decode(URL.self, from: url) == url)
        #expect(try decoder.decode(URL.self, from: "https://fish.com/chips?x=1#top") == url)

        let relative = URL(string: "chips", relativeTo: URL(string: "https://fish.com/a/")!)!
        let plistForm = try PropertyListSerialization.propertyList(
            from: PropertyListEncoder().encode([relative]), format: nil
        )
        #expect(try decoder.decode([URL].self, from: plistForm) == [relative])
        guard let stored = try KeyValueEncoder().encodeForUserDefaults(relative) else {
            Issue.record("a URL is stored as a value")
            return
        }
        #expect(try decoder.decodeFromUserDefaults(URL.self, from: stored) == relative)
        let relativeString = caught(DecodingError.self) { try decoder.decode(URL.self, from: "chips") }
        #expect(debugDescription(of: relativeString) == "Expected an absolute URL, found the relative URL string \"chips\" at SELF")
        #expect(try strictAbsolute.decode(URL.self, from: "chips") == URL(string: "chips"))

        var strict = KeyValueDecoder()
        strict.urlDecodingStrategy = .absoluteString
        #expect(throws: DecodingError.self) { try strict.decode(URL.self, from: url) }
        let invalid = caught(DecodingError.self) { try strict.decode(URL.self, from: "") }
        #expect(debugDescription(of: invalid) == "Invalid URL string \"\" at SELF")
    }

    @Test("a type read once through its own init(from:) is still read by the decoder's own rules where those depend on the value")
    func typesReadOnceThroughInitFromKeepTheirOtherForms() throws {
        // The decoder skips its own metatype compares for a type it has found to be a
        // model; URL, Data and PropertyListValue fall back to init(from:) for some values
        // only, and must not be taken for models.
        let relative = URL(string: "chips", relativeTo: URL(string: "https://fish.com/a/")!)!
        let plist = try PropertyListSerialization.propertyList(from: PropertyListEncoder().encode([relative]), format: nil)
        let keyedURL = try #require((plist as? [Any])?.first)
        let urls: [Any] = [keyedURL, "https://fish.com/b", keyedURL]
        let decodedURLs = try KeyValueDecoder().decode([URL].self, from: urls)
        #expect(decodedURLs.map(\.absoluteString) == ["https://fish.com/a/chips", "https://fish.com/b", "https://fish.com/a/chips"])

        let data = try KeyValueDecoder().decode([Data].self, from: [[1, 2] as [Any], Data([3]), [4] as [Any]] as [Any])
        #expect(data == [Data([1, 2]), Data([3]), Data([4])])

        // A `[String]` whose value is not an array of strings goes the long way, and the
        // next one still passes through.
        let strings = try KeyValueDecoder().decode([[String]].self, from: [["a", "b"] as [Any], ["c"] as [String]] as [Any])
        #expect(strings == [["a", "b"], ["c"]])
    }

    @Test("Data accepts native data and byte arrays; Base64 text only under .base64")
    func dataForms() throws {
        let decoder = KeyValueDecoder()
        let data = Data([1, 2, 255])
        #expect(try decoder.decode(Data.self, from: data) == data)
        #expect(try decoder.decode(Data.self, from: [1, 2, 255]) == data)
        let text = caught(DecodingError.self) { try decoder.decode(Data.self, from: "AQL/") }
        #expect(debugDescription(of: text) == "Expected Data at SELF, found String")
        var strict = KeyValueDecoder()
        strict.dataDecodingStrategy = .base64
        #expect(try strict.decode(Data.self, from: "AQL/") == data)
        #expect(throws: DecodingError.self) { try strict.decode(Data.self, from: data) }
        strict.dataDecodingStrategy = .custom { value in Data(((value as? String) ?? "").utf8) }
        #expect(try strict.decode(Data.self, from: "hi") == Data("hi".utf8))
    }

    @Test("snake case converts a struct's keys, and leaves a [String: V]'s keys alone, as Foundation does")
    func snakeCase() throws {
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let tree: [String: Any] = ["first_name": "Ada", "home_url": "x"]
        struct Plain: Codable, Equatable {
            var firstName: String
            var homeUrl: String
        }
        #expect(try decoder.decode(Plain.self, from: tree) == Plain(firstName: "Ada", homeUrl: "x"))
        // Modelled on swift-foundation's JSONEncoderTests
        // `testDecodingDictionaryStringKeyConversionUntouched`.
        #expect(try decoder.decode([String: String].self, from: tree) == ["first_name": "Ada", "home_url": "x"])
        struct Holder: Codable, Equatable { var byName: [String: Int] }
        #expect(try decoder.decode(Holder.self, from: ["by_name": ["leave_me_alone": 1]]) == Holder(byName: ["leave_me_alone": 1]))
        // As with JSONDecoder, an acronym does not survive the round trip through snake case.
        let acronym = caught(DecodingError.self) { try decoder.decode(SnakeModel.self, from: tree) }
        #expect(debugDescription(of: acronym) == "Dictionary does not contain key SELF.homeURL")

        var encoder = KeyValueEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let model = SnakeModel(firstName: "Ada", homeURL: "x")
        #expect(Tree(try encoder.encode(model)) == .dictionary(["first_name": .string("Ada"), "home_url": .string("x")]))
    }

    // Modelled on swift-foundation's JSONEncoderTests `testDecodingConcreteTypeParameter`.
    @Test("a metatype held in a superclass variable decodes the subclass")
    func dynamicType() throws {
        let type: Animal.Type = Dog.self
        let tree: [String: Any] = ["breed": "collie", "super": ["name": "Lassie"]]
        let animal = try KeyValueDecoder().decode(type, from: tree)
        #expect(animal is Dog)
        #expect((animal as? Dog)?.breed == "collie")
        #expect(animal.name == "Lassie")
    }

    // Modelled on swift-foundation's decodeIfPresent tests for unkeyed containers: a v2
    // model that reads one more optional trailing element still reads what v1 wrote.
    @Test("decodeIfPresent at the end of an unkeyed container gives nil, for every type")
    func decodeIfPresentAtEnd() throws {
        let values = try decodeWith([1]) { decoder -> [String] in
            var container = try decoder.unkeyedContainer()
            let first = try container.decode(Int.self)
            let string = try container.decodeIfPresent(String.self)
            let int = try container.decodeIfPresent(Int.self)
            let user = try container.decodeIfPresent(User.self)
            let date = try container.decodeIfPresent(Date.self)
            return ["\(first)", "\(string as Any)", "\(int as Any)", "\(user as Any)", "\(date as Any)", "\(container.isAtEnd)"]
        }
        #expect(values == ["1", "nil", "nil", "nil", "nil", "true"])
        let stored = try decodeWith([1], decoder: KeyValueDecoder()) { decoder -> String? in
            var container = try decoder.unkeyedContainer()
            _ = try container.decode(Int.self)
            return try container.decodeIfPresent(String.self)
        }
        #expect(stored == nil)
        // decode (not IfPresent) past the end still throws valueNotFound.
        let error = caught(DecodingError.self) {
            try decodeWith([1]) { decoder -> String in
                var container = try decoder.unkeyedContainer()
                _ = try container.decode(Int.self)
                return try container.decode(String.self)
            }
        }
        #expect(debugDescription(of: error) == "Expected String at SELF[1], found end of array")
    }

    @Test("custom key strategy sees the full path")
    func customKeys() throws {
        var decoder = KeyValueDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            KeyValueCodingKey(stringValue: path.last!.stringValue.lowercased())
        }
        #expect(try decoder.decode(User.self, from: ["ID": 3, "NAME": "x"]) == User(id: 3, name: "x"))
    }

    @Test("values wrapped in Optional, as Foundation on Linux returns them, decode")
    func wrappedOptionals() throws {
        let wrapped: [AnyHashable: Any?] = ["id": Optional<Any>.some(4), "name": Optional<Any>.some("x")]
        #expect(try KeyValueDecoder().decode(User.self, from: wrapped as Any) == User(id: 4, name: "x"))
        #expect(try KeyValueDecoder().decode([Int].self, from: [Optional<Any>.some(1) as Any, Optional<Any>.some(2.0) as Any]) == [1, 2])
    }

    /// One tree that is not of the dictionary's own type, and what it decodes to.
    struct PrimitiveDictionaryRow: @unchecked Sendable, CustomTestStringConvertible {
        let tree: Any
        let decode: (KeyValueDecoder, Any) throws -> AnyHashable
        let expected: AnyHashable
        let testDescription: String

        init<V: Decodable & Hashable>(_ tree: Any, _ expected: [String: V], _ description: String) {
            self.tree = tree
            self.decode = { try $0.decode([String: V].self, from: $1) }
            self.expected = expected
            self.testDescription = description
        }
    }

    static let primitiveDictionaryRows: [PrimitiveDictionaryRow] = [
        .init(["a": 1.5, "b": -2.0] as [String: Any], ["a": 1.5, "b": -2.0] as [String: Double], "[String: Any] of Doubles"),
        .init(["a": 1, "b": Float(0.5)] as [String: Any], ["a": 1.0, "b": 0.5] as [String: Double], "[String: Double] from an Int and a Float"),
        .init(["a": NSNumber(value: 0.25)] as [String: Any], ["a": 0.25] as [String: Double], "[String: Double] from an NSNumber"),
        .init(["a": 3, "b": 4.0, "c": Int64(5)] as [String: Any], ["a": 3, "b": 4, "c": 5] as [String: Int], "[String: Int] from whole numbers of every type"),
        .init(["a": true, "b": NSNumber(value: false)] as [String: Any], ["a": true, "b": false] as [String: Bool], "[String: Bool] from Bool and NSNumber"),
        .init(["a": "x", "b": NSString(string: "y")] as [String: Any], ["a": "x", "b": "y"] as [String: String], "[String: String] from String and NSString"),
        .init(["a": Optional<Any>.some(1.5), "b": Optional<Any>.some(2)] as [AnyHashable: Any?], ["a": 1.5, "b": 2.0] as [String: Double], "Foundation's [AnyHashable: Any?]"),
        .init(NSDictionary(dictionary: ["snake_case": 1]), ["snake_case": 1] as [String: Int], "NSDictionary"),
        .init([String: Any](), [:] as [String: Double], "empty"),
    ]

    @Test("dictionaries of primitives decode from trees of other types, entry by entry", arguments: primitiveDictionaryRows)
    func primitiveDictionaries(_ row: PrimitiveDictionaryRow) throws {
        #expect(try row.decode(KeyValueDecoder(), row.tree) == row.expected)
        // Their keys are data: a key strategy leaves them alone.
        var snake = KeyValueDecoder()
        snake.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try row.decode(snake, row.tree) == row.expected)
    }

    @Test("Bool and number NSNumbers from Foundation decode to matching Swift types")
    func foundationValues() throws {
        let plist: [String: Any] = ["flag": NSNumber(value: true), "count": NSNumber(value: 3), "ratio": NSNumber(value: 0.5), "name": NSString(string: "n")]
        struct Settings: Decodable, Equatable {
            var flag: Bool
            var count: Int
            var ratio: Double
            var name: String
        }
        #expect(try KeyValueDecoder().decode(Settings.self, from: plist) == Settings(flag: true, count: 3, ratio: 0.5, name: "n"))
    }

    @Test("userInfo and codingPath reach init(from:)")
    func userInfoAndPath() throws {
        struct Probe: Decodable {
            static let key = CodingUserInfoKey(rawValue: "k")!
            var seen: String
            init(from decoder: any Decoder) throws {
                seen = "\(decoder.userInfo[Self.key] as? String ?? "-") \(readablePath(decoder.codingPath))"
            }
        }
        var decoder = KeyValueDecoder()
        decoder.userInfo[Probe.key] = "v"
        let probes = try decoder.decode([String: [Probe]].self, from: ["list": [0, 0]])
        #expect(probes["list"]?.map(\.seen) == ["v SELF.list[0]", "v SELF.list[1]"])
    }

    /// Inputs for `arraysAsArrayInitFromReadsThem`: an `[Any]` each, read as `[User]`,
    /// `[User?]` or `[[User]]`, in trees that read and trees that throw.
    static let arrayRows: [(String, SendableAny)] = [
        ("[User]", SendableAny([["id": 1, "name": "a"], ["id": 2, "name": "b"]] as [Any])),
        ("[User]", SendableAny([] as [Any])),
        ("[User]", SendableAny([["id": 1, "name": "a"], ["id": "2", "name": "b"]] as [Any])),
        ("[User]", SendableAny([["id": 1, "name": "a"], ["id": 2]] as [Any])),
        ("[User]", SendableAny([["id": 1, "name": "a"], 7] as [Any])),
        ("[User]", SendableAny([["id": 1, "name": "a"], Optional<Any>.none as Any] as [Any])),
        ("[User?]", SendableAny([Optional<Any>.none as Any, ["id": 2, "name": "b"]] as [Any])),
        ("[User?]", SendableAny([["id": 2, "name": 3]] as [Any])),
        ("[[User]]", SendableAny([[["id": 1, "name": "a"]] as [Any], [] as [Any]] as [Any])),
        ("[[User]]", SendableAny([[["id": 1, "name": "a"]] as [Any], [["id": 1]] as [Any]] as [Any])),
    ]

    /// Reads an array element by element through an unkeyed container, as
    /// `Array.init(from:)` does, so that the decoder's one-loop reading of `[Element]`
    /// can be held against it.
    struct ThroughContainer<Element: Decodable & Equatable>: Decodable, Equatable {
        var elements: [Element]
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            var elements: [Element] = []
            while !container.isAtEnd { elements.append(try container.decode(Element.self)) }
            self.elements = elements
        }
    }

    /// The same result, or the same error at the same path, from both ways of reading.
    func expectSameReading<Element: Decodable & Equatable>(_: Element.Type, _ tree: Any) {
        let decoder = KeyValueDecoder()
        let direct = Result { try decoder.decode([Element].self, from: tree) }
        let through = Result { try decoder.decode(ThroughContainer<Element>.self, from: tree).elements }
        switch (direct, through) {
        case (.success(let a), .success(let b)):
            #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect(debugDescription(of: a) == debugDescription(of: b))
            #expect(readablePath(of: a) == readablePath(of: b))
            #expect(String(describing: type(of: a)) == String(describing: type(of: b)))
        default:
            Issue.record("one way read \(direct), the other \(through)")
        }
    }

    @Test("an array of values reads as Array.init(from:) reads it: the same values, errors and paths", arguments: arrayRows)
    func arraysAsArrayInitFromReadsThem(type: String, tree: SendableAny) {
        switch type {
        case "[User]": expectSameReading(User.self, tree.value)
        case "[User?]": expectSameReading(User?.self, tree.value)
        default: expectSameReading([User].self, tree.value)
        }
    }

    @Test("round trips", arguments: [0, 1, 2, 3])
    func roundTrips(index: Int) throws {
        switch index {
        case 0: try expectRoundTrip([User(id: 1, name: "a"), User(id: 2, name: "b")])
        case 1: try expectRoundTrip(["a": [1, 2], "b": []])
        case 2: try expectRoundTrip([Event.message("$null"), .reset])
        default: try expectRoundTrip(Dated(when: Date(timeIntervalSinceReferenceDate: 0.125)))
        }
    }

    @Test("trees nested deeper than 512 levels throw instead of overflowing the stack")
    func nestingLimit() throws {
        #expect(try KeyValueDecoder().decode(Link.self, from: Link.tree(length: 512)).length == 512)

        let error = caught(DecodingError.self) { try KeyValueDecoder().decode(Link.self, from: Link.tree(length: 513)) }
        #expect(debugDescription(of: error) == "Nesting deeper than 512 levels at \(Link.messagePath(512))")
        #expect(readablePath(of: error) == Link.path(512))

        // Far deeper, as the fuzzer built them: arrays in dictionaries, 3,000 levels.
        var tower: Any = 0
        for level in 0..<3_000 { tower = level % 2 == 0 ? [tower] as [Any] : ["_0": tower] as [String: Any] }
        indirect enum Nest: Decodable { case leaf(Int), branch([Nest]) }
        #expect(throws: DecodingError.self) { try KeyValueDecoder().decode([Nest].self, from: tower) }
    }

    /// The keyed containers the `Keeper`s of one decode were given, in the order made.
    final class KeptContainers: @unchecked Sendable {
        static let key = CodingUserInfoKey(rawValue: "kept")!
        var containers: [KeyedDecodingContainer<AnyKey>] = []
    }

    /// Keeps its keyed container, and reads the one kept before it while it is read.
    struct Keeper: Decodable, Equatable {
        let id: Int
        let before: Int?
        let inner: [Keeper]

        init(from decoder: any Decoder) throws {
            let kept = try #require(decoder.userInfo[KeptContainers.key] as? KeptContainers)
            let container = try decoder.container(keyedBy: AnyKey.self)
            before = try kept.containers.last?.decode(Int.self, forKey: "id")
            kept.containers.append(container)
            id = try container.decode(Int.self, forKey: "id")
            inner = try container.decodeIfPresent([Keeper].self, forKey: "inner") ?? []
        }
    }

    struct KeptRow: @unchecked Sendable, CustomTestStringConvertible {
        let testDescription: String
        let tree: [[String: Any]]
        /// Each `Keeper`'s `before`, in the order their containers were made.
        let befores: [Int?]
        /// What each kept container reads once the decode has ended.
        let ids: [Int]
    }

    static let keptRows = [
        KeptRow(testDescription: "siblings, each at the depth of the one before", tree: [["id": 0], ["id": 1], ["id": 2]], befores: [nil, 0, 1], ids: [0, 1, 2]),
        KeptRow(
            testDescription: "a value's container still in use while the values below it are read",
            tree: [["id": 0, "inner": [["id": 10], ["id": 11]]], ["id": 1, "inner": [["id": 20]]]],
            befores: [nil, 0, 10, 11, 1], ids: [0, 10, 11, 1, 20]),
    ]

    @Test("a keyed container kept past its value reads its own values, while and after the decoder reads others at its depth", arguments: keptRows)
    func keptContainers(row: KeptRow) throws {
        let (tree, befores, ids) = (row.tree, row.befores, row.ids)
        let kept = KeptContainers()
        // The kept containers refer to their decoder, whose user info holds `kept`:
        // letting go of them breaks the cycle.
        defer { kept.containers = [] }
        var decoder = KeyValueDecoder()
        decoder.userInfo[KeptContainers.key] = kept
        let keepers = try decoder.decode([Keeper].self, from: tree)
        func flattened(_ keepers: [Keeper]) -> [Keeper] { keepers.flatMap { [$0] + flattened($0.inner) } }
        #expect(flattened(keepers).map(\.before) == befores)
        #expect(try kept.containers.map { try $0.decode(Int.self, forKey: "id") } == ids)
    }

    /// Holds, weakly, every decoder and super decoder a `Watched` was given.
    final class WatchedDecoders: @unchecked Sendable {
        static let key = CodingUserInfoKey(rawValue: "watched")!
        struct Weak { weak var decoder: AnyObject? }
        var decoders: [Weak] = []
    }

    /// Reads keyed containers at two depths, and through a super decoder.
    struct Watched: Decodable {
        init(from decoder: any Decoder) throws {
            let watched = try #require(decoder.userInfo[WatchedDecoders.key] as? WatchedDecoders)
            let container = try decoder.container(keyedBy: AnyKey.self)
            _ = try container.nestedContainer(keyedBy: AnyKey.self, forKey: "nested").decode(Int.self, forKey: "a")
            let superDecoder = try container.superDecoder()
            _ = try superDecoder.container(keyedBy: AnyKey.self).decode(Int.self, forKey: "b")
            watched.decoders += [.init(decoder: decoder as AnyObject), .init(decoder: superDecoder as AnyObject)]
        }
    }

    @Test("a decode lets go of its decoders when it ends: the containers it keeps for reuse hold them only until then")
    func decodersReleased() throws {
        let watched = WatchedDecoders()
        var decoder = KeyValueDecoder()
        decoder.userInfo[WatchedDecoders.key] = watched
        _ = try decoder.decode([Watched].self, from: [["nested": ["a": 1], "super": ["b": 2]], ["nested": ["a": 3], "super": ["b": 4]]])
        #expect(watched.decoders.count == 4)
        #expect(watched.decoders.allSatisfy { $0.decoder == nil })
    }
}

extension KeyValueDecoder.KeyDecodingStrategy {
    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }
}

@Suite("KeyValueDecoder strategies")
struct KeyValueDecoderStrategyTests {
    @Test(
        "the nil strategy that matches an encoder's reads back what it wrote",
        arguments: [
            (KeyValueEncoder.NilEncodingStrategy.default, [1, nil, 3] as [Int?]),
            (.stringNull, [1, nil, 3]),
            (.nsNull, [nil, nil]),
            (.placeholder(-1) { ($0 as? Int) == -1 }, [nil, 2]),
        ])
    func matching(strategy: KeyValueEncoder.NilEncodingStrategy, values: [Int?]) throws {
        var encoder = KeyValueEncoder()
        encoder.nilEncodingStrategy = strategy
        var decoder = KeyValueDecoder()
        decoder.nilDecodingStrategy = .init(matching: strategy)
        #expect(try decoder.decode([Int?].self, from: try #require(try encoder.encode(values))) == values)
    }

    @Test("the decoder's nil strategies say which values are nil")
    func isNull() {
        #expect(KeyValueDecoder.NilDecodingStrategy.default.isNull(Optional<Any>.none as Any))
        #expect(!KeyValueDecoder.NilDecodingStrategy.default.isNull("$null"))
        #expect(KeyValueDecoder.NilDecodingStrategy.stringNull.isNull("$null"))
        #expect(!KeyValueDecoder.NilDecodingStrategy.stringNull.isNull("null"))
        #expect(KeyValueDecoder.NilDecodingStrategy.nsNull.isNull(NSNull()))
    }

}
