import Foundation
import TestSupport
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Key rotation (``MediaStore/rekey(to:options:)``): every entry reads
/// the same afterwards under the new key alone; an interrupted rekey
/// leaves a store that either key opens and reads whole, and resumes.
@Suite struct RekeyTests {
    static let oldKey = try! StoreKey(bytes: Array(0..<32))
    static let newKey = try! StoreKey(bytes: Array(100..<132))
    static let thirdKey = try! StoreKey(bytes: Array(200..<232))
    static let chunkSize = 8192

    static func configuration(_ key: StoreKey?) -> StoreConfiguration {
        var configuration = StoreConfiguration(chunkSize: chunkSize, initialMapSize: 64 << 20)
        configuration.encryption = key.map { StoreConfiguration.Encryption(key: $0) }
        return configuration
    }

    /// Entries of every kind, each with content that names itself: whole
    /// values of several chunks, two entries with the same content (every
    /// chunk shared), one sharing only its first chunk with another, small
    /// inline values, a value filled range by range and left partial, held
    /// and pinned entries, user fields and expiry.
    struct Corpus {
        var contents: [String: [UInt8]] = [:]
        var partial: (key: String, ranges: [Range<Int>], content: [UInt8])?

        static let metadata = EntryMetadata(
            mimeType: "audio/mpeg", etag: "\"e1\"", userInfo: ["artist": "Someone", "track": "7"])

        static func content(_ key: UInt16, _ length: Int, variant: UInt8 = 0) -> [UInt8] {
            SelfDescribingBytes.content(key: key, id: SelfDescribingBytes.contentID(variant: variant, length: length))
        }

        mutating func fill(_ store: MediaStore, count: Int) throws {
            for index in 0..<count {
                let length = [200, 3000, 5 * RekeyTests.chunkSize + 123, 2 * RekeyTests.chunkSize][index % 4]
                let key = "https://example.com/track/\(index)"
                let bytes = Self.content(UInt16(index), length)
                try store.put(
                    bytes, forKey: key,
                    options: WriteOptions(
                        expiry: index % 3 == 0 ? .after(86_400) : .never, metadata: Self.metadata,
                        pinned: index % 5 == 0))
                contents[key] = bytes
            }
            // The same content twice: every chunk shared.
            let shared = Self.content(9000, 4 * RekeyTests.chunkSize)
            for key in ["shared/a", "shared/b"] {
                try store.put(shared, forKey: key)
                contents[key] = shared
            }
            // The first chunk shared, the rest not.
            let prefix = Array(shared.prefix(RekeyTests.chunkSize)) + Self.content(9001, RekeyTests.chunkSize + 77)
            try store.put(prefix, forKey: "shared/prefix")
            contents["shared/prefix"] = prefix
            _ = try store.hold("shared/a", by: "downloads")
            _ = try store.hold("https://example.com/track/1", by: "playlist")
            // A partial entry: chunks 0 and 2 of 4.
            let whole = Self.content(9002, 4 * RekeyTests.chunkSize)
            let info = try store.prepareEntry(
                forKey: "partial", length: whole.count, options: WriteOptions(metadata: Self.metadata))
            let ranges = [0..<RekeyTests.chunkSize, 2 * RekeyTests.chunkSize..<3 * RekeyTests.chunkSize]
            for range in ranges {
                _ = try store.write(Array(whole[range]), at: range.lowerBound, forKey: "partial", version: info.version)
            }
            partial = ("partial", ranges, whole)
        }

        /// Every entry, read whole and in ranges, with its fields and holds.
        func check(_ store: MediaStore, extra: [String: [UInt8]] = [:]) throws {
            for (key, bytes) in contents.merging(extra, uniquingKeysWith: { $1 }) {
                #expect(try store.data(forKey: key) == Data(bytes), "\(key)")
                if bytes.count > 100 {
                    let range = 37..<min(bytes.count, 37 + 3 * RekeyTests.chunkSize)
                    #expect(try store.read(forKey: key, range: range) == Data(bytes[range]), "\(key) \(range)")
                }
                if key.hasPrefix("https://") && extra[key] == nil {
                    let info = try #require(try store.info(forKey: key))
                    #expect(info.metadata == Self.metadata)
                    let index = Int(key.split(separator: "/").last!)!
                    // Pinned, or held (track 1).
                    #expect(info.isPinned == (index % 5 == 0 || index == 1), "\(key)")
                    #expect((info.expiry != nil) == (index % 3 == 0), "\(key)")
                }
            }
            #expect(try store.holders(of: "shared/a") == ["downloads"])
            #expect(try store.holders(of: "https://example.com/track/1") == ["playlist"])
            if let partial {
                #expect(try store.cachedRanges(forKey: partial.key) == partial.ranges)
                for range in partial.ranges {
                    #expect(try store.read(forKey: partial.key, range: range) == Data(partial.content[range]))
                }
                #expect(try store.info(forKey: partial.key)?.metadata == Self.metadata)
            }
        }
    }

    static func dataBytes(_ directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
    }

    /// The meta row `rekey`, if there is one.
    static func rekeyRow(_ store: MediaStore) throws -> RekeyRow? {
        try store.read { transaction in
            try transaction.txn.value(store.databases.meta, key: RekeyRow.key).flatMap { RekeyRow($0) }
        }
    }

    /// How many `keys` rows and chunks are named under `key`'s index keys
    /// and chunk identities.
    static func rowsNamed(under key: StoreKey, in store: MediaStore, corpus: Corpus) throws -> (
        entries: Int, chunks: Int
    ) {
        let encryption = StoreEncryption(key: key)
        return try store.read { transaction in
            var entries = 0
            var chunks = 0
            for (slot, record) in try transaction.index.allRecords()
            where encryption.indexKey(forCacheKey: record.key) == slot.digest {
                entries += 1
                for (_, extent) in try transaction.extents.rows(entryID: record.entryID) {
                    let bytes = try transaction.chunks.read(extent.chunk)
                    if encryption.chunkIdentity(of: bytes) == extent.chunk.digest { chunks += 1 }
                }
            }
            return (entries, chunks)
        }
    }

    @Test func rekeyKeepsEveryEntryAndSharing() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        var corpus = Corpus()
        try corpus.fill(test.store, count: 24)
        let before = try test.store.statistics()

        let progress = try await test.store.rekey(to: Self.newKey, options: RekeyOptions(batchEntries: 5))
        #expect(progress.isFinished)
        #expect(progress.steps > 3)
        #expect(progress.entriesMoved == before.entryCount)
        #expect(progress.entriesDropped == 0)
        // Every chunk sealed again once, shared ones too.
        #expect(progress.chunksResealed == before.chunkCount)
        try corpus.check(test.store)
        let after = try test.store.statistics()
        #expect(after.entryCount == before.entryCount)
        #expect(after.chunkCount == before.chunkCount)
        #expect(after.uniqueChunkBytes == before.uniqueChunkBytes)
        #expect(try test.store.verify().problems == [])
        #expect(try Self.rekeyRow(test.store) == nil)
        #expect(try Self.rowsNamed(under: Self.oldKey, in: test.store, corpus: corpus).entries == 0)
        let named = try Self.rowsNamed(under: Self.newKey, in: test.store, corpus: corpus)
        #expect(named.entries == before.entryCount)
        // Writes after the rekey share with the moved chunks.
        try test.store.put(corpus.contents["shared/a"]!, forKey: "shared/c")
        #expect(try test.store.statistics().chunkCount == before.chunkCount)

        test.store.close()
        let closed = try Self.dataBytes(test.directory)
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.oldKey))
        }
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore.openReadOnly(directory: test.directory, key: Self.oldKey)
        }
        #expect(try Self.dataBytes(test.directory) == closed)
        try test.reopen(configuration: Self.configuration(Self.newKey))
        try corpus.check(test.store)
        #expect(try test.store.verify().problems == [])
        // Rekeying to the key it has does nothing.
        let again = try await test.store.rekey(to: Self.newKey)
        #expect(
            again
                == {
                    var done = RekeyProgress(); done.isFinished = true; return done
                }())
    }

    struct Stop: Error {}

    @Test func interruptedRekeyOpensWithEitherKeyAndResumes() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        var corpus = Corpus()
        try corpus.fill(test.store, count: 30)
        let entryCount = try test.store.statistics().entryCount

        // Stopped after two steps, by the progress handler.
        await #expect(throws: Stop.self) {
            try await test.store.rekey(
                to: Self.newKey,
                options: RekeyOptions(batchEntries: 4) { progress in if progress.steps == 3 { throw Stop() } })
        }
        let row = try #require(try Self.rekeyRow(test.store))
        #expect(row.phase == .entries && !row.cursor.isEmpty)
        // Marked so that a build that knows no rekey refuses the store.
        #expect(try EncryptedStoreTests.formatVersion(test.store) == StoreFormat.rekeyingVersion)
        let moved = try Self.rowsNamed(under: Self.newKey, in: test.store, corpus: corpus).entries
        #expect(moved > 0 && moved < entryCount)
        // The open store reads and writes across both keys.
        try corpus.check(test.store)
        var extra: [String: [UInt8]] = [:]
        extra["written/while/rekeying"] = Corpus.content(7000, 3 * Self.chunkSize)
        try test.store.put(extra["written/while/rekeying"]!, forKey: "written/while/rekeying")
        #expect(try test.store.verify().problems == [])
        await #expect(throws: StoreError.rekeyUnderWay(path: test.directory.path)) {
            try await test.store.rekey(to: Self.thirdKey)
        }

        // A third key is refused and changes nothing.
        test.store.close()
        let closed = try Self.dataBytes(test.directory)
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.thirdKey))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: true)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(nil))
        }
        #expect(try Self.dataBytes(test.directory) == closed)

        // The old key opens it and reads everything; what it writes goes under the new key.
        try test.reopen(configuration: Self.configuration(Self.oldKey))
        try corpus.check(test.store, extra: extra)
        extra["written/under/old/key"] = Corpus.content(7001, 2 * Self.chunkSize + 5)
        try test.store.put(extra["written/under/old/key"]!, forKey: "written/under/old/key")
        // A key overwritten before it was moved.
        extra["https://example.com/track/29"] = Corpus.content(7002, 100)
        try test.store.put(extra["https://example.com/track/29"]!, forKey: "https://example.com/track/29")
        corpus.contents["https://example.com/track/29"] = nil
        test.store.close()
        let reader = try MediaStore.openReadOnly(directory: test.directory, key: Self.newKey)
        try corpus.check(reader, extra: extra)
        reader.close()

        // The new key opens it too, and resumes the rekey.
        try test.reopen(configuration: Self.configuration(Self.newKey))
        try corpus.check(test.store, extra: extra)
        #expect(try Self.rekeyRow(test.store) != nil)
        let resumed = try await test.store.rekey(to: Self.newKey, options: RekeyOptions(batchEntries: 4))
        #expect(resumed.isFinished && resumed.entriesDropped == 0)
        #expect(resumed.entriesMoved > 0 && resumed.entriesMoved < entryCount)
        #expect(try Self.rekeyRow(test.store) == nil)
        #expect(try EncryptedStoreTests.formatVersion(test.store) == StoreFormat.encryptedVersion)
        try corpus.check(test.store, extra: extra)
        #expect(try test.store.verify().problems == [])
        #expect(try Self.rowsNamed(under: Self.oldKey, in: test.store, corpus: corpus).entries == 0)

        test.store.close()
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.oldKey))
        }
        try test.reopen(configuration: Self.configuration(Self.newKey))
        try corpus.check(test.store, extra: extra)
    }

    @Test func unfinishedStreamedWriteIsMovedToo() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        // Past the 4 MiB a streamed write commits to its staging entry at.
        let content = Corpus.content(8000, MediaStore.writeBatchBytes + 300 * 1024)
        let writer = try test.store.makeWriter(forKey: "streamed")
        try writer.append(Array(content.prefix(MediaStore.writeBatchBytes + 100 * 1024)))
        #expect(try test.store.read { try $0.index.stagingCount() } == 1)
        let progress = try await test.store.rekey(to: Self.newKey)
        #expect(progress.entriesMoved == 1 && progress.chunksResealed == MediaStore.writeBatchBytes / Self.chunkSize)
        try writer.append(Array(content.dropFirst(MediaStore.writeBatchBytes + 100 * 1024)))
        _ = try writer.finish()
        #expect(try test.store.data(forKey: "streamed") == Data(content))
        test.store.close()
        try test.reopen(configuration: Self.configuration(Self.newKey))
        #expect(try test.store.data(forKey: "streamed") == Data(content))
        #expect(try test.store.verify().problems == [])
    }

    /// A chunk damaged before the rekey opens under neither key: the
    /// rekey drops that entry (as a read would) and moves the rest.
    @Test func aCorruptChunkDropsOnlyItsEntry() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        var corpus = Corpus()
        try corpus.fill(test.store, count: 8)
        let slot = try chunkSlots(test.store, key: "https://example.com/track/2")[3]
        try withWriteTransaction(test.store) { transaction in
            var value = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            value[value.count - 100] ^= 0x20
            try transaction.txn.put(transaction.db.chunks, key: slot, value: value)
        }
        let progress = try await test.store.rekey(to: Self.newKey)
        #expect(progress.entriesDropped == 1)
        #expect(try test.store.info(forKey: "https://example.com/track/2") == nil)
        corpus.contents["https://example.com/track/2"] = nil
        try corpus.check(test.store)
        #expect(try test.store.verify().problems == [])
    }

    /// Another process with the store open (its shared lock on
    /// `.maintenance-lock`, taken here through a descriptor of its own,
    /// which `flock` treats as another holder) keeps a rekey from starting
    /// and changes nothing; once it is gone the rekey runs.
    @Test func anotherOpenerKeepsARekeyFromStarting() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        try test.store.put(Corpus.content(1, 3 * Self.chunkSize), forKey: "k")
        let lockPath = test.directory.appendingPathComponent(MaintenanceLock.fileName).path
        let other = open(lockPath, O_RDWR)
        try #require(other >= 0)
        #expect(flock(other, LOCK_SH) == 0)
        await #expect(throws: StoreError.inUseElsewhere(path: test.directory.path)) {
            try await test.store.rekey(to: Self.newKey)
        }
        #expect(try Self.rekeyRow(test.store) == nil)
        #expect(test.store.encryption?.replaced == nil)
        #expect(try test.store.data(forKey: "k") == Data(Corpus.content(1, 3 * Self.chunkSize)))
        close(other)
        #expect(try await test.store.rekey(to: Self.newKey).isFinished)
        // The shared store of the directory is this one, and takes the key it has now.
        let path = test.directory.path
        test.store.close()
        let shared = try MediaStore.shared(directory: test.directory, configuration: Self.configuration(Self.newKey))
        defer { shared.close() }
        try await shared.rekey(to: Self.thirdKey)
        #expect(
            try MediaStore.shared(directory: test.directory, configuration: Self.configuration(Self.thirdKey))
                === shared)
        #expect(throws: StoreError.wrongKey(path: path)) {
            try MediaStore.shared(directory: test.directory, configuration: Self.configuration(Self.newKey))
        }
        #expect(try shared.data(forKey: "k") == Data(Corpus.content(1, 3 * Self.chunkSize)))
    }

    /// The format mark and the rekey row go together: either alone is
    /// damage, refused with either key before anything is read or changed.
    @Test(arguments: [true, false]) func aRekeyRowAndItsFormatMarkGoTogether(dropRow: Bool) async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        try test.store.put(Corpus.content(2, 100), forKey: "k")
        if dropRow {
            await #expect(throws: Stop.self) {
                try await test.store.rekey(to: Self.newKey, options: RekeyOptions { _ in throw Stop() })
            }
        }
        try withWriteTransaction(test.store) { transaction in
            if dropRow {
                try transaction.txn.delete(transaction.db.meta, key: RekeyRow.key)
            } else {
                try transaction.txn.put(
                    transaction.db.meta, key: RekeyRow.key,
                    value: RekeyRow(
                        newKeyCheckValue: Array(repeating: 1, count: 32),
                        newKeyUnderOld: Array(repeating: 2, count: RekeyRow.wrappedKeyCount),
                        oldKeyUnderNew: Array(repeating: 3, count: RekeyRow.wrappedKeyCount)
                    ).encode())
            }
        }
        test.store.close()
        let before = try Self.dataBytes(test.directory)
        let reason =
            dropRow ? "a store marked as being rekeyed has no rekey row" : "a rekey row in a store not being rekeyed"
        for key in [Self.oldKey, Self.newKey] {
            #expect(throws: StoreError.damagedStore(reason: reason)) {
                try MediaStore.openReadOnly(directory: test.directory, key: key)
            }
        }
        #expect(try Self.dataBytes(test.directory) == before)
    }

    /// Two rekeys to one key at once in one store: one starts it, both
    /// run steps (each step reads the progress in its own transaction),
    /// and every entry reads the same afterwards.
    @Test func twoConcurrentRekeysToOneKeyAgree() async throws {
        let test = try TestStore(configuration: Self.configuration(Self.oldKey))
        var corpus = Corpus()
        try corpus.fill(test.store, count: 20)
        let store = test.store!
        async let first = store.rekey(to: Self.newKey, options: RekeyOptions(batchEntries: 2))
        async let second = store.rekey(to: Self.newKey, options: RekeyOptions(batchEntries: 2))
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.isFinished })
        #expect(results.reduce(0) { $0 + $1.entriesMoved } == corpus.contents.count + 1)  // and the partial entry
        #expect(try Self.rekeyRow(store) == nil)
        try corpus.check(store)
        #expect(try store.verify().problems == [])
    }

    @Test func plainStoreIsNotRekeyed() async throws {
        let test = try TestStore(configuration: Self.configuration(nil), exactly: true)
        try test.store.put(Array("plain".utf8), forKey: "k")
        await #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: false)) {
            try await test.store.rekey(to: Self.newKey)
        }
        #expect(try test.store.data(forKey: "k") == Data("plain".utf8))
    }

    @Test func rekeyRowRoundTripsAndRefusesMalformedBytes() {
        var row = RekeyRow(
            newKeyCheckValue: Array(repeating: 1, count: 32),
            newKeyUnderOld: Array(repeating: 2, count: RekeyRow.wrappedKeyCount),
            oldKeyUnderNew: Array(repeating: 3, count: RekeyRow.wrappedKeyCount))
        row.phase = .entries
        row.cursor = Array(0..<18)
        let bytes = row.encode()
        #expect(RekeyRow(bytes) == row)
        #expect(RekeyRow(bytes.dropLast()) == nil)
        #expect(RekeyRow(bytes + [0]) == nil)
        #expect(RekeyRow([9] + bytes.dropFirst()) == nil)
        var badPhase = bytes
        badPhase[RekeyRow.fixedCount - 2] = 7
        #expect(RekeyRow(badPhase) == nil)
        var longCursor = row
        longCursor.cursor = []
        #expect(RekeyRow(longCursor.encode() + [0]) == nil)
    }
}
