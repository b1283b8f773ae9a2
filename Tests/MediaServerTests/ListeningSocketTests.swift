import Foundation
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// ``ListeningSocket/acceptPending()``: what the accepting thread takes
/// without waiting as it hands accepting over (a burst of connections).
@Suite("MediaServer's listening socket accepts what waits, without waiting", .timeLimit(.minutes(1)))
struct ListeningSocketTests {
    @Test func acceptPendingTakesEachWaitingConnectionThenNothing() throws {
        let listener = try ListeningSocket(port: 0, allInterfaces: false)
        defer { listener.close() }
        #expect(listener.acceptPending() == nil, "nothing waits yet")
        // On loopback the handshake is done when connect(2) returns: both wait in the backlog.
        let clients = try (0..<2).map { _ in try RawClient(port: listener.port) }
        var accepted: [Int32] = []
        defer { for descriptor in accepted { _ = closeDescriptor(descriptor) } }
        for _ in clients {
            let descriptor = try #require(listener.acceptPending())
            accepted.append(descriptor)
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "accepted close-on-exec")
        }
        #expect(listener.acceptPending() == nil, "both taken, nothing left")
        // Each accepted descriptor is the server side of one client: bytes sent by client i arrive on it.
        for (index, client) in clients.enumerated() {
            client.send("client \(index)")
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = recv(accepted[index], &bytes, bytes.count, 0)
            #expect(count > 0 && String(decoding: bytes[0..<count], as: UTF8.self) == "client \(index)")
        }
        listener.close()
        #expect(listener.acceptPending() == nil, "closed")
    }
}
