import Foundation

/// https://developer.apple.com/documentation/avfoundation/avplayer
/// `class AVPlayer`: only the members the documentation's AVPlayer snippet
/// calls. Declared `@MainActor` like ``AVPlayerItem``; the page's isolation
/// was not checked, and the snippet (a `@MainActor` model) compiles against
/// either.
@available(iOS 4.0, macOS 10.7, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
@MainActor
open class AVPlayer: NSObject {
    /// https://developer.apple.com/documentation/avfoundation/avplayer/init()
    /// `init()`: a player with no item.
    public override init() {
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avplayer/currentitem
    /// `var currentItem: AVPlayerItem? { get }`.
    open private(set) var currentItem: AVPlayerItem?

    /// https://developer.apple.com/documentation/avfoundation/avplayer/automaticallywaitstominimizestalling
    /// `var automaticallyWaitsToMinimizeStalling: Bool` (true by default).
    @available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, visionOS 1.0, *)
    open var automaticallyWaitsToMinimizeStalling = true

    /// https://developer.apple.com/documentation/avfoundation/avplayer/replacecurrentitem(with:)
    /// `func replaceCurrentItem(with item: AVPlayerItem?)`.
    open func replaceCurrentItem(with item: AVPlayerItem?) {
        currentItem = item
    }

    /// https://developer.apple.com/documentation/avfoundation/avplayer/rate
    /// `var rate: Float` (what `play()` sets to 1).
    open var rate: Float = 0

    /// https://developer.apple.com/documentation/avfoundation/avplayer/play()
    /// `func play()`: the stand-in sets ``rate`` to 1 and plays nothing.
    open func play() {
        rate = 1
    }
}
