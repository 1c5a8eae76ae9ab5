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
        .executable(name: "defaults-coder-demo", targets: ["defaults-coder-demo"]),
    ],
    targets: [
        .target(
            name: "DefaultsCoder",
            // The privacy manifest an app shipping the package needs (UserDefaults is a
            // required-reason API).
            resources: [.copy("PrivacyInfo.xcprivacy")],
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
            dependencies: ["DefaultsCoder", "defaults-coder-probe"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
