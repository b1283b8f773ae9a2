import Foundation
import MediaSupport
import TestSupport
import Testing

@testable import MediaStore

/// An encrypted store as a whole: created encrypted or plain and refused
/// with the wrong key (or none) before anything is read or changed.
@Suite(.disabled(if: TestStore.encryptsByDefault, "its tests choose plain and encrypted stores themselves"))
struct EncryptedStoreTests {
    static let key = try! StoreKey(bytes: Array(0..<32))
    static let otherKey = try! StoreKey(bytes: Array(1...32))

    static func configuration(_ key: StoreKey?) -> StoreConfiguration {
        var configuration = StoreConfiguration(initialMapSize: 64 << 20)
        configuration.encryption = key.map { StoreConfiguration.Encryption(key: $0) }
        return configuration
    }

    static func dataBytes(_ directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
    }

    /// The format version in the store's meta.
    static func formatVersion(_ store: MediaStore) throws -> UInt16? {
        try store.read { transaction in
            try transaction.txn.value(store.databases.meta, key: Array("format".utf8)).flatMap {
                StoreFormat.version(of: $0)
            }
        }
    }

    @Test func wrongKeyOrNoKeyIsRefusedWithoutSideEffects() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        var random = SplitMix64(seed: 1)
        let big = random.bytes(600_000)
        try test.store.put(big, forKey: "https://example.com/big.mp3")
        try test.store.put(Array("small value".utf8), forKey: "small")
        #expect(try Self.formatVersion(test.store) == StoreFormat.encryptedVersion)
        test.store.close()
        let before = try Self.dataBytes(test.directory)

        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.otherKey))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: true)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(nil))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: true)) {
            try MediaStore.openReadOnly(directory: test.directory)
        }
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore.openReadOnly(directory: test.directory, key: Self.otherKey)
        }
        #expect(try Self.dataBytes(test.directory) == before)

        let reader = try MediaStore.openReadOnly(directory: test.directory, key: Self.key)
        #expect(try reader.data(forKey: "https://example.com/big.mp3") == Data(big))
        reader.close()
        try test.reopen(configuration: Self.configuration(Self.key))
        #expect(try test.store.data(forKey: "https://example.com/big.mp3") == Data(big))
        #expect(try test.store.data(forKey: "small") == Data("small value".utf8))
    }

    @Test func plainStoreWithAKeyIsRefusedWithoutSideEffects() throws {
        let test = try TestStore(configuration: Self.configuration(nil))
        try test.store.put(Array("plain".utf8), forKey: "k")
        #expect(try Self.formatVersion(test.store) == StoreFormat.version)
        test.store.close()
        let before = try Self.dataBytes(test.directory)
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: false)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.key))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: false)) {
            try MediaStore.openReadOnly(directory: test.directory, key: Self.key)
        }
        #expect(try Self.dataBytes(test.directory) == before)
        try test.reopen(configuration: Self.configuration(nil))
        #expect(try test.store.data(forKey: "k") == Data("plain".utf8))
    }

    /// The key check value is salted with the store's id: two stores
    /// under one key hold different values.
    @Test func keyCheckValueIsSaltedWithTheStoreID() throws {
        let first = try TestStore(configuration: Self.configuration(Self.key))
        let second = try TestStore(configuration: Self.configuration(Self.key))
        func row(_ store: MediaStore) throws -> [UInt8]? {
            try store.read { try $0.txn.value(store.databases.meta, key: EncryptionRow.key) }
        }
        let firstRow = try #require(try row(first.store))
        let secondRow = try #require(try row(second.store))
        #expect(firstRow.count == EncryptionRow.size)
        #expect(firstRow != secondRow)
        #expect(
            EncryptionRow(firstRow)?.keyCheckValue
                == first.store.encryption?.keyCheckValue(storeID: first.store.keySeed))
        #expect(try row(TestStore(configuration: Self.configuration(nil)).store) == nil)
    }

    /// Compaction copies an encrypted store's bytes without its key, and
    /// the copy opens with the key.
    @Test func compactionNeedsNoKey() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        var random = SplitMix64(seed: 2)
        let bytes = random.bytes(300_000)
        try test.store.put(bytes, forKey: "a")
        test.store.close()
        _ = try MediaStore.compact(directory: test.directory)
        try test.reopen(configuration: Self.configuration(Self.key))
        #expect(try test.store.data(forKey: "a") == Data(bytes))
    }

    // MARK: Sealed chunks

    /// Chunks of 4 blocks, so reads open some blocks of a chunk.
    static func chunked(_ key: StoreKey?) -> StoreConfiguration {
        var configuration = configuration(key)
        configuration.chunkSize = 65_536
        return configuration
    }

    /// Whether `data.mdb` holds any 48-byte window of `bytes` (every
    /// 1,000th offset, and the first and last window).
    static func fileHoldsPlaintext(_ directory: URL, of bytes: [UInt8]) throws -> Bool {
        let file = try dataBytes(directory)
        let window = 48
        var offsets = Array(stride(from: 0, to: bytes.count - window, by: 1_000))
        offsets.append(bytes.count - window)
        return offsets.contains { file.range(of: Data(bytes[$0..<($0 + window)])) != nil }
    }

    @Test func chunkedValuesRoundTripSealed() throws {
        let test = try TestStore(configuration: Self.chunked(Self.key))
        var random = SplitMix64(seed: 3)
        let value = random.bytes(300_000)  // 5 chunks, the last one short
        try test.store.put(value, forKey: "put")
        #expect(try test.store.data(forKey: "put") == Data(value))
        for range in [0..<1, 16_383..<16_385, 65_530..<65_600, 100_000..<250_000, 299_999..<300_000, 0..<300_000] {
            #expect(try test.store.read(forKey: "put", range: range) == Data(value[range]), "\(range)")
        }
        var pieces = Data()
        try test.store.read(forKey: "put", range: 20_000..<200_000) { pieces.append($0) }
        #expect(pieces == Data(value[20_000..<200_000]))

        let writer = try test.store.makeWriter(forKey: "streamed")
        for start in stride(from: 0, to: value.count, by: 7_777) {
            try writer.append(Array(value[start..<min(start + 7_777, value.count)]))
        }
        let info = try writer.finish()
        #expect(info.length == value.count)
        #expect(info.contentDigest == ContentDigest(of: value))
        #expect(try test.store.data(forKey: "streamed") == Data(value))
        // The same bytes under two keys: one copy of each chunk.
        #expect(try test.store.statistics().chunkCount == 5)
        let report = try test.store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.chunksRead == 10)

        #expect(try test.store.remove(forKey: "put"))
        #expect(try test.store.data(forKey: "put") == nil)
        #expect(try test.store.statistics().chunkCount == 5)
        #expect(try test.store.remove(forKey: "streamed"))
        #expect(try test.store.statistics().chunkCount == 0)
        #expect(try test.store.verify().isClean)
    }

    /// Reads of 1 MiB or more open sealed chunks on several threads,
    /// straight into the output; blocks cut by the range's ends too.
    @Test func largeReadsOpenSealedChunksInParallel() throws {
        let test = try TestStore(configuration: Self.chunked(Self.key))
        var random = SplitMix64(seed: 8)
        let value = random.bytes(3_000_000)
        try test.store.put(value, forKey: "big")
        #expect(try test.store.data(forKey: "big") == Data(value))
        for range in [
            12_345..<2_500_001, 65_536..<(65_536 + StoreTransaction.parallelReadBytes), 1_000_000..<3_000_000,
        ] {
            #expect(try test.store.read(forKey: "big", range: range) == Data(value[range]), "\(range)")
        }
        // A damaged block inside a large read: corrupted, the entry dropped.
        let slot = try chunkSlots(test.store, key: "big")[20]
        try withWriteTransaction(test.store) { transaction in
            var stored = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            stored[ChunkHeader.size + 3 * (ChunkSealer.blockSize + ChunkSealer.tagSize) + 10] ^= 1
            try transaction.txn.put(transaction.db.chunks, key: slot, value: stored)
        }
        let error = #expect(throws: StoreError.self) {
            try test.store.read(forKey: "big", range: 1_000_000..<2_000_000)
        }
        guard case .corrupted(let key, _) = error else {
            Issue.record("expected corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == "big")
        #expect(try test.store.info(forKey: "big") == nil)
    }

    /// Range reads of every size, at offsets on and off block and chunk
    /// boundaries, give the value's bytes: blocks opened in place, blocks
    /// cut by either end through a buffer, on one thread and (from
    /// ``StoreTransaction/parallelReadBytes``) on several.
    @Test func rangeReadsOfEverySizeOpenTheirBytes() throws {
        let test = try TestStore(configuration: Self.chunked(Self.key))
        var random = SplitMix64(seed: 9)
        let value = random.bytes(1_500_000)
        try test.store.put(value, forKey: "track")
        let block = ChunkSealer.blockSize
        let chunk = Self.chunked(Self.key).chunkSize
        let sizes = [
            1, 100, block - 1, block, block + 1, 4 * block, chunk + 1, 3 * chunk + 5,
            StoreTransaction.parallelReadBytes - 1, StoreTransaction.parallelReadBytes + block + 3,
        ]
        let offsets = [0, 1, block - 1, block, 2 * block + 77, chunk - 10, chunk, 2 * chunk - block - 3]
        for size in sizes {
            for offset in offsets where offset + size <= value.count {
                let range = offset..<offset + size
                #expect(try test.store.read(forKey: "track", range: range) == Data(value[range]), "\(range)")
            }
        }
    }

    /// Several threads read large ranges (each taking the parallel path,
    /// ``StoreTransaction/parallelReadBytes`` or more, on chunks of the
    /// default size whose blocks the range ends cut) at once: each gets
    /// exactly the bytes of its range (self-describing content).
    @Test func concurrentLargeReadsOpenTheirBytes() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        let id = SelfDescribingBytes.contentID(variant: 1, length: 4_000_000)
        try test.store.put(SelfDescribingBytes.content(key: 7, id: id), forKey: "track")
        let failures = Locked<[String]>([])
        let done = DispatchGroup()
        let store = test.store!
        for thread in 0..<4 {
            done.enter()
            Thread {
                defer { done.leave() }
                var random = SplitMix64(seed: 0xC0FFEE &+ UInt64(thread))
                for _ in 0..<6 {
                    let size = StoreTransaction.parallelReadBytes + Int(random.next() % 1_500_000)
                    let offset = Int(random.next() % UInt64(4_000_000 - size))
                    let range = offset..<offset + size
                    do {
                        let data = try store.read(forKey: "track", range: range)
                        if data != Data(SelfDescribingBytes.bytes(key: 7, id: id, range: range)) {
                            failures.withLock { $0.append("other bytes at \(range)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(range): \(error)") }
                    }
                }
            }.start()
        }
        done.wait()
        #expect(failures.current == [])
    }

    @Test func theFileHoldsNoPlaintextOfAChunkedValue() throws {
        var random = SplitMix64(seed: 4)
        let value = random.bytes(200_000)
        let encrypted = try TestStore(configuration: Self.chunked(Self.key))
        try encrypted.store.put(value, forKey: "a")
        try encrypted.store.put(value, forKey: "b")
        encrypted.store.close()
        #expect(try !Self.fileHoldsPlaintext(encrypted.directory, of: value))
        // The search finds the bytes where they are stored in the clear.
        let plain = try TestStore(configuration: Self.chunked(nil))
        try plain.store.put(value, forKey: "a")
        plain.store.close()
        #expect(try Self.fileHoldsPlaintext(plain.directory, of: value))
    }

    /// Equal chunks share one sealed copy within a store; under another
    /// key they seal to other bytes (deduplication stays in the store).
    @Test func equalChunksShareOneSealedCopyWithinTheStoreOnly() throws {
        var random = SplitMix64(seed: 5)
        let value = random.bytes(131_072)
        let first = try TestStore(configuration: Self.chunked(Self.key))
        try first.store.put(value, forKey: "https://example.com/a.mp3")
        let once = try first.store.statistics()
        try first.store.put(value, forKey: "https://example.com/b.mp3")
        let twice = try first.store.statistics()
        #expect(once.chunkCount == 2 && twice.chunkCount == 2)
        #expect(twice.storedBytes == once.storedBytes)
        let second = try TestStore(configuration: Self.chunked(Self.otherKey))
        try second.store.put(value, forKey: "https://example.com/a.mp3")
        let firstSlots = try chunkSlots(first.store, key: "https://example.com/a.mp3")
        #expect(firstSlots == (try chunkSlots(first.store, key: "https://example.com/b.mp3")))
        #expect(Set(firstSlots).isDisjoint(with: try chunkSlots(second.store, key: "https://example.com/a.mp3")))
        // Keyed identities: not the XXH3 digest a plain store names the chunk by.
        #expect(firstSlots[0].digest != ContentDigest(of: Array(value[0..<65_536])))
        #expect(firstSlots[0].digest == first.store.encryption?.chunkIdentity(of: Array(value[0..<65_536])))
    }

    /// A byte flipped in one sealed block: reads of other blocks still
    /// open, a read of that block fails `corrupted` and drops that entry
    /// only; `verify()` finds it first without changing anything.
    @Test func aFlippedSealedByteDropsOnlyItsEntry() throws {
        var random = SplitMix64(seed: 6)
        let bad = random.bytes(131_072)
        let good = random.bytes(131_072)
        let test = try TestStore(configuration: Self.chunked(Self.key))
        try test.store.put(bad, forKey: "bad")
        try test.store.put(good, forKey: "good")
        let slot = try chunkSlots(test.store, key: "bad")[1]
        let sealed = try #require(
            try test.store.read { try $0.txn.value($0.db.chunks, key: slot) })
        test.store.close()
        // Block 2 of chunk 1: the value's bytes 98_304..<114_688.
        let blockStart = ChunkHeader.size + 2 * (ChunkSealer.blockSize + ChunkSealer.tagSize)
        let needle = Data(sealed[blockStart..<(blockStart + 64)])
        let file = test.directory.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: file)
        let found = try #require(bytes.range(of: needle))
        #expect(bytes.range(of: needle, in: found.upperBound..<bytes.endIndex) == nil)
        bytes[found.lowerBound + 100] ^= 0x5A
        try bytes.write(to: file)

        try test.reopen(configuration: Self.chunked(Self.key))
        let report = try test.store.verify()
        #expect(report.corruptKeys == ["bad"])
        #expect(try test.store.read(forKey: "bad", range: 65_536..<98_304) == Data(bad[65_536..<98_304]))
        let error = #expect(throws: StoreError.self) {
            try test.store.read(forKey: "bad", range: 100_000..<100_010)
        }
        guard case .corrupted(let key, _) = error else {
            Issue.record("expected corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == "bad")
        #expect(try test.store.info(forKey: "bad") == nil)
        #expect(try test.store.data(forKey: "good") == Data(good))
        #expect(try test.store.verify().isClean)
    }

    // MARK: Sealed records and small values

    /// Every stored value, key and record field that reveals content or
    /// origin: none of them is in the file of an encrypted store, each of
    /// them is in the file of a plain one (so the search would find them).
    @Test(arguments: [false, true])
    func theFileHoldsNoPlaintextOfSmallValuesKeysOrFields(encrypted: Bool) throws {
        var random = SplitMix64(seed: 7)
        let inline = random.bytes(100)
        let packable = random.bytes(2_000)  // packed in a plain store
        let sparse = random.bytes(70_000)
        let url = "https://media.example.com/secret/track-4711.mp3?token=abcdefgh"
        let metadata = EntryMetadata(
            mimeType: "audio/x-very-secret", etag: "\"etag-0123456789\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT",
            userInfo: ["album-title": "An unguessable album name"])
        let test = try TestStore(configuration: Self.chunked(encrypted ? Self.key : nil))
        try test.store.put(inline, forKey: url + "#inline", options: WriteOptions(metadata: metadata))
        try test.store.put(packable, forKey: url + "#packed")
        let prepared = try test.store.prepareEntry(
            forKey: url + "#sparse", length: sparse.count, options: WriteOptions(metadata: metadata))
        try test.store.write(Array(sparse[65_536...]), at: 65_536, forKey: url + "#sparse", version: prepared.version)
        let writer = try test.store.makeWriter(forKey: url + "#unfinished")
        try writer.append(Array(sparse[0..<1_000]))

        #expect(try test.store.data(forKey: url + "#inline") == Data(inline))
        #expect(try test.store.info(forKey: url + "#inline")?.metadata == metadata)
        #expect(try test.store.data(forKey: url + "#packed") == Data(packable))
        #expect(
            try test.store.read(forKey: url + "#sparse", range: 65_536..<70_000) == Data(sparse[65_536...]))
        #expect(try test.store.info(forKey: url + "#sparse")?.metadata == metadata)
        #expect(try test.store.verify().isClean)
        test.store.close()

        let file = try Self.dataBytes(test.directory)
        let secrets: [[UInt8]] = [
            Array(inline[10..<58]), Array(packable[100..<148]), Array(sparse[65_600..<65_648]),
            Array("media.example.com/secret".utf8), Array("audio/x-very-secret".utf8), Array("etag-0123456789".utf8),
            Array("01 Dec 2026".utf8), Array("album-title".utf8), Array("unguessable album".utf8),
        ]
        for secret in secrets {
            #expect((file.range(of: Data(secret)) != nil) == !encrypted, "\(String(decoding: secret, as: UTF8.self))")
        }
        withExtendedLifetime(writer) {}
        try test.reopen()
        #expect(try test.store.data(forKey: url + "#inline") == Data(inline))
        #expect(try test.store.data(forKey: url + "#packed") == Data(packable))
    }

    /// The index key of an encrypted store is the MAC of the cache key:
    /// not the seeded XXH3 a plain store uses, and different per key.
    @Test func indexKeysAreKeyed() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        try test.store.put(Array("v".utf8), forKey: "https://example.com/a")
        let slots = try test.store.read { transaction in
            try transaction.index.allRecords().map(\.slot)
        }
        #expect(slots.count == 1)
        #expect(slots.first?.digest == Self.key.indexDigest("https://example.com/a"))
        #expect(slots.first?.digest != ContentDigest(of: Array("https://example.com/a".utf8), seed: test.store.keySeed))
    }

    /// A record copied under another entry's slot does not open there
    /// (it is sealed for its own row): the entry reads as corrupted and is
    /// dropped, the other keeps its bytes.
    @Test func aRecordMovedToAnotherSlotDoesNotOpen() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        try test.store.put(Array("first".utf8), forKey: "a")
        try test.store.put(Array("second".utf8), forKey: "b")
        let slotA = try #require(try test.store.read { try $0.index.find("a")?.slot })
        let slotB = try #require(try test.store.read { try $0.index.find("b")?.slot })
        try withWriteTransaction(test.store) { transaction in
            let recordB = try #require(try transaction.txn.value(transaction.db.keys, key: slotB))
            try transaction.txn.put(transaction.db.keys, key: slotA, value: recordB)
        }
        let error = #expect(throws: StoreError.self) { try test.store.data(forKey: "a") }
        guard case .corrupted(let key, _) = error else {
            Issue.record("expected corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == "a")
        #expect(try test.store.data(forKey: "b") == Data("second".utf8))
    }

    /// After a session that died with the store open, the recovery walk
    /// reads an encrypted store's file as any other (nothing is moved
    /// aside), and a wrong-key open in between leaves the session marker
    /// as it found it.
    @Test func anUncleanSessionOfAnEncryptedStoreKeepsItsEntries() throws {
        let test = try TestStore(configuration: Self.chunked(Self.key))
        var random = SplitMix64(seed: 9)
        let value = random.bytes(200_000)
        try test.store.put(value, forKey: "a")
        test.store.close()
        try StoreSession.Record(isOpen: true, uncleanSessions: 0).text(pid: 1).write(
            to: test.directory.appendingPathComponent(StoreSession.fileName), atomically: false, encoding: .utf8)
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.chunked(Self.otherKey))
        }
        try test.reopen(configuration: Self.chunked(Self.key))
        #expect(test.store.recovery == nil)
        #expect(test.store.uncleanSessions == 1)
        #expect(try test.store.data(forKey: "a") == Data(value))
    }

    /// ``MediaStore/shared(directory:configuration:)`` hands the open
    /// store only to a caller with its key.
    @Test func theSharedStoreNeedsItsKeyToo() throws {
        let directory = temporaryPath("shared-encrypted")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore.shared(directory: directory, configuration: Self.configuration(Self.key))
        defer { store.close() }
        #expect(try MediaStore.shared(directory: directory, configuration: Self.configuration(Self.key)) === store)
        #expect(throws: StoreError.wrongKey(path: directory.path)) {
            try MediaStore.shared(directory: directory, configuration: Self.configuration(Self.otherKey))
        }
        #expect(throws: StoreError.encryptionMismatch(path: directory.path, storeIsEncrypted: true)) {
            try MediaStore.shared(directory: directory, configuration: Self.configuration(nil))
        }
        let plainDirectory = temporaryPath("shared-plain")
        defer { try? FileManager.default.removeItem(at: plainDirectory) }
        let plain = try MediaStore.shared(directory: plainDirectory, configuration: Self.configuration(nil))
        defer { plain.close() }
        #expect(throws: StoreError.encryptionMismatch(path: plainDirectory.path, storeIsEncrypted: false)) {
            try MediaStore.shared(directory: plainDirectory, configuration: Self.configuration(Self.key))
        }
    }
}

extension StoreKey {
    /// The index key a store under this key gives `cacheKey`.
    fileprivate func indexDigest(_ cacheKey: String) -> ContentDigest {
        StoreEncryption(key: self).indexKey(forCacheKey: cacheKey)
    }
}
