import Foundation
import MediaStreaming
import TestSupport
import Testing

/// The scripted origin the hostile suites build on answers as it is told:
/// a well-behaved range, and the request it logged.
@Suite("ScriptedOrigin")
struct ScriptedOriginTests {
    @Test func servesARangeAndLogsTheRequest() async throws {
        let content = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let origin = try ScriptedOrigin { request, reply in reply.serve(content, for: request) }
        defer { origin.stop() }
        let response = try await HTTPOrigin(timeout: .seconds(5)).fetch(
            OriginRequest(url: origin.url("/a.bin"), range: 100..<200))
        var body = Data()
        for try await piece in response.body { body.append(piece) }
        #expect(response.statusCode == 206)
        #expect(body == content.subdata(in: 100..<200))
        #expect(origin.requests(to: "/a.bin").map(\.range) == [100..<200])
    }
}
