import Foundation

/// https://developer.apple.com/documentation/foundation/urlsessiondelegate
/// `protocol URLSessionDelegate : NSObjectProtocol, Sendable`. Its
/// requirements are `optional` in Objective-C: ordinary requirements with
/// defaults here (no Objective-C runtime on Linux).
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsessiondelegate/urlsessiondidfinishevents(forbackgroundurlsession:)
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession)
}

extension URLSessionDelegate {
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {}
}

/// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    /// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate/urlsession(_:task:didcompletewitherror:)
    /// `optional func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)`.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
}

extension URLSessionTaskDelegate {
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {}
}

/// https://developer.apple.com/documentation/foundation/urlsessiondownloaddelegate
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    /// https://developer.apple.com/documentation/foundation/urlsessiondownloaddelegate/urlsession(_:downloadtask:didfinishdownloadingto:)
    /// `func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)`
    /// (required): "you must open the file for reading or move it to a
    /// permanent location in your app's sandbox container directory before
    /// returning from this delegate method".
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)
}

/// https://developer.apple.com/documentation/foundation/urlsessiontask
open class URLSessionTask: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsessiontask/state-swift.enum
    public enum State: Int, Sendable {
        case running = 0
        case suspended = 1
        case canceling = 2
        case completed = 3
    }

    let lock = NSLock()
    let sessionIdentifier: String
    let request: URLRequest
    /// The model's number of the task (its `taskIdentifier`).
    let number: Int
    var storedDescription: String?
    var storedState = State.suspended
    var storedResponse: URLResponse?
    var received: Int64 = 0

    init(sessionIdentifier: String, request: URLRequest, number: Int) {
        self.sessionIdentifier = sessionIdentifier
        self.request = request
        self.number = number
    }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/taskidentifier
    open var taskIdentifier: Int { number }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/taskdescription
    /// `var taskDescription: String? { get set }`: kept by the system with
    /// the task, also for the tasks a relaunched app gets back.
    open var taskDescription: String? {
        get { lock.withLock { storedDescription } }
        set { lock.withLock { storedDescription = newValue } }
    }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/state-swift.property
    open var state: State { lock.withLock { storedState } }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/response
    open var response: URLResponse? { lock.withLock { storedResponse } }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/countofbytesreceived
    open var countOfBytesReceived: Int64 { lock.withLock { received } }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/originalrequest
    open var originalRequest: URLRequest? { request }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/resume()
    /// "Newly-initialized tasks begin in a suspended state".
    open func resume() {
        StandInBackgroundSystem.shared.resume(self)
    }

    /// https://developer.apple.com/documentation/foundation/urlsessiontask/cancel()
    open func cancel() {
        _ = StandInBackgroundSystem.shared.cancel(self)
    }
}

/// https://developer.apple.com/documentation/foundation/urlsessiondownloadtask
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsessiondownloadtask/cancel(byproducingresumedata:)
    /// `func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void)`.
    open func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        completionHandler(StandInBackgroundSystem.shared.cancel(self))
    }
}

/// https://developer.apple.com/documentation/foundation/urlsession
/// `class URLSession : NSObject, @unchecked Sendable`.
open class URLSession: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsession/configuration
    public let configuration: URLSessionConfiguration
    /// https://developer.apple.com/documentation/foundation/urlsession/delegate
    public let delegate: (any URLSessionDelegate)?
    /// https://developer.apple.com/documentation/foundation/urlsession/delegatequeue
    public let delegateQueue: OperationQueue

    /// https://developer.apple.com/documentation/foundation/urlsession/init(configuration:delegate:delegatequeue:)
    /// `init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?)`.
    /// A background session created with the identifier of one the system
    /// still runs tasks of gets those tasks, and the events of those that
    /// ended meanwhile (see ``StandInBackgroundSystem``).
    public init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
        delegateQueue queue: OperationQueue?
    ) {
        self.configuration = configuration
        self.delegate = delegate
        if let queue {
            delegateQueue = queue
        } else {
            delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
        }
        super.init()
        StandInBackgroundSystem.shared.attach(self)
    }

    /// https://developer.apple.com/documentation/foundation/urlsession/downloadtask(with:)-8y8vd
    /// `func downloadTask(with request: URLRequest) -> URLSessionDownloadTask`.
    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        StandInBackgroundSystem.shared.makeTask(in: self, request: request, resumingAt: 0)
    }

    /// https://developer.apple.com/documentation/foundation/urlsession/downloadtask(withresumedata:)
    /// `func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask`.
    open func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        StandInBackgroundSystem.shared.makeTask(in: self, resumeData: resumeData)
    }

    /// https://developer.apple.com/documentation/foundation/urlsession/getalltasks(completionhandler:)
    /// `func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void)`:
    /// the tasks not completed, called on another thread.
    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        let tasks = StandInBackgroundSystem.shared.tasks(of: configuration.identifier ?? "")
        DispatchQueue.global().async { completionHandler(tasks) }
    }
}
