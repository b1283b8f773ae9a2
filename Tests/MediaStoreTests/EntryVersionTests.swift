import Foundation
import Testing

@testable import MediaStore

/// Issue 8 §1: a range fill is bound to the entry version it was prepared
/// for, so two contents can never end up in one entry.
@Suite struct EntryVersionTests {
    static let chunk = 8_192
    static let configuration = StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20)

    /// The sequence from the issue, with no threads: a fill of the replaced
    /// version is refused instead of landing in the new one.
    @Test func aFillOfAReplacedVersionIsRefused() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let a = SelfDescribingBytes.content(key: 1, id: SelfDescribingBytes.contentID(variant: 1, length: 24_000))
        let b = SelfDescribingBytes.content(key: 1, id: SelfDescribingBytes.contentID(variant: 2, length: 41_000))
        let v1 = try t.store.prepareEntry(forKey: "k", length: a.count).version
        let v2 = try t.store.prepareEntry(forKey: "k", length: b.count).version
        #expect(v1 != v2)

        #expect(throws: StoreError.entryReplaced(key: "k", expected: v1, found: v2)) {
            try t.store.write(a[0..<c], at: 0, forKey: "k", version: v1)
        }
        // Nothing of A was stored.
        #expect(try t.store.cachedRanges(forKey: "k") == [])
        #expect(try t.store.statistics().chunkCount == 0)

        try t.store.write(b[c..<2 * c], at: c, forKey: "k", version: v2)
        #expect(throws: StoreError.entryReplaced(key: "k", expected: v1, found: v2)) {
            try t.store.write(a[(2 * c)...], at: 2 * c, forKey: "k", version: v1)
        }
        var last: EntryInfo?
        for start in stride(from: 0, to: b.count, by: c) where start != c {
            last = try t.store.write(b[start..<min(b.count, start + c)], at: start, forKey: "k", version: v2)
        }
        #expect(last?.isComplete == true)
        #expect(last?.version == v2)
        #expect(last?.contentDigest == ContentDigest(of: b))
        let stored = try #require(try t.store.data(forKey: "k"))
        #expect(stored == Data(b))
        #expect(
            SelfDescribingBytes.decode(stored, at: 0, key: 1)
                == .content(SelfDescribingBytes.contentID(variant: 2, length: 41_000)))
        #expect(try t.store.verify().isClean)
        // The refused writes leave no chunk behind.
        #expect(try t.store.statistics().logicalBytes == b.count)
    }

    @Test func aFillAfterRemovalOrEvictionIsRefused() throws {
        let t = try TestStore(configuration: Self.configuration)
        let bytes = [UInt8](repeating: 3, count: Self.chunk)
        let removed = try t.store.prepareEntry(forKey: "k", length: 2 * Self.chunk).version
        try t.store.remove(forKey: "k")
        #expect(throws: StoreError.entryReplaced(key: "k", expected: removed, found: nil)) {
            try t.store.write(bytes, at: 0, forKey: "k", version: removed)
        }
        #expect(try t.store.info(forKey: "k") == nil)

        let evicted = try t.store.prepareEntry(forKey: "k", length: 2 * Self.chunk).version
        try t.store.write(bytes, at: 0, forKey: "k", version: evicted)
        _ = try t.store.evict(toBytes: 0)
        #expect(throws: StoreError.entryReplaced(key: "k", expected: evicted, found: nil)) {
            try t.store.write(bytes, at: Self.chunk, forKey: "k", version: evicted)
        }
        #expect(try t.store.info(forKey: "k") == nil)

        // A whole value put over it is another version too.
        let overwritten = try t.store.prepareEntry(forKey: "k", length: 2 * Self.chunk).version
        try t.store.put([1, 2, 3], forKey: "k")
        let inline = try #require(try t.store.info(forKey: "k")).version
        #expect(throws: StoreError.entryReplaced(key: "k", expected: overwritten, found: inline)) {
            try t.store.write(bytes, at: 0, forKey: "k", version: overwritten)
        }
        // Even its own version: an inline value takes no range fills.
        #expect(throws: StoreError.notFound(key: "k")) {
            try t.store.write(bytes, at: 0, forKey: "k", version: inline)
        }
        #expect(try t.store.data(forKey: "k") == Data([1, 2, 3]))
        #expect(try t.store.verify().isClean)
    }

    @Test func anExpiredEntryIsReplacedAndItsFillsRefused() throws {
        let t = try TestStore(configuration: Self.configuration)
        let expired = try t.store.prepareEntry(
            forKey: "k", length: 2 * Self.chunk, options: WriteOptions(expiry: .after(-1))
        ).version
        // Filling the expired version itself is still that version.
        try t.store.write([UInt8](repeating: 1, count: Self.chunk), at: 0, forKey: "k", version: expired)
        let fresh = try t.store.prepareEntry(forKey: "k", length: 2 * Self.chunk).version
        #expect(fresh != expired)
        #expect(throws: StoreError.entryReplaced(key: "k", expected: expired, found: fresh)) {
            try t.store.write([UInt8](repeating: 1, count: Self.chunk), at: Self.chunk, forKey: "k", version: expired)
        }
        #expect(try t.store.cachedRanges(forKey: "k") == [])
    }

    /// prepareEntry keeps an entry only when it is the same content as far
    /// as the caller says: length and the validators it gives.
    @Test func prepareKeepsTheVersionOnlyForTheSameContent() throws {
        let t = try TestStore(configuration: Self.configuration)
        func prepare(_ length: Int?, etag: String? = nil, lastModified: String? = nil) throws -> UInt64 {
            try t.store.prepareEntry(
                forKey: "k", length: length,
                options: WriteOptions(metadata: EntryMetadata(etag: etag, lastModified: lastModified))
            ).version
        }
        let first = try prepare(30_000, etag: "\"a\"")
        #expect(try prepare(30_000, etag: "\"a\"") == first)
        #expect(try prepare(30_000) == first)  // no validator given: agrees with any
        #expect(try prepare(nil) == first)  // no length given: agrees with any
        let otherTag = try prepare(30_000, etag: "\"b\"")
        #expect(otherTag != first)
        #expect(try t.store.info(forKey: "k")?.metadata.etag == "\"b\"")
        // A validator given where the entry has none is not the same content.
        let bare = try prepare(30_000)
        #expect(bare == otherTag)
        let untagged = try t.store.prepareEntry(forKey: "u", length: 30_000).version
        let tagged = try t.store.prepareEntry(
            forKey: "u", length: 30_000, options: WriteOptions(metadata: EntryMetadata(etag: "\"x\""))
        ).version
        #expect(tagged != untagged)
        // Last-Modified alike.
        let dated = try prepare(30_000, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(dated != otherTag)
        #expect(try prepare(30_000, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT") == dated)
        #expect(try prepare(30_000, lastModified: "Tue, 02 Jan 2024 00:00:00 GMT") != dated)
        #expect(try t.store.statistics().entryCount == 2)
        #expect(try t.store.verify().isClean)
    }

    /// An entry of unknown length takes a length on (same version) only
    /// when every chunk it has lies within it.
    @Test func learningTheLengthKeepsTheVersionOnlyWhenTheChunksFit() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let bytes = [UInt8](repeating: 5, count: c)
        let open = try t.store.prepareEntry(forKey: "k", length: nil).version
        try t.store.write(bytes, at: 2 * c, forKey: "k", version: open)
        // Three whole chunks fit in 3c and in 3c + 10 ...
        let fixed = try t.store.prepareEntry(forKey: "k", length: 3 * c + 10)
        #expect(fixed.version == open)
        #expect(fixed.length == 3 * c + 10)
        #expect(try t.store.cachedRanges(forKey: "k") == [2 * c..<3 * c])

        // ... but not in 2c + 10: a chunk would lie past the end. Replaced.
        let other = try t.store.prepareEntry(forKey: "o", length: nil).version
        try t.store.write(bytes, at: 2 * c, forKey: "o", version: other)
        let replaced = try t.store.prepareEntry(forKey: "o", length: 2 * c + 10)
        #expect(replaced.version != other)
        #expect(replaced.cachedBytes == 0)
        #expect(try t.store.cachedRanges(forKey: "o") == [])
        #expect(try t.store.verify().isClean)
    }

    @Test func anEmptyWriteAtTheEndFixesAnUnknownLength() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let value = SelfDescribingBytes.content(key: 2, id: SelfDescribingBytes.contentID(variant: 0, length: 2 * c))
        let version = try t.store.prepareEntry(forKey: "k", length: nil).version
        try t.store.write(value, at: 0, forKey: "k", version: version)
        #expect(try t.store.info(forKey: "k")?.isComplete == false)
        // Not before a present chunk.
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: 2 * c, actual: c)) {
            try t.store.write([UInt8](), at: c, forKey: "k", version: version)
        }
        let done = try t.store.write([UInt8](), at: 2 * c, forKey: "k", version: version)
        #expect(done.length == 2 * c)
        #expect(done.isComplete)
        #expect(done.version == version)
        #expect(done.contentDigest == ContentDigest(of: value))
        #expect(try t.store.data(forKey: "k") == Data(value))
    }

    /// The calls that act on "the entry at this key" across calls take an
    /// optional version precondition.
    @Test func setPinnedMetadataExpiryAndRemoveHonourAVersion() throws {
        let t = try TestStore(configuration: Self.configuration)
        let old = try t.store.prepareEntry(forKey: "k", length: 10).version
        let new = try t.store.prepareEntry(forKey: "k", length: 20).version
        let replaced = StoreError.entryReplaced(key: "k", expected: old, found: new)
        #expect(throws: replaced) { try t.store.setPinned(true, forKey: "k", version: old) }
        #expect(throws: replaced) {
            try t.store.setMetadata(EntryMetadata(mimeType: "audio/mpeg"), forKey: "k", version: old)
        }
        #expect(throws: replaced) { try t.store.setExpiry(.after(-1), forKey: "k", version: old) }
        #expect(throws: replaced) { try t.store.remove(forKey: "k", version: old) }
        // Nothing changed.
        let info = try #require(try t.store.info(forKey: "k"))
        #expect(info.version == new)
        #expect(!info.isPinned)
        #expect(info.metadata.mimeType == nil)
        #expect(!info.isExpired())

        try t.store.setPinned(true, forKey: "k", version: new)
        try t.store.setMetadata(EntryMetadata(mimeType: "audio/mpeg"), forKey: "k", version: new)
        try t.store.setExpiry(.after(3_600), forKey: "k", version: new)
        let updated = try #require(try t.store.info(forKey: "k"))
        #expect(updated.isPinned)
        #expect(updated.metadata.mimeType == "audio/mpeg")
        #expect(updated.expiry != nil)
        #expect(updated.version == new)
        #expect(try t.store.remove(forKey: "k", version: new))
        #expect(throws: StoreError.entryReplaced(key: "k", expected: new, found: nil)) {
            try t.store.setPinned(false, forKey: "k", version: new)
        }
        #expect(try t.store.verify().isClean)
    }

    @Test func theErrorSaysWhatHappened() {
        #expect(
            StoreError.entryReplaced(key: "k", expected: 3, found: 7).description
                == "k is no longer version 3 (now version 7); nothing was changed")
        #expect(
            StoreError.entryReplaced(key: "k", expected: 3, found: nil).description
                == "k is no longer version 3 (now no entry); nothing was changed")
    }
}
