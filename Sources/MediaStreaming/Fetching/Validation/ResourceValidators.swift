/// The validators of one version of a resource (RFC 9110 §8.8): what tells
/// two versions apart when their lengths agree.
struct ResourceValidators: Sendable, Equatable {
    /// `ETag`, verbatim (quotes and `W/` included).
    var etag: String?
    /// `Last-Modified`, verbatim.
    var lastModified: String?

    init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators a response announces.
    init(of response: OriginResponse) {
        self.init(etag: response.etag, lastModified: response.lastModified)
    }

    /// Whether there is neither validator.
    var isEmpty: Bool { etag == nil && lastModified == nil }

    /// Whether the ETag is strong (not `W/`-prefixed): only a strong one may
    /// guard a range request (`If-Range`, RFC 9110 §13.1.5).
    var hasStrongETag: Bool {
        guard let etag else { return false }
        return !etag.hasPrefix("W/")
    }

    /// Whether `other` names another version than this. The ETag decides
    /// when both sides have one; otherwise `Last-Modified` does when both
    /// have it; a validator missing on one side proves nothing (the length
    /// is then the only check).
    func contradicts(_ other: ResourceValidators) -> Bool {
        if let etag, let otherTag = other.etag { return etag != otherTag }
        if etag != nil || other.etag != nil { return false }
        if let lastModified, let otherDate = other.lastModified { return lastModified != otherDate }
        return false
    }
}
