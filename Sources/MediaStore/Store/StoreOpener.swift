import Foundation

/// Opens (or creates) the LMDB environment of a store directory and
/// checks that it really is a store of a format this build reads.
package struct StoreOpener {
    /// LMDB's lock file beside `data.mdb` (MDB_NOSUBDIR names it after the data file).
    package static let lockFileName = "data.mdb-lock"

    let directory: URL
    let configuration: StoreConfiguration
    let readOnly: Bool
    /// `MDB_NOLOCK` with ``ProcessLocalLocks`` (the default where LMDB's
    /// own locks are unusable; see ``LMDBEnvironment/platformNeedsProcessLocalLocking``).
    var processLocalLocking = LMDBEnvironment.platformNeedsProcessLocalLocking
    /// Opens an encrypted store without its key, for a job that only
    /// copies its bytes as they are (compaction): ``Opened/encryption`` is
    /// then `nil` and nothing may be read through it.
    var skipsKeyCheck = false

    struct Opened {
        let environment: LMDBEnvironment
        let databases: StoreDatabases
        let keySeed: UInt64
        /// The store's keys when it is encrypted (checked against its
        /// key check value); `nil` for a plain store.
        let encryption: StoreEncryption?
    }

    func open() throws(StoreError) -> Opened {
        let path = directory.path
        let dataPath = path + "/data.mdb"
        try prepareDirectory(path)
        // A zero-length data.mdb is one LMDB created but was killed before
        // it wrote the meta pages (a crash during the very first open):
        // LMDB initialises such a file, so it counts as a new store.
        let size = (try? FileManager.default.attributesOfItem(atPath: dataPath))?[.size] as? Int
        let existing = (size ?? 0) > 0
        if existing && !StoreFormat.looksLikeLMDB(path: dataPath) {
            throw .notAStore(path: path, reason: "data.mdb is not an LMDB file")
        }
        if existing, let damage = StoreFormat.metaPageDamage(path: dataPath) { throw .damagedStore(reason: damage) }
        // Two meta pages that are not the last two commits make LMDB open an
        // older one, and a read-write open's first commit would overwrite the
        // newest for good. `startSession()` moves such a store aside when
        // nobody else uses it; here (another process has it open, or the
        // session marker cannot be kept) it is refused. A read-only open
        // writes nothing, so it opens it, and `verify()` reports it.
        if existing && !readOnly, let damage = MetaPageCheck.damage(path: dataPath) {
            throw .damagedStore(reason: damage)
        }
        if !existing && readOnly {
            throw .notAStore(path: path, reason: size == nil ? "no data.mdb in the directory" : "data.mdb is empty")
        }
        let environment: LMDBEnvironment
        do {
            environment = try LMDBEnvironment(
                directory: path, mapSize: readOnly ? nil : configuration.effectiveInitialMapSize,
                maxDatabases: StoreDatabases.names.count + 2, readOnly: readOnly,
                processLocalLocking: processLocalLocking)
        } catch {
            throw StoreError(error, openingStoreAt: path)
        }
        if !readOnly && environment.mapSize < configuration.effectiveInitialMapSize {
            try? environment.growMap(minimum: configuration.effectiveInitialMapSize)
        }
        do {
            let (databases, seed, encryption) = try openDatabases(environment)
            return Opened(environment: environment, databases: databases, keySeed: seed, encryption: encryption)
        } catch {
            throw StoreError(error, openingStoreAt: path)
        }
    }

    func prepareDirectory(_ path: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .notAStore(path: path, reason: "it is a file, not a directory") }
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            // With MDB_NOSUBDIR, LMDB's lock file is `data.mdb-lock`; it is
            // created first, so a crash during the first open may leave it alone.
            // Damaged copies moved aside stay beside a new store (see StoreRecovery).
            let foreign = contents.filter {
                !["data.mdb", Self.lockFileName].contains($0) && !$0.hasPrefix(".")
                    && !$0.hasPrefix(Self.damagedCopyPrefix)
            }
            if !contents.contains("data.mdb") && !foreign.isEmpty {
                throw .notAStore(
                    path: path, reason: "the directory holds other files (\(foreign.prefix(3).joined(separator: ", ")))"
                )
            }
        } else {
            if readOnly { throw .notAStore(path: path, reason: "the directory does not exist") }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw .inaccessible(path: path, reason: "cannot create the directory: \(error.localizedDescription)")
            }
        }
        if !readOnly { Self.applyPlatformFileAttributes(directory: path) }
        // Readers need to write the lock file too (LMDB has no pure read-only mode).
        if access(path, W_OK) != 0 && !(readOnly && access(path + "/" + Self.lockFileName, W_OK) == 0) {
            throw .inaccessible(path: path, reason: "the directory is not writable")
        }
    }

    private func openDatabases(_ environment: LMDBEnvironment) throws -> (StoreDatabases, UInt64, StoreEncryption?) {
        // Look before creating anything: a foreign LMDB file must stay untouched.
        let probe = try LMDBTransaction(environment: environment, readOnly: true)
        // The unnamed (main) database; dbi 0 is LMDB's free list, which is
        // empty in a fresh file but also in a compacted copy or a foreign file.
        let mainCount = try probe.count(probe.openMainDatabase())
        var formatBytes: [UInt8]?
        var encryption: StoreEncryption?
        if mainCount > 0 {
            var meta: LMDBDatabase?
            do {
                meta = try probe.openDatabase("meta", create: false)
                formatBytes = try meta.flatMap { try probe.value($0, key: Array("format".utf8)) }
            } catch let error as LMDBError where error == .notFound || error == .incompatible {
                formatBytes = nil
            }
            guard let formatBytes, let meta else {
                throw StoreError.notAStore(path: directory.path, reason: "an LMDB file without a media store in it")
            }
            guard let version = StoreFormat.version(of: formatBytes) else {
                throw StoreError.notAStore(path: directory.path, reason: "an LMDB file with a foreign format tag")
            }
            guard version <= StoreFormat.newestVersion else {
                throw StoreError.unsupportedFormatVersion(
                    found: Int(version), supported: Int(StoreFormat.newestVersion))
            }
            // Before anything else is read or written: a store opened
            // with the wrong key (or none) must stay exactly as it is.
            encryption = try checkKey(
                probe, meta, isEncrypted: version >= StoreFormat.encryptedVersion,
                isRekeying: version == StoreFormat.rekeyingVersion)
        } else if let key = configuration.encryption?.key {
            encryption = StoreEncryption(key: key)
        }
        probe.abort()
        let isNew = mainCount == 0
        if isNew && readOnly {
            throw StoreError.notAStore(path: directory.path, reason: "the store is empty and was never initialised")
        }
        let transaction = try LMDBTransaction(environment: environment, readOnly: readOnly)
        let databases = try StoreDatabases { name -> LMDBDatabase? in
            do {
                return try transaction.openDatabase(name, create: !readOnly)
            } catch let error as LMDBError
                where error == .notFound && readOnly
                && StoreDatabases.addedInFormat4.union(StoreDatabases.addedInFormat5).contains(name)
            {
                return nil
            }
        }
        var seed: UInt64
        if isNew {
            seed = UInt64.random(in: 1...UInt64.max)
            try transaction.put(
                databases.meta, key: Array("format".utf8),
                value: StoreFormat.encoded(
                    version: encryption == nil ? StoreFormat.version : StoreFormat.encryptedVersion))
            try transaction.put(
                databases.meta, key: Array("seed".utf8), value: withUnsafeBytes(of: seed.littleEndian) { Array($0) })
            if let encryption {
                try transaction.put(
                    databases.meta, key: EncryptionRow.key,
                    value: EncryptionRow(keyCheckValue: encryption.keyCheckValue(storeID: seed)).encode())
            }
            try transaction.put(databases.meta, key: Array("counters".utf8), value: StoreCounters().encode())
        } else {
            guard let bytes = try transaction.value(databases.meta, key: Array("seed".utf8)), bytes.count == 8 else {
                throw StoreError.notAStore(path: directory.path, reason: "the store has no key seed")
            }
            seed = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            // Older formats are read as they are; what is written from now
            // on may use the current one, so older binaries must refuse the store.
            if !readOnly, let formatBytes, let version = StoreFormat.version(of: formatBytes),
                version < StoreFormat.version
            {
                // In the transaction that marks the new format: a crash leaves the old store or the new one.
                if version < 5 { try HoldTable.migratePinnedFlags(transaction, databases) }
                try transaction.put(databases.meta, key: Array("format".utf8), value: StoreFormat.encoded())
            }
        }
        try transaction.commit()
        return (databases, seed, encryption)
    }

    /// Checks the key given in the configuration against the store's
    /// key check value, reading only `meta` in the probe transaction.
    /// Returns the store's keys (`nil` for a plain store, or when
    /// ``skipsKeyCheck``).
    private func checkKey(
        _ probe: LMDBTransaction, _ meta: LMDBDatabase, isEncrypted: Bool, isRekeying: Bool
    ) throws -> StoreEncryption? {
        let path = directory.path
        let rowBytes = try probe.value(meta, key: EncryptionRow.key)
        guard isEncrypted == (rowBytes != nil) else {
            throw StoreError.damagedStore(
                reason: isEncrypted
                    ? "an encrypted store's meta has no encryption row" : "a plain store's meta has an encryption row")
        }
        let rekeyBytes = try probe.value(meta, key: RekeyRow.key)
        guard isRekeying == (rekeyBytes != nil) else {
            throw StoreError.damagedStore(
                reason: isRekeying
                    ? "a store marked as being rekeyed has no rekey row" : "a rekey row in a store not being rekeyed")
        }
        if skipsKeyCheck { return nil }
        guard let key = configuration.encryption?.key else {
            if isEncrypted { throw StoreError.encryptionMismatch(path: path, storeIsEncrypted: true) }
            return nil
        }
        guard let rowBytes else { throw StoreError.encryptionMismatch(path: path, storeIsEncrypted: false) }
        guard let row = EncryptionRow(rowBytes) else {
            throw StoreError.damagedStore(reason: "the encryption row has an unknown scheme or size")
        }
        guard let seedBytes = try probe.value(meta, key: Array("seed".utf8)), seedBytes.count == 8 else {
            throw StoreError.notAStore(path: path, reason: "the store has no key seed")
        }
        let seed = seedBytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        let encryption = StoreEncryption(key: key)
        guard let rekeyBytes else {
            guard encryption.checks(row.keyCheckValue, storeID: seed) else { throw StoreError.wrongKey(path: path) }
            return encryption
        }
        // A rekey is under way: either key opens the store, and recovers
        // the other from the row, so that entries under both are read.
        guard let rekey = RekeyRow(rekeyBytes) else {
            throw StoreError.damagedStore(reason: "the rekey row has an unknown scheme or size")
        }
        let old: StoreEncryption
        let new: StoreEncryption
        if encryption.checks(row.keyCheckValue, storeID: seed) {
            old = encryption
            guard let key = old.unwrap(rekey.newKeyUnderOld, storeID: seed) else {
                throw StoreError.damagedStore(reason: "the rekey row's new key does not open")
            }
            new = StoreEncryption(key: key)
        } else if encryption.checks(rekey.newKeyCheckValue, storeID: seed) {
            new = encryption
            guard let key = new.unwrap(rekey.oldKeyUnderNew, storeID: seed) else {
                throw StoreError.damagedStore(reason: "the rekey row's old key does not open")
            }
            old = StoreEncryption(key: key)
        } else {
            throw StoreError.wrongKey(path: path)
        }
        guard old.checks(row.keyCheckValue, storeID: seed), new.checks(rekey.newKeyCheckValue, storeID: seed) else {
            throw StoreError.damagedStore(reason: "the rekey row's keys do not match their check values")
        }
        return new.replacing(old)
    }
}
