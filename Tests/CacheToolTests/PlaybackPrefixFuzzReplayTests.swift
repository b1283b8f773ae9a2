import MediaStreaming
import Testing

/// Replays the FuzzPlaybackPrefix corpus through the checks the fuzz
/// target makes (FuzzTesting/Sources/FuzzPlaybackPrefix).
@Suite struct PlaybackPrefixFuzzReplayTests {
    @Test func playbackPrefixCorpus() throws {
        let inputs = try FuzzReplayTests.inputs("FuzzPlaybackPrefix")
        #expect(inputs.count >= 5)
        var answered = 0
        for input in inputs {
            guard let selector = input.first else { continue }
            let bytes = Array(input.dropFirst())
            let total: Int? = selector & 0x80 != 0 ? bytes.count : nil
            switch PlaybackPrefix.estimate(toPlay: Double(selector & 0x7F) / 4, prefix: bytes, totalLength: total) {
            case .length(let length, _):
                answered += 1
                #expect(length >= 0 && length <= (total ?? .max))
            case .needsPrefix(let length): #expect(length > bytes.count)
            case .needsRange(let range): #expect(!range.isEmpty)
            case .unsupported: break
            }
        }
        #expect(answered >= 3, "the fixture heads should be answered")
    }
}
