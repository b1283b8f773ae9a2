import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket used with `poll`, so every read and write has a deadline:
/// each `recv` and `send` passes `MSG_DONTWAIT`, so the descriptor itself
/// may stay blocking (a connection costs no `fcntl` calls; it must be
/// close-on-exec already, as ``ListeningSocket`` accepts it). Blocking
/// calls only: run it on a thread of its own, never on Swift's cooperative
/// pool. `shutdown()` may be called from another thread to wake a waiting
/// read or write; `close()` only by the owner.
final class Socket: @unchecked Sendable {
    private let lock = NSLock()
    private var descriptor: Int32
    /// Where ``read(into:maximum:until:)`` receives, kept between reads
    /// (reads are the owner's alone, one at a time). Never zeroed: only
    /// the bytes `recv` wrote are copied out.
    private var readBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Run once (then dropped) before the first time a read or write
    /// waits, or by ``runBeforeFirstWait()`` (the owner's thread only).
    var beforeFirstWait: (@Sendable () -> Void)?

    /// The outcome of a read.
    enum ReadResult: Equatable {
        case data(Int)
        case closed
        case timedOut
        case failed(Int32)
    }

    init(descriptor: Int32) {
        self.descriptor = descriptor
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    deinit {
        close()
        readBuffer.deallocate()
    }

    /// Makes `descriptor` non-blocking and close-on-exec (the listening socket, the wake pipe).
    static func setNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL, 0)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    private var fd: Int32 { lock.withLock { descriptor } }

    /// Appends what arrives (at most `maximum` bytes) to `buffer`, waiting until `deadline`.
    func read(into buffer: inout [UInt8], maximum: Int = 16384, until deadline: ContinuousClock.Instant) -> ReadResult {
        while true {
            let fd = self.fd
            guard fd >= 0 else { return .closed }
            if readBuffer.count < maximum {
                readBuffer.deallocate()
                readBuffer = .allocate(byteCount: maximum, alignment: 1)
            }
            let count = recv(fd, readBuffer.baseAddress, maximum, Self.dontWait)
            if count > 0 {
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
                return .data(count)
            }
            if count == 0 { return .closed }
            let error = errno
            if error == EINTR { continue }
            guard error == EAGAIN || error == EWOULDBLOCK else { return .failed(error) }
            switch wait(for: Int16(POLLIN), until: deadline) {
            case .ready: continue
            case .timedOut: return .timedOut
            case .failed(let code): return .failed(code)
            }
        }
    }

    /// Writes every byte, waiting at most `timeout` for the peer to take
    /// more each time it takes none. Returns `false` when the peer is gone,
    /// took nothing for `timeout`, or the socket was shut down.
    func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let fd = self.fd
            guard fd >= 0 else { return false }
            #if canImport(Glibc)
                let sent = send(
                    fd, bytes.baseAddress! + offset, bytes.count - offset, Self.dontWait | Int32(MSG_NOSIGNAL))
            #else
                let sent = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Self.dontWait)
            #endif
            if sent > 0 {
                offset += sent
                continue
            }
            let error = errno
            if sent < 0, error == EINTR { continue }
            guard sent < 0, error == EAGAIN || error == EWOULDBLOCK else { return false }
            // A client that closed its side while the send buffer is full is gone: its slot is freed now,
            // not after `timeout`.
            guard case .ready = wait(for: Int16(POLLOUT) | Self.readHangUp, until: .now + timeout), !peerHasClosed
            else { return false }
        }
        return true
    }

    func write(_ bytes: [UInt8], timeout: Duration) -> Bool {
        bytes.withUnsafeBytes { write($0, timeout: timeout) }
    }

    func write(_ data: Data, timeout: Duration) -> Bool {
        data.withUnsafeBytes { write($0, timeout: timeout) }
    }

    /// Runs ``beforeFirstWait`` if it has not run yet.
    func runBeforeFirstWait() {
        guard let hook = beforeFirstWait else { return }
        beforeFirstWait = nil
        hook()
    }

    private enum WaitResult { case ready, timedOut, failed(Int32) }

    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> WaitResult {
        runBeforeFirstWait()
        while true {
            let fd = self.fd
            guard fd >= 0 else { return .failed(EBADF) }
            let remaining = deadline - .now
            guard remaining > .zero else { return .timedOut }
            let (seconds, attoseconds) = remaining.components
            // One poll waits at most Int32.max ms (the loop waits again); the
            // seconds are capped first, as a far deadline's would overflow `* 1000`.
            let cappedSeconds = min(seconds, Int64(Int32.max) / 1000 + 1)
            let milliseconds = Int32(clamping: cappedSeconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let result = poll(&entry, 1, milliseconds)
            if result < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if result == 0 { continue }
            // POLLHUP/POLLERR: let the read or write itself report it.
            return .ready
        }
    }

    /// `MSG_DONTWAIT`: no call waits but `poll`.
    private static let dontWait = Int32(MSG_DONTWAIT)

    /// POLLRDHUP on Linux (Glibc leaves it out of Swift without _GNU_SOURCE); none elsewhere.
    #if canImport(Glibc)
        private static let readHangUp: Int16 = 0x2000
    #else
        private static let readHangUp: Int16 = 0
    #endif

    /// Whether the peer has closed its side or reset the connection (a
    /// half-close counts: players do not send one). Does not wait and reads
    /// nothing: bytes the peer sent ahead (a pipelined request) stay queued.
    var peerHasClosed: Bool {
        let fd = self.fd
        guard fd >= 0 else { return true }
        let events = Int16(POLLIN) | Self.readHangUp
        let hangUps = Self.readHangUp | Int16(POLLHUP) | Int16(POLLERR)
        var entry = pollfd(fd: fd, events: events, revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        if entry.revents & hangUps != 0 { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK) | Self.dontWait) == 0
    }

    /// Wakes any waiting read or write (they then fail or see the end). Any thread.
    func shutdown() {
        lock.withLock {
            if descriptor >= 0 { _ = socketShutdown(descriptor) }
        }
    }

    /// Closes the descriptor. Safe to call more than once.
    func close() {
        lock.withLock {
            if descriptor >= 0 {
                #if canImport(Glibc)
                    _ = Glibc.close(descriptor)
                #else
                    _ = Darwin.close(descriptor)
                #endif
                descriptor = -1
            }
        }
    }
}

@inline(__always)
func socketShutdown(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    #else
        Darwin.shutdown(descriptor, SHUT_RDWR)
    #endif
}
