// swift-tools-version: 6.0
// The manifest for Swift 6.0 and 6.1, which have no package traits: the library alone,
// as before the traits. Swift 6.2 and later read Package.swift.
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
        .library(name: "DefaultsCoderSync", targets: ["DefaultsCoderSync"]),
        .library(name: "DefaultsCoderTesting", targets: ["DefaultsCoderTesting"]),
        .executable(name: "defaults-coder-demo", targets: ["defaults-coder-demo"]),
    ],
    // The layers, as in Package.swift.
    targets: [
        .target(name: "KeyValueCoders", swiftSettings: swiftSettings),
        .target(
            name: "DefaultsCoderStorage",
            dependencies: ["KeyValueCoders"],
            // The privacy manifest an app shipping the package needs (UserDefaults is a
            // required-reason API).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        .target(name: "DefaultsCoder", dependencies: ["KeyValueCoders", "DefaultsCoderStorage"], swiftSettings: swiftSettings),
        .target(name: "DefaultsCoderSync", dependencies: ["DefaultsCoder"], swiftSettings: swiftSettings),
        .target(name: "DefaultsCoderTesting", dependencies: ["DefaultsCoderSync"], swiftSettings: swiftSettings),
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
                "defaults-coder-probe",
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
