import Foundation

/// Runs blocking work (a child process, a blocking socket read) on a
/// thread of its own and awaits it, so tests never block Swift's
/// cooperative pool, which the server's loader needs to make progress.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}
