// swift-tools-version:6.0
// The AVFoundation glue (the module Sources/MediaStreamingAVFoundation)
// compiled and tested on Linux, where there is no Apple SDK, against an
// API-shape stand-in of AVFoundation (Sources/AVFoundation here).
//
// A package of its own, built in its own scratch folder, so that the
// stand-in module named AVFoundation never lands in the root package's
// build: there, `canImport(AVFoundation)` stays false on Linux, and no user
// of the MediaStreaming product ever gets a fake AVFoundation.
//
//   swift build --package-path Tests/AVFoundationCheck --scratch-path .build-avfoundation-check --build-tests
//   swift test --package-path Tests/AVFoundationCheck --scratch-path .build-avfoundation-check --skip-build
//
// The ActivityKit glue (Sources/MediaDownloadsActivityKit) is checked here
// the same way: against an API stand-in of ActivityKit (Sources/ActivityKit
// here), as MediaDownloadsActivityKitGlue with ACTIVITYKIT_STAND_IN defined,
// by ActivityKitGlueTests.
//
// The background URLSession adapter of MediaDownloads
// (URLSessionBackgroundTransfer) likewise: against a stand-in of the
// background-session API with a model of the system's transfer service
// (Sources/URLSessionStandIn here), as MediaDownloadsURLSessionGlue with
// URLSESSION_STAND_IN defined, by URLSessionGlueTests.
//
// (Tools/test runs all three.) The target MediaStreamingAVFoundationGlue here has
// the glue's own files, by symlink, compiled as they are with
// AVFOUNDATION_STAND_IN defined (it switches them on outside Apple
// platforms). Its name is not the module's: SwiftPM wants target names
// unique across the package graph, and the root package has the (on Linux
// empty) MediaStreamingAVFoundation.
// `MediaCache` is a symlink to the repository root; CheckNginx is the root
// package's LoopbackNginx (not a product there), by symlink.
import PackageDescription

let package = Package(
    name: "AVFoundationCheck",
    dependencies: [.package(path: "MediaCache")],
    targets: [
        .target(name: "AVFoundation"),
        .target(
            name: "MediaStreamingAVFoundationGlue",
            dependencies: [
                "AVFoundation", .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "HLSPlaylist", package: "MediaCache"),
            ],
            swiftSettings: [.define("AVFOUNDATION_STAND_IN")]
        ),
        .target(name: "CheckNginx"),
        .target(name: "ActivityKit"),
        .target(
            name: "MediaDownloadsActivityKitGlue",
            dependencies: ["ActivityKit", .product(name: "MediaDownloads", package: "MediaCache")],
            swiftSettings: [.define("ACTIVITYKIT_STAND_IN")]
        ),
        // The background URLSession adapter (Sources/MediaDownloads/Background/
        // URLSessionBackgroundTransfer.swift, by symlink) with
        // URLSESSION_STAND_IN defined, against the stand-in of the
        // background-session API and the system service behind it
        // (Sources/URLSessionStandIn here), tested by URLSessionGlueTests.
        .target(name: "URLSessionStandIn"),
        .target(
            name: "MediaDownloadsURLSessionGlue",
            dependencies: ["URLSessionStandIn", .product(name: "MediaDownloads", package: "MediaCache")],
            swiftSettings: [.define("URLSESSION_STAND_IN")]
        ),
        // The model of the iOS example (Examples/iOSPlayer/PlayerModel.swift,
        // by symlink), type-checked against the stand-in; its SwiftUI views
        // are not compiled.
        .target(
            name: "iOSPlayerExample",
            dependencies: [
                "AVFoundation", "MediaStreamingAVFoundationGlue",
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaDownloads", package: "MediaCache"),
            ],
            swiftSettings: [.define("AVFOUNDATION_STAND_IN")]
        ),
        .testTarget(
            name: "AVFoundationGlueTests",
            dependencies: [
                "AVFoundation", "MediaStreamingAVFoundationGlue", "CheckNginx", "iOSPlayerExample",
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaStore", package: "MediaCache"),
                .product(name: "MediaServer", package: "MediaCache"),
                .product(name: "MediaDownloads", package: "MediaCache"),
                .product(name: "MediaHLS", package: "MediaCache"),
            ]
        ),
        .testTarget(
            name: "URLSessionGlueTests",
            dependencies: [
                "URLSessionStandIn", "MediaDownloadsURLSessionGlue",
                .product(name: "MediaDownloads", package: "MediaCache"),
                .product(name: "MediaHLS", package: "MediaCache"),
                .product(name: "HLSPlaylist", package: "MediaCache"),
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaStore", package: "MediaCache"),
            ]
        ),
        .testTarget(
            name: "ActivityKitGlueTests",
            dependencies: [
                "ActivityKit", "MediaDownloadsActivityKitGlue",
                .product(name: "MediaDownloads", package: "MediaCache"),
                .product(name: "MediaStreaming", package: "MediaCache"),
                .product(name: "MediaStore", package: "MediaCache"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
