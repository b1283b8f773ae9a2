/// `Transfer-Encoding: chunked` framing (RFC 9112 §7.1), for a body whose
/// length is not known when its head is sent.
public enum ChunkedEncoder {
    /// One chunk carrying `bytes`: hex size, CRLF, data, CRLF; empty for no bytes
    /// (an empty chunk would end the body).
    public static func chunk(_ bytes: some Collection<UInt8>) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        return Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10]
    }

    /// The last chunk and the empty trailer section.
    public static let end: [UInt8] = Array("0\r\n\r\n".utf8)
}
