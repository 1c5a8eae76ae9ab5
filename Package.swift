// swift-tools-version: 6.2
// Swift 6.0 and 6.1 read Package@swift-6.0.swift: the library without the traits.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "DefaultsCoder",
    platforms: [
        .macOS(.v13), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1),
    ],
    products: [
        // The coders, suites, typed keys, the wrapper, observation and migrations: one
        // `import DefaultsCoder` (it re-exports the layers below it).
        .library(name: "DefaultsCoder", targets: ["DefaultsCoder"]),
        // Sync of chosen keys through iCloud's key-value store.
        .library(name: "DefaultsCoderSync", targets: ["DefaultsCoderSync"]),
        // Test doubles for an app's tests: a simulated iCloud key-value store.
        .library(name: "DefaultsCoderTesting", targets: ["DefaultsCoderTesting"]),
        // A swift-configuration provider over a suite: empty unless the
        // `SwiftConfiguration` trait is enabled.
        .library(name: "DefaultsCoderConfiguration", targets: ["DefaultsCoderConfiguration"]),
        .executable(name: "defaults-coder-demo", targets: ["defaults-coder-demo"]),
    ],
    // Off by default: a package that enables neither fetches and links nothing but this
    // package (SwiftPM prunes the dependencies only a disabled trait uses).
    traits: [
        .trait(
            name: "SwiftConfiguration",
            description: "DefaultsCoderConfiguration: a ConfigProvider of apple/swift-configuration over a suite."
        ),
        .trait(
            name: "OpenCombine",
            description: "On Linux, the Combine publishers through OpenCombine (Apple platforms use Combine either way)."
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    // The layers, each a module that imports only the ones below it:
    // KeyValueCoders → DefaultsCoderStorage → DefaultsCoder → DefaultsCoderSync.
    targets: [
        // The coders: Codable ⇄ plist-native trees. They name no suite.
        .target(name: "KeyValueCoders", swiftSettings: swiftSettings),
        // The stored form, and suites: what is written, how, and who hears it.
        .target(
            name: "DefaultsCoderStorage",
            dependencies: ["KeyValueCoders"],
            // The privacy manifest an app shipping the package needs (UserDefaults is a
            // required-reason API).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        // Typed keys, the wrapper, observation, migrations; re-exports the layers below.
        .target(
            name: "DefaultsCoder",
            dependencies: ["KeyValueCoders", "DefaultsCoderStorage", openCombine],
            swiftSettings: swiftSettings
        ),
        .target(name: "DefaultsCoderSync", dependencies: ["DefaultsCoder"], swiftSettings: swiftSettings),
        .target(name: "DefaultsCoderTesting", dependencies: ["DefaultsCoderSync"], swiftSettings: swiftSettings),
        .target(
            name: "DefaultsCoderConfiguration",
            dependencies: [
                "DefaultsCoder",
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["SwiftConfiguration"])),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "defaults-coder-demo",
            dependencies: ["DefaultsCoder"],
            swiftSettings: swiftSettings
        ),
        // A second process for the tests: reads and writes suites as a fresh process does.
        .executableTarget(
            name: "defaults-coder-probe",
            dependencies: ["DefaultsCoder"],
            path: "Tests/Probe",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DefaultsCoderTests",
            dependencies: [
                "KeyValueCoders", "DefaultsCoderStorage", "DefaultsCoder", "DefaultsCoderSync", "DefaultsCoderTesting",
                "DefaultsCoderConfiguration", "defaults-coder-probe", openCombine,
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["SwiftConfiguration"])),
                .product(name: "ConfigurationTesting", package: "swift-configuration", condition: .when(traits: ["SwiftConfiguration"])),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// OpenCombine, where Combine is missing and the trait asks for it.
var openCombine: Target.Dependency {
    .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["OpenCombine"]))
}
