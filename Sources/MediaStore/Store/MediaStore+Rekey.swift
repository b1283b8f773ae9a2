import Foundation

/// How a rekey (``MediaStore/rekey(to:options:)``) goes: the size of its
/// steps, and what it reports after each.
public struct RekeyOptions: Sendable {
    /// Entries looked at in one step, at most (clamped to 1…4,096).
    public var batchEntries: Int
    /// Bytes of chunks sealed again in one step, at most (clamped to
    /// 64 KiB…64 MiB); a step always finishes the entry it is on, so one
    /// entry's chunks may go past it.
    public var batchBytes: Int
    /// Called after each committed step with the progress so far. What it
    /// throws stops the rekey there (the store stays as that step left
    /// it, and a later call resumes it), and is rethrown.
    public var progress: (@Sendable (RekeyProgress) throws -> Void)?

    public init(
        batchEntries: Int = 256, batchBytes: Int = 4 << 20,
        progress: (@Sendable (RekeyProgress) throws -> Void)? = nil
    ) {
        self.batchEntries = batchEntries
        self.batchBytes = batchBytes
        self.progress = progress
    }
}

/// How far a rekey has got in this call.
public struct RekeyProgress: Sendable, Equatable {
    /// Committed steps (write transactions).
    public var steps = 0
    /// Entries (and unfinished streamed writes) moved to the new key.
    public var entriesMoved = 0
    /// Chunks sealed again under the new key (once each, however many
    /// entries share them).
    public var chunksResealed = 0
    /// Bytes (plaintext) of the chunks moved, counted for each entry
    /// that holds one: what ``RekeyOptions/batchBytes`` bounds.
    public var bytesResealed = 0
    /// Entries dropped because a chunk of theirs was missing or failed
    /// authentication under both keys (corrupt, as a read would find them).
    public var entriesDropped = 0
    /// Whether the rekey is done: the old key opens the store no more.
    public var isFinished = false

    public init() {}
}

extension MediaStore {
    /// Re-encrypts the store under `newKey`, in bounded steps while the
    /// store stays in use.
    ///
    /// The first step records both keys (each sealed under the other) in
    /// the store and from then on everything new is written under
    /// `newKey`; each later step seals a batch of entries' records and
    /// chunks again under `newKey` and renames them (their index keys and
    /// chunk identities derive from the key), each in one write
    /// transaction; the last removes the old key's material. A crash at
    /// any point leaves a store that opens with the old key or the new
    /// one and reads every entry; while a rekey is under way either key
    /// opens it, and calling this again with `newKey` resumes it (with
    /// another key it throws ``StoreError/rekeyUnderWay(path:)``). Once it
    /// returns, opening with the old key throws ``StoreError/wrongKey(path:)``.
    ///
    /// Starting a rekey needs the store to be open in this process alone
    /// (``StoreError/inUseElsewhere(path:)`` otherwise); processes that
    /// open it while the rekey is under way take both keys. A plain store
    /// is not encrypted by a rekey: ``StoreError/encryptionMismatch(path:storeIsEncrypted:)``.
    /// Rekeying to the key the store has already returns at once.
    ///
    /// - throws: a ``StoreError``, `CancellationError` when the task is
    ///   cancelled (checked between steps), or what ``RekeyOptions/progress`` threw.
    @discardableResult
    public func rekey(to newKey: StoreKey, options: RekeyOptions = RekeyOptions()) async throws -> RekeyProgress {
        guard !isReadOnly else { throw StoreError.readOnly }
        guard encryption != nil else {
            throw StoreError.encryptionMismatch(path: directory.path, storeIsEncrypted: false)
        }
        let target = StoreEncryption(key: newKey)
        let limits = StoreTransaction.RekeyLimits(
            entries: min(max(options.batchEntries, 1), 4096), bytes: min(max(options.batchBytes, 64 << 10), 64 << 20))
        var progress = RekeyProgress()
        // One start at a time in this store: a second call waits and then
        // resumes the rekey the first started (or finds it done).
        let underWay = try rekeyStart.withLock { () throws -> Bool in
            guard var encryption = self.encryption else { return false }
            if encryption.replaced != nil, try run({ try read { try $0.rekeyRow() } }) == nil {
                // Ended by another process since this store took both keys.
                encryption = encryption.withoutReplaced
                useKeys(encryption)
            }
            if encryption.replaced == nil { return try startRekey(to: newKey, target) }
            guard target.checks(encryption.keyCheckValue(storeID: keySeed), storeID: keySeed) else {
                throw StoreError.rekeyUnderWay(path: directory.path)
            }
            return true
        }
        guard underWay else {
            progress.isFinished = true
            return progress
        }
        while !progress.isFinished {
            try Task.checkCancellation()
            let step: StoreTransaction.RekeyStepResult
            do {
                step = try write { transaction in try transaction.rekeyStep(limits: limits) }
            } catch is StoreTransaction.RekeyKeysUnknown {
                throw StoreError.rekeyUnderWay(path: directory.path)
            } catch {
                throw StoreError(error)
            }
            progress.steps += 1
            progress.entriesMoved += step.entriesMoved
            progress.chunksResealed += step.chunksResealed
            progress.bytesResealed += step.bytesResealed
            progress.entriesDropped += step.entriesDropped
            if step.isFinished {
                useKeys(target)
                progress.isFinished = true
            }
            try options.progress?(progress)
            await Task.yield()
        }
        return progress
    }

    /// Records the rekey from the store's key to `newKey` and switches
    /// this store to both keys; false when the store is under `newKey` already.
    private func startRekey(to newKey: StoreKey, _ target: StoreEncryption) throws -> Bool {
        guard let encryption else { return false }
        if target.checks(encryption.keyCheckValue(storeID: keySeed), storeID: keySeed) { return false }
        guard let maintenanceLock else {
            throw StoreError.inaccessible(
                path: directory.path,
                reason: "the maintenance lock, which tells whether others have it open, is missing")
        }
        let seed = keySeed
        let started = try maintenanceLock.whileExclusive {
            try run {
                try write { transaction in
                    try transaction.startRekey(
                        RekeyRow(
                            newKeyCheckValue: target.keyCheckValue(storeID: seed),
                            newKeyUnderOld: encryption.wrap(newKey, storeID: seed),
                            oldKeyUnderNew: target.wrap(encryption.key, storeID: seed)))
                    return true
                }
            }
        }
        guard started != nil else { throw StoreError.inUseElsewhere(path: directory.path) }
        useKeys(target.replacing(encryption))
        return true
    }
}
