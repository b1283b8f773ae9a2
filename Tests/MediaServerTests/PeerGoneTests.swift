import Foundation
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc

    /// Writing to a client that hung up fails the write and raises no
    /// `SIGPIPE`: the server changes no process-wide signal disposition (an
    /// app's `SIGPIPE` stays the app's), so every write path must pass
    /// `MSG_NOSIGNAL` itself.
    @Suite struct PeerGoneTests {
        /// Runs `body` on a thread of its own with `SIGPIPE` blocked (a
        /// blocked signal stays pending even where another suite ignores it)
        /// and returns whether a `SIGPIPE` came, taking it off.
        static func raisesSIGPIPE(_ body: @escaping @Sendable () -> Void) async throws -> Bool {
            try await offPool {
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                var previous = sigset_t()
                pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
                defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
                body()
                var pending = sigset_t()
                sigpending(&pending)
                let raised = sigismember(&pending, SIGPIPE) == 1
                if raised {
                    var now = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipeSignal, nil, &now)
                }
                return raised
            }
        }

        /// A connected pair of stream sockets: the server's end and the client's.
        static func pair() -> (server: Int32, client: Int32) {
            var ends: [Int32] = [-1, -1]
            let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
            precondition(made == 0, "socketpair: \(errno)")
            return (ends[0], ends[1])
        }

        @Test func thePlainWriteTheProbeCatches() async throws {
            // The probe sees a SIGPIPE when one comes: write(2) has no MSG_NOSIGNAL.
            let (server, client) = Self.pair()
            close(client)
            defer { close(server) }
            let raised = try await Self.raisesSIGPIPE {
                var byte: UInt8 = 1
                #expect(write(server, &byte, 1) == -1 && errno == EPIPE)
            }
            #expect(raised)
        }

        @Test func aWriteToAPeerThatClosedFailsWithoutSIGPIPE() async throws {
            let (server, client) = Self.pair()
            close(client)
            let socket = Socket(descriptor: server)
            let raised = try await Self.raisesSIGPIPE {
                #expect(!socket.write(Data(repeating: 7, count: 100_000), timeout: .seconds(1)))
                #expect(!socket.write([1, 2, 3], timeout: .seconds(1)))
            }
            #expect(!raised, "a write to a closed peer raised SIGPIPE")
        }

        @Test func aWriteAfterAnAbortFailsWithoutSIGPIPE() async throws {
            let (server, client) = Self.pair()
            defer { close(client) }
            let socket = Socket(descriptor: server)
            // The server's stop shuts the socket down under a connection that goes on writing.
            socket.shutdown()
            let raised = try await Self.raisesSIGPIPE {
                #expect(!socket.write(Data(repeating: 7, count: 10), timeout: .seconds(1)))
            }
            #expect(!raised, "a write after shutdown raised SIGPIPE")
        }

        @Test func aWakeSignalRaisesNoSIGPIPE() async throws {
            let wake = try #require(WakeSignal())
            let raised = try await Self.raisesSIGPIPE {
                for _ in 0..<100_000 { wake.signal() }  // far past a full pipe
                #expect(wake.wait(milliseconds: 0))
                wake.drain()
                #expect(!wake.wait(milliseconds: 0))
            }
            #expect(!raised)
        }
    }
#endif
