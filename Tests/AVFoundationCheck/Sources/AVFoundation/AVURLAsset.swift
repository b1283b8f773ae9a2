import Foundation

/// https://developer.apple.com/documentation/avfoundation/avurlasset
/// `class AVURLAsset : AVAsset`. Sendable: the SDK header marks it
/// NS_SWIFT_SENDABLE (objc2-av-foundation, generated from those headers,
/// says "Subclasses of this type that are used from Swift must fulfill the
/// requirements of a Sendable type":
/// https://docs.rs/objc2-av-foundation/latest/objc2_av_foundation/struct.AVURLAsset.html).
@available(iOS 4.0, macOS 10.7, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
open class AVURLAsset: AVAsset, @unchecked Sendable {
    private let storedURL: URL
    private let storedLoader = AVAssetResourceLoader()

    /// https://developer.apple.com/documentation/avfoundation/avurlasset/init(url:options:)-2x8uu
    /// `init(url URL: URL, options: [String : Any]? = nil)` (the designated initialiser).
    public init(url URL: URL, options: [String: Any]? = nil) {
        storedURL = URL
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avurlasset/init(url:)
    /// `convenience init(url: URL)` (the Swift overlay's; what the glue calls).
    public convenience init(url: URL) {
        self.init(url: url, options: nil)
    }

    /// https://developer.apple.com/documentation/avfoundation/avurlasset/url
    /// `var url: URL { get }` (the tests read it: which URL AVFoundation would load).
    open var url: URL { storedURL }

    /// https://developer.apple.com/documentation/avfoundation/avurlasset/resourceloader
    /// `var resourceLoader: AVAssetResourceLoader { get }`; not on watchOS.
    @available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    @available(watchOS, unavailable)
    open var resourceLoader: AVAssetResourceLoader { storedLoader }
}
