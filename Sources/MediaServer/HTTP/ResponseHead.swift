import Foundation

/// A response's status line and header fields, serialized for the wire.
///
/// Values are sanitized as they are added: CR, LF and other control
/// characters become spaces, so nothing taken from an origin (a content
/// type, an entity tag) can end the head early or add a field.
///
/// ```swift
/// var head = ResponseHead(status: 206)
/// head.add("Content-Range", "bytes 0-99/1000")
/// socket.write(head.serialized())
/// ```
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public private(set) var fields: [Field]

    /// One header field.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public init(status: Int, fields: [(String, String)] = []) {
        self.status = status
        self.fields = []
        for (name, value) in fields { add(name, value) }
    }

    /// Appends a field; the value is sanitized, a name that is not a token is dropped.
    public mutating func add(_ name: String, _ value: String) {
        guard !name.isEmpty, name.utf8.allSatisfy(HTTPRequestParser.isTokenByte) else { return }
        let isControl = { (byte: UInt8) in byte < 0x20 || byte == 0x7F }
        guard value.utf8.contains(where: isControl) else { return fields.append(Field(name: name, value: value)) }
        let clean = String(decoding: value.utf8.map { isControl($0) ? 0x20 : $0 }, as: UTF8.self)
        fields.append(Field(name: name, value: clean))
    }

    /// Replaces every field named `name` with one holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
        add(name, value)
    }

    /// The value of the first field named `name`.
    public func value(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// The head as sent: `HTTP/1.1 status reason`, the fields, an empty line.
    public func serialized() -> [UInt8] {
        let reason = HTTPStatus.reason(status)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            fields.reduce(reason.utf8.count + 20) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(status).utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: reason.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
        for field in fields {
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    /// A complete small response with a plain-text body (errors, `/ping`).
    public static func text(
        status: Int, _ body: String, closing: Bool, method: String = "GET", extra: [(String, String)] = []
    ) -> [UInt8] {
        let payload = Array((body + "\n").utf8)
        var head = ResponseHead(status: status)
        head.add("Content-Type", "text/plain; charset=utf-8")
        head.add("Content-Length", String(payload.count))
        head.add("Cache-Control", "no-store")
        for (name, value) in extra { head.add(name, value) }
        if closing { head.add("Connection", "close") }
        return head.serialized() + (method == "HEAD" ? [] : payload)
    }
}
