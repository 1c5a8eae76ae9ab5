// Simulated devices for the sync engine's tests: each a suite of its own (on the backend
// the run chose), a device of one `SimulatedCloud`, and an engine between them.

import Foundation

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

/// A layout with no `Equatable` conformance: the engine must sync what it cannot compare.
struct SyncedLayout: Codable, Sendable {
    var columns: [String]
    var compact: Bool
}

extension DefaultsKeys {
    static let syncedVolume = DefaultsKey<Int>("sync.volume", default: 5)
    static let syncedLayout = DefaultsKey<SyncedLayout>("sync.layout", default: SyncedLayout(columns: ["name"], compact: false))
    static let syncedName = DefaultsKey<String>("sync.name", default: "")
    static let syncedDate = DefaultsKey<Date?>("sync.date")
}

/// One device: its suite, its copy of the cloud, and its engine.
final class SyncedDevice: @unchecked Sendable {
    // Unchecked: `sync` is replaced only by `restart()`, called by the test's one task.
    let suite: TestSuite
    let store: SimulatedCloud.Device
    private(set) var sync: CloudSync
    let keys: [DefaultsKeys]
    let retryDelay: TimeInterval

    var defaults: UserDefaults { suite.defaults }

    /// The name of `.syncedName`, for entries a test puts in the cloud itself.
    static let syncedNameKey = DefaultsKeys.syncedName.name

    init(
        _ cloud: SimulatedCloud, named name: String, account: String? = "account", needsInitialSync: Bool = false,
        keys: [DefaultsKeys] = [.syncedVolume, .syncedLayout, .syncedName], retryDelay: TimeInterval = 10,
        start: Bool = true, suite: TestSuite? = nil, label: String = #function
    ) throws {
        self.suite = suite ?? TestSuite(label + name)
        store = cloud.makeDevice(named: name, account: account, needsInitialSync: needsInitialSync)
        self.keys = keys
        self.retryDelay = retryDelay
        // The tests say when a device refreshes: other tests post the app's becomes-active
        // notification, which would refresh every engine at random moments.
        sync = CloudSync(self.suite.defaults, store: store, retryDelay: retryDelay, clock: store.now, refreshesWhenActive: false)
        try sync.add(keys)
        if start { try sync.start() }
    }

    deinit {
        // Before the suite goes: its removal is a change the engine would hear.
        sync.stop()
    }

    /// Stops the engine and starts a new one, as a relaunched app does.
    func restart() throws {
        sync.stop()
        sync = CloudSync(suite.defaults, store: store, retryDelay: retryDelay, clock: store.now, refreshesWhenActive: false)
        try sync.add(keys)
        try sync.start()
    }

    /// Removes everything the suite holds, the engine's records with it, so that the
    /// suite can serve another device; the engine must be stopped.
    static func empty(_ suite: TestSuite) throws {
        try DefaultsSuite.change([suite.defaults]) { values in
            for key in values.keys() { try values.set(nil, forKey: key) }
        }
    }

    /// What the suite itself holds under `key`.
    func stored(_ key: DefaultsKeys) -> Any? {
        defaults.persistentDomain(forName: suite.name)?[key.name]
    }
}

/// The cloud's entry for `key` as the engine wrote it: its value (absent for a removal).
func cloudValue(_ cloud: SimulatedCloud, _ key: DefaultsKeys, account: String = "account") -> Any? {
    (cloud.serverValues(of: account)[key.name] as? [String: Any])?["value"]
}

/// Lets the network run, then waits until every device's engine is idle, until nothing
/// moves.
func settle(_ cloud: SimulatedCloud, _ devices: [SyncedDevice]) async {
    for _ in 0..<4 {
        cloud.deliver()
        for device in devices { await device.sync.waitUntilIdle() }
    }
}

/// A seeded random source for the interleavings.
struct SeededRandom: RandomNumberGenerator {
    var entropy: SeededEntropy
    mutating func next() -> UInt64 { entropy.next() }
}

/// A device's store as an adapter with no account check of its own sees it (iCloud's:
/// `hasAccount` is the protocol's `true`), counting `synchronize()` calls, and, when
/// asked, reporting changes without their keys, as Apple may (the changed keys are
/// optional in its notification; an identity change names none).
final class ForwardingStore: CloudKeyValueStore, @unchecked Sendable {
    // Unchecked: constants, and a counter behind a lock.
    let device: SimulatedCloud.Device
    let reportsKeys: Bool
    private let synchronizations = Locked(0)

    init(_ device: SimulatedCloud.Device, reportsKeys: Bool = true) {
        self.device = device
        self.reportsKeys = reportsKeys
    }

    var synchronizeCount: Int { synchronizations.withLock { $0 } }

    func object(forKey key: String) -> Any? { device.object(forKey: key) }
    func set(_ value: Any, forKey key: String) { device.set(value, forKey: key) }
    func removeObject(forKey key: String) { device.removeObject(forKey: key) }
    var dictionaryRepresentation: [String: Any] { device.dictionaryRepresentation }

    func synchronize() -> Bool {
        synchronizations.withLock { $0 += 1 }
        return device.synchronize()
    }

    func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription {
        let reportsKeys = reportsKeys
        return device.observeChanges { change in handler(reportsKeys ? change : CloudStoreChange(reason: change.reason, keys: [])) }
    }
}
