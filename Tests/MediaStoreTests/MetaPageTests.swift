import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// LMDB's two meta pages against each other (``MetaPageCheck``), and
/// `verify()` reporting a damaged one: the corruption suite's miss
/// (seed 381373302948, case 235), where a flipped byte of one page's
/// transaction id made LMDB open the commit before the last put.
@Suite struct MetaPageTests {
    typealias Meta = MetaPageCheck.Meta

    @Test func realPairsPass() {
        // A fresh file, a compacted copy, and two ordinary commits either way round.
        #expect(MetaPageCheck(Meta(txnid: 0, lastPage: 1), Meta(txnid: 0, lastPage: 1)).inconsistency == nil)
        #expect(MetaPageCheck(Meta(txnid: 0, lastPage: 1), Meta(txnid: 1, lastPage: 6)).inconsistency == nil)
        #expect(MetaPageCheck(Meta(txnid: 18, lastPage: 153), Meta(txnid: 19, lastPage: 154)).inconsistency == nil)
        #expect(MetaPageCheck(Meta(txnid: 20, lastPage: 154), Meta(txnid: 19, lastPage: 154)).inconsistency == nil)
    }

    @Test func damagedPairsAreNamed() throws {
        // The suite's case: page 0's id 18 became 7442; LMDB opens it.
        let climbed = try #require(
            MetaPageCheck(Meta(txnid: 7442, lastPage: 153), Meta(txnid: 19, lastPage: 154)).inconsistency)
        #expect(climbed.contains("page 0 holds commit 7442 and page 1 commit 19"), "\(climbed)")
        #expect(climbed.contains("LMDB opens commit 7442 (page 0)"), "\(climbed)")
        // An id on the page of the wrong parity, two equal ids, an id that fell.
        for (first, second) in [(19, 18), (19, 19), (16, 19), (18, 1 << 40)] {
            let pair = MetaPageCheck(
                Meta(txnid: UInt64(first), lastPage: 10), Meta(txnid: UInt64(second), lastPage: 10))
            #expect(pair.inconsistency != nil, "\(first), \(second)")
        }
        // Consecutive, but the newer commit ends before the older one: an
        // id damaged to exactly one above the other page's.
        let shrunk = try #require(
            MetaPageCheck(Meta(txnid: 20, lastPage: 153), Meta(txnid: 19, lastPage: 154)).inconsistency)
        #expect(shrunk.contains("never gives pages back"), "\(shrunk)")
        // A page without LMDB's magic.
        #expect(MetaPageCheck(Meta(txnid: 2, lastPage: 9), nil).inconsistency == "meta page 1 is not an LMDB meta page")
    }

    /// Fails without the check: the older commit is consistent, so every
    /// entry, chunk, reference count and counter verify walks agrees.
    @Test func verifyReportsAMetaPageThatOpensAnOlderCommit() throws {
        let directory = temporaryPath("meta-pages")
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 381_373_302_948)
        let first = generator.bulkBytes(300_000)
        let last = generator.bulkBytes(2_000)
        do {
            let store = try MediaStore(
                directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
            try store.put(first, forKey: "first")
            try store.put(last, forKey: "last")
            store.close()
        }
        let file = directory.appendingPathComponent("data.mdb")
        #expect(MetaPageCheck.damage(path: file.path) == nil)
        var bytes = [UInt8](try Data(contentsOf: file))
        let pageSize = Int(bytes[16 + 24]) | Int(bytes[16 + 25]) << 8 | Int(bytes[16 + 26]) << 16
        func txnid(_ page: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(bytes[page * pageSize + 16 + 128 + $1]) << (8 * UInt64($1)) }
        }
        let older = txnid(0) < txnid(1) ? 0 : 1
        let newest = max(txnid(0), txnid(1))
        // Byte 1 of the older page's id, XORed as the suite did: it climbs above the newest.
        bytes[older * pageSize + 16 + 128 + 1] ^= 0x1D
        #expect(txnid(older) > newest)
        try Data(bytes).write(to: file)

        let store = try MediaStore.openReadOnly(directory: directory)
        defer { store.close() }
        // LMDB opened the commit before the last put: "last" is gone, the rest intact.
        #expect(try store.info(forKey: "last") == nil)
        #expect(try store.data(forKey: "first") == Data(first))
        let report = try store.verify()
        #expect(!report.isClean)
        #expect(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems.first?.contains("LMDB's meta pages are damaged") == true, "\(report.problems)")
        #expect(report.problems.first?.contains("LMDB opens commit \(txnid(older)) (page \(older))") == true)
    }

    /// A commit rewrites one meta page while the check reads the two: it
    /// must never take a pair torn by concurrent commits for damage.
    @Test func commitsWhileCheckingAreNeverDamage() throws {
        let directory = temporaryPath("meta-pages-busy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TestStore.open(
            directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        defer { store.close() }
        let path = directory.appendingPathComponent("data.mdb").path
        let writing = Locked(true)
        let results = Locked((checks: 0, damage: [String]()))
        let checker = DispatchSemaphore(value: 0)
        // Its own thread: the global pool can be busy with other tests
        // until every put is done.
        Thread {
            while writing.withLock({ $0 }) {
                let found = MetaPageCheck.damage(path: path)
                results.withLock {
                    $0.checks += 1
                    if let found { $0.damage.append(found) }
                }
            }
            checker.signal()
        }.start()
        // Commits go on until the checker has run 100 times among them.
        var puts = 0
        while puts < 400 || (results.withLock { $0.checks } < 100 && puts < 50_000) {
            try store.put([UInt8(puts % 256)], forKey: "key\(puts % 7)")
            puts += 1
        }
        writing.withLock { $0 = false }
        checker.wait()
        let (checks, damage) = results.withLock { $0 }
        #expect(checks >= 100, "\(checks) checks during \(puts) commits")
        #expect(damage.isEmpty, "\(damage.prefix(3))")
        #expect(try store.verify().isClean)
    }
}
