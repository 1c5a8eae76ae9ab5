// The test helpers: where the built probe and demo are found, which differs by
// platform, how long a wait lasts on a busy machine, and how long busy threads run.

import Foundation
import Testing

@testable import DefaultsCoderStorage

@Suite("TestSupport")
struct TestSupportTests {

    /// Where each way of running the tests puts the tests' bundle and the running
    /// executable, and the products directory to find beside them.
    static let layouts: [(bundles: [String], executable: String, products: String)] = [
        // macOS, XCTest: Xcode's `xctest` loads the bundle.
        (
            ["/Applications/Xcode.app/Contents/Developer/usr/bin", "/p/.build/arm64-apple-macosx/debug/DefaultsCoderPackageTests.xctest"],
            "/Applications/Xcode.app/Contents/Developer/usr/bin/xctest", "/p/.build/arm64-apple-macosx/debug"
        ),
        // macOS, Swift Testing: SwiftPM's helper loads the bundle.
        (
            ["/Library/Developer/CommandLineTools/usr/libexec/swift/pm", "/p/.build/debug/DefaultsCoderPackageTests.xctest"],
            "/Library/Developer/CommandLineTools/usr/libexec/swift/pm/swiftpm-testing-helper", "/p/.build/debug"
        ),
        // Linux: the `.xctest` is the executable, and no bundle says so.
        (
            ["/p/.build/x86_64-unknown-linux-gnu/debug"], "/p/.build/x86_64-unknown-linux-gnu/debug/DefaultsCoderPackageTests.xctest",
            "/p/.build/x86_64-unknown-linux-gnu/debug"
        ),
    ]

    @Test("the products directory is the test bundle's, whatever runs the tests", arguments: layouts)
    func productsDirectoryOfLayout(bundles: [String], executable: String, products: String) {
        let found = productsDirectory(bundles: bundles.map { URL(fileURLWithPath: $0) }, executable: URL(fileURLWithPath: executable))
        #expect(found.path == products)
    }

    @Test("the probe and the demo are found where this run built them")
    func builtProducts() throws {
        for name in ["defaults-coder-probe", "defaults-coder-demo"] {
            #expect(FileManager.default.isExecutableFile(atPath: try builtExecutable(name).path))
        }
    }

    @Test("eventually gives up once its time ran, and a poll the pool kept waiting counts a quarter of a second")
    func eventuallyCountsItsOwnTime() async throws {
        #expect(await eventually(within: 0.05) { false } == false)
        // Polls that come back half a second late, as on a starved pool: three take 1.5 s,
        // and count 0.75 s of the 0.8 s allowed.
        let looks = Locked(0)
        let late: () async -> Void = { _ = try? await offPool { usleep(500_000) } }
        let held = await eventually(within: 0.8, poll: late) {
            looks.withLock { looks in
                looks += 1
                return looks == 4
            }
        }
        #expect(held)
        #expect(looks.withLock { $0 } == 4)
    }

    @Test("busy threads run while whileRepeating's body runs, and none runs a round once it has returned")
    func busyThreadsEndWithTheBody() async throws {
        let rounds = Locked([0, 0])
        let steps: [@Sendable (Int) -> Void] = (0..<2).map { index in { round in rounds.withLock { $0[index] = round } } }
        // The body sees both threads at work: whileRepeating started them first.
        let seen = try await whileRepeating(steps) { waitUntil(within: 10) { rounds.withLock { $0.allSatisfy { $0 > 2 } } } }
        #expect(seen)
        // Stopped before whileRepeating returned, however late this task resumed.
        let atReturn = rounds.withLock { $0 }
        _ = try await offPool { usleep(50_000) }
        #expect(rounds.withLock { $0 } == atReturn)
    }

    @Test("waitUntil waits on its thread until the condition holds, and gives up once its time ran")
    func waitUntilGivesUp() async throws {
        let looks = Locked(0)
        let (held, gaveUp) = try await offPool { () -> (Bool, Bool) in
            let held = waitUntil(within: 10) {
                looks.withLock { looks in
                    looks += 1
                    return looks == 3
                }
            }
            return (held, waitUntil(within: 0.05) { false })
        }
        #expect(held)
        #expect(looks.withLock { $0 } == 3)
        #expect(!gaveUp)
    }
}
