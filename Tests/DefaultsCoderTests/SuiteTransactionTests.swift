//
//  SuiteTransactionTests.swift
//  DefaultsCoderTests
//
//  The transaction under migrations, on its own: reads see the changes made so far, a
//  body that throws writes nothing, and what was written is what a new process reads.
//

import Foundation
import Testing

@testable import DefaultsCoder

@Suite("SuiteTransaction")
struct SuiteTransactionTests {

    struct Stop: Error {}

    @Test("reads see earlier changes; removing a key that holds nothing records no change")
    func readsSeeChanges() throws {
        let suite = TestSuite()
        suite.defaults.set("a", forKey: "x")
        let keys = try SuiteTransaction.run(on: suite.defaults, targets: []) { suites -> [String] in
            #expect(suites.value(forKey: "x", in: nil) as? String == "a")
            suites.set("b", forKey: "x", in: nil)
            #expect(suites.value(forKey: "x", in: nil) as? String == "b")
            suites.remove("x", in: nil)
            #expect(suites.value(forKey: "x", in: nil) == nil)
            suites.remove("never", in: nil)
            return suites.changedKeys(in: nil)
        }
        #expect(keys == ["x"])
        #expect(suite.defaults.object(forKey: "x") == nil)
    }

    @Test("a body that throws writes nothing, in any suite")
    func throwingBody() throws {
        let suite = TestSuite()
        let other = TestSuite("other")
        suite.defaults.set(1, forKey: "kept")
        suite.defaults.synchronize()
        let before = try Data(contentsOf: suite.fileURL)
        #expect(throws: Stop.self) {
            try SuiteTransaction.run(on: suite.defaults, targets: [other.name]) { suites in
                suites.set(2, forKey: "kept", in: nil)
                suites.set(3, forKey: "moved", in: other.name)
                throw Stop()
            }
        }
        #expect(try Data(contentsOf: suite.fileURL) == before)
        #expect(!FileManager.default.fileExists(atPath: other.fileURL.path))
        #expect(other.defaults.object(forKey: "moved") == nil)
    }

    @Test("values set without synchronize() before the transaction are kept; both suites are written")
    func unsynchronizedValuesKept() async throws {
        let suite = TestSuite()
        let other = TestSuite("other")
        suite.defaults.set("pending", forKey: "unsynchronized")
        try SuiteTransaction.run(on: suite.defaults, targets: [other.name]) { suites in
            suites.set(1, forKey: "a", in: nil)
            suites.set(2, forKey: "b", in: other.name)
        }
        let read = try await SecondProcess.read(suite)
        #expect(read["unsynchronized"] as? String == "pending")
        #expect(read["a"] as? Int == 1)
        #expect(try await SecondProcess.read(other)["b"] as? Int == 2)
        #expect(suite.defaults.integer(forKey: "a") == 1)
        #expect(other.defaults.integer(forKey: "b") == 2)
    }

    @Test("a suite left with no values has no file, as Foundation leaves it")
    func emptySuite() throws {
        let suite = TestSuite()
        suite.defaults.set(1, forKey: "only")
        suite.defaults.synchronize()
        #expect(FileManager.default.fileExists(atPath: suite.fileURL.path))
        try SuiteTransaction.run(on: suite.defaults, targets: []) { $0.remove("only", in: nil) }
        #expect(!FileManager.default.fileExists(atPath: suite.fileURL.path))
        #expect(suite.defaults.object(forKey: "only") == nil)
    }
}
