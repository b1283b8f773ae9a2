// swift-tools-version:6.0
// A command-line example: play a URL through the cache with ffmpeg (any
// player that speaks HTTP would do), via the loopback MediaServer.
//
//   swift run --package-path Examples/PlayThroughCache --scratch-path .build-examples \
//       play-through-cache https://example.com/track.mp3 --store /tmp/play-store
//
// Run it twice: the second play comes from the store (Tools/test does,
// with the origin stopped in between).
import PackageDescription

let package = Package(
    name: "PlayThroughCache",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: "MediaCache")],  // MediaCache: a symlink to the repository root
    targets: [
        .executableTarget(
            name: "play-through-cache",
            dependencies: [
                .product(name: "MediaStore", package: "MediaCache"),
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaServer", package: "MediaCache"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
