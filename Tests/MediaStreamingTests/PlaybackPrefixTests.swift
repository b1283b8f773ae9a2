import Foundation
import MediaStreaming
import Testing

/// ``PlaybackPrefix`` against ffmpeg: the prefix it names must decode to
/// at least the requested time, and not much more. The fixtures
/// (Tools/make-fixtures) start with 12 s of pink noise and end with 18 s
/// of a sine, so an estimate from the average bitrate would fall short in
/// the first half: only the file's own tables or frame headers get it right.
@Suite("Playback prefixes (preload by duration)")
struct PlaybackPrefixTests {
    static let fixtures = ["cbr.mp3", "vbr.mp3", "track.m4a", "tail-moov.m4a", "track.flac"]
    /// Files whose prefix decodes alone (the index of `tail-moov.m4a` is at its end).
    static let selfContained = ["cbr.mp3", "vbr.mp3", "track.m4a", "track.flac"]

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Fixtures.data("Preload/\(name)"))
    }

    /// Asks as a preloader would: the first 64 KiB, then whatever it asks for.
    static func resolve(_ seconds: Double, _ file: [UInt8]) -> (length: Int, exact: Bool, rounds: Int)? {
        var prefix = min(file.count, 64 * 1024)
        var trailer: (offset: Int, bytes: [UInt8])?
        for round in 1...8 {
            switch PlaybackPrefix.estimate(
                toPlay: seconds, prefix: file[..<prefix], trailer: trailer, totalLength: file.count)
            {
            case .length(let length, let exact): return (length, exact, round)
            case .needsPrefix(let length):
                #expect(length > prefix, "a request for more must ask for more")
                prefix = min(file.count, length)
            case .needsRange(let range):
                trailer = (range.lowerBound, Array(file[range.clamped(to: 0..<file.count)]))
            case .unsupported: return nil
            }
        }
        return nil
    }

    @Test("The prefix decodes to at least the time asked for, and at most a second more", arguments: selfContained)
    func prefixDecodesToTheRequestedTime(name: String) throws {
        let file = try Self.fixture(name)
        for seconds in [1.0, 5, 10, 20] {
            let answer = try #require(Self.resolve(seconds, file), "\(name) \(seconds) s")
            #expect(answer.length < file.count, "\(name): \(seconds) s of 30 is not the whole file")
            let decoded = try decodedDuration(of: Data(file[..<answer.length]), name: name)
            #expect(decoded >= seconds, "\(name): \(answer.length) bytes decode to \(decoded) s < \(seconds) s")
            let slack = answer.exact ? 0.5 : 1.5
            #expect(
                decoded <= seconds + slack, "\(name): \(answer.length) bytes decode to \(decoded) s for \(seconds) s")
        }
    }

    @Test func exactWhereTheFileSaysWhereFramesAre() throws {
        #expect(try Self.resolve(10, Self.fixture("cbr.mp3"))?.exact == true)  // frame headers walked
        #expect(try Self.resolve(10, Self.fixture("vbr.mp3"))?.exact == false)  // Xing table of contents
        #expect(try Self.resolve(10, Self.fixture("track.m4a"))?.exact == true)  // sample tables
        #expect(try Self.resolve(10, Self.fixture("track.flac"))?.exact == true)  // frame headers walked
    }

    /// ffprobe's packet list is the oracle: every packet that starts
    /// before the time must lie inside the prefix.
    @Test("The prefix holds every packet that starts before the time", arguments: fixtures)
    func prefixHoldsEveryPacketBeforeTheTime(name: String) throws {
        let file = try Self.fixture(name)
        let packets = try probePackets(of: Fixtures.url("Preload/\(name)"))
        #expect(packets.count > 100)
        // The premise for the variable-bitrate files: the noisy first 12 s take far more than their share of
        // the bytes, so a guess from the average bitrate would fall short.
        let firstTen = packets.filter { $0.time < 10 }.map { $0.end }.max() ?? 0
        let audioBytes = (packets.map { $0.end }.max() ?? 0) - (packets.map { $0.end }.min() ?? 0)
        if ["vbr.mp3", "track.flac"].contains(name) {
            #expect(Double(firstTen) > Double(audioBytes) * 10 / 30 * 1.2, "\(name)")
        }
        for seconds in [1.0, 10, 20] {
            let answer = try #require(Self.resolve(seconds, file), "\(name) \(seconds) s")
            let needed = packets.filter { $0.time < seconds }.map { $0.end }.max() ?? 0
            #expect(answer.length >= needed, "\(name) \(seconds) s: \(answer.length) < \(needed)")
            let after = packets.filter { $0.time < seconds + (answer.exact ? 0.5 : 1.5) }.map { $0.end }.max() ?? 0
            #expect(answer.length <= max(after, needed), "\(name) \(seconds) s: \(answer.length) ≫ \(after)")
        }
    }

    @Test func anMP4WithItsIndexAtTheEndAsksForIt() throws {
        let file = try Self.fixture("tail-moov.m4a")
        let first = PlaybackPrefix.estimate(toPlay: 10, prefix: file[..<65_536], totalLength: file.count)
        guard case .needsRange(let range) = first else {
            Issue.record("expected a range request, got \(first)")
            return
        }
        #expect(range.upperBound == file.count)
        #expect(Array(file[range.lowerBound + 4..<range.lowerBound + 8]) == Array("moov".utf8))
    }

    @Test func theWholeTimeOrMoreIsTheWholeFile() throws {
        for name in Self.selfContained {
            let file = try Self.fixture(name)
            let answer = try #require(Self.resolve(3600, file))
            #expect(answer.length == file.count, "\(name)")
        }
    }

    @Test func otherFormatsAndGarbageAreUnsupportedNotACrash() throws {
        #expect(PlaybackPrefix.estimate(toPlay: 10, prefix: try Fixtures.data("track.ogg")) == .unsupported)
        #expect(PlaybackPrefix.estimate(toPlay: 10, prefix: try Fixtures.data("track.wav")) == .unsupported)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0..<4096, using: &generator)).map { _ in UInt8.random(in: 0...255) }
            _ = PlaybackPrefix.estimate(toPlay: 10, prefix: bytes, totalLength: bytes.count)
        }
    }

    /// Every truncation and a few hundred single-byte corruptions of the
    /// fixtures' first bytes: an answer, never a trap, and a request for
    /// more always asks for more than it was given.
    @Test(arguments: fixtures)
    func truncatedAndCorruptedHeadersNeverTrap(name: String) throws {
        let file = try Self.fixture(name)
        for length in stride(from: 0, to: min(file.count, 8192), by: 7) {
            let answer = PlaybackPrefix.estimate(toPlay: 10, prefix: file[..<length])
            if case .needsPrefix(let more) = answer { #expect(more > length) }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var bytes = Array(file[..<min(file.count, 65_536)])
            bytes[Int.random(in: 0..<min(bytes.count, 4096), using: &generator)] = UInt8.random(in: 0...255)
            let answer = PlaybackPrefix.estimate(toPlay: 10, prefix: bytes, totalLength: file.count)
            if case .length(let length, _) = answer { #expect(length >= 0 && length <= file.count) }
            if case .needsPrefix(let more) = answer { #expect(more > bytes.count) }
        }
    }
}

/// Every audio packet of a file as ffprobe lists it: its time and where it ends.
func probePackets(of file: URL) throws -> [(time: Double, end: Int)] {
    let result = try runTool([
        "ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time,pos,size", "-of",
        "csv=p=0", file.path,
    ])
    return result.output.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: ",").map(String.init)
        guard fields.count >= 3, let time = Double(fields[0]), let size = Int(fields[1]), let position = Int(fields[2])
        else { return nil }
        return (time, position + size)
    }
}

/// Decodes `bytes` with ffmpeg to nothing and returns how many seconds of
/// audio came out (what a player would play from them).
func decodedDuration(of bytes: Data, name: String) throws -> Double {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("decode-\(UUID().uuidString)-\(name)")
    try bytes.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let result = try runTool([
        "ffmpeg", "-v", "error", "-nostats", "-i", file.path, "-f", "null", "-", "-progress", "pipe:1",
    ])
    let times = result.output.split(separator: "\n").filter { $0.hasPrefix("out_time_us=") }
    guard let last = times.last, let microseconds = Double(last.dropFirst("out_time_us=".count)) else {
        throw FixtureFailure(message: "ffmpeg decoded nothing from \(name): \(result.output)")
    }
    return microseconds / 1_000_000
}
