// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode with strict concurrency comes from the tools
/// version; these add the upcoming features the codebase is written against.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "dongne",
    products: [
        .library(name: "Dongne", targets: ["Dongne"]),
        // The protocol alone (documents, sessions, the pure cores): what the fuzz harnesses in Fuzz/ build on.
        .library(name: "DongneCore", targets: ["DongneCore"]),
        .executable(name: "dongne", targets: ["dongne"]),
        .executable(name: "dongne-bench", targets: ["dongne-bench"]),
        .executable(name: "change-feed", targets: ["change-feed"]),
    ],
    targets: [
        // C libraries from Debian's packages: a module map and one shim header each, nothing else.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CDNSSD", pkgConfig: "avahi-compat-libdns_sd",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]),
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CChafa", pkgConfig: "chafa", providers: [.apt(["libchafa-dev"])]),
        // The C library and the kernel: system calls glibc does not wrap (no library to link).
        .systemLibrary(name: "CSystem"),

        .target(name: "DongneCore", dependencies: ["CSodium"]),
        // The kernel, for everything above it: the event loop, system calls and errno, threads, locks.
        .target(name: "DongneSystem", dependencies: ["CSystem"]),
        .target(name: "DongneStore", dependencies: ["DongneCore", "DongneSystem", "CSQLite", "CSystem"]),
        .target(name: "DongneNet", dependencies: ["DongneCore", "DongneSystem", "CDNSSD", "CSystem"]),
        // Photos: reading, turning upright, stripping and thumbnailing with libvips; drawing with libchafa.
        .target(name: "DongneImages", dependencies: ["DongneCore", "CVips", "CChafa"]),
        // Where a point is: Korea's administrative borders (korea-regions/, shipped with the module), looked up offline.
        .target(name: "DongneRegions", resources: [.copy("korea-regions")]),
        .target(
            name: "Dongne",
            dependencies: ["DongneCore", "DongneSystem", "DongneStore", "DongneNet", "DongneImages", "DongneRegions"]),
        .executableTarget(
            name: "dongne",
            dependencies: ["Dongne", "DongneCore", "DongneSystem", "DongneStore", "DongneNet", "DongneImages"]),

        // Tools: the protocol's test vectors, the benchmarks, and the crash-safety probe the store tests drive.
        .target(name: "DongneVectors", dependencies: ["DongneCore"]),
        .target(name: "DongneSimulation", dependencies: ["DongneCore"]),
        .executableTarget(name: "dongne-vectors", dependencies: ["DongneVectors"]),
        .executableTarget(
            name: "dongne-bench",
            dependencies: [
                "Dongne", "DongneCore", "DongneSystem", "DongneStore", "DongneNet", "DongneSimulation", "DongneRegions",
                "CSodium",
            ]),
        .executableTarget(name: "dongne-ingest-probe", dependencies: ["DongneCore", "DongneStore"]),

        // Small programs built on the public library only.
        .executableTarget(name: "change-feed", dependencies: ["Dongne"], path: "examples/change-feed"),

        // Test helpers both test targets share.
        .target(name: "DongneTestSupport", path: "Tests/DongneTestSupport"),
        .testTarget(
            name: "DongneCoreTests", dependencies: ["DongneCore", "DongneVectors", "DongneSimulation"],
            exclude: ["NoiseVectors"]),
        .testTarget(name: "DongneRegionsTests", dependencies: ["DongneRegions"]),
        .testTarget(
            name: "DongneStoreTests",
            dependencies: [
                "CSQLite", "DongneCore", "DongneStore", "DongneSystem", "DongneTestSupport", "dongne-ingest-probe",
            ]),
        .testTarget(
            name: "DongneTests",
            dependencies: [
                "Dongne", "DongneNet", "DongneSystem", "DongneImages", "DongneTestSupport", "dongne", "change-feed",
            ],
            exclude: ["Transcripts"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}
