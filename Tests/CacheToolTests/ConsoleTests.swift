import Dispatch
import Foundation
import Testing

@testable import CacheToolCore

/// `Console` is shared by cachetool's worker threads: progress lines and
/// their clearing never interleave.
@Suite struct ConsoleTests {
    @Test func progressFromManyThreadsWritesWholeLines() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: file) }
        let errors = try FileHandle(forWritingTo: file)
        let console = Console(output: errors, errors: errors, showsProgress: true)
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            if index.isMultiple(of: 3) {
                console.endProgress()
            } else {
                console.progress("progress \(index)")
            }
        }
        console.endProgress()
        try errors.close()
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        let pieces = text.components(separatedBy: "\r\u{1B}[2K").filter { !$0.isEmpty }
        #expect(!pieces.isEmpty)
        for piece in pieces {
            #expect(
                piece.hasPrefix("progress ") && Int(piece.dropFirst(9)) != nil, "torn line: \(piece.debugDescription)")
        }
        #expect(text.hasSuffix("\r\u{1B}[2K"), "the last progress line was not cleared")
    }
}
