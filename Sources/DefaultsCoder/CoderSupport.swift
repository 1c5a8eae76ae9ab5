//
//  CoderSupport.swift
//  DefaultsCoder
//
//  What the encoder and the decoder both need: the user-info conversion and the wrapper
//  that runs a `.custom` strategy closure.
//

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

/// `value` as `U`, where a metatype check has just shown that `T` is `U`. The same type,
/// so a reinterpretation: `as!` would call the runtime's dynamic cast for every value.
@inline(__always)
func sameType<T, U>(_ value: T, as _: U.Type) -> U {
    assert(T.self == U.self, "sameType(_:as:) with \(T.self) and \(U.self)")
    return unsafeBitCast(value, to: U.self)
}
