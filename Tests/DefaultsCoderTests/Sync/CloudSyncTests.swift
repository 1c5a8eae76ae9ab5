// The sync engine, on simulated devices, each asserting exact values on every device:
// the rules of the "Syncing with iCloud" article, one test (or row) each.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("CloudSync")
struct CloudSyncTests {

    // MARK: - Defaults never overwrite values

    /// A value as each key stores it, and a second one.
    struct Edit: Sendable, CustomTestStringConvertible {
        let key: DefaultsKeys
        let write: @Sendable (UserDefaults) -> Void
        let read: @Sendable (UserDefaults) -> String
        var testDescription: String { key.name }
    }

    static let edits: [Edit] = [
        Edit(key: .syncedVolume, write: { $0[.syncedVolume] = 9 }, read: { "\($0[.syncedVolume])" }),
        Edit(
            key: .syncedLayout, write: { $0[.syncedLayout] = SyncedLayout(columns: ["size", "date"], compact: true) },
            read: { "\($0[.syncedLayout].columns) \($0[.syncedLayout].compact)" }),
    ]

    @Test("a new device with only defaults uploads nothing and ends with the other device's value", arguments: edits)
    func newDeviceTakesTheValue(edit: Edit) async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        edit.write(phone.defaults)
        await settle(cloud, [phone])
        let uploaded = phone.store.uploadCount
        #expect(uploaded == 1)

        let laptop = try SyncedDevice(cloud, named: "laptop")
        await settle(cloud, [phone, laptop])
        #expect(laptop.store.uploadCount == 0)
        #expect(phone.store.uploadCount == uploaded)
        #expect(edit.read(laptop.defaults) == edit.read(phone.defaults))
        #expect(sameStoredValue(laptop.stored(edit.key), phone.stored(edit.key)))
        // The keys the laptop shows as defaults stayed absent everywhere.
        for key in laptop.keys where key != edit.key {
            #expect(laptop.stored(key) == nil)
            #expect(cloud.serverValues()[key.name] == nil)
        }
    }

    @Test("a remote change costs one reconcile: the engine's own write of it, heard back from the suite, is no edit")
    func remoteChangeReconciledOnce() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let (phone, laptop) = (try SyncedDevice(cloud, named: "phone"), try SyncedDevice(cloud, named: "laptop"))
        await settle(cloud, [phone, laptop])
        for volume in [3, 4, 5] {
            phone.defaults[.syncedVolume] = volume
            await phone.sync.waitUntilIdle()
            let before = laptop.sync.reconcileCount
            cloud.deliver()
            await laptop.sync.waitUntilIdle()
            #expect(laptop.defaults[.syncedVolume] == volume)
            #expect(laptop.sync.reconcileCount - before == 1, "volume \(volume)")
        }
        // An edit of the value the engine just wrote is still heard, and goes up.
        laptop.defaults[.syncedVolume] = 8
        await settle(cloud, [phone, laptop])
        #expect(phone.defaults[.syncedVolume] == 8)
    }

    @Test("a value stored before sync began ranks below the cloud's, and goes up when the cloud has none")
    func adoptedValues() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        phone.defaults[.syncedVolume] = 2
        await settle(cloud, [phone])

        // The laptop had values before it synced: the cloud's volume wins over its own;
        // its name, which the cloud lacks, goes up.
        let laptop = try SyncedDevice(cloud, named: "laptop", start: false)
        laptop.defaults[.syncedVolume] = 7
        laptop.defaults[.syncedName] = "ada"
        try laptop.sync.start()
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedVolume] == 2)
        #expect(phone.defaults[.syncedVolume] == 2)
        #expect(phone.defaults[.syncedName] == "ada")
        #expect(laptop.defaults[.syncedName] == "ada")
    }

    @Test("keys added to a running engine adopt what they hold: the cloud's value wins over it")
    func keysAddedWhileRunning() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        phone.defaults[.syncedName] = "phone"
        await settle(cloud, [phone])
        let laptop = try SyncedDevice(cloud, named: "laptop", keys: [.syncedVolume])
        laptop.defaults[.syncedName] = "laptop, before it synced the name"
        await settle(cloud, [phone, laptop])
        try laptop.sync.add(.syncedName)
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedName] == "phone")
        #expect(phone.defaults[.syncedName] == "phone")
        #expect(laptop.store.uploadCount == 0)
    }

    @Test("an edit made while the store cannot sync goes up as an edit of its time, and wins over an older value")
    func editWhileUnavailable() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop", start: false)
        laptop.store.hasEntitlement = false
        try laptop.sync.start()
        phone.defaults[.syncedName] = "older"
        await settle(cloud, [phone, laptop])
        laptop.store.clockOffset = 60
        laptop.defaults[.syncedName] = "newer"
        await settle(cloud, [phone, laptop])
        #expect(laptop.sync.status == .unavailable)
        #expect(cloudValue(cloud, .syncedName) as? String == "older")
        laptop.store.hasEntitlement = true
        laptop.sync.refresh()
        await settle(cloud, [phone, laptop])
        #expect(laptop.sync.status == .running)
        #expect(phone.defaults[.syncedName] == "newer")
        #expect(laptop.defaults[.syncedName] == "newer")
    }

    @Test("a value from the cloud the suite cannot keep is skipped and reported; the other keys sync, and this device's value replaces it")
    func unstorableRemoteValue() async throws {
        ReportedFailures.install()
        let cloud = SimulatedCloud(delivery: .manual)
        let name = DefaultsKey<String>(plainKey("bad"), default: "")
        let other = DefaultsKey<Int>(plainKey("good"), default: 0)
        let writer = cloud.makeDevice(named: "another library")
        var deep: Any = "leaf"
        for _ in 0..<260 { deep = [deep] }
        writer.set(["DefaultsCoder.sync": 1, "time": 9_000_000_000_000, "device": "X", "value": deep], forKey: name.name)
        writer.set(["DefaultsCoder.sync": 1, "time": 9_000_000_000_000, "device": "X", "value": 7], forKey: other.name)
        cloud.deliver()
        let laptop = try SyncedDevice(cloud, named: "laptop", keys: [name, other], start: false)
        laptop.defaults[name] = "mine"
        try laptop.sync.start()
        await settle(cloud, [laptop])
        #expect(laptop.defaults[other] == 7)
        #expect(laptop.defaults[name] == "mine")
        #expect((cloud.serverValues()[name.name] as? [String: Any])?["value"] as? String == "mine")
        let reports = ReportedFailures.reports(for: name.name)
        #expect(reports.first?.operation == .read)
        #expect(
            reports.first?.description
                == "DefaultsCoder: iCloud sync of \"\(name.name)\" skipped the value from iCloud: the suite cannot keep it (not a property list, or nested too deep)"
        )
    }

    // MARK: - Last writer wins

    @Test("edits of different keys at the same time both survive")
    func differentKeys() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop")
        phone.defaults[.syncedVolume] = 3
        laptop.defaults[.syncedName] = "grace"
        await settle(cloud, [phone, laptop])
        for device in [phone, laptop] {
            #expect(device.defaults[.syncedVolume] == 3)
            #expect(device.defaults[.syncedName] == "grace")
        }
    }

    /// Two devices edit one key; the expected winner.
    struct Race: Sendable, CustomTestStringConvertible {
        let label: String
        /// The laptop's clock offset, in seconds.
        let laptopClock: TimeInterval
        /// Whether the laptop sees the phone's value before it edits.
        let laptopSawPhone: Bool
        let winner: String
        var testDescription: String { label }
    }

    static let races: [Race] = [
        Race(label: "the later edit wins", laptopClock: 60, laptopSawPhone: false, winner: "laptop"),
        Race(label: "an hour-slow clock still wins after seeing the newer value", laptopClock: -3600, laptopSawPhone: true, winner: "laptop"),
        Race(label: "an hour-slow clock that saw nothing loses", laptopClock: -3600, laptopSawPhone: false, winner: "phone"),
    ]

    @Test("the same key edited on two devices ends equal on both", arguments: races)
    func sameKey(race: Race) async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop")
        laptop.store.clockOffset = race.laptopClock
        phone.defaults[.syncedName] = "phone"
        if race.laptopSawPhone {
            await settle(cloud, [phone, laptop])
            #expect(laptop.defaults[.syncedName] == "phone")
        }
        laptop.defaults[.syncedName] = "laptop"
        await settle(cloud, [phone, laptop])
        #expect(phone.defaults[.syncedName] == race.winner)
        #expect(laptop.defaults[.syncedName] == race.winner)
    }

    @Test("edits stamped at the same instant resolve the same way on every device")
    func ties() async throws {
        let instant = Date(timeIntervalSince1970: 1_800_000_000)
        let cloud = SimulatedCloud(delivery: .manual, now: { instant })
        let devices = try ["a", "b", "c"].map { try SyncedDevice(cloud, named: $0) }
        for device in devices { device.defaults[.syncedName] = device.store.name }
        await settle(cloud, devices)
        let names = devices.map { $0.defaults[.syncedName] }
        #expect(Set(names).count == 1)
        #expect(["a", "b", "c"].contains(names[0]))
    }

    // MARK: - When an edit was made

    /// How the phone's edit is made out of its engine's hearing.
    enum Unheard: String, CaseIterable, Sendable {
        /// The engine is stopped (the app is not running; a widget writes).
        case engineStopped
        /// The key is out of sync for a while.
        case keyOutOfSync
    }

    @Test("an edit made while the engine does not hear it is stamped when made: a later edit elsewhere wins on every device", arguments: Unheard.allCases)
    func unheardEdit(_ how: Unheard) async throws {
        let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        let cloud = SimulatedCloud(delivery: .manual, now: { time.withLock { $0 } })
        let (phone, laptop) = try (SyncedDevice(cloud, named: "phone"), SyncedDevice(cloud, named: "laptop"))
        phone.defaults[.syncedVolume] = 1
        await settle(cloud, [phone, laptop])
        switch how {
        case .engineStopped: phone.sync.stop()
        case .keyOutOfSync: phone.sync.remove(.syncedVolume)
        }
        // 10:00 on the phone, 11:00 on the laptop; the phone hears again at 12:00.
        time.withLock { $0 += 3600 }
        phone.defaults[.syncedVolume] = 10
        time.withLock { $0 += 3600 }
        laptop.defaults[.syncedVolume] = 11
        await settle(cloud, [laptop])
        time.withLock { $0 += 3600 }
        switch how {
        case .engineStopped: try phone.restart()
        case .keyOutOfSync: try phone.sync.add(.syncedVolume)
        }
        await settle(cloud, [phone, laptop])
        #expect(phone.defaults[.syncedVolume] == 11)
        #expect(laptop.defaults[.syncedVolume] == 11)
        #expect(cloudValue(cloud, .syncedVolume) as? Int == 11)
    }

    @Test("a burst of a thousand edits in one millisecond does not run the device's stamps ahead: another device's edit a millisecond later wins")
    func burst() async throws {
        let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        let cloud = SimulatedCloud(delivery: .manual, now: { time.withLock { $0 } })
        let (phone, laptop) = try (SyncedDevice(cloud, named: "phone"), SyncedDevice(cloud, named: "laptop"))
        await settle(cloud, [phone, laptop])
        time.withLock { $0 += 1 }
        for value in 0..<1_000 { phone.defaults[.syncedVolume] = value }
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedVolume] == 999)
        time.withLock { $0 += 0.002 }
        laptop.defaults[.syncedVolume] = -1
        await settle(cloud, [phone, laptop])
        #expect(phone.defaults[.syncedVolume] == -1)
        #expect(laptop.defaults[.syncedVolume] == -1)
    }

    @Test("two Defaults-format values of one millisecond: the device that held one ends with what the cloud and a new device hold")
    func defaultsPairTie() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let instant = Date(timeIntervalSince1970: 1_800_000_000.25)
        let writer = cloud.makeDevice(named: "a Defaults app")
        let phone = try SyncedDevice(cloud, named: "phone")
        for name in ["light", "dark", "system"] {
            // Another app, with Defaults, writes the key twice within one millisecond.
            writer.set([instant, name] as [Any], forKey: SyncedDevice.syncedNameKey)
            cloud.deliver()
            await settle(cloud, [phone])
        }
        let fresh = try SyncedDevice(cloud, named: "new")
        await settle(cloud, [phone, fresh])
        let held = CloudEntry(cloud: cloud.serverValues()[SyncedDevice.syncedNameKey] as Any)?.value as? String
        #expect(phone.defaults[.syncedName] == held)
        #expect(fresh.defaults[.syncedName] == held)
    }

    // MARK: - Removals

    @Test("a removal reaches the other device, and a reset uploads nothing but the removals")
    func removals() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop")
        phone.defaults[.syncedVolume] = 8
        phone.defaults[.syncedName] = "ada"
        phone.defaults.set("local", forKey: "notSynced")
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedVolume] == 8)

        try phone.defaults.reset(.syncedVolume)
        await settle(cloud, [phone, laptop])
        #expect(laptop.stored(.syncedVolume) == nil)
        #expect(laptop.defaults[.syncedVolume] == 5)
        #expect(cloud.serverValues()[DefaultsKeys.syncedVolume.name] != nil)
        #expect(cloudValue(cloud, .syncedVolume) == nil)

        let keysBefore = Set(cloud.serverValues().keys)
        try phone.defaults.resetAll()
        await settle(cloud, [phone, laptop])
        #expect(Set(cloud.serverValues().keys) == keysBefore)
        #expect(cloudValue(cloud, .syncedName) == nil)
        #expect(laptop.stored(.syncedName) == nil)
        #expect(phone.defaults.object(forKey: "notSynced") == nil)
        #expect(cloud.serverValues()["notSynced"] == nil)
    }

    // MARK: - Applying remote values

    @Test("observers hear a remote change once, and no echo follows")
    func remoteChangeHeardOnce() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop")
        let heard = Recorded<Int>()
        let notified = Recorded<String>()
        let observation = laptop.defaults.observe(.syncedVolume) { _, new in heard.append(new) }
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.keyDidChangeNotification, object: laptop.defaults, queue: nil
        ) { notified.append($0.userInfo?["key"] as? String ?? "") }
        defer { NotificationCenter.default.removeObserver(token) }

        phone.defaults[.syncedVolume] = 11
        await settle(cloud, [phone, laptop])
        #expect(heard.values == [5, 11])
        // The value's own announcement, not its record's.
        #expect(notified.values == ["sync.volume"])
        #expect(phone.store.uploadCount == 1)
        #expect(laptop.store.uploadCount == 0)
        await settle(cloud, [phone, laptop])
        #expect(heard.values == [5, 11])
        #expect(phone.store.uploadCount + laptop.store.uploadCount == 1)
        observation.cancel()
    }

    @Test("a value from a newer schema is kept, not re-uploaded as a default")
    func newerSchema() async throws {
        ReportedFailures.install()
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let laptop = try SyncedDevice(cloud, named: "laptop")
        // The phone runs a newer version, whose layout is a dictionary of another shape.
        let newer: [String: Any] = ["grid": ["rows": 3], "version": 2]
        phone.defaults.set(newer, forKey: DefaultsKeys.syncedLayout.name)
        await settle(cloud, [phone, laptop])
        // The laptop cannot decode it: it shows the default, and keeps the value.
        #expect(laptop.defaults[.syncedLayout].columns == ["name"])
        laptop.defaults[.syncedVolume] = 4
        laptop.sync.refresh()
        await settle(cloud, [phone, laptop])
        #expect(sameStoredValue(laptop.stored(.syncedLayout), newer))
        #expect(sameStoredValue(cloudValue(cloud, .syncedLayout), newer))
        #expect(sameStoredValue(phone.stored(.syncedLayout), newer))
        #expect(laptop.store.uploadCount == 1)
    }

    // MARK: - The store's reasons

    /// Whether the server held something when the discarded write was made.
    @Test("writes discarded before the first download are made again", arguments: [false, true])
    func initialSyncRetried(serverHasValues: Bool) async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        if serverHasValues {
            phone.defaults[.syncedName] = "older"
            await settle(cloud, [phone])
        }
        let laptop = try SyncedDevice(cloud, named: "laptop", needsInitialSync: true, retryDelay: 0.05)
        laptop.defaults[.syncedName] = "newer"
        await laptop.sync.waitUntilIdle()
        #expect(cloudValue(cloud, .syncedName) as? String == (serverHasValues ? "older" : nil))
        // The retry comes after the engine's delay, on a thread of its own.
        let retried = await eventually {
            cloud.deliver()
            return cloudValue(cloud, .syncedName) as? String == "newer"
        }
        #expect(retried)
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedName] == "newer")
        #expect(phone.defaults[.syncedName] == "newer")
    }

    /// One way over iCloud's limits.
    struct OverQuota: Sendable, CustomTestStringConvertible {
        let label: String
        let problem: @Sendable (String) -> String
        /// Fills the device's suite and returns the keys to sync and the one held back.
        let fill: @Sendable (UserDefaults, String) -> (keys: [DefaultsKeys], heldBack: String)
        var testDescription: String { label }
    }

    static let overQuota: [OverQuota] = [
        OverQuota(
            label: "one value over 1 MB",
            problem: { _ in "the value takes 1,048,758 bytes, over the 1,048,576 a value may take" },
            fill: { defaults, prefix in
                let key = DefaultsKey<Data>(prefix, default: Data())
                defaults[key] = Data(repeating: 7, count: 1 << 20)
                return ([key], key.name)
            }),
        OverQuota(
            label: "1,025 keys",
            problem: { _ in "the store already holds its 1,024 keys" },
            fill: { defaults, prefix in
                let keys = (0..<1025).map { DefaultsKey<Int>("\(prefix).\($0)", default: 0) }
                try? DefaultsSuite.change([defaults]) { values in
                    for (index, key) in keys.enumerated() { try values.set(index, forKey: key.name) }
                }
                return (keys, keys[1024].name)
            }),
        OverQuota(
            label: "more than 1 MB in all",
            problem: { _ in "the store would hold 1,200,552 bytes, over its 1,048,576" },
            fill: { defaults, prefix in
                let keys = (0..<3).map { DefaultsKey<Data>("\(prefix).\($0)", default: Data()) }
                for key in keys { defaults[key] = Data(repeating: 1, count: 400_000) }
                return (keys, keys[2].name)
            }),
    ]

    @Test("going over the limits is reported once, and the local value is kept", arguments: overQuota)
    func quota(over: OverQuota) async throws {
        ReportedFailures.install()
        let prefix = "q" + UUID().uuidString.prefix(8)
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone", keys: [], start: false)
        let (keys, heldBack) = over.fill(phone.defaults, String(prefix))
        let before = phone.defaults.object(forKey: heldBack)
        try phone.sync.add(keys)
        try phone.sync.start()
        await settle(cloud, [phone])
        phone.sync.refresh()
        await settle(cloud, [phone])
        let reports = ReportedFailures.reports(for: heldBack)
        #expect(reports.count == 1)
        #expect(
            reports.first?.description
                == "DefaultsCoder: iCloud sync of \"\(heldBack)\" held back: \(over.problem(heldBack)); it stays on this device")
        #expect(reports.first?.error as? CloudSyncError == (reports.first?.error as? CloudSyncError).map { CloudSyncError(key: heldBack, problem: $0.problem) })
        #expect(sameStoredValue(phone.defaults.object(forKey: heldBack), before))
        #expect(cloud.serverValues()[heldBack] == nil)
        #expect(cloud.serverValues().count == keys.count - 1)
    }

    @Test("a quota violation the store reports holds the keys back, once each")
    func quotaViolationFromTheStore() async throws {
        ReportedFailures.install()
        let cloud = SimulatedCloud(delivery: .manual, limits: CloudStoreLimits(keys: 1024, totalBytes: 300, valueBytes: 1 << 20, keyBytes: 64))
        let phone = try SyncedDevice(cloud, named: "phone")
        // The engine checks iCloud's limits; this server's are smaller, and refuses.
        let name = "n" + UUID().uuidString
        let key = DefaultsKey<String>(name, default: "")
        try phone.sync.add(key)
        phone.defaults[key] = String(repeating: "x", count: 400)
        await settle(cloud, [phone])
        phone.sync.refresh()
        await settle(cloud, [phone])
        #expect(
            ReportedFailures.reports(for: name).map(\.description) == [
                "DefaultsCoder: iCloud sync of \"\(name)\" held back: iCloud reported the app's storage over its quota; it stays on this device"
            ])
        #expect(phone.defaults[key].count == 400)
        // An edit that fits goes up.
        phone.defaults[key] = "short"
        await settle(cloud, [phone])
        #expect((cloud.serverValues()[name] as? [String: Any])?["value"] as? String == "short")
    }

    @Test("after an account switch the new account's values win, and local-only values stay here")
    func accountSwitch() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let work = try SyncedDevice(cloud, named: "work", account: "work")
        work.defaults[.syncedVolume] = 1
        await settle(cloud, [work])

        let phone = try SyncedDevice(cloud, named: "phone")
        phone.defaults[.syncedVolume] = 9
        phone.defaults[.syncedName] = "home"
        await settle(cloud, [work, phone])
        #expect(cloudValue(cloud, .syncedVolume) as? Int == 9)

        phone.store.switchAccount(to: "work")
        await settle(cloud, [work, phone])
        #expect(phone.defaults[.syncedVolume] == 1)
        #expect(phone.defaults[.syncedName] == "home")
        #expect(cloud.serverValues(of: "work")[DefaultsKeys.syncedName.name] == nil)
        #expect(work.defaults[.syncedName] == "")
        // An edit made after the switch goes to the new account.
        phone.defaults[.syncedName] = "work phone"
        await settle(cloud, [work, phone])
        #expect(work.defaults[.syncedName] == "work phone")
        #expect(cloudValue(cloud, .syncedName, account: "account") as? String == "home")
    }

    /// A device that cannot sync, and the status it shows.
    struct Unavailable: Sendable, CustomTestStringConvertible {
        let label: String
        let account: String?
        let entitled: Bool
        let status: CloudSync.Status
        var testDescription: String { label }
    }

    @Test(
        "with no account or no entitlement a status says so and local use is untouched",
        arguments: [
            Unavailable(label: "no account", account: nil, entitled: true, status: .noAccount),
            Unavailable(label: "no entitlement", account: "account", entitled: false, status: .unavailable),
        ])
    func unavailable(case unavailable: Unavailable) async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone", account: unavailable.account, start: false)
        phone.store.hasEntitlement = unavailable.entitled
        phone.defaults[.syncedVolume] = 3
        try phone.sync.start()
        await phone.sync.waitUntilIdle()
        #expect(phone.sync.status == unavailable.status)
        phone.defaults[.syncedName] = "offline"
        await settle(cloud, [phone])
        #expect(phone.defaults[.syncedVolume] == 3)
        #expect(phone.defaults[.syncedName] == "offline")
        #expect(phone.store.dictionaryRepresentation.isEmpty)
        #expect(cloud.serverValues().isEmpty)
        phone.sync.stop()
        #expect(phone.sync.status == .stopped)
    }

    @Test("edits made while signed out go up when sign-in arrives as an account change, as they do through refresh()")
    func signInUploadsEdits() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone", account: nil)
        await phone.sync.waitUntilIdle()
        #expect(phone.sync.status == .noAccount)
        phone.defaults[.syncedName] = "written signed out"
        await phone.sync.waitUntilIdle()
        phone.store.switchAccount(to: "account")
        await settle(cloud, [phone])
        #expect(phone.sync.status == .running)
        #expect(cloudValue(cloud, .syncedName) as? String == "written signed out")
    }

    // MARK: - What the engine hears

    @Test("a second process writes a synced key and it is uploaded")
    func secondProcess() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let key = DefaultsKey<String>(plainKey("remote"), default: "")
        let phone = try SyncedDevice(cloud, named: "phone", keys: [key])
        try await SecondProcess.write([key.name: "from the widget"], into: phone.suite)
        #expect(await eventually { phone.store.object(forKey: key.name) != nil })
        await settle(cloud, [phone])
        #expect((cloud.serverValues()[key.name] as? [String: Any])?["value"] as? String == "from the widget")
    }

    @Test("keys that are not synced are never touched")
    func unsyncedKeys() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone", keys: [.syncedVolume, .syncedName])
        let laptop = try SyncedDevice(cloud, named: "laptop", keys: [.syncedVolume])
        phone.defaults[.syncedName] = "phone only"
        laptop.defaults[.syncedName] = "laptop only"
        laptop.defaults.set(true, forKey: "laptop.flag")
        await settle(cloud, [phone, laptop])
        #expect(laptop.defaults[.syncedName] == "laptop only")
        #expect(phone.defaults[.syncedName] == "phone only")
        #expect(Set(cloud.serverValues().keys) == [DefaultsKeys.syncedName.name])
        #expect(laptop.defaults.persistentDomain(forName: laptop.suite.name)?.keys.contains { $0.hasPrefix("DefaultsCoder.sync.sync.name") } == false)
    }

    @Test("pending uploads survive a restart")
    func restart() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        // Edited while the app's engine was not running (killed, or not yet started).
        phone.sync.stop()
        phone.defaults[.syncedVolume] = 6
        // Edited while the store could not sync, then the app relaunched with it back.
        phone.store.hasEntitlement = false
        try phone.restart()
        phone.defaults[.syncedName] = "queued"
        await settle(cloud, [phone])
        #expect(cloud.serverValues().isEmpty)
        phone.store.hasEntitlement = true
        try phone.restart()
        await settle(cloud, [phone])
        #expect(cloudValue(cloud, .syncedVolume) as? Int == 6)
        #expect(cloudValue(cloud, .syncedName) as? String == "queued")
    }

    // MARK: - The API

    @Test("keys the cloud cannot hold, and a second engine on one suite, are refused with their reason")
    func refusals() throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        let long = DefaultsKey<Int>(String(repeating: "k", count: 65), default: 0)
        #expect(
            thrown { try phone.sync.add(long) }
                == "iCloud sync of \"\(long.name)\" refused: the name takes 65 bytes of UTF-8, over the 64 iCloud allows")
        let record = DefaultsKey<Int>("DefaultsCoder.sync.x", default: 0)
        #expect(thrown { try phone.sync.add(record) } == "iCloud sync of \"DefaultsCoder.sync.x\" refused: the key holds the package's own record")
        let second = CloudSync(phone.defaults, store: phone.store)
        #expect(thrown { try second.start() } == "iCloud sync not started: another CloudSync already syncs this suite in this process")
        #expect(second.status == .stopped)
        #expect(phone.sync.keys == ["sync.volume", "sync.layout", "sync.name"])
        phone.sync.remove(.syncedLayout)
        #expect(phone.sync.keys == ["sync.volume", "sync.name"])
    }

    @Test("the engine stops hearing the suite when stopped or released")
    func stopping() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone")
        phone.sync.stop()
        phone.defaults[.syncedVolume] = 1
        await settle(cloud, [phone])
        #expect(cloud.serverValues().isEmpty)
        #expect(!DefaultsSuite.of(phone.defaults).feed.isSubscribed(DefaultsKeys.syncedVolume.name))
    }

    // MARK: - Input from outside

    @Test(
        "a cloud entry or a device clock stamped at Int64.max is skipped and reported, never trapped on: later edits are stamped and go up",
        arguments: ["entry", "clock"])
    func outOfRangeStamps(source: String) async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        // A key of its own: reports are read by key, and the two arguments run together.
        let key = DefaultsKey<Int>(uniqueKey("volume"), default: 5)
        let phone = try SyncedDevice(cloud, named: "phone", keys: [key], start: false)
        ReportedFailures.install()
        if source == "entry" {
            let entry: [String: Any] = ["DefaultsCoder.sync": 1, "time": NSNumber(value: Int64.max), "device": "other", "value": 99]
            phone.store.set(entry, forKey: key.name)
        } else {
            try DefaultsSuite.change([phone.defaults]) { values in
                try values.set(["device": "phone", "latest": NSNumber(value: Int64.max)], forKey: SyncClock.key)
            }
        }
        try phone.sync.start()
        phone.defaults[key] = 3
        await settle(cloud, [phone])
        phone.defaults[key] = 4
        await settle(cloud, [phone])
        #expect((cloud.serverValues()[key.name] as? [String: Any])?["value"] as? Int == 4)
        #expect(phone.defaults[key] == 4)
        let clock = SyncClock(stored: phone.defaults.persistentDomain(forName: phone.suite.name)?[SyncClock.key])
        #expect(clock.latest < SyncStamp.times.upperBound)
        let skipped = ReportedFailures.reports(for: key.name).filter { ($0.error as? CloudSyncError)?.problem == .invalidRemoteEntry }
        if source == "entry" {
            #expect(skipped.first.map { "\($0)" } == "DefaultsCoder: iCloud sync of \"\(key.name)\" skipped the entry from iCloud: its stamp is malformed or out of range")
        } else {
            #expect(skipped.isEmpty)
        }
    }

    @Test(
        "a remote date the suite cannot keep to the bit takes the documented path: skipped and reported as unstorable",
        .enabled(if: Backend.isFile, "Linux's suite file keeps whole seconds"))
    func fractionalRemoteDate() async throws {
        let cloud = SimulatedCloud(delivery: .manual)
        let phone = try SyncedDevice(cloud, named: "phone", keys: [.syncedDate])
        ReportedFailures.install()
        let entry: [String: Any] = ["DefaultsCoder.sync": 1, "time": NSNumber(value: 5_000), "device": "other", "value": Date(timeIntervalSince1970: 1.5)]
        phone.store.set(entry, forKey: DefaultsKeys.syncedDate.name)
        phone.sync.refresh()
        await phone.sync.waitUntilIdle()
        let problems = ReportedFailures.reports(for: DefaultsKeys.syncedDate.name).compactMap { ($0.error as? CloudSyncError)?.problem }
        #expect(problems.contains(.unstorableRemoteValue))
        #expect(!problems.contains { if case .suite = $0 { return true } else { return false } })
        #expect(phone.stored(.syncedDate) == nil)
    }

    // MARK: - The app's life cycle

    @Test("a running engine refreshes each time the app becomes active, unless made not to; a stopped one does not")
    func refreshesWhenActive() async throws {
        // A center of its own: a post on the default one rechecks every suite of the process.
        let center = NotificationCenter()
        let cloud = SimulatedCloud(delivery: .manual)
        let (refreshing, still) = (ForwardingStore(cloud.makeDevice(named: "phone")), ForwardingStore(cloud.makeDevice(named: "watch")))
        let (first, second) = (TestSuite("phone"), TestSuite("watch"))
        let engines = [CloudSync(first.defaults, store: refreshing), CloudSync(second.defaults, store: still, refreshesWhenActive: false)]
        for engine in engines {
            try engine.add(.syncedVolume)
            try AppActivation.$center.withValue(center) { try engine.start() }
            await engine.waitUntilIdle()
        }
        let before = (refreshing.synchronizeCount, still.synchronizeCount)
        center.post(name: AppActivation.notifications[0], object: nil)
        #expect(await eventually { refreshing.synchronizeCount > before.0 })
        for engine in engines { await engine.waitUntilIdle() }
        #expect(still.synchronizeCount == before.1)
        engines[0].stop()
        let stopped = refreshing.synchronizeCount
        center.post(name: AppActivation.notifications[0], object: nil)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(refreshing.synchronizeCount == stopped)
        engines[1].stop()
    }
}
