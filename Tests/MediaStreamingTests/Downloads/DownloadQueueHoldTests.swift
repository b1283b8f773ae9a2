import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Holds with owners: two downloads of the queue and the app hold one
/// entry; each lets go in turn, in every order, with the queue reopened
/// over the same store and index before each step. The entry stays kept
/// while anyone holds it, holds exactly who still holds it, and a removal
/// deletes it only once nobody does. With one flag and no owner, the
/// queue had to guess whose the pin was (and ledgers kept the guesses).
@Suite("Download queue: holds of two downloads and the app", .timeLimit(.minutes(2)))
struct DownloadQueueHoldTests {
    /// Runs until stopped; each record's bytes are its own entry and the shared one.
    struct SharedPerformer: UntilCancelledPerformer {
        static let kind = "shared-hold"
        static let shared = "hold-shared"

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
            [record.cacheKey, Self.shared]
        }
    }

    enum Owner: String, CaseIterable, Sendable {
        case first, second, app
    }

    enum LetGo: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case cancel, remove
        var testDescription: String { rawValue }
    }

    /// Every order of the three owners.
    static let orders: [[Owner]] = {
        let all = Owner.allCases
        return all.flatMap { a in
            all.filter { $0 != a }.flatMap { b in all.filter { $0 != a && $0 != b }.map { [a, b, $0] } }
        }
    }()

    static let configuration = DownloadQueueConfiguration(pollInterval: .seconds(60))

    @Test(
        "An entry stays kept until its last holder lets go, in every order, across relaunches",
        arguments: orders, LetGo.allCases)
    func lastHolderDecides(_ order: [Owner], letGo: LetGo) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let content = Data(repeating: 4, count: 2 * TestCache.chunkSize)
        for key in [SharedPerformer.shared, "hold-first", "hold-second"] { try store.put(content, forKey: key) }
        try store.setPinned(true, forKey: SharedPerformer.shared)
        var queue = try await DownloadQueue.open(
            cache: test.cache, configuration: Self.configuration, performers: [SharedPerformer()])
        var ids: [Owner: UUID] = [:]
        for owner in [Owner.first, .second] {
            let record = try await queue.enqueue(
                URL(string: "https://example.invalid/hold-\(owner.rawValue)")!, cacheKey: "hold-\(owner.rawValue)",
                kind: SharedPerformer.kind)
            try await queue.stop(record.id)
            ids[owner] = record.id
        }
        func holder(_ owner: Owner) -> String {
            owner == .app ? MediaStore.appHolder : DownloadQueue.holder(of: ids[owner]!)
        }
        var holding = Set(Owner.allCases)
        #expect(try store.holders(of: SharedPerformer.shared) == holding.map(holder).sorted())

        for owner in order {
            // A relaunch: a new queue over the same store and index.
            test.freshCache()
            queue = try await DownloadQueue.open(
                cache: test.cache, configuration: Self.configuration, performers: [SharedPerformer()])
            switch (owner, letGo) {
            case (.app, _): try store.setPinned(false, forKey: SharedPerformer.shared)
            case (_, .cancel): try await queue.cancel(ids[owner]!)
            case (_, .remove): try await queue.remove(ids[owner]!)
            }
            holding.remove(owner)
            let info = try store.info(forKey: SharedPerformer.shared)
            let step = "\(owner.rawValue) let go, \(holding.map(\.rawValue).sorted()) hold"
            if holding.isEmpty && letGo == .remove && owner != .app {
                #expect(info == nil, "the last removal leaves an entry nobody holds: \(step)")
            } else if holding.isEmpty {
                #expect(info?.isPinned == false, "nobody holds it, it is evictable: \(step)")
            } else {
                #expect(info?.isPinned == true && info?.isComplete == true, "kept while held: \(step)")
                #expect(try store.holders(of: SharedPerformer.shared) == holding.map(holder).sorted(), "\(step)")
            }
            // The download's own entry goes with it (a removal) or stays evictable (a cancel).
            if owner != .app {
                let own = try store.info(forKey: "hold-\(owner.rawValue)")
                #expect(letGo == .remove ? own == nil : own?.isPinned == false, "\(step)")
            }
        }
        #expect(test.origin.requests.isEmpty)
    }

    /// A store write the queue does on its own account fails (here: the
    /// store was closed under it): the call that caused it throws, and the
    /// hold it could not write is told on `problems()`.
    @Test("A failed hold is told on problems(), and the call throws")
    func aFailedHoldIsTold() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        try store.put(Data(repeating: 6, count: TestCache.chunkSize), forKey: "hold-fails")
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: Self.configuration, performers: [SharedPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/hold-fails")!, cacheKey: "hold-fails", kind: SharedPerformer.kind)
        let problems = await queue.problems()
        store.close()
        await #expect(throws: DownloadError.store(.closed)) { try await queue.stop(record.id) }
        var told: DownloadError?
        for await problem in problems {
            told = problem
            break
        }
        #expect(told == .store(.closed))
    }
}
