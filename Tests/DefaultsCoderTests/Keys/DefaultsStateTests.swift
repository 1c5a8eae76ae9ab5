// The box a SwiftUI view keeps for `@DefaultsState`: plain Swift over Combine, tested on
// Linux through OpenCombine (the `OpenCombine` trait). Every change of the key is
// published once, from another object, another process or a sync; a write through it
// lands in the suite; a released box observes nothing.

#if canImport(Combine) || OpenCombine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("DefaultsState")
struct DefaultsStateTests {
    /// Counts what a publisher sends.
    final class Count: @unchecked Sendable {
        private let count = Locked(0)
        var subscription: AnyCancellable?
        init(_ publisher: ObservableObjectPublisher) {
            subscription = publisher.sink { [count] in count.withLock { $0 += 1 } }
        }
        var value: Int { count.withLock { $0 } }
    }

    /// Sends at once, on the thread that heard the change.
    private static let immediately: @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("a change from another object of the suite is published once; an equal write is not; a write through the box lands in the suite")
    func anotherObject() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("volume"), default: 5)
        let box = DefaultsValueBox(key, store: suite.defaults, deliver: Self.immediately)
        let count = Count(box.objectWillChange)
        let other = try #require(UserDefaults.suite(named: suite.name))
        other[key] = 3
        #expect(count.value == 1)
        other[key] = 3
        #expect(count.value == 1)
        #expect(box.value == 3)
        box.value = 4
        #expect(suite.defaults.object(forKey: key.name) as? Int == 4)
        #expect(other[key] == 4)
        #expect(count.value == 2)
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("another process's change is published once")
    func anotherProcess() async throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(plainKey("volume"), default: 5)
        let box = DefaultsValueBox(key, store: suite.defaults, deliver: Self.immediately)
        let count = Count(box.objectWillChange)
        try await SecondProcess.write([key.name: 7], into: suite)
        #expect(await eventually { count.value == 1 })
        #expect(box.value == 7)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(count.value == 1)
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("a sync's change is published once")
    func sync() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let (phone, laptop) = (try SyncedDevice(cloud, named: "phone"), try SyncedDevice(cloud, named: "laptop"))
        await settle(cloud, [phone, laptop])
        let box = DefaultsValueBox(.syncedVolume, store: laptop.defaults, deliver: Self.immediately)
        let count = Count(box.objectWillChange)
        phone.defaults[.syncedVolume] = 9
        await settle(cloud, [phone, laptop])
        #expect(box.value == 9)
        #expect(count.value == 1)
    }

    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    @Test("once the box is released, nothing is observed and nothing published")
    func released() throws {
        let suite = TestSuite()
        let key = DefaultsKey<Int>(uniqueKey("volume"), default: 5)
        var box: DefaultsValueBox<Int>? = DefaultsValueBox(key, store: suite.defaults, deliver: Self.immediately)
        let released = WeakReference(try #require(box))
        let publisher = try #require(box?.objectWillChange)
        let count = Count(publisher)
        suite.defaults[key] = 1
        #expect(count.value == 1)
        box = nil
        #expect(released.object == nil)
        suite.defaults[key] = 2
        #expect(count.value == 1)
    }
}
#endif
