import Foundation

/// The `Content-Type` a local server gives an HLS resource it serves from
/// the cache, from what the resource is and its URL's extension.
public enum HLSContentType {
    /// Playlists (RFC 8216 section 4).
    public static let playlist = "application/vnd.apple.mpegurl"
    /// MPEG-2 transport stream segments, audio-only ones included.
    public static let transportStream = "video/mp2t"
    /// Keys, and anything not known.
    public static let binary = "application/octet-stream"

    /// Whether `url` names an HLS playlist (`.m3u8` or `.m3u`).
    public static func isPlaylist(_ url: URL) -> Bool {
        byExtension[url.pathExtension.lowercased()] == playlist
    }

    private static let byExtension: [String: String] = [
        "m3u8": playlist, "m3u": playlist,
        "ts": transportStream, "tsv": transportStream, "tsa": transportStream, "m2ts": transportStream,
        "mts": transportStream,
        "aac": "audio/aac", "ac3": "audio/ac3", "ec3": "audio/eac3", "mp3": "audio/mpeg",
        "m4a": "audio/mp4", "cmfa": "audio/mp4",
        "m4v": "video/mp4", "cmfv": "video/mp4",
        "vtt": "text/vtt", "webvtt": "text/vtt",
        "key": binary,
    ]

    /// Extensions of fragmented MP4 whose type depends on the track: `audio/mp4`
    /// in an audio rendition, `video/mp4` otherwise.
    private static let mp4Extensions: Set<String> = ["mp4", "m4s", "fmp4", "cmf"]

    /// The content type of a resource of `kind` at `url`, in a rendition of
    /// `mediaType` (nil for a variant's own stream): playlists are
    /// `application/vnd.apple.mpegurl` and keys `application/octet-stream`
    /// whatever their URL; other resources go by extension (`.ts`
    /// `video/mp2t`, `.aac` `audio/aac`, `.mp4`/`.m4s` `video/mp4` or, in an
    /// audio rendition, `audio/mp4`, `.m4a` `audio/mp4`, `.vtt` `text/vtt`);
    /// without a known extension a subtitle segment is `text/vtt`, an init
    /// segment MP4, and anything else `application/octet-stream`.
    public static func mimeType(for url: URL, kind: HLSResourceKind, mediaType: Rendition.MediaType? = nil) -> String {
        switch kind {
        case .masterPlaylist, .mediaPlaylist, .iFramePlaylist: return playlist
        case .key: return binary
        case .initializationSegment, .segment, .other: break
        }
        let pathExtension = url.pathExtension.lowercased()
        if mp4Extensions.contains(pathExtension) { return mediaType == .audio ? "audio/mp4" : "video/mp4" }
        if let type = byExtension[pathExtension] { return type }
        switch (kind, mediaType) {
        case (.segment, .subtitles): return "text/vtt"
        case (.initializationSegment, .audio): return "audio/mp4"
        case (.initializationSegment, _): return "video/mp4"
        default: return binary
        }
    }
}
