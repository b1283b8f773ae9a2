/// What the server knows of a resource when it answers a request for it:
/// the entry's length, type and validators.
public struct Representation: Sendable, Equatable {
    public var length: Int
    public var mimeType: String
    /// The origin's `ETag`, passed on as the entry's.
    public var etag: String?
    /// The origin's `Last-Modified`, passed on as the entry's.
    public var lastModified: String?

    public init(length: Int, mimeType: String, etag: String? = nil, lastModified: String? = nil) {
        self.length = length
        self.mimeType = mimeType
        self.etag = etag
        self.lastModified = lastModified
    }
}
