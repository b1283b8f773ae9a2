import Foundation
import MediaStore
import MediaSupport

/// The platform-neutral twin of `AVAssetResourceLoadingDataRequest`:
/// which bytes the player wants and how far the loader has got.
public final class DataRequest: Sendable {
    /// The first byte wanted.
    public let requestedOffset: Int
    /// How many bytes are wanted (ignored when ``requestsAllDataToEndOfResource``).
    public let requestedLength: Int
    /// Whether the player wants everything from ``requestedOffset`` to the end.
    public let requestsAllDataToEndOfResource: Bool
    private let current: Locked<Int>
    private let responder: @Sendable (LoadingEvent) -> Void

    init(offset: Int, length: Int, toEnd: Bool, responder: @escaping @Sendable (LoadingEvent) -> Void) {
        self.requestedOffset = offset
        self.requestedLength = length
        self.requestsAllDataToEndOfResource = toEnd
        self.current = Locked(offset)
        self.responder = responder
    }

    /// The next byte to give: bytes before it have been provided.
    public var currentOffset: Int { current.current }

    /// Gives the next bytes, in order. May be called many times.
    public func respond(with data: Data) {
        guard !data.isEmpty else { return }
        current.withLock { $0 += data.count }
        responder(.data(data))
    }
}
