import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("TreeValues")
struct TreeValuesTests {

    @Test("class checks answer for Swift containers and Foundation objects alike")
    func objectChecks() {
        #expect(isObject(NSNull()))
        #expect(!isObject([1, 2]))
        #expect(!isObject(["a": 1]))
        #expect(isNSNull(NSNull()))
        #expect(!isNSNull([NSNull()]))
        #expect(!isNSNull(Optional<Any>.none as Any))
        #expect(isDictionary(["a": 1]))
        #expect(isDictionary(NSDictionary(dictionary: ["a": 1])))
        #expect(!isDictionary([1]))
        #expect(isArray([1]))
        #expect(isArray(NSArray(array: [1])))
        #expect(!isArray(["a": 1]))
    }

    @Test("optionals inside Any are seen through, and a nil at any level is nil")
    func optionals() {
        #expect(flattenOptional(Optional<Any>.none as Any) == nil)
        #expect(flattenOptional(Optional<Any>.some(Optional<Any>.none as Any) as Any) == nil)
        #expect(flattenOptional(Optional<Any>.some(3) as Any) as? Int == 3)
        #expect(flattenOptional("x") as? String == "x")
    }
}
