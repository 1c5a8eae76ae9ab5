// Random interleavings of edits (in bursts, too), removals, deliveries, outages,
// stopped engines, keys out of sync, restarts and entries stamped at the edges of
// `Int64`, on three simulated devices: once the network runs, every device holds the
// same value for every key, and that value is one a user wrote (or nothing, after a
// removal). Seeded; a
// failure prints its seed, and `DEFAULTSCODER_SEED=N swift test --filter
// CloudSyncConvergenceTests` replays it.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import DefaultsCoderTesting
@testable import KeyValueCoders

@Suite("CloudSync convergence")
struct CloudSyncConvergenceTests {

    /// The interleavings run in parts, each a test case of its own, so that a parallel
    /// run spreads them over its threads.
    static let parts = 4

    @Test("1,000 random interleavings on three devices converge on values a user wrote", arguments: 0..<parts)
    func interleavings(part: Int) async throws {
        let all = GeneratedRoundTripTests.seeds(1000, offset: 0x5EED)
        let seeds = Array(all[(part * all.count / Self.parts)..<((part + 1) * all.count / Self.parts)])
        // A replayed seed (DEFAULTSCODER_SEED) falls in one part; the others have none.
        guard !seeds.isEmpty else { return }
        print("CloudSync convergence, part \(part): seeds \(seeds[0]) to \(seeds[seeds.count - 1])")
        // Everything here runs on the calling thread (manual delivery, writes whose
        // observers run before they return), so it runs on a thread of its own.
        let failures = try await offPool { () -> [String] in
            var failures: [String] = []
            // Three suites serve every interleaving: Foundation on Linux goes through
            // every suite the process opened on each synchronize, so thousands of suites
            // would make each write slower than the last.
            let suites = (0..<3).map { TestSuite("interleaving\(part)device\($0)") }
            for seed in seeds where failures.count < 3 {
                do {
                    for suite in suites { try SyncedDevice.empty(suite) }
                    var interleaving = Interleaving(seed: seed, suites: suites)
                    if let failure = try interleaving.run() { failures.append("seed \(seed): \(failure)") }
                } catch {
                    failures.append("seed \(seed): threw \(error)")
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

extension CloudSyncConvergenceTests {
    @Test("writers on several threads of two devices, with delivery as they write, end equal")
    func threads() async throws {
        let cloud = SimulatedCloud(delivery: .immediate)
        let devices = try [SyncedDevice(cloud, named: "phone"), SyncedDevice(cloud, named: "laptop")]
        let written = Locked<Set<Int>>([])
        // Threads of their own: each write delivers and reconciles before it returns.
        try await offPool {
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for round in 0..<50 {
                    let value = thread * 1_000 + round
                    written.withLock { _ = $0.insert(value) }
                    devices[(thread + round) % 2].defaults[.syncedVolume] = value
                }
            }
        }
        await settle(cloud, devices)
        let held = devices.map { $0.defaults[.syncedVolume] }
        #expect(held[0] == held[1])
        #expect(written.withLock { $0.contains(held[0]) })
    }
}

/// One interleaving: three devices, three keys, thirty random steps, then the network
/// runs until nothing moves.
private struct Interleaving {
    let seed: UInt64
    var random: SeededRandom

    /// Every value written to each key, as stored; a removal is `nil`.
    private var written: [String: [Any?]] = [:]

    let suites: [TestSuite]

    init(seed: UInt64, suites: [TestSuite]) {
        self.seed = seed
        self.suites = suites
        random = SeededRandom(entropy: SeededEntropy(seed: seed))
    }

    private static let keys: [DefaultsKeys] = [.syncedVolume, .syncedName, .syncedLayout]

    mutating func run() throws -> String? {
        let instant = Date(timeIntervalSince1970: 1_800_000_000)
        let time = Locked(instant)
        let cloud = SimulatedCloud(delivery: .manual, now: { time.withLock { $0 } })
        let devices = try (0..<3).map { index in
            let device = try SyncedDevice(cloud, named: "d\(index)", suite: suites[index])
            // Clocks up to an hour apart, some exactly equal.
            device.store.clockOffset = TimeInterval(Int.random(in: -2...2, using: &random) * 1800)
            return device
        }
        // Another app's device of the account, which writes entries of its own.
        let edge = cloud.makeDevice(named: "edge")
        for step in 0..<30 {
            time.withLock { $0 += TimeInterval(Int.random(in: 0...3, using: &random)) }
            let device = devices[Int.random(in: 0..<3, using: &random)]
            switch Int.random(in: 0..<14, using: &random) {
            case 0, 1, 2: edit(device, step: step)
            case 3:
                let key = Self.keys[Int.random(in: 0..<3, using: &random)]
                try device.defaults.reset(key)
                written[key.name, default: []].append(nil)
            case 4: cloud.push(from: device.store)
            case 5: cloud.pull(to: device.store)
            case 6: device.store.isOnline.toggle()
            case 7: try device.restart()
            case 8: device.sync.refresh()
            case 9: cloud.deliver()
            // Edits the engine does not hear: it is stopped (until a restart), or the key is
            // out of sync (until added again).
            case 10: device.sync.stop()
            case 11:
                let key = Self.keys[Int.random(in: 0..<3, using: &random)]
                if device.sync.keys.contains(key.name) { device.sync.remove(key) } else { try device.sync.add(key) }
            // A burst: several edits in one millisecond.
            case 12: for burst in 0..<Int.random(in: 2...6, using: &random) { edit(device, step: step * 100 + burst) }
            default: edgeEntry(edge, step: step)
            }
        }
        for device in devices {
            device.store.isOnline = true
            if device.sync.status == .stopped || device.sync.keys.count < Self.keys.count { try device.restart() }
        }
        for _ in 0..<6 { cloud.deliver() }
        defer { for device in devices { device.sync.stop() } }
        return verdict(devices)
    }

    private mutating func edit(_ device: SyncedDevice, step: Int) {
        let defaults = device.defaults
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            defaults[.syncedVolume] = step
            written[DefaultsKeys.syncedVolume.name, default: []].append(step)
        case 1:
            let name = "\(device.store.name)-\(step)"
            defaults[.syncedName] = name
            written[DefaultsKeys.syncedName.name, default: []].append(name)
        default:
            defaults[.syncedLayout] = SyncedLayout(columns: [device.store.name], compact: step % 2 == 0)
            written[DefaultsKeys.syncedLayout.name, default: []].append(defaults.object(forKey: DefaultsKeys.syncedLayout.name))
        }
    }

    /// An entry from another app's device, stamped at an edge of `Int64`: past the end
    /// of 9999 (skipped by every engine, so never held), or at its very end (a value like
    /// any other, which every later edit then ties with).
    private mutating func edgeEntry(_ device: SimulatedCloud.Device, step: Int) {
        let key = DefaultsKeys.syncedVolume.name
        let value = -step
        if Bool.random(using: &random) {
            let time = [Int64.max, Int64.max - 1, SyncStamp.times.upperBound + 1][Int.random(in: 0..<3, using: &random)]
            device.set(["DefaultsCoder.sync": 1, "time": NSNumber(value: time), "device": "edge", "value": value - 1_000], forKey: key)
            // No value to any engine: where it replaced the other app's last value before
            // a device took that, the key may end holding nothing, as after a removal.
            written[key, default: []].append(nil)
        } else {
            let entry = CloudEntry(stamp: SyncStamp(time: SyncStamp.times.upperBound, device: "edge"), value: value)
            device.set(entry.cloudValue, forKey: key)
            written[key, default: []].append(value)
        }
    }

    /// What is wrong with where the devices ended, or `nil`.
    private func verdict(_ devices: [SyncedDevice]) -> String? {
        for key in Self.keys {
            let held = devices.map { $0.stored(key) }
            guard held.allSatisfy({ sameStoredValue($0, held[0]) }) else {
                return "\(key.name) differs: \(held.map { $0.map { "\($0)" } ?? "nothing" })"
            }
            let writes = written[key.name] ?? []
            guard let value = held[0] else {
                if writes.isEmpty || writes.contains(where: { $0 == nil }) { continue }
                return "\(key.name) holds nothing, though it was never removed"
            }
            guard writes.contains(where: { sameStoredValue($0, value) }) else {
                return "\(key.name) holds \(value), which nobody wrote"
            }
        }
        return nil
    }
}
