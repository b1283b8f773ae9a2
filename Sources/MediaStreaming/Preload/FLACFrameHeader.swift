/// The header of a FLAC audio frame: where a frame starts and which
/// sample it starts at.
struct FLACFrameHeader {
    /// The first sample the frame decodes (frame number × block size for
    /// fixed-blocksize streams).
    let firstSample: UInt64

    /// Reads a header at `offset`; `nil` unless the sync code, the reserved
    /// bits, the coded number and the CRC-8 all check out.
    init?(_ window: ByteWindow, at offset: Int, fixedBlockSize: Int) {
        guard let sync = window.uint16(at: offset), sync & 0xFFFE == 0xFFF8,
            let codes = window.byte(at: offset + 2), let format = window.byte(at: offset + 3)
        else { return nil }
        let variable = sync & 1 == 1
        let blockCode = Int(codes >> 4)
        let rateCode = Int(codes & 0xF)
        guard blockCode != 0, rateCode != 15, format & 1 == 0, (format >> 1) & 7 != 3, (format >> 1) & 7 != 7,
            format >> 4 < 11
        else { return nil }
        // The UTF-8-style coded frame or sample number.
        guard let lead = window.byte(at: offset + 4) else { return nil }
        var length = 0
        var value: UInt64
        switch lead {
        case 0x00..<0x80: value = UInt64(lead)
        case 0xC0..<0xE0: length = 1; value = UInt64(lead & 0x1F)
        case 0xE0..<0xF0: length = 2; value = UInt64(lead & 0x0F)
        case 0xF0..<0xF8: length = 3; value = UInt64(lead & 0x07)
        case 0xF8..<0xFC: length = 4; value = UInt64(lead & 0x03)
        case 0xFC..<0xFE: length = 5; value = UInt64(lead & 0x01)
        case 0xFE: length = 6; value = 0
        default: return nil
        }
        var position = offset + 5
        for _ in 0..<length {
            guard let byte = window.byte(at: position), byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt64(byte & 0x3F)
            position += 1
        }
        position += blockCode == 6 ? 1 : blockCode == 7 ? 2 : 0
        position += rateCode == 12 ? 1 : rateCode == 13 || rateCode == 14 ? 2 : 0
        guard let crc = window.byte(at: position) else { return nil }
        var computed: UInt8 = 0
        for index in offset..<position {
            computed ^= window.byte(at: index)!
            for _ in 0..<8 { computed = computed & 0x80 != 0 ? computed << 1 ^ 0x07 : computed << 1 }
        }
        guard computed == crc else { return nil }
        firstSample = variable ? value : value.multipliedReportingOverflow(by: UInt64(fixedBlockSize)).partialValue
    }
}
