import Foundation

/// Parses HTTP dates (IMF-fixdate, RFC 850 and asctime forms).
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    static func parse(_ text: String) -> Date? {
        // HTTP dates are ASCII; corelibs Foundation's DateFormatter traps on
        // some non-ASCII text ("Incorrect range CFRange", found by FuzzHTTP).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }
}
