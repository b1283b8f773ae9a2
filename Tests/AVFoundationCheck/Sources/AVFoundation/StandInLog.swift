import Foundation

/// What the glue did to one loading request (and its data and
/// content-information requests), in order: the stand-in's record.
@_spi(StandIn) public struct StandInCall: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// `dataRequest.respond(with:)` with this many bytes.
        case respond(bytes: Int)
        /// `finishLoading()`.
        case finishLoading
        /// `finishLoading(with:)`, with the error's description (`nil` for a nil error).
        case finishLoadingWithError(String?)
    }

    public let kind: Kind
    /// Whether it was made on the resource loader's delegate queue.
    public let onDelegateQueue: Bool
    /// Whether AVFoundation had already cancelled the request (`isCancelled`
    /// is set just before `resourceLoader(_:didCancel:)` is sent).
    public let afterCancel: Bool

    public var description: String {
        "\(kind)\(onDelegateQueue ? "" : " (off the delegate queue)")\(afterCancel ? " (after the cancel)" : "")"
    }
}

/// The record shared by a loading request and its sub-requests. Thread-safe:
/// the glue may (wrongly) touch a request from any thread.
final class StandInLog: @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [StandInCall] = []
    private var violations: [String] = []
    private var data = Data()
    private var cancelled = false
    /// The resource loader that issued the request (for the delegate-queue check).
    weak var loader: AVAssetResourceLoader?

    func record(_ kind: StandInCall.Kind, bytes: Data? = nil) {
        let onQueue = loader?.standInIsOnDelegateQueue ?? false
        lock.withLock {
            calls.append(StandInCall(kind: kind, onDelegateQueue: onQueue, afterCancel: cancelled))
            if let bytes { data.append(bytes) }
            if !onQueue { violations.append("\(kind) off the delegate queue") }
            if cancelled { violations.append("\(kind) on a cancelled request") }
        }
    }

    func violation(_ text: String) { lock.withLock { violations.append(text) } }

    func noteCancelled() { lock.withLock { cancelled = true } }

    var snapshot: (calls: [StandInCall], violations: [String], data: Data) {
        lock.withLock { (calls, violations, data) }
    }
}
