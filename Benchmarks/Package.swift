// swift-tools-version: 6.1
// Benchmarks live in their own package so that DefaultsCoder itself keeps no dependencies.
import PackageDescription

let package = Package(
    name: "DefaultsCoderBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "DefaultsCoder", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoderBenchmarks",
            dependencies: [
                .product(name: "DefaultsCoder", package: "DefaultsCoder"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/CoderBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "package-benchmark"),
            ]
        ),
        // One workload N times, for callgrind's instruction counts (instructions.sh).
        .executableTarget(
            name: "InstructionCounts",
            dependencies: [.product(name: "DefaultsCoder", package: "DefaultsCoder")],
            path: "Instructions"
        ),
    ]
)
