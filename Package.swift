// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MediaCache",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "MediaStore", targets: ["MediaStore"]),
        .library(name: "MediaCache", targets: ["MediaCache"]),
        .library(name: "MediaStreaming", targets: ["MediaStreaming"]),
        .library(name: "MediaServer", targets: ["MediaServer"]),
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
            name: "MediaServer",
            dependencies: ["MediaStreaming", "MediaStore"]
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
            dependencies: ["MediaStore", "MediaCache", "MediaStreaming", "MediaServer", "CLMDB", "LoopbackNginx"],
            path: "Sources/MediaCacheBench"
        ),
        .target(
            name: "CacheToolCore",
            dependencies: ["MediaStore", "MediaStreaming", "MediaServer"]
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
            dependencies: ["CacheToolCore", "MediaStore", "MediaStreaming", "MediaServer"],
            exclude: ["Fuzz"]
        ),
        .testTarget(
            name: "MediaStreamingTests",
            dependencies: ["MediaStreaming", "MediaStore", "LoopbackNginx"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "MediaServerTests",
            dependencies: ["MediaServer", "MediaStreaming", "MediaStore", "LoopbackNginx"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
