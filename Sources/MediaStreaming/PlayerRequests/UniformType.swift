import Foundation

/// Maps MIME types to the Uniform Type Identifiers AVFoundation wants in
/// `AVAssetResourceLoadingContentInformationRequest.contentType`.
public enum UniformType {
    private static let identifiers: [String: String] = [
        "audio/mpeg": "public.mp3", "audio/mp3": "public.mp3", "audio/mpeg3": "public.mp3",
        "audio/x-mpeg": "public.mp3",
        "audio/mp4": "com.apple.m4a-audio", "audio/x-m4a": "com.apple.m4a-audio", "audio/m4a": "com.apple.m4a-audio",
        "audio/aac": "public.aac-audio", "audio/aacp": "public.aac-audio", "audio/x-aac": "public.aac-audio",
        "audio/flac": "org.xiph.flac", "audio/x-flac": "org.xiph.flac",
        "audio/ogg": "org.xiph.ogg-audio", "audio/opus": "org.xiph.opus",
        "audio/wav": "com.microsoft.waveform-audio", "audio/x-wav": "com.microsoft.waveform-audio",
        "audio/wave": "com.microsoft.waveform-audio", "audio/vnd.wave": "com.microsoft.waveform-audio",
        "audio/aiff": "public.aiff-audio", "audio/x-aiff": "public.aiff-audio",
        "video/mp4": "public.mpeg-4", "video/quicktime": "com.apple.quicktime-movie",
        "video/mp2t": "public.mpeg-2-transport-stream",
        "application/vnd.apple.mpegurl": "public.m3u8-playlist", "audio/mpegurl": "public.m3u8-playlist",
    ]

    /// The UTI for `mimeType` (parameters and case ignored); `public.data` when unknown.
    public static func identifier(forMIMEType mimeType: String) -> String {
        if let known = identifiers[mimeType] { return known }
        // Trimmed here, not with Foundation's trimmingCharacters (an
        // NSString round trip per call).
        var bare = mimeType.prefix { $0 != ";" }
        while let first = bare.first, first == " " || first == "\t" { bare.removeFirst() }
        while let last = bare.last, last == " " || last == "\t" { bare.removeLast() }
        return identifiers[bare.lowercased()] ?? "public.data"
    }

    /// Whether `mimeType` says nothing about the content (absent, or a
    /// catch-all such as `application/octet-stream`), so the bytes should be sniffed.
    public static func isGeneric(_ mimeType: String?) -> Bool {
        guard let mimeType else { return true }
        return [
            "", "application/octet-stream", "binary/octet-stream", "application/binary", "application/unknown",
            "application/x-unknown", "application/download", "application/force-download", "text/plain",
        ].contains(mimeType.lowercased())
    }
}
