// Deep values and values that encode themselves, on the 512 KiB stack that Apple
// platforms give secondary threads: the coders throw with the path, never crash.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import KeyValueCoders

/// Runs `body` on a new thread with a stack of `size` bytes, and awaits it.
func onThread<R: Sendable>(stackSize size: Int, _ body: @escaping @Sendable () -> R) async -> R {
    try! await offPool(stackSize: size) { body() }
}

/// What an encode or decode on a small stack came to: a value, or the error's message.
enum Outcome: Sendable, Equatable {
    case value
    case error(String)
}

@Suite("NestingGuard")
struct NestingGuardTests {
    static let smallStack = 512 * 1024

    static func outcome(_ body: () throws -> Any?) -> Outcome {
        do {
            _ = try body()
            return .value
        } catch {
            return .error(codingErrorContext(of: error)?.debugDescription ?? "\(error)")
        }
    }

    @Test("encoding deep values on a 512 KiB thread throws or succeeds, and never crashes", arguments: [100, 300, 510, 2_000])
    func deepEncode(levels: Int) async {
        // Made and released on this thread: releasing a value this deep recurses too,
        // and that is the runtime's, not the coder's. (A value the thread's closure
        // captured would be released when the thread ends, on its small stack.)
        let input = Locked<JSONValue?>(JSONValue.nested(levels))
        defer { input.withLock { $0 = nil } }
        let outcome = await onThread(stackSize: Self.smallStack) {
            let value = input.withLock { $0! }
            return Self.outcome { try KeyValueEncoder().encode(value) }
        }
        switch outcome {
        case .value: #expect(levels <= NestingGuard.maximumContainers)
        case .error(let message):
            #expect(message.hasPrefix("Nesting too deep for the stack") || message.hasPrefix("Nesting deeper than 512 levels"), "\(message.prefix(80))")
        }
    }

    @Test("decoding deep trees on a 512 KiB thread throws or succeeds, and never crashes", arguments: [100, 300, 510, 2_000])
    func deepDecode(levels: Int) async {
        let input = Locked<SendableAny?>(SendableAny((0..<levels).reduce("x" as Any) { inner, _ in [inner] }))
        defer { input.withLock { $0 = nil } }
        let outcome = await onThread(stackSize: Self.smallStack) {
            let tree = input.withLock { $0! }
            return Self.outcome { try KeyValueDecoder().decode(StrictNest.self, from: tree.value) }
        }
        switch outcome {
        case .value: #expect(levels <= NestingGuard.maximumContainers)
        case .error(let message):
            #expect(message.hasPrefix("Nesting too deep for the stack") || message.hasPrefix("Nesting deeper than 512 levels"), "\(message.prefix(80))")
        }
    }

    @Test("storing a deep value on a 512 KiB thread throws with its path before anything is written")
    func deepStore() async {
        let suite = TestSuite()
        let defaults = suite.defaults
        let input = Locked<JSONValue?>(JSONValue.nested(510))
        defer { input.withLock { $0 = nil } }
        let outcome = await onThread(stackSize: Self.smallStack) {
            let value = input.withLock { $0! }
            return Self.outcome { try suite.defaults.encode(value, forKey: "deep") }
        }
        if case .error(let message) = outcome {
            #expect(message.hasPrefix("Nesting too deep for the stack"))
            #expect(defaults.object(forKey: "deep") == nil)
        }
    }

    @Test("a reference cycle throws, as nesting past the limit on a stack of the main thread's size, and on a 512 KiB one", arguments: [0, 512 * 1024])
    func cycle(stackSize: Int) async {
        let outcome = await onThread(stackSize: stackSize == 0 ? 8 << 20 : stackSize) {
            let cyclic = Cyclic()
            cyclic.next = cyclic
            defer { cyclic.next = nil }
            return Self.outcome { try KeyValueEncoder().encode(cyclic) }
        }
        guard case .error(let message) = outcome else {
            Issue.record("a cycle encoded")
            return
        }
        if stackSize == 0 {
            // A stack of the main thread's size reaches the nesting limit first: a cycle
            // is reported as nesting, 512 levels deep, not as the stack's end.
            #expect(message.hasPrefix("Nesting deeper than 512 levels"), "\(message.prefix(80))")
            #expect(message.hasSuffix("(512 deep)"), "\(message.suffix(80))")
        } else {
            #expect(message.hasPrefix("Nesting deeper than 512 levels") || message.hasPrefix("Nesting too deep for the stack"), "\(message.prefix(80))")
        }
        // The path is bounded: its first and last steps and its depth.
        #expect(message.count < 200, "\(message.prefix(300))")
        #expect(message.hasSuffix(" deep)"), "\(message.suffix(80))")
    }

    @Test("a value that encodes or decodes itself throws instead of recursing until the stack ends", arguments: [0, 512 * 1024])
    func selfEncoding(stackSize: Int) async {
        let size = stackSize == 0 ? 8 << 20 : stackSize
        let encoded = await onThread(stackSize: size) { Self.outcome { try KeyValueEncoder().encode(SelfEncoding()) } }
        let decoded = await onThread(stackSize: size) { Self.outcome { try KeyValueDecoder().decode(SelfEncoding.self, from: 1) } }
        for outcome in [encoded, decoded] {
            guard case .error(let message) = outcome else {
                Issue.record("self-recursion came back with a value")
                continue
            }
            #expect(message.hasPrefix("Nesting too deep for the stack") || message.hasPrefix("Recursion deeper than 4096 levels"), "\(message.prefix(80))")
        }
    }

    @Test("the stack bounds are known on this platform, and the guard reads them")
    func bounds() throws {
        #if canImport(Darwin) || canImport(Glibc)
        let bounds = try #require(ThreadStack.bounds())
        #expect(bounds.size >= 64 * 1024)
        var local = 0
        let here = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
        #expect(here > bounds.lowest && here < bounds.lowest + bounds.size)
        #expect(!ThreadStack.isNearlyExhausted())
        #endif
    }
}
