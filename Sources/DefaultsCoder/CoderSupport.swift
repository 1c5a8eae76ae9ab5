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
