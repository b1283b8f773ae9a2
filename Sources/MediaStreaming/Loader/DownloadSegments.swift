/// Splits the missing ranges of a resource into the segments a download
/// over several connections fetches, one transfer each. Pure.
///
/// Each connection gets about an equal share of the missing bytes: the
/// missing ranges are cut into segments of at most that share (rounded
/// up to whole chunks), at chunk boundaries (a segment's writes are whole
/// chunks, and the last one of a range a short chunk at its end). A range
/// shorter than a share is one segment of its own.
enum DownloadSegments {
    /// The segments of `missing` (sorted, disjoint ranges) for `connections`
    /// connections, in resource order; `chunkSize` positive.
    static func split(_ missing: [Range<Int>], connections: Int, chunkSize: Int) -> [Range<Int>] {
        let total = missing.reduce(0) { $0 + $1.count }
        guard total > 0 else { return [] }
        let share = (total + max(1, connections) - 1) / max(1, connections)
        // At least a chunk; rounded up to whole chunks.
        let size = max(chunkSize, (share + chunkSize - 1) / chunkSize * chunkSize)
        var segments: [Range<Int>] = []
        for range in missing where !range.isEmpty {
            var start = range.lowerBound
            while start < range.upperBound {
                // The chunk boundary at or before `start + size` (past `start`:
                // `size` is a chunk at least), never past the range.
                let (target, overflow) = start.addingReportingOverflow(size)
                let boundary = overflow ? Int.max : target / chunkSize * chunkSize
                let end = min(range.upperBound, boundary)
                segments.append(start..<end)
                start = end
            }
        }
        return segments
    }
}
