import Foundation

/// Seals one chunk convergently in 16 KiB blocks and opens any run of
/// them alone: the job that replaces a plain chunk's bytes and per-block
/// digests in an encrypted store (``StoreEncryption`` has the scheme and
/// why nonces never repeat).
///
/// - **Key:** HKDF-Expand(chunk-sealing subkey, `"MediaCache chunk key v1"`
///   + the chunk's 16-byte identity, 32 bytes).
/// - **Blocks:** the plaintext cut into ``blockSize`` pieces (the last may
///   be shorter; an empty chunk is one empty block), block *i* sealed with
///   AES-256-GCM under nonce *i* (96-bit big-endian) and the associated
///   data `"MediaCache chunk v1"` ‖ identity ‖ plaintext length (8 bytes)
///   ‖ block count (4) ‖ *i* (4), all big-endian.
/// - **Sealed bytes:** each block's ciphertext followed by its 16-byte
///   tag, in order: `plaintext length + 16 × block count` bytes.
///
/// A block swapped with another changes its nonce; a chunk truncated or
/// extended changes the length and count in every block's associated
/// data; a block moved to another chunk meets another key: each fails to
/// open with ``SealedDataError/authenticationFailed(block:)``, which the
/// store reports as corruption.
///
/// Not for concurrent use (it keeps the cipher's key schedule): make one
/// per chunk operation with ``StoreEncryption/chunkSealer(for:)``.
package struct ChunkSealer {
    /// Plaintext bytes per block.
    package static let blockSize = 16 * 1024
    /// Bytes each block adds: its tag.
    package static let tagSize = CryptoPrimitives.tagSize
    /// The largest plaintext a chunk may hold (the AAD counts blocks in
    /// 32 bits; a chunk is far smaller).
    package static let maximumPlaintextCount = 1 << 30

    private static let keyInfoLabel = Array("MediaCache chunk key v1".utf8)
    private static let aadLabel = Array("MediaCache chunk v1".utf8)

    /// The chunk this sealer is for.
    package let identity: ContentDigest
    private let cipher: AES256GCM

    init(identity: ContentDigest, sealingSubkey: [UInt8]) {
        self.init(identity: identity, key: Self.key(of: identity, sealingKey: HMACSHA256(key: sealingSubkey)))
    }

    /// A sealer with the chunk key already derived by
    /// ``key(of:sealingKey:)``.
    init(identity: ContentDigest, key: [UInt8]) {
        self.identity = identity
        cipher = AES256GCM(key: key)
    }

    /// The key of the chunk `identity`: HKDF-Expand of the chunk-sealing
    /// subkey (`sealingKey`) with the label and the identity.
    static func key(of identity: ContentDigest, sealingKey: HMACSHA256) -> [UInt8] {
        (keyInfoLabel + identity.canonicalBytes).withUnsafeBytes { sealingKey.expand(info: $0) }
    }

    // MARK: Sizes

    /// Blocks of a chunk of `plaintextCount` bytes (at least one).
    package static func blockCount(plaintextCount: Int) -> Int {
        max(1, (plaintextCount + blockSize - 1) / blockSize)
    }

    /// Sealed bytes of a chunk of `plaintextCount` bytes.
    package static func sealedCount(plaintextCount: Int) -> Int {
        plaintextCount + tagSize * blockCount(plaintextCount: plaintextCount)
    }

    /// The plaintext length a sealed chunk of `sealedCount` bytes holds;
    /// throws ``SealedDataError/malformedLength(_:)`` for a length
    /// ``sealedCount(plaintextCount:)`` never gives.
    package static func plaintextCount(sealedCount: Int) throws -> Int {
        let stride = blockSize + tagSize
        guard sealedCount >= tagSize else { throw SealedDataError.malformedLength(sealedCount) }
        let blocks = (sealedCount + stride - 1) / stride
        let plaintext = sealedCount - tagSize * blocks
        guard plaintext <= maximumPlaintextCount, blockCount(plaintextCount: plaintext) == blocks else {
            throw SealedDataError.malformedLength(sealedCount)
        }
        return plaintext
    }

    /// The blocks that hold the plaintext bytes `range`.
    package static func blocks(covering range: Range<Int>) -> Range<Int> {
        precondition(range.lowerBound >= 0, "negative offset")
        guard !range.isEmpty else { return range.lowerBound / blockSize..<range.lowerBound / blockSize }
        return range.lowerBound / blockSize..<(range.upperBound + blockSize - 1) / blockSize
    }

    /// The plaintext bytes that `blocks` of a chunk of `plaintextCount`
    /// bytes hold.
    package static func plaintextRange(of blocks: Range<Int>, plaintextCount: Int) -> Range<Int> {
        min(blocks.lowerBound * blockSize, plaintextCount)..<min(blocks.upperBound * blockSize, plaintextCount)
    }

    // MARK: Sealing

    /// Seals `plaintext` (at most ``maximumPlaintextCount`` bytes) into
    /// `sealed`, which must be ``sealedCount(plaintextCount:)`` bytes.
    package func seal(_ plaintext: UnsafeRawBufferPointer, into sealed: UnsafeMutableRawBufferPointer) {
        precondition(plaintext.count <= Self.maximumPlaintextCount, "chunk too large to seal")
        precondition(sealed.count == Self.sealedCount(plaintextCount: plaintext.count), "wrong sealed buffer size")
        let count = Self.blockCount(plaintextCount: plaintext.count)
        var aad = associatedData(plaintextCount: plaintext.count, blockCount: count)
        var nonce = [UInt8](repeating: 0, count: CryptoPrimitives.nonceSize)
        for block in 0..<count {
            Self.setIndex(block, nonce: &nonce, aad: &aad)
            let range = Self.plaintextRange(of: block..<block + 1, plaintextCount: plaintext.count)
            let sealedStart = range.lowerBound + block * Self.tagSize
            let ciphertext = UnsafeMutableRawBufferPointer(rebasing: sealed[sealedStart..<sealedStart + range.count])
            let tag = UnsafeMutableRawBufferPointer(
                rebasing: sealed[sealedStart + range.count..<sealedStart + range.count + Self.tagSize])
            nonce.withUnsafeBytes { nonceBytes in
                aad.withUnsafeBytes { aadBytes in
                    cipher.seal(
                        UnsafeRawBufferPointer(rebasing: plaintext[range]), nonce: nonceBytes, authenticating: aadBytes,
                        ciphertext: ciphertext, tag: tag)
                }
            }
        }
    }

    /// `plaintext` sealed.
    package func seal(_ plaintext: some ContiguousBytes) -> [UInt8] {
        plaintext.withUnsafeBytes { plain in
            [UInt8](unsafeUninitializedCapacity: Self.sealedCount(plaintextCount: plain.count)) { buffer, count in
                seal(plain, into: UnsafeMutableRawBufferPointer(buffer))
                count = buffer.count
            }
        }
    }

    // MARK: Opening

    /// Authenticates and decrypts `blocks` of `sealed` into `plaintext`,
    /// which must hold exactly their bytes
    /// (``plaintextRange(of:plaintextCount:)``); no other block is read.
    /// Throws ``SealedDataError``: a malformed length, blocks beyond the
    /// chunk, or the first block that fails authentication (then nothing
    /// written to `plaintext` may be used).
    package func open(
        _ sealed: UnsafeRawBufferPointer, blocks: Range<Int>, into plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        let plaintextCount = try Self.plaintextCount(sealedCount: sealed.count)
        let wanted = Self.plaintextRange(of: blocks, plaintextCount: plaintextCount)
        precondition(plaintext.count == wanted.count, "wrong plaintext buffer size")
        try openEach(sealed, blocks: blocks) { range in
            UnsafeMutableRawBufferPointer(
                rebasing: plaintext[range.lowerBound - wanted.lowerBound..<range.upperBound - wanted.lowerBound])
        } opened: { _, _ in
        }
    }

    /// Authenticates and decrypts the blocks that hold the plaintext bytes
    /// `range` of `sealed` and writes exactly those bytes into `plaintext`
    /// (`range.count` bytes): a block wholly inside `range` is opened in
    /// place, a block the range cuts is opened into a 16 KiB buffer of its
    /// own and only its part copied over. No other block is read. Throws
    /// ``SealedDataError`` as ``open(_:blocks:into:)`` does
    /// (``SealedDataError/blocksOutOfRange(_:blockCount:)`` for a range
    /// beyond the chunk); then nothing written to `plaintext` may be used.
    package func open(
        _ sealed: UnsafeRawBufferPointer, range: Range<Int>, into plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(plaintext.count == range.count, "wrong plaintext buffer size")
        let plaintextCount = try Self.plaintextCount(sealedCount: sealed.count)
        let blocks = Self.blocks(covering: range)
        guard range.upperBound <= plaintextCount else {
            throw SealedDataError.blocksOutOfRange(blocks, blockCount: Self.blockCount(plaintextCount: plaintextCount))
        }
        // Allocated only when the range cuts a block (at most two do).
        var scratch: UnsafeMutableRawBufferPointer?
        defer { scratch?.deallocate() }
        func isCut(_ block: Range<Int>) -> Bool {
            block.lowerBound < range.lowerBound || block.upperBound > range.upperBound
        }
        try openEach(sealed, blocks: blocks) { block in
            guard isCut(block) else {
                return UnsafeMutableRawBufferPointer(
                    rebasing: plaintext[block.lowerBound - range.lowerBound..<block.upperBound - range.lowerBound])
            }
            let buffer =
                scratch ?? UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blockSize, alignment: 16)
            scratch = buffer
            return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<block.count])
        } opened: { index, opened in
            let block = Self.plaintextRange(of: index..<index + 1, plaintextCount: plaintextCount)
            guard isCut(block) else { return }
            let from = max(range.lowerBound, block.lowerBound)
            let to = min(range.upperBound, block.upperBound)
            UnsafeMutableRawBufferPointer(rebasing: plaintext[from - range.lowerBound..<to - range.lowerBound])
                .copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: opened[from - block.lowerBound..<to - block.lowerBound]))
        }
    }

    /// Authenticates and decrypts `blocks` of `sealed` one by one, each
    /// into the buffer `destination` gives for its plaintext range (of
    /// exactly that many bytes), and calls `opened` with the block's index
    /// and its opened bytes before the next block is opened. Throws
    /// ``SealedDataError`` as ``open(_:blocks:into:)`` does (a block that
    /// fails authentication is never handed to `opened`), or what
    /// `opened` throws.
    package func openEach(
        _ sealed: UnsafeRawBufferPointer, blocks: Range<Int>,
        into destination: (_ plaintextRange: Range<Int>) -> UnsafeMutableRawBufferPointer,
        opened: (_ block: Int, _ plaintext: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let plaintextCount = try Self.plaintextCount(sealedCount: sealed.count)
        let count = Self.blockCount(plaintextCount: plaintextCount)
        guard blocks.lowerBound >= 0, blocks.upperBound <= count else {
            throw SealedDataError.blocksOutOfRange(blocks, blockCount: count)
        }
        var aad = associatedData(plaintextCount: plaintextCount, blockCount: count)
        var nonce = [UInt8](repeating: 0, count: CryptoPrimitives.nonceSize)
        for block in blocks {
            Self.setIndex(block, nonce: &nonce, aad: &aad)
            let range = Self.plaintextRange(of: block..<block + 1, plaintextCount: plaintextCount)
            let sealedStart = range.lowerBound + block * Self.tagSize
            let ciphertext = UnsafeRawBufferPointer(rebasing: sealed[sealedStart..<sealedStart + range.count])
            let tag = UnsafeRawBufferPointer(
                rebasing: sealed[sealedStart + range.count..<sealedStart + range.count + Self.tagSize])
            let output = destination(range)
            precondition(output.count == range.count, "wrong plaintext buffer size")
            let authentic = nonce.withUnsafeBytes { nonceBytes in
                aad.withUnsafeBytes { aadBytes in
                    cipher.open(ciphertext, tag: tag, nonce: nonceBytes, authenticating: aadBytes, plaintext: output)
                }
            }
            guard authentic else { throw SealedDataError.authenticationFailed(block: block) }
            try opened(block, UnsafeRawBufferPointer(output))
        }
    }

    /// The plaintext of `blocks` of `sealed` (every block when nil).
    package func open(_ sealed: some ContiguousBytes, blocks: Range<Int>? = nil) throws -> [UInt8] {
        try sealed.withUnsafeBytes { sealedBytes in
            let plaintextCount = try Self.plaintextCount(sealedCount: sealedBytes.count)
            let blocks = blocks ?? 0..<Self.blockCount(plaintextCount: plaintextCount)
            guard blocks.lowerBound >= 0, blocks.upperBound <= Self.blockCount(plaintextCount: plaintextCount) else {
                throw SealedDataError.blocksOutOfRange(
                    blocks, blockCount: Self.blockCount(plaintextCount: plaintextCount))
            }
            var output = [UInt8](
                repeating: 0, count: Self.plaintextRange(of: blocks, plaintextCount: plaintextCount).count)
            try output.withUnsafeMutableBytes { try open(sealedBytes, blocks: blocks, into: $0) }
            return output
        }
    }

    // MARK: Nonce and associated data

    private func associatedData(plaintextCount: Int, blockCount: Int) -> [UInt8] {
        var aad = Self.aadLabel + identity.canonicalBytes
        aad += bigEndianBytes(UInt64(plaintextCount), count: 8)
        aad += bigEndianBytes(UInt64(blockCount), count: 4)
        aad += [0, 0, 0, 0]
        return aad
    }

    /// Writes `block` into the nonce's last 8 bytes and the AAD's last 4.
    private static func setIndex(_ block: Int, nonce: inout [UInt8], aad: inout [UInt8]) {
        let index = UInt64(block)
        for byte in 0..<8 { nonce[nonce.count - 1 - byte] = UInt8(truncatingIfNeeded: index >> (8 * UInt64(byte))) }
        for byte in 0..<4 { aad[aad.count - 1 - byte] = UInt8(truncatingIfNeeded: index >> (8 * UInt64(byte))) }
    }
}

/// `value`'s low `count` bytes, big-endian.
func bigEndianBytes(_ value: UInt64, count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
}

/// Why sealed bytes did not open. The store reports each as corruption
/// of the entry that holds them (never as a wrong key: that is refused at
/// open by the key check value).
package enum SealedDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The block (0 for a record) did not authenticate: its bytes, its tag,
    /// its position or the chunk around it changed.
    case authenticationFailed(block: Int)
    /// No sealing gives this many bytes.
    case malformedLength(Int)
    /// The blocks asked for are not all in the chunk.
    case blocksOutOfRange(Range<Int>, blockCount: Int)

    package var description: String {
        switch self {
        case .authenticationFailed(let block): "sealed block \(block) failed authentication"
        case .malformedLength(let count): "\(count) bytes are not a sealed chunk or record"
        case .blocksOutOfRange(let blocks, let count): "blocks \(blocks) asked of a chunk of \(count)"
        }
    }
}
