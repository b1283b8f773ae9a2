import FuzzSupport
import Testing

/// Replays the FuzzPlaybackPrefix corpus through the checks the fuzz
/// target makes (FuzzTesting/Sources/FuzzPlaybackPrefix).
@Suite struct PlaybackPrefixFuzzReplayTests {
    @Test func playbackPrefixCorpus() throws {
        let inputs = try FuzzReplayTests.inputs("FuzzPlaybackPrefix")
        #expect(inputs.count >= 5)
        let answered = inputs.filter { FuzzReplayTests.replay($0, StreamingFuzzing.estimatePlaybackPrefix) == true }
        #expect(answered.count >= 3, "the fixture heads should be answered")
    }
}
