/// Playback prefixes of MP3 (MPEG audio) files: from the Xing/Info or
/// VBRI table of contents when there is one, otherwise by walking frame
/// headers through the bytes seen and extrapolating from their average
/// bitrate.
enum MP3Prefix {
    /// Frames that must follow a header before it is believed (a stray
    /// 0xFFE pattern in an ID3 picture is not a stream).
    private static let confirmingFrames = 3

    static func estimate(toPlay seconds: Double, in window: ByteWindow, totalLength: Int?) -> PrefixEstimate {
        guard let start = audioStart(in: window) else {
            if let tagEnd = id3End(in: window), tagEnd >= window.end { return .needsPrefix(tagEnd + 4096) }
            return .unsupported
        }
        guard let first = MPEGAudioFrameHeader(window, at: start) else { return .unsupported }
        if let answer = fromTable(seconds, first: first, start: start, window: window) { return answer }
        return walk(seconds, from: start, in: window, totalLength: totalLength)
    }

    /// The end of a leading ID3v2 tag, when there is one.
    static func id3End(in window: ByteWindow) -> Int? {
        guard window.matches("ID3", at: 0), let flags = window.byte(at: 5) else { return nil }
        var size = 0
        for offset in 6..<10 {
            guard let byte = window.byte(at: offset), byte & 0x80 == 0 else { return nil }
            size = size << 7 | Int(byte)
        }
        return 10 + size + (flags & 0x10 != 0 ? 10 : 0)
    }

    /// The first frame header that is followed by more frames.
    static func audioStart(in window: ByteWindow) -> Int? {
        var offset = id3End(in: window) ?? 0
        let limit = min(window.end, offset + 64 * 1024)
        while offset < limit {
            if confirmed(at: offset, in: window) { return offset }
            offset += 1
        }
        return nil
    }

    private static func confirmed(at offset: Int, in window: ByteWindow) -> Bool {
        var position = offset
        for index in 0...confirmingFrames {
            guard let header = MPEGAudioFrameHeader(window, at: position) else {
                // The window may end mid-stream: a header that was valid so far counts.
                return index > 0 && position + 4 > window.end
            }
            position += header.frameLength
        }
        return true
    }

    /// Uses a Xing/Info or VBRI table of contents in the first frame.
    private static func fromTable(
        _ seconds: Double, first: MPEGAudioFrameHeader, start: Int, window: ByteWindow
    ) -> PrefixEstimate? {
        let xing = start + first.xingOffset
        if window.matches("Xing", at: xing) || window.matches("Info", at: xing) {
            guard let flags = window.uint32(at: xing + 4) else { return .needsPrefix(xing + 128) }
            var field = xing + 8
            var frames: Int?
            var bytes: Int?
            var toc: [Int]?
            if flags & 1 != 0 {
                frames = window.uint32(at: field)
                field += 4
            }
            if flags & 2 != 0 {
                bytes = window.uint32(at: field)
                field += 4
            }
            if flags & 4 != 0 {
                guard window.contains(field..<field + 100) else { return .needsPrefix(field + 100) }
                toc = (0..<100).map { Int(window.byte(at: field + $0)!) }
            }
            guard let frames, let bytes, let toc, frames > 0, bytes > 0 else { return nil }
            let duration = Double(frames) * first.frameDuration
            // The table says where each 1% of the duration starts; round up to
            // the next entry so the prefix covers the time, then add a frame.
            let percent = Int(clampingUp: seconds / duration * 100, limit: 100)
            let fraction = percent >= 100 ? 256 : max(toc[percent], toc[max(0, percent - 1)])
            let end = start + bytes * fraction / 256 + maximumFrameLength(first)
            return .length(min(end, start + bytes), exact: false)
        }
        let vbri = start + 4 + 32
        if window.matches("VBRI", at: vbri) {
            guard let bytes = window.uint32(at: vbri + 10), let frames = window.uint32(at: vbri + 14),
                let entries = window.uint16(at: vbri + 18), let scale = window.uint16(at: vbri + 20),
                let entrySize = window.uint16(at: vbri + 22), let framesPerEntry = window.uint16(at: vbri + 24),
                frames > 0, (1...4).contains(entrySize), framesPerEntry > 0
            else { return .needsPrefix(vbri + 26) }
            let table = vbri + 26
            guard window.contains(table..<table + entries * entrySize) else {
                return .needsPrefix(table + entries * entrySize)
            }
            let wantedFrames = Int(clampingUp: seconds / first.frameDuration)
            var offset = start
            var covered = 0
            for entry in 0..<entries where covered < wantedFrames {
                offset += Int(window.integer(at: table + entry * entrySize, count: entrySize)!) * min(scale, 1 << 16)
                covered += framesPerEntry
            }
            let end = covered < wantedFrames ? start + bytes : offset + maximumFrameLength(first)
            return .length(min(end, start + bytes), exact: false)
        }
        return nil
    }

    /// Walks frame headers through the window; exact when the time is
    /// reached inside it.
    private static func walk(_ seconds: Double, from start: Int, in window: ByteWindow, totalLength: Int?)
        -> PrefixEstimate
    {
        guard let first = MPEGAudioFrameHeader(window, at: start) else { return .unsupported }
        // Two frames more: the encoder delay the decoder trims at the start,
        // and a leading Xing/Info frame that carries no audio.
        let target = seconds + 2 * first.frameDuration
        var position = start
        var played = 0.0
        var frames = 0
        while let header = MPEGAudioFrameHeader(window, at: position) {
            if played >= target { return .length(position, exact: true) }
            guard position + header.frameLength <= window.end else { break }
            played += header.frameDuration
            position += header.frameLength
            frames += 1
        }
        if played >= target, position == window.end || position == totalLength {
            return .length(position, exact: true)
        }
        if let totalLength, position >= totalLength { return .length(totalLength, exact: true) }
        guard frames > 0 else { return .unsupported }
        // Not reached yet: extrapolate from the average bytes per second so far.
        let bytesPerSecond = Double(position - start) / played
        let estimate = start + Int(clampingUp: (target + 1) * bytesPerSecond)
        let next = max(estimate, window.end + 4096)
        return .needsPrefix(totalLength.map { min($0, next) } ?? next)
    }

    /// The largest frame the stream's version and layer allow at its rate:
    /// a margin that always holds the frame containing the last second.
    private static func maximumFrameLength(_ header: MPEGAudioFrameHeader) -> Int {
        let top = header.version == 1 ? (header.layer == 1 ? 448_000 : 320_000) : 256_000
        let slots = header.layer == 1 ? 48 : header.samplesPerFrame / 8
        return slots * top / header.sampleRate + 4
    }
}
