// The privacy manifest (Sources/DefaultsCoderStorage/PrivacyInfo.xcprivacy), as the built
// library carries it, against what the Apple build of the library calls: every category
// of Apple's required-reason APIs the compiled code names is declared, with its reason,
// and nothing else is.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("Privacy manifest")
struct PrivacyManifestTests {
    /// Apple's required-reason APIs by category ("Describing use of required reason
    /// API"), as patterns of the code that calls them, and the reason this package
    /// declares for each category it uses.
    private static let categories: [(category: String, patterns: [String], reason: String?)] = [
        (
            "NSPrivacyAccessedAPICategoryFileTimestamp",
            [
                #"\b(stat|fstat|lstat|fstatat|getattrlist|getattrlistbulk|fgetattrlist|getattrlistat)\s*\("#,
                #"\b(creationDate|modificationDate|fileModificationDate|contentModificationDateKey|creationDateKey)\b"#,
            ],
            // Metadata of files in the app's or its App Group's container: the lock files.
            "C617.1"
        ),
        ("NSPrivacyAccessedAPICategorySystemBootTime", [#"\bsystemUptime\b"#, #"\bmach_absolute_time\b"#], nil),
        (
            "NSPrivacyAccessedAPICategoryDiskSpace",
            [
                #"\bvolume(Available|Total)Capacity\w*Key\b"#, #"\bsystem(Free)?Size\b"#,
                #"\b(statfs|statvfs|fstatfs|fstatvfs|getattrlist|fgetattrlist|getattrlistat)\s*\("#,
            ],
            nil
        ),
        ("NSPrivacyAccessedAPICategoryActiveKeyboards", [#"\bactiveInputModes\b"#], nil),
        // A wrapper of user defaults for the app's own use.
        ("NSPrivacyAccessedAPICategoryUserDefaults", [#"\bUserDefaults\b"#], "C56D.1"),
    ]

    private func manifest() throws -> [String: Any] {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        return try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
    }

    @Test("the library's bundle carries the manifest: no tracking, no data collected")
    func nothingCollected() throws {
        let manifest = try manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
    }

    @Test("every required-reason category the Apple build calls is declared with its reason, and no other", arguments: AppleSources.Platform.allCases)
    func requiredReasons(platform: AppleSources.Platform) throws {
        var used: [String: String] = [:]
        for file in AppleSources.files {
            let lines = AppleSources.compiledLines(of: try String(contentsOf: file, encoding: .utf8), for: platform)
            for (category, patterns, _) in Self.categories where used[category] == nil {
                let expressions = try patterns.map { try NSRegularExpression(pattern: $0) }
                if let line = lines.first(where: { line in
                    expressions.contains { $0.firstMatch(in: line.code, range: NSRange(line.code.startIndex..., in: line.code)) != nil }
                }) {
                    used[category] = "\(file.lastPathComponent):\(line.number)"
                }
            }
        }
        let types = try #require(try manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        let declared = Dictionary(uniqueKeysWithValues: types.map { ($0["NSPrivacyAccessedAPIType"] as? String ?? "", $0["NSPrivacyAccessedAPITypeReasons"] as? [String] ?? []) })
        #expect(Set(declared.keys) == Set(used.keys), "called: \(used)")
        for (category, _, reason) in Self.categories where used[category] != nil {
            #expect(declared[category] == reason.map { [$0] }, "\(category), called at \(used[category]!)")
        }
    }

    @Test(
        "#if conditions are read as each Apple platform's build reads them",
        arguments: [
            ("canImport(Darwin)", true), ("os(Linux)", false), ("!os(Linux)", true), ("os(iOS) || os(tvOS)", true),
            ("canImport(Darwin) && !canImport(ObjectiveC)", false), ("!(os(macOS) || os(Linux))", true), ("OpenCombine", false),
            ("canImport(Combine) || OpenCombine", true), ("canImport(Glibc)", false),
        ])
    func conditions(condition: String, onIOS: Bool) {
        #expect(AppleSources.evaluate(condition, for: .iOS) == onIOS)
    }

    @Test("the Apple build's lines leave out what is Linux's, comments and strings")
    func compiledLines() {
        let text = """
            #if os(Linux)
            linux()
            #elseif canImport(Darwin)
            darwin() // stat(
            #else
            other()
            #endif
            let s = "stat(x)"
            """
        #expect(AppleSources.compiledLines(of: text, for: .macOS).map(\.code) == ["darwin() ", #"let s = """#])
    }
}
