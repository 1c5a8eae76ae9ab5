// Suites whose name the package knows through public API (`UserDefaults.suite(named:)`),
// and what happens to an object whose name it cannot learn: as on an SDK where the name
// Foundation keeps in the object is no longer where the package reads it.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("UserDefaults+SuiteName")
struct UserDefaultsSuiteNameTests {

    @Test("an object made with suite(named:) is known by its name without Foundation's state; .standard is the app's suite")
    func recordedNames() throws {
        let name = "DefaultsCoderTests.named.\(UUID().uuidString)"
        let made = try #require(UserDefaults.suite(named: name))
        let plain = try #require(UserDefaults(suiteName: name))
        SuiteName.$readsFoundationsState.withValue(false) {
            #expect(SuiteName.of(made) == .some(name))
            #expect(SuiteName.of(UserDefaults.standard) == .some(nil))
            #expect(SuiteName.of(plain) == nil)
        }
        #expect(SuiteName.of(plain) == .some(name))
    }

    @Test("two objects made with suite(named:) are one suite: one feed, each hears the other's writes")
    func oneSuite() throws {
        let name = "DefaultsCoderTests.oneSuite.\(UUID().uuidString)"
        let (first, second) = try SuiteName.$readsFoundationsState.withValue(false) {
            (try #require(UserDefaults.suite(named: name)), try #require(UserDefaults.suite(named: name)))
        }
        defer { first.removePersistentDomain(forName: name) }
        let suites = SuiteName.$readsFoundationsState.withValue(false) { (DefaultsSuite.of(first), DefaultsSuite.of(second)) }
        #expect(suites.0 === suites.1)
        let key = DefaultsKey<Int>(uniqueKey("shared"), default: 0)
        let heard = Recorded<Int>()
        let observation = second.observe(key, initial: false) { _, new in heard.append(new) }
        defer { observation.cancel() }
        try first.write(3, to: key)
        #expect(heard.values == [3])
    }

    @Test("a move into another suite through an object whose name is unknown throws, and nothing is lost, though both are one suite")
    func unknownNameRefusesMoves() throws {
        let name = "DefaultsCoderTests.unknown.\(UUID().uuidString)"
        let unknown = try #require(UserDefaults(suiteName: name))
        defer { unknown.removePersistentDomain(forName: name) }
        unknown.set(14, forKey: "font")
        let error = SuiteName.$readsFoundationsState.withValue(false) {
            caught(DefaultsSuiteError.self) { try unknown.migrate(DefaultsMigration(version: 1, .move("font", intoSuite: name))) }
        }
        #expect(error?.operation == .unknownSuiteName)
        #expect(
            error?.description
                == "Cannot move keys between suites through UserDefaults suite: the package cannot learn this object's suite name, so it cannot tell whether both are one suite; make it with UserDefaults.suite(named:). Nothing was changed."
        )
        // The suite's own values: another test may have registered a version default.
        let own = unknown.persistentDomain(forName: name) ?? [:]
        #expect(own["font"] as? Int == 14)
        #expect(own[DefaultsMigration.versionKey] == nil)
    }

    /// Subclasses whose own stored property is named as Foundation's is on Linux.
    final class NamedOther: UserDefaults { var suite = "DefaultsCoderTests.other" }
    final class NamedNil: UserDefaults { var suite: String? = nil }
    final class NamedSeven: UserDefaults { var suite = 7 }

    @Test("a subclass's own property named suite is never taken for the suite's name: writes land in the suite made", arguments: ["other", "nil", "7"])
    func subclassProperty(kind: String) throws {
        let name = "DefaultsCoderTests.subclass.\(UUID().uuidString)"
        let made: UserDefaults? =
            switch kind {
            case "other": NamedOther(suiteName: name)
            case "nil": NamedNil(suiteName: name)
            default: NamedSeven(suiteName: name)
            }
        let defaults = try #require(made)
        defer { defaults.removePersistentDomain(forName: name) }
        #expect(SuiteName.of(defaults) == .some(name))
        let key = uniqueKey("value")
        try defaults.encode(5, forKey: key)
        defaults.synchronize()
        #expect(UserDefaults(suiteName: name)?.persistentDomain(forName: name)?[key] as? Int == 5)
        #expect(UserDefaults.standard.persistentDomain(forName: "DefaultsCoderTests.other")?[key] == nil)
        #expect(UserDefaults.standard.object(forKey: key) == nil)
    }
}
