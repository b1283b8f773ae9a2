import Foundation

/// Bytes read from the origin without storing them: what a preload needs to
/// look at (an MP4 index at the far end of a file) when storing it would
/// cost more than it is worth.
extension ResourceFetcher {
    /// The bytes of `range` of the version this fetcher serves, straight
    /// from the origin in one request (checked like any transfer's
    /// response: the range, the length, the validators), not stored.
    ///
    /// - throws: ``StreamingError``; ``OriginError/truncated(expected:received:)``
    ///   when the body ends before the range does.
    func unstoredBytes(_ range: Range<Int>, url: URL, headers: [String: String]) async throws(StreamingError)
        -> [UInt8]
    {
        guard let length = information?.contentLength else {
            throw change ?? .origin(.malformedResponse(reason: "no content information"))
        }
        let range = range.clamped(to: 0..<length)
        guard !range.isEmpty else { return [] }
        var request = OriginRequest(url: url, range: range, headers: configuration.headers.merging(headers) { $1 })
        request.ifRange = ResponseValidator.ifRange(for: validators)
        count { $0.originRequests += 1 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        do {
            let response = try await runner.origin.fetch(request)
            let body = try ResponseValidator.checkRange(
                response, requested: range, length: length, validators: validators, chunkSize: chunkSize, url: url)
            var cursor = body.start
            for try await piece in response.body {
                count { $0.originBytes += piece.count }
                // Only the part of the body within `range` (a 200 carries the whole resource).
                let from = max(cursor, range.lowerBound)
                let to = min(cursor + piece.count, range.upperBound)
                if from < to {
                    bytes.append(
                        contentsOf: piece[(piece.startIndex + from - cursor)..<(piece.startIndex + to - cursor)])
                }
                cursor += piece.count
                if cursor >= range.upperBound { break }
            }
        } catch {
            throw StreamingError.wrap(error)
        }
        guard bytes.count == range.count else {
            throw .origin(.truncated(expected: range.count, received: bytes.count))
        }
        return bytes
    }
}
