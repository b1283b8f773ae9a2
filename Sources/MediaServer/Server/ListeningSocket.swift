import Foundation
import MediaStore
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's listening socket: bound to `127.0.0.1` (or every
/// interface, when asked), non-blocking, close-on-exec.
///
/// ``close()`` takes the descriptor under a lock, so it is closed once
/// however often it is called: a second close(2) of the number would close
/// whatever the process opened since under it (an LMDB file, say). Only the
/// server's accepting thread waits on it and closes it, so no thread polls
/// a number another thread closed.
package final class ListeningSocket: @unchecked Sendable {
    /// The descriptor until ``close()`` takes it.
    private let open: Locked<Int32?>
    let port: Int
    /// Called with the descriptor after each close(2) of it.
    private let closed: (@Sendable (ListeningSocket, Int32) -> Void)?

    /// What waiting for a connection found.
    enum Accepted {
        case connection(Int32)
        /// Nothing yet (timeout, interrupted, a connection aborted before accept).
        case none
        /// The wake signal came.
        case woken
        /// The socket no longer listens (closed or shut down under us): restart it.
        case dead(Int32)
    }

    /// Binds and listens. `port` 0 lets the OS choose.
    /// - parameter closed: called with the descriptor after its close(2) (``ListenerHooks/closed``).
    init(
        port: Int, allInterfaces: Bool, closed: (@Sendable (ListeningSocket, Int32) -> Void)? = nil
    ) throws(MediaServerError) {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .cannotListen(port: port, reason: String(cString: strerror(errno))) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = allInterfaces ? INADDR_ANY.bigEndian : UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = closeDescriptor(fd)
            throw .cannotListen(port: port, reason: reason)
        }
        var actual = sockaddr_in()
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
        }
        Socket.setNonBlocking(fd)
        self.open = Locked(fd)
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        self.closed = closed
    }

    /// Waits up to `milliseconds` for a connection or for `wake`; when
    /// neither comes, or the wake, looks whether it still listens. Only the
    /// thread that closes it calls this.
    func accept(waiting milliseconds: Int32, wake: WakeSignal) -> Accepted {
        guard let descriptor = open.current else { return .dead(EBADF) }
        var entries = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&entries, 2, milliseconds)
        if ready < 0 { return errno == EINTR ? .none : .dead(errno) }
        if entries[1].revents != 0 {
            wake.drain()
            return isListening ? .woken : .dead(EINVAL)
        }
        if ready == 0 { return isListening ? .none : .dead(EINVAL) }
        let entry = entries[0]
        if entry.revents & Int16(POLLNVAL | POLLERR) != 0 { return .dead(EBADF) }
        #if canImport(Glibc)
            let client = Glibc.accept(descriptor, nil, nil)
        #else
            let client = Darwin.accept(descriptor, nil, nil)
        #endif
        if client >= 0 {
            // Close-on-exec at once: a process started on another thread must
            // not inherit the connection (it would hold it open after the
            // server closes it, and the client would wait for the end).
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            return .connection(client)
        }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO, EPERM:
            return isListening ? .none : .dead(errno)
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            // Out of descriptors or memory: a moment's pause (a stop still wakes it).
            _ = wake.wait(milliseconds: 20)
            return .none
        default:
            return .dead(errno)
        }
    }

    /// A connection already waiting to be accepted, without waiting; `nil`
    /// when there is none or accept(2) fails (``accept(waiting:wake:)``
    /// then sees why). Only the thread that closes it calls this.
    ///
    /// It looks first (a `poll` that does not wait) and calls accept(2)
    /// only when a connection waits: on Linux, an accept(2) that finds
    /// none makes and frees a socket file all the same, which costs as
    /// much as accepting one (and the server asks on every connection it
    /// serves, as it hands accepting over).
    func acceptPending() -> Int32? {
        guard let descriptor = open.current else { return nil }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) > 0, entry.revents & Int16(POLLIN) != 0 else { return nil }
        #if canImport(Glibc)
            let client = Glibc.accept(descriptor, nil, nil)
        #else
            let client = Darwin.accept(descriptor, nil, nil)
        #endif
        guard client >= 0 else { return nil }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        return client
    }

    /// Whether the socket still listens (`SO_ACCEPTCONN`).
    var isListening: Bool {
        open.withLock { descriptor in
            guard let descriptor else { return false }
            var value: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &value, &size) == 0 else { return false }
            return value != 0
        }
    }

    /// Stops listening as the OS does when it reclaims the socket (tests of
    /// the restart reach it through ``ListenerHooks/opened``).
    package func breakListening() {
        open.withLock { descriptor in
            if let descriptor { _ = socketShutdown(descriptor) }
        }
    }

    /// Closes the descriptor the first time; later calls do nothing.
    func close() {
        let taken = open.withLock { open -> Int32? in
            let descriptor = open
            open = nil
            return descriptor
        }
        guard let descriptor = taken else { return }
        _ = closeDescriptor(descriptor)
        closed?(self, descriptor)
    }
}

func closeDescriptor(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(descriptor)
    #else
        Darwin.close(descriptor)
    #endif
}
