import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("CoderSupport")
struct CoderSupportTests {

    struct Foreign: Error {}

    @Test("a custom strategy's coding errors pass through; any other error is wrapped")
    func customStrategies() throws {
        let coding = DecodingError.corrupted("inner", at: [])
        #expect(throws: DecodingError.self) {
            try runCustomStrategy({ throw coding }, wrap: { _ in CocoaError(.coderInvalidValue) })
        }
        let wrapped = caught(CocoaError.self) {
            try runCustomStrategy({ throw Foreign() }, wrap: { _ in CocoaError(.coderInvalidValue) })
        }
        #expect(wrapped?.code == .coderInvalidValue)
        #expect(try runCustomStrategy({ 5 }, wrap: { $0 }) == 5)
    }

    @Test("userInfo reaches both coders' values as given")
    func userInfo() throws {
        let key = CodingUserInfoKey(rawValue: "k")!
        #expect(codingUserInfo([:]).isEmpty)
        #expect(codingUserInfo([key: 3])[key] as? Int == 3)
        var decoder = KeyValueDecoder()
        decoder.userInfo[key] = "value"
        #expect(try decodeWith(1, decoder: decoder) { $0.userInfo[key] as? String } == "value")
    }

    @Test(
        "exactCast takes exactly the dynamic type, also an Any inside an Any; cast takes what as? takes",
        arguments: [
            (SendableAny("text"), "text", "text"),
            (SendableAny(nestedInAny("text" as Any)), "text", "text"),
            (SendableAny(nestedInAny(nestedInAny("text" as Any))), "text", "text"),
            (SendableAny(Optional("text") as Any), nil, "text"),
            (SendableAny(NSString(string: "text")), nil, "text"),
            (SendableAny(5), nil, nil),
        ] as [(SendableAny, String?, String?)]
    )
    func exactCasts(value: SendableAny, exact: String?, cast expected: String?) {
        #expect(exactCast(value.value, to: String.self) == exact)
        #expect(cast(value.value, to: String.self) == expected)
        #expect(cast(value.value, to: String.self) == value.value as? String)
    }

    @Test("exactCast of a value whose type is not T is nil, even where a cast would convert it")
    func exactCastMismatch() {
        #expect(exactCast(Int64(1), to: Int.self) == nil)
        #expect(exactCast(["a": 1] as [String: Int], to: [String: Any].self) == nil)
        #expect(cast(["a": 1] as [String: Int], to: [String: Any].self)?["a"] as? Int == 1)
        #expect(exactCast(nestedInAny(["a": 1] as [String: Any]), to: [String: Any].self)?["a"] as? Int == 1)
    }

    @Test("ModelTypes holds the last two types remembered, by exact type")
    func modelTypes() {
        var types = ModelTypes()
        #expect(!types.contains(User.self))
        types.remember(User.self)
        types.remember(Food.self)
        #expect(types.contains(User.self) && types.contains(Food.self))
        #expect(!types.contains(User?.self) && !types.contains([User].self))
        types.remember(Int.self)
        #expect(!types.contains(User.self))
        #expect(types.contains(Food.self) && types.contains(Int.self))
    }
}

/// An `Any` inside an `Any`: what a generic value of type `Any` becomes when it is passed
/// on as `Any`.
private func nestedInAny<T>(_ value: T) -> Any { value }
