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
        .library(name: "DefaultsCoder", targets: ["DefaultsCoder"]),
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
    targets: [
        .target(
            name: "DefaultsCoder",
            dependencies: [openCombine],
            // The privacy manifest an app shipping the package needs (UserDefaults is a
            // required-reason API).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
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
                "DefaultsCoder", "DefaultsCoderConfiguration", "defaults-coder-probe", openCombine,
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
