// An API-shape stand-in for the part of Foundation's URL loading system
// that MediaDownloads' background adapter (URLSessionBackgroundTransfer)
// touches, with a model of the system's background transfer service behind
// it (StandInBackgroundSystem), so that the adapter is compiled and its
// behaviours exercised on Linux. On Linux these types live in
// FoundationNetworking, which the adapter does not import: the names here
// do not collide with `import Foundation`.
//
// Each declaration copies the Swift signature of Apple's SDK as documented
// on the page cited beside it. Objective-C classes are `open`. What the
// model does (tasks kept across a relaunch, download-to-file delivery,
// resume data, delegate callbacks on the session's delegate queue, events
// delivered to a relaunched app) is stated on StandInBackgroundSystem with
// the page each behaviour comes from.
import Foundation

/// https://developer.apple.com/documentation/foundation/urlsessionconfiguration
/// `class URLSessionConfiguration : NSObject, NSCopying, @unchecked Sendable`.
open class URLSessionConfiguration: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/identifier
    /// `var identifier: String? { get }`.
    open private(set) var identifier: String?
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/isdiscretionary
    /// `var isDiscretionary: Bool { get set }`.
    open var isDiscretionary = false
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/sessionsendslaunchevents
    /// `var sessionSendsLaunchEvents: Bool { get set }`.
    open var sessionSendsLaunchEvents = false
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/allowscellularaccess
    open var allowsCellularAccess = true
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/allowsexpensivenetworkaccess
    open var allowsExpensiveNetworkAccess = true
    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/allowsconstrainednetworkaccess
    open var allowsConstrainedNetworkAccess = true

    override private init() {}

    /// https://developer.apple.com/documentation/foundation/urlsessionconfiguration/background(withidentifier:)
    /// `class func background(withIdentifier identifier: String) -> URLSessionConfiguration`.
    open class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration()
        configuration.identifier = identifier
        return configuration
    }
}

/// https://developer.apple.com/documentation/foundation/urlrequest
/// `struct URLRequest` (the members the adapter uses).
public struct URLRequest: Sendable, Hashable, Codable {
    /// https://developer.apple.com/documentation/foundation/urlrequest/url
    public var url: URL?
    /// https://developer.apple.com/documentation/foundation/urlrequest/allhttpheaderfields
    public var allHTTPHeaderFields: [String: String]?
    /// https://developer.apple.com/documentation/foundation/urlrequest/allowscellularaccess
    public var allowsCellularAccess = true
    /// https://developer.apple.com/documentation/foundation/urlrequest/allowsexpensivenetworkaccess
    public var allowsExpensiveNetworkAccess = true
    /// https://developer.apple.com/documentation/foundation/urlrequest/allowsconstrainednetworkaccess
    public var allowsConstrainedNetworkAccess = true

    /// https://developer.apple.com/documentation/foundation/urlrequest/init(url:cachepolicy:timeoutinterval:)
    /// (the defaults of the other two parameters).
    public init(url: URL) { self.url = url }

    /// https://developer.apple.com/documentation/foundation/urlrequest/setvalue(_:forhttpheaderfield:)
    /// `mutating func setValue(_ value: String?, forHTTPHeaderField field: String)`.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        var fields = allHTTPHeaderFields ?? [:]
        fields = fields.filter { $0.key.lowercased() != field.lowercased() }
        if let value { fields[field] = value }
        allHTTPHeaderFields = fields
    }

    /// https://developer.apple.com/documentation/foundation/urlrequest/value(forhttpheaderfield:)
    public func value(forHTTPHeaderField field: String) -> String? {
        allHTTPHeaderFields?.first { $0.key.lowercased() == field.lowercased() }?.value
    }
}

/// https://developer.apple.com/documentation/foundation/urlresponse
open class URLResponse: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlresponse/url
    open private(set) var url: URL?

    init(url: URL?) { self.url = url }
}

/// https://developer.apple.com/documentation/foundation/httpurlresponse
open class HTTPURLResponse: URLResponse, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/httpurlresponse/statuscode
    /// `var statusCode: Int { get }`.
    open private(set) var statusCode: Int
    /// https://developer.apple.com/documentation/foundation/httpurlresponse/allheaderfields
    /// `var allHeaderFields: [AnyHashable : Any] { get }`.
    open private(set) var allHeaderFields: [AnyHashable: Any]

    /// https://developer.apple.com/documentation/foundation/httpurlresponse/init(url:statuscode:httpversion:headerfields:)
    public init?(url: URL, statusCode: Int, httpVersion: String?, headerFields: [String: String]?) {
        self.statusCode = statusCode
        self.allHeaderFields = headerFields ?? [:]
        super.init(url: url)
    }
}

/// https://developer.apple.com/documentation/foundation/nsurlsessiondownloadtaskresumedata
/// `let NSURLSessionDownloadTaskResumeData: String`: the key of the resume
/// data in the `userInfo` of a download task's error.
public let NSURLSessionDownloadTaskResumeData = "NSURLSessionDownloadTaskResumeData"
