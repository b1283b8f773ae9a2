import Foundation

/// One request to an ``Origin``: a URL, an optional byte range and the
/// headers to send (the caller's own, such as `Authorization`, plus
/// validators for revalidation).
public struct OriginRequest: Sendable, Equatable {
    /// The resource's URL at the origin.
    public var url: URL
    /// The bytes wanted: `nil` for the whole resource; an open upper bound
    /// (`Int.max`) asks for everything from the lower bound.
    public var range: Range<Int>?
    /// Headers to send as they are (forwarded from the caller).
    public var headers: [String: String]
    /// `If-None-Match` validator (an `ETag`), for revalidation.
    public var ifNoneMatch: String?
    /// `If-Modified-Since` validator (a `Last-Modified` value), for revalidation.
    public var ifModifiedSince: String?
    /// `If-Range` validator (a strong `ETag`): the origin sends the range
    /// only while the resource is still that version, else the whole new one.
    public var ifRange: String?
    /// Bytes of the body an origin may buffer ahead of its reader for this
    /// request; `nil` for the origin's own bound (``OriginLimits/bufferedBodyBytes``
    /// of an ``HTTPOrigin``). A reader that bounds the whole body itself
    /// (an HLS resource within its size limit) sets it to that limit, so a
    /// store slower than the network never cuts a body it would keep.
    public var maxBufferedBytes: Int?
    /// The most body bytes the caller takes; `nil` for no bound. A
    /// response announcing more is refused at its head, and a body running
    /// past it is cut, both with ``OriginError/bodyTooLarge(bytes:limit:)``,
    /// before the transfer goes further.
    public var maxBodyBytes: Int?

    public init(
        url: URL, range: Range<Int>? = nil, headers: [String: String] = [:], ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil, ifRange: String? = nil
    ) {
        self.url = url
        self.range = range
        self.headers = headers
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifRange = ifRange
    }

    /// The `Range` header value, e.g. `bytes=0-65535` or `bytes=1024-`.
    public var rangeHeader: String? {
        guard let range else { return nil }
        if range.upperBound == Int.max { return "bytes=\(range.lowerBound)-" }
        return "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
    }

    /// Every header the request carries: the caller's, then `Range` and
    /// the validators (which win over a caller's header of the same name).
    public var allHeaders: [String: String] {
        var result = headers
        for name in result.keys
        where ["range", "if-none-match", "if-modified-since", "if-range"].contains(name.lowercased()) {
            result[name] = nil
        }
        if let rangeHeader { result["Range"] = rangeHeader }
        if let ifNoneMatch { result["If-None-Match"] = ifNoneMatch }
        if let ifModifiedSince { result["If-Modified-Since"] = ifModifiedSince }
        if let ifRange, rangeHeader != nil { result["If-Range"] = ifRange }
        return result
    }
}
