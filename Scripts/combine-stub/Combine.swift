// The declarations of Combine this package uses, as Apple documents them, so that its
// Combine code (`#if canImport(Combine)`) type-checks on Linux: Scripts/check-darwin.sh.
// Signatures only; nothing here runs.

public protocol Cancellable { func cancel() }
public protocol Subscription: Cancellable { func request(_ demand: Subscribers.Demand) }
public enum Subscribers {
    public struct Demand: Sendable { public var max: Int? { nil } }
    public enum Completion<Failure: Error> { case finished, failure(Failure) }
}
public protocol Subscriber<Input, Failure> {
    associatedtype Input
    associatedtype Failure: Error
    func receive(subscription: any Subscription)
    func receive(_ input: Input) -> Subscribers.Demand
    func receive(completion: Subscribers.Completion<Failure>)
}
public protocol Publisher<Output, Failure> {
    associatedtype Output
    associatedtype Failure: Error
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure
}
public protocol TopLevelEncoder {
    associatedtype Output
    func encode<T: Encodable>(_ value: T) throws -> Output
}
public protocol TopLevelDecoder {
    associatedtype Input
    func decode<T: Decodable>(_ type: T.Type, from: Input) throws -> T
}
public final class ObservableObjectPublisher: Publisher {
    public typealias Output = Void
    public typealias Failure = Never
    public init() {}
    public func send() {}
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Void, S.Failure == Never {}
}
public protocol ObservableObject: AnyObject {
    associatedtype ObjectWillChangePublisher: Publisher = ObservableObjectPublisher where ObjectWillChangePublisher.Failure == Never
    var objectWillChange: ObjectWillChangePublisher { get }
}
