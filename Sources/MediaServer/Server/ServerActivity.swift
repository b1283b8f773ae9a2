import Foundation
import MediaStore
import MediaSupport

/// What one server counts and tells: its ``MediaServerStatistics`` and
/// its observers' event streams. Written by the connections and the
/// accepting thread (passed to them when they are made), read through
/// ``MediaServer/statistics`` and ``MediaServer/events()``.
final class ServerActivity: Sendable {
    private let counters = Locked(MediaServerStatistics())
    private let observers = Locked<(next: Int, all: [Int: AsyncStream<MediaServerEvent>.Continuation])>((0, [:]))

    /// Counters since the server was made (``MediaServerStatistics/activeConnections`` left to the caller).
    var statistics: MediaServerStatistics { counters.current }

    func count(_ body: (inout MediaServerStatistics) -> Void) { counters.withLock(body) }

    /// Counts one answer by its status: 5xx a server error, 4xx a client error, anything else a success.
    func countAnswer(status: Int) {
        count {
            if status >= 500 {
                $0.serverErrors += 1
            } else if status >= 400 {
                $0.clientErrors += 1
            } else {
                $0.successes += 1
            }
        }
    }

    func emit(_ event: MediaServerEvent) {
        for continuation in observers.current.all.values { continuation.yield(event) }
    }

    /// Events from now until the returned stream is dropped.
    func events() -> AsyncStream<MediaServerEvent> {
        let (stream, continuation) = AsyncStream<MediaServerEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = observers.withLock { observers -> Int in
            observers.next += 1
            observers.all[observers.next] = continuation
            return observers.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }
}
