import CLMDB
import Foundation
import Testing

@testable import MediaStore

/// Store format 2: an entry's expiry reads back bit for bit, and format 1
/// stores (expiry as seconds since 1970) still open and read as before.
@Suite struct ExpiryFormatTests {
    let root = temporaryPath("expiry-format")

    /// Random dates from 1900 to 2200, with every fraction bit used.
    static func randomDates(count: Int) -> [Date] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            Date(timeIntervalSinceReferenceDate: Double.random(in: -3.2e9...6.3e9, using: &generator))
        }
    }

    @Test func aRecordKeepsTheExactExpiryDate() throws {
        for date in Self.randomDates(count: 10_000) {
            var record = EntryRecord(
                key: "k", flags: [], entryID: 1, length: 3, chunkSize: 4096, presentChunks: 0, cachedBytes: 0,
                digest: nil, created: 0, lastAccess: 0, accessTick: 0, expiry: nil, cost: 0,
                metadata: EntryMetadata(), ownerPID: 0, inlineBytes: [])
            record.setExpiry(date)
            let decoded = try #require(record.encode().withUnsafeBytes { EntryRecord.decode($0) })
            #expect(decoded.expiryDate == date)
            #expect(decoded.expiry == date.timeIntervalSince1970)
        }
    }

    @Test func aFormatOneRecordReadsAsBefore() throws {
        let seconds = Date(timeIntervalSinceReferenceDate: 8.1e8 + 0.123_456_789).timeIntervalSince1970
        var record = EntryRecord(
            key: "k", flags: [], entryID: 1, length: 3, chunkSize: 4096, presentChunks: 0, cachedBytes: 0,
            digest: nil, created: 0, lastAccess: 0, accessTick: 0, expiry: seconds, cost: 0,
            metadata: EntryMetadata(), ownerPID: 0, inlineBytes: [])
        record.exactExpiry = nil
        let bytes = record.encode()
        #expect(bytes[1] & EntryRecord.Flags.exactExpiry.rawValue == 0)
        let decoded = try #require(bytes.withUnsafeBytes { EntryRecord.decode($0) })
        #expect(decoded.expiry == seconds)
        #expect(decoded.exactExpiry == nil)
        #expect(decoded.expiryDate == Date(timeIntervalSince1970: seconds))
    }

    @Test func expiryDatesRoundTripThroughTheStore() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try MediaStore(directory: root)
        for (index, date) in Self.randomDates(count: 500).enumerated() {
            let key = "k\(index)"
            let written = try store.put([1, 2, 3], forKey: key, options: WriteOptions(expiry: .at(date)))
            #expect(written.expiry == date)
            #expect(try store.info(forKey: key)?.expiry == date)
            #expect(try store.value(forKey: key, includeExpired: true)?.expiry == date)
            try store.setExpiry(.at(date.addingTimeInterval(1e-6)), forKey: key)
            #expect(try store.info(forKey: key)?.expiry == date.addingTimeInterval(1e-6))
        }
        let after = try store.put([1], forKey: "after", options: WriteOptions(expiry: .after(123.456)))
        #expect(try store.info(forKey: "after")?.expiry == after.expiry)
        // The expiry index still finds every expired entry.
        #expect(try store.removeExpired() > 0)
        for info in try store.entries() {
            #expect(info.expiry.map { $0 > Date() } ?? true, "\(info.key) outlived its expiry")
        }
    }

    @Test func aFormatOneStoreOpensAndIsMarkedFormatTwo() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        do { try MediaStore(directory: root).put([1], forKey: "k") }
        var bytes = StoreFormat.magic
        bytes += [1, 0]
        do {
            let environment = try LMDBEnvironment(
                directory: root.path, mapSize: 8 << 20, maxDatabases: 16, readOnly: false)
            let transaction = try LMDBTransaction(environment: environment, readOnly: false)
            try transaction.put(
                try transaction.openDatabase("meta", create: false), key: Array("format".utf8), value: bytes)
            try transaction.commit()
        }
        func format() throws -> UInt16? {
            let environment = try LMDBEnvironment(directory: root.path, mapSize: nil, maxDatabases: 16, readOnly: true)
            let transaction = try LMDBTransaction(environment: environment, readOnly: true)
            defer { transaction.abort() }
            let meta = try transaction.openDatabase("meta", create: false)
            return try transaction.value(meta, key: Array("format".utf8)).flatMap(StoreFormat.version(of:))
        }
        #expect(try format() == 1)
        do { #expect(try MediaStore.openReadOnly(directory: root).data(forKey: "k") == Data([1])) }
        #expect(try format() == 1, "a read-only open changed the format")
        do { #expect(try MediaStore(directory: root).data(forKey: "k") == Data([1])) }
        #expect(try format() == StoreFormat.version)
    }
}
