/// The bytes of the resource a validated response's body carries.
package struct ExpectedBody: Sendable, Equatable {
    /// The resource offset of the body's first byte.
    package var start: Int
    /// One past the resource offset of its last byte; `nil` when the
    /// origin did not say (a `200` without `Content-Length`).
    package var end: Int?
    /// Whether it is a `200`: the whole resource, from its first byte, so
    /// a transfer may read on past the range it asked for.
    package var isWholeResource: Bool
}
