/// A transfer admitted by a ``FetchScheduler``: hand it back to the
/// scheduler's ``FetchScheduler/checkpoint(_:)`` between chunks and to
/// ``FetchScheduler/finish(_:)`` when the transfer ends.
public struct FetchTicket: Sendable, Hashable {
    let id: UInt64
    /// What it was admitted as.
    public let priority: FetchPriority
    /// The origin host it counts against.
    public let host: String
}
