import Foundation
import MediaStore
import MediaStreaming
import MediaSupport
import TestSupport
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket is closed exactly once, whatever restarts and stops
/// meet: a second close(2) of its number closes whatever the process opened
/// since under that number (an LMDB file, say).
@Suite("MediaServer closes its listening socket once", .timeLimit(.minutes(1)))
struct ListenerCloseTests {
    /// Every close(2) of a listening socket. After each socket's first
    /// close, it opens a file as the process might: it gets the freed number.
    final class CloseLog: @unchecked Sendable {
        private let lock = NSLock()
        private var closed: [(socket: ListeningSocket, descriptor: Int32)] = []
        private var files: [Int32] = []

        func record(_ socket: ListeningSocket, _ descriptor: Int32) {
            lock.withLock {
                let first = !closed.contains { $0.socket === socket }
                closed.append((socket, descriptor))
                guard first else { return }
                let file = open("/dev/null", O_RDONLY | O_CLOEXEC)
                if file >= 0 { files.append(file) }
            }
        }

        /// The descriptors of sockets closed more than once.
        var closedAgain: [Int32] {
            lock.withLock {
                closed.enumerated().filter { entry in
                    closed[..<entry.offset].contains { $0.socket === entry.element.socket }
                }.map(\.element.descriptor)
            }
        }

        /// How many sockets were closed (each is kept, so no identity is reused).
        var socketsClosed: Int {
            lock.withLock { Set(closed.map { ObjectIdentifier($0.socket) }).count }
        }

        /// Closes the files opened; returns those (by number) someone closed before.
        func closeFiles() -> [Int32] {
            lock.withLock {
                defer { files = [] }
                return files.compactMap { file in
                    guard fcntl(file, F_GETFD) != -1 else { return file }
                    _ = close(file)
                    return nil
                }
            }
        }
    }

    /// The listening sockets a server opened, the latest last (``ListenerHooks/opened``).
    final class Listeners: Sendable {
        private let opened = Locked<[ListeningSocket]>([])

        func record(_ socket: ListeningSocket) { opened.withLock { $0.append(socket) } }

        /// Breaks the latest as the OS does when it reclaims it.
        func breakLatest() { opened.current.last?.breakListening() }
    }

    /// A server over an empty store, not started, with `log` told of every
    /// close and `listeners` of every open; `hooks` adds the other seams.
    func makeServer(
        _ log: CloseLog, _ listeners: Listeners, hooks: (inout ListenerHooks) -> Void = { _ in }
    ) throws -> (MediaServer, URL) {
        let directory = temporaryPath("listener-close")
        let store = try MediaStore(directory: directory)
        var configuration = MediaServerConfiguration()
        configuration.listenerHooks.closed = { log.record($0, $1) }
        configuration.listenerHooks.opened = { listeners.record($0) }
        hooks(&configuration.listenerHooks)
        let server = MediaServer(cache: StreamingCache(store: store), configuration: configuration)
        return (server, directory)
    }

    /// The server a hook looks at (made after its configuration).
    final class ServerBox: @unchecked Sendable {
        weak var server: MediaServer?
    }

    /// A hook that fails the next `count` reopenings of a listening socket.
    static func failing(_ count: Int) -> @Sendable () -> Bool {
        let failing = Locked(count)
        return {
            failing.withLock { failing -> Bool in
                guard failing > 0 else { return true }
                failing -= 1
                return false
            }
        }
    }

    /// Waits (up to 5 s) until `condition` holds.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<500 where !condition() { try? await Task.sleep(for: .milliseconds(10)) }
        return condition()
    }

    @Test func aRestartThatCannotBindClosesTheOldSocketOnce() async throws {
        let log = CloseLog()
        let listeners = Listeners()
        // The first restart finds the port taken twice: it closes the old
        // socket to free the port, fails again, and tries later.
        let (server, directory) = try makeServer(log, listeners) { $0.mayReopen = Self.failing(2) }
        defer { try? FileManager.default.removeItem(at: directory) }
        try server.start()
        listeners.breakLatest()
        #expect(await eventually { server.statistics.listenerRestarts >= 1 })
        #expect(server.ensureListening())
        server.stop()
        #expect(log.closedAgain.isEmpty, "closed again: \(log.closedAgain)")
        #expect(log.socketsClosed == 2)
        #expect(log.closeFiles().isEmpty, "a file opened after the first close was closed by the server")
    }

    @Test func aStopDuringARestartClosesTheOldSocketOnce() async throws {
        let log = CloseLog()
        let listeners = Listeners()
        // The restart closes the old socket to free the port, opens a new
        // one, and meets stop() before installing it.
        let installing = Locked(false)
        let box = ServerBox()
        let (server, directory) = try makeServer(log, listeners) {
            $0.mayReopen = Self.failing(1)
            $0.willInstall = {
                installing.withLock { $0 = true }
                for _ in 0..<5000 where box.server?.isRunning == true { usleep(1000) }
            }
        }
        box.server = server
        defer { try? FileManager.default.removeItem(at: directory) }
        try server.start()
        listeners.breakLatest()
        #expect(await eventually { installing.current })
        server.stop()
        #expect(log.closedAgain.isEmpty, "closed again: \(log.closedAgain)")
        #expect(log.socketsClosed == 2)
        #expect(log.closeFiles().isEmpty, "a file opened after the first close was closed by the server")
    }

    @Test func ensureListeningAfterABreakWaitsForOneRestart() async throws {
        let log = CloseLog()
        let listeners = Listeners()
        let (server, directory) = try makeServer(log, listeners)
        defer { try? FileManager.default.removeItem(at: directory) }
        try server.start()
        let port = server.port
        listeners.breakLatest()
        #expect(server.ensureListening())
        #expect(server.port == port)
        server.stop()
        #expect(server.statistics.listenerRestarts == 1)
        #expect(log.closedAgain.isEmpty, "closed again: \(log.closedAgain)")
        #expect(log.closeFiles().isEmpty)
    }
}
