/// RFC 9110 §5.6.3 optional whitespace (`OWS`: spaces and horizontal tabs)
/// around header values and list items, trimmed on UTF-8 bytes: the
/// request path trims every `Range`, `If-Range` and `Host` value, and
/// Foundation's `trimmingCharacters(in:)` builds a character set and an
/// `NSString` each time.
extension Substring {
    /// The value without leading and trailing spaces and tabs.
    package func trimmingOWS() -> String {
        let isOWS = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = utf8.firstIndex(where: { !isOWS($0) }), let last = utf8.lastIndex(where: { !isOWS($0) })
        else { return "" }
        // The byte after the last one kept is a space, a tab or the end: a
        // character boundary, as the first byte kept is.
        return String(self[first..<utf8.index(after: last)])
    }
}

extension String {
    /// The value without leading and trailing spaces and tabs.
    package func trimmingOWS() -> String { self[...].trimmingOWS() }
}
