// Combine's `TopLevelEncoder` and `TopLevelDecoder`, where Combine exists.

#if canImport(Combine)
import Combine

/// `KeyValueEncoder` as a Combine encoder: `publisher.encode(encoder: KeyValueEncoder())`.
extension KeyValueEncoder: TopLevelEncoder {
    /// The tree `encode(_:)` makes.
    public typealias Output = Any?
}

/// `KeyValueDecoder` as a Combine decoder: `publisher.decode(type: User.self, decoder: KeyValueDecoder())`.
extension KeyValueDecoder: TopLevelDecoder {
    /// The tree `decode(_:from:)` reads.
    public typealias Input = Any
}
#endif
