// swift-tools-version:6.0
import PackageDescription

// MARK: The C libraries: LMDB, zstd, xxHash
//
// Linux: the system libraries through pkg-config (Tools/bootstrap installs
// liblmdb-dev, libzstd-dev, libxxhash-dev). Apple platforms: built from
// source for every Apple platform (an iOS device has none of the three,
// and Homebrew's are macOS-only), each from a SwiftPM package required by
// version, none with unsafe flags, so that an app can require MediaCache
// by version: LMDB from tannerdsilva/CLMDB, zstd from facebook/zstd,
// xxHash from Jaesung-Jung/XXHashKit (the package SwiftXXHash; our shims
// over it in Sources/XXHash make the module CXXHash). Module names: CLMDB and CXXHash on both;
// zstd is CZstd on Linux, libzstd on Apple platforms.
// MEDIACACHE_APPLE_DEPENDENCIES=1 takes the Apple branch on Linux too
// (Tools/check-apple-manifest). See MediaStore.docc/ApplePlatforms.md
// for the versions and why.
#if os(Linux)
    let appleDependencies = Context.environment["MEDIACACHE_APPLE_DEPENDENCIES"] == "1"
#else
    let appleDependencies = true
#endif

let cPackages: [Package.Dependency]
let cTargets: [Target]
let lmdb: Target.Dependency
let zstd: Target.Dependency
let xxhash: Target.Dependency = "CXXHash"
if appleDependencies {
    // Each tag checked upstream (MediaStore.docc/ApplePlatforms.md).
    cPackages = [
        .package(url: "https://github.com/tannerdsilva/CLMDB.git", from: "0.9.31"),
        .package(url: "https://github.com/facebook/zstd.git", from: "1.5.6"),
        .package(url: "https://github.com/Jaesung-Jung/XXHashKit.git", from: "1.0.0"),
    ]
    cTargets = [
        .target(
            name: "CXXHash", dependencies: [.product(name: "XXHash", package: "XXHashKit")],
            path: "Sources/XXHash")
    ]
    lmdb = .product(name: "CLMDB", package: "CLMDB")
    zstd = .product(name: "libzstd", package: "zstd")
} else {
    cPackages = []
    cTargets = [
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),
        .systemLibrary(
            name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]),
    ]
    lmdb = "CLMDB"
    zstd = "CZstd"
}

// MARK: Cryptography (encryption at rest)
//
// Apple platforms: CryptoKit, a system framework (nothing to declare).
// Linux: OpenSSL's libcrypto through pkg-config (Tools/bootstrap installs
// libssl-dev); MediaStore/Crypto/CryptoBackend.swift says why this library.
// It follows the host, not `appleDependencies`: Linux has no CryptoKit,
// so the Apple branch checked on Linux (Tools/check-apple-manifest) needs
// libcrypto too, and a build on a Mac never declares it.
#if os(Linux)
    let cryptoTargets: [Target] = [
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])])
    ]
    let crypto: [Target.Dependency] = ["CCrypto"]
#else
    let cryptoTargets: [Target] = []
    let crypto: [Target.Dependency] = []
#endif

let package = Package(
    name: "MediaCache",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "MediaStore", targets: ["MediaStore"]),
        .library(name: "MediaCache", targets: ["MediaCache"]),
        .library(name: "HLSPlaylist", targets: ["HLSPlaylist"]),
        .library(name: "MediaStreaming", targets: ["MediaStreaming"]),
        .library(name: "MediaDownloads", targets: ["MediaDownloads"]),
        .library(name: "MediaHLS", targets: ["MediaHLS"]),
        .library(name: "MediaStreamingAVFoundation", targets: ["MediaStreamingAVFoundation"]),
        .library(name: "MediaDownloadsActivityKit", targets: ["MediaDownloadsActivityKit"]),
        .library(name: "MediaServer", targets: ["MediaServer"]),
        // Every library module, for an app that wants them all.
        .library(
            name: "MediaCacheKit",
            targets: [
                "MediaStore", "MediaCache", "HLSPlaylist", "MediaStreaming", "MediaDownloads", "MediaHLS",
                "MediaStreamingAVFoundation", "MediaDownloadsActivityKit", "MediaServer",
            ]),
        .executable(name: "mediacache-demo", targets: ["mediacache-demo"]),
        .executable(name: "mediacache-bench", targets: ["mediacache-bench"]),
        .executable(name: "cachetool", targets: ["cachetool"]),
        .library(name: "CacheToolCore", targets: ["CacheToolCore"]),
    ],
    dependencies: cPackages,
    targets: cTargets + cryptoTargets + [
        // Package-internal support (`Locked`, `SlotTable`, `BlockingWait`): `package` access
        // only, in no product, so apps never see it.
        .target(
            name: "MediaSupport"
        ),
        .target(
            name: "MediaStore",
            dependencies: ["MediaSupport", lmdb, zstd, xxhash] + crypto
        ),
        .target(
            name: "MediaCache",
            dependencies: ["MediaStore", "MediaSupport"]
        ),
        // M3U8 playlists: parser, model, rewriter, selection, download
        // planner. Pure, Foundation only.
        .target(
            name: "HLSPlaylist"
        ),
        .target(
            name: "MediaStreaming",
            dependencies: ["HLSPlaylist", "MediaStore", "MediaSupport"]
        ),
        // Downloads: the run engine, its progressive performer, the
        // in-memory OfflineDownloader, the persistent DownloadQueue and its
        // conditions.
        .target(
            name: "MediaDownloads",
            dependencies: ["MediaStreaming", "MediaStore", "MediaSupport"]
        ),
        // HLS over the cache: the resource store, the HLS performer, HLSDownloader.
        .target(
            name: "MediaHLS",
            dependencies: ["HLSPlaylist", "MediaDownloads", "MediaStreaming", "MediaStore", "MediaSupport"]
        ),
        // The AVFoundation glue (`CachingAVPlayerItem`): Apple platforms
        // only; an empty module elsewhere.
        .target(
            name: "MediaStreamingAVFoundation",
            dependencies: ["HLSPlaylist", "MediaStreaming"]
        ),
        // The ActivityKit glue (the downloads' Live Activity): iOS only; an
        // empty module elsewhere.
        .target(
            name: "MediaDownloadsActivityKit",
            dependencies: ["MediaDownloads"]
        ),
        .target(
            name: "MediaServer",
            dependencies: ["MediaDownloads", "MediaHLS", "HLSPlaylist", "MediaStreaming", "MediaStore", "MediaSupport"]
        ),
        .target(
            name: "LoopbackNginx"
        ),
        .executableTarget(
            name: "mediacache-demo",
            dependencies: ["MediaDownloads", "MediaStore", "MediaStreaming", "LoopbackNginx"],
            path: "Sources/MediaCacheDemo"
        ),
        .executableTarget(
            name: "mediacache-bench",
            dependencies: [
                "MediaDownloads", "MediaHLS",
                "MediaStore", "MediaCache", "MediaStreaming", "MediaServer", "MediaSupport", lmdb, "LoopbackNginx",
            ],
            path: "Sources/MediaCacheBench"
        ),
        .target(
            name: "CacheToolCore",
            dependencies: [
                "MediaDownloads", "MediaHLS", "HLSPlaylist", "MediaStore", "MediaStreaming", "MediaServer",
                "MediaSupport",
            ]
        ),
        .executableTarget(
            name: "cachetool",
            dependencies: ["CacheToolCore"]
        ),
        // Test-only helpers (seeded generator, temporary directories, external
        // tools) shared by every test target; not part of any product.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        // The tests' one fake origin (`FakeOrigin`), shared by the
        // MediaStreaming and MediaServer tests; not part of any product.
        .target(
            name: "StreamingTestSupport",
            dependencies: ["MediaStreaming"],
            path: "Tests/StreamingTestSupport"
        ),
        // The fuzz entry points, shared by FuzzTesting/ and the replay tests;
        // test code, in no product (reaches MediaStore's `package` internals).
        .target(
            name: "FuzzSupport",
            dependencies: [
                "MediaDownloads", "MediaHLS", "HLSPlaylist", "MediaStore", "MediaStreaming", "MediaServer",
                "CacheToolCore",
            ],
            path: "Tests/FuzzSupport"
        ),
        // The child of the download queue's relaunch test (killed mid-download).
        .executableTarget(
            name: "queue-app",
            dependencies: ["MediaDownloads", "MediaStore", "MediaStreaming"],
            path: "Tests/QueueApp"
        ),
        .executableTarget(
            name: "crash-writer",
            dependencies: ["MediaStore", "TestSupport"],
            path: "Tests/CrashWriter"
        ),
        .testTarget(
            name: "MediaSupportTests",
            dependencies: ["MediaSupport", "TestSupport"]
        ),
        .testTarget(
            name: "MediaStoreTests",
            dependencies: ["MediaStore", "MediaSupport", "TestSupport", "LoopbackNginx", lmdb, xxhash]
        ),
        .testTarget(
            name: "MediaCacheTests",
            dependencies: ["MediaCache", "MediaStore", "MediaSupport", "TestSupport"]
        ),
        .testTarget(
            name: "CacheToolTests",
            dependencies: [
                "MediaDownloads", "MediaHLS",
                "CacheToolCore", "HLSPlaylist", "MediaStore", "MediaStreaming", "MediaServer", "TestSupport",
                "FuzzSupport", "LoopbackNginx",
            ],
            exclude: ["Fuzz"]
        ),
        .testTarget(
            name: "MediaStreamingTests",
            dependencies: [
                "MediaDownloads", "MediaHLS",
                "MediaStreaming", "MediaStreamingAVFoundation", "HLSPlaylist", "MediaStore", "MediaSupport",
                "LoopbackNginx", "TestSupport", "StreamingTestSupport",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "HLSPlaylistTests",
            dependencies: ["HLSPlaylist"]
        ),
        .testTarget(
            name: "MediaServerTests",
            dependencies: [
                "MediaDownloads", "MediaHLS",
                "MediaServer", "MediaStreaming", "HLSPlaylist", "MediaStore", "MediaSupport", "LoopbackNginx",
                "TestSupport", "StreamingTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
