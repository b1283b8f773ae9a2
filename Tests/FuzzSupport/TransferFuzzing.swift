import Foundation
import MediaDownloads

/// The entry point of the libFuzzer target `FuzzTransferResponse` in
/// `FuzzTesting/` and of the test that replays its corpus: arbitrary
/// bytes as the response head of a background task's file, checked by
/// `TransferredFileImporter.expectation` against the range asked for and
/// the file's size. Test code, in no product (reaches MediaDownloads'
/// `package` internals).
public enum TransferFuzzing {
    /// The input: a status byte pair, the asked range's two bounds and
    /// the file size (each 4 bytes, little-endian), then the
    /// `Content-Range` value (its first 256 bytes) and after a NUL the
    /// `Content-Length` value. Returns whether an expectation was accepted;
    /// throws when one was accepted that the file or the request does not bear out.
    @discardableResult
    public static func checkResponse(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        var input = bytes[...]
        func number(_ count: Int) -> Int {
            let taken = input.prefix(count)
            input = input.dropFirst(count)
            return taken.reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        let status = [200, 206, 416, 500][number(1) % 4]
        let lower = number(4) % (1 << 30)
        let upper = number(4)
        let fileSize = number(4) % (1 << 30)
        let text = String(decoding: input.prefix(512), as: UTF8.self)
        let parts = text.split(separator: "\0", maxSplits: 1, omittingEmptySubsequences: false)
        var headers: [String: String] = [:]
        if let range = parts.first, !range.isEmpty { headers["Content-Range"] = String(range.prefix(256)) }
        if parts.count > 1 { headers["Content-Length"] = String(parts[1].prefix(64)) }
        let asked: Range<Int>? =
            upper == 0 ? nil : lower..<(upper == 0xFFFF_FFFF ? Int.max : lower + max(1, upper % (1 << 30)))
        let request = TransferRequest(identifier: "fuzz", url: URL(string: "https://fuzz.invalid/")!, range: asked)
        let response = TransferResponse(statusCode: status, headers: headers)
        let expected: TransferredFileImporter.Expectation
        do throws(TransferImportError) {
            expected = try TransferredFileImporter.expectation(for: request, response: response, fileSize: fileSize)
        } catch {
            return false
        }
        try fuzzCheck(expected.range.count == fileSize, "accepted \(expected.range) for a file of \(fileSize)")
        try fuzzCheck(expected.range.lowerBound >= 0, "negative offset \(expected.range)")
        if let total = expected.total {
            try fuzzCheck(expected.range.upperBound <= total, "\(expected.range) beyond the total \(total)")
        }
        if status == 206, let asked {
            try fuzzCheck(
                expected.range.lowerBound == asked.lowerBound && expected.range.upperBound <= asked.upperBound,
                "\(expected.range) outside the range asked for, \(asked)")
        } else {
            try fuzzCheck(status == 200 && expected.range.lowerBound == 0, "status \(status) accepted as \(expected)")
        }
        return true
    }
}
