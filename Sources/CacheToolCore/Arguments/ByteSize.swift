/// Parses sizes such as `500`, `64k`, `10MB`, `1.5GiB` (binary units:
/// k = 1024) into bytes.
public enum ByteSize {
    /// The byte count `text` names, or `nil` when it is not a size.
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingWhitespace().lowercased()
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, number.first != ".",
            let value = Double(number)
        else { return nil }
        let unit = trimmed.dropFirst(number.count).trimmingWhitespace()
        let exponents: [String: Int] = [
            "": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
            "g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40,
        ]
        guard let exponent = exponents[String(unit)] else { return nil }
        let multiplier = Double(1 << exponent)
        let bytes = (value * multiplier).rounded(.down)
        guard bytes.isFinite, bytes >= 0, bytes < 9.0e18 else { return nil }
        return Int(bytes)
    }

    /// `1536` → `1.5 KiB`; exact below 1 KiB.
    public static func format(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard abs(bytes) >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let rounded = (value * 10).rounded() / 10
        return (rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)) + " " + units[unit]
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map(index(after:)) ?? start
        return self[start..<Swift.max(start, end)]
    }
}
