import Foundation

/// What a player must know about a resource before it asks for bytes:
/// the answer to a content-information request.
public struct ContentInformation: Sendable, Equatable {
    /// The MIME type, from the response or sniffed from the first bytes.
    public var mimeType: String
    /// The Uniform Type Identifier AVFoundation expects in `contentType`.
    public var uniformTypeIdentifier: String
    /// The total length in bytes.
    public var contentLength: Int
    /// Whether any byte range may be asked for (always `true`: the loader
    /// serves ranges itself, even from an origin that ignores `Range`).
    public var isByteRangeAccessSupported: Bool
    /// Whether every byte is already in the store.
    public var isEntireLengthAvailableOnDemand: Bool
    /// The origin's `ETag`, when it sent one.
    public var etag: String?
    /// The origin's `Last-Modified`, when it sent one.
    public var lastModified: String?

    public init(
        mimeType: String, contentLength: Int, isByteRangeAccessSupported: Bool = true,
        isEntireLengthAvailableOnDemand: Bool = false, etag: String? = nil, lastModified: String? = nil
    ) {
        self.mimeType = mimeType
        self.uniformTypeIdentifier = UniformType.identifier(forMIMEType: mimeType)
        self.contentLength = contentLength
        self.isByteRangeAccessSupported = isByteRangeAccessSupported
        self.isEntireLengthAvailableOnDemand = isEntireLengthAvailableOnDemand
        self.etag = etag
        self.lastModified = lastModified
    }
}
