// The declarations of SwiftUI the package uses, with Apple's signatures, so that its
// SwiftUI code (`#if canImport(SwiftUI)`) type-checks on Linux: Scripts/check-darwin.sh.
// Signatures only; nothing here runs.

@_exported import Combine

public protocol DynamicProperty {}

@MainActor @frozen @propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { fatalError("stub") }
    public var wrappedValue: ObjectType { fatalError("stub") }
}

@frozen @propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) { fatalError("stub") }
    public var wrappedValue: Value {
        get { fatalError("stub") }
        nonmutating set { fatalError("stub") }
    }
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> { fatalError("stub") }
}
