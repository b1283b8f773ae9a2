import Foundation

/// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest
/// `class AVAssetResourceLoadingRequest : NSObject`, not Sendable, not
/// isolated; not on watchOS. Apps never create one (AVFoundation does; the
/// tests do through the `@_spi(StandIn)` initialiser).
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
open class AVAssetResourceLoadingRequest: NSObject {
    let log: StandInLog
    private let lock = NSLock()
    private let storedRequest: URLRequest
    private let storedInformation: AVAssetResourceLoadingContentInformationRequest?
    private let storedData: AVAssetResourceLoadingDataRequest?
    private var finished = false
    private var cancelled = false
    private var storedResponse: URLResponse?
    private var storedRedirect: URLRequest?
    private var storedError: (any Error)?

    init(
        standInRequest request: URLRequest, contentInformation: Bool, allowedContentTypes: [String]?,
        data: (offset: Int64, length: Int, toEnd: Bool)?
    ) {
        let log = StandInLog()
        self.log = log
        storedRequest = request
        storedInformation =
            contentInformation
            ? AVAssetResourceLoadingContentInformationRequest(standInLog: log, allowedContentTypes: allowedContentTypes)
            : nil
        storedData = data.map {
            AVAssetResourceLoadingDataRequest(standInLog: log, offset: $0.offset, length: $0.length, toEnd: $0.toEnd)
        }
        super.init()
        storedData?.contentInformation = storedInformation
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/request
    /// `var request: URLRequest { get }` (iOS 6).
    open var request: URLRequest { storedRequest }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/isfinished
    /// `var isFinished: Bool { get }` (iOS 6).
    open var isFinished: Bool { lock.withLock { finished } }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/iscancelled
    /// `var isCancelled: Bool { get }` (iOS 7).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open var isCancelled: Bool { lock.withLock { cancelled } }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/contentinformationrequest
    /// `var contentInformationRequest: AVAssetResourceLoadingContentInformationRequest? { get }` (iOS 7).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open var contentInformationRequest: AVAssetResourceLoadingContentInformationRequest? { storedInformation }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/datarequest
    /// `var dataRequest: AVAssetResourceLoadingDataRequest? { get }` (iOS 7).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open var dataRequest: AVAssetResourceLoadingDataRequest? { storedData }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/response
    /// `@NSCopying var response: URLResponse? { get set }` (iOS 7). The glue leaves it nil.
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open var response: URLResponse? {
        get { lock.withLock { storedResponse } }
        set { lock.withLock { storedResponse = newValue.map { $0.copy() as! URLResponse } } }
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/redirect
    /// `var redirect: URLRequest? { get set }` (iOS 7). The glue leaves it nil.
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open var redirect: URLRequest? {
        get { lock.withLock { storedRedirect } }
        set { lock.withLock { storedRedirect = newValue } }
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/finishloading()
    /// `func finishLoading()` (iOS 7).
    @available(iOS 7.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
    open func finishLoading() {
        log.record(.finishLoading)
        if let information = storedInformation {
            // Documented: set a UTI; with allowedContentTypes, one of them or nil.
            if information.contentType == nil && information.allowedContentTypes == nil {
                log.violation("finishLoading() with the content information's contentType unset")
            }
            if let allowed = information.allowedContentTypes, let type = information.contentType,
                !allowed.contains(type)
            {
                log.violation(
                    "finishLoading() with contentType \(type) not in allowedContentTypes (AVFoundation raises)")
            }
        }
        markFinished(error: nil)
    }

    /// https://developer.apple.com/documentation/avfoundation/avassetresourceloadingrequest/finishloading(with:)
    /// `func finishLoading(with error: (any Error)?)` (iOS 6).
    open func finishLoading(with error: (any Error)?) {
        log.record(.finishLoadingWithError(error.map { String(describing: $0) }))
        markFinished(error: error)
    }

    private func markFinished(error: (any Error)?) {
        let already = lock.withLock {
            let was = finished
            finished = true
            if !was { storedError = error }
            return was
        }
        if already { log.violation("finished a second time") }
    }

    func standInMarkCancelled() {
        lock.withLock { cancelled = true }
        log.noteCancelled()
    }
}

@_spi(StandIn)
@available(iOS 6.0, macOS 10.9, tvOS 9.0, visionOS 1.0, *)
@available(watchOS, unavailable)
extension AVAssetResourceLoadingRequest {
    /// A request as AVFoundation makes one for `url`: with a
    /// content-information request when `contentInformation`, and a data
    /// request for `length` bytes at `offset` (`length: nil`: everything to
    /// the end, as `requestsAllDataToEndOfResource`), or none when `offset` is nil.
    public convenience init(
        standInURL url: URL, contentInformation: Bool, offset: Int64?, length: Int?,
        allowedContentTypes: [String]? = nil
    ) {
        self.init(
            standInRequest: URLRequest(url: url), contentInformation: contentInformation,
            allowedContentTypes: allowedContentTypes,
            // AVFoundation puts a large length in a to-end request; it must be ignored.
            data: offset.map { (offset: $0, length: length ?? Int(Int32.max), toEnd: length == nil) })
    }

    /// The glue's calls, in order.
    public var standInCalls: [StandInCall] { log.snapshot.calls }
    /// Every byte given through `respond(with:)`, in order.
    public var standInRespondedData: Data { log.snapshot.data }
    /// What AVFoundation would have refused (raised for, ignored, or not expected).
    public var standInViolations: [String] { log.snapshot.violations }
    /// The error given to `finishLoading(with:)`, if any.
    public var standInError: (any Error)? { lock.withLock { storedError } }
}
