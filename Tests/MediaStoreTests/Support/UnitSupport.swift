import Foundation
import LoopbackNginx
@_exported import TestSupport
import Testing

@testable import MediaStore

/// Runs `body` in the store's write transaction (internal access for tests
/// that set up states the public API cannot make).
func withWriteTransaction<R>(_ store: MediaStore, _ body: (StoreTransaction) throws -> R) throws -> R {
    try store.write(body)
}

/// Runs `body` in a read transaction of the store.
func withReadTransaction<R>(_ store: MediaStore, _ body: (StoreTransaction) throws -> R) throws -> R {
    try store.read(body)
}

/// Runs an executable and returns its standard output (fails on a
/// non-zero exit unless `anyStatus`). It runs as a ``ChildProcess``, its
/// output written to a temporary file.
func runTool(_ path: String, _ arguments: [String], anyStatus: Bool = false) throws -> String {
    let output = temporaryPath("tool-output")
    defer { try? FileManager.default.removeItem(at: output) }
    let child = try ChildProcess(path, arguments, standardOutput: output.path)
    child.waitUntilExit()
    guard anyStatus || child.terminationStatus == 0 else {
        throw ToolFailure(
            message: "\(path) \(arguments.joined(separator: " ")) exited with \(child.terminationStatus ?? -1)")
    }
    return ChildOutput.text(output.path)
}

struct ToolFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension SplitMix64 {
    /// Like `bytes(_:)` but eight bytes per step (fast in debug builds,
    /// for multi-megabyte values). A different stream from `bytes(_:)`.
    mutating func bulkBytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset + 8 <= count {
                buffer.storeBytes(of: next(), toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            var last = next()
            while offset < count {
                buffer[offset] = UInt8(truncatingIfNeeded: last)
                last >>= 8
                offset += 1
            }
        }
        return result
    }
}
