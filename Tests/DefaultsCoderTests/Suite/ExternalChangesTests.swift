// How a suite hears of changes made outside the package's writes, on the Apple path:
// key-value observing and Apple's announcements, against the test double of Apple's
// `UserDefaults` (`DEFAULTSCODER_SUITE_BACKEND=preferences`). Other processes' changes
// are heard in ChangeFeedTests.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

@Suite("ExternalChanges")
struct ExternalChangesTests {

    @Test(
        "key-value observing: which keys are observed",
        arguments: [("plain", true), ("with.dot", false), ("@count", false), ("trailing.", false), ("mid@dle", true), ("", false)])
    func observable(key: String, expected: Bool) {
        #expect(KeyValueObservations.isObservable(key) == expected)
    }

    // MARK: - Why a process hears its own Darwin notifications

    /// What a process can learn through libnotify of one name, as its manual describes it:
    /// the name's 64-bit state, which the last `notify_set_state` sets, and deliveries to
    /// its registration, where posts made before the handler runs may be coalesced.
    private struct NotifyModel {
        enum Step: Hashable { case readState, setState, post, writeValue }
        var state: UInt64 = 0
        var pendingDeliveries = 0
        var changedByOther = false
        /// What process A saw: the state it read before setting its own, the state when
        /// its handler ran, and how many times it ran.
        var seenByA: [UInt64] = []

        /// Runs A's post (read the state, set its own, post) interleaved with B's write
        /// and post (`order` says whose step is next), then A's handler.
        static func run(_ order: [Bool], coalescing: Bool) -> NotifyModel {
            var model = NotifyModel()
            var steps = (a: [Step.readState, .setState, .post], b: [Step.writeValue, .setState, .post])
            for isA in order {
                let step = isA ? steps.a.removeFirst() : steps.b.removeFirst()
                switch step {
                case .readState: model.seenByA.append(model.state)
                case .setState: model.state = isA ? 1 : 2
                case .post: model.pendingDeliveries = coalescing ? 1 : model.pendingDeliveries + 1
                case .writeValue: model.changedByOther = true
                }
            }
            for _ in 0..<model.pendingDeliveries { model.seenByA.append(model.state) }
            return model
        }
    }

    @Test("a process cannot tell its own Darwin notification from another process's that coalesced with it, so it rechecks its own")
    func ownPostsIndistinguishable() {
        let aAlone = NotifyModel.run([true, true, true], coalescing: true)
        // Every order of A's three steps among B's three.
        let orders = (0..<64).map { bits in (0..<6).map { bits >> $0 & 1 == 1 } }.filter { $0.count(where: { $0 }) == 3 }
        // Where B sets the state between A's read and A's set.
        let overwritten = orders.filter { order in
            let (a, b) = (order.indices.filter { order[$0] }, order.indices.filter { !order[$0] })
            return a[0] < b[1] && b[1] < a[1]
        }
        for coalescing in [true, false] {
            // The orders where B changed a value and A saw exactly what it sees alone:
            // skipping what looks like its own post would lose B's change there.
            let lost = orders.filter { order in
                let model = NotifyModel.run(order, coalescing: coalescing)
                return model.changedByOther && model.seenByA == aAlone.seenByA
            }
            // With coalescing, B's post then reaches A as A's own; with one delivery per
            // post, A would see two.
            #expect(lost == (coalescing ? overwritten : []), "coalescing: \(coalescing), \(lost.count) of \(orders.count) orders")
        }
        #expect(overwritten.count == 6 && orders.count == 20)
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

    /// Whether the code running now was called from inside a test's call into Foundation.
    @TaskLocal private static var insideFoundationsCallback = false

    @Test(
        "a change Apple's preferences hand over by key-value observing alone — no announcement, no file written — is heard, rechecked on a queue of the package's, never inside Foundation's callback",
        .enabled(if: Backend.isEmulatedApple))
    func keyValueObservedChange() async throws {
        let suite = TestSuite()
        let double = try #require(suite.defaults as? AppleUserDefaults)
        let key = DefaultsKey<Int>(plainKey("watched"), default: 0)
        let heard = Recorded<(value: Int, inside: Bool)>()
        let observation = suite.defaults.observe(key, initial: false) { _, new in heard.append((new, Self.insideFoundationsCallback)) }
        defer { observation.cancel() }
        Self.$insideFoundationsCallback.withValue(true) { double.receiveFromAnotherProcess(4, forKey: key.name) }
        #expect(await eventually { !heard.values.isEmpty })
        #expect(heard.values.map(\.value) == [4])
        #expect(heard.values.map(\.inside) == [false])
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
