/// Playback prefixes of FLAC files: STREAMINFO gives the rate and length;
/// a SEEKTABLE, or frame headers found in the bytes seen, give where each
/// sample starts.
enum FLACPrefix {
    static func estimate(toPlay seconds: Double, in window: ByteWindow, totalLength: Int?) -> PrefixEstimate {
        guard window.matches("fLaC", at: 0) else { return .unsupported }
        var offset = 4
        var sampleRate = 0
        var totalSamples: UInt64 = 0
        var blockSize = 0
        var maximumFrame = 0
        var seekPoints: [(sample: UInt64, offset: Int)] = []
        while true {
            guard let header = window.byte(at: offset), let length = window.uint24(at: offset + 1) else {
                return .needsPrefix(offset + 4 + 4096)
            }
            let body = offset + 4
            guard window.contains(body..<body + length) else { return .needsPrefix(body + length + 4096) }
            switch header & 0x7F {
            case 0:
                guard length >= 34, let packed = window.uint64(at: body + 10) else { return .unsupported }
                blockSize = window.uint16(at: body + 2)!
                maximumFrame = window.uint24(at: body + 7)!
                sampleRate = Int(packed >> 44)
                totalSamples = packed & 0xF_FFFF_FFFF
            case 3:
                for point in 0..<length / 18 {
                    let sample = window.uint64(at: body + point * 18)!
                    guard sample != .max else { continue }
                    seekPoints.append((sample, Int(clamping: min(window.uint64(at: body + point * 18 + 8)!, 1 << 52))))
                }
            case 127: return .unsupported
            default: break
            }
            offset = body + length
            if header & 0x80 != 0 { break }
        }
        guard sampleRate > 0 else { return .unsupported }
        let audioStart = offset
        let target = UInt64(Int(clampingUp: seconds * Double(sampleRate)))
        if totalSamples > 0, target >= totalSamples, let totalLength { return .length(totalLength, exact: true) }
        let margin = maximumFrame > 0 ? maximumFrame : 16 * 1024
        // A seek point past the target: every frame before it is complete there.
        if let point = seekPoints.first(where: { $0.sample > target }) {
            return .length(audioStart + point.offset, exact: true)
        }
        // Frame headers in the bytes seen.
        var position = audioStart
        var lastFrame: (start: Int, sample: UInt64)?
        while position + 16 <= window.end {
            if let frame = FLACFrameHeader(window, at: position, fixedBlockSize: blockSize),
                frame.firstSample >= (lastFrame?.sample ?? 0)
            {
                if frame.firstSample > target { return .length(position, exact: true) }
                lastFrame = (position, frame.firstSample)
                position += 16
            } else {
                position += 1
            }
        }
        if let totalLength, window.end >= totalLength { return .length(totalLength, exact: true) }
        // Not reached: extrapolate from the frames seen, or from the whole file.
        var estimate: Int
        if let lastFrame, lastFrame.sample > 0 {
            let bytesPerSample = Double(lastFrame.start - audioStart) / Double(lastFrame.sample)
            estimate = audioStart + Int(clampingUp: Double(target) * bytesPerSample * 1.1) + margin
        } else if let totalLength, totalSamples > 0 {
            estimate =
                audioStart + Int(clampingUp: Double(totalLength - audioStart) * Double(target) / Double(totalSamples))
                + margin
        } else {
            estimate = window.end * 2
        }
        estimate = max(estimate, window.end + margin)
        return .needsPrefix(totalLength.map { min($0, estimate) } ?? estimate)
    }
}
