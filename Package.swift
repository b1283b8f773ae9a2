// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MediaCache",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "MediaStore", targets: ["MediaStore"]),
        .library(name: "MediaCache", targets: ["MediaCache"]),
        .library(name: "MediaStreaming", targets: ["MediaStreaming"]),
        .executable(name: "mediacache-demo", targets: ["mediacache-demo"]),
        .executable(name: "mediacache-bench", targets: ["mediacache-bench"]),
        .executable(name: "cachetool", targets: ["cachetool"]),
        .library(name: "CacheToolCore", targets: ["CacheToolCore"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]
        ),
        .target(
            name: "MediaStore",
            dependencies: ["CLMDB", "CZstd", "CXXHash"]
        ),
        .target(
            name: "MediaCache",
            dependencies: ["MediaStore"]
        ),
        .target(
            name: "MediaStreaming",
            dependencies: ["MediaStore"]
        ),
        .target(
            name: "LoopbackNginx"
        ),
        .executableTarget(
            name: "mediacache-demo",
            dependencies: ["MediaStore", "MediaStreaming", "LoopbackNginx"],
            path: "Sources/MediaCacheDemo"
        ),
        .executableTarget(
            name: "mediacache-bench",
            dependencies: ["MediaStore", "MediaCache", "MediaStreaming", "CLMDB", "LoopbackNginx"],
            path: "Sources/MediaCacheBench"
        ),
        .target(
            name: "CacheToolCore",
            dependencies: ["MediaStore"]
        ),
        .executableTarget(
            name: "cachetool",
            dependencies: ["CacheToolCore"]
        ),
        .executableTarget(
            name: "crash-writer",
            dependencies: ["MediaStore"],
            path: "Tests/CrashWriter"
        ),
        .testTarget(
            name: "MediaStoreTests",
            dependencies: ["MediaStore"]
        ),
        .testTarget(
            name: "MediaCacheTests",
            dependencies: ["MediaCache", "MediaStore"]
        ),
        .testTarget(
            name: "CacheToolTests",
            dependencies: ["CacheToolCore", "MediaStore", "MediaStreaming"],
            exclude: ["Fuzz"]
        ),
        .testTarget(
            name: "MediaStreamingTests",
            dependencies: ["MediaStreaming", "MediaStore", "LoopbackNginx"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

#if os(Linux)
    // The AVFoundation glue (Sources/MediaStreaming/AVFoundation) compiled
    // and tested on Linux against an API stand-in of AVFoundation: the
    // stand-in module is named AVFoundation, exists only here (never in an
    // Apple build) and only this test-support target and its tests depend
    // on it, so no user of the MediaStreaming product gets it. The check
    // target's sources are symlinks to the glue's files; AVFOUNDATION_STAND_IN
    // switches them on there (MediaStreaming itself never compiles them on Linux).
    package.targets += [
        .target(name: "AVFoundation", path: "Tests/AVFoundationStandIn"),
        .target(
            name: "MediaStreamingAVFoundationGlue",
            dependencies: ["MediaStreaming", "AVFoundation"],
            path: "Tests/AVFoundationGlue",
            swiftSettings: [.define("AVFOUNDATION_STAND_IN")]
        ),
        .testTarget(
            name: "AVFoundationGlueTests",
            dependencies: ["MediaStreamingAVFoundationGlue", "AVFoundation", "MediaStreaming", "MediaStore", "LoopbackNginx"]
        ),
    ]
#endif
