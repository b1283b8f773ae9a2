/// What the first response for a resource (the probe, `Range: bytes=0-…`,
/// conditional when a stored entry is revalidated) says.
enum FirstResponse: Sendable, Equatable {
    /// `304 Not Modified` to a conditional request: the stored entry is
    /// still the current version.
    case notModified
    /// Content: the resource's total length (`nil` when the origin does not
    /// say), the bytes of it the body carries, and its validators.
    case content(total: Int?, body: ExpectedBody, validators: ResourceValidators)
}
