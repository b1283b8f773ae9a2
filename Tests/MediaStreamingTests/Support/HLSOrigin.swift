import Foundation
import LoopbackNginx

#if canImport(Glibc)
    import Glibc
#endif

/// A real nginx serving a temporary copy of Fixtures/HLS, plus a live
/// playlist (no EXT-X-ENDLIST) and a FairPlay one, with its access log:
/// the origin of the HLS download tests, one per test (each counts its own
/// requests). Stopped and removed on deinit.
final class HLSOrigin: @unchecked Sendable {
    let directory: URL
    let root: URL
    let nginx: LoopbackNginx

    init() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = temporaryPath("hls-origin")
        root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Fixtures.directory.appendingPathComponent("HLS"), to: root)
        try Data(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:1
            #EXT-X-MEDIA-SEQUENCE:7
            #EXTINF:1.0,
            segment0.ts
            #EXTINF:1.0,
            segment1.ts

            """.utf8
        ).write(to: root.appendingPathComponent("ts/live.m3u8"))
        try Data(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:1
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-id",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXTINF:1.0,
            segment0.ts
            #EXT-X-ENDLIST

            """.utf8
        ).write(to: root.appendingPathComponent("ts/fairplay.m3u8"))
        nginx = try LoopbackNginx(
            serving: root, in: directory.appendingPathComponent("nginx"),
            httpDirectives: "keepalive_requests 100000; types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }")
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(_ path: String) -> URL { nginx.url(path) }

    /// The request paths nginx logged so far (`GET /master/high_0.ts`).
    func requests() -> [String] {
        nginx.loggedRequests().compactMap { line in
            guard let start = line.firstIndex(of: "\""),
                let end = line[line.index(after: start)...].firstIndex(of: "\"")
            else { return nil }
            let request = line[line.index(after: start)..<end].split(separator: " ")
            return request.count >= 2 ? "\(request[0]) \(request[1])" : nil
        }
    }

    /// nginx writes its log line after the response: wait until `count` lines are there.
    func waitForLog(atLeast count: Int) async {
        for _ in 0..<200 where requests().count < count { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
