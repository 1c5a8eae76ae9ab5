// The one reader of plist bytes: what it refuses, what it lets through, and every path
// by which a legacy blob reaches it.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// Property lists that crash or hang Foundation's parsers when read unchecked.
enum HostilePlist {
    static let header = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0">"#
    /// XML arrays nested 20,000 deep: `PropertyListDecoder`'s recursive parser overflows
    /// the stack on it.
    static let deepXML = Data((header + String(repeating: "<array>", count: 20_000) + String(repeating: "</array>", count: 20_000) + "</plist>").utf8)
    /// The OpenStep form, as deep.
    static let deepOpenStep = Data((String(repeating: "(", count: 20_000) + String(repeating: ")", count: 20_000)).utf8)
    /// `[<itself>]`: a recursive type reads it forever.
    static let selfContaining = BinaryPlist.make([[0xA1] + BinaryPlist.ref(0)])
}

@Suite("PropertyListReader")
struct PropertyListReaderTests {

    @Test(
        "bytes a parser must not see are refused, with the reason",
        arguments: [
            (Data(), "it is empty"),
            (HostilePlist.deepXML, "it nests containers 20000 deep, more than the 512 a property list may"),
            (HostilePlist.deepOpenStep, "it nests containers 20000 deep, more than the 512 a property list may"),
            (HostilePlist.selfContaining, "it refers to itself"),
        ])
    func refused(data: Data, reason: String) {
        #expect(PropertyListReader.problem(in: data) == reason)
        #expect(throws: PropertyListReader.Problem(reason: reason)) { try PropertyListReader.propertyList(from: data) }
    }

    @Test(
        "what Foundation reads safely passes, however it looks",
        arguments: [
            HostilePlist.header + String(repeating: "<array>", count: 512) + String(repeating: "</array>", count: 512) + "</plist>",
            HostilePlist.header + "<dict><key>k</key><string>" + String(repeating: "{(", count: 2_000) + "</string></dict></plist>",
            HostilePlist.header + "<array><array/><dict/></array></plist>",
            #"{ k = "((((((((("; }"#,
        ])
    func passes(text: String) throws {
        #expect(PropertyListReader.problem(in: Data(text.utf8)) == nil)
        _ = try PropertyListReader.propertyList(from: Data(text.utf8))
    }

    @Test("a suite file must hold a dictionary")
    func suiteFileHoldsDictionary() {
        let array = Data((HostilePlist.header + "<array/></plist>").utf8)
        #expect(throws: PropertyListReader.Problem(reason: "it does not hold a dictionary")) { try PropertyListReader.dictionary(from: array) }
    }

    // MARK: - Legacy blobs, by every path

    @Test("a hostile legacy blob throws through a typed key's read, and the subscript reports it", arguments: [HostilePlist.deepXML, HostilePlist.selfContaining])
    func typedKey(blob: Data) throws {
        let suite = TestSuite()
        let name = uniqueKey("profile")
        suite.defaults.set(blob, forKey: name)
        let key = DefaultsKey<[JSONValue]>(name, default: [], legacy: .propertyList)
        let error = caught(DecodingError.self) { try suite.defaults.read(key) }
        let reason = try #require(PropertyListReader.problem(in: blob))
        #expect(debugDescription(of: error) == "Cannot read the property list blob: \(reason)")
        ReportedFailures.install()
        #expect(suite.defaults[key] == [])
        #expect(ReportedFailures.reports(for: name).last?.operation == .read)
        #expect(suite.defaults.data(forKey: name) == blob)
    }

    @Test("an observer of a key holding a hostile legacy blob reads the default and goes on")
    func observer() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<[JSONValue]>(uniqueKey("observed"), default: [], legacy: .propertyList)
        let seen = Locked<[[JSONValue]]>([])
        let observation = suite.defaults.observe(key, initial: false) { _, new in seen.withLock { $0.append(new) } }
        try suite.defaults.write([.number(1)], to: key)
        suite.defaults.set(HostilePlist.deepXML, forKey: key.name)
        try suite.defaults.write([.number(2)], to: key)
        #expect(await eventually { seen.withLock { $0.last } == [.number(2)] })
        // Another test's change of a suite makes every observer look again (Foundation's
        // didChangeNotification): one may have read the blob, as the default, in between.
        let events = seen.withLock { $0 }
        #expect(events.first == [.number(1)])
        #expect(events.dropFirst().dropLast().allSatisfy { $0 == [] }, "\(events)")
        withExtendedLifetime(observation) {}
    }

    @Test("a migration converting a hostile legacy blob stops, naming its version and key", arguments: [HostilePlist.deepXML, HostilePlist.selfContaining])
    func migration(blob: Data) throws {
        let suite = TestSuite()
        suite.defaults.set(blob, forKey: "old")
        let error = caught(DefaultsMigrationError.self) {
            try suite.defaults.migrate(DefaultsMigration(version: 3, .convert("old", from: [JSONValue].self, to: "new", legacy: .propertyList) { $0 }))
        }
        #expect(error?.version == 3)
        #expect(error?.key == "old")
        #expect(suite.defaults.data(forKey: "old") == blob)
        #expect(try suite.defaults.migrationVersion() == 0)
    }
}
