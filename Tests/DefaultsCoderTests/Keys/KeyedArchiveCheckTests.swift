// The checked reader of keyed archives (Linux): what it refuses, through
// `ArchivedObject`, with the key in the error, and on its own.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

#if !canImport(Darwin)
@Suite("KeyedArchiveCheck")
struct KeyedArchiveCheckTests {
    @Test(
        "a hostile archive throws DecodingError with the key, before the unarchiver can trap or misread it",
        arguments: [
            (
                ArchivedObjectTests.archive(arrayObjects: "<array><dict><key>CF$UID</key><integer>2</integer></dict><dict><key>CF$UID</key><integer>1</integer></dict></array>"),
                "it holds a reference cycle"
            ),
            (ArchivedObjectTests.archive(arrayObjects: "<array><dict><key>CF$UID</key><integer>40</integer></dict></array>"), "it refers to object 40 of 9"),
            (ArchivedObjectTests.archive(root: 99), "it refers to object 99 of 9"),
            (ArchivedObjectTests.archive(dateClass: 5), "object 2 does not name its class"),
            (ArchivedObjectTests.archive(dateClass: 77), "object 2 does not name its class"),
            (ArchivedObjectTests.archive(keys: [5], values: [6, 6]), "its NSDictionary holds 1 keys and 2 objects"),
            (ArchivedObjectTests.archive(time: "<string>soon</string>"), "its NSDate holds no time"),
            (ArchivedObjectTests.archive(arrayObjects: "<string>x</string>"), "its NSArray holds no objects"),
            (ArchivedObjectTests.deepArchive(depth: 20_000), "it nests deeper than 512 objects"),
            (Data("<plist><dict/></plist>".utf8), "it is not a keyed archive"),
        ] as [(Data, String)])
    func hostileArchive(data: Data, reason: String) {
        let error = caught(DecodingError.self) { try KeyValueDecoder().decode([String: ArchivedObject<NSArray>].self, from: ["a": data]) }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription == "Cannot unarchive NSArray: \(reason)")
        #expect(context.codingPath.map(\.stringValue) == ["a"])
    }

    @Test("a well-formed archive, and one whose root is a plain string, pass")
    func wellFormed() {
        #expect(KeyedArchiveCheck.problem(in: ArchivedObjectTests.archive(), allowed: ArchivedObject<NSArray>.allowedClasses) == nil)
        #expect(KeyedArchiveCheck.problem(in: ArchivedObjectTests.archive(root: 5), allowed: ArchivedObject<NSArray>.allowedClasses) == nil)
    }

    @Test("a class that is not allowed is named")
    func notAllowed() throws {
        let archive = try NSKeyedArchiver.archivedData(withRootObject: NSUUID(), requiringSecureCoding: true)
        #expect(KeyedArchiveCheck.problem(in: archive, allowed: ArchivedObject<NSArray>.allowedClasses) == "it holds a NSUUID, which is not allowed")
    }
}
#endif
