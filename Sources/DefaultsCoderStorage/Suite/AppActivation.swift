// When the app becomes active again. Key-value observing may not deliver changes made
// while the app was suspended, and iCloud's store may have news: what observes a suite
// reads it again then. The notifications are named by their values, so that the package
// links no UIKit, AppKit or WatchKit, and a test can post them anywhere.

import Foundation
import KeyValueCoders

/// The app's return to the foreground.
package enum AppActivation {
    /// The notifications Apple's frameworks post when the app becomes active: UIKit's
    /// (iOS, iPadOS, tvOS, visionOS, Mac Catalyst), an app extension's host's, WatchKit's
    /// and AppKit's.
    static let notifications: [Notification.Name] = [
        Notification.Name("UIApplicationDidBecomeActiveNotification"),
        Notification.Name("NSExtensionHostDidBecomeActiveNotification"),
        Notification.Name("WKApplicationDidBecomeActiveNotification"),
        Notification.Name("NSApplicationDidBecomeActiveNotification"),
    ]

    /// Calls `action` on a queue of the package's each time the app becomes active, until
    /// the returned observation is cancelled or released.
    ///
    /// - Parameter center: Where the notifications are posted: `center` (the default
    ///   center unless a test chose another on this task).
    package static func observe(in center: NotificationCenter = AppActivation.center, _ action: @escaping @Sendable () -> Void) -> Observation {
        let tokens = notifications.map { name in
            // Posted on the main thread: the work goes to a queue of the package's.
            center.addObserver(forName: name, object: nil, queue: nil) { _ in
                DispatchQueue.global().async(execute: action)
            }
        }
        return Observation(tokens, center: center)
    }

    /// Where the notifications are heard: the default center, or one a test set on this
    /// task, so that its posts reach only what it started.
    @TaskLocal static var center = NotificationCenter.default

    /// The observers `observe(_:)` added.
    package final class Observation: @unchecked Sendable {
        // Unchecked: the tokens are handed to `removeObserver(_:)` once, under the lock;
        // `NotificationCenter` is thread-safe but not marked `Sendable` in every SDK.
        private let tokens: Locked<[any NSObjectProtocol]>
        private let center: NotificationCenter

        fileprivate init(_ tokens: [any NSObjectProtocol], center: NotificationCenter) {
            self.tokens = Locked(tokens)
            self.center = center
        }

        /// Stops the calls.
        package func cancel() {
            let tokens = tokens.withLock { tokens in
                defer { tokens = [] }
                return tokens
            }
            for token in tokens { center.removeObserver(token) }
        }

        deinit { cancel() }
    }
}
