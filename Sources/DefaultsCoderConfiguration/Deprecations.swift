// Names the provider had before, forwarding to the current ones.

#if SwiftConfiguration
import Configuration

/// The provider's former name: it clashes with swift-configuration's own
/// `UserDefaultsProvider` in a file that imports both modules.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@available(*, deprecated, renamed: "DefaultsSuiteProvider")
public typealias UserDefaultsProvider = DefaultsSuiteProvider
#endif
