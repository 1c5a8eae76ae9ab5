import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("TreeForm")
struct TreeFormTests {

    @Test(
        "the plain form writes nil as the nil strategy says",
        arguments: [
            (KeyValueEncoder.NilEncodingStrategy.default, Tree.null),
            (.stringNull, .string("$null")),
            (.nsNull, .nsNull),
        ])
    func plainNull(strategy: KeyValueEncoder.NilEncodingStrategy, expected: Tree) {
        #expect(Tree(PlainEncodingForm(nilStrategy: strategy).null) == expected)
    }

    @Test("the plain form leaves nil out under .removed, and keeps values as they are")
    func plainValues() throws {
        let form = PlainEncodingForm(nilStrategy: .removed)
        #expect(form.null == nil)
        #expect(Tree(form.integer(Int8(3))) == .int8(3))
        #expect(Tree(form.float(1.5)) == .float(1.5))
        #expect(form.problem(withKey: "\u{FEFF}k") == nil)
    }

    @Test(
        "the plain form reads absolute URL strings only",
        arguments: [
            ("https://a.b/c", true), ("file:///tmp", true), ("mailto:x@y.z", true),
            ("relative/path", false), ("/absolute/path", false), ("", false),
        ])
    func plainURLs(string: String, accepted: Bool) {
        #expect((PlainDecodingForm(nilStrategy: .default).url(string) != nil) == accepted)
    }

    @Test("the plain form unwraps by the nil strategy")
    func plainUnwrap() {
        let form = PlainDecodingForm(nilStrategy: .stringNull)
        if case .none = form.unwrap("$null") {} else { Issue.record("$null is nil under .stringNull") }
        if case .some(let value) = form.unwrap("x") { #expect(value as? String == "x") } else { Issue.record("x is a value") }
    }
}
