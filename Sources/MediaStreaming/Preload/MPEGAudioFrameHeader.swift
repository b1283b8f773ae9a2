/// The 4-byte header of an MPEG-1/2/2.5 audio frame (layers I–III).
struct MPEGAudioFrameHeader: Equatable {
    /// 1 for MPEG-1, 2 for MPEG-2, 25 for MPEG-2.5.
    let version: Int
    let layer: Int
    /// Bits per second.
    let bitrate: Int
    let sampleRate: Int
    let isPadded: Bool
    let isMono: Bool

    private static let bitrates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // V1 L1
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],  // V1 L2
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],  // V1 L3
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],  // V2 L1
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],  // V2 L2, L3
    ]

    /// Reads a header at `offset`; `nil` unless the bytes are a valid one
    /// (free-format and reserved values are refused).
    init?(_ window: ByteWindow, at offset: Int) {
        guard let word = window.uint32(at: offset), word >> 21 == 0x7FF else { return nil }
        let versionBits = (word >> 19) & 3
        let layerBits = (word >> 17) & 3
        let bitrateIndex = (word >> 12) & 15
        let rateIndex = (word >> 10) & 3
        guard versionBits != 1, layerBits != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else {
            return nil
        }
        version = versionBits == 3 ? 1 : versionBits == 2 ? 2 : 25
        layer = 4 - layerBits
        let table = version == 1 ? layer - 1 : layer == 1 ? 3 : 4
        bitrate = Self.bitrates[table][bitrateIndex] * 1000
        let baseRate = [44_100, 48_000, 32_000][rateIndex]
        sampleRate = version == 1 ? baseRate : version == 2 ? baseRate / 2 : baseRate / 4
        isPadded = (word >> 9) & 1 == 1
        isMono = (word >> 6) & 3 == 3
    }

    /// Samples each frame decodes to.
    var samplesPerFrame: Int { layer == 1 ? 384 : layer == 2 || version == 1 ? 1152 : 576 }

    /// Seconds each frame plays.
    var frameDuration: Double { Double(samplesPerFrame) / Double(sampleRate) }

    /// The frame's length in bytes, header included.
    var frameLength: Int {
        if layer == 1 { return (12 * bitrate / sampleRate + (isPadded ? 1 : 0)) * 4 }
        let slots = samplesPerFrame / 8
        return slots * bitrate / sampleRate + (isPadded ? 1 : 0)
    }

    /// Where a Xing/Info tag would start, counted from the header.
    var xingOffset: Int {
        4 + (version == 1 ? (isMono ? 17 : 32) : (isMono ? 9 : 17))
    }
}
