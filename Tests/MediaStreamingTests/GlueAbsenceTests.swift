import Foundation
import MediaStreaming
import Testing

/// The AVFoundation glue is Apple-only: on Linux, MediaStreaming must not
/// contain it (it is compiled and tested against an API stand-in in the
/// separate package Tests/AVFoundationCheck, which Tools/test builds).
@Suite("MediaStreaming on Linux has no AVFoundation glue")
struct GlueAbsenceTests {
    @Test("No CachingAVPlayerItem or ResourceLoaderBridge in MediaStreaming off Apple platforms")
    func noGlue() {
        #expect(_typeByName("MediaStreaming.StreamingItem") != nil)  // the lookup itself works
        #if !canImport(Darwin)
            #expect(_typeByName("MediaStreaming.CachingAVPlayerItem") == nil)
            #expect(_typeByName("MediaStreaming.ResourceLoaderBridge") == nil)
        #endif
    }
}
