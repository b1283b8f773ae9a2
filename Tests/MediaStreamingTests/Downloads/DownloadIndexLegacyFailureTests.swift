import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// An index written by 0.1 kept a failed record's failure as its
/// `DownloadFailure` (cases userCancelled, origin(status:), transfer,
/// storage, unsupported), in the synthesized `Codable` form: each reads
/// back as the `DownloadError` it became.
@Suite("A 0.1 index's failed records read back")
struct DownloadIndexLegacyFailureTests {
    static let cases: [(json: String, error: DownloadError)] = [
        (#"{"userCancelled":{}}"#, .cancelled),
        (#"{"origin":{"status":404}}"#, .origin(status: 404, url: nil)),
        (#"{"transfer":{"_0":"connection reset"}}"#, .transfer("connection reset")),
        (#"{"storage":{"_0":"disk full"}}"#, .store(.storage(code: 0, message: "disk full"))),
        (#"{"unsupported":{"_0":"live playlist"}}"#, .unsupported("live playlist")),
    ]

    @Test("Each 0.1 failure case decodes as its DownloadError, in a status and through the index", arguments: 0..<5)
    func legacyFailure(index: Int) throws {
        let (json, error) = Self.cases[index]
        let status = try JSONDecoder().decode(DownloadStatus.self, from: Data(#"{"failed":{"_0":\#(json)}}"#.utf8))
        #expect(status == .failed(error))
        #expect(status.description == DownloadStatus.failed(error).description)

        let test = try TestCache()
        let store = try #require(test.store)
        let id = UUID()
        // The record's other fields as this version writes them; its status as 0.1 wrote it.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let fresh = DownloadRecord(
            id: id, url: URL(string: "https://example.com/a.mp4")!, cacheKey: "https://example.com/a.mp4",
            status: .queued, queueOrder: 3)
        let queued = String(decoding: try encoder.encode([fresh]), as: UTF8.self)
        #expect(queued.contains(#""status":{"queued":{}}"#))
        let record = queued.replacingOccurrences(
            of: #""status":{"queued":{}}"#, with: #""status":{"failed":{"_0":\#(json)}}"#)
        try store.put(Data(record.utf8), forKey: DownloadIndex.key, options: WriteOptions(expiry: .never, pinned: true))
        let loaded = try DownloadIndex(store: store).load()
        #expect(loaded.map(\.id) == [id])
        #expect(loaded.first?.status == .failed(error))
    }
}
