import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest
/// `class AVAssetResourceLoadingDataRequest : NSObject` (iOS 7), not
/// Sendable, not isolated; not on watchOS.
@available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
open class AVAssetResourceLoadingDataRequest: NSObject {
    private let log: StandInLog
    private let lock = NSLock()
    private let offset: Int64
    private let length: Int
    private let toEnd: Bool
    private var current: Int64
    /// The sibling content-information request, which must be filled first.
    weak var contentInformation: AVAssetResourceLoadingContentInformationRequest?

    init(standInLog: StandInLog, offset: Int64, length: Int, toEnd: Bool) {
        log = standInLog
        self.offset = offset
        self.length = length
        self.toEnd = toEnd
        current = offset
        super.init()
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest/requestedoffset
    /// `var requestedOffset: Int64 { get }`.
    open var requestedOffset: Int64 { offset }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest/requestedlength
    /// `var requestedLength: Int { get }` (to be ignored when ``requestsAllDataToEndOfResource``).
    open var requestedLength: Int { length }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest/requestsalldatatoendofresource
    /// `var requestsAllDataToEndOfResource: Bool { get }` (iOS 9).
    @available(iOS 9.0, macOS 10.11, tvOS 9.0, visionOS 1.0, *)
    open var requestsAllDataToEndOfResource: Bool { toEnd }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest/currentoffset
    /// `var currentOffset: Int64 { get }`: moves with every `respond(with:)`.
    open var currentOffset: Int64 { lock.withLock { current } }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingdatarequest/respond(with:)
    /// `func respond(with data: Data)`; may be called many times.
    open func respond(with data: Data) {
        log.record(.respond(bytes: data.count), bytes: data)
        if let information = contentInformation, !information.standInIsFilled {
            log.violation("bytes given before the content information")
        }
        let end = lock.withLock {
            current += Int64(data.count)
            return current
        }
        if !toEnd && end > offset + Int64(length) {
            log.violation("more bytes than requested (to \(end), asked \(offset)+\(length))")
        }
    }
}
