internal import CXXHash

/// The table of per-block XXH3-64 digests that a raw chunk of store format
/// 3 carries between its ``ChunkHeader`` and its bytes, so that a read of
/// part of the chunk verifies only the blocks it returns.
///
/// A chunk of `n` bytes is cut into blocks of `1 << shift` bytes (16 KiB,
/// or the smallest power of two giving at most 64 blocks); the table holds
/// one little-endian XXH3-64 digest (seed 0) per block, the last block
/// possibly short. The chunk's XXH3-128 digest (its slot) still covers the
/// whole chunk; the table adds a check per block, it replaces nothing.
/// A view of the table in place, valid only as long as its buffer.
struct BlockDigests {
    /// Blocks are at least 16 KiB.
    static let minimumShift = 14
    /// Shifts above this are not valid (a chunk is at most 1 GiB).
    static let maximumShift = 30
    /// At most 64 blocks per chunk: a verified-blocks set is one `UInt64`.
    static let maximumCount = 64
    /// Bytes per digest.
    static let digestSize = 8

    /// `log2` of the block size.
    let shift: Int
    /// The raw length of the chunk the table describes.
    let rawLength: Int
    /// The `count * 8` bytes of the table.
    let table: UnsafeRawBufferPointer

    /// Reads a table of `shift` for a chunk of `rawLength` bytes from the
    /// front of `bytes`; `nil` when the shift is invalid or `bytes` is too short.
    init?(shift: Int, rawLength: Int, in bytes: UnsafeRawBufferPointer) {
        guard (Self.minimumShift...Self.maximumShift).contains(shift), rawLength > 0 else { return nil }
        let size = Self.size(rawLength: rawLength, shift: shift)
        guard bytes.count >= size, Self.count(rawLength: rawLength, shift: shift) <= Self.maximumCount else {
            return nil
        }
        self.shift = shift
        self.rawLength = rawLength
        self.table = UnsafeRawBufferPointer(rebasing: bytes[..<size])
    }

    /// How many blocks the chunk has.
    var count: Int { Self.count(rawLength: rawLength, shift: shift) }

    /// The set of every block, as ``VerifiedChunks`` keeps it.
    var all: UInt64 { Self.mask(0..<count) }

    /// The blocks holding the bytes `range` of the chunk (not empty).
    func blocks(covering range: Range<Int>) -> Range<Int> {
        (range.lowerBound >> shift)..<(((range.upperBound - 1) >> shift) + 1)
    }

    /// The stored digest of block `index`.
    func digest(at index: Int) -> UInt64 {
        UInt64(littleEndian: table.loadUnaligned(fromByteOffset: index * Self.digestSize, as: UInt64.self))
    }

    /// The blocks among `blocks` whose bytes in `payload` hash to their
    /// stored digest, as a set; stops at the first that does not and
    /// returns `nil`.
    func verify(_ payload: UnsafeRawBufferPointer, blocks: Range<Int>, skipping known: UInt64 = 0) -> UInt64? {
        var verified: UInt64 = 0
        for index in blocks where known & (1 << UInt64(index)) == 0 {
            let start = index << shift
            let end = min(payload.count, start + (1 << shift))
            guard start < end else { return nil }
            let hash = mediacache_XXH3_64bits(payload.baseAddress! + start, end - start)
            guard hash == digest(at: index) else { return nil }
            verified |= 1 << UInt64(index)
        }
        return verified
    }

    /// The shift for a chunk of `rawLength` bytes.
    static func shift(rawLength: Int) -> Int {
        var shift = minimumShift
        while count(rawLength: rawLength, shift: shift) > maximumCount { shift += 1 }
        return shift
    }

    /// Whether a raw chunk of `rawLength` bytes carries a table: when it
    /// has more than one block.
    static func applies(rawLength: Int) -> Bool {
        rawLength > 1 << minimumShift
    }

    static func count(rawLength: Int, shift: Int) -> Int {
        (rawLength + (1 << shift) - 1) >> shift
    }

    /// The table's size in bytes.
    static func size(rawLength: Int, shift: Int) -> Int {
        count(rawLength: rawLength, shift: shift) * digestSize
    }

    /// The set of the blocks `range`.
    static func mask(_ range: Range<Int>) -> UInt64 {
        guard !range.isEmpty else { return 0 }
        let upper: UInt64 = range.upperBound >= 64 ? .max : (1 << UInt64(range.upperBound)) - 1
        let lower: UInt64 = (1 << UInt64(range.lowerBound)) - 1
        return upper & ~lower
    }

    /// Writes the table of `payload` (the chunk's raw bytes) into `out`,
    /// which has exactly ``size(rawLength:shift:)`` bytes.
    static func write(of payload: UnsafeRawBufferPointer, shift: Int, into out: UnsafeMutableRawBufferPointer) {
        for index in 0..<count(rawLength: payload.count, shift: shift) {
            let start = index << shift
            let end = min(payload.count, start + (1 << shift))
            let hash = mediacache_XXH3_64bits(payload.baseAddress! + start, end - start)
            out.storeBytes(of: hash.littleEndian, toByteOffset: index * digestSize, as: UInt64.self)
        }
    }
}
