/// Playback prefixes of MP4/M4A files: the `moov` box's sample tables
/// (`stts`, `stsc`, `stsz`, `stco`/`co64`, and an `elst` priming offset)
/// give the byte where each audio or video track passes the requested
/// time; the prefix also holds `moov` itself.
enum MP4Prefix {
    private struct Box {
        let type: String
        let start: Int
        let body: Int
        let end: Int?
    }

    static func isMP4(_ window: ByteWindow) -> Bool { window.matches("ftyp", at: 4) }

    static func estimate(toPlay seconds: Double, in window: ByteWindow, trailer: ByteWindow?, totalLength: Int?)
        -> PrefixEstimate
    {
        var offset = 0
        var mediaEnd = 0
        while let box = box(at: offset, in: window) {
            if box.type == "moov" {
                guard let end = box.end else { return .unsupported }
                guard end <= window.end else { return .needsPrefix(end) }
                guard let tracksEnd = sampleEnd(toPlay: seconds, moov: box, in: window) else { return .unsupported }
                return .length(max(end, tracksEnd), exact: true)
            }
            guard let end = box.end else { return .unsupported }
            if box.type == "mdat" { mediaEnd = end }
            offset = end
        }
        if offset >= window.end, mediaEnd == 0 { return .needsPrefix(offset + 64 * 1024) }
        // `moov` after the media data: walk on through the bytes fetched from there.
        guard mediaEnd > 0 else { return .unsupported }
        offset = max(offset, mediaEnd)
        if let trailer, trailer.base <= offset {
            while let next = box(at: offset, in: trailer), let end = next.end {
                if next.type == "moov" {
                    guard end <= trailer.end else { return .needsRange(offset..<end) }
                    guard let tracksEnd = sampleEnd(toPlay: seconds, moov: next, in: trailer) else {
                        return .unsupported
                    }
                    return .length(tracksEnd, exact: true)
                }
                offset = end
            }
        }
        if let totalLength, offset >= totalLength { return .unsupported }
        return .needsRange(offset..<(totalLength ?? offset + 1 << 20))
    }

    private static func box(at offset: Int, in window: ByteWindow) -> Box? {
        guard let size = window.uint32(at: offset), window.contains(offset + 4..<offset + 8) else { return nil }
        let type = String(decoding: window.bytes[offset + 4 - window.base..<offset + 8 - window.base], as: UTF8.self)
        switch size {
        case 0: return Box(type: type, start: offset, body: offset + 8, end: nil)
        case 1:
            guard let large = window.uint64(at: offset + 8), large >= 16, large < UInt64(Int.max / 2) else {
                return nil
            }
            return Box(type: type, start: offset, body: offset + 16, end: offset + Int(large))
        case 2..<8: return nil
        default: return Box(type: type, start: offset, body: offset + 8, end: offset + size)
        }
    }

    private static func children(of parent: Box, in window: ByteWindow) -> [Box] {
        var result: [Box] = []
        var offset = parent.body
        let end = parent.end ?? window.end
        while offset < end, let child = box(at: offset, in: window), let childEnd = child.end, childEnd <= end {
            result.append(child)
            offset = childEnd
        }
        return result
    }

    private static func child(_ path: [String], of parent: Box, in window: ByteWindow) -> Box? {
        var current = parent
        for type in path {
            guard let next = children(of: current, in: window).first(where: { $0.type == type }) else { return nil }
            current = next
        }
        return current
    }

    /// The byte after the last sample any audio or video track needs.
    private static func sampleEnd(toPlay seconds: Double, moov: Box, in window: ByteWindow) -> Int? {
        var end: Int?
        for track in children(of: moov, in: window) where track.type == "trak" {
            guard let handler = child(["mdia", "hdlr"], of: track, in: window),
                let kind = window.integer(at: handler.body + 8, count: 4),
                kind == 0x736F_756E || kind == 0x7669_6465  // "soun", "vide"
            else { continue }
            guard let trackEnd = trackEnd(toPlay: seconds, track: track, in: window) else { return nil }
            end = max(end ?? 0, trackEnd)
        }
        return end
    }

    private static func trackEnd(toPlay seconds: Double, track: Box, in window: ByteWindow) -> Int? {
        guard let header = child(["mdia", "mdhd"], of: track, in: window), let version = window.byte(at: header.body),
            let timescale = window.uint32(at: header.body + (version == 1 ? 20 : 12)), timescale > 0,
            let table = child(["mdia", "minf", "stbl"], of: track, in: window)
        else { return nil }
        var target = Int(clampingUp: seconds * Double(timescale))
        if let edits = child(["edts", "elst"], of: track, in: window), let editVersion = window.byte(at: edits.body),
            let count = window.uint32(at: edits.body + 4), count > 0
        {
            let field = edits.body + 8 + (editVersion == 1 ? 8 : 4)
            if let media = window.integer(at: field, count: editVersion == 1 ? 8 : 4) {
                let signed = editVersion == 1 ? Int(Int64(bitPattern: media)) : Int(Int32(truncatingIfNeeded: media))
                if signed > 0 { target += min(signed, 1 << 52) }
            }
        }
        let samples = samplesNeeded(before: target, table: table, in: window)
        guard let samples, let location = sampleLocation(max(0, samples - 1), table: table, in: window) else {
            return nil
        }
        return location
    }

    /// How many samples start before media time `target` (from `stts`).
    private static func samplesNeeded(before target: Int, table: Box, in window: ByteWindow) -> Int? {
        guard let times = child(["stts"], of: table, in: window), let count = window.uint32(at: times.body + 4) else {
            return nil
        }
        var time = 0
        var samples = 0
        for entry in 0..<count {
            guard let run = window.uint32(at: times.body + 8 + entry * 8),
                let delta = window.uint32(at: times.body + 12 + entry * 8)
            else { return nil }
            // The sums are kept below 2^52 so nothing from the file can overflow.
            let product = run.multipliedReportingOverflow(by: delta)
            let span = product.overflow ? 1 << 52 : min(product.partialValue, 1 << 52)
            if delta > 0, time + span >= target {
                return samples + (target - time + delta - 1) / delta
            }
            time = min(time + span, 1 << 52)
            samples = min(samples + run, 1 << 52)
        }
        return samples
    }

    /// The byte after sample `index` (0-based), from `stsc`, `stsz` and `stco`/`co64`.
    private static func sampleLocation(_ index: Int, table: Box, in window: ByteWindow) -> Int? {
        guard let sizes = child(["stsz"], of: table, in: window), let fixedSize = window.uint32(at: sizes.body + 4),
            let sampleCount = window.uint32(at: sizes.body + 8), sampleCount > 0,
            let toChunk = child(["stsc"], of: table, in: window),
            let runs = window.uint32(at: toChunk.body + 4), runs > 0
        else { return nil }
        let sample = min(index, sampleCount - 1)
        func size(_ i: Int) -> Int? { fixedSize != 0 ? fixedSize : window.uint32(at: sizes.body + 12 + i * 4) }
        var offsets: (box: Box, wide: Bool)
        if let narrow = child(["stco"], of: table, in: window) {
            offsets = (narrow, false)
        } else if let wide = child(["co64"], of: table, in: window) {
            offsets = (wide, true)
        } else {
            return nil
        }
        guard let chunkCount = window.uint32(at: offsets.box.body + 4) else { return nil }
        // Find the chunk holding `sample` and its first sample.
        var firstSampleOfRun = 0
        for run in 0..<runs {
            guard let firstChunk = window.uint32(at: toChunk.body + 8 + run * 12),
                let perChunk = window.uint32(at: toChunk.body + 12 + run * 12), firstChunk >= 1, perChunk > 0
            else { return nil }
            let nextChunk = run + 1 < runs ? window.uint32(at: toChunk.body + 8 + (run + 1) * 12) : chunkCount + 1
            guard let nextChunk, nextChunk > firstChunk else { return nil }
            let runSamples = min((nextChunk - firstChunk) * perChunk, 1 << 52)
            if sample < firstSampleOfRun + runSamples {
                let chunk = firstChunk - 1 + (sample - firstSampleOfRun) / perChunk
                let firstInChunk = firstSampleOfRun + (sample - firstSampleOfRun) / perChunk * perChunk
                let entry = offsets.box.body + 8 + chunk * (offsets.wide ? 8 : 4)
                guard chunk < chunkCount, let base = window.integer(at: entry, count: offsets.wide ? 8 : 4),
                    base < UInt64(Int.max / 2)
                else { return nil }
                var position = Int(base)
                if fixedSize != 0 { return position + (sample - firstInChunk + 1) * fixedSize }
                for earlier in firstInChunk..<sample {
                    guard let length = size(earlier) else { return nil }
                    position = min(position + length, 1 << 60)
                }
                guard let length = size(sample) else { return nil }
                return position + length
            }
            firstSampleOfRun = min(firstSampleOfRun + runSamples, 1 << 52)
        }
        return nil
    }
}
