import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest
/// `class AVAssetResourceLoadingContentInformationRequest : NSObject` (iOS 7),
/// not Sendable, not isolated; not on watchOS.
@available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
open class AVAssetResourceLoadingContentInformationRequest: NSObject {
    private let log: StandInLog
    private let lock = NSLock()
    private let allowed: [String]?
    private var type: String?
    private var length: Int64 = 0
    private var byteRange = false
    private var onDemand = false
    private var assignments = 0

    init(standInLog: StandInLog, allowedContentTypes: [String]?) {
        log = standInLog
        allowed = allowedContentTypes
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest/contenttype
    /// `var contentType: String? { get set }`: a UTI.
    open var contentType: String? {
        get { lock.withLock { type } }
        set { assign { type = newValue } }
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest/allowedcontenttypes
    /// `var allowedContentTypes: [String]? { get }` (iOS 11.2).
    @available(iOS 11.2, macOS 10.13.2, tvOS 11.2, visionOS 1.0, *)
    open var allowedContentTypes: [String]? { allowed }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest/contentlength
    /// `var contentLength: Int64 { get set }`.
    open var contentLength: Int64 {
        get { lock.withLock { length } }
        set { assign { length = newValue } }
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest/isbyterangeaccesssupported
    /// `var isByteRangeAccessSupported: Bool { get set }`.
    open var isByteRangeAccessSupported: Bool {
        get { lock.withLock { byteRange } }
        set { assign { byteRange = newValue } }
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingcontentinformationrequest/isentirelengthavailableondemand
    /// `var isEntireLengthAvailableOnDemand: Bool { get set }` (iOS 16, macOS 13, tvOS 16: the package's minimums).
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, visionOS 1.0, *)
    open var isEntireLengthAvailableOnDemand: Bool {
        get { lock.withLock { onDemand } }
        set { assign { onDemand = newValue } }
    }

    private func assign(_ change: () -> Void) {
        if !(log.loader?.standInIsOnDelegateQueue ?? false) {
            log.violation("content information set off the delegate queue")
        }
        lock.withLock {
            change()
            assignments += 1
        }
    }

    /// Whether the glue has set anything yet.
    var standInIsFilled: Bool { lock.withLock { assignments > 0 } }
}
