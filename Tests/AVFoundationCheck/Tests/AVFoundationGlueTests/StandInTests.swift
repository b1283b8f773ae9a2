import Foundation
import MediaStreaming
import MediaStreamingAVFoundationGlue
import Testing

/// The stand-in itself: where it is visible, and that every declaration
/// cites the Apple documentation page it copies.
@Suite("AVFoundation glue: the stand-in")
struct StandInTests {
    static let standIn = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/AVFoundation")

    /// Here the stand-in sits in the same build folder as MediaStreaming, so
    /// `canImport(AVFoundation)` may well be true for it: the glue's
    /// `!os(Linux) || AVFOUNDATION_STAND_IN` must keep it out all the same.
    @Test("MediaStreaming on Linux has no glue, even beside the stand-in: only the check target compiles it")
    func mediaStreamingHasNoGlue() {
        #expect(_typeByName("MediaStreaming.StreamingItem") != nil)  // the lookup works
        #expect(_typeByName("MediaStreaming.CachingAVPlayerItem") == nil)
        #expect(_typeByName("MediaStreaming.ResourceLoaderBridge") == nil)
        #expect(_typeByName("MediaStreamingAVFoundationGlue.CachingAVPlayerItem") != nil)
    }

    @Test(
        "Every declaration of the stand-in cites its developer.apple.com page; none needs more than the package's minimums"
    )
    func declarationsCiteTheirPages() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.standIn, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        #expect(files.count >= 9)
        var declarations = 0
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
            var inSPI = false
            var inProtocol = false
            for (index, raw) in lines.enumerated() {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("@_spi(") { inSPI = true }
                if inSPI && raw.hasPrefix("}") { inSPI = false }
                if line.hasPrefix("public protocol ") { inProtocol = true }
                if inProtocol && raw.hasPrefix("}") { inProtocol = false }
                guard !inSPI else { continue }
                let modifiers = ["open ", "public ", "nonisolated public ", "nonisolated open ", "@MainActor public "]
                let isPublic = modifiers.contains { line.hasPrefix($0) } && !line.hasPrefix("public struct StandIn")
                let isRequirement = inProtocol && line.hasPrefix("func ")
                guard isPublic || isRequirement else { continue }
                declarations += 1
                // The comment block above it (attributes may stand between).
                var cited = false
                var above = index - 1
                while above >= 0 {
                    let previous = lines[above].trimmingCharacters(in: .whitespaces)
                    guard previous.hasPrefix("///") || previous.hasPrefix("@") || previous.hasPrefix("//") else {
                        break
                    }
                    if previous.contains("https://developer.apple.com/documentation/avfoundation/") { cited = true }
                    above -= 1
                }
                #expect(cited, "\(file.lastPathComponent):\(index + 1) `\(line)` cites no developer.apple.com page")
            }
            // Availability: nothing newer than Package.swift's iOS 16, macOS 13, tvOS 16.
            let minimums = ["iOS": 16.0, "macOS": 13.0, "tvOS": 16.0]
            for (index, line) in lines.enumerated() where line.contains("@available(") {
                for (platform, minimum) in minimums {
                    guard let range = line.range(of: "\(platform) ") else { continue }
                    let version = line[range.upperBound...].prefix { $0.isNumber || $0 == "." }
                    let parts = version.split(separator: ".").compactMap { Double($0) }
                    let value = (parts.first ?? 0) + (parts.count > 1 ? parts[1] / 100 : 0)
                    #expect(value <= minimum, "\(file.lastPathComponent):\(index + 1) needs \(platform) \(version)")
                }
            }
        }
        #expect(declarations >= 30)
    }
}
