import Foundation
import LoopbackNginx
import MediaServer
import Testing

/// Real players through the server: ffprobe/ffmpeg decode and seek,
/// a replay with the origin gone, several clients sharing one download,
/// a client killed mid-body.
@Suite("MediaServer with ffmpeg and concurrent clients", .serialized, .timeLimit(.minutes(3)))
struct PlayerTests {
    @Test(arguments: ["track.mp3", "track.m4a", "track.flac"])
    func decodesWholeTrackWithExactDuration(_ name: String) async throws {
        let fixture = try ServerFixture()
        let file = ServerFixture.fixtures.appendingPathComponent(name).path
        let local = fixture.local(name).absoluteString
        let expected = try #require(try await FFmpeg.duration(file))
        #expect(try await FFmpeg.duration(local) == expected)
        let decodedFile = try #require(try await FFmpeg.decode(file))
        let decoded = try #require(try await FFmpeg.decode(local))
        #expect(decoded == decodedFile, "decoded \(decoded) s through the server, \(decodedFile) s from the file")
        #expect(abs(decoded - expected) < 0.1)
    }

    @Test func seekInTheMiddleFetchesAroundTheSeek() async throws {
        let fixture = try ServerFixture()
        let local = fixture.local("long.wav").absoluteString
        let decoded = try #require(try await FFmpeg.decode(local, extra: ["-ss", "230"]))
        #expect(abs(decoded - 10) < 0.1, "decoded \(decoded) s after seeking to 230 s of 240")
        let length = ServerFixture.longTrack.count
        // ffmpeg asked for the end with its own Range request: the cache holds
        // the start (what was read ahead before the seek) and the end, not
        // everything before the seek point.
        let cached = try fixture.cache.cachedRanges(for: fixture.originURL("long.wav")).reduce(0) { $0 + $1.count }
        #expect(cached < length * 3 / 4, "cached \(cached) of \(length)")
        #expect(fixture.origin.rangeHeaders.contains { !$0.hasPrefix("bytes=0-") })
    }

    @Test func secondRunWithTheOriginStoppedNeedsNoRequest() async throws {
        let fixture = try ServerFixture()
        let local = fixture.local("track.flac").absoluteString
        let first = try #require(try await FFmpeg.decode(local))
        // ffmpeg reads what it needs; fetch the rest (curl) so every byte is cached.
        #expect(try await Curl.run([local]).status == 200)
        #expect(try await fixture.waitUntilCached("track.flac"))
        fixture.nginx.stop()
        let before = fixture.origin.requestCount
        let second = try #require(try await FFmpeg.decode(local))
        #expect(second == first)
        #expect(fixture.origin.requestCount == before, "no origin request with the origin gone")
    }

    @Test func severalClientsShareOneDownload() async throws {
        // A slowed origin, so the clients overlap for the whole download.
        let fixture = try ServerFixture(delayPerPiece: .milliseconds(2))
        let url = fixture.local("big.bin").absoluteString
        let clients = 4
        let results = try await withThrowingTaskGroup(of: Curl.Result.self) { group in
            for _ in 0..<clients { group.addTask { try await Curl.run([url], timeout: 60) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 200 && result.body == ServerFixture.bigData) }
        let length = ServerFixture.bigLength
        #expect(
            fixture.origin.bodyBytes < length + length / 4,
            "origin bytes \(fixture.origin.bodyBytes) for \(clients) clients of \(length)")
        #expect(fixture.server.statistics.bodyBytesSent == clients * length)
    }

    @Test func clientKilledMidBodyLeavesTheOthersUnharmed() async throws {
        // A slowed origin: the 10 MiB body takes seconds, so the kill lands mid-body.
        let fixture = try ServerFixture(delayPerPiece: .milliseconds(5))
        let url = fixture.local("long.wav").absoluteString
        let victim = try ChildProcess("curl", ["-sS", "--limit-rate", "500k", "-o", "/dev/null", url])
        let survivor = Task { try await Curl.run([url], timeout: 60) }
        for _ in 0..<500 where fixture.server.statistics.bodyBytesSent < 256 << 10 {
            try await Task.sleep(for: .milliseconds(10))
        }
        victim.kill(SIGKILL)
        await victim.exit()
        let result = try await survivor.value
        #expect(result.status == 200 && result.body == ServerFixture.longTrack)
        for _ in 0..<1000 where fixture.server.statistics.activeConnections > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.server.statistics.activeConnections == 0)
        #expect(fixture.server.statistics.responsesCut == 1)
        let ping = try await Curl.run([fixture.server.baseURL!.absoluteString + "/ping"])
        #expect(ping.status == 200)
    }

    @Test func stalledClientHoldsBoundedMemory() async throws {
        let fixture = try ServerFixture(
            configuration: MediaServerConfiguration(sendTimeout: .seconds(1), responseBufferBytes: 64 << 10))
        let client = try RawClient(port: fixture.port, receiveBuffer: 4096)
        // Asks for 10 MiB and reads nothing: the socket buffers fill, the
        // server stops asking the loader for more, then lets the client go.
        client.send("GET \(fixture.local("long.wav").path) HTTP/1.1\r\nHost: 127.0.0.1:\(fixture.port)\r\n\r\n")
        for _ in 0..<1500 where fixture.server.statistics.responsesCut == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.server.statistics.responsesCut == 1)
        #expect(fixture.server.statistics.bodyBytesSent < ServerFixture.longTrack.count / 2)
        #expect(fixture.cache.statistics.peakReaderBacklogBytes <= 4 << 20)
    }
}
