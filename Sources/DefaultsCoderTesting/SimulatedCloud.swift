// One iCloud account's key-value storage and the devices signed in to it, in memory: for
// tests, and for previews that show synced settings without an iCloud account.
//
// The model follows Apple's documentation of `NSUbiquitousKeyValueStore`: each device
// writes to its own copy, which goes up when the device is online; the server keeps the
// last write it received; other devices hear of it when it comes down, with
// `serverChange`. A device that has not finished its first download discards writes and
// says so (`initialSync`); a write over the limits stays on the device and is reported
// (`quotaViolation`); an account switch replaces every value (`accountChange`).

import DefaultsCoder
import DefaultsCoderStorage
import DefaultsCoderSync
import Foundation
import KeyValueCoders

/// An in-memory iCloud key-value store shared by simulated devices.
///
/// ```swift
/// let cloud = SimulatedCloud(delivery: .manual)
/// let phone = cloud.makeDevice(named: "phone")
/// let laptop = cloud.makeDevice(named: "laptop")
/// let phoneSync = CloudSync(phoneDefaults, store: phone)
/// let laptopSync = CloudSync(laptopDefaults, store: laptop)
/// // … edit on the phone, then let the network run:
/// cloud.deliver()
/// ```
public final class SimulatedCloud: Sendable {
    /// When changes travel between the devices and the server.
    public enum Delivery: Sendable, Equatable {
        /// As soon as they are made: writes go up and come down to the other online
        /// devices before `set` returns. For previews.
        case immediate
        /// Only when `deliver()`, `push(from:)` or `pull(to:)` is called. For tests that
        /// choose the order of events.
        case manual
    }

    /// When changes travel.
    public let delivery: Delivery
    /// The limits the server enforces.
    public let limits: CloudStoreLimits
    private let now: @Sendable () -> Date
    private let state = Locked(State())
    /// Whether a thread is running deliveries, and whether another pass was asked for
    /// meanwhile (a handler's write).
    private let delivering = Locked((running: false, again: false))

    private struct State {
        var servers: [String: [String: Any]] = [:]
        var devices: [DeviceState] = []
    }

    fileprivate struct DeviceState {
        var account: String?
        var isOnline = true
        var hasEntitlement = true
        var needsInitialSync = false
        var copy: [String: Any] = [:]
        /// Keys written here and not yet sent up, in the order they were first written.
        var outbox: [String] = []
        /// Keys the server changed that have not come down yet.
        var inbox: Set<String> = []
        /// Changes to report to the device's observers, in order.
        var notifications: [CloudStoreChange] = []
        var handlers: [Int: @Sendable (CloudStoreChange) -> Void] = [:]
        var nextHandler = 0
        var uploads = 0
    }

    /// Creates an empty cloud.
    ///
    /// - Parameters:
    ///   - delivery: When changes travel; `.immediate` unless a test chooses.
    ///   - limits: The limits the server enforces; iCloud's unless a test chooses.
    ///   - now: The clock the devices read (`Device.now()`), shifted by each device's
    ///     `clockOffset`.
    public init(
        delivery: Delivery = .immediate, limits: CloudStoreLimits = .iCloud, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.delivery = delivery
        self.limits = limits
        self.now = now
    }

    /// Adds a device.
    ///
    /// - Parameters:
    ///   - name: A name for messages.
    ///   - account: The iCloud account signed in, or `nil` for none.
    ///   - needsInitialSync: Whether the device has yet to make its first download, and
    ///     discards writes until it has (a device that has just signed in).
    /// - Returns: The device, a `CloudKeyValueStore` to give a `CloudSync`.
    public func makeDevice(named name: String, account: String? = "account", needsInitialSync: Bool = false) -> Device {
        let index = state.withLock { state in
            var device = DeviceState(account: account, needsInitialSync: needsInitialSync)
            if let account, !needsInitialSync { device.copy = state.servers[account] ?? [:] }
            state.devices.append(device)
            return state.devices.count - 1
        }
        return Device(cloud: self, index: index, name: name)
    }

    /// What the server holds for `account`.
    ///
    /// - Parameter account: The account.
    /// - Returns: Every key and value on the server.
    public func serverValues(of account: String = "account") -> [String: Any] {
        state.withLock { $0.servers[account] ?? [:] }
    }

    /// Lets the network run until nothing moves: every online device sends its writes up
    /// and takes the server's changes down, and the observers hear of them, again and
    /// again while their handlers write.
    public func deliver() {
        guard startDelivering() else { return }
        repeat {
            for index in 0..<state.withLock({ $0.devices.count }) {
                push(index)
                pull(index)
            }
        } while continueDelivering()
    }

    /// Sends `device`'s writes up, when it is online.
    ///
    /// - Parameter device: The device.
    public func push(from device: Device) {
        push(device.index)
    }

    /// Brings the server's changes down to `device`, when it is online, and reports them
    /// to its observers (after any writes it discarded or could not send).
    ///
    /// - Parameter device: The device.
    public func pull(to device: Device) {
        pull(device.index)
    }

    private func startDelivering() -> Bool {
        delivering.withLock { delivering in
            guard !delivering.running else {
                delivering.again = true
                return false
            }
            delivering = (true, false)
            return true
        }
    }

    /// Whether another pass is needed: something moved, or a handler asked for one.
    private func continueDelivering() -> Bool {
        let moving = state.withLock { state in
            state.devices.contains { device in
                device.isOnline && device.account != nil && device.hasEntitlement
                    && (!device.outbox.isEmpty || !device.inbox.isEmpty || !device.notifications.isEmpty || device.needsInitialSync)
            }
        }
        return delivering.withLock { delivering in
            let again = moving || delivering.again
            delivering = (again, false)
            return again
        }
    }

    private func push(_ index: Int) {
        var notify: [CloudStoreChange] = []
        state.withLock { state in
            let device = state.devices[index]
            guard device.isOnline, device.hasEntitlement, !device.needsInitialSync, !device.outbox.isEmpty, let account = device.account
            else { return }
            var server = state.servers[account] ?? [:]
            var total = server.reduce(0) { $0 + CloudStoreLimits.size(of: $1.key, $1.value) }
            var refused: [String] = []
            for key in device.outbox {
                let old = server[key].map { CloudStoreLimits.size(of: key, $0) } ?? 0
                let new = device.copy[key].map { CloudStoreLimits.size(of: key, $0) } ?? 0
                let keys = server.count + (server[key] == nil && device.copy[key] != nil ? 1 : 0)
                guard new <= limits.valueBytes, keys <= limits.keys, total - old + new <= limits.totalBytes else {
                    refused.append(key)
                    continue
                }
                server[key] = device.copy[key]
                total += new - old
                state.devices[index].uploads += 1
                for other in state.devices.indices where other != index && state.devices[other].account == account {
                    state.devices[other].inbox.insert(key)
                }
            }
            state.servers[account] = server
            state.devices[index].outbox = []
            if !refused.isEmpty { notify.append(CloudStoreChange(reason: .quotaViolation, keys: refused)) }
            state.devices[index].notifications += notify
        }
    }

    private func pull(_ index: Int) {
        let (handlers, changes) = state.withLock { state -> ([@Sendable (CloudStoreChange) -> Void], [CloudStoreChange]) in
            var device = state.devices[index]
            guard device.isOnline, device.hasEntitlement, let account = device.account else { return ([], []) }
            let server = state.servers[account] ?? [:]
            var changes = device.notifications
            device.notifications = []
            if device.needsInitialSync {
                // The first download: the device's copy becomes the server's, and what it
                // wrote before is gone.
                device.needsInitialSync = false
                let changed = Set(device.copy.keys).union(server.keys).sorted()
                device.copy = server
                device.outbox = []
                device.inbox = []
                if !changed.isEmpty { changes.append(CloudStoreChange(reason: .serverChange, keys: changed)) }
            } else if !device.inbox.isEmpty {
                let keys = device.inbox.sorted()
                for key in keys { device.copy[key] = server[key] }
                device.outbox.removeAll { device.inbox.contains($0) }
                device.inbox = []
                changes.append(CloudStoreChange(reason: .serverChange, keys: keys))
            }
            state.devices[index] = device
            return (device.handlers.sorted { $0.key < $1.key }.map(\.value), changes)
        }
        for change in changes {
            for handler in handlers { handler(change) }
        }
    }

    // MARK: - Devices

    /// One device's copy of the store: a `CloudKeyValueStore`.
    public final class Device: CloudKeyValueStore, CustomStringConvertible {
        private let cloud: SimulatedCloud
        fileprivate let index: Int
        /// The device's name.
        public let name: String

        fileprivate init(cloud: SimulatedCloud, index: Int, name: String) {
            self.cloud = cloud
            self.index = index
            self.name = name
        }

        private func withDevice<R>(_ body: (inout DeviceState) -> R) -> R {
            cloud.state.withLock { body(&$0.devices[index]) }
        }

        /// How far this device's clock is off, in seconds (negative: slow).
        public var clockOffset: TimeInterval {
            get { offset.withLock { $0 } }
            set { offset.withLock { $0 = newValue } }
        }
        private let offset = Locked<TimeInterval>(0)

        /// The time on this device's clock: the cloud's clock shifted by `clockOffset`.
        /// Give it to `CloudSync` as its clock.
        public func now() -> Date {
            cloud.now().addingTimeInterval(clockOffset)
        }

        /// Whether the device reaches the server. Going online in `.immediate` delivery
        /// sends and takes what waited.
        public var isOnline: Bool {
            get { withDevice { $0.isOnline } }
            set {
                withDevice { $0.isOnline = newValue }
                afterChange()
            }
        }

        /// Whether the app has the iCloud key-value storage entitlement; without it
        /// nothing travels and `synchronize()` returns `false`.
        public var hasEntitlement: Bool {
            get { withDevice { $0.hasEntitlement } }
            set { withDevice { $0.hasEntitlement = newValue } }
        }

        /// The account signed in, or `nil`.
        public var account: String? { withDevice { $0.account } }

        /// How many values this device has sent up.
        public var uploadCount: Int { withDevice { $0.uploads } }

        /// Signs in to `account` (`nil` signs out): the device's copy becomes the new
        /// account's values, regardless of what it held, and its observers hear
        /// `accountChange` at once.
        ///
        /// - Parameter account: The new account, or `nil`.
        public func switchAccount(to account: String?) {
            let (handlers, change) = cloud.state.withLock { state -> ([@Sendable (CloudStoreChange) -> Void], CloudStoreChange) in
                let old = state.devices[index].copy
                let new = account.flatMap { state.servers[$0] } ?? [:]
                state.devices[index].account = account
                state.devices[index].copy = new
                state.devices[index].outbox = []
                state.devices[index].inbox = []
                state.devices[index].needsInitialSync = false
                let keys = Set(old.keys).union(new.keys).sorted()
                return (state.devices[index].handlers.sorted { $0.key < $1.key }.map(\.value), CloudStoreChange(reason: .accountChange, keys: keys))
            }
            for handler in handlers { handler(change) }
        }

        /// The value in this device's copy.
        public func object(forKey key: String) -> Any? {
            withDevice { $0.copy[key] }
        }

        /// Stores `value` in this device's copy, to go up when it can: discarded (and
        /// reported as `initialSync`) before the device's first download.
        public func set(_ value: Any, forKey key: String) {
            write(value, forKey: key)
        }

        /// Removes the value from this device's copy, to go up when it can.
        public func removeObject(forKey key: String) {
            write(nil, forKey: key)
        }

        private func write(_ value: Any?, forKey key: String) {
            withDevice { device in
                device.copy[key] = value
                guard device.account != nil else { return }
                if device.needsInitialSync {
                    device.notifications.append(CloudStoreChange(reason: .initialSync, keys: [key]))
                } else if !device.outbox.contains(key) {
                    device.outbox.append(key)
                }
            }
            afterChange()
        }

        /// This device's copy.
        public var dictionaryRepresentation: [String: Any] {
            withDevice { $0.copy }
        }

        /// `false` without the entitlement; in `.immediate` delivery, also delivers.
        public func synchronize() -> Bool {
            afterChange()
            return hasEntitlement
        }

        /// Whether an account is signed in.
        public var hasAccount: Bool { account != nil }

        /// Calls `handler` with each change that reaches this device.
        public func observeChanges(_ handler: @escaping @Sendable (CloudStoreChange) -> Void) -> CloudStoreSubscription {
            let id = withDevice { device in
                defer { device.nextHandler += 1 }
                device.handlers[device.nextHandler] = handler
                return device.nextHandler
            }
            return CloudStoreSubscription { [cloud, index] in
                cloud.state.withLock { _ = $0.devices[index].handlers.removeValue(forKey: id) }
            }
        }

        private func afterChange() {
            if cloud.delivery == .immediate { cloud.deliver() }
        }

        /// The device's name.
        public var description: String { name }
    }
}
