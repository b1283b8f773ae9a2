import Foundation

/// The keys of an encrypted store, derived from its ``StoreKey``, and the
/// operations the store's engine seals and names things with.
///
/// ## Scheme
/// - **Subkeys.** HKDF-SHA256 (RFC 5869) of the store key, empty salt,
///   info `"MediaCache v1 "` + a purpose, one 32-byte subkey per purpose:
///   `chunk identity`, `chunk sealing`, `record sealing`, `index keys`,
///   `key check`. Knowing one subkey (or the check value) tells nothing
///   about the others or the store key.
/// - **Keyed identities.** A chunk's identity is HMAC-SHA256 of its
///   plaintext under the chunk-identity subkey, truncated to 128 bits
///   (``chunkIdentity(of:)``); an entry's index key is the same MAC of its
///   cache key's UTF-8 bytes under the index-keys subkey
///   (``indexKey(forCacheKey:)``). They replace the XXH3-128 digests of a
///   plain store, which let anyone holding the file confirm a guessed URL
///   or plaintext; these can be computed only with the store key, so
///   deduplication works within the store and nowhere else.
/// - **Chunks** are sealed convergently, block by block
///   (``ChunkSealer``): the chunk key is HKDF-Expand of the chunk-sealing
///   subkey with the identity, so equal plaintexts seal to equal bytes and
///   are stored once; 16 KiB blocks are sealed with AES-256-GCM, block
///   *i* with nonce *i*, so that a range read opens only its blocks.
/// - **Records and small values**, whose bytes change under the same name,
///   are sealed with a fresh random salt each time (``RecordSealer``).
/// - **Key check value**: 32 bytes stored in the clear in the store's
///   `meta`: HKDF-Expand of the key-check subkey with info
///   `"MediaCache key check v1"` ‖ the store's id (its 8-byte key seed,
///   big-endian), so two stores under one key hold different check
///   values (``keyCheckValue(storeID:)``); opening with another key is
///   refused before anything is read (``checks(_:storeID:)``), so a wrong
///   key never makes entries look corrupt.
///
/// ## Why nonces never repeat under one key
/// GCM breaks if one key seals two different plaintexts with one nonce.
/// A chunk key seals exactly one chunk plaintext: the key is a function of
/// the identity, and the identity is a MAC of the plaintext under a secret
/// key, so two different plaintexts share a chunk key only if their
/// 128-bit truncated MACs collide. HMAC-SHA256 is a PRF; among *n*
/// distinct chunks the chance of any collision is at most n²/2¹²⁹
/// (2⁻⁸⁹ for 2²⁰ chunks, 2⁻⁶⁹ for 2³⁰), and an attacker cannot aim for
/// one without the key. Within that one plaintext each block has its own
/// index, so each nonce is used once; sealing the same chunk again
/// repeats the same (key, nonce, plaintext, AAD) and so the same output,
/// which reveals nothing new. Records use a fresh 256-bit random salt per
/// seal for a one-message key: a salt repeats among *n* seals with
/// chance at most n²/2²⁵⁷.
///
/// ## What still leaks
/// Someone holding the store file but not the key learns: the number of
/// entries and chunks and their sizes (each sealed block is its
/// plaintext's length plus 16 bytes), so a known file can be recognised
/// by its length profile; which entries share chunks (equal content
/// seals to equal bytes within the store); the access and expiry times
/// and the order of use kept in the clear for eviction; pins, and the
/// cost and limits counters. Not the bytes, the URLs, the MIME types,
/// the validators or user fields, and not whether a given URL or content
/// is in the store. An attacker who can write the file can roll parts of
/// it back to an older state of the same store (AEAD does not stop
/// replaying a block or record the same key sealed before), but cannot
/// forge or move bytes between names or positions.
package struct StoreEncryption: Sendable {
    /// The purposes subkeys are derived for, each its own HKDF info.
    package enum Purpose: String, CaseIterable, Sendable {
        case chunkIdentity = "chunk identity"
        case chunkSealing = "chunk sealing"
        case recordSealing = "record sealing"
        case indexKeys = "index keys"
        case keyCheck = "key check"

        /// The HKDF info for this purpose.
        var info: [UInt8] { Array(("MediaCache v1 " + rawValue).utf8) }
    }

    private let identityMAC: HMACSHA256
    /// The chunk-sealing subkey, which chunk keys are expanded from.
    private let chunkSealingKey: HMACSHA256
    private let indexMAC: HMACSHA256
    private let keyCheckSubkey: [UInt8]
    /// The chunk keys derived last, kept with this value (and so with this
    /// store key) only.
    private let chunkKeys: ChunkKeyCache
    /// Chunk keys kept at most: 32 bytes each plus the table's own, about
    /// 100 KiB in all, enough for the chunks of the tracks being played.
    package static let chunkKeyCacheCapacity = 1024
    /// Seals and opens records and small values.
    package let recordSealer: RecordSealer
    /// While a rekey is under way, the keys being replaced (at most one):
    /// what does not open under these keys is tried under those
    /// (``firstOpening(_:)``); everything new is sealed and named under these.
    private var replacedKeys: [StoreEncryption] = []

    private static let keyCheckLabel = Array("MediaCache key check v1".utf8)

    /// The store key these are derived from (a rekey seals it under the new one).
    package let key: StoreKey

    package init(key: StoreKey) {
        self.key = key
        identityMAC = HMACSHA256(key: Self.subkey(key, .chunkIdentity))
        chunkSealingKey = HMACSHA256(key: Self.subkey(key, .chunkSealing))
        indexMAC = HMACSHA256(key: Self.subkey(key, .indexKeys))
        recordSealer = RecordSealer(subkey: Self.subkey(key, .recordSealing))
        keyCheckSubkey = Self.subkey(key, .keyCheck)
        chunkKeys = ChunkKeyCache(capacity: Self.chunkKeyCacheCapacity)
    }

    /// The first result of `body` that is not `nil`, tried with these keys
    /// and then with the keys a rekey under way replaces, and whether it
    /// came from these keys. Allocates nothing (a read's hot path).
    package func firstOpening<R>(_ body: (StoreEncryption) throws -> R?) rethrows -> (value: R, isCurrent: Bool)? {
        if let value = try body(self) { return (value, true) }
        if let replaced = replacedKeys.first, let value = try body(replaced) { return (value, false) }
        return nil
    }

    /// The keys a rekey under way replaces; `nil` when none is.
    package var replaced: StoreEncryption? { replacedKeys.first }

    /// Whether `key` opens a store under these keys: it is their key or,
    /// during a rekey, the replaced one.
    package func accepts(_ key: StoreKey) -> Bool {
        key == self.key || replacedKeys.first.map { key == $0.key } == true
    }

    /// These keys, during a rekey from `old` to them.
    package func replacing(_ old: StoreEncryption) -> StoreEncryption {
        var keys = self
        keys.replacedKeys = [old.withoutReplaced]
        return keys
    }

    /// These keys alone, without the ones a rekey replaces.
    package var withoutReplaced: StoreEncryption {
        var keys = self
        keys.replacedKeys = []
        return keys
    }

    /// The key check value of the store with id `storeID`: stored in the
    /// clear when the store is made; ``checks(_:storeID:)`` compares it
    /// with the one derived from the key given at open.
    package func keyCheckValue(storeID: UInt64) -> [UInt8] {
        let info = Self.keyCheckLabel + bigEndianBytes(storeID, count: 8)
        return keyCheckSubkey.withUnsafeBytes { subkey in
            info.withUnsafeBytes {
                CryptoPrimitives.hkdfExpandSHA256(
                    pseudoRandomKey: subkey, info: $0, outputByteCount: CryptoPrimitives.keySize)
            }
        }
    }

    /// `other` sealed under these keys for the store with id `storeID`
    /// (a rekey's meta row holds each key sealed under the other).
    package func wrap(_ other: StoreKey, storeID: UInt64) -> [UInt8] {
        recordSealer.seal(other.bytes, context: Self.wrapLabel + bigEndianBytes(storeID, count: 8))
    }

    /// The key ``wrap(_:storeID:)`` sealed; `nil` when `sealed` was not
    /// sealed under these keys for this store.
    package func unwrap(_ sealed: [UInt8], storeID: UInt64) -> StoreKey? {
        guard let bytes = try? recordSealer.open(sealed, context: Self.wrapLabel + bigEndianBytes(storeID, count: 8))
        else { return nil }
        return try? StoreKey(bytes: bytes)
    }

    private static let wrapLabel = Array("MediaCache rekey v1".utf8)

    /// The 32-byte subkey of `key` for `purpose`.
    package static func subkey(_ key: StoreKey, _ purpose: Purpose) -> [UInt8] {
        key.bytes.withUnsafeBytes { keyBytes in
            purpose.info.withUnsafeBytes { info in
                CryptoPrimitives.hkdfSHA256(
                    inputKeyMaterial: keyBytes, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info,
                    outputByteCount: CryptoPrimitives.keySize)
            }
        }
    }

    /// Whether `stored`, the key check value of the store with id
    /// `storeID`, was made with this key. False means another key (or
    /// another store's value): refuse the store before reading it.
    package func checks(_ stored: some Collection<UInt8>, storeID: UInt64) -> Bool {
        constantTimeEquals(keyCheckValue(storeID: storeID), stored)
    }

    /// The keyed identity of a chunk's plaintext.
    package func chunkIdentity(of bytes: some ContiguousBytes) -> ContentDigest {
        bytes.withUnsafeBytes { ContentDigest(mac: identityMAC, of: $0) }
    }

    /// The keyed index key of an entry's cache key.
    package func indexKey(forCacheKey key: String) -> ContentDigest {
        Array(key.utf8).withUnsafeBytes { ContentDigest(mac: indexMAC, of: $0) }
    }

    /// The sealer of the chunk with `identity` (its key derived once and
    /// kept among the last ``chunkKeyCacheCapacity``).
    package func chunkSealer(for identity: ContentDigest) -> ChunkSealer {
        let sealingKey = chunkSealingKey
        let key = chunkKeys.key(for: identity) { ChunkSealer.key(of: $0, sealingKey: sealingKey) }
        return ChunkSealer(identity: identity, key: key)
    }

    /// How many chunk keys are kept now (at most ``chunkKeyCacheCapacity``).
    package var keptChunkKeyCount: Int { chunkKeys.count }
}

extension ContentDigest {
    /// The keyed identity of `message` under `key`: HMAC-SHA256 truncated
    /// to its first 16 bytes, held as ``ContentDigest`` holds an XXH3-128.
    init(mac key: HMACSHA256, of message: UnsafeRawBufferPointer) {
        self.init(canonical: key.authenticationCode(message))!
    }
}
