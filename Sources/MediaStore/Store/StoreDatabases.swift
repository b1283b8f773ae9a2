/// The named LMDB databases of a store (see MediaStore.docc/StoreFormat.md).
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
    /// 24-byte rows instead of rewriting whole records. Only entries read
    /// since their record was last saved have one; the others' record
    /// holds their access.
    let access: LMDBDatabase
    /// Expiry time + entry slot → nothing: soonest first.
    let expiry: LMDBDatabase
    /// Entry id → ``EntryRecord`` of a streamed write not yet finished.
    let staging: LMDBDatabase
    /// Pack id (8 B BE) → several small whole values (``PackLayout``);
    /// `nil` only in a store of format 3 or older opened read-only,
    /// which has no packs.
    let packs: LMDBDatabase?
    /// Pack id → how much of the pack is still referenced (``PackUse``).
    let packUse: LMDBDatabase?
    /// Entry slot ‖ holder → nothing: who holds each entry (``HoldTable``);
    /// `nil` only in a store of format 4 or older opened read-only.
    let holds: LMDBDatabase?
    /// Holder ‖ 0 ‖ entry slot → nothing: the mirror of `holds`.
    let heldBy: LMDBDatabase?

    static let names = [
        "meta", "keys", "extents", "chunks", "refs", "lru", "access", "expiry", "staging", "packs", "packUse", "holds",
        "heldBy",
    ]
    /// The databases that format 4 added: absent from older stores until
    /// their first writable open.
    static let addedInFormat4: Set = ["packs", "packUse"]
    /// The databases that format 5 added.
    static let addedInFormat5: Set = ["holds", "heldBy"]

    /// Opens every database with `open`, which returns `nil` for one that
    /// does not exist (allowed only for those of ``addedInFormat4`` and ``addedInFormat5``).
    init(open openIfPresent: (String) throws -> LMDBDatabase?) throws {
        func open(_ name: String) throws -> LMDBDatabase {
            guard let database = try openIfPresent(name) else { throw LMDBError.notFound }
            return database
        }
        meta = try open("meta")
        keys = try open("keys")
        extents = try open("extents")
        chunks = try open("chunks")
        refs = try open("refs")
        lru = try open("lru")
        access = try open("access")
        expiry = try open("expiry")
        staging = try open("staging")
        packs = try openIfPresent("packs")
        packUse = try openIfPresent("packUse")
        holds = try openIfPresent("holds")
        heldBy = try openIfPresent("heldBy")
    }
}
