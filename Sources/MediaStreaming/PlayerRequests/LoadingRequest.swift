import Foundation
import MediaStore
import MediaSupport

/// The platform-neutral twin of `AVAssetResourceLoadingRequest`: an
/// optional content-information request and an optional data request,
/// finished once (with or without an error) or cancelled by its owner.
///
/// ```swift
/// let request = LoadingRequest(contentInformation: true, offset: 0, length: 2) { event in … }
/// loader.shouldWaitForLoading(of: request)
/// ```
public final class LoadingRequest: Sendable {
    /// Present when the player wants the content information.
    public let contentInformationRequest: ContentInformationRequest?
    /// Present when the player wants bytes.
    public let dataRequest: DataRequest?
    private let state = Locked<(finished: Bool, cancelled: Bool)>((false, false))
    private let responder: @Sendable (LoadingEvent) -> Void

    /// - parameter contentInformation: whether it carries a content-information request.
    /// - parameter offset: the first byte wanted (`nil`: no data request).
    /// - parameter length: bytes wanted; `nil` for everything to the end.
    /// - parameter responder: told of every answer, on the loader's tasks.
    public init(
        contentInformation: Bool, offset: Int? = nil, length: Int? = nil,
        responder: @escaping @Sendable (LoadingEvent) -> Void
    ) {
        self.responder = responder
        self.contentInformationRequest = contentInformation ? ContentInformationRequest(responder: responder) : nil
        self.dataRequest = offset.map {
            DataRequest(offset: $0, length: length ?? 0, toEnd: length == nil, responder: responder)
        }
    }

    /// Whether ``finishLoading()`` or ``finishLoading(with:)`` was called.
    public var isFinished: Bool { state.current.finished }
    /// Whether the owner cancelled it.
    public var isCancelled: Bool { state.current.cancelled }

    /// Marks the request finished: everything asked for was given.
    public func finishLoading() {
        guard markFinished() else { return }
        responder(.finished)
    }

    /// Marks the request failed.
    public func finishLoading(with error: StreamingError) {
        guard markFinished() else { return }
        responder(.failed(error))
    }

    /// Marks it cancelled; a cancelled request is never finished.
    func markCancelled() {
        state.withLock { $0.cancelled = true }
    }

    private func markFinished() -> Bool {
        state.withLock { state in
            guard !state.finished, !state.cancelled else { return false }
            state.finished = true
            return true
        }
    }
}
