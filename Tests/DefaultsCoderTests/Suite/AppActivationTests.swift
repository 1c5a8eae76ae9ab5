// The app's return to the foreground: what changed while it was suspended, which
// key-value observing may not deliver, is read again then.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("AppActivation")
struct AppActivationTests {
    /// Whether the code running now was called from inside the test's post.
    @TaskLocal private static var insidePost = false

    @Test("each framework's becomes-active notification calls the action once, on a queue of the package's", arguments: AppActivation.notifications)
    func notifications(name: Notification.Name) async {
        // A center of its own: other tests post these notifications too.
        let center = NotificationCenter()
        let calls = Recorded<Bool>()
        let observation = AppActivation.observe(in: center) { calls.append(Self.insidePost) }
        Self.$insidePost.withValue(true) { center.post(name: name, object: nil) }
        #expect(await eventually { !calls.values.isEmpty })
        observation.cancel()
        #expect(calls.values == [false])
        center.post(name: name, object: nil)
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(calls.values.count == 1)
    }

    @Test(
        "a change made while the app was suspended, which key-value observing did not deliver, is heard when the app becomes active",
        .enabled(if: Backend.isEmulatedApple, "the test double of Apple's UserDefaults"))
    func suspendedChangeHeard() async throws {
        #if os(Linux)
        let suite = TestSuite()
        let apple = try #require(suite.defaults as? AppleUserDefaults)
        let key = DefaultsKey<Int>(plainKey("volume"), default: 0)
        let heard = Recorded<Int>()
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.append(new) }
        defer { observation.cancel() }
        apple.receiveWhileSuspended(7, forKey: key.name)
        // Nothing delivers the change but a recheck: here the activation's (in a run of
        // the whole suite, another test's announcement may recheck first).
        NotificationCenter.default.post(name: AppActivation.notifications[0], object: nil)
        #expect(await eventually { !heard.values.isEmpty })
        #expect(heard.values == [7])
        #endif
    }
}
