import Foundation
import MediaStore
import MediaSupport

/// The platform-neutral twin of `AVAssetResourceLoadingContentInformationRequest`:
/// the loader fills it before giving any byte of the data request.
public final class ContentInformationRequest: Sendable {
    private let filled = Locked<ContentInformation?>(nil)
    private let responder: @Sendable (LoadingEvent) -> Void

    init(responder: @escaping @Sendable (LoadingEvent) -> Void) {
        self.responder = responder
    }

    /// What the loader answered, once it has.
    public var information: ContentInformation? { filled.current }
    /// The MIME type (`nil` until filled).
    public var mimeType: String? { information?.mimeType }
    /// The UTI (`contentType` in AVFoundation; `nil` until filled).
    public var contentType: String? { information?.uniformTypeIdentifier }
    /// The total length (0 until filled).
    public var contentLength: Int { information?.contentLength ?? 0 }
    /// Whether byte ranges may be asked for.
    public var isByteRangeAccessSupported: Bool { information?.isByteRangeAccessSupported ?? false }
    /// Whether every byte is already local.
    public var isEntireLengthAvailableOnDemand: Bool { information?.isEntireLengthAvailableOnDemand ?? false }

    func fill(_ information: ContentInformation) {
        filled.withLock { $0 = information }
        responder(.contentInformation(information))
    }
}
