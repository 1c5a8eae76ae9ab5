// Where the lock files of migrations and `resetAll()` go on Apple platforms: an App
// Group's suite in the group's container, found alike by the app and its extension,
// whichever form of group identifier names it; any other suite in the process's own
// Application Support.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("LockPlacement")
struct LockPlacementTests {
    private static let container = URL(fileURLWithPath: "/containers/shared")
    /// The groups the app and its extension are both in.
    private static let groups: Set<String> = ["group.com.example.app", "ABCDE12345.com.example.app"]

    /// What the app, or its extension, sees: its own Application Support, and the
    /// groups' shared container.
    private static func placement(of process: String) -> LockPlacement {
        LockPlacement(ownDirectory: URL(fileURLWithPath: "/containers/\(process)/Library/Application Support")) { group in
            groups.contains(group) ? container.appendingPathComponent(group) : nil
        }
    }

    @Test("an App Group's suite, in either form, has one lock file for the app and its extension, in the group's container", arguments: groups.sorted())
    func groupSuites(group: String) {
        let (app, appExtension) = (Self.placement(of: "app").lockPath(forSuite: group), Self.placement(of: "widget").lockPath(forSuite: group))
        #expect(app == appExtension)
        #expect(app == "/containers/shared/\(group)/Library/Application Support/DefaultsCoder/\(group).lock")
    }

    @Test(
        "any other suite has its lock file in the process's own Application Support, never in Library/Preferences",
        arguments: ["settings", "group.com.other.app", "ABCDE12345.com.other.app", "abcde12345.com.example.app", "group."])
    func ownSuites(name: String) {
        let path = Self.placement(of: "app").lockPath(forSuite: name)
        #expect(path == "/containers/app/Library/Application Support/DefaultsCoder/\(name).lock")
        #expect(path != Self.placement(of: "widget").lockPath(forSuite: name))
    }

    @Test("a suite name with a slash keeps its lock file in the package's folder")
    func slashes() {
        #expect(Self.placement(of: "app").lockPath(forSuite: "a/../b%") == "/containers/app/Library/Application Support/DefaultsCoder/a%2F..%2Fb%25.lock")
    }

    @Test(
        "App Group identifiers: group.NAME, or a Team ID of ten capital letters and digits, a dot and a name",
        arguments: [
            ("group.com.example", true), ("ABCDE12345.com.example", true), ("ABCDE12345.x", true),
            ("group.", false), ("ABCDE1234.com.example", false), ("ABCDE123456.com.example", false), ("abcde12345.com.example", false),
            ("ABCDE12345.", false), ("ABCDE12345", false), ("com.example.group", false), ("", false),
        ])
    func identifiers(name: String, isGroup: Bool) {
        #expect(AppGroup.isIdentifier(name) == isGroup)
    }

    @Test("suite(appGroup:) makes the group's suite, and refuses a name in neither form")
    func suiteOfAppGroup() throws {
        let group = "ABCDE12345.DefaultsCoderTests.\(UUID().uuidString)"
        let defaults = try UserDefaults.suite(appGroup: group)
        defer { defaults.removePersistentDomain(forName: group) }
        #expect(SuiteName.of(defaults) == .some(group))
        let error = caught(DefaultsSuiteError.self) { _ = try UserDefaults.suite(appGroup: "com.example.group") }
        #expect(
            error?.description
                == "Cannot make the App Group suite com.example.group: an App Group identifier is group.NAME, or TEAMID.NAME with a Team ID of ten capital letters and digits."
        )
    }
}
