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
        .executableTarget(
            name: "FuzzArguments", dependencies: [.product(name: "CacheToolCore", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzRecords", dependencies: [.product(name: "MediaStore", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzChunks", dependencies: [.product(name: "MediaStore", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzHTTP", dependencies: [.product(name: "MediaStreaming", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzPlaybackPrefix", dependencies: [.product(name: "MediaStreaming", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzStoreFile", dependencies: [.product(name: "MediaStore", package: "MediaCache")]),
        .executableTarget(
            name: "FuzzServerRequest", dependencies: [.product(name: "MediaServer", package: "MediaCache")]),
    ],
    swiftLanguageModes: [.v6]
)
