// The Objective-C runtime functions the package calls, as Apple's SDK declares them, for
// Scripts/check-darwin.sh; discardable, as Swift imports C functions. Nothing here runs.

public typealias Ivar = OpaquePointer

@discardableResult public func class_getInstanceVariable(_ cls: AnyClass?, _ name: UnsafePointer<CChar>) -> Ivar? { fatalError("stub") }
@discardableResult public func ivar_getTypeEncoding(_ v: Ivar) -> UnsafePointer<CChar>? { fatalError("stub") }
@discardableResult public func ivar_getOffset(_ v: Ivar) -> Int { fatalError("stub") }
