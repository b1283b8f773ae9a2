import Foundation
import Testing

@testable import MediaStore

/// Store format 4: whole values of more than ``PackStore/inlineMaximum``
/// bytes (up to the inline limit) are stored several to a `packs` row.
@Suite struct PackLayoutTests {
    func row(_ values: [[UInt8]]) -> [UInt8] {
        var entries: [PackLayout.Entry] = []
        var payload: [UInt8] = []
        for (index, value) in values.enumerated() {
            let owner = Slot(ContentDigest(of: [UInt8(index)]), ordinal: UInt16(index))
            entries.append(
                PackLayout.Entry(owner: owner, offset: PackLayout.headerSize + payload.count, length: value.count))
            payload += value
        }
        var row = [UInt8](repeating: 0xEE, count: PackLayout.size(count: entries.count, payload: payload.count))
        row.withUnsafeMutableBytes { out in
            payload.withUnsafeBytes { PackLayout.write(entries: entries, payload: $0, into: out) }
        }
        return row
    }

    @Test func aRowReadsBackItsDirectoryAndValues() throws {
        let values: [[UInt8]] = [Array(repeating: 1, count: 300), [], Array(0..<200).map { UInt8($0) }]
        let row = row(values)
        try row.withUnsafeBytes { buffer in
            let entries = try #require(PackLayout.entries(of: buffer))
            #expect(entries.map(\.length) == [300, 0, 200])
            #expect(entries.map(\.offset) == [8, 308, 308])
            #expect(entries[2].owner == Slot(ContentDigest(of: [2]), ordinal: 2))
            for (entry, value) in zip(entries, values) {
                let read = try #require(PackLayout.value(in: buffer, offset: entry.offset, length: entry.length))
                #expect(Array(read) == value)
            }
            #expect(PackLayout.value(in: buffer, offset: 7, length: 2) == nil)  // the header
            #expect(PackLayout.value(in: buffer, offset: buffer.count - 10, length: 11) == nil)  // past the end
        }
    }

    @Test func malformedRowsAreRefused() {
        let good = row([[1, 2, 3]])
        var cases: [[UInt8]] = [[], Array(good.prefix(7)), Array(good.prefix(PackLayout.headerSize + 20))]
        for index in 0..<4 {  // magic, version, reserved bytes
            var bad = good
            bad[index] ^= 0x01
            cases.append(bad)
        }
        var hugeCount = good
        hugeCount[4] = 0xFF
        hugeCount[7] = 0x7F
        cases.append(hugeCount)
        var offsetPastEnd = good
        offsetPastEnd[PackLayout.headerSize + 3 + Slot.size] = 9  // offset 9 + length 3 > the payload's end at 11
        for bad in cases {
            bad.withUnsafeBytes { buffer in
                #expect(PackLayout.entries(of: buffer) == nil, "\(bad.prefix(12))")
            }
        }
        offsetPastEnd.withUnsafeBytes { buffer in
            #expect(PackLayout.entries(of: buffer) == nil)
            // A read needs neither header nor directory: the record's digest checks it.
            #expect(PackLayout.value(in: buffer, offset: 8, length: 3).map(Array.init) == [1, 2, 3])
        }
    }

    @Test func useRowsRoundTripAndCallForCompactionUnderHalf() {
        let use = PackUse(liveCount: 3, liveBytes: 100, payloadBytes: 201)
        #expect(use.encode().withUnsafeBytes { PackUse($0) } == use)
        #expect(use.wantsCompaction)
        #expect(!PackUse(liveCount: 3, liveBytes: 100, payloadBytes: 200).wantsCompaction)
        #expect(!PackUse(liveCount: 0, liveBytes: 0, payloadBytes: 200).wantsCompaction)
        #expect(
            PackUse(liveCount: 1, liveBytes: 300, payloadBytes: 200).encode().withUnsafeBytes { PackUse($0) } == nil)
        #expect([UInt8](repeating: 0, count: 11).withUnsafeBytes { PackUse($0) } == nil)
    }
}

@Suite struct PackTests {
    let directory = temporaryPath("packs")

    func open(readOnly: Bool = false) throws -> MediaStore {
        readOnly
            ? try MediaStore.openReadOnly(directory: directory)
            : try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
    }

    static func key(_ index: Int) -> String { "https://cdn.example/track/\(index)?sig=\(index * 7919)" }

    /// Self-describing content of key `index`, `length` bytes.
    static func value(_ index: Int, length: Int, variant: UInt8 = 0) -> [UInt8] {
        SelfDescribingBytes.content(
            key: UInt16(index), id: SelfDescribingBytes.contentID(variant: variant, length: length))
    }

    /// Length of key `index`'s value: from just above the inline maximum to the inline limit.
    static func length(_ index: Int) -> Int { PackStore.inlineMaximum + 1 + (index * 997) % 3_968 }

    struct PackCensus: Equatable {
        var packs = 0
        var useRows = 0
        var liveValues = 0
    }

    func census(_ store: MediaStore) throws -> PackCensus {
        try withReadTransaction(store) { transaction in
            var census = PackCensus()
            try transaction.packs.forEach { _, _, use in
                census.packs += 1
                census.liveValues += use?.liveCount ?? 0
            }
            census.useRows = try transaction.packs.useRowCount()
            return census
        }
    }

    @Test func aBatchOfSmallValuesSharesFewPacksAndReadsBackAfterReopening() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let count = 300
        do {
            let store = try open()
            try store.performBatch { batch in
                for index in 0..<count {
                    try batch.put(Self.value(index, length: Self.length(index)), forKey: Self.key(index))
                }
            }
            let bytes = (0..<count).reduce(0) { $0 + Self.length($1) }
            let census = try census(store)
            // Whole packs of 64 KiB: the premise is that values really share rows.
            #expect(census.packs <= bytes / 60_000 + 1)
            #expect(census.packs >= 2)
            #expect(census == PackCensus(packs: census.packs, useRows: census.packs, liveValues: count))
            #expect(try store.statistics().storedBytes == bytes)
            #expect(try store.info(forKey: Self.key(7))?.chunkCount == 0)
            #expect(try store.cachedRanges(forKey: Self.key(7)) == [0..<Self.length(7)])
        }
        let store = try open()
        for index in 0..<count {
            #expect(try store.data(forKey: Self.key(index)) == Data(Self.value(index, length: Self.length(index))))
        }
        let length = Self.length(11)
        #expect(
            try store.read(forKey: Self.key(11), range: 100..<length) == Data(Self.value(11, length: length)[100...]))
        #expect(try store.verify().isClean)
    }

    @Test func valuesAtTheBoundsArePackedOrInlineAsDocumented() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        let lengths = [0, 1, PackStore.inlineMaximum, PackStore.inlineMaximum + 1, 4_096, 4_097, 70_000]
        try store.performBatch { batch in
            for (index, length) in lengths.enumerated() {
                try batch.put(Self.value(index, length: length), forKey: Self.key(index))
            }
        }
        try withReadTransaction(store) { transaction in
            for (index, length) in lengths.enumerated() {
                let record = try #require(try transaction.index.find(Self.key(index))?.record)
                #expect(record.isPacked == (length > PackStore.inlineMaximum && length <= 4_096), "\(length)")
                #expect(record.isInline == (length <= PackStore.inlineMaximum), "\(length)")
            }
        }
        #expect(try census(store) == PackCensus(packs: 1, useRows: 1, liveValues: 2))
        for (index, length) in lengths.enumerated() {
            #expect(try store.data(forKey: Self.key(index)) == Data(Self.value(index, length: length)))
        }
        #expect(try store.verify().isClean)
    }

    @Test func aTransactionWithOneSmallValueKeepsItInline() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        try store.put(Self.value(1, length: 1_000), forKey: Self.key(1))
        try store.performBatch { batch in
            // Two values, one replaced: one live value is left in the open pack.
            try batch.put(Self.value(2, length: 1_000), forKey: Self.key(2))
            try batch.put(Self.value(3, length: 2_000), forKey: Self.key(3))
            #expect(try batch.remove(forKey: Self.key(2)))
        }
        try withReadTransaction(store) { transaction in
            for index in [1, 3] {
                let record = try #require(try transaction.index.find(Self.key(index))?.record)
                #expect(record.isInline && !record.isPacked)
            }
        }
        #expect(try census(store) == PackCensus())
        #expect(try store.data(forKey: Self.key(1)) == Data(Self.value(1, length: 1_000)))
        #expect(try store.data(forKey: Self.key(3)) == Data(Self.value(3, length: 2_000)))
        #expect(try store.statistics().storedBytes == 3_000)
        #expect(try store.verify().isClean)
    }

    @Test func removingMostValuesCompactsPacksAndRemovingAllDeletesThem() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        let count = 400
        try store.performBatch { batch in
            for index in 0..<count {
                try batch.put(Self.value(index, length: Self.length(index)), forKey: Self.key(index))
            }
        }
        let before = try census(store)
        // Remove two of every three, one transaction each: packs fall under half live.
        for index in 0..<count where index % 3 != 0 {
            #expect(try store.remove(forKey: Self.key(index)))
        }
        let after = try census(store)
        #expect(after.liveValues == (0..<count).filter { $0 % 3 == 0 }.count)
        // No pack is left under half live: each was compacted when it fell
        // under, its live values moved to a new pack.
        var (live, payload) = (0, 0)
        var ids: Set<UInt64> = []
        try withReadTransaction(store) { transaction in
            try transaction.packs.forEach { id, _, use in
                let use = try #require(use)
                #expect(!use.wantsCompaction, "pack \(id ?? 0): \(use)")
                live += use.liveBytes
                payload += use.payloadBytes
                ids.insert(try #require(id))
            }
        }
        #expect(payload <= 2 * live)
        #expect(ids.contains { $0 > UInt64(before.packs) }, "no pack was compacted: \(ids.sorted())")
        for index in 0..<count {
            let expected = index % 3 == 0 ? Data(Self.value(index, length: Self.length(index))) : nil
            #expect(try store.data(forKey: Self.key(index)) == expected)
        }
        #expect(try store.verify().isClean)
        try store.removeAll()
        #expect(try census(store) == PackCensus())
        #expect(try store.statistics().storedBytes == 0)
        #expect(try store.verify().isClean)
    }

    @Test func aKeyReplacedAndEvictedWithinOneBatchLeavesConsistentPacks() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(countLimit: 50, initialMapSize: 64 << 20))
        try store.performBatch { batch in
            for index in 0..<120 {
                try batch.put(Self.value(index, length: 1_000), forKey: Self.key(index))
                // The same key again in the same transaction: the first value, still
                // in the open pack, is released there.
                try batch.put(Self.value(index, length: 1_000, variant: 1), forKey: Self.key(index))
            }
            #expect(try batch.remove(forKey: Self.key(3)))
        }
        // The limit evicted most of them in the same transaction.
        let stats = try store.statistics()
        #expect(stats.entryCount <= 50)
        for index in 0..<120 {
            if let data = try store.data(forKey: Self.key(index)) {
                #expect(data == Data(Self.value(index, length: 1_000, variant: 1)))
            }
        }
        #expect(try census(store).liveValues == stats.entryCount)
        #expect(try store.verify().isClean)
    }

    @Test func aCorruptPackedValueIsCaughtAndOnlyItsEntryIsDropped() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 404)
        let values = (0..<3).map { _ in generator.bulkBytes(2_000) }
        do {
            let store = try open()
            try store.performBatch { batch in
                for (index, value) in values.enumerated() { try batch.put(value, forKey: Self.key(index)) }
            }
            #expect(try census(store).packs == 1)
        }
        // Flip one byte of the middle value in the file.
        let file = directory.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: file)
        let found = try #require(bytes.range(of: Data(values[1][500..<564])))
        bytes[found.lowerBound + 9] ^= 0x20
        try bytes.write(to: file)

        let store = try open()
        #expect(try store.verify().corruptKeys == [Self.key(1)])
        let error = #expect(throws: StoreError.self) { try store.data(forKey: Self.key(1)) }
        guard case .corrupted(let key, _) = error else {
            Issue.record("expected .corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == Self.key(1))
        #expect(try store.info(forKey: Self.key(1)) == nil)
        #expect(try store.data(forKey: Self.key(0)) == Data(values[0]))
        #expect(try store.data(forKey: Self.key(2)) == Data(values[2]))
        #expect(try store.verify().isClean)
    }

    @Test func verifyReportsAMissingPackAndAWrongUseRow() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        for index in [1, 2] {
            try store.performBatch { batch in
                try batch.put(Self.value(index, length: 1_000), forKey: Self.key(index))
                try batch.put(Self.value(index + 10, length: 1_000), forKey: Self.key(index + 10))
            }
        }
        let (first, second) = try withReadTransaction(store) { transaction in
            (
                try #require(try transaction.index.find(Self.key(1))?.record.packID),
                try #require(try transaction.index.find(Self.key(2))?.record.packID)
            )
        }
        try withWriteTransaction(store) { transaction in
            try transaction.txn.delete(try #require(transaction.db.packs), key: StoreKeys.pack(first))
            try transaction.txn.put(
                try #require(transaction.db.packUse), key: StoreKeys.pack(second),
                value: PackUse(liveCount: 3, liveBytes: 2_000, payloadBytes: 2_000).encode())
        }
        let report = try store.verify()
        #expect(Set(report.corruptKeys) == [Self.key(1), Self.key(11)])
        #expect(report.problems.contains { $0.contains("pack \(second): use says 3 values") }, "\(report.problems)")
        #expect(report.problems.contains { $0.contains("1 pack use rows") == false && $0.contains("use rows") })
        let error = #expect(throws: StoreError.self) { try store.data(forKey: Self.key(1)) }
        guard case .corrupted = error else {
            Issue.record("expected .corrupted, got \(String(describing: error))")
            return
        }
        #expect(try store.data(forKey: Self.key(2)) == Data(Self.value(2, length: 1_000)))
    }

    @Test func aFormatThreeStoreOpensReadOnlyWithoutPacksAndIsUpgradedOnAWritableOpen() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            // A store as format 3 left it: inline and chunked values, no pack databases.
            let store = try open()
            try store.put(Self.value(1, length: 100), forKey: Self.key(1))
            try store.put(Self.value(2, length: 300_000), forKey: Self.key(2))
            try withWriteTransaction(store) { transaction in
                try transaction.txn.dropDatabase(try #require(transaction.db.packs))
                try transaction.txn.dropDatabase(try #require(transaction.db.packUse))
                try transaction.txn.put(
                    transaction.db.meta, key: Array("format".utf8), value: StoreFormat.magic + [3, 0])
            }
            store.close()
        }
        do {
            let store = try open(readOnly: true)
            #expect(try store.data(forKey: Self.key(1)) == Data(Self.value(1, length: 100)))
            #expect(try store.data(forKey: Self.key(2)) == Data(Self.value(2, length: 300_000)))
            #expect(try store.verify().isClean)
            store.close()
        }
        let store = try open()
        let format = try withReadTransaction(store) { try $0.txn.value($0.db.meta, key: Array("format".utf8)) }
        #expect(format.flatMap(StoreFormat.version(of:)) == StoreFormat.version)
        try store.performBatch { batch in
            try batch.put(Self.value(3, length: 1_000), forKey: Self.key(3))
            try batch.put(Self.value(4, length: 1_000), forKey: Self.key(4))
        }
        #expect(try census(store).packs == 1)
        #expect(try store.data(forKey: Self.key(3)) == Data(Self.value(3, length: 1_000)))
        #expect(try store.verify().isClean)
    }

    @Test func compactingAPackWithADamagedDirectoryEntryKeepsItForTheValueItCannotFind() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        let count = 20
        try store.performBatch { batch in
            for index in 0..<count { try batch.put(Self.value(index, length: 1_000), forKey: Self.key(index)) }
        }
        let id = try withReadTransaction(store) { try #require(try $0.index.find(Self.key(0))?.record.packID) }
        // Damage the owner slot of key 19's directory entry (the last one).
        try withWriteTransaction(store) { transaction in
            let packs = try #require(transaction.db.packs)
            var row = try #require(try transaction.txn.value(packs, key: StoreKeys.pack(id)))
            row[row.count - PackLayout.directoryEntrySize] ^= 0xFF
            try transaction.txn.put(packs, key: StoreKeys.pack(id), value: row)
        }
        // Remove 11 of 20: the pack falls under half live and is compacted.
        for index in 0..<11 { #expect(try store.remove(forKey: Self.key(index))) }
        // The 8 values its directory names moved; the pack stays for key 19, counted alone.
        let use = try withReadTransaction(store) { try $0.packs.use(id) }
        #expect(use?.liveCount == 1)
        #expect(use?.liveBytes == 1_000)
        for index in 11..<count {
            #expect(try store.data(forKey: Self.key(index)) == Data(Self.value(index, length: 1_000)))
        }
        #expect(try store.verify().isClean)
        #expect(try store.remove(forKey: Self.key(19)))
        #expect(try census(store).packs == 1)  // the 8 moved values' pack
        #expect(try store.verify().isClean)
    }
}
