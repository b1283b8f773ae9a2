/// How much of a resource a preload warms.
public enum PreloadAmount: Sendable, Hashable {
    /// The first bytes (exactly; the chunk holding the last one is stored short).
    case bytes(Int)
    /// The bytes that play the first seconds: for MP3, MP4/M4A and FLAC
    /// found from the file's own tables and frame headers
    /// (``PlaybackPrefix``), otherwise `fallbackBytes`.
    case duration(seconds: Double, fallbackBytes: Int = 512 * 1024)
}
