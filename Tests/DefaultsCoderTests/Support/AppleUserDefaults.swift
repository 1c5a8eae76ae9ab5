import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// The suite backend this test process runs on: the file (Linux's default) or
/// preferences through `UserDefaults` alone (Apple platforms; on Linux with
/// `DEFAULTSCODER_SUITE_BACKEND=preferences`, against `AppleUserDefaults`).
enum Backend {
    static var isFile: Bool { SuiteBackendKind.current == .file }
    static var isPreferences: Bool { SuiteBackendKind.current == .preferences }

    /// Whether suites are Apple's `UserDefaults` as the tests emulate it on Linux.
    static var isEmulatedApple: Bool {
        #if os(Linux)
        return isPreferences
        #else
        return false
        #endif
    }
}

#if os(Linux)
/// A `UserDefaults` that behaves as Apple's does where Linux's does not, so that the
/// Apple path of the suite layer runs on Linux. What it emulates, from Apple's
/// documentation and measured reports:
/// - `didChangeNotification` is posted synchronously, on the calling thread, for every
///   in-process `set(_:forKey:)`, `removeObject(forKey:)`, `register(defaults:)` and
///   `setVolatileDomain(_:forName:)`, with the object changed;
/// - key-value observers of a key are called synchronously, on the calling thread, after
///   each change of that key; removing an observer that was not added is recorded
///   (`unbalancedRemovals`), where Apple's raises `NSRangeException`;
/// - `object(forKey:)` searches the argument domain, the suite, the global domain, then
///   the registration domain; `dictionaryRepresentation()` merges the same four;
/// - the global domain (`NSGlobalDomain`) holds the system's keys (`AppleLanguages`,
///   `AppleLocale`, …), readable with `persistentDomain(forName:)`;
/// - the registration domain is the process's, and `volatileDomain(forName:)` shows it.
///
/// The suite's own values live where Foundation on Linux keeps them (its file), so a
/// plain `UserDefaults` object of the same name, or another process, reads them as
/// `cfprefsd` lets every object of a suite read them on Apple platforms.
final class AppleUserDefaults: UserDefaults, KeyValueObservable {
    // `name` is a constant; the shared domains and the observers are behind locks.

    /// The global domain every suite shows.
    nonisolated(unsafe) static let systemKeys: [String: Any] = [
        "AppleLanguages": ["en-US", "fr-FR"],
        "AppleLocale": "en_US",
        "AppleKeyboards": ["en_US@sw=QWERTY;hw=Automatic"],
        "AppleMeasurementUnits": "Inches",
        "AppleTemperatureUnit": "Fahrenheit",
        "NSInterfaceStyle": "macintosh",
    ]

    /// The process's registration domain, which every suite searches last.
    private static let registered = Locked<[String: Any]>([:])

    let name: String

    /// The key-value observers of each key, by observer.
    private let keyObservers = Locked<[String: [ObjectIdentifier: KeyValueObservations]]>([:])
    /// Every key a key-value observer was added for, in order.
    let observedKeys = Recorded<String>()
    /// How many removals of a key-value observer that was not added were made.
    let unbalancedRemovals = Locked(0)

    func addKeyObserver(_ observer: KeyValueObservations, forKey key: String) {
        observedKeys.append(key)
        keyObservers.withLock { $0[key, default: [:]][ObjectIdentifier(observer)] = observer }
    }

    func removeKeyObserver(_ observer: KeyValueObservations, forKey key: String) {
        let removed = keyObservers.withLock { $0[key]?.removeValue(forKey: ObjectIdentifier(observer)) }
        if removed == nil { unbalancedRemovals.withLock { $0 += 1 } }
    }

    /// How many key-value observers are registered now.
    var keyObserverCount: Int {
        keyObservers.withLock { $0.values.reduce(0) { $0 + $1.count } }
    }

    /// A change another process made, which the next `set(_:forKey:)` hands over first,
    /// from inside the call, as Apple's preferences hand over pending changes.
    let beforeNextSet = Locked<(key: String, value: Int)?>(nil)

    /// Takes in a change another process made to `key`, as Apple's preferences do: the
    /// value changes and key-value observers hear of it, with no announcement and no
    /// file written.
    func receiveFromAnotherProcess(_ value: Int, forKey key: String) {
        // As `Any?`: `set(_: Int, forKey:)` would call this class's `set(_:forKey:)`.
        super.set(value as Any?, forKey: key)
        let observers = keyObservers.withLock { $0[key].map { Array($0.values) } ?? [] }
        for observer in observers { observer.keyDidChange() }
    }

    /// Takes in a change another process made to `key` while this app was suspended:
    /// the value changes, and key-value observing delivers nothing (Apple does not
    /// promise it does).
    func receiveWhileSuspended(_ value: Int, forKey key: String) {
        super.set(value as Any?, forKey: key)
    }

    /// Calls the key-value observers of `key`, then posts `didChangeNotification`.
    private func announce(_ key: String?) {
        if let key {
            let observers = keyObservers.withLock { $0[key].map { Array($0.values) } ?? [] }
            for observer in observers { observer.keyDidChange() }
        }
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }

    override init?(suiteName: String?) {
        guard let suiteName else { return nil }
        name = suiteName
        super.init(suiteName: suiteName)
    }

    private var own: [String: Any] {
        super.persistentDomain(forName: name) ?? [:]
    }

    /// The suite's own value of `key`. Foundation's `object(forKey:)` finds it, unless a
    /// launch argument or a registered default stands in its place; only then is the
    /// whole domain copied to look.
    private func ownValue(forKey key: String) -> Any? {
        if super.volatileDomain(forName: UserDefaults.argumentDomain)[key] == nil && Self.registered.withLock({ $0[key] == nil }) {
            return super.object(forKey: key)
        }
        return own[key]
    }

    override func object(forKey defaultName: String) -> Any? {
        if let argument = volatileDomain(forName: UserDefaults.argumentDomain)[defaultName] { return argument }
        if let stored = ownValue(forKey: defaultName) { return stored }
        if let global = Self.systemKeys[defaultName] { return global }
        return Self.registered.withLock { $0[defaultName] }
    }

    override func set(_ value: Any?, forKey defaultName: String) {
        if let pending = beforeNextSet.withLock({ pending in
            defer { pending = nil }
            return pending
        }) {
            receiveFromAnotherProcess(pending.value, forKey: pending.key)
        }
        super.set(value, forKey: defaultName)
        announce(defaultName)
    }

    override func removeObject(forKey defaultName: String) {
        super.removeObject(forKey: defaultName)
        announce(defaultName)
    }

    override func dictionaryRepresentation() -> [String: Any] {
        var all = Self.registered.withLock { $0 }
        all.merge(Self.systemKeys) { $1 }
        all.merge(own) { $1 }
        all.merge(volatileDomain(forName: UserDefaults.argumentDomain)) { $1 }
        return all
    }

    override func persistentDomain(forName domainName: String) -> [String: Any]? {
        domainName == UserDefaults.globalDomain ? Self.systemKeys : super.persistentDomain(forName: domainName)
    }

    override func register(defaults registrationDictionary: [String: Any]) {
        // The process's registration domain: every object of every suite sees it.
        super.register(defaults: registrationDictionary)
        Self.registered.withLock { $0.merge(registrationDictionary) { $1 } }
        // Apple's `registerDefaults:` announces the change, on the calling thread.
        announce(nil)
    }

    override func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        // Replaces the whole domain, and announces it, as Apple's does (Linux's merges).
        super.removeVolatileDomain(forName: domainName)
        super.setVolatileDomain(domain, forName: domainName)
        announce(nil)
    }

    override func volatileDomain(forName domainName: String) -> [String: Any] {
        switch domainName {
        case UserDefaults.registrationDomain: return Self.registered.withLock { $0 }
        default: return super.volatileDomain(forName: domainName)
        }
    }
}
#endif

/// A new `UserDefaults` object of the suite `name`: Apple's, emulated, where the tests
/// run the Apple path on Linux; Foundation's own otherwise.
func makeDefaults(suiteName name: String) -> UserDefaults {
    #if os(Linux)
    if Backend.isEmulatedApple { return AppleUserDefaults(suiteName: name)! }
    #endif
    return UserDefaults(suiteName: name)!
}
