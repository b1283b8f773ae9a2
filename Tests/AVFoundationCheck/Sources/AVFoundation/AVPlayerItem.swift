import Foundation

/// https://developer.apple.com/documentation/avfoundation/avplayeritem
/// `@MainActor class AVPlayerItem` (the whole class is main-actor isolated
/// in the current SDK; some members are `nonisolated`).
@available(iOS 4.0, macOS 10.7, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
@MainActor
open class AVPlayerItem: NSObject {
    private let storedAsset: AVAsset
    nonisolated private let storedKeys: [String]

    /// https://developer.apple.com/documentation/avfoundation/avplayeritem/init(asset:automaticallyloadedassetkeys:)-8x4
    /// `init(asset: AVAsset, automaticallyLoadedAssetKeys: [String]?)`: the
    /// designated initialiser, main-actor isolated (the page shows no `nonisolated`).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
    public init(asset: AVAsset, automaticallyLoadedAssetKeys: [String]?) {
        storedAsset = asset
        storedKeys = automaticallyLoadedAssetKeys ?? []
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avplayeritem/init(url:)-1xrtk
    /// `nonisolated convenience init(url URL: URL)`. Declared so that the
    /// glue's own `convenience init(url:)` is checked against it (a
    /// subclass's initialiser of the same name neither overrides nor clashes).
    @available(iOS 4.0, macOS 10.7, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
    nonisolated public convenience init(url URL: URL) {
        // Only the shape matters: the stand-in never plays a plain URL.
        fatalError("AVFoundation stand-in: AVPlayerItem(url:) is declared for its shape only")
    }

    /// https://developer.apple.com/documentation/avfoundation/avplayeritem/asset
    /// `var asset: AVAsset { get }` (the tests read it: which asset the item plays).
    open var asset: AVAsset { storedAsset }

    /// https://developer.apple.com/documentation/avfoundation/avplayeritem/automaticallyloadedassetkeys
    /// `nonisolated var automaticallyLoadedAssetKeys: [String] { get }` (the tests read it).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
    nonisolated open var automaticallyLoadedAssetKeys: [String] { storedKeys }
}
