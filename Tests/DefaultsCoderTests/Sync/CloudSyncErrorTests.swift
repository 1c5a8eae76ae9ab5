// Every sync error's message, exactly, as the failure handler shows it.

import Foundation
import Testing

@testable import DefaultsCoder
@testable import DefaultsCoderStorage
@testable import DefaultsCoderSync
@testable import KeyValueCoders

@Suite("CloudSyncError")
struct CloudSyncErrorTests {

    @Test(
        "each problem's message",
        arguments: [
            (
                CloudSyncError.Problem.valueTooLarge(bytes: 1_100_023, limit: 1_048_576),
                "iCloud sync of \"k\" held back: the value takes 1,100,023 bytes, over the 1,048,576 a value may take; it stays on this device"
            ),
            (.tooManyKeys(limit: 1024), "iCloud sync of \"k\" held back: the store already holds its 1,024 keys; it stays on this device"),
            (.storeFull(bytes: 2_000_000, limit: 1_048_576), "iCloud sync of \"k\" held back: the store would hold 2,000,000 bytes, over its 1,048,576; it stays on this device"),
            (.quotaViolation, "iCloud sync of \"k\" held back: iCloud reported the app's storage over its quota; it stays on this device"),
            (.keyTooLong(bytes: 70, limit: 64), "iCloud sync of \"k\" refused: the name takes 70 bytes of UTF-8, over the 64 iCloud allows"),
            (.reservedKey, "iCloud sync of \"k\" refused: the key holds the package's own record"),
            (.unstorableRemoteValue, "iCloud sync of \"k\" skipped the value from iCloud: the suite cannot keep it (not a property list, or nested too deep)"),
            (.suite("the file is gone"), "iCloud sync of \"k\" stopped for now: the file is gone"),
        ])
    func messages(problem: CloudSyncError.Problem, message: String) {
        let error = CloudSyncError(key: "k", problem: problem)
        #expect(error.description == message)
        #expect(DefaultsFailure(key: "k", operation: .write, error: error).description == "DefaultsCoder: " + message)
    }

    @Test("an error of no one key names none")
    func noKey() {
        #expect(CloudSyncError(key: nil, problem: .suiteAlreadySynced).description == "iCloud sync not started: another CloudSync already syncs this suite in this process")
        #expect(CloudSyncError(key: nil, problem: .tooManyKeys(limit: 7)).description == "iCloud sync held back: the store already holds its 7 keys; it stays on this device")
    }
}
