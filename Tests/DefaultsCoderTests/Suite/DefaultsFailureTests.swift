import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultsFailure")
struct DefaultsFailureTests {

    @Test("the default handler logs the first failure of each key and operation only")
    func logOnce() {
        let name = uniqueKey("logged")
        var lines: [String] = []
        let read = DefaultsFailure(key: name, operation: .read, error: DecodingError.mismatch(Int.self, found: .value(String.self), at: []))
        let write = DefaultsFailure(key: name, operation: .write, error: EncodingError.invalid(0, "Cannot store", at: []))
        DefaultsFailure.logOnce(read) { lines.append($0) }
        DefaultsFailure.logOnce(read) { lines.append($0) }
        DefaultsFailure.logOnce(write) { lines.append($0) }
        #expect(
            lines == [
                "DefaultsCoder: cannot read \"\(name)\", returning its default: Expected BinaryInteger at SELF, found String",
                "DefaultsCoder: cannot store \"\(name)\", leaving it as it was: Cannot store at SELF",
            ])
    }

    /// The registration domain is shared by every `UserDefaults` in the process, so this
    /// test registers keys no other test uses.
    @Test(
        "a failure names its key, what was being done, the message and the path",
        arguments: [
            (DefaultsFailure.Operation.read, "DefaultsCoder: cannot read \"k\", returning its default: Expected String at SELF.name, found Int"),
            (.write, "DefaultsCoder: cannot store \"k\", leaving it as it was: Expected String at SELF.name, found Int"),
        ])
    func describing(operation: DefaultsFailure.Operation, description: String) {
        let path: [any CodingKey] = [KeyValueCodingKey(stringValue: "name")]
        let failure = DefaultsFailure(key: "k", operation: operation, error: DecodingError.mismatch(String.self, found: .value(Int.self), at: path))
        #expect(failure.description == description)
        #expect(readablePath(failure.codingPath) == "SELF.name")
        let other = DefaultsFailure(key: "k", operation: operation, error: CocoaError(.fileNoSuchFile))
        #expect(other.codingPath.isEmpty)
    }
}
