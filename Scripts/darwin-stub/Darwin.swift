// The declarations of Darwin the package uses that glibc lacks, over glibc's own (which
// stand in for Darwin's POSIX functions): enough for the library's Darwin branches to
// type-check on Linux (Scripts/check-darwin.sh). Signatures follow Apple's SDK; nothing
// here runs.

@_exported import Glibc

@discardableResult public func pthread_get_stackaddr_np(_ thread: pthread_t) -> UnsafeMutableRawPointer { fatalError("stub") }
@discardableResult public func pthread_get_stacksize_np(_ thread: pthread_t) -> Int { fatalError("stub") }
