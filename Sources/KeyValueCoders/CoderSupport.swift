// What the encoder and the decoder both need: the user-info conversion, the wrapper
// that runs a `.custom` strategy closure, and the insertion of a dictionary entry.

import Foundation

/// `userInfo` as `Encoder` and `Decoder` hand it out.
func codingUserInfo(_ userInfo: [CodingUserInfoKey: any Sendable]) -> [CodingUserInfoKey: Any] {
    userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any }
}

/// Runs a `.custom` strategy closure. Coding errors pass through as the closure threw
/// them; any other error is wrapped by `wrap`, which gives it the path of the value.
@inline(__always)
func runCustomStrategy<R>(_ closure: () throws -> R, wrap: (any Error) -> any Error) throws -> R {
    do {
        return try closure()
    } catch let error as EncodingError {
        throw error
    } catch let error as DecodingError {
        throw error
    } catch {
        throw wrap(error)
    }
}

/// The two types a coder last found to be models — types that only their own
/// `encode(to:)` or `init(from:)` can code, such as `User` and the `Address` it holds —
/// so that their values skip the metatype compares for the types the coder codes
/// itself. Two, since a model's values alternate with those of the models inside it.
/// The coder remembers a type only when the compares it skips depend on the type alone.
struct ModelTypes {
    private var last: Any.Type?
    private var beforeLast: Any.Type?

    @inline(__always)
    func contains(_ type: Any.Type) -> Bool {
        type == last || type == beforeLast
    }

    mutating func remember(_ type: Any.Type) {
        beforeLast = last
        last = type
    }
}

/// `value` as a `T` when its dynamic type is exactly `T`, or `nil`.
///
/// `value as? T` asks the runtime's dynamic cast, which also looks for bridging, boxes and
/// optional payloads, for every value of a tree even when the type matches, which
/// `Benchmarks/README.md` measures. Opening the existential costs a metatype compare and a
/// copy. Callers that must also take what only a cast finds use `cast(_:to:)`.
@inline(__always)
package func exactCast<T>(_ value: Any, to _: T.Type) -> T? {
    func open<Dynamic>(_ opened: Dynamic) -> T? {
        if Dynamic.self == T.self { return sameType(opened, as: T.self) }
        // An `Any` inside an `Any`, as a generic value of type `Any` becomes when it is
        // passed on as `Any`: opening looks one level deep.
        if Dynamic.self == Any.self { return exactCast(sameType(opened, as: Any.self), to: T.self) }
        return nil
    }
    return _openExistential(value, do: open)
}

/// `value as? T`, asking the runtime's dynamic cast only when `value` is not exactly a
/// `T` (a bridged Foundation object, an optional, a box).
@inline(__always)
package func cast<T>(_ value: Any, to type: T.Type) -> T? {
    exactCast(value, to: type) ?? (value as? T)
}

/// `value` as `U`, where a metatype check has just shown that `T` is `U`. The same type,
/// so a reinterpretation: `as!` would call the runtime's dynamic cast for every value
/// (the measurement is in `Benchmarks/README.md`).
@inline(__always)
func sameType<T, U>(_ value: T, as _: U.Type) -> U {
    assert(T.self == U.self, "sameType(_:as:) with \(T.self) and \(U.self)")
    return unsafeBitCast(value, to: U.self)
}

extension Dictionary {
    /// Sets `value` under `key`, as `updateValue(_:forKey:)` does (not the subscript's
    /// setter, which takes an optional that may remove the key), taking the value over.
    /// The value it replaces, almost always none, is dropped by a switch: discarded
    /// whole, the returned optional is destroyed through `Optional`'s generic value
    /// witnesses at every entry (`Benchmarks/README.md`).
    @inline(__always)
    mutating func setEntry(_ value: consuming Value, forKey key: Key) {
        switch updateValue(value, forKey: key) {
        case .some(let replaced): _ = consume replaced
        case .none: break
        }
    }
}
