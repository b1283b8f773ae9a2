import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A hand-driven TCP client for hostile requests (slow heads, garbage,
/// oversize headers) that no well-behaved client would send.
final class RawClient: @unchecked Sendable {
    let descriptor: Int32

    /// - parameter receiveBuffer: a small `SO_RCVBUF`, for a client that should fill up quickly.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = Self.loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard result == 0 else {
            close(descriptor)
            throw CocoaError(.fileReadUnknown)
        }
    }

    deinit { close(descriptor) }

    /// 127.0.0.1:`port`.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            == bytes.count
    }

    /// Everything the server sends until it closes the connection (or 10 s pass), off the pool.
    func readToEnd() async -> String {
        let descriptor = self.descriptor
        return (try? await offPool { Self.readToEnd(descriptor) }) ?? ""
    }

    static func readToEnd(_ descriptor: Int32) -> String {
        var result = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The status code of the first response in `text`.
    static func status(_ text: String) -> Int? {
        guard text.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }
}
