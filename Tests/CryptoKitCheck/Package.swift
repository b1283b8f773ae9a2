// swift-tools-version:6.0
// MediaStore's CryptoKit backend (Sources/MediaStore/Crypto/CryptoBackend+CryptoKit.swift)
// compiled and tested on Linux, where there is no CryptoKit, against a
// stand-in of the CryptoKit API it uses (Sources/CryptoKit here) that
// computes with the system's libcrypto. The known-answer tests the store's
// own suite runs (RFC 4231, RFC 5869, the GCM test cases, the scheme's
// pinned bytes) run here through that backend, so the glue (argument
// order, how a sealed box splits into ciphertext and tag, key sizes) is
// checked, not CryptoKit itself.
//
// MediaStore's Keychain helper (Sources/MediaStore/Crypto/KeychainStoreKey.swift)
// is compiled here too, against a stand-in of the Security API it uses
// (Sources/Security here: SecItem* over an in-memory list of items with the
// documented result codes), and its tests run against that stand-in.
//
// A package of its own, built in its own scratch folder, so that the
// stand-in modules named CryptoKit and Security never land in the root
// package's build.
// Its target MediaStore holds only the crypto layer's files, by symlink;
// CCrypto is the root package's, and MediaSupport holds its `Locked`, by
// symlink.
//
//   swift build --package-path Tests/CryptoKitCheck --scratch-path .build-cryptokit-check --build-tests
//   swift test --package-path Tests/CryptoKitCheck --scratch-path .build-cryptokit-check --skip-build
import PackageDescription

let package = Package(
    name: "CryptoKitCheck",
    targets: [
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CryptoKit", dependencies: ["CCrypto"]),
        .target(name: "Security"),
        .target(name: "MediaSupport"),
        .target(name: "MediaStore", dependencies: ["CryptoKit", "MediaSupport", "Security"]),
        .testTarget(name: "CryptoKitGlueTests", dependencies: ["MediaStore", "Security"]),
    ],
    swiftLanguageModes: [.v6]
)
