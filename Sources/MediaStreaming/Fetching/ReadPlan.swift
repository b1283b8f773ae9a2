import Foundation

/// Where a reader gets its next bytes from.
enum ReadPlan: Sendable {
    /// These bytes are in the store, in entry version `version` (read
    /// them bound to it, so that a replaced entry is an error, not other bytes).
    case store(Range<Int>, version: UInt64)
    /// Bytes from the requested offset on, as a transfer receives them;
    /// ends when the transfer stops or lets the reader go for being too
    /// far behind (the reader then plans again).
    case stream(ReaderStream)
    /// The offset is at or past the end of the resource.
    case end
}
