import Foundation

/// https://developer.apple.com/documentation/avfoundation/avasset
/// `class AVAsset : NSObject` — not `Sendable` (the SDK's nonisolated
/// AVPlayerItem initialisers take `any AVAsset & Sendable`). The glue only
/// names the type (AVPlayerItem's initialiser takes one).
@available(iOS 4.0, macOS 10.7, tvOS 9.0, watchOS 1.0, visionOS 1.0, *)
open class AVAsset: NSObject {}
