// swift-tools-version:6.0
import PackageDescription

// The libFuzzer harnesses of every decoder that reads bytes from the network: one executable per decoder, each
// a single file that defines `LLVMFuzzerTestOneInput` and no `main` (libFuzzer's runtime brings it). Build and
// run them with `scripts/fuzz`; by hand, build with
//
//     swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
//
// (the last flag because swiftc keeps only the last `-sanitize=`, and SwiftPM passes one per `--sanitize`). A
// plain `swift build` fails at the link, for want of a `main`.

/// The harnesses by name: `fuzz-<name>` is the executable, `Corpus/<name>/` its seed corpus.
let harnesses = [
    "cbor", "document", "frame", "gossip", "negentropy", "datagram", "handshake", "service-txt", "manifest",
]

/// The same upcoming features as the main package's targets.
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// SwiftPM names a local dependency after its folder, so the main package is known by whatever its checkout is
/// called.
let mainPackage = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "dongne"

let package = Package(
    name: "dongne-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", swiftSettings: sharedSwiftSettings)
    ]
        + harnesses.map { name in
            .executableTarget(
                name: "fuzz-\(name)",
                dependencies: ["FuzzSupport", .product(name: "DongneCore", package: mainPackage)],
                // No main: the file is a library's, and libFuzzer calls its entry point.
                swiftSettings: sharedSwiftSettings + [.unsafeFlags(["-parse-as-library"])])
        }
)
