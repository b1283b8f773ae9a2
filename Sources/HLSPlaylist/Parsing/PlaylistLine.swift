/// One line of a playlist's bytes: where its content is and where its
/// line end is. Lines end with LF or CRLF (RFC 8216 section 4.1); the
/// last line may have no line end.
package struct PlaylistLine: Sendable, Equatable {
    /// 1-based.
    let number: Int
    /// The content, without the line end.
    let content: Range<Int>
    /// The content and the line end (`\n`, `\r\n` or nothing).
    let whole: Range<Int>

    /// The lines of `bytes`. An empty text has no lines; a text ending
    /// with a line end has no empty line after it.
    package static func split(_ bytes: [UInt8]) -> [PlaylistLine] {
        var lines: [PlaylistLine] = []
        var start = 0
        var number = 1
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            let end = index > start && bytes[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
            lines.append(PlaylistLine(number: number, content: start..<end, whole: start..<(index + 1)))
            number += 1
            start = index + 1
        }
        if start < bytes.count {
            lines.append(PlaylistLine(number: number, content: start..<bytes.count, whole: start..<bytes.count))
        }
        return lines
    }

    /// The UTF-8 byte order mark.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Whether `bytes` are valid UTF-8.
    static func isValidUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
