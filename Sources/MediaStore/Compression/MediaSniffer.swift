/// Recognises media formats from their first bytes.
public enum MediaSniffer {
    /// The MIME type the leading bytes announce, or `nil`.
    ///
    /// Knows ID3-tagged and raw MPEG audio, ADTS AAC, FLAC, Ogg, RIFF/WAVE,
    /// MP4/M4A (`ftyp`), MPEG-TS (an HLS segment: a packet of the program
    /// association table first), JPEG, PNG and WebP.
    public static func mimeType(of prefix: some Collection<UInt8>) -> String? {
        let b = Array(prefix.prefix(16))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<offset + magic.count]) == magic
        }
        if starts(Array("ID3".utf8)) { return "audio/mpeg" }
        if starts(Array("fLaC".utf8)) { return "audio/flac" }
        if starts(Array("OggS".utf8)) { return "audio/ogg" }
        if starts(Array("RIFF".utf8)) && starts(Array("WAVE".utf8), at: 8) { return "audio/wav" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
            return brand.hasPrefix("M4A") || brand.hasPrefix("M4B") ? "audio/mp4" : "video/mp4"
        }
        // MPEG-TS: sync byte 0x47, no transport error, PID 0 (the PAT, which
        // every segment starts with), a payload or adaptation field. "G@\0"
        // is no text's beginning.
        if b.count >= 4 && b[0] == 0x47 && b[1] & 0x9F == 0 && b[2] == 0 && b[3] & 0x30 != 0 {
            return "video/mp2t"
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if b.count >= 2 && b[0] == 0xFF {
            // ADTS: 12-bit sync, layer bits 00. MPEG audio: 11-bit sync, layer != 00.
            if b[1] & 0xF6 == 0xF0 { return "audio/aac" }
            if b[1] & 0xE0 == 0xE0 && b[1] & 0x06 != 0 { return "audio/mpeg" }
        }
        return nil
    }

    /// Whether the leading bytes announce an already-compressed format,
    /// for which a zstd attempt is wasted work.
    ///
    /// Besides the formats ``mimeType(of:)`` knows, fragmented-MP4 media
    /// segments (HLS/CMAF: a `styp`, `moof` or `sidx` box first) count.
    public static func isCompressedMedia(_ prefix: some Collection<UInt8>) -> Bool {
        let b = Array(prefix.prefix(8))
        if b.count == 8, ["styp", "moof", "sidx"].contains(String(decoding: b[4..<8], as: UTF8.self)) {
            return true
        }
        guard let mime = mimeType(of: prefix) else { return false }
        return mime != "audio/wav"
    }
}
