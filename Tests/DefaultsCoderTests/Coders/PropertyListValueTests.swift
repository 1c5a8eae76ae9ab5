import Foundation
import Testing

@testable import DefaultsCoder

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
}
