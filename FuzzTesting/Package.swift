// swift-tools-version:6.0
// libFuzzer targets for MediaCache, in their own package so that the
// root package builds without the fuzzer runtime. Build them in their own
// folder (an instrumented build must never share one with a normal build):
//
//   swift build --package-path FuzzTesting --scratch-path .build-fuzz -c release \
//       --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
//       -Xswiftc -parse-as-library
//
// Both spellings are needed on Linux with Swift 6.3: SwiftPM's --sanitize=fuzzer
// stops it renaming the executables' `main` (libFuzzer provides it), and
// -Xswiftc -sanitize=fuzzer,address makes the compiler instrument the code
// (without it libFuzzer warns "Is the code instrumented for coverage?").
// or run Tools/fuzz. `MediaCache` is a symlink to the repository root, so
// the dependency's identity does not depend on the checkout's folder name.
import PackageDescription

let package = Package(
    name: "MediaCacheFuzz",
    dependencies: [.package(path: "MediaCache")],
    targets: [
        // The entry points, shared with the replay tests (the root package's
        // FuzzSupport target, same folder). They reach MediaStore's `package`
        // internals, so they are compiled as part of that package: its
        // identity is "mediacache" (the `MediaCache` symlink's name), and
        // `packageAccess: false` stops SwiftPM passing this package's own
        // `-package-name`.
        .target(
            name: "FuzzEntryPoints",
            dependencies: [
                .product(name: "HLSPlaylist", package: "MediaCache"),
                .product(name: "MediaStore", package: "MediaCache"),
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaDownloads", package: "MediaCache"),
                .product(name: "MediaServer", package: "MediaCache"),
                .product(name: "CacheToolCore", package: "MediaCache"),
            ],
            path: "MediaCache/Tests/FuzzSupport",
            packageAccess: false,
            swiftSettings: [.unsafeFlags(["-package-name", "mediacache"])]),
        .executableTarget(name: "FuzzArguments", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzRecords", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzChunks", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzKeyFile", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzHTTP", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzPlaybackPrefix", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzPlaylist", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzStoreFile", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzServerRequest", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzImportManifest", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzRange", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzHost", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzTransferResponse", dependencies: ["FuzzEntryPoints"]),
        .executableTarget(name: "FuzzRekeyRow", dependencies: ["FuzzEntryPoints"]),
    ],
    swiftLanguageModes: [.v6]
)
