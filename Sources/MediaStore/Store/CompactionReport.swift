/// What ``MediaStore/compact(directory:)`` did.
public struct CompactionReport: Sendable, Equatable {
    /// Size of `data.mdb` before, in bytes.
    public var bytesBefore: Int
    /// Size of the compacted `data.mdb`, in bytes.
    public var bytesAfter: Int
}
