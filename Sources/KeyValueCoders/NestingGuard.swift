// How deep the coders recurse before they throw instead of overflowing the stack.

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How deep the coders go.
///
/// Data may nest 512 containers deep, the nesting `JSONDecoder` accepts when parsing: a
/// settings value deeper than that is damaged, and the same input must fail the same
/// way on every thread. (The coders check that where they make containers.)
///
/// Recursion is bounded by the stack that is really left: every level costs stack
/// (several kilobytes in a debug build), and a secondary thread on an Apple platform has
/// 512 KiB, so a value a few hundred levels deep, or an `encode(to:)` that encodes
/// itself, would otherwise crash the app instead of throwing. The stack is only looked
/// at past the first few levels, so shallow values pay one comparison. A fixed cap on
/// recursion backs this up where the platform does not say where its stack ends.
package struct NestingGuard {
    /// Why a value was refused.
    enum Reason {
        case containers
        case levels
        case stack

        var message: String {
            switch self {
            case .containers: return "Nesting deeper than \(NestingGuard.maximumContainers) levels"
            case .levels: return "Recursion deeper than \(NestingGuard.maximumLevels) levels"
            case .stack: return "Nesting too deep for the stack that is left on this thread"
            }
        }
    }

    /// The most containers a value may sit in: the one nesting limit of the package,
    /// for both coders, `PropertyListValue`, the checked readers of property lists and
    /// keyed archives, and (one fewer) the stored form. `JSONDecoder` accepts as much
    /// when parsing, and Foundation's XML property-list reader no more.
    package static let maximumContainers = 512

    /// The most levels the coders recurse, whatever the stack.
    static let maximumLevels = 4096

    /// Levels below this are not checked against the stack.
    private static let unguardedLevels = 8

    private(set) var level = 0

    package init() {}

    /// Goes one level deeper; returns why not when that would be too deep.
    @inline(__always)
    mutating func enter() -> Reason? {
        level += 1
        guard level > Self.unguardedLevels else { return nil }
        return checkDeepLevel()
    }

    /// Goes one level deeper, or stays where it is and throws what `tooDeep` makes of
    /// the reason: the one way the coders enter a level (`leave()` when done).
    @inline(__always)
    mutating func enter(orThrow tooDeep: (Reason) -> any Error) throws {
        if let reason = enter() {
            leave()
            throw tooDeep(reason)
        }
    }

    /// Goes one level deeper and says so, or stays where it is and returns `false`
    /// (`leave()` when done, after `true`).
    @inline(__always)
    package mutating func tryEnter() -> Bool {
        guard enter() != nil else { return true }
        leave()
        return false
    }

    @inline(__always)
    package mutating func leave() {
        level -= 1
    }

    private func checkDeepLevel() -> Reason? {
        if level > Self.maximumLevels { return .levels }
        return ThreadStack.isNearlyExhausted() ? .stack : nil
    }
}

/// The running thread's stack.
enum ThreadStack {
    /// Whether less than the reserve is left below the caller's frame: a quarter of the
    /// stack, at least 64 KiB and at most 256 KiB. The reserve covers one more level of
    /// a large `encode(to:)` in a debug build, and what Foundation needs at the leaves.
    static func isNearlyExhausted() -> Bool {
        guard let (lowest, top) = cachedBounds() else { return false }
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        // A local outside the stack (AddressSanitizer can keep frames on a heap of its
        // own) says nothing about the stack: do not guess.
        guard here >= lowest, here < top else { return false }
        let reserve = Swift.min(Swift.max((top - lowest) / 4, 64 * 1024), 256 * 1024)
        return here - lowest < reserve
    }

    /// The lowest address of this thread's stack and its size, or `nil` when the
    /// platform does not say.
    static func bounds() -> (lowest: UInt, size: UInt)? {
        #if canImport(Darwin)
        let thread = pthread_self()
        let top = UInt(bitPattern: pthread_get_stackaddr_np(thread))
        let size = UInt(pthread_get_stacksize_np(thread))
        guard top > size, size > 0 else { return nil }
        return (top - size, size)
        #elseif canImport(Glibc) || canImport(Musl)
        var attributes = pthread_attr_t()
        guard threadAttributes(pthread_self(), &attributes) == 0 else { return nil }
        defer { pthread_attr_destroy(&attributes) }
        var address: UnsafeMutableRawPointer?
        var size = 0
        guard pthread_attr_getstack(&attributes, &address, &size) == 0, let address, size > 0 else { return nil }
        return (UInt(bitPattern: address), UInt(size))
        #else
        return nil
        #endif
    }

    /// `bounds()` as the lowest address and the top, looked up once per thread: on Linux
    /// the main thread's bounds come from reading `/proc/self/maps`.
    private static func cachedBounds() -> (lowest: UInt, top: UInt)? {
        #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
        // The thread-specific values are the addresses themselves; 1 means "not known".
        if let cached = pthread_getspecific(lowestKey) {
            let lowest = UInt(bitPattern: cached)
            guard lowest != 1, let top = pthread_getspecific(topKey) else { return nil }
            return (lowest, UInt(bitPattern: top))
        }
        let found = bounds().map { (lowest: $0.lowest, top: $0.lowest &+ $0.size) }
        pthread_setspecific(lowestKey, UnsafeRawPointer(bitPattern: found?.lowest ?? 1))
        pthread_setspecific(topKey, UnsafeRawPointer(bitPattern: found?.top ?? 1))
        return found
        #else
        return nil
        #endif
    }

    #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
    private static let lowestKey = makeKey()
    private static let topKey = makeKey()

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }
    #endif
}

#if !canImport(Darwin) && (canImport(Glibc) || canImport(Musl))
/// `pthread_getattr_np`, which glibc and musl have but the Swift module map leaves out
/// (it is a GNU extension).
@_silgen_name("pthread_getattr_np")
private func threadAttributes(_ thread: pthread_t, _ attributes: UnsafeMutablePointer<pthread_attr_t>) -> Int32
#endif
