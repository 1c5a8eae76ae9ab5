// The suite wrappers use when none is named, and throwaway suites for tests and
// previews: parallel tests each see their own, and the user's real settings are never
// written.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("DefaultSuite")
struct DefaultSuiteTests {
    /// A model whose wrappers name no suite.
    final class Settings: @unchecked Sendable {
        @UserDefault(.launchCount) var launchCount
        @UserDefault("volume") var volume = 5
        @UserDefault("nickname") var nickname: String?
    }

    @Test("wrappers made without a suite use .standard, or the suite withDefaultSuite sets, and keep it when read outside")
    func defaultSuite() throws {
        #expect(UserDefaults.defaultSuite === UserDefaults.standard)
        #expect(Settings().$volume.store === UserDefaults.standard)
        let suite = ThrowawaySuite()
        let settings = UserDefaults.withDefaultSuite(suite.defaults) {
            #expect(UserDefaults.defaultSuite === suite.defaults)
            return Settings()
        }
        #expect(UserDefaults.defaultSuite === UserDefaults.standard)
        settings.volume = 8
        settings.nickname = "Ada"
        #expect(suite.defaults.integer(forKey: "volume") == 8)
        #expect(suite.defaults.string(forKey: "nickname") == "Ada")
        #expect(settings.$volume.store === suite.defaults)
    }

    @Test("two tests in parallel, each with its own throwaway default suite, never see each other's values")
    func parallelTests() async throws {
        try await withThrowingTaskGroup(of: [Int].self) { group in
            for number in 1...2 {
                group.addTask {
                    let suite = ThrowawaySuite("parallel\(number)")
                    return await UserDefaults.withDefaultSuite(suite.defaults) {
                        var seen: [Int] = []
                        for round in 1...50 {
                            Settings().volume = number * 100 + round
                            await Task.yield()
                            seen.append(Settings().volume - number * 100 - round)
                        }
                        return seen
                    }
                }
            }
            for try await mixedUp in group { #expect(mixedUp == Array(repeating: 0, count: 50)) }
        }
    }

    @Test(
        "threads with throwaway default suites in a process of their own: none sees another's values, and no suite file is left, the app's own included"
    )
    func noRealFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("throwaway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await run("defaults-coder-probe", ["throwaway-defaults", "200"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(result.status == 0, "\(result.errors)")
        // No read mixed up; no file left in the config directory.
        #expect(String(decoding: result.output, as: UTF8.self) == "0\n\n")
    }

    @Test("a throwaway suite is named apart, and emptied (its file removed on Linux) when released")
    func throwawayRemoved() throws {
        var suite: ThrowawaySuite? = ThrowawaySuite("removed")
        let name = try #require(suite?.name)
        #expect(name.hasPrefix("DefaultsCoder.throwaway.removed."))
        try suite?.defaults.encode(["a": 1], forKey: "value")
        suite?.defaults.synchronize()
        #if os(Linux)
        let file = SuiteFile.named(name).path
        #expect(FileManager.default.fileExists(atPath: file))
        #endif
        suite = nil
        #expect(UserDefaults(suiteName: name)?.persistentDomain(forName: name)?["value"] == nil)
        #if os(Linux)
        #expect(!FileManager.default.fileExists(atPath: file))
        #endif
    }
}
