// libnotify (`notify.h`) as Apple's SDK declares the functions the package calls, for
// Scripts/check-darwin.sh; discardable, as Swift imports C functions. Nothing here runs.

import Dispatch

public let NOTIFY_STATUS_OK: UInt32 = 0
public typealias notify_handler_t = (Int32) -> Void

@discardableResult public func notify_register_dispatch(
    _ name: UnsafePointer<CChar>, _ out_token: UnsafeMutablePointer<Int32>, _ queue: DispatchQueue, _ handler: @escaping notify_handler_t
) -> UInt32 { fatalError("stub") }
@discardableResult public func notify_post(_ name: UnsafePointer<CChar>) -> UInt32 { fatalError("stub") }
@discardableResult public func notify_cancel(_ token: Int32) -> UInt32 { fatalError("stub") }
