import Foundation
import Testing

@testable import MediaCache

/// `Entry.expiry` gives back exactly the date that was written, from the
/// memory tier, from the disk tier and after a reopen.
@Suite struct ExpiryRoundTripTests {
    /// Random dates from 1900 to 2200 with every fraction bit in use, plus
    /// dates near now (where seconds since 1970 lose the last bit).
    static func randomDates(count: Int) -> [Date] {
        var generator = SystemRandomNumberGenerator()
        let now = Date().timeIntervalSinceReferenceDate
        return (0..<count).map { index in
            index.isMultiple(of: 2)
                ? Date(timeIntervalSinceReferenceDate: Double.random(in: -3.2e9...6.3e9, using: &generator))
                : Date(timeIntervalSinceReferenceDate: now + Double.random(in: -1e6...1e8, using: &generator))
        }
    }

    @Test func dateExpiriesRoundTripBitForBit() throws {
        let temp = TempDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let dates = Self.randomDates(count: 2_000)
        for (index, date) in dates.enumerated() {
            try storage.setObject(index, forKey: "k\(index)", expiry: .date(date))
            #expect(try storage.entry(forKey: "k\(index)").expiry.date == date, "memory tier")
            try storage.removeInMemoryObject(forKey: "k\(index)")
            let entry = try storage.entry(forKey: "k\(index)")
            #expect(entry.expiry.date == date, "disk tier: \(date.timeIntervalSinceReferenceDate)")
            #expect(entry.filePath != nil)
        }
        // A fresh storage on the same folder reads the same dates.
        let disk = DiskStorage<String, Int>(
            config: DiskConfig(name: "Cache", directory: temp.url), path: storage.hybridStorage.diskStorage.path,
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        for (index, date) in dates.enumerated() {
            #expect(try disk.entry(forKey: "k\(index)").expiry.date == date)
        }
    }

    @Test func secondsExpiriesReadBackAsTheDateTheyResolvedTo() throws {
        let temp = TempDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        var generator = SystemRandomNumberGenerator()
        for index in 0..<1_000 {
            let seconds = Double.random(in: -1e7...1e9, using: &generator)
            let before = Date()
            try storage.setObject(index, forKey: "s\(index)", expiry: .seconds(seconds))
            let after = Date()
            let memory = try storage.entry(forKey: "s\(index)").expiry
            guard case .date(let resolved) = memory else {
                Issue.record("expected .date, got \(memory)")
                continue
            }
            #expect(resolved >= before.addingTimeInterval(seconds).addingTimeInterval(-0.001))
            #expect(resolved <= after.addingTimeInterval(seconds).addingTimeInterval(0.001))
            try storage.removeInMemoryObject(forKey: "s\(index)")
            #expect(try storage.entry(forKey: "s\(index)").expiry.date == resolved, "disk tier differs from memory")
        }
    }

    @Test func asyncEntriesCarryTheExactDate() async throws {
        let temp = TempDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        for (index, date) in Self.randomDates(count: 200).enumerated() {
            try await storage.async.setObject(index, forKey: "a\(index)", expiry: .date(date))
            try storage.removeInMemoryObject(forKey: "a\(index)")
            #expect(try await storage.async.entry(forKey: "a\(index)").expiry.date == date)
        }
    }
}
