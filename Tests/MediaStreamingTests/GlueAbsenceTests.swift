import Foundation
import MediaStreaming
import MediaStreamingAVFoundation
import Testing

/// The AVFoundation glue is Apple-only: on Linux, its module is empty (the
/// glue is compiled and tested against an API stand-in in the separate
/// package Tests/AVFoundationCheck, which Tools/test builds).
@Suite("MediaStreamingAVFoundation on Linux has no AVFoundation glue")
struct GlueAbsenceTests {
    @Test("No CachingAVPlayerItem or ResourceLoaderBridge off Apple platforms")
    func noGlue() {
        #expect(_typeByName("MediaStreaming.StreamingItem") != nil)  // the lookup itself works
        #if !canImport(Darwin)
            #expect(_typeByName("MediaStreaming.CachingAVPlayerItem") == nil)
            #expect(_typeByName("MediaStreamingAVFoundation.CachingAVPlayerItem") == nil)
            #expect(_typeByName("MediaStreamingAVFoundation.ResourceLoaderBridge") == nil)
        #endif
    }
}
