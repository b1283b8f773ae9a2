import Foundation

/// Reads this process's memory figures from `/proc/self/status` (Linux).
/// Elsewhere every figure is `nil`.
enum MemoryProbe {
    /// Resident set size now, in bytes (`VmRSS`).
    static func residentBytes() -> Int? { field("VmRSS:") }

    /// Peak resident set size of the process so far, in bytes (`VmHWM`).
    static func peakResidentBytes() -> Int? { field("VmHWM:") }

    /// Resident anonymous memory (heap, stacks) now, in bytes (`RssAnon`).
    static func anonymousBytes() -> Int? { field("RssAnon:") }

    /// Resident file-backed memory (mapped files such as `data.mdb`) now,
    /// in bytes (`RssFile`).
    static func fileBackedBytes() -> Int? { field("RssFile:") }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let number = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                Int($0)
            }
            return number.map { $0 * 1024 }  // the file says kB
        }
        return nil
    }
}
