/// What to do with a stored entry once the origin's first response for
/// its key is known.
enum StoredEntryAction: Sendable, Equatable {
    /// The same version, still fresh: keep it as it is.
    case keep
    /// The same version, expired: keep its bytes and renew its expiry.
    case renew
    /// Another version (other length or validators): drop it, so that no
    /// old byte is ever mixed with new ones.
    case replace
}
