import MediaSupport

/// What the engine's parts need from the store that runs them, handed to
/// each ``StoreTransaction`` instead of the store itself: the engine never
/// calls back into ``MediaStore``. Immutable, and a class so that each
/// transaction takes it with one retain instead of copying its fields.
final class EngineContext {
    /// The configuration the store was opened with (chunk size,
    /// compression, limits, lifetimes).
    let configuration: StoreConfiguration
    /// The digest that addresses a cache key in the index (seeded).
    let keyDigest: (String) -> ContentDigest
    /// The store's zstd compressor (one, reused under its lock).
    let codec: Locked<ZstdCodec>
    /// Whether a key is being read or written in this process, so that
    /// eviction and expiry sweeps leave it alone.
    let isInUse: (String) -> Bool
    /// The chunks this store instance verified (``VerifiedChunks``).
    let verifiedChunks: VerifiedChunks
    /// The keys of an encrypted store; `nil` for a plain one.
    let encryption: StoreEncryption?

    init(
        configuration: StoreConfiguration, keyDigest: @escaping (String) -> ContentDigest, codec: Locked<ZstdCodec>,
        isInUse: @escaping (String) -> Bool, verifiedChunks: VerifiedChunks, encryption: StoreEncryption?
    ) {
        self.configuration = configuration
        self.keyDigest = keyDigest
        self.codec = codec
        self.isInUse = isInUse
        self.verifiedChunks = verifiedChunks
        self.encryption = encryption
    }
}
