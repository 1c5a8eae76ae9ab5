// The floor of a crash-safe write: the same bytes written to a suite's directory by the
// bare system calls of an atomic replace (a new file, renamed over the old one) and of
// Foundation's in-place rewrite (truncate, write, read back to check). No property list
// work on either side: what the package's write cannot go below on this file system.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FileFloor {
    /// Writes `bytes` to `path` as the package does: a new file next to it, renamed over it.
    static func replace(_ bytes: [UInt8], at path: String) {
        let temporary = path + ".floor-new"
        let descriptor = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { fatalError("open \(temporary): \(errno)") }
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard rename(temporary, path) == 0 else { fatalError("rename: \(errno)") }
    }

    /// Writes `bytes` to `path` as Foundation's `synchronize()` does on Linux: truncate,
    /// write, then read the file back to compare.
    static func rewrite(_ bytes: [UInt8], at path: String) {
        let descriptor = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { fatalError("open \(path): \(errno)") }
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        var back = [UInt8](repeating: 0, count: bytes.count)
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        _ = back.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
        close(reader)
    }
}
