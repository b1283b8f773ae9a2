import Foundation
import Testing

@testable import MediaStore

@Suite struct PutGetTests {
    @Test func smallValueRoundTrips() throws {
        let t = try TestStore()
        let value = Array("hello".utf8)
        let info = try t.store.put(value, forKey: "k")
        #expect(info.isComplete)
        #expect(try t.store.data(forKey: "k") == Data(value))
        #expect(try t.store.data(forKey: "missing") == nil)
    }

    @Test(arguments: [0, 1, 4096, 4097, 261_988, 261_989, 1_000_000])
    func valuesOfEverySizeRoundTrip(size: Int) throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: UInt64(size))
        let value = generator.bytes(size)
        try t.store.put(value, forKey: "key-\(size)")
        #expect(try t.store.data(forKey: "key-\(size)") == Data(value))
        try t.reopen()
        #expect(try t.store.data(forKey: "key-\(size)") == Data(value))
        #expect(try t.store.verify().isClean)
    }

    @Test func replacingAValueReleasesTheOldChunks() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 1)
        try t.store.put(generator.bytes(1_000_000), forKey: "a")
        try t.store.put(generator.bytes(600_000), forKey: "a")
        let stats = try t.store.statistics()
        #expect(stats.entryCount == 1)
        #expect(stats.logicalBytes == 600_000)
        #expect(stats.chunkCount == 3)
        #expect(try t.store.verify().isClean)
    }

    @Test func removeDeletesAndReportsWhetherItExisted() throws {
        let t = try TestStore()
        try t.store.put([1, 2, 3], forKey: "a")
        #expect(try t.store.remove(forKey: "a"))
        #expect(try !t.store.remove(forKey: "a"))
        #expect(try t.store.data(forKey: "a") == nil)
        #expect(try t.store.statistics().entryCount == 0)
    }
}
