// NSSecureCoding values, with Foundation classes that adopt NSSecureCoding on Linux.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

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

    // MARK: - Hostile archives

    /// A keyed archive of `[date, ["k": "v"]]` in XML, with each part replaceable: the
    /// references (`CF$UID`), the date's payload, the array's objects.
    static func archive(
        root: Int = 1, arrayObjects: String? = nil, dateClass: Int = 3, time: String = "<real>5</real>", keys: [Int] = [5], values: [Int] = [6]
    ) -> Data {
        func uid(_ n: Int) -> String { "<dict><key>CF$UID</key><integer>\(n)</integer></dict>" }
        func uids(_ list: [Int]) -> String { "<array>" + list.map(uid).joined() + "</array>" }
        func classEntry(_ name: String) -> String {
            "<dict><key>$classes</key><array><string>\(name)</string><string>NSObject</string></array><key>$classname</key><string>\(name)</string></dict>"
        }
        let objects = [
            "<string>$null</string>",
            "<dict><key>$class</key>\(uid(8))<key>NS.objects</key>\(arrayObjects ?? uids([2, 4]))</dict>",
            "<dict><key>$class</key>\(uid(dateClass))<key>NS.time</key>\(time)</dict>",
            classEntry("NSDate"),
            "<dict><key>$class</key>\(uid(7))<key>NS.keys</key>\(uids(keys))<key>NS.objects</key>\(uids(values))</dict>",
            "<string>k</string>", "<string>v</string>", classEntry("NSDictionary"), classEntry("NSArray"),
        ]
        return archive(objects: objects, root: root)
    }

    static func archive(objects: [String], root: Int) -> Data {
        Data(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>$archiver</key><string>NSKeyedArchiver</string>"
                + "<key>$objects</key><array>\(objects.joined())</array><key>$top</key><dict><key>root</key>"
                + "<dict><key>CF$UID</key><integer>\(root)</integer></dict></dict><key>$version</key><integer>100000</integer></dict></plist>").utf8)
    }

    /// Arrays nested `depth` deep around a string.
    static func deepArchive(depth: Int) -> Data {
        var objects = ["<string>$null</string>"]
        for level in 0..<depth {
            objects.append(
                "<dict><key>$class</key><dict><key>CF$UID</key><integer>\(depth + 2)</integer></dict><key>NS.objects</key><array><dict><key>CF$UID</key><integer>\(level + 2)</integer></dict></array></dict>"
            )
        }
        objects.append("<string>bottom</string>")
        objects.append("<dict><key>$classes</key><array><string>NSArray</string><string>NSObject</string></array><key>$classname</key><string>NSArray</string></dict>")
        return archive(objects: objects, root: 1)
    }

    @Test("the archive the hostile ones are made from reads back")
    func wellFormedArchive() throws {
        let value = try KeyValueDecoder().decode([String: ArchivedObject<NSArray>].self, from: ["a": Self.archive()])
        let array = try #require(value["a"]?.object)
        #expect(array.count == 2)
        #expect((array[0] as? Date)?.timeIntervalSinceReferenceDate == 5)
    }

    #if !canImport(Darwin)
    /// Not top-level: corelibs' archiver names classes by `NSStringFromClass`, which
    /// stops the process for one nested in a type.
    final class Nested: NSObject, NSSecureCoding {
        static var supportsSecureCoding: Bool { true }
        override init() {}
        init?(coder: NSCoder) {}
        func encode(with coder: NSCoder) {}
    }

    @Test("archiving an object of a class that is not top-level throws instead of stopping the process")
    func nestedClass() {
        let error = caught(EncodingError.self) { try KeyValueEncoder().encode(ArchivedObject(Nested())) }
        #expect(debugDescription(of: error) == "Cannot archive Nested: DefaultsCoderTests.ArchivedObjectTests.Nested is not a top-level class")
    }
    #endif

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
