import Foundation

/// Renders results as a Markdown table or as JSON:
/// `{"notes":[…], "results":[{"name":…, "unit":…, "value":…, "baseline":…, "baseline_value":…, "ratio":…}]}`
/// (the notes are the lines the table prints above itself: mode, sizes, machine).
struct BenchReport {
    var results: [BenchResult]
    /// Lines printed above the Markdown table (mode, sizes, machine).
    var notes: [String]

    func markdown() -> String {
        var lines = notes.map { "> " + $0 }
        if !lines.isEmpty { lines.append("") }
        lines.append("| name | unit | value | baseline | baseline_value | ratio |")
        lines.append("|---|---|---:|---|---:|---:|")
        for result in results {
            let cells = [
                result.name, result.unit, Self.format(result.value), result.baseline ?? "—",
                result.baselineValue.map(Self.format) ?? "—",
                result.ratio.map { String(format: "%.2f×", $0) } ?? "—",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        let rows = results.map { result in
            let fields = [
                "\"name\":" + Self.quoted(result.name),
                "\"unit\":" + Self.quoted(result.unit),
                "\"value\":" + Self.number(result.value),
                "\"baseline\":" + (result.baseline.map(Self.quoted) ?? "null"),
                "\"baseline_value\":" + (result.baselineValue.map(Self.number) ?? "null"),
                "\"ratio\":" + (result.ratio.map(Self.number) ?? "null"),
            ]
            return "{" + fields.joined(separator: ",") + "}"
        }
        let notes = "\"notes\":[" + notes.map(Self.quoted).joined(separator: ",") + "]"
        return "{" + notes + ",\"results\":[" + rows.joined(separator: ",") + "]}"
    }

    /// A readable number: grouped integers for large figures, a few
    /// decimals for small ones.
    static func format(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1000 {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.maximumFractionDigits = 0
            formatter.usesGroupingSeparator = true
            formatter.groupingSeparator = ","
            formatter.locale = Locale(identifier: "en_US_POSIX")
            return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value.rounded()))
        }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// A JSON number with at most four decimals (finite; JSON has no NaN).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let rounded = (value * 10_000).rounded() / 10_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return String(rounded)
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
