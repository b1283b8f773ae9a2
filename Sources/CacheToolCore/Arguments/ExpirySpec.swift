import Foundation
import MediaStore

/// Parses `put --expiry`: `never`, a duration (`90`, `90s`, `15m`, `2h`,
/// `7d`, `1w`), or an ISO 8601 date (`2030-01-01T00:00:00Z`).
public enum ExpirySpec {
    /// The expiry `text` names, or `nil` when it is none of the forms.
    public static func parse(_ text: String) -> ExpiryPolicy? {
        let trimmed = String(text.trimmingWhitespace())
        if trimmed.lowercased() == "never" { return .never }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var digits = Substring(trimmed)
        var multiplier = 1.0
        if let last = trimmed.last, let unit = units[Character(last.lowercased())] {
            digits = digits.dropLast()
            multiplier = unit
        }
        if !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Double(digits)
        {
            return .after(value * multiplier)
        }
        guard trimmed.count >= 10, trimmed.count <= 40 else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: trimmed) { return .at(date) }
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: trimmed) { return .at(date) }
        return nil
    }
}
