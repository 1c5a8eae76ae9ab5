//
//  TopLevelCoders.swift
//  DefaultsCoder
//
//  Combine's `TopLevelEncoder` and `TopLevelDecoder`, where Combine exists.
//

#if canImport(Combine)
import Combine

extension KeyValueEncoder: TopLevelEncoder {
    /// The tree `encode(_:)` makes.
    public typealias Output = Any?
}

extension KeyValueDecoder: TopLevelDecoder {
    /// The tree `decode(_:from:)` reads.
    public typealias Input = Any
}
#endif
