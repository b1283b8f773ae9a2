import Foundation
import Testing

@testable import MediaStore

/// Point 11 (map size): the map grows by itself; MAP_FULL never reaches the user.
@Suite struct MapGrowthTests {
    static let tiny = StoreConfiguration(initialMapSize: 1 << 20)

    @Test func aOneMegabyteMapTakesFiftyMegabytes() throws {
        let t = try TestStore.inMemoryFileSystem(configuration: Self.tiny)
        #expect(try t.store.statistics().mapSize < 2 << 20)
        var generator = SeededGenerator(seed: 101)
        let source = generator.bulkBytes(51 << 20)
        let keys = (0..<50).map { "k\($0)" }
        for (index, key) in keys.enumerated() {
            try t.store.put(source[(index << 20)..<((index + 1) << 20)], forKey: key)
        }
        let stats = try t.store.statistics()
        #expect(stats.entryCount == 50)
        #expect(stats.logicalBytes == 50 << 20)
        #expect(stats.mapSize >= 50 << 20)
        #expect(stats.fileBytes <= stats.mapSize)
        for index in [0, 17, 49] {
            #expect(try t.store.data(forKey: keys[index]) == Data(source[(index << 20)..<((index + 1) << 20)]))
        }

        // A reopen that asks for less gets at least the data (LMDB's rule)
        // and grows again as needed.
        try t.reopen()
        #expect(try t.store.statistics().mapSize >= stats.fileBytes)
        try t.store.put(source[(50 << 20)...], forKey: "after-reopen")
        #expect(try t.store.statistics().entryCount == 51)
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func streamedAndSparseWritesGrowTheMapToo() throws {
        let t = try TestStore.inMemoryFileSystem(
            configuration: StoreConfiguration(chunkSize: 65_536, initialMapSize: 1 << 20))
        var generator = SeededGenerator(seed: 102)
        let streamed = generator.bulkBytes(20 << 20)
        let writer = try t.store.makeWriter(forKey: "streamed")
        var offset = 0
        while offset < streamed.count {
            let end = min(streamed.count, offset + 3_000_001)
            try writer.append(streamed[offset..<end])
            offset = end
        }
        try writer.finish()

        let sparse = generator.bulkBytes(8 << 20)
        let version = try t.store.prepareEntry(forKey: "sparse", length: sparse.count).version
        try t.store.write(sparse[(4 << 20)...], at: 4 << 20, forKey: "sparse", version: version)
        try t.store.write(sparse[..<(4 << 20)], at: 0, forKey: "sparse", version: version)

        // A batch of many small puts in one transaction.
        try t.store.performBatch { batch in
            for index in 0..<300 { try batch.put(generator.bytes(3_000), forKey: "small-\(index)") }
        }

        #expect(try t.store.data(forKey: "streamed") == Data(streamed))
        #expect(try t.store.data(forKey: "sparse") == Data(sparse))
        #expect(try t.store.statistics().entryCount == 302)
        #expect(try t.store.verify().isClean)
    }
}
