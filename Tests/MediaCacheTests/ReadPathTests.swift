import Dispatch
import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaCache

/// A get runs outside the storage's serialization domain; a disk hit fills
/// the memory tier only when no call of the domain ran meanwhile or runs now.
@Suite(.timeLimit(.minutes(1))) struct ReadPathTests {
    static func makeIntStorage(_ temp: ScratchDirectory, countLimit: UInt = 1) throws -> Storage<String, Int> {
        try makeStorage(
            in: temp, memoryConfig: MemoryConfig(countLimit: countLimit),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
    }

    @Test func aDiskHitReadBeforeAWriteDoesNotFillTheMemoryTier() throws {
        let temp = ScratchDirectory()
        let hybrid = try Self.makeIntStorage(temp, countLimit: 8).hybridStorage
        try hybrid.setObject(1, forKey: "k")
        try hybrid.removeInMemoryObject(forKey: "k")
        // A reader takes its ticket and reads 1 from disk; a write lands; the reader fills.
        let ticket = try #require(hybrid.domain.ticket())
        #expect(hybrid.domain.isUnchanged(since: ticket))
        try hybrid.setObject(2, forKey: "k")
        #expect(!hybrid.domain.isUnchanged(since: ticket), "a write after the ticket went unseen")
        let stale = LRUCache<String>.Capsule(object: 1, expiry: nil, cost: 8)
        hybrid.memoryStorage.cache.set(
            stale, forKey: .init("k"), if: { hybrid.domain.isUnchangedUnderLock(since: ticket) })
        #expect(try hybrid.object(forKey: "k") == 2)
        #expect(try hybrid.memoryStorage.object(forKey: "k") == 2)
    }

    @Test func aWriteRunningNowBlocksTheFill() throws {
        let temp = ScratchDirectory()
        let hybrid = try Self.makeIntStorage(temp).hybridStorage
        let ticket = try #require(hybrid.domain.ticket())
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            hybrid.domain.sync {
                inside.signal()
                release.wait()
            }
        }.start()
        #expect(inside.wait(timeout: .now() + 10) == .success)
        #expect(!hybrid.domain.isUnchanged(since: ticket), "a call running in the domain went unseen")
        #expect(hybrid.domain.ticket() == nil, "a get would not wait for the running call")
        release.signal()
        // Ended: the ticket is stale now too.
        hybrid.domain.sync {}
        #expect(!hybrid.domain.isUnchanged(since: ticket))
        #expect(hybrid.domain.ticket().map { hybrid.domain.isUnchanged(since: $0) } == true)
    }

    /// A job queued for the domain (the store's report of an eviction)
    /// counts as running: a get waits behind it.
    @Test func aQueuedJobSendsGetsThroughTheDomain() throws {
        let temp = ScratchDirectory()
        let domain = try Self.makeIntStorage(temp).hybridStorage.domain
        #expect(domain.ticket() != nil)
        domain.enqueue()
        #expect(domain.ticket() == nil)
        domain.dequeue()
        #expect(domain.ticket() != nil)
    }

    /// A get takes its ticket under the memory tier's lock: the domain's
    /// activity has no lock of its own, in every view of the storage.
    @Test func theDomainsActivitySharesTheMemoryTiersLock() throws {
        let temp = ScratchDirectory()
        let hybrid = try Self.makeIntStorage(temp).hybridStorage
        #expect(hybrid.domain.activityLock === hybrid.memoryStorage.cache.lock)
        let view = hybrid.transform(transformer: TransformerFactory.forCodable(ofType: String.self))
        #expect(view.domain.activityLock === view.memoryStorage.cache.lock)
    }

    /// A memory hit while a job waits for the domain is not returned before
    /// the job ran (the job here drops the memory copy, as a removal report does).
    @Test func aMemoryHitWaitsForAQueuedJob() throws {
        let temp = ScratchDirectory()
        let hybrid = try Self.makeIntStorage(temp, countLimit: 8).hybridStorage
        try hybrid.setObject(1, forKey: "k")
        hybrid.memoryStorage.cache.set(.init(object: 5, expiry: nil, cost: 8), forKey: "k")
        let domain = hybrid.domain
        let release = DispatchSemaphore(value: 0)
        domain.enqueue()
        domain.queue.async {
            defer { domain.dequeue() }
            release.wait()
            hybrid.memoryStorage.cache.remove(forKey: "k")
        }
        let got = Locked<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            got.withLock { $0 = try? hybrid.object(forKey: "k") }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the get did not wait for the queued job")
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(got.withLock { $0 } == 1)
    }

    /// From inside the domain (an observer, say), a get still fills the memory tier.
    @Test func aGetInsideTheDomainFillsTheMemoryTier() throws {
        let temp = ScratchDirectory()
        let hybrid = try Self.makeIntStorage(temp).hybridStorage
        try hybrid.setObject(7, forKey: "k")
        try hybrid.removeInMemoryObject(forKey: "k")
        let value = try hybrid.domain.sync { try hybrid.object(forKey: "k") }
        #expect(value == 7)
        #expect(try hybrid.memoryStorage.object(forKey: "k") == 7)
    }

    /// One writer sets 1, 2, 3…; two readers read the key and another one in
    /// turn (a memory tier of one entry, so most reads go to disk). Each
    /// reader's values never go back, and the last read after the writer
    /// is the last written. A stale fill (a value read from disk before a write, put in
    /// memory after it) would show up as a value going back.
    @Test func readersRacingAWriterNeverSeeAValueGoBack() throws {
        let temp = ScratchDirectory()
        let storage = try Self.makeIntStorage(temp)
        try storage.setObject(0, forKey: "k")
        try storage.setObject(-1, forKey: "other")
        let minimum = 5000
        let done = Locked(false)
        let backwards = Locked(0)
        let diskReads = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                var seen = 0
                while !done.current {
                    if !storage.hybridStorage.memoryStorage.cache.contains(.init("k")) {
                        diskReads.withLock { $0 += 1 }
                    }
                    guard let value = try? storage.object(forKey: "k") else { continue }
                    if value < seen { backwards.withLock { $0 += 1 } }
                    seen = max(seen, value)
                    _ = try? storage.object(forKey: "other")
                }
            }.start()
        }
        // At least `minimum` writes, and on until the readers went to disk
        // often enough (bounded).
        var last = 0
        let started = Date()
        while last < minimum || (diskReads.current < 2000 && Date().timeIntervalSince(started) < 10) {
            last += 1
            try storage.setObject(last, forKey: "k")
        }
        done.withLock { $0 = true }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(diskReads.current >= 2000, "the premise: readers went to disk (\(diskReads.current) times)")
        #expect(backwards.current == 0, "a reader saw a value go back \(backwards.current) times")
        #expect(try storage.object(forKey: "k") == last)
    }
}
