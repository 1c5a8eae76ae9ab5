// The privacy manifest (Sources/DefaultsCoder/PrivacyInfo.xcprivacy), as the built
// library carries it.

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("Privacy manifest")
struct PrivacyManifestTests {

    @Test("the library's bundle carries the manifest: no tracking, no data collected, UserDefaults for reason C56D.1 alone")
    func manifest() throws {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        let manifest = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        #expect(types.count == 1)
        #expect(types.first?["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryUserDefaults")
        #expect(types.first?["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["C56D.1"])
    }
}
