import Foundation
import MediaStore
import MediaStreaming

/// Why a finished task's file was not imported.
public enum TransferImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The response's status was not the one asked for (200 for the
    /// whole resource, 206 or 200 for a range).
    case unexpectedStatus(Int)
    /// A 206 whose `Content-Range` is missing, malformed, or not the range asked for.
    case contentRange(String)
    /// The file is not as long as the response said (short or long).
    case sizeMismatch(expected: Int, actual: Int)
    /// The file could not be read.
    case unreadable(String)
    /// The range does not start on a chunk of the store.
    case misaligned(offset: Int, chunkSize: Int)
    /// The store refused it: the entry was replaced meanwhile
    /// (`StoreError.entryReplaced`), too large, a failed write.
    case store(StoreError)

    public var description: String {
        switch self {
        case .unexpectedStatus(let status): "unexpected status \(status)"
        case .contentRange(let reason): "Content-Range: \(reason)"
        case .sizeMismatch(let expected, let actual): "file of \(actual) bytes, \(expected) expected"
        case .unreadable(let reason): "file unreadable: \(reason)"
        case .misaligned(let offset, let chunkSize): "offset \(offset) is not on a chunk of \(chunkSize) bytes"
        case .store(let error): "store: \(error)"
        }
    }
}

/// Brings a finished task's file into the store the way a streamed fill
/// is: the entry is prepared with the response's length and validators
/// (one that no longer matches is replaced, never mixed), then the file
/// is read in batches of whole chunks, each written into that entry
/// version in one store write (chunked, checksummed, compressed as the
/// store does; a batch into a replaced version fails). The entry is
/// complete, with its content digest, once its last hole is filled.
/// Memory stays at one batch whatever the file's size.
package struct TransferredFileImporter: Sendable {
    /// The most bytes read and written at once.
    package static let batchBytes = 4 << 20

    /// What a response says the file holds.
    package struct Expectation: Sendable, Hashable {
        /// Where its bytes go in the resource.
        package var range: Range<Int>
        /// The resource's length, when the response told it.
        package var total: Int?

        package init(range: Range<Int>, total: Int?) {
            self.range = range
            self.total = total
        }
    }

    /// What `response` to `request` says the file holds, checked against
    /// the request and the file's size `fileSize`.
    package static func expectation(
        for request: TransferRequest, response: TransferResponse, fileSize: Int
    ) throws(TransferImportError) -> Expectation {
        let length = response.headers["content-length"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        switch response.statusCode {
        case 200:
            if let length, length != fileSize { throw .sizeMismatch(expected: length, actual: fileSize) }
            return Expectation(range: 0..<fileSize, total: length ?? fileSize)
        case 206:
            guard let asked = request.range else { throw .unexpectedStatus(206) }
            guard let header = response.headers["content-range"] else { throw .contentRange("missing") }
            let (range, total) = try parseContentRange(header)
            guard range.lowerBound == asked.lowerBound, range.upperBound <= asked.upperBound else {
                throw .contentRange("\(range) is not the range asked for, \(asked)")
            }
            // Shorter than asked only when the resource ends there.
            if range.upperBound < asked.upperBound, range.upperBound != total {
                throw .contentRange("\(range) stops short of \(asked)")
            }
            if range.count != fileSize { throw .sizeMismatch(expected: range.count, actual: fileSize) }
            return Expectation(range: range, total: total)
        default:
            throw .unexpectedStatus(response.statusCode)
        }
    }

    /// Parses `bytes first-last/total` (`total` may be `*`).
    static func parseContentRange(_ header: String) throws(TransferImportError) -> (Range<Int>, Int?) {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.utf8.count <= 100, value.hasPrefix("bytes ") else { throw .contentRange("not bytes") }
        let parts = value.dropFirst("bytes ".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .contentRange("malformed") }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, last >= first,
            last < Int.max
        else { throw .contentRange("malformed") }
        var total: Int?
        if parts[1] != "*" {
            guard let value = Int(parts[1]), value > last else { throw .contentRange("malformed total") }
            total = value
        }
        return (first..<(last + 1), total)
    }

    /// The validators and the type of a response, as the store keeps them.
    package static func metadata(of response: TransferResponse) -> EntryMetadata {
        EntryMetadata(
            mimeType: response.headers["content-type"].map { String($0.prefix(200)) },
            etag: response.headers["etag"].map { String($0.prefix(1000)) },
            lastModified: response.headers["last-modified"].map { String($0.prefix(200)) })
    }

    /// Imports `file`, the body of `response` to `request`, into the entry
    /// `key`, and removes the file (also when the import fails).
    ///
    /// - returns: the entry after the import (its version is the one the bytes went into).
    package static func importFile(
        _ file: URL, request: TransferRequest, response: TransferResponse, key: String, io: StoreIO
    ) async throws(TransferImportError) -> EntryInfo {
        defer { try? FileManager.default.removeItem(at: file) }
        let handle: FileHandle
        let fileSize: Int
        do {
            handle = try FileHandle(forReadingFrom: file)
            fileSize = Int(try handle.seekToEnd())
            try handle.seek(toOffset: 0)
        } catch {
            throw .unreadable(String(describing: error))
        }
        defer { try? handle.close() }
        let expected = try expectation(for: request, response: response, fileSize: fileSize)
        let chunkSize = io.store.configuration.chunkSize
        guard expected.range.lowerBound % chunkSize == 0 else {
            throw .misaligned(offset: expected.range.lowerBound, chunkSize: chunkSize)
        }
        let options = WriteOptions(metadata: metadata(of: response))
        var info: EntryInfo
        do {
            info = try await io.write { store throws(StoreError) in
                try store.prepareEntry(forKey: key, length: expected.total, options: options)
            }
        } catch {
            throw .store(error)
        }
        let version = info.version
        let batch = max(chunkSize, batchBytes / chunkSize * chunkSize)
        var offset = expected.range.lowerBound
        while offset < expected.range.upperBound {
            let count = min(batch, expected.range.upperBound - offset)
            let bytes: Data
            do {
                bytes = try handle.read(upToCount: count) ?? Data()
            } catch {
                throw .unreadable(String(describing: error))
            }
            // The file shrank while it was read.
            guard bytes.count == count else {
                throw .sizeMismatch(
                    expected: expected.range.count, actual: offset - expected.range.lowerBound + bytes.count)
            }
            let at = offset
            do {
                info = try await io.write { store throws(StoreError) in
                    try store.write(bytes, at: at, forKey: key, version: version)
                }
            } catch {
                throw .store(error)
            }
            offset += count
        }
        return info
    }
}
