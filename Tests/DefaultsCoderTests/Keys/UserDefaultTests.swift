import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// The wrapper's three spellings, in one settings type, on a suite of the test's own.
final class WrappedSettings {
    @UserDefault("hasSeenSplashScreen") var hasSeenSplashScreen = false
    @UserDefault("name") var name: String?
    @UserDefault(.launchCount) var launchCount
    @UserDefault("owner") var owner: User?

    init(store: UserDefaults) {
        _hasSeenSplashScreen = UserDefault(wrappedValue: false, "hasSeenSplashScreen", store: store)
        _name = UserDefault("name", store: store)
        _launchCount = UserDefault(.launchCount, store: store)
        _owner = UserDefault("owner", store: store)
    }
}

@Suite("UserDefault")
struct UserDefaultTests {

    @Test("defaults, writes and reads through the wrapper")
    func readWrite() throws {
        let suite = TestSuite()
        let settings = WrappedSettings(store: suite.defaults)
        #expect(settings.hasSeenSplashScreen == false)
        #expect(settings.name == nil)
        #expect(settings.launchCount == 0)

        settings.hasSeenSplashScreen = true
        settings.name = "Ada"
        settings.launchCount += 1
        settings.owner = User(id: 1, name: "Ada")

        #expect(suite.defaults.object(forKey: "hasSeenSplashScreen") as? Bool == true)
        #expect(suite.defaults.object(forKey: "name") as? String == "Ada")
        #expect(suite.defaults.object(forKey: "launchCount") as? Int == 1)
        #expect(Tree(suite.defaults.object(forKey: "owner")) == Tree(["id": 1, "name": "Ada"]))
        #expect(WrappedSettings(store: suite.defaults).launchCount == 1)

        settings.name = nil
        #expect(suite.defaults.object(forKey: "name") == nil)
    }

    @Test("the projected value: key, isSet and reset()")
    func projectedValue() {
        let suite = TestSuite()
        let settings = WrappedSettings(store: suite.defaults)
        #expect(settings.$launchCount.key.name == "launchCount")
        #expect(settings.$launchCount.store === suite.defaults)
        // Not `launchCount`: the README test registers it, in the process-wide registration domain.
        #expect(!settings.$hasSeenSplashScreen.isSet)
        settings.hasSeenSplashScreen = true
        #expect(settings.$hasSeenSplashScreen.isSet)
        settings.$hasSeenSplashScreen.reset()
        #expect(!settings.$hasSeenSplashScreen.isSet)
        #expect(settings.hasSeenSplashScreen == false)
    }

    @Test("the standard suite is used unless a store is given")
    func standardStore() {
        @UserDefault("DefaultsCoderTests.standardStore") var flag = false
        #expect($flag.store === UserDefaults.standard)
        #expect($flag.key.defaultValue == false)
    }

    @Test("observing through the projected value")
    func observeWrapper() async throws {
        let suite = TestSuite()
        let settings = WrappedSettings(store: suite.defaults)
        let events = Locked<[[Int]]>([])
        let observation = settings.$launchCount.observe(initial: false) { old, new in events.withLock { $0.append([old, new]) } }
        settings.launchCount = 3
        settings.launchCount = 3
        settings.$launchCount.reset()
        #expect(await eventually { events.withLock { $0 } == [[0, 3], [3, 0]] })
        observation.cancel()

        var iterator = settings.$launchCount.updates.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        settings.launchCount = 9
        #expect(await iterator.next() == 9)
    }
}
