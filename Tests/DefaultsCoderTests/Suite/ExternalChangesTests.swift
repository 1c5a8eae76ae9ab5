// How a suite hears of changes made outside the package's writes, on the Apple path:
// key-value observing and Apple's announcements, against the test double of Apple's
// `UserDefaults` (`DEFAULTSCODER_SUITE_BACKEND=preferences`). Other processes' changes
// are heard in ChangeFeedTests.

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("ExternalChanges")
struct ExternalChangesTests {

    @Test(
        "key-value observing: which keys are observed",
        arguments: [("plain", true), ("with.dot", false), ("@count", false), ("trailing.", false), ("mid@dle", true)])
    func observable(key: String, expected: Bool) {
        #expect(KeyValueObservations.isObservable(key) == expected)
    }

    #if os(Linux)
    @Test(
        "key-value observers are added only for keys without a dot or a leading @, and added and removed in balance while observers come and go on many threads",
        .enabled(if: Backend.isEmulatedApple))
    func keyValueObserversBalanced() async throws {
        let suite = TestSuite()
        let double = try #require(suite.defaults as? AppleUserDefaults)
        let plain = (0..<4).map { _ in DefaultsKey<Int>(plainKey("plain"), default: 0) }
        let others = [DefaultsKey<Int>(uniqueKey("dotted"), default: 0), DefaultsKey<Int>("@" + plainKey("at"), default: 0)]
        let keys = plain + others
        try await offPool {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for round in 0..<100 {
                    let key = keys[(thread + round) % keys.count]
                    let observation = suite.defaults.observe(key, initial: false) { _, _ in }
                    observation.cancel()
                }
            }
        }
        #expect(double.unbalancedRemovals.withLock { $0 } == 0)
        #expect(Set(double.observedKeys.values) == Set(plain.map(\.name)))
        #expect(double.keyObserverCount == 0)
    }

    @Test(
        "a change Apple's preferences hand over by key-value observing alone — no announcement, no file written — is heard",
        .enabled(if: Backend.isEmulatedApple))
    func keyValueObservedChange() async throws {
        let suite = TestSuite()
        let double = try #require(suite.defaults as? AppleUserDefaults)
        let key = DefaultsKey<Int>(plainKey("watched"), default: 0)
        let heard = Recorded<Int>()
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.append(new) }
        defer { observation.cancel() }
        double.receiveFromAnotherProcess(4, forKey: key.name)
        #expect(heard.values == [4])
    }

    @Test(
        "a change Apple's preferences hand over from inside a package write is heard once the write is done, not dropped",
        .enabled(if: Backend.isEmulatedApple))
    func keyValueObservedDuringWrite() async throws {
        let suite = TestSuite()
        let double = try #require(suite.defaults as? AppleUserDefaults)
        let watched = DefaultsKey<Int>(plainKey("watched"), default: 0)
        let written = DefaultsKey<Int>(plainKey("written"), default: 0)
        let heard = Recorded<Int>()
        let observation = suite.defaults.observe(watched, initial: false) { _, new in heard.append(new) }
        defer { observation.cancel() }
        double.beforeNextSet.withLock { $0 = (watched.name, 9) }
        try suite.defaults.write(1, to: written)
        #expect(await eventually(within: 10) { heard.values == [9] }, "\(heard.values)")
    }

    @Test(
        "setVolatileDomain replaces the domain and announces it: observers hear a launch argument come and go",
        .enabled(if: Backend.isEmulatedApple))
    func volatileDomainAnnounced() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("argument"), default: 0)
        let other = uniqueKey("other")
        try suite.defaults.write(1, to: key)
        let heard = Recorded<Int>()
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.append(new) }
        defer { observation.cancel() }
        await ProcessWideState.exclusively {
            let saved = suite.defaults.volatileDomain(forName: UserDefaults.argumentDomain)
            defer { suite.defaults.setVolatileDomain(saved, forName: UserDefaults.argumentDomain) }
            suite.defaults.setVolatileDomain([key.name: "5", other: "x"], forName: UserDefaults.argumentDomain)
            #expect(heard.values == [5])
            suite.defaults.setVolatileDomain([other: "y"], forName: UserDefaults.argumentDomain)
            #expect(heard.values == [5, 1])
            #expect(suite.defaults.volatileDomain(forName: UserDefaults.argumentDomain).keys.sorted() == [other])
        }
    }
    #endif
}
