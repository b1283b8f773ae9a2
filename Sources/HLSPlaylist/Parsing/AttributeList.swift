/// The attribute list of a tag (`NAME=value,NAME="quoted, value"`), per
/// RFC 8216 section 4.2: names of `[A-Z0-9-]`, values either a quoted
/// string (which may hold commas) or an unquoted run up to the next comma.
/// Each value is a slice of the line, so a rewriter can replace exactly its
/// characters. Spaces around the separators are tolerated; a name given
/// twice, a missing `=`, an empty unquoted value or an unterminated quote
/// is an error carrying the tag and line.
struct AttributeList: Sendable {
    struct Attribute: Sendable {
        let name: Substring
        /// The value without its quotes.
        let value: Substring
        let isQuoted: Bool
    }

    let tag: String
    let line: Int
    private(set) var attributes: [Attribute] = []

    init(_ text: Substring, tag: String, line: Int) throws(PlaylistError) {
        self.tag = tag
        self.line = line
        let utf8 = text.utf8
        var index = utf8.startIndex
        var names: Set<Substring> = []
        func skipSpaces() {
            while index < utf8.endIndex, utf8[index] == UInt8(ascii: " ") || utf8[index] == UInt8(ascii: "\t") {
                index = utf8.index(after: index)
            }
        }
        while true {
            skipSpaces()
            guard index < utf8.endIndex else { break }
            let nameStart = index
            while index < utf8.endIndex, Self.isNameByte(utf8[index]) { index = utf8.index(after: index) }
            let name = text[nameStart..<index]
            guard !name.isEmpty else { throw malformed("an attribute without a name") }
            guard index < utf8.endIndex, utf8[index] == UInt8(ascii: "=") else {
                throw malformed("\(name.prefix(40)) is not followed by =")
            }
            index = utf8.index(after: index)
            let value: Substring
            let isQuoted: Bool
            if index < utf8.endIndex, utf8[index] == UInt8(ascii: "\"") {
                let valueStart = utf8.index(after: index)
                guard let close = utf8[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else {
                    throw malformed("the value of \(name.prefix(40)) has no closing quote")
                }
                value = text[valueStart..<close]
                isQuoted = true
                index = utf8.index(after: close)
                skipSpaces()
                if index < utf8.endIndex {
                    guard utf8[index] == UInt8(ascii: ",") else {
                        throw malformed("text after the quoted value of \(name.prefix(40))")
                    }
                    index = utf8.index(after: index)
                }
            } else {
                let valueStart = index
                while index < utf8.endIndex, utf8[index] != UInt8(ascii: ",") { index = utf8.index(after: index) }
                var valueEnd = index
                while valueEnd > valueStart {
                    let before = utf8.index(before: valueEnd)
                    guard utf8[before] == UInt8(ascii: " ") || utf8[before] == UInt8(ascii: "\t") else { break }
                    valueEnd = before
                }
                value = text[valueStart..<valueEnd]
                isQuoted = false
                guard !value.isEmpty else { throw malformed("\(name.prefix(40)) has an empty value") }
                guard !value.utf8.contains(UInt8(ascii: "\"")) else {
                    throw malformed("a stray quote in the value of \(name.prefix(40))")
                }
                if index < utf8.endIndex { index = utf8.index(after: index) }
            }
            guard names.insert(name).inserted else {
                throw PlaylistError(line: line, reason: .duplicateAttribute(tag: tag, attribute: String(name)))
            }
            attributes.append(Attribute(name: name, value: value, isQuoted: isQuoted))
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-")
    }

    private func malformed(_ detail: String) -> PlaylistError {
        PlaylistError(line: line, reason: .malformedAttributeList(tag: tag, detail: detail))
    }

    func invalid(_ name: String, _ value: Substring) -> PlaylistError {
        PlaylistError(line: line, reason: .invalidAttribute(tag: tag, attribute: name, value: String(value)))
    }

    func missing(_ name: String) -> PlaylistError {
        PlaylistError(line: line, reason: .missingAttribute(tag: tag, attribute: name))
    }

    /// The attribute called `name`, if present.
    subscript(name: String) -> Attribute? { attributes.first { $0.name == name } }

    /// A quoted-string attribute; an unquoted value is an error.
    func quotedString(_ name: String) throws(PlaylistError) -> String? {
        guard let attribute = self[name] else { return nil }
        guard attribute.isQuoted else { throw invalid(name, attribute.value) }
        return String(attribute.value)
    }

    /// A quoted-string attribute that must be present.
    func requiredQuotedString(_ name: String) throws(PlaylistError) -> String {
        guard let value = try quotedString(name) else { throw missing(name) }
        return value
    }

    /// An enumerated-string attribute (unquoted); a quoted value is an error.
    func enumeratedString(_ name: String) throws(PlaylistError) -> Substring? {
        guard let attribute = self[name] else { return nil }
        guard !attribute.isQuoted else { throw invalid(name, attribute.value) }
        return attribute.value
    }

    /// A decimal-integer attribute (unquoted digits that fit an `Int`).
    func decimalInteger(_ name: String) throws(PlaylistError) -> Int? {
        guard let attribute = self[name] else { return nil }
        guard !attribute.isQuoted, let value = ByteRange.decimalInteger(attribute.value) else {
            throw invalid(name, attribute.value)
        }
        return value
    }

    /// A decimal-floating-point attribute (unquoted, non-negative, finite).
    func decimalFloat(_ name: String) throws(PlaylistError) -> Double? {
        guard let attribute = self[name] else { return nil }
        guard !attribute.isQuoted, let value = PlaylistParser.decimalFloat(attribute.value) else {
            throw invalid(name, attribute.value)
        }
        return value
    }

    /// A `YES`/`NO` attribute.
    func yesNo(_ name: String) throws(PlaylistError) -> Bool? {
        guard let value = try enumeratedString(name) else { return nil }
        switch value {
        case "YES": return true
        case "NO": return false
        default: throw invalid(name, value)
        }
    }

    /// A hexadecimal-sequence attribute (`0x` then hex digits) of at most
    /// `bytes` bytes, left-padded with zeros to exactly `bytes`.
    func hexadecimalSequence(_ name: String, bytes: Int) throws(PlaylistError) -> [UInt8]? {
        guard let attribute = self[name] else { return nil }
        let value = attribute.value
        guard !attribute.isQuoted, value.hasPrefix("0x") || value.hasPrefix("0X") else { throw invalid(name, value) }
        let digits = Array(value.utf8.dropFirst(2))
        guard !digits.isEmpty, digits.count <= bytes * 2 else { throw invalid(name, value) }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(bytes * 2)
        nibbles.append(contentsOf: repeatElement(0, count: bytes * 2 - digits.count))
        for digit in digits {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(digit - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(digit - UInt8(ascii: "A") + 10)
            default: throw invalid(name, value)
            }
        }
        return (0..<bytes).map { nibbles[2 * $0] << 4 | nibbles[2 * $0 + 1] }
    }

    /// A decimal-resolution attribute (`1280x720`).
    func resolution(_ name: String) throws(PlaylistError) -> Resolution? {
        guard let attribute = self[name] else { return nil }
        guard !attribute.isQuoted, let value = Resolution(parsing: attribute.value) else {
            throw invalid(name, attribute.value)
        }
        return value
    }
}
