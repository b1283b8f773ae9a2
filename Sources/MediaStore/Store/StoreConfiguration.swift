import Foundation

/// How a ``MediaStore`` is sized and tuned. Every limit of 0 means none.
public struct StoreConfiguration: Sendable, Equatable {
    /// Most bytes the stored chunks and inline values may occupy
    /// (after deduplication and compression). `0` by default: no limit.
    /// Checked after every write; least-recently-used entries are evicted
    /// down to ``lowWaterRatio`` of it.
    public var sizeLimit: Int
    /// What ``sizeLimit`` counts. ``SizeAccounting/stored`` by default.
    public var sizeAccounting: SizeAccounting
    /// Most entries (complete or partial). `0` by default: no limit.
    public var countLimit: Int
    /// Lifetime given to entries written without an explicit expiry.
    /// `nil` by default: they never expire.
    public var defaultLifetime: TimeInterval?
    /// zstd level for chunks, 1...19; `0` disables compression. `1` by default.
    public var compressionLevel: Int
    /// Bytes per chunk. The default, 262,116, makes a chunk with its
    /// 12-byte header fill 64 LMDB pages exactly (64 × 4096 − 16).
    public var chunkSize: Int
    /// Values up to this many bytes live inside their index record.
    /// 4,096 by default.
    public var inlineLimit: Int
    /// Eviction stops when usage is at most this share of a limit. `0.9`.
    public var lowWaterRatio: Double
    /// The map size to start with; it grows by itself. `nil` by default:
    /// max(1 GiB, 2 × ``sizeLimit``); on iOS, tvOS, watchOS and visionOS,
    /// whose apps get a few GiB of address space, max(256 MiB,
    /// 1.25 × ``sizeLimit``).
    public var initialMapSize: Int?
    /// How many chunks a store instance remembers as verified, so that
    /// reading one again does not hash it again (<doc:StoreFormat> says
    /// exactly what is trusted). 16,384 by default (4 GiB of
    /// default-size chunks, about 1 MiB of memory); `0` hashes every chunk
    /// on every read. Set it on a configuration after `init` (the
    /// initializer keeps its earlier signature).
    public var verifiedChunkMemory: Int = 16_384
    /// Encryption at rest: `nil` (the default) for a plain store. A store
    /// is created encrypted or plain and stays so; opening an encrypted
    /// store needs its key (``StoreError/wrongKey(path:)`` for another,
    /// ``StoreError/encryptionMismatch(path:storeIsEncrypted:)`` without
    /// one, or with one for a plain store), refused before anything is
    /// read or changed. Set it on a configuration after `init`.
    public var encryption: Encryption?

    /// How a store is encrypted at rest (<doc:EncryptionAtRest> has the scheme
    /// and what it does not hide).
    public struct Encryption: Sendable, Equatable {
        /// The store's key, supplied by the app.
        public var key: StoreKey

        public init(key: StoreKey) {
            self.key = key
        }
    }

    /// The page-fitted default chunk size: 261,988 bytes, so that a chunk
    /// value (12-byte header, 16 block digests of 8 bytes, the bytes) fills
    /// exactly 64 pages of 4096 bytes minus LMDB's 16-byte page header.
    public static let defaultChunkSize = 64 * 4096 - 16 - ChunkHeader.size - 16 * BlockDigests.digestSize

    public init(
        sizeLimit: Int = 0,
        sizeAccounting: SizeAccounting = .stored,
        countLimit: Int = 0,
        defaultLifetime: TimeInterval? = nil,
        compressionLevel: Int = 1,
        chunkSize: Int = StoreConfiguration.defaultChunkSize,
        inlineLimit: Int = 4096,
        lowWaterRatio: Double = 0.9,
        initialMapSize: Int? = nil
    ) {
        self.sizeLimit = sizeLimit
        self.sizeAccounting = sizeAccounting
        self.countLimit = countLimit
        self.defaultLifetime = defaultLifetime
        self.compressionLevel = compressionLevel
        self.chunkSize = chunkSize
        self.inlineLimit = inlineLimit
        self.lowWaterRatio = lowWaterRatio
        self.initialMapSize = initialMapSize
    }

    var effectiveInitialMapSize: Int {
        if let initialMapSize { return initialMapSize }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            return max(256 << 20, sizeLimit + sizeLimit / 4)
        #else
            return max(1 << 30, 2 * sizeLimit)
        #endif
    }
}

/// The bytes a size limit counts.
public enum SizeAccounting: Sendable, Equatable {
    /// Bytes on disk: stored chunks (after deduplication and compression)
    /// and inline values. What the disk actually pays.
    case stored
    /// The entries' own bytes, each entry counted in full: what a user of
    /// a key/value cache expects `maxSize` to mean.
    case logical
}
