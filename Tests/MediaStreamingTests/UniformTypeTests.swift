import MediaStreaming
import Testing

/// The MIME type to UTI mapping: exact types at once, and the others
/// with their parameters, blanks and case ignored.
@Suite struct UniformTypeTests {
    @Test(arguments: [
        ("audio/mpeg", "public.mp3"),
        ("Audio/MPEG", "public.mp3"),
        ("audio/mp4; codecs=\"mp4a.40.2\"", "com.apple.m4a-audio"),
        (" \taudio/flac \t;charset=binary", "org.xiph.flac"),
        ("audio/x-wav;", "com.microsoft.waveform-audio"),
        ("APPLICATION/VND.APPLE.MPEGURL", "public.m3u8-playlist"),
        // What MediaSniffer names an MPEG-TS segment (FuzzHTTP found it unmapped).
        ("video/mp2t", "public.mpeg-2-transport-stream"),
    ])
    func knownTypes(mimeType: String, identifier: String) {
        #expect(UniformType.identifier(forMIMEType: mimeType) == identifier)
    }

    @Test(arguments: [
        "", " ", ";", "audio", "audio/mpeg-x", "audio /mpeg", "application/octet-stream", "\u{00A0}audio/mpeg",
    ])
    func unknownTypesAreData(mimeType: String) {
        #expect(UniformType.identifier(forMIMEType: mimeType) == "public.data")
    }
}
