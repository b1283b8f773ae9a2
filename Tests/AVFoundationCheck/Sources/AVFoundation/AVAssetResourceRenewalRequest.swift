import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourcerenewalrequest
/// `class AVAssetResourceRenewalRequest : AVAssetResourceLoadingRequest` (iOS 8):
/// only named by the renewal requirement of AVAssetResourceLoaderDelegate,
/// which the glue leaves to its default.
@available(iOS 8.0, macOS 10.10, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
open class AVAssetResourceRenewalRequest: AVAssetResourceLoadingRequest {}
