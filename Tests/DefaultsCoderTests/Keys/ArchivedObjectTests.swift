// NSSecureCoding values, with Foundation classes that adopt NSSecureCoding on Linux.

import Foundation
import Testing

@testable import DefaultsCoder

#if canImport(AppKit)
import AppKit
#endif

@Suite("ArchivedObject")
struct ArchivedObjectTests {
    @Test("a secure-coding object goes through a typed key, the wrapper and observation")
    func throughKeys() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<ArchivedObject<NSUUID>?>(uniqueKey("token"))
        let token = NSUUID()
        let heard = Locked<[String]>([])
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.withLock { $0.append(new?.object.uuidString ?? "nil") } }
        try suite.defaults.write(ArchivedObject(token), to: key)
        #expect(try suite.defaults.read(key)?.object == token)
        #expect(suite.defaults.data(forKey: key.name) != nil)
        @UserDefault(key, store: suite.defaults) var wrapped
        #expect(wrapped?.object == token)
        wrapped = nil
        // Awaited: another test's announcement may find a change first and hand it to
        // the handler from its own thread, a moment after the write returns.
        #expect(await eventually { heard.withLock { $0 }.count >= 2 })
        #expect(heard.withLock { $0 } == [token.uuidString, "nil"])
        withExtendedLifetime(observation) {}
    }

    @Test("an archive of a class that is not allowed throws, and the subscript reports it")
    func notAllowed() throws {
        let suite = TestSuite()
        let name = uniqueKey("url")
        let archive = try NSKeyedArchiver.archivedData(withRootObject: NSURL(string: "https://x.org")!, requiringSecureCoding: true)
        suite.defaults.set(archive, forKey: name)
        let key = DefaultsKey<ArchivedObject<NSUUID>?>(name)
        let error = caught(DecodingError.self) { try suite.defaults.read(key) }
        guard case .dataCorrupted? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(debugDescription(of: error)?.hasPrefix("Cannot unarchive NSUUID") == true || debugDescription(of: error)?.hasPrefix("Expected an archived NSUUID") == true)
        ReportedFailures.install()
        #expect(suite.defaults[key] == nil)
        #expect(ReportedFailures.reports(for: name).last?.operation == .read)
    }

    @Test("damaged archives throw instead of trapping", arguments: [Data(), Data("garbage".utf8), Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30])])
    func damaged(data: Data) throws {
        let suite = TestSuite()
        let name = uniqueKey("damaged")
        suite.defaults.set(data, forKey: name)
        #expect(throws: DecodingError.self) { try suite.defaults.read(DefaultsKey<ArchivedObject<NSUUID>?>(name)) }
    }

    #if canImport(AppKit)
    // Apple's secure unarchiver also allows the classes an archived root decodes itself
    // (the color space inside an `NSColor`), which a check of the archive's class names
    // alone refused. Runs where AppKit is: the macOS job of the GitHub workflow.
    @Test("an archived color reads back as the color, its color space and all")
    func colorOnMac() throws {
        let suite = TestSuite()
        let key = DefaultsKey<ArchivedObject<NSColor>?>(uniqueKey("accent"))
        let color = NSColor(srgbRed: 0.2, green: 0.4, blue: 0.6, alpha: 1)
        try suite.defaults.write(ArchivedObject(color), to: key)
        #expect(try suite.defaults.read(key) == ArchivedObject(color))
    }
    #endif
}
