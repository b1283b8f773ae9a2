import Foundation
import MediaStore

/// Fetching a byte range into the store without a player: what preloading does.
extension ResourceLoader {
    /// The content information, resolving it at `priority`; a first origin
    /// request asks for `firstRequestBytes` (a preload needs the first bytes only).
    func contentInformation(priority: FetchPriority, firstRequestBytes: Int?) async throws(StreamingError)
        -> ContentInformation
    {
        do {
            return try await fetcher.contentInformation(
                url: url, headers: headers, priority: priority, firstRequestBytes: firstRequestBytes)
        } catch {
            throw StreamingError.wrap(error)
        }
    }

    /// Fetches every missing byte of `range` (clamped to the resource) into
    /// the store at `priority`, and nothing after it: the chunk holding the
    /// last byte is stored short when the range ends inside it. Cancelling
    /// the task stops it at the next chunk boundary.
    func prefetch(_ range: Range<Int>, length: Int, priority: FetchPriority) async throws(StreamingError) {
        let end = min(range.upperBound, length)
        guard range.lowerBound < end else { return }
        do {
            var rounds = 0
            while let hole = try await fetcher.firstMissingByte(from: range.lowerBound), hole < end {
                try Task.checkCancellation()
                if let reason = await fetcher.cachingSkipped { throw StreamingError.notCacheable(reason: reason) }
                rounds += 1
                if rounds > 1000 { throw OriginError.connectionLost(reason: "no progress preloading") }
                guard
                    case .stream(let stream) = try await fetcher.plan(
                        from: hole, url: url, headers: headers, priority: priority, until: end)
                else {
                    await Task.yield()
                    continue
                }
                // The stream ends once its bytes to `end` are stored (or its
                // transfer ended): the next look finds them.
                for try await _ in stream {}
                try Task.checkCancellation()
            }
        } catch {
            throw StreamingError.wrap(error)
        }
    }

    /// The bytes of `range` from the origin, not stored (checked against
    /// the version cached).
    func unstoredBytes(_ range: Range<Int>) async throws(StreamingError) -> [UInt8] {
        try await fetcher.unstoredBytes(range, url: url, headers: headers)
    }

    /// The stored bytes of `range` (which must be cached).
    func storedBytes(_ range: Range<Int>) async throws(StreamingError) -> [UInt8] {
        let key = cacheKey
        do {
            return try await cache.storeIO.read { store throws(StoreError) in
                [UInt8](try store.read(forKey: key, range: range))
            }
        } catch {
            throw .store(error)
        }
    }
}
