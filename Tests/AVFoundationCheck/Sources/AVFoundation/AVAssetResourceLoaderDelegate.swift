import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate
/// `protocol AVAssetResourceLoaderDelegate : NSObjectProtocol`, not
/// isolated, not Sendable. Every requirement is `optional` in the SDK;
/// without an Objective-C runtime they are plain requirements with the
/// defaults below (AVFoundation's behaviour when a delegate lacks them).
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
public protocol AVAssetResourceLoaderDelegate: NSObjectProtocol {
    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforloadingofrequestedresource:)
    /// `optional func resourceLoader(_:shouldWaitForLoadingOfRequestedResource:) -> Bool` (iOS 6).
    func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest
    ) -> Bool

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforrenewalofrequestedresource:)
    /// `optional func resourceLoader(_:shouldWaitForRenewalOfRequestedResource:) -> Bool` (iOS 8); the glue leaves it to the default.
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, visionOS 1.0, *)
    func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForRenewalOfRequestedResource renewalRequest: AVAssetResourceRenewalRequest
    ) -> Bool

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:didcancel:)-3nl51
    /// `optional func resourceLoader(_:didCancel loadingRequest:)` (iOS 7).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader, didCancel loadingRequest: AVAssetResourceLoadingRequest)

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforresponseto:)
    /// `optional func resourceLoader(_:shouldWaitForResponseTo:) -> Bool` (iOS 8); the glue leaves it to the default.
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, visionOS 1.0, *)
    func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForResponseTo authenticationChallenge: URLAuthenticationChallenge
    ) -> Bool

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:didcancel:)-1wqin
    /// `optional func resourceLoader(_:didCancel authenticationChallenge:)` (iOS 8); the glue leaves it to the default.
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, visionOS 1.0, *)
    func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader, didCancel authenticationChallenge: URLAuthenticationChallenge)
}

/// The defaults of the `optional` requirements: what AVFoundation does for
/// a delegate that does not implement one (it does not wait; nothing to cancel).
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
extension AVAssetResourceLoaderDelegate {
    /// Default of https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforloadingofrequestedresource:)
    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest
    ) -> Bool { false }

    /// Default of https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforrenewalofrequestedresource:)
    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForRenewalOfRequestedResource renewalRequest: AVAssetResourceRenewalRequest
    ) -> Bool { false }

    /// Default of https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:didcancel:)-3nl51
    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader, didCancel loadingRequest: AVAssetResourceLoadingRequest
    ) {}

    /// Default of https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:shouldwaitforresponseto:)
    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader,
        shouldWaitForResponseTo authenticationChallenge: URLAuthenticationChallenge
    ) -> Bool { false }

    /// Default of https://developer.apple.com/documentation/avfoundation/avassetresourceloaderdelegate/resourceloader(_:didcancel:)-1wqin
    public func resourceLoader(
        _ resourceLoader: AVAssetResourceLoader, didCancel authenticationChallenge: URLAuthenticationChallenge
    ) {}
}
