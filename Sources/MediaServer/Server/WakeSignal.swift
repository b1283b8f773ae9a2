import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A self-pipe: ``signal()`` makes its ``descriptor`` readable, so a thread
/// waiting in `poll` on it (with other descriptors) wakes at once. Both ends
/// are non-blocking and close-on-exec, and both close only when it is
/// released, so a write never meets a closed read end (no `SIGPIPE`).
final class WakeSignal: Sendable {
    /// The read end, to poll for `POLLIN`.
    let descriptor: Int32
    private let writeEnd: Int32

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { Socket.setNonBlocking(end) }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        _ = closeDescriptor(descriptor)
        _ = closeDescriptor(writeEnd)
    }

    /// Wakes the waiting thread (and the next one to wait, until ``drain()``). Any thread.
    func signal() {
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) is already signalled.
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe: the next wait waits again.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, 64) }) > 0 {}
    }

    /// Waits up to `milliseconds` for ``signal()``; whether it came.
    func wait(milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }
}
