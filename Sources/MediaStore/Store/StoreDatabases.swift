/// The named LMDB databases of a store (see README.md, "How the store works").
struct StoreDatabases: Sendable {
    /// Format magic and version, key-hash seed, counters.
    let meta: LMDBDatabase
    /// Slot of the cache key → ``EntryRecord``.
    let keys: LMDBDatabase
    /// Entry id + chunk index → chunk slot + raw length.
    let extents: LMDBDatabase
    /// Chunk slot → ``ChunkHeader`` + stored bytes.
    let chunks: LMDBDatabase
    /// Chunk slot → reference count (kept apart so that sharing a chunk
    /// does not rewrite its bytes).
    let refs: LMDBDatabase
    /// Access tick + entry slot → nothing: least recently used first.
    let lru: LMDBDatabase
    /// Entry slot → its current access tick and time (16 bytes). Kept
    /// apart from the record so that applying a batch of reads moves
    /// 24-byte rows instead of rewriting whole records.
    let access: LMDBDatabase
    /// Expiry time + entry slot → nothing: soonest first.
    let expiry: LMDBDatabase
    /// Entry id → ``EntryRecord`` of a streamed write not yet finished.
    let staging: LMDBDatabase

    static let names = ["meta", "keys", "extents", "chunks", "refs", "lru", "access", "expiry", "staging"]

    init(open: (String) throws -> LMDBDatabase) throws {
        meta = try open("meta")
        keys = try open("keys")
        extents = try open("extents")
        chunks = try open("chunks")
        refs = try open("refs")
        lru = try open("lru")
        access = try open("access")
        expiry = try open("expiry")
        staging = try open("staging")
    }
}
