/// The bytes of the resource a validated response's body carries.
struct ExpectedBody: Sendable, Equatable {
    /// The resource offset of the body's first byte.
    var start: Int
    /// One past the resource offset of its last byte; `nil` when the
    /// origin did not say (a `200` without `Content-Length`).
    var end: Int?
    /// Whether it is a `200`: the whole resource, from its first byte, so
    /// a transfer may read on past the range it asked for.
    var isWholeResource: Bool
}
