/// How the transfers of a download's segment ask the origin
/// (``ResourceLoader/downloadAll(priority:connections:progress:)`` over
/// several connections).
struct SegmentRequests: Sendable, Equatable {
    /// Bytes per request, at least (a request costs a round trip).
    var requestBytes: Int
    /// Whether a `200` to a range that does not start at 0 is refused
    /// (``OriginError/httpStatus(code:url:)`` with 200) instead of read on
    /// from the resource's first byte.
    var refusesWholeBody: Bool
}
