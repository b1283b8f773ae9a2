import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourceloader
/// `class AVAssetResourceLoader : NSObject`, not Sendable, not isolated; not
/// on watchOS. Apps never create one: they get it from
/// ``AVURLAsset/resourceLoader``.
///
/// The stand-in plays AVFoundation's part through `@_spi(StandIn)`
/// members: it hands requests to the delegate on the delegate queue
/// (synchronously, as AVFoundation's "resource requests are processed
/// synchronously on the specified dispatch queue") and cancels them.
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
open class AVAssetResourceLoader: NSObject {
    private static let queueKey = DispatchSpecificKey<UUID>()
    private let lock = NSLock()
    private weak var storedDelegate: (any AVAssetResourceLoaderDelegate)?
    private var storedQueue: DispatchQueue?
    private var queueToken: UUID?
    private var setDelegateCalls = 0
    private var violations: [String] = []

    /// Only AVURLAsset makes one (the SDK's `init` is not for apps).
    init(standInForAsset: Void = ()) {
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloader/delegate
    /// `weak var delegate: (any AVAssetResourceLoaderDelegate)? { get }` (held weakly).
    open var delegate: (any AVAssetResourceLoaderDelegate)? { lock.withLock { storedDelegate } }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloader/delegatequeue
    /// `var delegateQueue: dispatch_queue_t? { get }` (`DispatchQueue` in Swift).
    open var delegateQueue: DispatchQueue? { lock.withLock { storedQueue } }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloader/setdelegate(_:queue:)
    /// `func setDelegate(_ delegate: (any AVAssetResourceLoaderDelegate)?, queue delegateQueue: dispatch_queue_t?)`.
    /// The delegate is held weakly, the queue strongly; a delegate without a queue is an error.
    open func setDelegate(_ delegate: (any AVAssetResourceLoaderDelegate)?, queue delegateQueue: DispatchQueue?) {
        var token: UUID?
        if let delegateQueue {
            token = delegateQueue.getSpecific(key: Self.queueKey) ?? UUID()
            delegateQueue.setSpecific(key: Self.queueKey, value: token!)
        }
        lock.withLock {
            setDelegateCalls += 1
            if delegate != nil && delegateQueue == nil {
                violations.append("setDelegate(_:queue:) with a delegate and no queue (AVFoundation raises)")
            }
            storedDelegate = delegate
            storedQueue = delegateQueue
            queueToken = token
        }
    }

    /// Whether the caller runs on the delegate queue.
    var standInIsOnDelegateQueue: Bool {
        guard let token = lock.withLock({ queueToken }) else { return false }
        return DispatchQueue.getSpecific(key: Self.queueKey) == token
    }
}

@_spi(StandIn)
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
extension AVAssetResourceLoader {
    /// How many times `setDelegate(_:queue:)` was called.
    public var standInSetDelegateCalls: Int { lock.withLock { setDelegateCalls } }

    /// What AVFoundation would have refused in the calls made to the loader.
    public var standInViolations: [String] { lock.withLock { violations } }

    /// Does what AVFoundation does when the asset needs bytes: asks the
    /// delegate, on the delegate queue, whether it will load `request`.
    /// `nil` when there is no delegate (AVFoundation would load the URL itself).
    public func standInIssue(_ request: AVAssetResourceLoadingRequest) -> Bool? {
        guard let (delegate, queue) = delegateAndQueue() else { return nil }
        request.log.loader = self
        return queue.sync { delegate.resourceLoader(self, shouldWaitForLoadingOfRequestedResource: request) }
    }

    /// Does what AVFoundation does on a seek or when it no longer needs
    /// the bytes: marks `request` cancelled (from the caller's thread), then
    /// tells the delegate on the delegate queue, waiting for it. Returns `false` (and does nothing) for a request that
    /// is already finished, which AVFoundation does not cancel.
    @discardableResult
    public func standInCancel(_ request: AVAssetResourceLoadingRequest) -> Bool {
        guard !request.isFinished, let (delegate, queue) = delegateAndQueue() else { return false }
        request.standInMarkCancelled()
        queue.sync { delegate.resourceLoader(self, didCancel: request) }
        return true
    }

    /// Asks the delegate, on the delegate queue, about a renewal (which the glue leaves to the default).
    public func standInIssueRenewal(_ request: AVAssetResourceRenewalRequest) -> Bool? {
        guard let (delegate, queue) = delegateAndQueue() else { return nil }
        request.log.loader = self
        return queue.sync { delegate.resourceLoader(self, shouldWaitForRenewalOfRequestedResource: request) }
    }

    private func delegateAndQueue() -> ((any AVAssetResourceLoaderDelegate), DispatchQueue)? {
        lock.withLock {
            guard let delegate = storedDelegate, let queue = storedQueue else { return nil }
            return (delegate, queue)
        }
    }
}
